"""Writes along alternative ways (the two sides of an undecided ``if``, a loop body that may
not run, an ``except`` handler): to a module's globals at its top level, and to the attributes
of the instances a test makes.

A module's top level binds its globals: ``try: import yaml`` / ``except ImportError: yaml =
None`` leaves either, not the one bound last. Each way's bindings are kept while the next runs
(a module it imports may read them), and joined at the end (``ModuleWays``).

Locals are copied per way and joined (``Statements._alternatives``); the attributes of the
instances a test makes live in the heap, so each way's writes are logged (``Interp.attr_undo``:
``(instance id, attribute, value before)``, ``None`` when it had none) and put back before the
next way runs. After the last way an attribute holds what any way left in it, and also its old
value when some way did not write it: ``if undecided: self.n += 1`` leaves ``{n, n + 1}``, not
``n + 1`` (a later ``self.n >= limit`` is then decided only when every value decides it).
Instances made at import are shared state (``Memo.write_state``) and are not joined here.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from .values import V, union


MAX_JOINED = 8   # alternatives an attribute's joined value may hold


def _container(v: V) -> bool:
    return any(isinstance(a, tuple) and a[0] in ("seq", "dict") for a in v.atoms)


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
    """The attribute writes of one set of alternative ways (see the module docstring)."""

    __slots__ = ("interp", "outer", "log", "base", "left", "ways")

    def __init__(self, interp) -> None:
        self.interp = interp
        self.outer: Optional[list] = interp.attr_undo
        self.log: list = []
        interp.attr_undo = self.log
        self.base: Dict[Tuple[int, str], Optional[V]] = {}      # the value before the first way
        self.left: Dict[Tuple[int, str], List[Optional[V]]] = {}  # what each way that wrote it left
        self.ways = 0

    def end_way(self) -> None:
        """Take what this way left in the attributes it wrote, and put them back as they were."""
        self.ways += 1
        if not self.log:
            return
        before: Dict[Tuple[int, str], Optional[V]] = {}
        for iid, name, old in self.log:
            before.setdefault((iid, name), old)
        heap = self.interp.heap
        for key, old in before.items():
            h = heap.get(key[0])
            if h is None:
                continue
            attrs = h["attrs"]
            self.left.setdefault(key, []).append(attrs.get(key[1]))
            self.base.setdefault(key, old)
            if old is None:
                attrs.pop(key[1], None)
            else:
                attrs[key[1]] = old
            h.pop("sig", None)
        self.log.clear()

    def finish(self) -> None:
        """Hand back the enclosing log and write each attribute's joined value through it. A
        container (a dict or list the ways fill entry by entry) keeps what the last way that
        wrote it left, as before the join: joined, each undecided write would double its
        alternatives (a graph's node dict filled in a loop); so does a join of more than
        ``MAX_JOINED`` alternatives."""
        self.interp.attr_undo = self.outer
        for (iid, name), left in self.left.items():
            vals = [v for v in left if v is not None]
            if not vals:
                continue
            base = self.base[(iid, name)]
            if len(left) < self.ways and base is not None:
                vals.append(base)   # a way that did not write it keeps what was there
            joined = union(vals)
            if len(joined.atoms) > MAX_JOINED or any(_container(v) for v in vals):
                joined = vals[0] if len(vals) == 1 else [v for v in left if v is not None][-1]
            self.interp.set_attr(iid, name, joined)

    def keep_last(self) -> None:
        """The way that ran last is the only one (it raised what the test expects): its writes
        stay, logged in the enclosing log; the earlier ways' writes were put back."""
        self.interp.attr_undo = self.outer
        if self.outer is not None:
            self.outer.extend(self.log)
