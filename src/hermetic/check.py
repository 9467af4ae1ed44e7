"""`hermetic check`: discover, summarise, link, run every selected test, report findings.

``run_check`` is the API the CLI calls; it returns a ``model.Report``. It never imports
or executes the analysed code and writes nothing into the analysed tree but its cache
folder (``.hermetic_cache``, with its own ``.gitignore``).
"""
from __future__ import annotations

import copy
import errno
import gc
import os
import stat
import time
from pathlib import Path, PurePosixPath
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from .analyse import interp as I
from .analyse.runner import Runner, TestItem
from .analyse.values import lit
from .catalogue.loader import load as load_catalogue
from .config import Config, find_config, find_pytest_config
from .discover.project import Project, SourceFile, discover
from .discover.targets import (UsageError, common_dir, display_path, is_under, node_matches, rooted_node_id,
                               split_targets)
from .report.baseline import set_fingerprints
from .report.filters import filter_findings, wants
from .report.inventory import inventory_of
from .report.model import FileError, Finding, Report, TraceStep
from .rules.facts import Facts
from .rules.guard import ht4_findings
from .rules.import_time import constants_of, ht2_findings
from .rules.state_leaks import ht3_findings
from .rules.uncontrolled import import_closure, sink_findings


def _read_source(path: Path) -> bytes:
    """A source file's bytes. Anything but a regular file is refused before it is opened: a FIFO
    named ``x.py`` would block the run forever, a device (a link to ``/dev/zero``) never ends."""
    if not stat.S_ISREG(path.stat().st_mode):
        raise OSError(errno.EINVAL, "not a regular file")
    return path.read_bytes()


def run_check(targets: Sequence[str], cwd: Path, progress: Optional[Callable[[str], None]] = None,
              config: Optional[Config] = None, report_unused_suppressions: bool = False,
              use_cache: bool = True, jobs: int = 0,
              cache_dir: Optional[Path] = None) -> Tuple[Report, Config]:
    """Analyse the project holding ``targets`` (paths or node ids, relative to ``cwd``).

    Returns the report and the configuration used. Raises ``ConfigError`` for bad
    configuration and ``UsageError`` for paths that do not exist. ``jobs`` is the number of
    parse processes (0: one per CPU); ``cache_dir`` replaces ``ROOT/.hermetic_cache``.
    ``report.statistics`` holds seconds per phase and the parse and cache counts.
    """
    from .engine.workers import ONE_SHOT, run_deep

    # summaries and the interpreter recurse once per nesting level of the analysed code: run on
    # a deep stack, as the parse workers do, so code CPython compiles is code we can analyse
    def work() -> Tuple[Report, Config]:
        # a run builds what lives as long as it does (summaries, the analysis entry, the
        # interpreter's state) and next to no cyclic garbage (parallel._serve has the figures):
        # the automatic collector rescanning that heap was 5% of Django's run, a sixth of a
        # one-file run; it is back on when the run ends
        was = gc.isenabled()
        gc.disable()
        try:
            return _run_check(targets, cwd, progress, config, report_unused_suppressions, use_cache, jobs, cache_dir)
        finally:
            if not ONE_SHOT:   # the console script's process ends with the report: left as is
                gc.unfreeze()   # frozen after parsing: the summaries are not garbage while the run lasts
                if was:
                    gc.enable()

    return run_deep(work)


def _run_check(targets, cwd, progress, config, report_unused_suppressions, use_cache, jobs, cache_dir):
    clock = time.perf_counter
    t_start = clock()
    stats: Dict[str, Any] = {"phases": {}}
    cwd = cwd.resolve()
    paths, node_ids = split_targets(targets or ["."], cwd)
    anchor = common_dir(paths) if paths else cwd
    pytest_cfg = find_pytest_config(anchor, cwd)
    root = (pytest_cfg.rootdir or anchor).resolve()
    if config is None:
        config = find_config(root)
    project = discover(root, config, pytest_cfg, [p for p in paths if p != root])
    report = Report()
    report.statistics = stats
    stats["phases"]["discover"] = clock() - t_start

    # per-file work: source -> summary (pure), in worker processes, cached by content
    t_phase = clock()
    from .engine.cache import SummaryCache
    from .engine.workers import EarlyWorker, take_early

    cache = SummaryCache(root, enabled=use_cache, directory=cache_dir)
    # a parse worker importing libcst while the files and the cache are read here
    early = take_early() or (EarlyWorker() if project.files else None)
    try:
        done = _parse_and_analyse(targets, cwd, progress, config, report_unused_suppressions, jobs, stats, t_phase,
                                  paths, node_ids, pytest_cfg, root, project, report, cache, early)
        done[0].root = str(root)
        return done
    finally:
        cache.wait()   # a run that failed half way does not leave its writer behind
        if early is not None:
            early.close()


