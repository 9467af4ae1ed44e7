"""Durations: the clock reads whose value is only subtracted from another clock read
(``start = monotonic(); ...; elapsed = monotonic() - start``). The difference measures how
long something took, whatever the date, so such a read is benign (a note, contract section 4).

The rule, read from the source of the function (or class) that holds the read:
- a clock call that is an operand of ``-`` whose other operand is a clock read (a clock call,
  or a name / ``self`` attribute bound to one) is a duration;
- a clock call assigned to a name (a local, or ``self.x`` across the methods of one class) is a
  duration when that name is used at least once and every use is such an operand of ``-``; one
  assigned to several names (``self.start = self.last_eta = time.time()``) when every one of
  them that is read is only subtracted, and one is.
A clock function the module binds to a name (``preferred_clock = time.time``) reads the clock
where that name is called, and the binding is a duration when every use of the name is a call
that is one. A deadline (``end = time() + timeout``) is bound like a read; a read of a clock that counts from
an arbitrary point (``monotonic``, ``perf_counter``) is a duration in any difference but one
that takes a fixed amount from it (``monotonic() - 10000``: a point in time). A read (or one
shifted by an amount) compared with another read is a deadline's check, the time elapsed
against a limit (``start + timeout > perf_counter()``, ``time() < end``): a duration too; a method
sees the ``self`` attributes its class binds only to clock reads.
A clock imported under another name (``from time import time as _time``) is called by that name.
A start passed to a class of the module whose ``__init__`` only keeps it in ``self.x``, read only as
``clock() - self.x``, is one too (``_duration_parameters``). Any other use (returned, passed on,
compared with what is no clock read, formatted) keeps the read a warning.
"""
from __future__ import annotations

import ast
import bisect
from typing import Dict, FrozenSet, Iterable, List, Optional, Set, Tuple

#: the last part of the calls that read a clock (the catalogue's clock section); only where a
#: sink event already says the call reads the clock does a position here matter
CLOCK_CALLS = frozenset({"time", "time_ns", "monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns",
                         "clock_gettime", "clock_gettime_ns", "now", "utcnow", "today"})
#: the clocks that count from an arbitrary point: their reads only mean something as differences
RELATIVE_CLOCKS = frozenset({"monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns"})


def duration_reads(source: str) -> Set[Tuple[int, int]]:
    """The ``(line, column)`` (1-based, columns in characters) of each clock call in ``source``
    that is a duration (module docstring). A source that does not parse gives none."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set()
    lines = source.splitlines()
    out: Set[Tuple[int, int]] = set()
    everything = list(ast.walk(tree))   # one walk for the scopes, the imports and the aliases' uses
    scopes: List[ast.AST] = [tree]
    scopes += [n for n in everything if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    aliases = _clock_aliases(tree)
    # `from time import time as _time`: `_time()` reads the clock too
    imported = {a.asname for n in everything if isinstance(n, ast.ImportFrom) and n.module == "time"
                for a in n.names if a.asname and a.name in CLOCK_CALLS}
    names = CLOCK_CALLS | frozenset(aliases) | frozenset(imported)
    # only the scopes around a clock call matter (a large test module has thousands of others)
    clock_lines = sorted({n.lineno for n in everything if isinstance(n, ast.Call) and _call_name(n) in names})
    if not clock_lines:
        return out
    scopes = [sc for sc in scopes if sc is tree or _spans(sc, clock_lines)]
    nodes_of = {id(scope): list(_own_nodes(scope)) for scope in scopes}
    # a method sees its class's `self` attributes bound only to clock reads (a start kept by one
    # method, subtracted from in another)
    class_clocks: Dict[int, Set[str]] = {}
    for scope in scopes:
        if isinstance(scope, ast.ClassDef):
            attrs = _clock_bindings(scope, nodes_of[id(scope)], True, names)[0]
            for n in scope.body:
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    class_clocks[id(n)] = attrs
    handoffs = _duration_parameters([sc for sc in scopes if isinstance(sc, ast.ClassDef)], names)
    for scope in scopes:
        for call in _durations_in(scope, class_clocks.get(id(scope), set()), names, nodes_of[id(scope)], handoffs):
            out.add(_position(call, lines))
    if aliases:
        # a clock function the module binds to a name (`preferred_clock = time.time`) whose every
        # use is a call that is a duration: the binding is one too
        calls_of: Dict[str, List[ast.AST]] = {}
        for n in everything:
            if isinstance(n, ast.Name) and n.id in aliases and isinstance(n.ctx, ast.Load):
                calls_of.setdefault(n.id, []).append(n)
        parent = {id(c): n for n in everything for c in ast.iter_child_nodes(n)}
        for name, binds in aliases.items():
            uses = calls_of.get(name, [])
            if uses and all(isinstance(parent.get(id(u)), ast.Call) and parent[id(u)].func is u
                            and _position(parent[id(u)], lines) in out for u in uses):
                out.update(_position(b, lines) for b in binds)
    return out


def _spans(scope: ast.AST, lines: List[int]) -> bool:
    """Whether one of the sorted ``lines`` falls inside ``scope``'s lines."""
    i = bisect.bisect_left(lines, scope.lineno)
    return i < len(lines) and lines[i] <= (getattr(scope, "end_lineno", None) or scope.lineno)


