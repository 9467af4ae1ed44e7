"""Loops: a ``for`` or ``while`` statement run in a frame, with its ``break`` and ``continue``.

A ``for`` over a few items known in order (a tuple or list display as it was made:
``values.is_counted``, at most ``UNROLL_ITEMS``) runs its body once per item, in order, so what
the test's values decide on one item holds for the next and for the code after the loop: an
early ``return`` or ``break`` on the item that matches, a ``continue`` past one that does not
exist, a variable set on the first item (pytest's rootdir lookup: ``found = None; for p in
paths: if not p.exists(): continue ...; if found is None: found = cwd``). Nested loops in one
frame share ``UNROLL_RUNS`` runs of their bodies. Any other loop runs its body once with every
item's value, as a way that may not run (or, over items known to be there and with no jump,
once for certain).

A ``break`` or ``continue`` ends its way of the body (``exec_block`` returns True with
``Interp.jumping`` set): the locals of that way are kept on the frame's innermost ``LoopExits``
when it runs; a ``continue``'s go on to the next item, a ``break``'s to the code after the loop.
What follows a loop is cut (reached on an undecided way) only when a way in its body returned
or raised, not when one jumped.
"""
from __future__ import annotations

from typing import List, Optional, Tuple

from ..summarise.ir import (FOR_BODY, FOR_ITER, FOR_JUMPS, FOR_LINE, FOR_ORELSE, FOR_TARGET, JUMP_KIND, WHILE_BODY,
                            WHILE_LINE, WHILE_ORELSE, WHILE_TEST)
from .controls import mock_items
from .decide import values
from ..summarise.unparse import calls_in
from .limits import UNROLL_ITEMS, UNROLL_RUNS
from .literals import inline_nonempty
from .values import EMPTY, MAYBE_EMPTY, NONEMPTY, V, holds_item, is_counted, is_prefix, of, seq_atom, surely_empty, \
    surely_nonempty, union
from .ways import union_locals


class LoopExits:
    """The ways out of one running loop's body: ``ways`` the ``(kind, locals)`` of each
    ``break`` / ``continue`` run, ``returned`` whether a way returned or raised."""

    __slots__ = ("ways", "returned", "runs")

    def __init__(self, runs: int = 1) -> None:
        self.ways: List[tuple] = []
        self.returned = False
        self.runs = runs   # body runs per run of this loop's frame block (unrolled loops around it)


def exec_jump(ip, st, frame) -> bool:
    """``break`` / ``continue``: its way ends here; the loop takes its locals."""
    if not frame.loops:
        return False
    frame.loops[-1].ways.append((st[JUMP_KIND], dict(frame.locals)))
    ip.jumping = True
    ip.raising = False
    return True


def way_ended(ip, frame) -> bool:
    """After a way of alternatives ended: True when it ended by a jump (the flag is spent);
    else it returned or raised, which the innermost loop notes."""
    if ip.jumping:
        ip.jumping = False
        return True
    if frame.loops:
        frame.loops[-1].returned = True
    return False


def _in_order(it: V) -> Optional[Tuple[tuple, Optional[V]]]:
    """``(items, rest)`` when ``it`` is one sequence whose first items are known in order:
    ``rest`` is None when they are all its items, else the value of any further ones (a
    comprehension's list with an item for certain: its one item first, then maybe more)."""
    if len(it.atoms) != 1:
        return None
    (a,) = it.atoms
    if is_counted(a) and len(a[2]) <= UNROLL_ITEMS:   # none: a list made empty and not changed since
        return a[2], None
    if is_prefix(a) and 1 < len(a[2]) <= UNROLL_ITEMS + 1:   # (p, *p.parents): known first items, then more
        return a[2][:-1], a[2][-1]
    if holds_item(a) and len(a[2]) == 1:
        return a[2], a[2][0]
    return None


def _runs(frame) -> int:
    return frame.loops[-1].runs if frame.loops else 1


_FILLS = frozenset({"append", "extend", "insert", "add", "update", "setdefault"})
_FILLED: dict = {}   # id(body) -> (body, names): the lists a loop's body fills and reads (``filled_in``)


