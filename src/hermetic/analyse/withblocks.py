"""`with` statements: what a block runs under and what it leaves. A patcher or a
monkeypatch context holds for the block; a generator context manager (``@contextmanager``)
has run whole when called, so its control state at the yield (``Interp.cm_ctx``) is put back
for the block, and so is what it had written to shared state by the yield (a module global,
a class attribute: click's ``CliRunner.isolation`` sets ``termui._getchar``), while what its
``finally`` put back is written again after the block; an instance's ``__enter__`` /
``__exit__`` run around it; a block expecting an exception (``pytest.raises``) ends at the
expected raise (``expected``); ``capsys.disabled()`` gives the block the real streams.
"""
from __future__ import annotations

from .expected import end_at_the_raise, expected_classes
from ..summarise.ir import dotted_name
from .state import Frame
from .values import UNKNOWN_V

# the context managers that give a test pytest's real standard streams back
_CAPTURE_OFF = {f"{fx}.disabled" for fx in ("capsys", "capfd", "capsysbinary", "capfdbinary")}


def exec_with(ip, items, body, frame: Frame, is_async: bool = False) -> bool:
    """Run a `with` statement (``items``: its (expression, target) pairs) around ``body`` in
    ``frame``; True when every way through it ended (returned or raised)."""
    enter_name, exit_name = ("__aenter__", "__aexit__") if is_async else ("__enter__", "__exit__")
    saved_ctx = None
    exits, held = [], []
    swallows = False   # whether a context may swallow what the body raises
    for expr, tgt in items:
        val = ip.eval(expr, frame)
        # a file open() gave never swallows; pytest.raises, suppress and others may
        swallows = swallows or not val.atoms or not all(isinstance(a, tuple) and a[0] == "handle" for a in val.atoms)
        bound = val
        for a in val.refs():
            if a[0] == "patcher":
                if saved_ctx is None:
                    saved_ctx = ip.ctx.copy()
                bound = ip._activate(a)
            elif a[0] == "fixture" and a[1] == "monkeypatch":
                if saved_ctx is None:
                    saved_ctx = ip.ctx.copy()
            elif a[0] == "ctxfactory":
                if saved_ctx is None:
                    saved_ctx = ip.ctx.copy()
                inner = ip.cm_ctx[a[2]] if len(a) > 2 and a[2] < len(ip.cm_ctx) else None
                if inner is not None:
                    ip.ctx = inner.copy()
                bound = a[1]
                if len(a) > 3 and not ip.import_time:
                    # what the generator wrote to shared state before its yield holds in the
                    # block; what its finally put back is put back after it
                    held.append(ip.cells_now(a[3]))
                    for kind, owner, name, v in a[3]:
                        ip.write_state(kind, owner, name, v)
            elif a[0] == "inst":
                enter = ip.call_method_of(a, enter_name, [], {}, frame)
                if enter is not None:
                    bound = enter if enter.atoms else val
                exits.append(a)
        if tgt is not None:
            ip.assign(tgt, bound, frame)
    outer_expecting, outer_many, outer_captured = ip.expecting, ip.expecting_many, ip.captured
    expects, many = expected_classes(ip, items, frame)
    if expects:
        ip.expecting = outer_expecting | expects
    if many:
        ip.expecting_many = outer_many | many
    if any(dotted_name(e) in _CAPTURE_OFF for e, _t in items):
        ip.captured = False   # `with capsys.disabled():` gives the test the real streams
    start = len(ip.events)
    ip.guarded += 1   # the context may swallow what the block raises: it may stop short
    try:
        ended = ip.exec_block(body, frame)
    finally:
        ip.guarded -= 1
        ip.expecting, ip.expecting_many, ip.captured = outer_expecting, outer_many, outer_captured
        if many:
            end_at_the_raise(ip, start)
    if expects and ip.expect_hit:
        ip.expect_hit = False   # raised what the block expects: the test goes on after it
        ended = True
    if ended and ip.raising and swallows:
        ended = False   # the context may swallow what the body raises (pytest.raises, suppress)
    cut = ip.way_cut   # the body's undecided returns hold for what follows the with
    for a in exits:
        ip.call_method_of(a, exit_name, [UNKNOWN_V, UNKNOWN_V, UNKNOWN_V], {}, frame)
    for writes in reversed(held):
        for kind, owner, name, v in writes:
            ip.write_state(kind, owner, name, v)
    if saved_ctx is not None:
        # patches end with the block; doubles' side effects and files removed or made stay
        saved_ctx.keep_lasting(ip.ctx)
        ip.ctx = saved_ctx
    ip.way_cut = cut   # __exit__ calls do not change that
    return ended