def _parse_and_analyse(targets, cwd, progress, config, report_unused_suppressions, jobs, stats, t_phase,
                       paths, node_ids, pytest_cfg, root, project, report, cache, early):
    from .engine.cache import serialize
    from .engine.workers import ONE_SHOT, ParseJob, default_jobs, summarize_all

    clock = time.perf_counter
    run_keys: List[str] = []
    entries: List[Tuple[SourceFile, str, str, bytes]] = []
    for exc in project.unreadable:
        folder = Path(os.fsdecode(exc.filename)) if exc.filename else root
        report.errors.append(FileError(display_path(folder, cwd), f"cannot read folder: {exc.strerror or exc}"))
    for sf in project.files:
        disp = display_path(sf.path, cwd)
        try:
            data = _read_source(sf.path)
        except OSError as exc:
            report.errors.append(FileError(disp, f"cannot read: {exc.strerror}"))
            continue
        key = cache.key(data, sf.module, disp, sf.is_package)
        run_keys.append(key)
        entries.append((sf, disp, key, data))
    # nothing changed since a run with the same inputs: reuse its result without loading a summary
    run_key = cache.key(repr((sorted(run_keys), [e.to_json() for e in report.errors], repr(config),
                              repr(pytest_cfg), list(targets), str(cwd), report_unused_suppressions)).encode(),
                        "<run>", "", False)
    stored = cache.get_result(run_key)
    try:
        reused = _report_from(stored, [FileError(e["path"], e["message"]) for e in stored["errors"]]) \
            if stored is not None else None
    except (KeyError, TypeError, ValueError, AttributeError):   # a damaged entry: run again
        reused = None
    if reused is not None:
        stats.update(files=len(entries), parsed=0, cache_hits=0, jobs=0, result_cache="hit")
        stats["phases"]["parse"] = clock() - t_phase
        reused.statistics = stats
        return reused, config

    loaded: Dict[str, dict] = {}
    to_parse: List[ParseJob] = []
    for sf, disp, key, data in entries:
        if key in loaded:
            continue
        s = cache.get(key)
        if s is None:
            to_parse.append(ParseJob(key, data, sf.module, disp, sf.is_package))
            loaded[key] = {}   # placeholder: a file listed twice is parsed once
        else:
            loaded[key] = s
    failed: Dict[str, str] = {k: s["error"] for k, s in loaded.items() if "error" in s}
    transient = False   # a timeout or a crash may not recur: such a run's result is not reused
    from .engine import reuse as RU

    scope = RU.scope_key(repr(config), repr(pytest_cfg), list(targets), str(cwd), report_unused_suppressions)
    ready: Dict[str, Any] = {}

    def while_parsing() -> None:
        # what needs no summary, done while the workers parse (a one-file run's parent would
        # otherwise wait idle for its worker's libcst import, then do this)
        if not ready:
            ready["catalogue"] = load_catalogue(config)
            ready["prev"] = cache.get_analysis(scope) if cache.enabled else None
            from .engine import parallel  # noqa: F401  imported now rather than after the parse
            from .analyse import pollution  # noqa: F401

    cache.hold()   # written once the parse is over (``SummaryCache.hold`` says why)
    for res in summarize_all(to_parse, jobs or default_jobs(), config.file_timeout, early=early,
                             idle=while_parsing):
        if res.data is None:
            failed[res.job.key] = res.error or "not analysed"
            transient = transient or res.transient
            if not res.transient:   # the file's own fault: the same bytes fail the same way
                cache.put(res.job.key, serialize({"error": failed[res.job.key]}))
        else:
            s = cache.put(res.job.key, res.data)
            if s is None:   # a worker's bytes that are no summary: a bug of ours, one line for the report
                failed[res.job.key] = "internal error while summarising: the summary did not load"
            else:
                loaded[res.job.key] = s
        if progress:
            progress(res.job.path)
    summaries: Dict[str, dict] = {}
    files_by_module: Dict[str, SourceFile] = {}
    module_keys: Dict[str, str] = {}   # module -> its file's content hash (the per-test result cache)
    for sf, disp, key, _data in entries:
        if key in failed:
            report.errors.append(FileError(disp, failed[key]))
            continue
        s = loaded[key]
        if sf.module in summaries:
            continue
        summaries[sf.module] = s
        files_by_module[sf.module] = sf
        module_keys[sf.module] = key
        for alias in sf.aliases:
            if alias not in summaries:
                summaries[alias] = s
                files_by_module[alias] = sf
                module_keys[alias] = key
    while_parsing()   # nothing was parsed
    del entries, loaded   # the files' bytes are not needed any more
    cache.write_held()   # from a child process, while the linking below runs
    report.files = len({id(s) for s in summaries.values()})
    stats.update(files=len(run_keys), parsed=len(to_parse), cache_hits=cache.hits,
                 jobs=min(jobs or default_jobs(), len(to_parse)) if to_parse else 0, result_cache="miss")
    stats["phases"]["parse"] = clock() - t_phase
    # summaries live as long as the run: the collector is off for it (``run_check``), but the
    # analysis workers forked from here collect by hand, and frozen objects are not scanned
    # (nor their pages copied into the workers by the scan)
    gc.freeze()

    # linking and the interpreter work on summaries only
    t_phase = clock()
    in_test = {m: files_by_module[m].in_test_tree for m in summaries}
    session_env: Dict[str, I.V] = {k: lit(v, pytest_cfg.inifile.name if pytest_cfg.inifile else None, 0, True)
                                   for k, v in pytest_cfg.env.items()}
    program = I.Program(summaries, in_test, ready["catalogue"], config, session_env)
    program.rel_paths = {m: files_by_module[m].rel for m in summaries}

    def fresh_runner() -> Runner:
        return Runner(I.Interp(program), {m: files_by_module[m] for m in program.summaries}, pytest_cfg, config)

    digest = RU.collection_digest(scope, summaries)
    wants_ht3 = wants(config, ("HT301", "HT302", "HT303", "HT304"))
    # nothing to analyse again (a function appended, code no test runs edited): the last run's
    # outcome, without collecting (``reuse.settled``); a guard's HT4xx reads module state anew
    kept = _settled(ready["prev"], digest, module_keys, program, cache, wants_ht3, fresh_runner) \
        if config.guard is None else None
    runner = fresh_runner()
    ip = runner.ip
    if kept is not None:
        outcome, ht3, effects, swept = kept
        stats["phases"]["link"] = clock() - t_phase
        t_phase = clock()
        stats.update(analysis_processes=1, tests_reused=outcome["tests"], tests_analysed=0, collection="reused")
        # the outcome with the new sweep roots' notes, kept before the rules below change its findings
        new_entry = RU.carried(ready["prev"], module_keys, summaries, ht3, effects,
                               RU.blob(outcome) if swept else None)
    else:
        items = _collect(ip, runner, project, root, node_ids, files_by_module)
        stats["phases"]["link"] = clock() - t_phase
        t_phase = clock()
        stats["collection"] = "run"
        outcome, new_entry = _analyse_again(
            ip, runner, items, project, config, root, cwd, files_by_module, summaries, module_keys,
            digest, RU.load_parts(ready["prev"]), cache, jobs, progress, stats, wants_ht3)
    report.tests = outcome["tests"]
    report.unresolved_calls = _unresolved_list(outcome["unresolved"])
    report.inventory = outcome["inventory"]
    # call sites in the modules whose code the tests ran (counted from this run's summaries)
    report.calls_seen = sum(summaries[m].get("calls", 0)
                            for m in {summaries[m]["module"] for m in outcome["ran"] if m in summaries})
    report.sinks_seen = outcome["sinks"]
    report.findings, report.unknown_origins = outcome["findings"], outcome["unknown"]
    _widen_statement_spans(report.findings, {s["path"]: s for s in summaries.values()})
    def_lines = outcome["def_lines"]
    report.findings = filter_findings(report.findings, config, ip, root, cwd, report_unused_suppressions, def_lines)
    report.test_locations = {t: def_lines[t] for f in report.findings for t in f.tests if t in def_lines}
    report.make_printable()   # before the sort and the fingerprints, which follow what is shown
    report.findings.sort(key=Finding.sort_key)
    set_fingerprints(report.findings)
    cache.wait()   # the summaries are in the cache before the result that names them
    if not transient:
        cache.put_result(run_key, _report_to(report))
        if cache.enabled:
            cache.put_analysis(scope, new_entry)
    stats["phases"]["analyse"] = clock() - t_phase
    if ONE_SHOT:
        # the console script ends once the report is out (``cli._exit``): freeing the summaries
        # and the interpreter's state here, object by object, would only delay that
        _LEFT_FOR_EXIT.append(locals())
    return report, config


