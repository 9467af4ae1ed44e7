"""The exception a test expects: a test body's ``with pytest.raises(E):`` (or unittest's
``assertRaises`` / ``assertRaisesRegex`` / Django's ``assertRaisesMessage``) passes only when
``E`` comes out of the block. Where the project raises ``E`` (or a subclass of it) at exactly one
place, reaching that place ends the block's run: what the code would do after it, or on ways
that do not raise, the test never does (``Interp.expect_hit`` unwinds to the ``with``). Where it
is raised at a few places, each one reached leaves a mark among the events, and a block whose
run marked one place only ends there (``end_at_the_raise``).

Only the project's own exception classes count (a library raises its own anywhere); a raise
site is a ``raise`` whose exception is named (``raise E(...)``, ``raise mod.E``), or a
``warnings.warn(msg, W)`` (a test expecting ``W`` as an exception runs with warnings as errors),
counted over the project's non-test functions by the class's simple name (a name two classes
share counts twice, so the rule holds back), and by message where the test names one.
"""
from __future__ import annotations

from typing import Dict, FrozenSet, Optional, Tuple

from .literals import _literal_str
from .state import SinkEvent
from .values import UNKNOWN_V
from ..summarise.ir import CALL_ARGS, CALL_FUNC, CALL_KWARGS, EXPR_VALUE, RAISE_EXC, TAG, dotted_name, flat

# the calls whose context manager passes only when the block raises their first argument
_EXPECTING = ("raises", "assertRaises", "assertRaisesRegex", "assertRaisesRegexp", "assertRaisesMessage")
# the category of the mark a raise of an expected exception leaves among the events
EXPECTED_RAISE = "expected-raise"
# the most places one expected exception may be raised at for the run to find the one it reaches
MANY_SITES = 16
# the calls that issue a warning: a raise where the test expects it as an exception
WARN_CALLS = frozenset({"warnings.warn", "warn"})


def expecting(expr) -> Optional[str]:
    """The name of the call a ``with`` item makes when it expects the block to raise
    (``pytest.raises(E)``, ``self.assertRaises(E)``), else None."""
    if expr[TAG] != "call" or not expr[CALL_ARGS]:
        return None
    leaf = dotted_name(expr[CALL_FUNC]).rsplit(".", 1)[-1]
    return leaf if leaf in _EXPECTING else None


def expected_classes(ip, items, frame) -> Tuple[FrozenSet[str], FrozenSet[str]]:
    """The project exception classes the ``with`` items expect (qualified names): ``(single,
    many)``, those with one raise site in the project (among the sites whose message may be the
    one the test names, for ``assertRaisesMessage(E, msg)``) and those with a few; empty sets
    when none does."""
    if not frame.in_test:
        return frozenset(), frozenset()
    single, many = set(), set()
    for expr, _tgt in items:
        leaf = expecting(expr)
        if leaf is None:
            continue
        message = None
        if leaf == "assertRaisesMessage" and len(expr[CALL_ARGS]) > 1:
            message = _message_key(expr[CALL_ARGS][1], ip.eval(expr[CALL_ARGS][1], frame))
        # each alternative (a parametrized class is one per test) on its own; a tuple's classes
        # (pytest.raises((A, B)): either passes the block) count their places together
        for group in _class_groups(ip.eval(expr[CALL_ARGS][0], frame)):
            n = sum(site_count(ip, qn, message) for qn in group)
            if n == 1:
                single.update(group)
            elif 1 < n <= MANY_SITES:
                many.update(group)
    return frozenset(single), frozenset(many)


def _class_groups(v) -> list:
    """The expected classes of ``v`` as groups: one per class atom, one per tuple of project
    classes (a tuple holding a library's exception gives none: that one may come from anywhere)."""
    out = []
    for a in v.refs():
        if a[0] == "cls":
            out.append([a[1]])
        elif a[0] == "seq":
            items = [x for item in a[2] for x in item.atoms]
            if items and all(isinstance(x, tuple) and x[0] == "cls" for x in items):
                out.append([x[1] for x in items])
    return out


