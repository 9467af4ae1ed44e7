"""HT401-HT403: the production-database guard (contract section 5, ``[tool.hermetic.guard]``).

Facts in: each test's set-up order (the conftests' and its module's top-level imports and
calls, its fixtures' marks) and the connection sinks it reaches. Out: HT401 (a test reaches
the application database and never calls the guard function), HT402 (a side effect comes
before the guard), HT403 (a connection target names a configured production database).
"""
from __future__ import annotations

from pathlib import PurePosixPath
from typing import Dict, List, Set
from urllib.parse import urlsplit

from ..analyse import interp as I
from ..analyse.runs import guard_order
from ..analyse.values import UNCONTROLLED, Origin
from ..report.model import Finding
from ..summarise.ir import CALL_FUNC, DEF_NAME, DEF_QUALNAME, FROM_LINE, FROM_MODULE, FROM_NAMES, IMPORT_LINE, \
    IMPORT_NAMES, TAG
from ..summarise.unparse import calls_in
from .facts import Facts
from .registry import severity


def ht4_findings(facts: Facts) -> List[Finding]:
    """HT401 (reaches the application database, never calls the guard), HT402 (a side
    effect comes before the guard in set-up order), HT403 (a production name is a
    connection target). Contract section 5."""
    runs, ip, runner, config = facts.runs, facts.ip, facts.runner, facts.config
    files_by_module, import_events = facts.files_by_module, facts.import_events
    guard = config.guard
    out: List[Finding] = []
    closure = ip.p.import_closure or {}
    boot_mods = ip.p.bootstrap_modules
    risky_mods = {e.module for e in import_events if e.category == "connection" and e.verdict == UNCONTROLLED}
    module_marks: Dict[str, List[tuple]] = {}

    def static_marks(mod: str) -> List[tuple]:
        if mod in module_marks:
            return module_marks[mod]
        s = ip.p.summaries[mod]
        marks: List[tuple] = []
        frame = I.Frame(module=mod, path=s["path"], name="<module>")
        frame.locals = {}   # names fall through to the module globals (and patches) in lookup
        for st in s["body"]:
            line = st[-1] if isinstance(st[-1], int) else 0
            if st[TAG] in ("import", "from"):
                names = [full for _l, full, _a in st[IMPORT_NAMES]] if st[TAG] == "import" else \
                    [st[FROM_MODULE]] + [f"{st[FROM_MODULE]}.{a}" for _l, a in st[FROM_NAMES]]
                names = [ip.p.canonical.get(n, n) for n in names]
                if any(n in boot_mods or (closure.get(n, set()) & (boot_mods | risky_mods)) for n in names):
                    marks.append(("side", (s["path"], st[FROM_LINE] if st[TAG] == "from" else st[IMPORT_LINE])))
            elif st[TAG] == "def" and st[DEF_NAME] in ("pytest_configure", "pytest_sessionstart"):
                f = ip.p.functions.get(st[DEF_QUALNAME], (None,))[0]
                if f is not None and _calls_guard(ip, f["body"], mod, guard.function):
                    marks.insert(0, ("guard", (s["path"], f["line"]), "hook"))
            elif st[TAG] in ("expr", "assign"):
                for call in calls_in(st):
                    v = ip.eval_static(call[CALL_FUNC], mod)
                    for a in v.refs():
                        if a[0] == "func" and I.dotted_qualname(a[1]) == guard.function:
                            marks.append(("guard", (s["path"], line)))
                        elif a[0] == "func" and I.dotted_qualname(a[1]) in ip.p.bootstrap:
                            marks.append(("side", (s["path"], line)))
        module_marks[mod] = marks
        return marks

    for run in runs:
        it = run.item
        if it.node_id in guard.exempt:
            continue
        chain = runner.conftest_chain(files_by_module[it.module].rel)
        hooks = []
        seq: List[tuple] = []
        for m in chain + [it.module]:
            for mk in static_marks(m):
                (hooks if len(mk) > 2 else seq).append(mk)
        seq = hooks + seq + list(run.marks)
        side, first_guard = guard_order(seq)
        if side is None:
            continue
        if first_guard is None:
            out.append(Finding("HT401", severity("HT401"), it.path, it.def_line, 1, it.def_line, 1,
                               f"{it.display} reaches the application database but never calls the guard "
                               f"{guard.function}()", [it.node_id], [], None,
                               fix=f"call {guard.function}() first (in the test, a fixture it uses, or conftest), "
                                   f"or list the test under [tool.hermetic.guard] exempt",
                               function=it.display, anchor="HT401"))
        elif side < first_guard:
            path, line = seq[side][1]
            out.append(Finding("HT402", severity("HT402"), path, line, 1, line, 1,
                               f"this side effect (opening or importing the application database) comes before the "
                               f"guard {guard.function}() in {it.display}'s set-up order", [it.node_id], [], None,
                               fix=f"call {guard.function}() before it: in a session hook (pytest_configure) or at "
                                   f"conftest module level, or move the import into the test after the guard",
                               function=it.display, anchor=f"HT402 {it.node_id}"))
    # HT403: a production name is a connection target
    names = {n.strip().lower() for n in guard.production}
    if names:
        hits: Dict[tuple, dict] = {}
        for run in runs:
            for ev in run.events:
                if ev.category != "connection":
                    continue
                for o in ev.targets:
                    anchor, text = _production_anchor(o)
                    if text is not None and _names_production(text, names):
                        h = hits.setdefault(anchor, {"text": text, "tests": set(), "ev": ev})
                        h["tests"].add(run.item.node_id)
        for (path, line), h in sorted(hits.items()):
            out.append(Finding("HT403", severity("HT403"), path, line, 1, line, 1,
                               f"the connection target {h['text'].strip()!r} names a configured production database; "
                               f"a test reaches a connection to it", sorted(h["tests"]), [], None,
                               fix="point the default at a scratch database and have tests pass theirs; keep "
                                   "production names out of code the tests reach", anchor=h["text"]))
    return out


def _production_anchor(o: Origin):
    """(where the name is written, the literal text) for a connection target's origin."""
    if o.kind == "module-constant":
        for i in o.inner:
            if i.kind == "literal" and i.value is not None:
                return (o.path, o.line), i.value
            if i.kind == "module-constant":
                _a, text = _production_anchor(i)
                if text is not None:
                    return (o.path, o.line), text
        return (o.path, o.line), None
    if o.kind in ("literal", "default-argument"):
        lit_o = o if o.kind == "literal" else next((i for i in o.inner if i.kind == "literal"), None)
        if lit_o is not None and lit_o.value is not None:
            return (o.path, o.line), lit_o.value
    return (o.path, o.line), None


def _names_production(text: str, names: Set[str]) -> bool:
    """Section 5 matching: the whole target, the database part of a DSN/URL, or the file stem."""
    t = text.strip().lower()
    cands = {t}
    if "://" in t:
        try:
            part = urlsplit(t).path.strip("/")
        except ValueError:
            part = ""
        cands.add(part.strip())
    for piece in t.split():
        if piece.startswith("dbname="):
            cands.add(piece[len("dbname="):].strip("'\""))
    stem = PurePosixPath(t.split("?")[0]).name
    if "." in stem:
        stem = stem.rsplit(".", 1)[0]
    cands.add(stem.strip())
    return bool(cands & names)


def _calls_guard(ip: I.Interp, body, mod: str, guard: str) -> bool:
    for call in calls_in(body):
        v = ip.eval_static(call[CALL_FUNC], mod)
        if any(a[0] == "func" and I.dotted_qualname(a[1]) == guard for a in v.refs()):
            return True
    return False