def _settled(prev: Optional[dict], digest: str, module_keys: Dict[str, str], program: I.Program,
             cache, wants_ht3: bool, fresh_runner: Callable[[], Runner]
             ) -> Optional[Tuple[dict, Optional[tuple], Optional[Dict[str, tuple]], bool]]:
    """``(outcome, HT3xx result, effects, whether new sweep roots ran)`` of the run that made
    ``prev`` when they are this run's (``reuse.settled``; HT3xx's key still the same; new sweep
    roots, run by a ``fresh_runner()``, ran as after collection), else None."""
    from .engine import reuse as RU

    found = RU.settled(prev, digest, module_keys, program, cache.get) if prev is not None else None
    if found is None:
        return None
    same, new_roots = found
    outcome = prev["outcome"]
    ht3 = effects = None
    if wants_ht3:
        from .analyse import pollution as PO

        old_effects = prev.get("effects") or {}
        held = {m: e[1] for m, e in old_effects.items() if isinstance(e, tuple) and len(e) == 3}
        effects = PO.effects_of(program, held, module_keys, old_effects)[1]
        key = RU.ht3_key(digest, module_keys, program.summaries, program.in_test, outcome["fixture_users"],
                         outcome["node_ids"], effects)
        lazy_ran = {m: module_keys.get(m, "") for m in outcome["lazy"]}
        old = prev.get("ht3")
        if not RU.ht3_reusable(old, key, module_keys, lazy_ran, same):
            return None
        ht3 = old[:3] + ({m: module_keys.get(m, "") for m in old[3]}, lazy_ran)
    if new_roots and not _sweep_new_roots(fresh_runner(), new_roots, outcome):
        return None
    return outcome, ht3, effects, bool(new_roots)


