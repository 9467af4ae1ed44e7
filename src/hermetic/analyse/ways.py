"""Writes along alternative ways (the two sides of an undecided ``if``, a loop body that may
not run, an ``except`` handler): to a module's globals at its top level, and to the attributes
of the instances a test makes.

A module's top level binds its globals: ``try: import yaml`` / ``except ImportError: yaml =
None`` leaves either, not the one bound last. Each way's bindings are kept while the next runs
(a module it imports may read them), and joined at the end (``ModuleWays``).

Locals are copied per way and joined (``Statements._alternatives``); the attributes of the
instances a test makes live in the heap, so each way's writes are logged (``Interp.attr_undo``:
``(instance id, attribute, value before)``, ``None`` when it had none). A counter (known
integers before and after the way) is put back before the next way runs, and after the last
holds every count a way left, and its old count when some way did not change it:
``if undecided: self.n += 1`` leaves ``{n, n + 1}``, not ``n + 1`` (a later
``self.n >= limit`` is then decided only when every count decides it). Other attributes keep
the last write (``WayWrites``).
Instances made at import are shared state (``Memo.write_state``) and are not joined here.

What the run wrote outside its tmp_path (``Ctx.tree_changed`` / ``tree_made``, ``shipped``)
starts each way as it was before the first, and after the last holds what any way wrote
(``TreeWays``): one way's write does not make a path the other way asks about (click's
alternative command lines, the two sides of an ``if``).
"""
from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

from .decide import atom_values
from .limits import MAX_COUNTS
from .values import WHOLE, Origin, V, union


def _count(v: Optional[V]) -> bool:
    """``v`` is one or a few known integers (a counter: ``self._overflow``)."""
    if v is None or not v.atoms or len(v.atoms) > MAX_COUNTS:
        return False
    for a in v.atoms:
        vs = atom_values(a) if isinstance(a, Origin) else None
        if not vs or not all(type(x) is int for x in vs):
            return False
    return True


class TreeWays:
    """The checkout writes along alternative ways (see the module docstring). ``ip``: the
    interpreter, whose ``ctx`` a way may replace (a ``with`` block's end, a memoized call)."""

    __slots__ = ("ip", "changed", "made", "start_changed", "start_made")

    def __init__(self, ip) -> None:
        self.ip = ip
        self.start_changed, self.start_made = ip.ctx.tree_changed, ip.ctx.tree_made
        self.changed, self.made = self.start_changed, self.start_made

    def start(self) -> None:
        self.ip.ctx.tree_changed, self.ip.ctx.tree_made = self.start_changed, self.start_made

    def end_way(self) -> None:
        ctx = self.ip.ctx
        self.changed = self.changed or ctx.tree_changed
        self.made = self.made + tuple(m for m in ctx.tree_made if m not in self.made)

    def finish(self) -> None:
        self.ip.ctx.tree_changed, self.ip.ctx.tree_made = self.changed, self.made


class ModuleWays:
    """The globals a module's top level binds along alternative ways (see the module docstring);
    ``g`` is None for a function's frame, and then nothing is done."""

    __slots__ = ("g", "base", "before", "bound")

    def __init__(self, g: Optional[Dict[str, V]]) -> None:
        self.g = g
        self.base: Optional[Dict[str, V]] = None    # the globals before the first way
        self.before: Dict[str, V] = {}
        self.bound: List[Dict[str, V]] = []          # what each way that went on bound

    def start(self) -> None:
        if self.g is not None:
            self.before = dict(self.g)
            if self.base is None:
                self.base = self.before

    def keep(self) -> None:
        """The way went on (it did not return or raise): keep what it bound."""
        if self.g is not None:
            self.bound.append({k: v for k, v in self.g.items() if self.before.get(k) is not v})

    def finish(self) -> None:
        g, base = self.g, self.base
        if g is None or base is None or not self.bound:
            return
        for name in {k for bound in self.bound for k in bound}:
            vals = [bound[name] for bound in self.bound if name in bound]
            if name in base and len(vals) < len(self.bound):
                vals.append(base[name])   # a way that did not bind it keeps what was there
            g[name] = union(vals)


