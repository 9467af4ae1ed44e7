"""Monkeypatch through a project's own wrapper (HT302 / HT303 restores).

A fixture returning an instance whose ``__call__`` or method, or a closure, passes its own
parameters on to ``monkeypatch.setattr`` / ``delattr`` / ``setenv`` / ``delenv`` /
``setitem``, and a helper doing the same with the monkeypatch a test hands it, patch what
the caller names: celery's ``patching("celery._state.NAME", 0)`` is
``monkeypatch.setattr("celery._state.NAME", ...)``. ``forwarded_saves`` rewrites such a
call as the monkeypatch calls it makes, in the caller's terms, and reads them with
``statescan.monkeypatch_saves``.
"""
from __future__ import annotations

from typing import List, Set, Tuple

from . import interp as I
from ..summarise.ir import (ATTR_ATTR, ATTR_VALUE, CALL_ARGS, CALL_FUNC, CALL_KWARGS, CALL_POS, EXPR_VALUE,
                            NAME_ID, PARAM_KIND, PARAM_NAME, RETURN_VALUE, TAG, YIELD_VALUE, flat)
from ..summarise.unparse import calls_in
from .processfx import assigned_names
from .statescan import Walk, function_frame, monkeypatch_saves, resolve, scan_frame

_METHODS = frozenset({"setattr", "delattr", "setenv", "delenv", "setitem", "delitem"})
_MP = ("name", "monkeypatch")
_OPAQUE = ("name", "<computed by the wrapper>")   # names nothing in the caller's frame
_DEPTH = 3   # a wrapper calling another (``setattr`` -> ``self(...)`` -> monkeypatch)


def forwarded_saves(w: Walk, e) -> Set[tuple]:
    """The state keys (``monkeypatch_saves``) that the call ``e`` of ``w``'s function saves
    through a project wrapper of monkeypatch; empty for any other call."""
    out: Set[tuple] = set()
    for qn, bound in _callables(w, e[CALL_FUNC], e[CALL_ARGS]):
        for call in _through(w.ip, qn, bound, e[CALL_ARGS], e[CALL_KWARGS], e[CALL_POS], _DEPTH):
            key = monkeypatch_saves(w, call)
            if key is not None:
                out.add(key)
    return out


def _callables(w: Walk, fn, args) -> List[Tuple[str, bool]]:
    """``(qualname, bound)`` of the project functions the call of ``fn`` runs, when it may be a
    wrapper: the value of a fixture parameter (an instance's ``__call__`` or method, a function
    or closure), or a project function handed a monkeypatch (``patch_it(monkeypatch, path)``)."""
    ip = w.ip
    found: List[Tuple[str, bool]] = []
    if any(a[TAG] == "name" and "monkeypatch" in a[NAME_ID] for a in args):
        found += [(a[1], False) for a in resolve(ip, fn, w.frame).refs()
                  if a[0] == "func" and a[1] in ip.p.functions]
    base, meth = (fn, "__call__") if fn[TAG] == "name" else (fn[ATTR_VALUE], fn[ATTR_ATTR]) \
        if fn[TAG] == "attr" else (None, "")
    fixture = w.fixture(base[NAME_ID]) if w.fixture is not None and base is not None and base[TAG] == "name" else None
    if fixture is not None:
        values = ip.p.wrapper_values.get(fixture)
        if values is None:
            values = ip.p.wrapper_values[fixture] = fixture_values(ip, fixture)
        for kind, qn in values:
            if kind == "cls":
                m = ip.find_method(qn, meth)
                if m is not None:
                    found.append((m[1], True))
            elif meth == "__call__":
                found.append((qn, False))
    return found