def _sweep_new_roots(runner: Runner, roots: List[str], outcome: dict) -> bool:
    """Sweep ``roots`` (``reuse.settled``'s new ones, which read no module state) in
    ``runner``'s uncollected state and add what they found to ``outcome``: True when each ran
    as it would after collection (no code but its own, nothing imported, no file operation on a
    module constant, which HT201 would report). False leaves ``outcome`` as it was."""
    ip = runner.ip
    for qn in roots:   # what their defs left at import (no defaults), so no call imports their module
        ip.defaults[qn] = {}
    ip.unresolved = dict(outcome["unresolved"])   # the notes they make join these as a run's would
    runs = runner.sweep_each(roots)
    for r in runs:
        mod = runner.p.functions[r.root][1]
        if r.touched or r.deps & ~ip.file_bits.get(mod, 0) or ip.import_events or any(
                constants_of(o) for ev in r.events for o in ev.targets):
            return False
    outcome["unresolved"] = ip.unresolved
    outcome["roots"] = sorted(outcome["roots"] + roots)
    outcome["deps"] = sorted(set(outcome["deps"]) | {m for r in runs for m in ip.files_of(r.deps)})
    return True


def _collect(ip: I.Interp, runner: Runner, project: Project, root: Path, node_ids,
             files_by_module) -> List[TestItem]:
    """Collection: the conftests (outermost first), then the test modules (discovery counts a
    file a test module only under the targets or testpaths, as pytest collects), imported once
    in ``ip``; the tests, those ``node_ids`` select where targets name tests. Raises
    ``UsageError`` when no test matches them."""
    program = ip.p
    test_modules = [sf for sf in project.files if sf.is_test and sf.module in program.summaries]
    chain_mods = {m for sf in test_modules for m in runner.conftest_chain(sf.rel)}
    conftests = sorted((sf for sf in project.files if sf.is_conftest and sf.module in program.summaries
                        and sf.module in chain_mods),
                       key=lambda sf: (len(PurePosixPath(sf.rel).parts), sf.rel))
    for sf in conftests:
        ip.import_module(sf.module)
    items: List[TestItem] = []
    for sf in test_modules:
        ip.import_module(sf.module)
        items.extend(runner.collect(sf.module, sf.rel))
    if node_ids:
        wanted = [w for w in (rooted_node_id(p, rest, root) for p, rest, _t in node_ids if rest is not None)
                  if w is not None]
        # a plain path among the targets keeps every test under it, as pytest runs them all
        whole = [p for p, rest, _t in node_ids if rest is None]
        picked = {id(it) for it in items if any(node_matches(it.node_id, w) for w in wanted)}
        if not picked:
            raise UsageError(f"no test matches {', '.join(t for _p, rest, t in node_ids if rest is not None)}")
        items = [it for it in items if id(it) in picked or any(
            files_by_module[it.module].path == p or is_under(files_by_module[it.module].path, p) for p in whole)]
    return items