def filled_in(body) -> frozenset:
    """The names a loop's ``body`` both fills in place (``seen.append(p)``, ``acc += [x]``) and
    reads otherwise (``if p in seen:``), outside the functions it defines: on a later pass,
    what an earlier one put there is in them when they are read."""
    hit = _FILLED.get(id(body))
    if hit is not None and hit[0] is body:
        return hit[1]
    filled, seen = set(), set()
    todo = [body]
    while todo:
        x = todo.pop()
        if not isinstance(x, (list, tuple)) or x and x[0] in ("def", "class", "lambda"):
            continue
        if len(x) > 2 and x[0] == "call" and isinstance(x[1], tuple) and x[1][0] == "attr" and \
                x[1][2] in _FILLS and isinstance(x[1][1], tuple) and x[1][1][0] == "name":
            filled.add(x[1][1][1])
            todo.extend(y for y in x[2:] if isinstance(y, (list, tuple)))   # its arguments, not the receiver
            continue
        if len(x) > 3 and x[0] == "augassign" and isinstance(x[1], tuple) and x[1][0] == "name":
            filled.add(x[1][1])
            todo.extend(y for y in x[2:] if isinstance(y, (list, tuple)))
            continue
        if len(x) == 2 and x[0] == "name" and isinstance(x[1], str):
            seen.add(x[1])
        todo.extend(y for y in x if isinstance(y, (list, tuple)))
    if len(_FILLED) > 50_000:
        _FILLED.clear()
    _FILLED[id(body)] = (body, frozenset(n for n in filled if n in seen))
    return _FILLED[id(body)][1]


def _carried(ip, body, frame) -> None:
    """An empty list the body fills and reads may hold items on a later pass (``if p in seen:``)."""
    for name in filled_in(body):
        ip.maybe_filled(name, frame)


def exec_for(ip, st, frame) -> bool:
    """Run a ``for`` statement; True when every way through it returns or raises."""
    frame.line = st[FOR_LINE]
    it = ip.eval(st[FOR_ITER], frame)
    it = mock_items(it, ip.ctx) or it   # a MagicMock the test set nothing on: no item
    if not frame.is_module:
        _carried(ip, st[FOR_BODY], frame)
    if ip.call_raised and ip._may_raise(frame):   # so does the iterable: no body runs
        return False
    count = _range_length(ip, st[FOR_ITER], frame)   # range(3): the body runs; range(0): it does not
    if surely_empty(it) or count == 0:   # a tuple known to be empty (an option's default of no values)
        return ip.exec_block(st[FOR_ORELSE], frame)
    known = _in_order(it)
    if known is not None and _runs(frame) * (len(known[0]) + (known[1] is not None)) <= UNROLL_RUNS:
        return _unrolled(ip, st, known[0], known[1], frame)
    ip.assign(st[FOR_TARGET], ip._element(it), frame)
    once = len(st) <= FOR_JUMPS and (surely_nonempty(it) or inline_nonempty(st[FOR_ITER]) or bool(count))
    return _folded(ip, st[FOR_BODY], st[FOR_ORELSE], once, frame)


def _range_length(ip, e, frame) -> Optional[int]:
    """The length of ``range(...)`` of the built-in with known integer arguments, else None."""
    if e[0] != "call" or e[1][0] != "name" or e[1][1] != "range" or not 1 <= len(e[2]) <= 3 or e[3]:
        return None
    if ip.eval(e[1], frame) != of(("ext", "builtins.range")):
        return None
    args = []
    for a in e[2]:
        if a[0] == "star" or next(iter(calls_in(a)), None) is not None:
            return None   # evaluated again here: nothing that runs code
        vals = values(ip.eval(a, frame))
        if not vals or len(vals) != 1 or type(vals[0]) is not int:
            return None
        args.append(vals[0])
    try:
        return len(range(*args))
    except ValueError:   # a step of 0
        return None


def exec_while(ip, st, frame) -> bool:
    """Run a ``while`` statement: its body as a way that may not run (items are not followed)."""
    frame.line = st[WHILE_LINE]
    if not frame.is_module:
        _carried(ip, st[WHILE_BODY], frame)
    ip.eval(st[WHILE_TEST], frame)
    return _folded(ip, st[WHILE_BODY], st[WHILE_ORELSE], False, frame)


