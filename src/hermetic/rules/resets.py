"""What code that runs around every test puts back: the state a ``TestCase`` base's per-test
entry points bind anew, and the state the exit of a context decorator on a test binds anew
(through the functions it calls and the receivers of the signals it sends).

Facts in: the project's summaries, through the interpreter's static lookups. Out: module state
keys (``pollution.rebinds``) with the tests they are reset for. ``state_leaks`` counts them as
restores for those tests.
"""
from __future__ import annotations

import functools
from typing import Callable, Dict, List, Set

from ..analyse import interp as I
from ..analyse import pollution as P
from ..analyse.runner import TestItem
from ..summarise.ir import (ATTR_ATTR, ATTR_VALUE, CALL_ARGS, CALL_FUNC, NAME_ID, SEQ_ITEMS, TAG,
                            dotted_name)
from ..summarise.unparse import calls_in


# unittest's per-test entry points: a TestCase base that overrides one runs its own set-up
# before every test of its subclasses (Django's SimpleTestCase.__call__ -> _pre_setup)
_ENTRY_POINTS = ("__call__", "run", "debug")



def entry_resets(ip: I.Interp, items: List[TestItem]) -> Dict[tuple, Set[str]]:
    """Module state key -> the tests whose ``TestCase`` base overrides a per-test entry point
    (``_ENTRY_POINTS``) with code that binds it anew before every test: Django's
    ``SimpleTestCase.__call__`` runs ``_pre_setup``, which sets ``mail.outbox = []``, so what one
    test leaves in the outbox no later test of that kind sees. Follows ``self.m()`` calls,
    resolved on the base, a few levels deep."""
    by_cls: Dict[str, List[str]] = {}
    for it in items:
        if it.cls and it.cls in ip.p.classes:
            by_cls.setdefault(it.cls, []).append(it.node_id)
    per_base: Dict[str, Set[tuple]] = {}
    out: Dict[tuple, Set[str]] = {}
    for cls, tests in by_cls.items():
        if not ip.is_testcase(cls):
            continue
        for base in ip.mro(cls):
            keys = per_base.get(base)
            if keys is None:
                keys = per_base[base] = _base_resets(ip, base)
            for k in keys:
                out.setdefault(k, set()).update(tests)
    return out


def _base_resets(ip: I.Interp, base: str) -> Set[tuple]:
    """What ``base``'s own per-test entry points, and the ``self`` methods they call, rebind."""
    cd, _mod = ip.p.classes[base]
    starts = [cd["methods"][n] for n in _ENTRY_POINTS if n in cd["methods"]]
    return _rebound_by(ip, reached(ip, starts, lambda f, _m: _self_calls(ip, base, f), 3, 50))


def _self_calls(ip: I.Interp, cls: str, f: dict) -> List[str]:
    """The methods ``self.m()`` calls in ``f`` reach, resolved on ``cls``."""
    out = []
    for call in calls_in(f["body"]):
        fn = call[CALL_FUNC]
        if fn[TAG] == "attr" and fn[ATTR_VALUE][TAG] == "name" and fn[ATTR_VALUE][NAME_ID] == "self":
            found = ip.find_method(cls, fn[ATTR_ATTR])
            if found is not None:
                out.append(found[1])
    return out


def _rebound_by(ip: I.Interp, functions) -> Set[tuple]:
    """The module globals the ``functions`` (qualnames) bind anew (``pollution.rebinds``)."""
    keys: Set[tuple] = set()
    for qn in functions:
        f, fmod = ip.p.functions[qn]
        keys |= P.rebinds(ip, f, fmod)
    return keys


def reached(ip: I.Interp, starts: List[str], callees, max_depth: int, limit: int):
    """The project functions ``starts`` and what they call (``callees(f, module)``: the
    qualnames a body calls), ``max_depth`` calls deep, at most ``limit`` of them; each once."""
    todo = [(qn, 0) for qn in starts]
    seen: Set[str] = set()
    while todo and len(seen) < limit:
        qn, depth = todo.pop()
        if qn in seen or qn not in ip.p.functions:
            continue
        seen.add(qn)
        yield qn
        if depth < max_depth:
            f, mod = ip.p.functions[qn]
            todo.extend((c, depth + 1) for c in callees(f, mod))