def _analyse_again(ip: I.Interp, runner: Runner, items: List[TestItem], project: Project, config: Config,
                   root: Path, cwd: Path, files_by_module, summaries, module_keys: Dict[str, str], digest: str,
                   prev: Optional[dict], cache, jobs: int, progress, stats: Dict[str, Any], wants_ht3: bool):
    """Analyse the collected tests (taking what ``prev`` gives) and run the rules: ``(outcome,
    the analysis entry for this run)``; the outcome is what the report takes (``reuse.entry``
    keeps it as it is here, before the rules after it change its findings)."""
    from .engine import reuse as RU
    from .engine.parallel import analyse
    from .engine.workers import default_jobs

    program = ip.p
    if config.guard is not None:
        program.import_closure = {m: import_closure(runner, [m], program.summaries) for m in program.summaries}
    # the per-test result cache: tests whose code did not change keep their results
    # the functions that ran during collection, with their bodies' digests
    collection_deps = {qn: ip.p.functions[qn][0]["body_digest"]
                       for qn in set(ip.collection_ran) if qn in ip.p.functions}
    reused = RU.plan(prev, digest, module_keys, items, ip, cache.get)
    done = analyse(runner, items, jobs or default_jobs(), wants(config, ("HT201",)), progress, reused)
    runs, sweep_events = done.runs, done.sweep_events
    stats["analysis_processes"] = done.processes
    stats["tests_reused"] = len(reused.runs) if reused is not None else 0
    stats["tests_analysed"] = len(items) - stats["tests_reused"]
    # the rules below read the state collection left (with the modules tests imported), as each
    # test started from
    import_events = list(ip.import_events)

    facts = Facts(ip, runner, config, items, runs, sweep_events, import_events, files_by_module)
    findings = sink_findings(facts)
    findings[0].extend(ht2_findings(facts))
    ht3 = None
    effects = None
    lazy_ran = RU.ht3_ran(ip, module_keys)
    if wants_ht3:
        from .analyse import pollution as PO

        effects = PO.function_effects(ip, module_keys, (prev or {}).get("effects"))
        ht3_key = RU.ht3_key(digest, module_keys, summaries, program.in_test, runner.fixture_users,
                             [it.node_id for it in items], effects[1])
        if reused is not None and RU.ht3_reusable(prev.get("ht3"), ht3_key, module_keys, lazy_ran, reused.same):
            old = prev["ht3"]
            # kept under this run's keys (what was checked equal or the same code)
            ht3 = old[:3] + ({m: module_keys.get(m, "") for m in old[3]}, lazy_ran)
            for site, text in ht3[2]:   # what its imports after collection noted
                ip.note_unresolved(site, text)
        else:
            ip.unres_log = []
            before = set(ip.lazy_files)
            found = ht3_findings(facts, effects[0])
            # the modules its own imports ran code of: its result depends on them too
            own = RU.ht3_ran(ip, module_keys, since=before)
            ht3 = (ht3_key, found, sorted(set(ip.unres_log)), own, lazy_ran)
        findings[0].extend(copy.deepcopy(ht3[1]))
    if config.guard is not None:
        findings[0].extend(ht4_findings(facts))
    ran = 0
    for run in runs:
        ran |= run.deps
    deps = ran
    for r in done.sweep_runs:
        deps |= r.deps
    outcome = {
        "findings": findings[0], "unknown": findings[1], "tests": len(items),
        "unresolved": dict(ip.unresolved),
        "inventory": inventory_of(runs),
        "ran": ip.files_of(ran),
        "sinks": len({(e.path, e.pos) for run in runs for e in run.events} | {(e.path, e.pos) for e in import_events}),
        "def_lines": {it.node_id: (it.path, it.def_line) for it in items},
        # what ``reuse.settled`` and HT3xx's key read of this run
        "deps": sorted(set(ip.files_of(deps)) | set(lazy_ran)),
        "lazy": sorted(lazy_ran),
        "sweep_modules": sorted(runner.swept_modules), "roots": [r.root for r in done.sweep_runs],
        # their global names, when the sweep began and at the end (``reuse.reads_no_state``)
        "globals": {m: sorted(set(runner.swept_globals.get(m, ())) | set(ip.globals.get(m, ())))
                    for m in runner.swept_modules},
        "fixture_users": {qn: sorted(users) for qn, users in runner.fixture_users.items()},
        "node_ids": [it.node_id for it in items],
    }
    if not cache.enabled:
        return outcome, {}
    same = {k: prev["_blobs"][k] for k in RU.reused_parts(prev, reused, items, done)}
    return outcome, RU.entry(digest, module_keys, collection_deps, items, done, ip, ht3,
                             effects[1] if effects else None, same, RU.blob(outcome))


