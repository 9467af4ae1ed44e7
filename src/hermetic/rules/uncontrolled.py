"""HT1xx (and HT203 / HT204): the sink events the tests reach, as findings.

Facts in (``Facts``): each test's run (its sink events with their verdicts, origins and
traces) and the events of the modules' import. Out: HT101-HT106 for an uncontrolled sink a
test reaches (its category gives the code: connection, file, env, clock, network,
subprocess), HT203 / HT204 for an environment variable or the clock read at import, one
finding per sink and code with every test that reaches it; and the report's unknown origins
(sinks whose target the analysis cannot follow), as ``{"path", "line", "column",
"operation", "category", "tests"}``. ``import_closure`` (the project modules a module imports)
tells which tests an import-time sink reaches; ``api`` sets the guard's closure with it too.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from ..analyse import interp as I
from ..analyse.runner import Runner, TestItem
from ..analyse.values import UNCONTROLLED, UNKNOWN, Origin
from ..summarise.unparse import dotted_imports, imported_modules
from ..report.model import Finding, TraceStep
from ..report.consequence import consequence
from ..report.origin import describe_origin, origin_json
from .durations import duration_reads
from .facts import Facts
from .registry import CATEGORY_CODE, severity_of


def _binding(ev: I.SinkEvent) -> tuple:
    """``(path, line, variable)`` of the module-level statement an import-time read binds (the
    statement the innermost module frame ran, by its first line, else the last ``<module>`` frame
    of its trace: ``APP_LEVEL = env("APP_LEVEL")`` for a read in ``env``)."""
    top = ev.binding or next((t for t in reversed(ev.trace) if t[2] == "<module>"), (ev.path, ev.pos[0], ""))
    return (top[0], top[1], ev.target if ev.category == "env" else "")


def sink_findings(facts: Facts) -> Tuple[List[Finding], List[dict]]:
    """``(findings, unknown origins)``: HT1xx, HT203 and HT204 (module docstring)."""
    runs, import_events, ip, runner = facts.runs, facts.import_events, facts.ip, facts.runner
    config, files_by_module, items = facts.config, facts.files_by_module, facts.items
    agg: Dict[tuple, dict] = {}
    unknown: Dict[tuple, dict] = {}
    allow = set(config.integration_allow)

    def integration(item: TestItem) -> bool:
        if not allow:
            return False
        if item.markers & set(config.integration_markers):
            return True
        rel = files_by_module[item.module].rel
        return any(rel == p.rstrip("/") or rel.startswith(p.rstrip("/") + "/") for p in config.integration_paths)

    def add(ev: I.SinkEvent, test: Optional[str], code: str):
        key = (code, ev.path, ev.pos)
        entry = agg.get(key)
        if entry is None:
            entry = agg[key] = {"ev": ev, "tests": set(), "code": code, "first": None}
        _note_way(entry, ev)
        if test is not None:
            entry["tests"].add(test)
            if not ev.undecided:
                entry.setdefault("decided", set()).add(test)
            if ev.category != "clock":   # the clock has no target to differ in
                # by what the message names (described only for a sink reached with several)
                target = ev.target if ev.category == "env" else ev.origin
                entry.setdefault("what", {}).setdefault(target, (ev, set()))[1].add(test)
            # the shown origin and trace: a way through decided branches when there is one (so
            # a high finding shows the way that makes it high), then the first test's, and among
            # its events the least by a fixed order (evaluation order follows set iteration,
            # which varies by process)
            rank = (bool(ev.undecided or ev.several), test)
            if entry["first"] is None or rank < entry["rank"] or (
                    rank == entry["rank"] and _event_order(ev) < _event_order(entry["ev"])):
                entry["first"], entry["rank"] = test, rank
                entry["ev"] = ev

    for run in runs:
        tid = run.item.node_id
        itg = integration(run.item)
        for ev in run.events:
            if ev.missed:
                continue  # contract S1: the HT205 at the patch covers it
            if ev.verdict == UNCONTROLLED:
                if itg and ev.category in allow:
                    continue
                add(ev, tid, CATEGORY_CODE[ev.category])
            elif ev.verdict == UNKNOWN:
                unknown.setdefault((ev.path, ev.pos), {"ev": ev, "tests": set()})["tests"].add(tid)

    # import-time operations: the tests whose modules (and conftests) import the module
    closure_cache: Dict[str, Set[str]] = {}
    tests_by_module: Dict[str, List[TestItem]] = {}
    for it in items:
        tests_by_module.setdefault(it.module, []).append(it)

    # a module a test imports in its own body (`from pkg import native`): its top level runs then,
    # for that test too (read from the body, not from the run: which test of a process first
    # imports a module a shared fixture needs depends on the order the tests ran in)
    by_names: Dict[tuple, Set[str]] = {}
    imported_in_body = []
    for it in items:
        names = tuple(imported_modules(ip.p.functions[it.qualname][0]["body"])) if it.qualname in ip.p.functions else ()
        if names:
            closure = by_names.get(names)
            if closure is None:
                closure = by_names[names] = import_closure(runner, names, ip.p.summaries)
            imported_in_body.append((it, closure))

    def importers(mod: str, in_bodies: bool = True) -> List[TestItem]:
        out = []
        for tmod, its in tests_by_module.items():
            if tmod not in closure_cache:
                chain = runner.conftest_chain(files_by_module[tmod].rel)
                closure_cache[tmod] = import_closure(runner, [tmod] + chain, ip.p.summaries)
            if mod in closure_cache[tmod]:
                out.extend(its)
        if in_bodies:
            known = {it.node_id for it in out}
            out.extend(it for it, mods in imported_in_body if mod in mods and it.node_id not in known)
        return out

    precise: Optional[Dict[tuple, list]] = None
    for ev in import_events:
        if ev.verdict == UNKNOWN:
            unknown.setdefault((ev.path, ev.pos), {"ev": ev, "tests": set()})
            continue
        if ev.verdict != UNCONTROLLED:
            continue
        if ev.category == "env":
            code = "HT203"
        elif ev.category == "clock":
            code = "HT204"
        else:
            code = CATEGORY_CODE[ev.category]
        # a variable or clock read while a test imports the module runs under that test's own
        # monkeypatch (flask's test apps imported after an autouse delenv): HT203 / HT204 are
        # for the reads the modules' collection-time import makes
        its = importers(ev.module, in_bodies=code not in ("HT203", "HT204"))
        if not its:
            continue
        if code in ("HT203", "HT204"):
            # section 8: the tests that reach a consumer of the value (may be empty); one per
            # binding (merged below): a helper read at import for several bindings
            # (env("APP_LEVEL")) is one finding per binding
            read = (ev.path, ev.pos[0], ev.target) if code == "HT203" else (ev.path, ev.pos[0])
            binding = _binding(ev)
            key = (code, ev.path, ev.pos) + binding
            _keep_least(agg, key, ev, code)
            if precise is None:
                precise = _uses_by_binding(runs)
            if read in precise:
                # the runs know which constant's value they used (START_DT = utcnow() is not
                # EXPIRED_DT = utcnow() - ...): the binding is a statement on the read's trace
                on_trace = {(t[0], t[1]) for t in ev.trace} | ({ev.binding} if ev.binding else set())
                knowing = {id(run) for run, _bound in precise[read]}
                agg[key]["tests"] |= {run.item.node_id for run, bound in precise[read] if bound & on_trace
                                      and run.item in its}
                # a binding that is no constant (a parametrize list, a class body): the runs that
                # used the read through no constant, in its own file
                if binding[:2] not in ip.constant_bindings:
                    agg[key]["tests"] |= {run.item.node_id for run in runs if id(run) not in knowing
                                          and run.item in its and read in run.consumed
                                          and run.item.node_id.split("::", 1)[0] == binding[0]}
                continue
            # no run knows a binding of this read: every run that used it
            agg[key]["tests"] |= {run.item.node_id for run in runs if read in run.consumed and run.item in its}
            continue
        if code.startswith("HT1"):
            its = [it for it in its if not (integration(it) and ev.category in allow)]
            if not its:
                continue
        key = (code, ev.path, ev.pos)
        _keep_least(agg, key, ev, code)
        for it in its:
            agg[key]["tests"].add(it.node_id)

    findings: List[Finding] = []
    reported_pos = set()
    durations = _Durations(ip, files_by_module)
    # one finding per binding (section 4): its reads (a helper's `in` test and its read of one
    # variable; two variables a binding's condition reads) merged into the first
    merged: Dict[tuple, tuple] = {}
    for key in sorted(agg, key=lambda k: (len(k), k[1], k[2], k[-1])):
        if len(key) > 3:
            first = merged.setdefault(key[:1] + key[3:5], key)
            agg[first].setdefault("vars", set()).add(key[5])
            if first != key:
                agg[first]["tests"] |= agg.pop(key)["tests"]
    for (code, path, pos, *_binding_of), entry in agg.items():
        ev: I.SinkEvent = entry["ev"]
        if entry.get("changes") and not ev.may_write:   # the shown test reads, another writes: say so
            ev = dataclasses.replace(ev, may_write=True)
        tests, maybe, what = _listed(entry)
        f = _make_finding(code, ev, tests, runner, what, maybe, sorted(entry.get("vars", ())))
        f.confidence = "high" if entry.get("high", True) else "medium"
        if code in ("HT104", "HT204") and durations.is_duration(ev):
            f.benign = "duration"
        findings.append(f)
        reported_pos.add((path, pos))
    unknown_list = [{"path": p, "line": pos[0], "column": pos[1], "operation": e["ev"].call,
                     "category": e["ev"].category,
                     "tests": sorted(e["tests"])}
                    for (p, pos), e in sorted(unknown.items()) if (p, pos) not in reported_pos]
    return findings, unknown_list


def _uses_by_binding(runs) -> Dict[tuple, list]:
    """An import-time read -> ``(run, the constants' statements whose values it used)`` for the
    runs that know them (``Interp._consume``: ``read + (path, line)`` of the binding)."""
    out: Dict[tuple, Dict[int, tuple]] = {}
    for run in runs:
        for c in run.consumed:
            if len(c) in (4, 5):
                out.setdefault(c[:-2], {}).setdefault(id(run), (run, set()))[1].add(c[-2:])
    return {read: list(by_run.values()) for read, by_run in out.items()}


def _listed(entry: dict) -> Tuple[List[str], List[str], Optional[Dict[Any, Tuple[I.SinkEvent, Set[str]]]]]:
    """The tests a finding lists (issue 24, kind 8: the tests whose own values reach the
    operation): where some reach it through branches their values decide, those; the others,
    which reach it only on a way their values do not decide, are counted in the message and kept
    apart (``maybe``: the finding's ``maybe_tests``, which ``tests`` holds too: they reach it).
    Where none does, every test is listed (medium confidence). Also ``what`` kept to the listed."""
    tests, decided = entry["tests"], entry.get("decided")
    what = entry.get("what")
    if not decided or decided == tests:
        return sorted(tests), [], what
    if what:
        what = {k: (e, ts & decided) for k, (e, ts) in what.items() if ts & decided}
    return sorted(decided), sorted(tests - decided), what


def _keep_least(agg: Dict[tuple, dict], key: tuple, ev: I.SinkEvent, code: str) -> None:
    """An import-time event for ``key``: kept unless a test's event or a lesser one is there."""
    entry = agg.get(key)
    if entry is None:
        entry = agg[key] = {"ev": ev, "tests": set(), "code": code, "first": None}
    elif entry["first"] is None and _event_order(ev) < _event_order(entry["ev"]):
        entry["ev"] = ev
    _note_way(entry, ev)


def _note_way(entry: dict, ev: I.SinkEvent) -> None:
    """What one more way to a finding's operation adds: high when one test reaches it through
    decided branches with one target (section 4); an error when one of them writes."""
    entry["high"] = entry.get("high", False) or not (ev.undecided or ev.several)
    entry["changes"] = entry.get("changes", False) or ev.may_write


class _Durations:
    """Which clock reads are durations (``rules.durations``), the source of each file read once."""

    def __init__(self, ip: I.Interp, files_by_module) -> None:
        self.files = {s["path"]: files_by_module[m].path for m, s in ip.p.summaries.items() if m in files_by_module}
        self.found: Dict[str, Set[Tuple[int, int]]] = {}

    def is_duration(self, ev: I.SinkEvent) -> bool:
        if ev.path not in self.found:
            try:
                text = self.files[ev.path].read_text(encoding="utf-8")
            except (KeyError, OSError, UnicodeDecodeError):
                text = ""
            self.found[ev.path] = duration_reads(text)
        if ev.target == "capture":   # a clock function bound at import: the binding's statement, by line
            return any(line == ev.pos[0] for line, _col in self.found[ev.path])
        return (ev.pos[0], ev.pos[1]) in self.found[ev.path]


def _event_order(ev: I.SinkEvent) -> tuple:
    o = ev.origin
    okey = (o.kind, o.expr, o.path or "", o.line or 0, o.value or "") if o is not None else ()
    return (okey, tuple((p or "", ln or 0, fn or "") for p, ln, fn in ev.trace), ev.target)


def import_closure(runner: Runner, mods: Iterable[str], summaries: Dict[str, dict]) -> Set[str]:
    """The project modules ``mods`` import, directly or not (parent packages included)."""
    succ = runner.import_successors
    seen: Set[str] = set()
    todo = list(mods)
    while todo:
        m = todo.pop()
        if m in seen or m not in summaries:
            continue
        seen.add(m)
        nxt = succ.get(m)
        if nxt is None:
            parts = m.split(".")
            out = {".".join(parts[:i]) for i in range(1, len(parts))}
            for full in list(runner.imports_of(m).values()) + dotted_imports(summaries[m]):   # `import a.b` too
                out.add(full)
                out.add(full.rsplit(".", 1)[0])
            nxt = succ[m] = tuple(sorted(x for x in out if x in summaries))
        todo.extend(nxt)
    return seen


def _make_finding(code: str, ev: I.SinkEvent, tests: List[str], runner: Runner,
                  what: Optional[Dict[Any, Tuple[I.SinkEvent, Set[str]]]] = None, maybe: Sequence[str] = (),
                  variables: Sequence[str] = ()) -> Finding:
    """The finding for sink event ``ev`` reached by ``tests``; ``what``: the targets the tests
    reach the sink with (``_others``); ``maybe``: the tests that may reach it too, on ways their
    values do not decide (``_listed``: counted in the message, ``maybe_tests``); ``variables``: for HT203, those its binding reads
    (``if os.getenv("A") == ... and os.getenv("B") == ...``), when more than the event's."""
    line, col, end_line, end_col = ev.pos
    trace = [TraceStep(p, ln, fn) for p, ln, fn in ev.trace]
    func = ev.trace[-1][2] if ev.trace else "<module>"
    o = ev.origin
    cat = ev.category
    if code in ("HT203", "HT204"):
        names = ", ".join(variables) if len(variables) > 1 else ev.target
        bpath, bline, _var = _binding(ev)
        anchor = f"{ev.call}({names})"
        when = "at import time"
        if (bpath, bline) != (ev.path, line):   # read in a helper: name the binding it is for
            when += f" for the binding at {bpath}:{bline}"
            anchor += f"@{bpath}:{bline}"
        if code == "HT203":
            msg = f"environment variable{'s' if len(variables) > 1 else ''} {names} read {when}; a test's setenv " \
                  "cannot change it"
            fix = "read the variable at call time, or set it in session configuration (pytest-env, conftest)"
        elif ev.target == "capture":
            msg = f"{ev.call} captured at import time (a function object bound once); freezing the clock in a " \
                  "test cannot reach it"
            fix = "look the clock function up at call time (e.g. `time.monotonic()` inside the function)"
        else:
            msg = f"{ev.call}() read {when}; freezing the clock in a test cannot change it"
            fix = "read the clock at call time (a default of None, then `x = now() if x is None else x`)"
        origin = origin_json(o) if code == "HT203" else {"kind": "clock", "path": ev.path, "line": line,
                                                          "expression": f"{ev.call}()"}
        return Finding(code, severity_of(code, ev.may_write), ev.path, line, col, end_line, end_col, msg, tests,
                       trace, origin, fix=fix, function=func, anchor=anchor,
                       benign=f"env:{ev.target}" if code == "HT203" else "")
    who = func.rsplit(".", 1)[-1] if func != "<module>" else "module import"
    if ev.import_time:
        where = "at import"
        subject = f"importing {ev.module}" if ev.module else "importing the test module"
    else:
        where = ""
        subject = f"{who}()"
    if cat == "clock":
        msg = f"{subject} reads the real clock ({ev.call}()) with no frozen clock: its result depends on when " \
              f"the tests run"
    elif cat == "env":
        what_read = "the whole environment (every variable)" if ev.target == "os.environ" else \
            f"the environment variable {ev.target}, which the test sets on some of its ways only" \
            if o is not None and o.value == "some-ways" else \
            f"the environment variable {ev.target}, which the test does not set"
        msg = f"{subject} reads {what_read}: {consequence(cat, ev.write, o)}"
    elif cat == "subprocess" and o is not None and o.kind == "library-default":
        # multiprocessing / a process pool / os.fork: this interpreter again, in a child process
        msg = f"{subject} starts a child process ({ev.call}, {ev.path}:{line}) running this Python" + \
            (f" {where}" if where else "") + ": what it does escapes the test's patches and fixtures"
    else:
        verb = {"connection": f"opens a {ev.call} connection to", "file": f"{_file_verb(ev)} "
                f"({ev.call})", "network": f"sends a request ({ev.call}) to", "subprocess": f"runs ({ev.call})"}[cat]
        msg = f"{subject} {verb} {describe_origin(o, 'path' if cat == 'file' else 'target')}"
        if where:
            msg += f" {where}"
        msg += f": {consequence(cat, ev.may_write, o, ev.call)}"
    if tests:
        msg += f"; not controlled by {tests[0]}" + (f" and {len(tests) - 1} more" if len(tests) > 1 else "")
    msg += _others(ev, what)
    if maybe:
        n = len(maybe)
        msg += f"; {n} more test{'s' if n > 1 else ''} may reach it on ways {'their' if n > 1 else 'its'} " \
               f"values do not decide"
    # `tests` holds every reaching test (contract section 4), those on undecided ways too
    reaching = sorted(set(tests) | set(maybe)) if maybe else tests
    return Finding(code, severity_of(code, ev.may_write), ev.path, line, col, end_line, end_col, msg, reaching, trace,
                   origin_json(o) if cat != "clock" else {"kind": "clock", "path": ev.path, "line": line,
                                                          "expression": f"{ev.call}()"},
                   fix=_fix_hint(cat, o, ev), function=func, anchor=f"{ev.call}({ev.target})",
                   benign=f"env:{ev.target}" if cat == "env" else "", maybe_tests=list(maybe))


def _file_verb(ev: I.SinkEvent) -> str:
    """``writes`` / ``may write`` (an open whose mode the analysis cannot read) / ``reads``."""
    return "writes" if ev.write else "may write" if ev.may_write else "reads"


def _what_reached(ev: I.SinkEvent) -> str:
    """How a finding's message names what a (not clock) sink operates on."""
    if ev.category == "env":
        return f"the environment variable {ev.target}"
    return describe_origin(ev.origin, "path" if ev.category == "file" else "target")


def _others(ev: I.SinkEvent, what: Optional[Dict[Any, Tuple[I.SinkEvent, Set[str]]]]) -> str:
    """The message's tail for the tests that reach the sink only with other targets than the
    shown one (the finding's origin and trace are the first test's): each other target with
    the first such test that reaches it (and how many more do), at most two, then a count.
    ``what``: each target the tests reach the sink with, an event of it and those tests."""
    if not what or len(what) < 2:
        return ""
    by_text: Dict[str, Set[str]] = {}
    for e, ts in what.values():   # targets that read the same in a message are one
        by_text.setdefault(_what_reached(e), set()).update(ts)
    shown = _what_reached(ev)
    covered = by_text.get(shown, set())   # a test that reaches it with the shown one too is said
    rest = sorted((min(ts), w, len(ts)) for w, ts in ((w, ts - covered) for w, ts in by_text.items()
                                                      if w != shown) if ts)
    # targets only tests already named reach it with (a helper called with several names)
    also = sorted(w for w, ts in by_text.items() if w != shown and ts and not ts - covered)
    out = ""
    if also:
        out = "; the same tests also reach it with " + ", ".join(also[:2]) + (
            f" and {len(also) - 2} more" if len(also) > 2 else "")
    if not rest:
        return out
    parts = [f"{t}" + (f" and {n - 1} more reach" if n > 1 else " reaches") + f" it with {w}" for t, w, n in rest[:2]]
    more = f"; {len(rest) - 2} more target{'s' if len(rest) > 3 else ''}" if len(rest) > 2 else ""
    return out + "; " + "; ".join(parts) + more


def _fix_hint(cat: str, o: Optional[Origin], ev: I.SinkEvent) -> str:
    kind = o.kind if o else ""
    in_test_body = len(ev.trace) == (2 if ev.via_fixture else 1) and not ev.import_time   # a test or fixture body
    if in_test_body and cat == "file" and kind == "home":
        return 'monkeypatch.setenv("HOME", str(tmp_path)) before the home folder is looked up, or build the path from tmp_path'
    if in_test_body and cat == "file":
        return "build the path from tmp_path (or monkeypatch.chdir(tmp_path) before using relative paths)"
    if in_test_body and cat == "connection":
        return "connect to a tmp_path file or an in-memory database (\":memory:\", \"sqlite://\")"
    if cat == "clock":
        return ("freeze the clock in the test (freezegun.freeze_time, time_machine.travel, or the freezer fixture), "
                "or pass the time in as a parameter")
    if cat == "env":
        if ev.target == "os.environ":   # every variable: only a cleared environment is the test's
            return 'mock.patch.dict(os.environ, {...}, clear=True) around the call (or a fixture that does it)'
        return f'monkeypatch.setenv("{ev.target}", ...) (or delenv) in the test or a fixture'
    if cat == "network":
        return ("mock the HTTP client (responses / requests-mock / respx / pytest-httpx), or patch the function that "
                "sends where the code under test looks it up")
    if cat == "subprocess":
        return "use pytest-subprocess's fp fixture, or patch the spawning call where the code under test looks it up"
    if kind == "module-constant":
        return (f"pass the target in as a parameter (tmp_path in tests), or monkeypatch.setattr the module's "
                f"{o.expr} (and every constant derived from it) to a tmp_path value in a fixture")
    if kind == "environment":
        return f'monkeypatch.setenv("{o.expr}", str(tmp_path / ...)) in a fixture'
    if kind == "library-default":
        return "inject the client (or a fake such as fakeredis) from a fixture instead of constructing it here"
    if kind == "home":
        return 'monkeypatch.setenv("HOME", str(tmp_path)) before the path is computed, or pass the folder in'
    if kind in ("literal", "project-file", "default-argument"):
        return "make the target a parameter and pass a tmp_path (or in-memory) value from the test"
    return "make the target a parameter the test can control"