def _clock_aliases(tree: ast.Module) -> Dict[str, List[ast.Assign]]:
    """Module-level names bound only to a clock function itself (``preferred_clock =
    time.perf_counter`` / ``= time.time`` on another platform): name -> those assignments."""
    out: Dict[str, List[ast.Assign]] = {}
    other: Set[str] = set()
    todo = list(tree.body)
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.If, ast.Try)):
            todo.extend(n.body + n.orelse + getattr(n, "finalbody", []))
            for h in getattr(n, "handlers", []):
                todo.extend(h.body)
        elif isinstance(n, ast.Assign):
            clock = _name_of(n.value) in CLOCK_CALLS
            for t in n.targets:
                if isinstance(t, ast.Name) and clock:
                    out.setdefault(t.id, []).append(n)
                elif isinstance(t, ast.Name):
                    other.add(t.id)
    return {k: v for k, v in out.items() if k not in other}


def _position(node: ast.AST, lines: List[str]) -> Tuple[int, int]:
    line = lines[node.lineno - 1] if 0 < node.lineno <= len(lines) else ""
    col = len(line.encode("utf-8")[:node.col_offset].decode("utf-8", "replace"))   # ast counts bytes
    return node.lineno, col + 1


def _relative_clock(node: ast.AST) -> bool:
    """A call of a clock whose value means nothing alone (``monotonic``, ``perf_counter``): any
    difference it is part of is a duration."""
    return _is_clock_call(node) and _call_name(node) in RELATIVE_CLOCKS