def fixture_values(ip: I.Interp, fixture: str) -> List[Tuple[str, str]]:
    """What the fixture ``fixture`` (qualname) returns or yields, as far as a wrapper matters:
    ``("cls", class)`` for an instance it builds, ``("func", qualname)`` for a function or a
    closure it defines."""
    g, gmod = ip.p.functions[fixture]
    ip.import_module(gmod)
    frame = function_frame(ip, g, gmod)
    out: List[Tuple[str, str]] = []
    for st in flat(g["body"]):
        v = st[RETURN_VALUE] if st[TAG] == "return" else st[EXPR_VALUE][YIELD_VALUE] \
            if st[TAG] == "expr" and st[EXPR_VALUE][TAG] == "yield" else None
        if v is None:
            continue
        if v[TAG] == "name" and f"{fixture}.<locals>.{v[NAME_ID]}" in ip.p.functions:
            out.append(("func", f"{fixture}.<locals>.{v[NAME_ID]}"))
            continue
        for a in resolve(ip, v[CALL_FUNC] if v[TAG] == "call" else v, frame).refs():
            if a[0] == "cls" and v[TAG] == "call":
                out.append(("cls", a[1]))
            elif a[0] == "func" and v[TAG] != "call" and a[1] in ip.p.functions:
                out.append(("func", a[1]))
    return out


def _through(ip: I.Interp, qn: str, bound: bool, args, kwargs, pos, depth: int) -> List[tuple]:
    """The monkeypatch calls the function ``qn`` makes when called with ``args`` / ``kwargs``
    (expressions of the caller; ``bound``: its first parameter is the instance), as call
    expressions of the caller: a parameter the body never rebinds is replaced by the argument
    given for it, a literal stays, anything else the wrapper computes names nothing."""
    f, mod = ip.p.functions[qn]
    params = f["params"][1:] if bound and f["params"] and f["params"][0][PARAM_KIND] == "pos" else f["params"]
    given = {}
    for p, a in zip([p for p in params if p[PARAM_KIND] == "pos"], args):
        if a[TAG] == "star":
            break
        given[p[PARAM_NAME]] = a
    for name, v in kwargs:
        if name != "**" and any(p[PARAM_NAME] == name for p in params):
            given.setdefault(name, v)
    for name in assigned_names(f):
        given.pop(name, None)   # a parameter the wrapper rebinds holds what it computed

    frame = function_frame(ip, f, mod)

    def sub(x):
        if x[TAG] == "name" and x[NAME_ID] in given:
            return given[x[NAME_ID]]
        if x[TAG] == "lit":
            return x
        if x[TAG] == "name" and "monkeypatch" in x[NAME_ID] or (
                x[TAG] == "attr" and x[ATTR_VALUE] == ("name", "self") and "monkeypatch" in x[ATTR_ATTR]):
            return _MP   # the wrapper's own monkeypatch: a closure's, or kept on the instance
        if x[TAG] in ("name", "attr"):   # os.environ, a module the wrapper imports
            v = resolve(ip, x, frame)
            return ("value", v) if v.atoms else _OPAQUE
        return _OPAQUE

    out: List[tuple] = []
    for c in calls_in(f["body"]):
        fn = c[CALL_FUNC]
        if fn[TAG] == "attr" and fn[ATTR_ATTR] in _METHODS:
            recv = sub(fn[ATTR_VALUE])
            if recv[TAG] == "name" and "monkeypatch" in recv[NAME_ID]:
                out.append(("call", ("attr", recv, fn[ATTR_ATTR]), [sub(a) for a in c[CALL_ARGS]], [], pos))
                continue
        if depth <= 1:
            continue
        for iq, ib in _inner(ip, f, mod, fn, bound):   # a wrapper calling another
            out += _through(ip, iq, ib, [sub(a) for a in c[CALL_ARGS]],
                            [(n, sub(v)) for n, v in c[CALL_KWARGS] if n != "**"], pos, depth - 1)
    return out


def _inner(ip: I.Interp, f: dict, mod: str, fn, bound: bool) -> List[Tuple[str, bool]]:
    """The project functions a call of ``fn`` in the wrapper ``f`` runs: ``self(...)`` and
    ``self.method(...)`` of its class, a function its module names."""
    cls = f.get("class")
    if bound and cls and (fn == ("name", "self") or fn[TAG] == "attr" and fn[ATTR_VALUE] == ("name", "self")):
        m = ip.find_method(cls, "__call__" if fn[TAG] == "name" else fn[ATTR_ATTR])
        return [(m[1], True)] if m is not None else []
    if fn[TAG] != "name":
        return []
    return [(a[1], False) for a in resolve(ip, fn, scan_frame(ip, mod)).refs()
            if a[0] == "func" and a[1] in ip.p.functions and a[1] != f["qualname"]]
