"""The exception a test expects: a test body's ``with pytest.raises(E):`` (or unittest's
``assertRaises`` / ``assertRaisesRegex`` / Django's ``assertRaisesMessage``) passes only when
``E`` comes out of the block. Where the project raises ``E`` (or a subclass of it) at exactly one
place, reaching that place ends the block's run: what the code would do after it, or on ways
that do not raise, the test never does (``Interp.expect_hit`` unwinds to the ``with``).

Only the project's own exception classes count (a library raises its own anywhere); a raise
site is a ``raise`` whose exception is named (``raise E(...)``, ``raise mod.E``), counted over
the project's non-test functions by the class's simple name (a name two classes share counts
twice, so the rule holds back).
"""
from __future__ import annotations

from typing import Dict, FrozenSet, Optional

from ..summarise.ir import CALL_ARGS, CALL_FUNC, RAISE_EXC, TAG, dotted_name, flat

# the calls whose context manager passes only when the block raises their first argument
_EXPECTING = ("raises", "assertRaises", "assertRaisesRegex", "assertRaisesRegexp", "assertRaisesMessage")


def expected_classes(ip, items, frame) -> FrozenSet[str]:
    """The project exception classes the ``with`` items expect (qualified names), each with a
    single raise site in the project; empty when none does."""
    if not frame.in_test:
        return frozenset()
    out = set()
    for expr, _tgt in items:
        if expr[TAG] != "call" or not expr[CALL_ARGS] or \
                dotted_name(expr[CALL_FUNC]).rsplit(".", 1)[-1] not in _EXPECTING:
            continue
        for a in ip.eval(expr[CALL_ARGS][0], frame).refs():
            if a[0] == "cls" and single_site(ip, a[1]):
                out.add(a[1])
    return frozenset(out)


def raised_expected(ip, value) -> bool:
    """Whether a ``raise`` of ``value`` (the class or an instance) raises what the test expects."""
    for a in value.refs():
        cls: Optional[str] = a[1] if a[0] == "cls" else ip.heap.get(a[1], {}).get("cls") if a[0] == "inst" else None
        if cls and any(c in ip.expecting for c in ip.mro(cls)):
            return True
    return False


def single_site(ip, qn: str) -> bool:
    """``qn`` and its project subclasses are raised at one place in the project, in all."""
    cache = ip.p.single_site
    hit = cache.get(qn)
    if hit is None:
        total = 0
        by_name = _classes_by_name(ip.p)
        # the names the project raises, each counted when a class of that name derives from qn
        for name, n in _raise_sites(ip.p).items():
            if any(qn in ip.mro(k) for k in by_name.get(name, ())):
                total += n
                if total > 1:
                    break
        hit = cache[qn] = total == 1
    return hit


def _classes_by_name(program) -> Dict[str, list]:
    """Simple class name -> the project classes of that name (qualified)."""
    if program.classes_by_name is None:
        program.classes_by_name = {}
        for k in program.classes:
            program.classes_by_name.setdefault(k.rsplit(".", 1)[-1], []).append(k)
    return program.classes_by_name


def _raise_sites(program) -> Dict[str, int]:
    """Simple exception name -> how many ``raise`` statements of the project's code name it."""
    sites = program.raise_sites
    if sites is None:
        sites = {}
        for _qn, (f, mod) in program.functions.items():
            if program.in_test.get(mod, False):
                continue
            for st in flat(f["body"]):
                if st[TAG] == "raise" and st[RAISE_EXC] is not None:
                    name = dotted_name(st[RAISE_EXC]).rsplit(".", 1)[-1]
                    if name:
                        sites[name] = sites.get(name, 0) + 1
        program.raise_sites = sites
    return sites