def _offset(node: ast.AST) -> bool:
    """A fixed amount of time: a number, an ALL_CAPS constant, or arithmetic of them."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float))
    if isinstance(node, (ast.Name, ast.Attribute)):
        name = node.id if isinstance(node, ast.Name) else node.attr
        return name.isupper()
    if isinstance(node, ast.BinOp):
        return _offset(node.left) and _offset(node.right)
    if isinstance(node, ast.UnaryOp):
        return _offset(node.operand)
    return False


def _call_name(node: ast.Call) -> str:
    return _name_of(node.func)


def _name_of(node: ast.AST) -> str:
    """The last name of ``a.b.c`` or ``c``; "" for anything else."""
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


def _is_clock_call(node: Optional[ast.AST], names: FrozenSet[str] = CLOCK_CALLS) -> bool:
    if not isinstance(node, ast.Call):
        return False
    return _call_name(node) in names


def _key(node: ast.AST, self_attrs: bool) -> Optional[str]:
    """The binding a load or store names: a plain name, or ``self.x`` where ``self_attrs``."""
    if isinstance(node, ast.Name):
        return node.id
    if self_attrs and isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
            and node.value.id == "self":
        return "self." + node.attr
    return None


def _own_nodes(scope: ast.AST) -> Iterable[ast.AST]:
    """The nodes of ``scope`` outside nested functions and classes (a class scope: its
    methods' bodies too, where ``self`` attributes live)."""
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        n = todo.pop()
        yield n
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)) and \
                not (isinstance(scope, ast.ClassDef) and isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
            continue
        todo.extend(ast.iter_child_nodes(n))


def _clock_read(value: ast.AST, names: FrozenSet[str] = CLOCK_CALLS) -> Optional[ast.Call]:
    """The clock call a bound value is: the call itself, or a deadline ``clock() + timeout``."""
    if _is_clock_call(value, names):
        return value
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        for side in (value.left, value.right):
            if _is_clock_call(side, names):
                return side
    return None


def _clock_bindings(scope: ast.AST, nodes: List[ast.AST], in_class: bool, names: FrozenSet[str] = CLOCK_CALLS):
    """``(names bound only to clock reads, name -> those reads, read -> every name it is bound
    to)``; a read bound into something not followed counts the name ``""``."""
    bound: Dict[str, List[ast.Call]] = {}   # binding -> the clock calls assigned to it
    other: Set[str] = set()                  # bindings also assigned something else
    keys_of: Dict[int, List[str]] = {}        # a clock call -> every binding it is assigned to
    for n in nodes:
        if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None:
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            read = _clock_read(n.value, names)
            for t in targets:
                k = _key(t, in_class)
                if k is None:
                    if read is not None:   # also into something not followed: not only subtracted
                        keys_of.setdefault(id(read), []).append("")
                    continue
                if in_class and not k.startswith("self."):
                    continue
                if read is not None:   # self.start = self.last_eta = time.time(): each target
                    bound.setdefault(k, []).append(read)
                    keys_of.setdefault(id(read), []).append(k)
                else:
                    other.add(k)
    return set(bound) - other, bound, keys_of


def _duration_parameters(classes: List[ast.AST], names: FrozenSet[str]) -> Dict[str, Dict[object, bool]]:
    """The parameters of ``classes`` (the module's, with a clock read) that hold the start of a
    duration: class name -> {parameter name and position: True}, where ``__init__`` only stores
    the parameter in ``self.x`` and every read of ``self.x`` in the class is subtracted from a
    clock read (httpx's ``BoundSyncStream(stream, response, start)``: ``perf_counter() -
    self._start``)."""
    out: Dict[str, Dict[object, bool]] = {}
    for cls in classes:
        init = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
        if init is None:
            continue
        params = [a.arg for a in init.args.args[1:]]
        stored: Dict[str, str] = {}   # parameter -> the self attribute it is kept in
        kept: Set[int] = set()        # the loads that store it
        used_otherwise: Set[str] = set()
        for n in ast.walk(init):
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.value, ast.Name) \
                    and n.value.id in params and _key(n.targets[0], True):
                stored[n.value.id] = _key(n.targets[0], True)
                kept.add(id(n.value))
        for n in ast.walk(init):
            if isinstance(n, ast.Name) and n.id in params and isinstance(n.ctx, ast.Load) and id(n) not in kept:
                used_otherwise.add(n.id)
        stored_names = {k for k in stored if k not in used_otherwise}
        if not stored_names:
            continue
        parent: Dict[int, ast.AST] = {}
        uses: Dict[str, Tuple[list, list]] = {stored[p]: ([], []) for p in stored_names}   # reads, writes
        for n in ast.walk(cls):
            for ch in ast.iter_child_nodes(n):
                parent[id(ch)] = n
            k = _key(n, True)
            if k in uses:
                uses[k][0 if isinstance(n.ctx, ast.Load) else 1].append(n)
        starts = {}
        for prm in stored_names:
            reads, writes = uses[stored[prm]]
            if reads and len(writes) == 1 and all(_minus_clock(r, parent, names) for r in reads):
                starts[prm] = True
                starts[params.index(prm)] = True
        if starts:
            out[cls.name] = starts
    return out


def _minus_clock(node: ast.AST, parent: Dict[int, ast.AST], names: FrozenSet[str]) -> bool:
    """``node`` is the right side of ``clock() - node``."""
    p = parent.get(id(node))
    return isinstance(p, ast.BinOp) and isinstance(p.op, ast.Sub) and p.right is node and _is_clock_call(p.left, names)