def _folded(ip, body, orelse, once: bool, frame) -> bool:
    """The body run once with every item's value: for certain (``once``: over items known to
    be there, with no jump) or as a way that may not run; then the ``else`` block."""
    exits = LoopExits(_runs(frame))
    frame.loops.append(exits)
    try:
        if once:
            # the body runs, and a way that ends there ends the loop's block
            if ip.exec_block(body, frame):
                return True
            cut = ip.way_cut
        else:
            ip._branches([body, []], frame)
            cut = exits.returned   # a return in the body: what follows runs only when it did not
            if exits.ways:   # the jumps' ways leave the loop too (the items are not followed in order)
                frame.locals = union_locals([frame.locals] + [loc for _k, loc in exits.ways])
    finally:
        frame.loops.pop()
    ip.exec_block(orelse, frame)
    ip.jumping = False   # an outer loop's break in the else took its way; the body may have broken before it
    _leave(ip, frame, cut)
    return False


def _unrolled(ip, st, items, rest: Optional[V], frame) -> bool:
    """The body run for each item in order (see the module docstring), then, with ``rest``, once
    more as a way that may not run."""
    exits = LoopExits(_runs(frame) * (len(items) + (rest is not None)))
    frame.loops.append(exits)
    leaving: List[dict] = []   # the locals of the ways that break
    ran_out = True
    try:
        for item in items:
            ip.assign(st[FOR_TARGET], item, frame)
            start = len(exits.ways)
            ended = ip.exec_block(st[FOR_BODY], frame)
            ip.jumping = False
            going = []
            for kind, loc in exits.ways[start:]:
                (going if kind == "continue" else leaving).append(loc)
            if not ended:
                going.append(frame.locals)
            if not going:   # every way returned, raised or broke
                ran_out = False
                break
            frame.locals = union_locals(going)
        if ran_out and rest is not None:
            ip.assign(st[FOR_TARGET], rest, frame)
            start = len(exits.ways)
            ip._branches([st[FOR_BODY], []], frame)
            leaving += [loc for _k, loc in exits.ways[start:]]
    finally:
        frame.loops.pop()
    ip.way_cut = False   # the body's own jumps cut nothing after the loop
    if ran_out:
        if not ip.exec_block(st[FOR_ORELSE], frame):
            leaving.append(frame.locals)
    if not leaving:
        return True
    frame.locals = union_locals(leaving)
    _leave(ip, frame, exits.returned)
    return False


def _leave(ip, frame, cut: bool) -> None:
    """What follows the loop runs on an undecided way when a way in it returned or raised."""
    ip.way_cut = ip.way_cut or cut
    if cut and frame.loops:
        frame.loops[-1].returned = True


def comprehension_in_order(ip, e, iterable: V, frame) -> Optional[V]:
    """A list comprehension (or generator) ``e`` with one ``for``, over ``iterable`` (its value)
    when it holds a few items known in order (``_in_order`` with no rest): each item's element,
    in order, where the filters keep it (a list known by its items when every filter is decided;
    else one item for all that the filters may keep). None for any other comprehension
    (``Expressions.eval`` joins it)."""
    gens, elements = e[1], e[2]
    if len(gens) != 1 or len(elements) != 1:
        return None
    tgt, _it, ifs = gens[0]
    known = _in_order(iterable)
    if known is None or known[1] is not None:
        return None
    saved, before = dict(frame.locals), ip.call_raised
    kept, maybe = [], []
    try:
        for item in known[0]:
            ip.assign(tgt, item, frame)
            verdicts = [ip.eval_cond(cond, frame) for cond in ifs]
            if False in verdicts:
                continue
            (kept if all(v is True for v in verdicts) else maybe).append(ip.eval(elements[0], frame))
    finally:
        ip.call_raised = before
        frame.locals = saved
    if not maybe:
        return of(seq_atom("list", kept, exact=True))
    out = union(kept + maybe)
    return of(("seq", "list", (out,), NONEMPTY if kept else MAYBE_EMPTY)) if out.atoms else EMPTY

