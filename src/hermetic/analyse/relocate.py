"""Moving a memoized result to other instance numbers.

A memo entry holds the instance ids of its first run; reused by a call whose inputs are other
instances, its values, control state and write log are renumbered by a map (old id -> new id,
``_CM`` -> how far context-manager numbers move). Also the bits that name a called function in
an entry's call set (``_call_bit``).
"""
from __future__ import annotations

from typing import Dict, Optional

from .limits import TEST_HEAP_BASE
from .state import DELETED, Ctx, _MemoEntry
from .values import V


_CM = -(1 << 62)   # key of a relocation map: how far context-manager state numbers move


def _remap(x, m: Dict[int, int]):
    """``x`` (a value, an atom or a tuple of them) with instance ids replaced by ``m``; context
    manager numbers (``ctxfactory`` atoms) move by ``m[_CM]``. Unchanged parts are shared."""
    t = type(x)
    if t is V:
        if not x.instances() and not x.cms():
            return x
        return V(frozenset(_remap(a, m) for a in x.atoms), x.is_path)
    if t is tuple and x:
        head = x[0]
        if (head == "inst" or head == "testcase") and len(x) == 2 and type(x[1]) is int:
            return (head, m.get(x[1], x[1]))
        if head == "ctxfactory" and len(x) >= 3:
            return (head, _remap(x[1], m), x[2] + m.get(_CM, 0)) + tuple(_remap(i, m) for i in x[3:])
        return tuple(_remap(i, m) for i in x)
    return x


def _remap_ctx(c: "Ctx", m: Dict[int, int]) -> "Ctx":
    out = c.copy()
    if not m:
        return out
    out.patches = {_remap(k, m): _remap(v, m) for k, v in c.patches.items()}
    out.sites = {_remap(k, m): v for k, v in c.sites.items()}
    out.env = {k: (v if v is DELETED else _remap(v, m)) for k, v in c.env.items()}
    if c.cwd is not None:
        out.cwd = _remap(c.cwd, m)
    if c.effects:
        out.effects = tuple((site, _remap(v, m)) for site, v in c.effects)
    if c.mp_log:
        out.set_log(tuple((st, _remap(k, m) if st in ("patches", "sites") else k, had,
                           _remap(o, m) if isinstance(o, V) else o) for st, k, had, o in c.mp_log))
    return out


_CALL_BITS: Dict[str, int] = {}


def _call_bit(qn: str) -> int:
    """One of 512 bits for a function (a set of called functions as an int; a shared bit only
    makes the memo more careful)."""
    b = _CALL_BITS.get(qn)
    if b is None:
        b = _CALL_BITS[qn] = 1 << (hash(qn) & 511)
    return b


def _remap_locals(loc: Optional[Dict[str, V]], m: Dict[int, int]) -> Optional[Dict[str, V]]:
    return None if loc is None else {k: _remap(v, m) for k, v in loc.items()}


def _remap_write(w: tuple, m: Dict[int, int]) -> tuple:
    """A write-log entry (see ``Interp.wlog``) under the relocation ``m``."""
    kind = w[0]
    if kind == "touch":
        return w
    if kind == "new":
        return (kind, m.get(w[1], w[1]), w[2])
    if kind == "attr":
        return (kind, m.get(w[1], w[1]), w[2], _remap(w[3], m))
    if kind in ("def", "lambda"):
        return (kind, w[1], _remap_locals(w[2], m), _remap_locals(w[3], m))
    return (kind, w[1], w[2], _remap(w[3], m))   # module and class attributes: owners are names


def _ids_in(x, out: set) -> None:
    """Every test instance id in ``x`` (values, atoms, tuples, contexts), into ``out``."""
    t = type(x)
    if t is V:
        out.update(i for i in x.instances() if i >= TEST_HEAP_BASE)
    elif t is tuple and x:
        if (x[0] == "inst" or x[0] == "testcase") and len(x) == 2 and type(x[1]) is int:
            if x[1] >= TEST_HEAP_BASE:
                out.add(x[1])
            return
        for i in x:
            _ids_in(i, out)
    elif t is dict:
        for k, v in x.items():
            _ids_in(k, out)
            _ids_in(v, out)
    elif t is Ctx:
        _ids_in(x.patches, out)
        _ids_in(x.env, out)
        _ids_in(x.cwd, out)
        _ids_in(x.effects, out)


def _relocatable(e: _MemoEntry) -> bool:
    """Every test instance the entry holds is one of its inputs' or one it made."""
    held: set = set()
    d = e.effects
    for x in (e.ret, d.ctx_after, d.escapes, d.misses, d.cms):
        _ids_in(x, held)
    for w in d.writes:
        if w[0] in ("new", "attr") and w[1] >= TEST_HEAP_BASE:
            held.add(w[1])
        for x in w[2:]:
            _ids_in(x, held)
    known = set(e.ids)
    return all(i in known or e.first_id <= i < e.first_id + e.fresh for i in held)