def raised_expected(ip, value, expecting: Optional[FrozenSet[str]] = None) -> bool:
    """Whether a ``raise`` of ``value`` (the class or an instance) raises what the test expects
    (``expecting``: those classes; by default ``ip.expecting``)."""
    wanted = ip.expecting if expecting is None else expecting
    for a in value.refs():
        cls: Optional[str] = a[1] if a[0] == "cls" else ip.heap.get(a[1], {}).get("cls") if a[0] == "inst" else None
        if cls and any(c in wanted for c in ip.mro(cls)):
            return True
    return False


def site_count(ip, qn: str, message: Optional[tuple] = None) -> int:
    """How many places raise ``qn`` or a project subclass of it, up to ``MANY_SITES + 1``: a
    ``raise``, or a ``warnings.warn`` of a warning class (a test expecting it as an exception
    passes only where warnings are errors). With ``message`` (``_message_key``), only the
    places whose message may be it count."""
    cache = ip.p.site_counts
    hit = cache.get((qn, message))
    if hit is None:
        total = 0
        by_name = _classes_by_name(ip.p)
        # the names the project raises, each counted when a class of that name derives from qn
        for name, messages in _raise_sites(ip.p).items():
            if any(qn in ip.mro(k) for k in by_name.get(name, ())):
                total += sum(1 for m in messages if _may_match(m, message))
                if total > MANY_SITES:
                    break
        hit = cache[(qn, message)] = total
    return hit


def _message_key(e, value=None) -> Optional[tuple]:
    """What identifies a message: ``("text", s)`` for a string literal, ``("name", n, s)`` for a
    constant by its last name (``FORMS_URLFIELD_ASSUME_HTTPS_DEPRECATED_MSG``) with its text
    ``s`` where ``value`` (the test's) gives it; None when nothing is known (an f-string)."""
    if e is None:
        return None
    if e[TAG] == "lit" and isinstance(e[1], str):
        return ("text", e[1])
    name = dotted_name(e)
    if name:
        return ("name", name.rsplit(".", 1)[-1], _literal_str(value) if value is not None else None)
    return None


def _may_match(site: Optional[tuple], wanted: Optional[tuple]) -> bool:
    """Whether a site with message ``site`` may raise what a test expecting ``wanted`` waits for
    (``assertRaisesMessage`` looks for the text inside the message)."""
    if wanted is None or site is None:
        return True
    if site[0] == "name":
        return wanted[0] != "name" or site[1] == wanted[1]   # two constants: two messages
    text = wanted[1] if wanted[0] == "text" else wanted[2]
    return text is None or text in site[1]


def _classes_by_name(program) -> Dict[str, list]:
    """Simple class name -> the project classes of that name (qualified)."""
    if program.classes_by_name is None:
        program.classes_by_name = {}
        for k in program.classes:
            program.classes_by_name.setdefault(k.rsplit(".", 1)[-1], []).append(k)
    return program.classes_by_name


def _raise_sites(program) -> Dict[str, list]:
    """Simple exception name -> the message key (``_message_key``) of each ``raise`` statement
    of the project's code that names it, and of each ``warnings.warn(msg, Name)``."""
    sites = program.raise_sites
    if sites is None:
        sites = {}
        for _qn, (f, mod) in program.functions.items():
            if program.in_test.get(mod, False):
                continue
            for st in flat(f["body"]):
                site = _site(st)
                if site is not None:
                    sites.setdefault(site[0], []).append(site[1])
        program.raise_sites = sites
    return sites


