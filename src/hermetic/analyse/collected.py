"""What pytest collects beyond a test module's own definitions: test functions it imports from
another test module, and the names a module-level assignment binds."""
from __future__ import annotations

from typing import List

from ..summarise.ir import NAME_ID, TAG, TUPLE_ITEMS
from .runs import TestItem


def imported_functions(runner, mod: str, rootdir_rel: str, s: dict, have) -> List[TestItem]:
    """``from tests.test_a import test_app`` (or ``*``): pytest collects the function again in
    this module, under this module's node id; its body is the defining module's."""
    out = []
    for name, v in sorted(runner.ip.globals.get(mod, {}).items()):
        if f"{rootdir_rel}::{name}" in have or not runner._match(name, runner.pytest_cfg.python_functions):
            continue
        refs = list(v.refs())
        if len(refs) != 1 or refs[0][0] != "func" or refs[0][1] not in runner.p.functions:
            continue
        qn = refs[0][1]
        f, fmod = runner.p.functions[qn]
        # a module-level function of another test module, not a method, a nested function or a fixture
        if fmod == mod or not runner.p.in_test.get(fmod, False) or qn != f"{fmod}.{f['name']}" or \
                runner.fixture_of(f, fmod) is not None:
            continue
        out.append(TestItem(f"{rootdir_rel}::{name}", mod, s["path"], qn, name, None, f["line"]))
    return out


def names_bound(targets) -> List[str]:
    """Names a module-level assignment binds (plain names, also inside tuple targets)."""
    out: List[str] = []
    for t in targets:
        if t[TAG] == "name":
            out.append(t[NAME_ID])
        elif t[TAG] == "tuple":   # the summary writes list targets as tuples too
            out.extend(names_bound(t[TUPLE_ITEMS]))
    return out