def called_or_passed(ip: I.Interp, f: dict, mod: str) -> List[str]:
    """The project functions ``f`` calls or passes on as an argument."""
    out: List[str] = []
    for call in calls_in(f["body"]):
        for node in [call[CALL_FUNC]] + [a for a in call[CALL_ARGS] if a[TAG] in ("name", "attr")]:
            if node[TAG] not in ("name", "attr"):
                continue
            try:
                v = ip.eval_static(node, mod)
            except RecursionError:
                continue
            funcs = [a[1] for a in v.refs() if a[0] == "func"]
            if not funcs and node[TAG] == "attr" and node[ATTR_VALUE][TAG] == "name":
                # `fixtures.after_test()` where `fixtures` is bound late (global + import in a
                # set-up function): the project module of that name
                base = node[ATTR_VALUE][NAME_ID]
                for m, sm in ip.p.summaries.items():
                    if sm["module"] == m and (m == base or m.endswith("." + base)):
                        try:
                            attr = ip.module_attr_static(m, node[ATTR_ATTR])
                            funcs += [a[1] for a in attr.refs() if a[0] == "func"]
                        except RecursionError:
                            pass
            out.extend(funcs)
    return out




# a signal's ``send`` calls the functions connected to it (Django's ``@receiver(sig)``)
_SENDS = ("send", "send_robust")


def decorator_resets(ip: I.Interp, items: List[TestItem]) -> Dict[tuple, Set[str]]:
    """Module state key -> the tests decorated with a project context decorator whose exit binds
    it anew: Django's ``@override_settings(LOCALE_PATHS=...)`` sends ``setting_changed`` when
    the test ends, and its receiver sets ``trans_real._active = Local()``, so what the test put
    there no later test sees. Follows ``__exit__``, the methods and functions it calls and the
    receivers of the signals it sends (by the signal's name), a few levels deep; the receivers'
    own conditions (which setting changed) are not decided, so any such decorator counts."""
    receivers = functools.lru_cache(maxsize=1)(lambda: _receivers(ip))   # read once, when a decorator needs it
    per_cls: Dict[str, Set[tuple]] = {}
    out: Dict[tuple, Set[str]] = {}
    for it in items:
        entry = ip.p.functions.get(it.qualname)
        if entry is None:
            continue
        f, mod = entry
        for deco, _line in f["decorators"]:
            if deco[TAG] != "call":
                continue
            for cls in _classes_of(ip, deco[CALL_FUNC], mod):
                keys = per_cls.get(cls)
                if keys is None:
                    keys = per_cls[cls] = _exit_resets(ip, cls, receivers)
                for k in keys:
                    out.setdefault(k, set()).add(it.node_id)
    return out


def _classes_of(ip: I.Interp, node, mod: str) -> List[str]:
    if node[TAG] not in ("name", "attr"):
        return []
    try:
        v = ip.eval_static(node, mod)
    except RecursionError:
        return []
    return [a[1] for a in v.refs() if a[0] == "cls" and a[1] in ip.p.classes]


def _exit_resets(ip: I.Interp, cls: str, receivers: Callable[[], Dict[str, List[str]]]) -> Set[tuple]:
    start = ip.find_method(cls, "__exit__")
    if start is None:
        return set()

    def callees(f: dict, mod: str) -> List[str]:
        out = called_or_passed(ip, f, mod) + _self_calls(ip, cls, f)   # self.disable() on the decorator's class
        for call in calls_in(f["body"]):
            fn = call[CALL_FUNC]
            if fn[TAG] == "attr" and fn[ATTR_ATTR] in _SENDS and fn[ATTR_VALUE][TAG] in ("name", "attr"):
                out.extend(receivers().get(dotted_name(fn[ATTR_VALUE]).rpartition(".")[2], ()))
        return out

    return _rebound_by(ip, reached(ip, [start[1]], callees, 4, 200))


def _receivers(ip: I.Interp) -> Dict[str, List[str]]:
    """Signal name -> the project functions ``@receiver(signal)`` (or ``@receiver([a, b])``)
    connects to it."""
    out: Dict[str, List[str]] = {}
    for qn, (f, _mod) in sorted(ip.p.functions.items()):
        for deco, _line in f["decorators"]:
            if deco[TAG] != "call" or dotted_name(deco).rpartition(".")[2] != "receiver" or not deco[CALL_ARGS]:
                continue
            first = deco[CALL_ARGS][0]
            for sig in first[SEQ_ITEMS] if first[TAG] == "seq" else [first]:
                if sig[TAG] in ("name", "attr"):
                    out.setdefault(dotted_name(sig).rpartition(".")[2], []).append(qn)
    return out