def _unresolved_list(unresolved: Dict[Tuple[str, int, int], str]) -> List[dict]:
    """The report's unresolved calls from ``Interp.unresolved``, by site."""
    return [{"path": p, "line": ln, "column": col, "call": text} for (p, ln, col), text in sorted(unresolved.items())]


_LEFT_FOR_EXIT: List[dict] = []


def release_state() -> None:
    """Free what one-shot runs kept for the process end (``cli`` before a second run in the
    same process, ``--diff``'s, so two runs' states are never held at once); the collector back
    on, as it is when the console script starts."""
    _LEFT_FOR_EXIT.clear()
    gc.unfreeze()
    gc.enable()


def _report_to(report: Report) -> dict:
    fs = []
    for f in report.findings:
        d = f.to_json()
        d.update({"fix": f.fix, "function": f.function, "anchor": f.anchor})
        fs.append(d)
    return {"findings": fs, "files": report.files, "tests": report.tests, "unresolved": report.unresolved_calls,
            "unknown": report.unknown_origins, "calls": report.calls_seen, "sinks": report.sinks_seen,
            "inventory": report.inventory, "errors": [e.to_json() for e in report.errors],
            "test_locations": {k: list(v) for k, v in report.test_locations.items()}}


def _report_from(d: dict, errors) -> Report:
    findings = []
    for x in d["findings"]:
        findings.append(Finding(x["code"], x["severity"], x["path"], x["line"], x["column"], x["end_line"],
                                x["end_column"], x["message"], list(x["tests"]),
                                [TraceStep(t["path"], t["line"], t["function"]) for t in x["trace"]], x["origin"],
                                x["fingerprint"], x.get("fix", ""), x.get("function", "<module>"), x.get("anchor", "")))
    return Report(findings=findings, errors=list(errors), files=d["files"], tests=d["tests"],
                  unresolved_calls=d["unresolved"], unknown_origins=d["unknown"], calls_seen=d["calls"],
                  sinks_seen=d["sinks"], inventory=d["inventory"],
                  test_locations={k: (v[0], v[1]) for k, v in d.get("test_locations", {}).items()})




def _widen_statement_spans(findings: List[Finding], by_path: Dict[str, dict]) -> None:
    """Findings anchored at a whole statement know only its line (statement IR keeps lines):
    give them the statement's span, which the summary records per line."""
    for f in findings:
        if f.line == f.end_line and f.column == f.end_column and f.path in by_path:
            span = by_path[f.path].get("spans", {}).get(str(f.line))
            if span:
                f.column, f.end_line, f.end_column = span


