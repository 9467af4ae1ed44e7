"""The HT201 sweep: every project function of the modules that bind a path constant computed
at import (or import one that does), run once with unknown arguments and nothing patched, so
the file operations each such constant flows into are seen whatever the tests redirect.

``sweep_modules`` picks the modules, ``sweep_roots_in`` the functions, ``sweep_each`` runs
them; ``Runner`` (``hermetic.analyse.runner``) strings them together for a suite.
"""
from __future__ import annotations

from typing import Callable, Dict, List, Set

from . import interp as I
from .origins import computed_constant
from .runs import SweepRun, start_run


def sweep_modules(ip: I.Interp, imports_of: Callable[[str], Dict[str, str]]) -> Set[str]:
    """Modules that bind a path-like constant computed at import (an HT201 candidate),
    and the modules that import them: the only places the sweep needs to look. ``imports_of``:
    a module's import statements, local name -> dotted name (``Runner.imports_of``)."""
    holders = set()
    for mod, g in ip.globals.items():
        for v in g.values():
            if any(o.module == mod and computed_constant(o) for o in _held_origins(v)):
                holders.add(mod)
                break
    if not holders:
        return set()
    out = set(holders)
    for mod, s in ip.p.summaries.items():
        if s["module"] != mod:
            continue
        targets = set(imports_of(mod).values())
        if any(t in holders or t.rsplit(".", 1)[0] in holders for t in targets):
            out.add(mod)
    return out


def _held_origins(v: I.V, depth: int = 0) -> List[I.Origin]:
    """The origins of ``v`` and of what the lists and dicts it holds hold (a settings dict's
    folder entries), two levels down."""
    out = list(v.origins())
    if depth < 2:
        for a in v.refs():
            if a[0] == "seq":
                for item in a[2]:
                    out.extend(_held_origins(item, depth + 1))
            elif a[0] == "dict":
                for _k, item in a[1]:
                    out.extend(_held_origins(item, depth + 1))
    return out


def sweep_roots_in(program: I.Program, modules: Set[str]) -> List[str]:
    """The HT201 sweep's roots among ``modules``: their project (not test-tree) functions, but
    those defined inside functions, by qualified name."""
    functions, in_test = program.functions, program.in_test
    return [qn for qn in sorted(functions)
            if ".<locals>." not in qn and functions[qn][1] in modules and not in_test.get(functions[qn][1], False)]


def sweep_each(ip: I.Interp, roots: List[str], keep_memo: bool = False) -> List[SweepRun]:
    """Run each of ``roots`` (qualnames) once, with unknown arguments and nothing patched: the
    file operations each module constant flows into, whatever the tests redirect (HT201), one
    ``SweepRun`` per root with what its result depends on. The memo is emptied before and
    after unless ``keep_memo``."""
    out: List[SweepRun] = []
    if not keep_memo:
        ip.clear_memo()   # keys hold the sweep flag: no test's entry can be reused (memory)
    ip.ctx = I.Ctx()
    ip.import_time = False
    ip.sweep = True
    for qn in roots:
        f, mod = ip.p.functions[qn]
        start_run(ip)
        ip.ctx = I.Ctx()
        ip.stack = []
        self_atom = None
        cls = f.get("class")
        if cls:
            self_atom = ("inst", ip.new_instance(cls))
        frame = I.Frame(module=mod, path=ip.p.summaries[mod]["path"], name="<sweep>")
        try:
            ip.call_function(qn, [], {}, frame, self_atom=self_atom)
        except RecursionError:
            pass
        # only file operations matter here (HT201): the rest is dropped root by root
        out.append(SweepRun(qn, [e for e in ip.events if not e.import_time and e.category == "file"],
                            ip.files, dict(ip.run_unresolved), sorted(ip.touched)))
    start_run(ip)   # the last root's state goes too
    if not keep_memo:
        ip.clear_memo()
    ip.sweep = False
    return out
