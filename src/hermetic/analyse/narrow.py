"""Narrowing a variable on the ways of an undecided comparison.

``if os.sep not in orig:`` where ``orig`` may be ``"git"`` or ``"/usr/bin/git"`` is undecided
as a whole, but each alternative decides it: on the way the comparison holds, ``orig`` is only
the alternatives for which it may hold, and on the other way the rest (contract section 1:
the way is taken with the values the test has). Only a single comparison of a local variable
with operands that call nothing is narrowed, so deciding it again per alternative runs no code.
"""
from __future__ import annotations

from typing import Dict, List, Optional

from .values import V

_MAX_ALTERNATIVES = 16
_PURE = ("name", "lit", "attr")


def narrowings(ip, cond, frame) -> Optional[List[Dict[str, V]]]:
    """``[bindings on the true way, bindings on the false way]`` for condition ``cond`` (a
    summary expression) in ``frame``, or None when nothing narrows. ``not`` swaps the ways."""
    if cond[0] == "unary" and cond[1] == "Not":
        inner = narrowings(ip, cond[2], frame)
        return None if inner is None else [inner[1], inner[0]]
    if cond[0] != "cmp" or len(cond[1]) != 1 or not all(_pure(x) for x in cond[2]):
        return None
    for side in cond[2]:
        if side[0] != "name" or side[1] not in frame.locals:
            continue
        name, whole = side[1], frame.locals[side[1]]
        if not 2 <= len(whole.atoms) <= _MAX_ALTERNATIVES:
            continue
        holds, fails = [], []
        try:
            for a in whole.ordered():
                frame.locals[name] = V(frozenset((a,)), whole.is_path)
                r = ip.decide_cmp(cond, frame)
                if r is not False:
                    holds.append(a)
                if r is not True:
                    fails.append(a)
        finally:
            frame.locals[name] = whole
        if holds and fails and (len(holds) < len(whole.atoms) or len(fails) < len(whole.atoms)):
            return [{name: V(frozenset(holds), whole.is_path)}, {name: V(frozenset(fails), whole.is_path)}]
    return None


def _pure(e) -> bool:
    """A name, a literal, or an attribute of one: evaluating it calls nothing."""
    while e[0] == "attr":
        e = e[1]
    return e[0] in _PURE