def _site(st) -> Optional[tuple]:
    """``(exception name, message key)`` of a statement that raises a named exception."""
    if st[TAG] == "raise" and st[RAISE_EXC] is not None:
        exc = st[RAISE_EXC]
        call = exc if exc[TAG] == "call" else None
        name = dotted_name(call[CALL_FUNC] if call else exc).rsplit(".", 1)[-1]
        return (name, _message_key(call[CALL_ARGS][0]) if call and call[CALL_ARGS] else None) if name else None
    if st[TAG] == "expr" and st[EXPR_VALUE][TAG] == "call":
        call = st[EXPR_VALUE]
        if dotted_name(call[CALL_FUNC]) not in WARN_CALLS or not call[CALL_ARGS]:
            return None
        category = call[CALL_ARGS][1] if len(call[CALL_ARGS]) > 1 else dict(call[CALL_KWARGS]).get("category")
        if category is None:
            return None
        name = dotted_name(category).rsplit(".", 1)[-1]
        return (name, _message_key(call[CALL_ARGS][0])) if name else None
    return None


def note_raise(ip, value, frame) -> bool:
    """A raise of ``value`` (a ``raise``, or a warning issued as one): when the test expects it,
    at one place the block's run ends here (``expect_hit``), at a few it is marked
    (``mark_expected_raise``); whether it was expected."""
    if ip.expecting and raised_expected(ip, value):
        ip.expect_hit = True
        return True
    if ip.expecting_many and raised_expected(ip, value, ip.expecting_many):
        mark_expected_raise(ip, frame)
        return True
    return False


def mark_expected_raise(ip, frame) -> None:
    """A raise of an exception the test expects, raised at a few places (``ip.expecting_many``):
    marked among the events, for ``end_at_the_raise``."""
    ip.events.append(SinkEvent(EXPECTED_RAISE, frame.path, (frame.line, 0, frame.line, 0), "", "", None,
                               tuple((fr.path, fr.line, fr.name) for fr in ip.stack)))


def end_at_the_raise(ip, start: int) -> None:
    """After a ``with pytest.raises(E)`` block whose ``E`` is raised at a few places: when the
    block's run (its events from ``start``) reached one of them only, a passing test raised it
    there, so what the run reached after it never happens (its events are dropped); the marks
    go either way."""
    events = ip.events
    marks = [i for i in range(start, len(events)) if events[i].category == EXPECTED_RAISE]
    if not marks:
        return
    first = events[marks[0]]
    if all((events[i].path, events[i].pos) == (first.path, first.pos) for i in marks):
        del events[marks[0]:]
    else:
        events[start:] = [ev for ev in events[start:] if ev.category != EXPECTED_RAISE]


# the callable forms: ``pytest.raises(E, f, *args, **kwargs)`` calls ``f(*args, **kwargs)``; the
# index of ``f`` among the arguments, by the call's last name
_CALLABLE_AT = {"raises": 1, "warns": 1, "deprecated_call": 0, "assertRaises": 1, "assertWarns": 1,
                "assertRaisesRegex": 2, "assertRaisesRegexp": 2, "assertWarnsRegex": 2, "assertRaisesMessage": 2}
_CALLABLE_KINDS = ("func", "cls", "lambda", "partial", "meth", "inst")


def callable_form(ip, fexpr, callee, args, kwargs, frame, pos):
    """``pytest.raises(E, f, *args, **kwargs)`` (also ``warns``, ``deprecated_call``) and
    unittest's ``self.assertRaises(E, f, *args, **kwargs)`` (``assertRaisesRegex(E, regex, f, ...)``,
    ``assertWarns``, Django's ``assertRaisesMessage``) in a test: the call of ``f`` they make, as a
    ``with`` block of the same would (what ``f`` raises goes no further); None where the call is
    not one of them (a project's own method of that name, the context-manager form). The caller
    asks only in test code."""
    at = _CALLABLE_AT.get(fexpr[2]) if fexpr[TAG] == "attr" else None
    if at is None or len(args) <= at or any(a[0] == "func" for a in callee.refs()):
        return None
    if fexpr[2] in ("raises", "warns", "deprecated_call") and not dotted_name(fexpr).startswith("pytest."):
        return None
    target = args[at]
    if not any(isinstance(a, tuple) and a[0] in _CALLABLE_KINDS for a in target.atoms):
        return None
    raised = ip.call_raised
    ip.apply(target, list(args[at + 1:]), dict(kwargs), frame, pos)
    ip.call_raised, ip.expect_hit = raised, False
    return UNKNOWN_V