class WayWrites:
    """The counters the ways change (see the module docstring): an attribute that holds known
    integers before and after a way is put back before the next way runs, and holds every count
    the ways left once the last has run. Any other attribute keeps what the way that wrote it
    last left, as the ways run one after the other: joining flags and objects as well made
    every later branch on them undecided, and cost a third more analysis time and twice the
    memory on real suites for few decided ways."""

    __slots__ = ("interp", "outer", "log", "base", "left", "plain", "ways")

    def __init__(self, interp) -> None:
        self.interp = interp
        self.outer: Optional[list] = interp.attr_undo
        self.log: list = []
        interp.attr_undo = self.log
        self.base: Dict[Tuple[int, str], V] = {}          # a counter's count before the first way
        self.left: Dict[Tuple[int, str], List[V]] = {}    # what each way that changed it left
        self.plain: Set[Tuple[int, str]] = set()          # written, and not a counter: last write
        self.ways = 0

    def end_way(self) -> None:
        """Take the counts this way left, and put them back as they were before it; anything
        else it wrote stays, logged in the enclosing log."""
        self.ways += 1
        if not self.log:
            return
        before: Dict[Tuple[int, str], Optional[V]] = {}
        for iid, name, old in self.log:
            before.setdefault((iid, name), old)
        self.log.clear()
        heap = self.interp.heap
        for key, old in before.items():
            h = heap.get(key[0])
            if h is None:
                continue
            attrs = h["attrs"]
            now = attrs.get(key[1])
            if key not in self.plain and _count(now) and _count(self.base.get(key, old)):
                self.left.setdefault(key, []).append(now)
                attrs[key[1]] = self.base.setdefault(key, old)
                h.pop("sig", None)
                continue
            self.plain.add(key)   # the ways' writes stay, one after the other
            self.left.pop(key, None)
            if self.outer is not None:
                self.outer.append((key[0], key[1], old))

    def finish(self) -> None:
        """Hand back the enclosing log and write each counter's joined value through it."""
        self.interp.attr_undo = self.outer
        for (iid, name), left in self.left.items():
            vals = list(left)
            if len(left) < self.ways:
                vals.append(self.base[(iid, name)])   # a way that did not change it keeps what was there
            joined = union(vals)
            if len(joined.atoms) <= MAX_COUNTS:
                self.interp.set_attr(iid, name, joined)
            else:
                self.interp.set_attr(iid, name, left[-1])

    def keep_last(self) -> None:
        """The way that ran last is the only one (it raised what the test expects): its writes
        stay, logged in the enclosing log; the earlier ways' counts were put back."""
        self.interp.attr_undo = self.outer
        if self.outer is not None:
            self.outer.extend(self.log)


def union_locals(ways: List[Dict[str, V]]) -> Dict[str, V]:
    """Each name bound on any of ``ways`` (locals dicts), to the union of what they bind it to."""
    if len(ways) == 1:
        return dict(ways[0])
    merged: Dict[str, V] = {}
    for d in ways:
        for k, v in d.items():
            merged[k] = merged[k] | v if k in merged else v
    for k, v in merged.items():
        if len(v.atoms) > _MAX_DICTS:
            merged[k] = widened(v)
    return merged


# alternatives of a dict a variable may hold after branches, before they are merged into one: a
# dict filled by a run of undecided `if`s doubles with each (rq's Job.to_dict: 2048 after 11)
_MAX_DICTS = 16


def widened(v: V) -> V:
    """``v`` with its dict alternatives, when more than ``_MAX_DICTS``, merged into one dict:
    each key maps to what any alternative maps it to, and the dict is known whole only where
    every alternative was, with the same keys."""
    dicts = [a for a in v.ordered() if isinstance(a, tuple) and a and a[0] == "dict"]
    if len(dicts) <= _MAX_DICTS:
        return v
    entries: Dict[object, V] = {}
    keysets = set()
    for a in dicts:
        keysets.add(frozenset(k for k, _x in a[1]))
        for k, x in a[1]:
            entries[k] = entries[k] | x if k in entries else x
    whole = (WHOLE,) if len(keysets) == 1 and all(WHOLE in a[2:] for a in dicts) else ()
    others = [a for a in v.atoms if not (isinstance(a, tuple) and a and a[0] == "dict")]
    return V(frozenset(others + [("dict", tuple(entries.items())) + whole]), v.is_path)
