"""Narrowing a variable on the ways of an undecided ``is None`` or ``in`` test.

``shared = commonpath(a, b)`` may be a path or None, so ``if shared is not None:`` is undecided
as a whole; on the way it holds, ``shared`` is not None, and on the other it is (contract
section 1: the way is taken with the values the test has). A local variable compared with
``None`` by ``is`` / ``is not`` (or its ``not``) is narrowed per alternative: each alternative
``literals.is_none`` decides goes to its way, one it cannot decide to both.

``key in d`` (or ``not in``), ``d`` a local dict known whole (``contents.WHOLE``: parsed from
a literal or a shipped file), holds on its way only for one of ``d``'s keys: ``key`` is bound
there to those keys (``if key not in context: continue`` then ``context[key] = value`` keeps
the keys the dict had).
"""
from __future__ import annotations

from typing import Dict, List, Optional

from ..summarise.ir import LIT_VALUE, dotted_name
from .contents import is_whole
from .literals import is_none
from .values import V, lit, union

_MAX_ALTERNATIVES = 16


def narrowings(cond, frame) -> Optional[List[Dict[str, V]]]:
    """``[bindings on the true way, bindings on the false way]`` for condition ``cond`` (a
    summary expression) in ``frame``, or None when nothing narrows. ``not`` swaps the ways."""
    if cond[0] == "unary" and cond[1] == "Not":
        inner = narrowings(cond[2], frame)
        return None if inner is None else [inner[1], inner[0]]
    if cond[0] == "cmp" and len(cond[1]) == 1 and cond[1][0] in ("In", "NotIn"):
        return _membership(cond, frame)
    if cond[0] != "cmp" or len(cond[1]) != 1 or cond[1][0] not in ("Is", "IsNot"):
        return None
    left, right = cond[2]
    if right[0] == "name" and _none(left):
        left, right = right, left
    if left[0] != "name" or not _none(right) or left[1] not in frame.locals:
        return None
    whole = frame.locals[left[1]]
    if not 2 <= len(whole.atoms) <= _MAX_ALTERNATIVES:
        return None
    nones, others = [], []
    for a in whole.ordered():
        r = is_none(V(frozenset((a,))))
        if r is not False:
            nones.append(a)
        if r is not True:
            others.append(a)
    if not nones or not others or (len(nones) == len(others) == len(whole.atoms)):
        return None
    ways = [{left[1]: V(frozenset(nones), whole.is_path)}, {left[1]: V(frozenset(others), whole.is_path)}]
    return ways if cond[1][0] == "Is" else ways[::-1]


def _membership(cond, frame) -> Optional[List[Dict[str, V]]]:
    left, right = cond[2]
    if left[0] != "name" or right[0] != "name" or left[1] not in frame.locals or right[1] not in frame.locals:
        return None
    table = frame.locals[right[1]]
    if not table.atoms or not all(is_whole(a) for a in table.atoms):
        return None
    keys = sorted({k for a in table.atoms for k, _ in a[1]})
    if not keys:
        return None
    ways = [{left[1]: union(lit(k, None, None, False) for k in keys)}, {}]
    return ways if cond[1][0] == "In" else ways[::-1]


def _none(e) -> bool:
    return e[0] == "lit" and e[LIT_VALUE] is None


def removal_guard(st) -> bool:
    """``if K in os.environ: os.environ.pop(K)`` (or ``del os.environ[K]``), with no ``else``:
    both ways leave ``K`` unset, so the membership test decides nothing the test can see and is
    no environment read (contract section 4: a read that only serves the restore is none)."""
    cond, body, orelse = st[1], st[2], st[3]
    if orelse or not body or cond[0] != "cmp" or list(cond[1]) != ["In"] or \
            dotted_name(cond[2][1]) != "os.environ":
        return False
    key = cond[2][0]
    for s in body:
        if s[0] == "expr" and s[1][0] == "call" and dotted_name(s[1][1]) == "os.environ.pop" and s[1][2] \
                and s[1][2][0] == key:
            continue
        if s[0] == "del" and s[1][0] == "sub" and dotted_name(s[1][1]) == "os.environ" and s[1][2] == key:
            continue
        return False
    return True
