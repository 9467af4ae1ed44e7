"""Which ``except`` handlers of a ``try`` can run: a body that only calls test doubles given no
side effect raises nothing (``Interp.try_watch`` records, per call of such a body, whether its
callee is such a double: ``controls.quiet_double``); any other body leaves every handler open."""
from __future__ import annotations

from ..summarise.ir import EXPR_ASSERT


def calls_only(body) -> bool:
    """A ``try`` body made of calls (of a name or an attribute chain, with names and literals as
    arguments), each a statement, bound to names or returned: what it can raise is what the
    calls raise (``Interp.try_watch`` then records whether each callee is a quiet double)."""
    if not body or len(body) > 4:
        return False
    for st in body:
        k = st[0]
        if k == "assign" and all(t[0] == "name" for t in st[1]):
            e = st[2]
        elif k == "expr" and not (len(st) > 3 and st[EXPR_ASSERT]):
            e = st[1]
        elif k == "return" and st[1] is not None:
            e = st[1]
        else:
            return False
        if e[0] != "call" or not _plain_callee(e[1]):
            return False
        if any(a[0] not in ("lit", "name") for a in e[2]):
            return False
        if any(kw[0] == "**" or kw[1][0] not in ("lit", "name") for kw in e[3]):
            return False
    return True


def _plain_callee(f) -> bool:
    while f[0] == "attr":
        f = f[1]
    return f[0] == "name"