def _handed_on(node: ast.AST, parent: Dict[int, ast.AST], handoffs: Dict[str, Dict[object, bool]]) -> bool:
    """``node`` is passed to a class of the module whose parameter holds a duration's start."""
    p = parent.get(id(node))
    if isinstance(p, ast.keyword):
        call = parent.get(id(p))
        return isinstance(call, ast.Call) and handoffs.get(_call_name(call), {}).get(p.arg, False)
    if isinstance(p, ast.Call) and node in p.args:
        return handoffs.get(_call_name(p), {}).get(p.args.index(node), False)
    return False


def _durations_in(scope: ast.AST, class_clocks: Set[str] = frozenset(),
                  names: FrozenSet[str] = CLOCK_CALLS, nodes: Optional[List[ast.AST]] = None,
                  handoffs: Optional[Dict[str, Dict[object, bool]]] = None) -> List[ast.Call]:
    """The duration reads of one scope; ``class_clocks``: the ``self.x`` its class binds only to
    clock reads (for a method); ``names``: the calls that read a clock; ``nodes``: the scope's
    own nodes (``_own_nodes``), when known; ``handoffs``: ``_duration_parameters``."""
    in_class = isinstance(scope, ast.ClassDef)
    if nodes is None:
        nodes = list(_own_nodes(scope))
    if not any(isinstance(n, ast.Call) and _call_name(n) in names for n in nodes):
        return []   # no clock read here
    parent: Dict[int, ast.AST] = {}
    for n in nodes:
        for c in ast.iter_child_nodes(n):
            parent[id(c)] = n
    clock_names, bound, keys_of = _clock_bindings(scope, nodes, in_class, names)

    def clock_operand(node: ast.AST) -> bool:
        if _is_clock_call(node, names):
            return True
        if _key(node, in_class) in clock_names and isinstance(node.ctx, ast.Load):
            return True
        return _key(node, True) in class_clocks and isinstance(node.ctx, ast.Load)

    def shifted_read(node: ast.AST) -> bool:
        """``node`` is ``start + timeout`` (or ``-``) with a clock read on one side."""
        return isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)) and (
            clock_operand(node.left) or clock_operand(node.right))

    def deadline(node: ast.AST) -> bool:
        """``node`` (a clock read, or one shifted by an amount) is compared with another
        (``start + timeout > perf_counter()``, ``time() < end`` with ``end = time() + t``): the
        time elapsed against a limit."""
        p = parent.get(id(node))
        if isinstance(p, ast.BinOp) and isinstance(p.op, (ast.Add, ast.Sub)) and clock_operand(node):
            node, p = p, parent.get(id(p))
        if not (isinstance(p, ast.Compare) and len(p.ops) == 1):
            return False
        sides = [p.left, p.comparators[0]]
        if node not in sides:
            return False
        other = sides[1] if sides[0] is node else sides[0]
        return clock_operand(other) or shifted_read(other)

    def subtracted(node: ast.AST) -> bool:
        """``node`` is one side of ``a - b`` whose other side is a clock read, or ``node`` reads a
        clock that only counts from an arbitrary point (``perf_counter() - self._start``); or it
        takes part in a deadline's check (``deadline``)."""
        p = parent.get(id(node))
        if deadline(node):
            return True
        if not (isinstance(p, ast.BinOp) and isinstance(p.op, ast.Sub)):
            return False
        other_side = p.right if p.left is node else p.left
        if _relative_clock(node) and not (p.left is node and _offset(other_side)):
            return True   # not `monotonic() - 10000`: a point in time, however it is used later
        return clock_operand(other_side)

    out: List[ast.Call] = []
    for n in nodes:
        if _is_clock_call(n, names) and subtracted(n):
            out.append(n)
    only_subtracted, unused = set(), set()
    for k in sorted(clock_names):
        uses = [n for n in nodes if _key(n, in_class) == k and isinstance(getattr(n, "ctx", None), ast.Load)]
        if not uses:
            unused.add(k)
        elif all(subtracted(u) or (handoffs and _handed_on(u, parent, handoffs)) for u in uses):
            only_subtracted.add(k)
    for k in sorted(only_subtracted):
        # a call assigned to several bindings (self.start = self.last_eta = time.time()) is a
        # duration when every binding that is read is only subtracted
        out.extend(c for c in bound[k] if c not in out and all(
            b in only_subtracted or b in unused for b in keys_of[id(c)]))
    return out
