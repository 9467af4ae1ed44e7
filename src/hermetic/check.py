"""`hermetic check`: discover, summarise, link, run every selected test, report findings.

``run_check`` is the API the CLI calls; it returns a ``model.Report``. It never imports
or executes the analysed code and writes nothing into the analysed tree but its cache
folder (``.hermetic_cache``, with its own ``.gitignore``).
"""
from __future__ import annotations

import copy
import errno
import fnmatch
import gc
import hashlib
import json
import os
import stat
import time
from pathlib import Path, PurePosixPath
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from .analyse import interp as I
from .catalogue.loader import load as load_catalogue
from .config import Config, find_config, find_pytest_config
from .report.model import FileError, Finding, Report, TraceStep
from .discover.project import Project, SourceFile, discover
from .rules.registry import RULES, severity
from .analyse.runner import Runner, TestItem
from .summarise.unparse import calls_in
from .summarise.extract import may_name
from .analyse.values import UNCONTROLLED, UNKNOWN, Origin, lit

_CODES = {"connection": "HT101", "file": "HT102", "env": "HT103", "clock": "HT104", "network": "HT105",
          "subprocess": "HT106"}
_WHAT = {"connection": "connects to", "file": "touches the file", "env": "reads the environment variable",
         "clock": "reads the clock", "network": "calls", "subprocess": "runs"}


class UsageError(Exception):
    """Bad command-line input (exit 2)."""


def _display(path: Path, cwd: Path) -> str:
    try:
        return path.relative_to(cwd).as_posix()
    except ValueError:
        return Path(os.path.relpath(path, cwd)).as_posix()


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
    paths, node_ids = _split_targets(targets or ["."], cwd)
    anchor = _common_dir(paths) if paths else cwd
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
        report.errors.append(FileError(_display(folder, cwd), f"cannot read folder: {exc.strerror or exc}"))
    for sf in project.files:
        disp = _display(sf.path, cwd)
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
    wants_ht3 = _wants(config, ("HT301", "HT302", "HT303", "HT304"))
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
    report.findings = _filter(report.findings, config, ip, root, cwd, report_unused_suppressions, def_lines)
    report.test_locations = {t: def_lines[t] for f in report.findings for t in f.tests if t in def_lines}
    report.make_printable()   # before the sort and the fingerprints, which follow what is shown
    report.findings.sort(key=Finding.sort_key)
    _fingerprints(report.findings)
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
                _constants(o) for ev in r.events for o in ev.targets):
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
        wanted = [w for w in (_rooted_node_id(p, rest, root) for p, rest, _t in node_ids if rest is not None)
                  if w is not None]
        # a plain path among the targets keeps every test under it, as pytest runs them all
        whole = [p for p, rest, _t in node_ids if rest is None]
        picked = {id(it) for it in items if any(_node_match(it.node_id, w) for w in wanted)}
        if not picked:
            raise UsageError(f"no test matches {', '.join(t for _p, rest, t in node_ids if rest is not None)}")
        items = [it for it in items if id(it) in picked or any(
            files_by_module[it.module].path == p or _under(files_by_module[it.module].path, p) for p in whole)]
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
        program.import_closure = {m: _import_closure(runner, [m], program.summaries) for m in program.summaries}
    # the per-test result cache: tests whose code did not change keep their results
    # the functions that ran during collection, with their bodies' digests
    collection_deps = {qn: ip.p.functions[qn][0]["body_digest"]
                       for qn in set(ip.collection_ran) if qn in ip.p.functions}
    reused = RU.plan(prev, digest, module_keys, items, ip, cache.get)
    done = analyse(runner, items, jobs or default_jobs(), _wants(config, ("HT201",)), progress, reused)
    runs, sweep_events = done.runs, done.sweep_events
    stats["analysis_processes"] = done.processes
    stats["tests_reused"] = len(reused.runs) if reused is not None else 0
    stats["tests_analysed"] = len(items) - stats["tests_reused"]
    # the rules below read the state collection left (with the modules tests imported), as each
    # test started from
    import_events = list(ip.import_events)

    findings = _findings(runs, import_events, ip, runner, project, config, root, cwd, files_by_module, items)
    findings[0].extend(_ht2(runs, sweep_events, import_events, ip, runner, files_by_module))
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
            found = _ht3(ip, runner, items, files_by_module, effects[0])
            # the modules its own imports ran code of: its result depends on them too
            own = RU.ht3_ran(ip, module_keys, since=before)
            ht3 = (ht3_key, found, sorted(set(ip.unres_log)), own, lazy_ran)
        findings[0].extend(copy.deepcopy(ht3[1]))
    if config.guard is not None:
        findings[0].extend(_ht4(runs, ip, runner, config, files_by_module, import_events))
    ran = 0
    for run in runs:
        ran |= run.deps
    deps = ran
    for r in done.sweep_runs:
        deps |= r.deps
    outcome = {
        "findings": findings[0], "unknown": findings[1], "tests": len(items),
        "unresolved": dict(ip.unresolved),
        "inventory": _inventory(runs),
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


_HT3_FIX = {
    "HT301": "do not reload modules in tests; build fresh objects, or restore what the reload resets",
    "HT302": "use monkeypatch.setenv / monkeypatch.delenv (or mock.patch.dict(os.environ, ...)), which restore",
    "HT303": "use monkeypatch.setattr / monkeypatch.setitem, which restore, or put the old value back in a finally",
    "HT304": "use monkeypatch.syspath_prepend / monkeypatch.chdir, `with patch(...)`, or stop the patcher with "
             "addCleanup(patcher.stop)",
}


_TEARDOWNS = ("tearDown", "tearDownClass", "teardown_method", "teardown_class", "teardown_module",
              "teardown_function", "doCleanups", "teardown_test", "teardown", "asyncTearDown")


def _ht3(ip: I.Interp, runner: Runner, items: List[TestItem], files_by_module,
         effects: Dict[str, Set[tuple]]) -> List[Finding]:
    """HT301-HT304 over the test code: tests, fixtures, set-up, helpers, test modules' top level.
    ``effects``: the project functions' direct state changes (``pollution.function_effects``)."""
    from .analyse import pollution as P

    hook_restores = _hook_restores(ip, effects)
    # autouse fixtures that snapshot and restore a whole thing (os.environ) cover the tests under them
    covered: Dict[tuple, Set[str]] = {}
    # what the teardown of each fixture puts back ((key, entry), Scan.restored_items), with the
    # tests that use the fixture (directly or through other fixtures)
    requested: Dict[tuple, Set[str]] = {}
    registered_in: Dict[str, Dict[str, Set[str]]] = {}   # module -> _finalizers, read once for both uses
    from .engine.cache import transient_bodies

    with transient_bodies() as scope:   # fixture bodies read here do not all stay in memory
        for mod, s in sorted(ip.p.summaries.items()):
            if s["module"] != mod or not ip.p.in_test.get(mod, False):
                continue
            scope.release()
            defs = runner.fixture_defs(mod)
            for cls in sorted(defs, key=lambda c: c or ""):
                for d in defs[cls]:
                    users = runner.fixture_users.get(d.qualname, ())
                    if not users:
                        continue
                    f = ip.p.functions[d.qualname][0]
                    if d.autouse and not cls:
                        for key in P.restores_of(ip, f, mod):
                            if key == ("env", "*"):
                                covered.setdefault(key, set()).update(users)
                    registered = registered_in.get(mod)
                    if registered is None:
                        registered = registered_in[mod] = _finalizers(s)
                    fins = [(s["functions"][q], mod) for q in sorted(registered.get(d.qualname, ()))]
                    for item in P.fixture_restores(ip, f, mod, fins):
                        requested.setdefault(item, set()).update(users)
    tests_by_qn: Dict[str, List[str]] = {}
    tests_by_mod: Dict[str, List[str]] = {}
    for it in items:
        tests_by_qn.setdefault(it.qualname, []).append(it.node_id)
        tests_by_mod.setdefault(it.module, []).append(it.node_id)
    out: List[Finding] = []
    seen_mods = set()
    index = _TestIndex(items, ip)
    from .engine.cache import bodies_of

    for mod, s in sorted(ip.p.summaries.items()):
        # a test module's bodies are read for its turn only (what the interpreter reads meanwhile
        # for the modules it runs stays)
        store = bodies_of(s)
        was = store is None or store.loaded
        out.extend(_ht3_module(ip, runner, mod, s, files_by_module, seen_mods, tests_by_mod, tests_by_qn,
                               effects, hook_restores, covered, index, requested, registered_in))
        if not was:
            store.evict()
    return out


def _ht3_module(ip, runner, mod, s, files_by_module, seen_mods, tests_by_mod, tests_by_qn, effects, hook_restores,
                covered, index, requested, registered_in) -> List[Finding]:
    from .analyse import pollution as P

    out: List[Finding] = []
    if s["module"] != mod or not ip.p.in_test.get(mod, False) or mod in seen_mods:
        return out
    seen_mods.add(mod)
    sf = files_by_module.get(mod)
    if sf is None:
        return out
    if sf.is_test and mod not in tests_by_mod:
        return out   # a test module outside the selected targets
    if not sf.is_test and not any(_direct_tests(qn, f, runner, tests_by_qn, index) or index.named_by(f)
                                  for qn, f in s["functions"].items()):
        return out   # a helper module no selected test reaches: nothing to report, nothing to import
    ip.import_module(mod)
    if sf.is_test:
        for m in P.scan_module(ip, s, mod, effects):
            out.append(_ht3_finding(m, s["path"], sorted(tests_by_mod.get(mod, [])), "<module>"))
    # tearDown-like methods restore for their whole class
    class_restores: Dict[str, set] = {}
    for cqn, c in s["classes"].items():
        tds = [(ip.p.functions[q][0], mod) for n, q in c["methods"].items() if n in _TEARDOWNS]
        class_restores[cqn] = P.teardown_restores(ip, tds) if tds else set()
    registered = registered_in[mod] if mod in registered_in else _finalizers(s)
    finalizers = set().union(*registered.values()) if registered else set()
    for qn, f in sorted(s["functions"].items()):
        if f["name"] in _TEARDOWNS or qn in finalizers:
            continue
        is_fixture = runner._fixture_decorator(f, mod) is not None
        restores = set(class_restores.get(f.get("class") or "", set()))
        nested = [(s["functions"][q], mod) for q in sorted(registered.get(qn, ()))]
        if nested:
            restores |= P.teardown_restores(ip, nested)
        mutations = P.scan_function(ip, f, mod, is_fixture, restores, effects)
        if not mutations:
            continue
        direct = _direct_tests(qn, f, runner, tests_by_qn, index)
        mutations = [m for m in mutations if m.key not in hook_restores]
        if covered:
            mine = set(direct)
            mutations = [m for m in mutations if not (
                m.key[0] == "env" and mine and mine <= covered.get(("env", "*"), set()))]
        tests = direct or index.callers(f)
        if not tests:
            continue   # no selected test reaches it: a helper nobody calls, another suite's fixture
        if requested and (qn in tests_by_qn or not direct):
            # a test body (or a helper it calls) runs between its fixtures' set-up and teardown:
            # what the teardown of a fixture every one of its tests requests puts back is restored
            mutations = [m for m in mutations if not all(
                any(t in requested.get(c, ()) for c in P.covering(m)) for t in tests)]
        for m in mutations:
            out.append(_ht3_finding(m, s["path"], sorted(tests), qn))
    return out


_SETUPS = ("setUp", "setUpClass", "setup_method", "setup_class", "asyncSetUp")


def _direct_tests(qn: str, f: dict, runner: Runner, tests_by_qn, index: "_TestIndex") -> List[str]:
    """The selected tests a function is (node ids), or the tests of a fixture it is, or of the
    class whose set-up it is; else none (a helper reaches the tests that name it,
    ``_TestIndex.callers``). HT301-HT304 report a state change against these."""
    if qn in tests_by_qn:
        return tests_by_qn[qn]
    users = runner.fixture_users.get(qn)
    if users:
        return sorted(users)
    if f.get("class") and f["name"] in _SETUPS:
        return index.of_class(f["class"])
    return []


def _ht4(runs, ip: I.Interp, runner: Runner, config: Config, files_by_module, import_events) -> List[Finding]:
    """HT401 (reaches the application database, never calls the guard), HT402 (a side
    effect comes before the guard in set-up order), HT403 (a production name is a
    connection target). Contract section 5."""
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
            if st[0] in ("import", "from"):
                names = [full for _l, full, _a in st[1]] if st[0] == "import" else \
                    [st[1]] + [f"{st[1]}.{a}" for _l, a in st[2]]
                names = [ip.p.canonical.get(n, n) for n in names]
                if any(n in boot_mods or (closure.get(n, set()) & (boot_mods | risky_mods)) for n in names):
                    marks.append(("side", (s["path"], st[3] if st[0] == "from" else st[2])))
            elif st[0] == "def" and st[1] in ("pytest_configure", "pytest_sessionstart"):
                f = ip.p.functions.get(st[2], (None,))[0]
                if f is not None and _calls_guard(ip, f["body"], mod, guard.function):
                    marks.insert(0, ("guard", (s["path"], f["line"]), "hook"))
            elif st[0] in ("expr", "assign"):
                for call in calls_in(st):
                    v = ip.eval_static(call[1], mod)
                    for a in v.refs():
                        if a[0] == "func" and I._dotted_name(a[1]) == guard.function:
                            marks.append(("guard", (s["path"], line)))
                        elif a[0] == "func" and I._dotted_name(a[1]) in ip.p.bootstrap:
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
        sides = [i for i, mk in enumerate(seq) if mk[0] == "side"]
        guards = [i for i, mk in enumerate(seq) if mk[0] == "guard"]
        if not sides:
            continue
        if not guards:
            out.append(Finding("HT401", severity("HT401"), it.path, it.def_line, 1, it.def_line, 1,
                               f"{it.display} reaches the application database but never calls the guard "
                               f"{guard.function}()", [it.node_id], [], None,
                               fix=f"call {guard.function}() first (in the test, a fixture it uses, or conftest), "
                                   f"or list the test under [tool.hermetic.guard] exempt",
                               function=it.display, anchor="HT401"))
        elif sides[0] < guards[0]:
            path, line = seq[sides[0]][1]
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
    from urllib.parse import urlsplit

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
        v = ip.eval_static(call[1], mod)
        if any(a[0] == "func" and I._dotted_name(a[1]) == guard for a in v.refs()):
            return True
    return False


_PER_TEST_HOOKS = {"pytest_runtest_setup", "pytest_runtest_teardown", "pytest_runtest_call", "pytest_runtest_protocol",
                   "pytest_runtest_logstart", "pytest_runtest_logfinish", "pytest_fixture_post_finalizer",
                   "pytest_runtest_makereport"}


def _hook_restores(ip: I.Interp, effects: Dict[str, Set[tuple]]) -> Set[tuple]:
    """Module state that the project's own per-test pytest hooks reset (a plugin that clears a
    registry after every test restores it for every test). Follows the functions the hooks
    call or pass on, a few levels deep."""
    todo = [(qn, 0) for qn, (f, _m) in ip.p.functions.items() if f["name"] in _PER_TEST_HOOKS]
    seen: Set[str] = set()
    keys: Set[tuple] = set()
    while todo and len(seen) < 500:
        qn, depth = todo.pop()
        if qn in seen or qn not in ip.p.functions:
            continue
        seen.add(qn)
        keys |= effects.get(qn, set())
        if depth >= 6:
            continue
        f, mod = ip.p.functions[qn]
        for call in calls_in(f["body"]):
            for node in [call[1]] + [a for a in call[2] if a[0] in ("name", "attr")]:
                if node[0] not in ("name", "attr"):
                    continue
                try:
                    v = ip.eval_static(node, mod)
                except RecursionError:
                    continue
                funcs = [a[1] for a in v.refs() if a[0] == "func"]
                if not funcs and node[0] == "attr" and node[1][0] == "name":
                    # `fixtures.after_test()` where `fixtures` is bound late (global + import in a
                    # set-up function): the project module of that name
                    for m, sm in ip.p.summaries.items():
                        if sm["module"] == m and (m == node[1][1] or m.endswith("." + node[1][1])):
                            try:
                                funcs += [a[1] for a in ip.module_attr_static(m, node[2]).refs() if a[0] == "func"]
                            except RecursionError:
                                pass
                for qn2 in funcs:
                    todo.append((qn2, depth + 1))
    return keys


class _TestIndex:
    """The selected tests by the names their bodies use and by the classes they belong to
    (built once: HT3xx asks for every helper and set-up method)."""

    def __init__(self, items: List[TestItem], ip: I.Interp) -> None:
        from .engine.cache import transient_bodies

        self.by_name: Dict[str, List[TestItem]] = {}
        self.by_class: Dict[str, List[TestItem]] = {}
        seen: Dict[str, Set[str]] = {}   # a test method inherited by many classes is read once
        with transient_bodies() as scope:   # the tests' bodies are read once here, module by module
            last = None
            for it in items:
                if it.module != last:
                    scope.release()
                    last = it.module
                names = seen.get(it.qualname)
                if names is None:
                    names = seen[it.qualname] = set()
                    _names_in(ip.p.functions[it.qualname][0]["body"], names)
                for n in names:
                    self.by_name.setdefault(n, []).append(it)
                if it.cls:
                    for c in ip.mro(it.cls):
                        self.by_class.setdefault(c, []).append(it)

    def named_by(self, f: dict) -> List[TestItem]:
        """Tests whose body names a helper (``self.helper(...)``, ``helper(...)``): the tests a
        helper's state change reaches (of its class, for a method)."""
        its = self.by_name.get(f["name"], [])
        if its and f.get("class"):
            mine = {id(it) for it in self.by_class.get(f["class"], [])}
            its = [it for it in its if id(it) in mine]
        return its

    def callers(self, f: dict) -> List[str]:
        """The node ids of ``named_by(f)``, sorted."""
        return sorted(it.node_id for it in self.named_by(f))

    def of_class(self, cls: str) -> List[str]:
        return [it.node_id for it in self.by_class.get(cls, [])]


def _names_in(node, out: Set[str]) -> None:
    """Every name (``x``) and attribute name (``.x``) in an IR subtree, into ``out``.
    A loop over a stack rather than a recursion: about twice as fast on Django's test bodies."""
    if type(node) is not tuple and type(node) is not list:
        return
    stack = [node]
    pop, push, add = stack.pop, stack.append, out.add
    while stack:
        n = pop()
        if len(n) >= 2:
            head = n[0]
            if head == "name":
                if type(n[1]) is str:
                    add(n[1])
            elif head == "attr" and len(n) >= 3 and type(n[2]) is str:
                add(n[2])
        for x in n:
            if type(x) is tuple or type(x) is list:
                push(x)


_REGISTERS = ("addCleanup", "addClassCleanup", "addfinalizer", "callback")


def _finalizers(s: dict) -> Dict[str, Set[str]]:
    """Functions of the module registered with addfinalizer / addCleanup, by the function that
    registers them: a nested function, a module-level one, a method of its class through
    ``self.name``. They are teardown code (restores, not mutations)."""
    out: Dict[str, Set[str]] = {}
    if not may_name(s, _REGISTERS):
        return out   # the file never names one (its names hold every attribute it uses)
    fns = s["functions"]
    for qn, f in fns.items():
        for node in calls_in(f["body"]):
            fn = node[1]
            if fn[0] == "attr" and fn[2] in _REGISTERS:
                for a in node[2][:1]:   # the callable (addCleanup passes the others to it)
                    found = None
                    if a[0] == "name":   # a nested function, else a module-level one
                        found = next((c for c in (f"{qn}.<locals>.{a[1]}", f"{s['module']}.{a[1]}")
                                      if c in fns), None)
                    elif a[0] == "attr" and a[1] == ("name", "self") and f.get("class") and \
                            f"{f['class']}.{a[2]}" in fns:
                        found = f"{f['class']}.{a[2]}"
                    if found is not None and found != qn:
                        out.setdefault(qn, set()).add(found)
    return out




def _ht3_finding(m, path: str, tests: List[str], func: str) -> Finding:
    if m.code == "HT301":
        msg = "importlib.reload() re-runs the module's top level and resets its state" + (
            f" ({m.what})" if m.what else "") + " for every test that runs after this one"
    elif m.code == "HT302":
        msg = f"{m.what} changes the process environment and nothing restores it: later tests see the change"
    elif m.code == "HT303":
        msg = f"{m.what}: module state changed and never restored, so later tests see it"
    else:
        msg = f"{m.what}: process-wide state changed and never restored"
    line, col, end_line, end_col = m.pos
    return Finding(m.code, severity(m.code), path, line, col, end_line or line, end_col or col, msg, tests, [],
                   None, fix=_HT3_FIX[m.code], function=func, anchor=m.what)


def _inventory(runs) -> List[dict]:
    """Per test: every I/O operation it reaches, and whether (and by what) it is controlled."""
    out = []
    for run in sorted(runs, key=lambda r: r.item.node_id):
        ops: Dict[tuple, dict] = {}
        for e in run.events:
            key = (e.path, e.pos[0], e.pos[1], e.category)
            if key in ops and ops[key]["status"] == "uncontrolled":
                continue
            if e.missed:
                status, why = "controlled", "reached through a binding a patch misses (see HT205)"
            elif e.verdict == UNCONTROLLED:
                status, why = "uncontrolled", _describe_origin(e.origin) if e.category not in ("clock",) else \
                    "the real clock"
            elif e.verdict == UNKNOWN:
                status, why = "unknown", "an origin the analysis cannot follow"
            else:
                status, why = "controlled", e.reason or "a controlled value"
            ops[key] = {"category": e.category, "path": e.path, "line": e.pos[0], "operation": e.call,
                        "status": status, "by": why}
        items = [ops[k] for k in sorted(ops)]
        out.append({"test": run.item.node_id, "operations": items,
                    "uncontrolled": sum(1 for o in items if o["status"] == "uncontrolled"),
                    "unknown": sum(1 for o in items if o["status"] == "unknown")})
    return out


def _wants(config: Config, codes) -> bool:
    return any(_selected(c, config.select, config.ignore) for c in codes)


def _ht2(runs, sweep_events, import_events, ip: I.Interp, runner: Runner, files_by_module) -> List[Finding]:
    """HT201 (path constants computed at import and written through, or derived from the
    home folder / environment / working directory and read), HT202 (a redirected base
    whose import-time derivatives a test still uses), HT205 (patches that miss)."""
    from .summarise import unparse as hints

    out: List[Finding] = []
    summaries = ip.p.summaries
    # -- HT201
    usage: Dict[tuple, dict] = {}
    consumers: Dict[tuple, set] = {}
    for ev in list(sweep_events) + [e for e in import_events if e.category == "file"]:
        for o in ev.targets:
            for c in _constants(o):
                key = (c.path, c.line, c.expr)
                u = usage.setdefault(key, {"origin": c, "write": False, "read": False})
                u["write"] = u["write"] or ev.write
                u["read"] = u["read"] or not ev.write
                consumers.setdefault(key, set()).add((ev.path, ev.pos))
    tests_at: Dict[tuple, set] = {}
    for run in runs:
        for ev in run.events:
            if ev.category == "file":
                tests_at.setdefault((ev.path, ev.pos), set()).add(run.item.node_id)
    for key, u in sorted(usage.items(), key=lambda kv: (kv[0][0] or "", kv[0][1] or 0, kv[0][2])):
        c: Origin = u["origin"]
        if not c.inner or all(i.kind == "literal" for i in c.inner):
            continue  # a literal path is not HT201
        if c.module is None:
            continue  # class attributes: not module-level (docs/limits.md)
        leaves = {b.kind for b in I._bases(c)}
        external = leaves & {"home", "environment", "cwd"}
        if not (u["write"] or external):
            continue
        tests = sorted(set().union(*(tests_at.get(p, set()) for p in consumers.get(key, ()))) or [])
        base = _describe_base(c)
        what = "written through" if u["write"] else "read"
        msg = f"{c.expr} is a path computed at import from {base} and {what}; a test cannot redirect it " \
              f"by patching what it was computed from"
        fix = (f"compute the path at call time (a function returning it), or have every test that reaches it "
               f"monkeypatch.setattr the module's {c.expr} itself")
        out.append(Finding("HT201", severity("HT201"), c.path, c.line, 1, c.line, 1 + len(c.expr), msg, tests, [],
                           {"kind": "module-constant", "path": c.path, "line": c.line, "expression": c.expr,
                            **({"derived_from": sorted(leaves)[0]} if leaves else {})},
                           fix=fix, anchor=c.expr))
    # -- HT202: one per patch statement
    by_site: Dict[tuple, dict] = {}
    for run in runs:
        for site, base, derived, spath, spos in run.escapes:
            e = by_site.setdefault(site, {"bases": {}, "derived": {}, "tests": set(), "sinks": set()})
            e["bases"][(base.kind, base.expr, base.module)] = base
            e["derived"][(derived.path, derived.line, derived.expr)] = derived
            e["tests"].add(run.item.node_id)
            e["sinks"].add((spath, spos))
    for site, e in sorted(by_site.items()):
        path, pos = site
        names = sorted({d.expr for d in e["derived"].values()})
        bases = sorted({("HOME" if b.kind == "home" else b.expr) for b in e["bases"].values()})
        lines = _ht202_hint(site, e, summaries, hints)
        msg = (f"redirects {', '.join(bases)}, but code this test reaches uses {', '.join(names)}, derived from it "
               f"at import, which still point{'s' if len(names) == 1 else ''} at the original")
        fix = "also redirect the derived bindings:\n" + "\n".join(lines) + "\n" + _call_time_shape(e, summaries, hints)
        out.append(Finding("HT202", severity("HT202"), path, pos[0], pos[1], pos[2], pos[3], msg,
                           sorted(e["tests"]), [], None, fix=fix, function="<patch>",
                           anchor=f"patch({', '.join(bases)})"))
    # -- HT205: one per patch statement
    by_site2: Dict[tuple, dict] = {}
    for run in runs:
        for site, patched, binding, kind in run.misses:
            e = by_site2.setdefault(site, {"items": set(), "tests": set()})
            e["items"].add((patched, binding, kind))
            e["tests"].add(run.item.node_id)
    for site, e in sorted(by_site2.items()):
        path, pos = site
        items = sorted(e["items"])
        if all(k == "binding" for _, _, k in items):
            bindings = sorted({b for _, b, _ in items})
            patched = sorted({p for p, _, _ in items})
            msg = (f"patches {', '.join(patched)}, but the code this test reaches looks it up as "
                   f"{', '.join(bindings)} (its own `from ... import` binding), which keeps the original")
            fix = "patch where it is looked up: " + ", ".join(f'patch("{b}")' for b in bindings)
        else:
            what = sorted({b for _, b, _ in items})
            msg = f"freezes the clock, but {', '.join(what)} {'was' if len(what) == 1 else 'were'} bound before " \
                  f"the freeze and still read{'s' if len(what) == 1 else ''} the real clock"
            fix = "compute the value at call time: a default of None, or call the clock function directly"
        out.append(Finding("HT205", severity("HT205"), path, pos[0], pos[1], pos[2], pos[3], msg,
                           sorted(e["tests"]), [], None, fix=fix, function="<patch>",
                           anchor="; ".join(f"{p}->{b}" for p, b, _ in items)))
    return out


def _call_time_shape(e, summaries, hints) -> str:
    d = sorted(e["derived"].values(), key=lambda x: (x.module or "", x.line or 0))[0]
    s = summaries.get(d.module or "")
    expr = hints.module_binding(s, d.expr) if s is not None else None
    body = hints.unparse(expr) if expr is not None else "..."
    return f"or compute it at call time: `def {d.expr.lower()}(): return {body}`"


def _constants(o: Origin):
    """``o`` and every module constant it was derived from."""
    out = []
    todo = [o]
    seen = set()
    while todo:
        x = todo.pop()
        if x in seen:
            continue
        seen.add(x)
        if x.kind == "module-constant":
            out.append(x)
            todo.extend(x.inner)
    return out


def _describe_base(c: Origin) -> str:
    parts = []
    for i in c.inner:
        if i.kind == "module-constant":
            parts.append(f"the constant {i.expr}")
        elif i.kind == "project-file":
            parts.append("__file__")
        elif i.kind == "environment":
            parts.append(f"the environment variable {i.expr}")
        elif i.kind == "home":
            parts.append("the home folder")
        elif i.kind == "cwd":
            parts.append("the working directory")
    return ", ".join(sorted(set(parts))) or "other values"


def _ht202_hint(site, e, summaries, hints) -> List[str]:
    """Ready-to-paste monkeypatch lines: every derived binding, valued from the test's own
    replacement of the base."""
    path, pos = site
    call = None
    for s in summaries.values():
        if s["path"] == path:
            call = hints.find_call(s, pos)
            if call is not None:
                break
    subst: Dict = {}
    if call is not None:
        args = call[2]
        fname = call[1][2] if call[1][0] == "attr" else ""
        if fname == "setenv" and len(args) >= 2 and args[0][0] == "lit":
            subst[("env", args[0][1])] = hints.unparse(args[1])
        elif fname == "setattr" and len(args) >= 3 and args[1][0] == "lit":
            subst[args[1][1]] = hints.unparse(args[2])
        elif fname == "setattr" and len(args) == 2 and args[0][0] == "lit":
            subst[args[0][1].rsplit(".", 1)[-1]] = hints.unparse(args[1])
    lines = []
    derived = sorted(e["derived"].values(), key=lambda d: (d.module or "", d.line or 0))
    # intermediate constants between the base and each derived one, in binding order
    chain: Dict[tuple, Origin] = {}
    base_keys = {(b.expr, b.module) for b in e["bases"].values()}
    for d in derived:
        for c in _constants(d):
            if (c.expr, c.module) not in base_keys and any(
                    (b.expr, b.module) in base_keys or b.kind == "environment" for b in I._bases(c)):
                chain[(c.module or "", c.line or 0, c.expr)] = c
    for key in sorted(chain):
        c = chain[key]
        s = summaries.get(c.module or "")
        expr = hints.module_binding(s, c.expr) if s is not None else None
        value = hints.unparse(expr, subst) if expr is not None else "..."
        subst[c.expr] = value
        lines.append(f'monkeypatch.setattr("{c.module}.{c.expr}", {value})')
    return lines


def _split_targets(targets: Sequence[str], cwd: Path) -> Tuple[List[Path], List[Tuple[Path, Optional[str], str]]]:
    """The targets' paths (resolved against ``cwd``); and where any target is a node id, every
    target as ``(its file's or folder's resolved path, what follows its first "::" or None for a
    plain path, the target as given)``, else no entries."""
    paths: List[Path] = []
    picks: List[Tuple[Path, Optional[str], str]] = []
    for t in targets:
        file_part, sep, rest = t.partition("::")
        p = (cwd / file_part).resolve()
        if not p.exists():
            raise UsageError(f"{file_part}: no such file or folder")
        paths.append(p)
        picks.append((p, rest if sep else None, t))
    return paths, picks if any(rest is not None for _p, rest, _t in picks) else []


def _common_dir(paths: List[Path]) -> Path:
    dirs = [p if p.is_dir() else p.parent for p in paths]
    common = Path(os.path.commonpath([str(d) for d in dirs]))
    return common


def _under(p: Path, d: Path) -> bool:
    try:
        p.relative_to(d)
        return p != d
    except ValueError:
        return False


def _rooted_node_id(path: Path, rest: str, root: Path) -> Optional[str]:
    """A node id as the report spells it (the file relative to the rootdir), from its file's
    resolved path: ``./tests/x.py``, ``tests//x.py``, ``../tests/x.py`` from ``tests/`` and an
    absolute path all name the same test, as they do for pytest. None outside the rootdir."""
    try:
        rel = path.relative_to(root).as_posix()
    except ValueError:
        return None
    return f"{rel}::{rest}"


def _node_match(node_id: str, want: str) -> bool:
    want = want.split("[", 1)[0]   # a parameter id selects the test (its cases are one item here)
    return node_id == want or node_id.startswith(want + "::")


# ---------------------------------------------------------------------- findings
def _import_closure(runner: Runner, mods: Iterable[str], summaries: Dict[str, dict]) -> Set[str]:
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
            for full in runner.imports_of(m).values():
                out.add(full)
                out.add(full.rsplit(".", 1)[0])
            nxt = succ[m] = tuple(sorted(x for x in out if x in summaries))
        todo.extend(nxt)
    return seen


def _findings(runs, import_events, ip: I.Interp, runner: Runner, project: Project, config: Config, root: Path,
              cwd: Path, files_by_module, items: List[TestItem]):
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
            entry = agg[key] = {"ev": ev, "tests": set(), "code": code, "first": test}
        if test is not None:
            entry["tests"].add(test)
            if ev.category != "clock":   # the clock has no target to differ in
                # by what the message names (described only for a sink reached with several)
                target = ev.target if ev.category == "env" else ev.origin
                entry.setdefault("what", {}).setdefault(target, (ev, set()))[1].add(test)
            # the shown origin and trace: the first test's, and among its events the least by
            # a fixed order (evaluation order follows set iteration, which varies by process)
            if entry["first"] is None or test < entry["first"] or (
                    test == entry["first"] and _event_order(ev) < _event_order(entry["ev"])):
                entry["first"] = test
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
                add(ev, tid, _CODES[ev.category])
            elif ev.verdict == UNKNOWN:
                unknown.setdefault((ev.path, ev.pos), {"ev": ev, "tests": set()})["tests"].add(tid)

    # import-time operations: the tests whose modules (and conftests) import the module
    closure_cache: Dict[str, Set[str]] = {}
    tests_by_module: Dict[str, List[TestItem]] = {}
    for it in items:
        tests_by_module.setdefault(it.module, []).append(it)

    def importers(mod: str) -> List[TestItem]:
        out = []
        for tmod, its in tests_by_module.items():
            if tmod not in closure_cache:
                chain = runner.conftest_chain(files_by_module[tmod].rel)
                closure_cache[tmod] = _import_closure(runner, [tmod] + chain, ip.p.summaries)
            if mod in closure_cache[tmod]:
                out.extend(its)
        return out

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
            code = _CODES[ev.category]
        its = importers(ev.module)
        if not its:
            continue
        if code in ("HT203", "HT204"):
            # section 8: the tests that reach a consumer of the value (may be empty)
            key = (code, ev.path, ev.pos)
            _keep_least(agg, key, ev, code)
            agg[key]["tests"] |= {run.item.node_id for run in runs
                                  if (ev.path, ev.pos[0]) in run.consumed and run.item in its}
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
    for (code, path, pos), entry in agg.items():
        ev: I.SinkEvent = entry["ev"]
        f = _make_finding(code, ev, sorted(entry["tests"]), runner, entry.get("what"))
        findings.append(f)
        reported_pos.add((path, pos))
    unknown_list = [{"path": p, "line": pos[0], "column": pos[1], "operation": e["ev"].call,
                     "category": e["ev"].category,
                     "tests": sorted(e["tests"])}
                    for (p, pos), e in sorted(unknown.items()) if (p, pos) not in reported_pos]
    return findings, unknown_list


def _keep_least(agg: Dict[tuple, dict], key: tuple, ev: I.SinkEvent, code: str) -> None:
    """An import-time event for ``key``: kept unless a test's event or a lesser one is there."""
    entry = agg.get(key)
    if entry is None:
        agg[key] = {"ev": ev, "tests": set(), "code": code, "first": None}
    elif entry["first"] is None and _event_order(ev) < _event_order(entry["ev"]):
        entry["ev"] = ev


def _widen_statement_spans(findings: List[Finding], by_path: Dict[str, dict]) -> None:
    """Findings anchored at a whole statement know only its line (statement IR keeps lines):
    give them the statement's span, which the summary records per line."""
    for f in findings:
        if f.line == f.end_line and f.column == f.end_column and f.path in by_path:
            span = by_path[f.path].get("spans", {}).get(str(f.line))
            if span:
                f.column, f.end_line, f.end_column = span


def _event_order(ev: I.SinkEvent) -> tuple:
    o = ev.origin
    okey = (o.kind, o.expr, o.path or "", o.line or 0, o.value or "") if o is not None else ()
    return (okey, tuple((p or "", ln or 0, fn or "") for p, ln, fn in ev.trace), ev.target)


def _origin_json(o: Optional[Origin]) -> Optional[dict]:
    if o is None:
        return None
    kind = o.kind
    if kind == "project-file":
        kind = "literal"
    out = {"kind": kind, "path": o.path, "line": o.line, "expression": o.expr if kind != "literal" else (
        repr(o.value) if o.value is not None else o.expr)}
    if o.kind in ("module-constant", "default-argument") and o.inner:
        leaf = _leaf(o)
        if leaf is not None and leaf.kind != o.kind:
            out["derived_from"] = "literal" if leaf.kind == "project-file" else leaf.kind
    return out


def _leaf(o: Origin) -> Optional[Origin]:
    while o.kind in ("module-constant", "default-argument") and o.inner:
        nxt = next((i for i in o.inner if i.kind not in ("test-value",)), o.inner[0])
        o = nxt
    return o


def _describe_origin(o: Optional[Origin]) -> str:
    if o is None:
        return "an uncontrolled value"
    loc = f", {o.path}:{o.line}" if o.path and o.line else ""
    if o.kind == "module-constant":
        leaf = _leaf(o)
        src = ""
        if leaf is not None and leaf is not o:
            if leaf.kind == "environment":
                src = f", from the environment variable {leaf.expr}"
            elif leaf.kind == "home":
                src = ", from the home folder"
            elif leaf.kind == "literal":
                src = f", the literal {leaf.value!r}" if leaf.value is not None else ""
            elif leaf.kind == "project-file" and leaf.room is not None and leaf.room < 0:
                src = ", built from __file__, above the project root"
            elif leaf.kind == "project-file":
                src = ", built from __file__ (inside the project)"
            elif leaf.kind == "cwd":
                src = ", from the working directory"
        return f"{o.expr} (a module constant{loc}{src})"
    if o.kind == "environment":
        return f"the environment variable {o.expr}"
    if o.kind == "literal" and o.expr[:1] not in ("'", '"'):
        return f"{o.expr} ({o.value!r}{loc})"
    if o.kind == "literal":
        return f"the literal {o.value!r} in the code{loc}" if not o.in_test else f"the literal {o.value!r}{loc}"
    if o.kind == "project-file" and o.room is not None and o.room < 0:
        return f"a path above the project root (from __file__{loc})"
    if o.kind == "project-file":
        return f"a path inside the project tree (from __file__{loc})"
    if o.kind == "default-argument":
        return f"the default argument {o.expr}{loc}"
    if o.kind == "library-default":
        return f"the library's default target ({o.expr}{loc})"
    if o.kind == "home":
        return f"the home folder ({o.expr}{loc})"
    if o.kind == "cwd":
        return f"the working directory ({o.expr}{loc})"
    if o.kind == "clock":
        return "the real clock"
    return o.expr or o.kind


def _fix_hint(cat: str, o: Optional[Origin], ev: I.SinkEvent) -> str:
    kind = o.kind if o else ""
    in_test_body = len(ev.trace) == (2 if ev.via_fixture else 1) and not ev.import_time   # a test or fixture body
    if in_test_body and cat == "file":
        return "build the path from tmp_path (or monkeypatch.chdir(tmp_path) before using relative paths)"
    if in_test_body and cat == "connection":
        return "connect to a tmp_path file or an in-memory database (\":memory:\", \"sqlite://\")"
    if cat == "clock":
        return ("freeze the clock in the test (freezegun.freeze_time, time_machine.travel, or the freezer fixture), "
                "or pass the time in as a parameter")
    if cat == "env":
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


def _what_reached(ev: I.SinkEvent) -> str:
    """How a finding's message names what a (not clock) sink operates on."""
    if ev.category == "env":
        return f"the environment variable {ev.target}"
    return _describe_origin(ev.origin)


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
    if not rest:
        return ""
    parts = [f"{t}" + (f" and {n - 1} more reach" if n > 1 else " reaches") + f" it with {w}" for t, w, n in rest[:2]]
    more = f"; {len(rest) - 2} more targets" if len(rest) > 2 else ""
    return "; " + "; ".join(parts) + more


def _make_finding(code: str, ev: I.SinkEvent, tests: List[str], runner: Runner,
                  what: Optional[Dict[Any, Tuple[I.SinkEvent, Set[str]]]] = None) -> Finding:
    """The finding for sink event ``ev`` reached by ``tests``; ``what``: the targets the tests
    reach the sink with (``_others``)."""
    line, col, end_line, end_col = ev.pos
    trace = [TraceStep(p, ln, fn) for p, ln, fn in ev.trace]
    func = ev.trace[-1][2] if ev.trace else "<module>"
    o = ev.origin
    cat = ev.category
    if code in ("HT203", "HT204"):
        if code == "HT203":
            msg = f"environment variable {ev.target} read at import time; a test's setenv cannot change it"
            fix = "read the variable at call time, or set it in session configuration (pytest-env, conftest)"
        elif ev.target == "capture":
            msg = f"{ev.call} captured at import time (a function object bound once); freezing the clock in a " \
                  f"test cannot reach it"
            fix = "look the clock function up at call time (e.g. `time.monotonic()` inside the function)"
        else:
            msg = f"{ev.call}() read at import time; freezing the clock in a test cannot change it"
            fix = "read the clock at call time (a default of None, then `x = now() if x is None else x`)"
        origin = _origin_json(o) if code == "HT203" else {"kind": "clock", "path": ev.path, "line": line,
                                                          "expression": f"{ev.call}()"}
        return Finding(code, severity(code), ev.path, line, col, end_line, end_col, msg, tests, trace, origin,
                       fix=fix, function=func, anchor=f"{ev.call}({ev.target})")
    who = func.rsplit(".", 1)[-1] if func != "<module>" else "module import"
    if ev.import_time:
        where = "at import"
        subject = f"importing {ev.module}" if ev.module else "importing the test module"
    else:
        where = ""
        subject = f"{who}()"
    if cat == "clock":
        msg = f"{subject} reads the real clock ({ev.call}()) with no frozen clock"
    elif cat == "env":
        msg = f"{subject} reads the environment variable {ev.target}, which the test does not set"
    else:
        verb = {"connection": f"opens a {ev.call} connection to", "file": f"{'writes' if ev.write else 'reads'} "
                f"({ev.call})", "network": f"sends a request ({ev.call}) to", "subprocess": f"runs ({ev.call})"}[cat]
        msg = f"{subject} {verb} {_describe_origin(o)}"
        if where:
            msg += f" {where}"
    if tests:
        msg += f"; not controlled by {tests[0]}" + (f" and {len(tests) - 1} more" if len(tests) > 1 else "")
    msg += _others(ev, what)
    return Finding(code, severity(code), ev.path, line, col, end_line, end_col, msg, tests, trace,
                   _origin_json(o) if cat != "clock" else {"kind": "clock", "path": ev.path, "line": line,
                                                          "expression": f"{ev.call}()"},
                   fix=_fix_hint(cat, o, ev), function=func, anchor=f"{ev.call}({ev.target})")


def _filter(findings: List[Finding], config: Config, ip: I.Interp, root: Path, cwd: Path,
            report_unused: bool = False, def_lines: Optional[Dict[str, Tuple[str, int]]] = None) -> List[Finding]:
    """Apply select/ignore, per-file-ignores and inline suppressions; add HT900 for inline
    suppressions of HT4xx (always) and, with ``report_unused``, for suppressions that
    suppress nothing."""
    out = []
    supp_by_path: Dict[str, Dict[str, List[str]]] = {}
    for s in ip.p.summaries.values():
        supp_by_path[s["path"]] = s.get("suppressions", {})
    used: Set[Tuple[str, str]] = set()
    for f in findings:
        if not _selected(f.code, config.select, config.ignore):
            continue
        rel = _rel_to(root, cwd, f.path)
        if any(fnmatch.fnmatch(rel, pat) and _selected(f.code, pfx, []) for pat, pfx in config.per_file_ignores.items()):
            continue
        supp = supp_by_path.get(f.path, {})
        hit = None
        for ln in range(f.line, f.end_line + 1):
            codes = supp.get(str(ln), [])
            if codes and not f.code.startswith("HT4") and ("*" in codes or any(f.code.startswith(c) for c in codes)):
                hit = str(ln)
                break
        if hit is not None:
            used.add((f.path, hit))
            continue
        if f.tests and def_lines and not f.code.startswith("HT4"):
            # a suppression on a test's def line suppresses the finding for that test
            kept = []
            for t in f.tests:
                path, line = def_lines.get(t, ("", 0))
                codes = supp_by_path.get(path, {}).get(str(line), [])
                if codes and ("*" in codes or any(f.code.startswith(c) for c in codes)):
                    used.add((path, str(line)))
                else:
                    kept.append(t)
            if not kept:
                continue
            if len(kept) != len(f.tests):
                f.tests = kept
        out.append(f)
    for path, supp in sorted(supp_by_path.items()):
        for ln, codes in sorted(supp.items(), key=lambda kv: int(kv[0])):
            line = int(ln)
            ht4 = [c for c in codes if c.startswith("HT4")]
            unknown = [c for c in codes if c != "*" and not any(r.startswith(c) for r in RULES)]
            if unknown:   # can never suppress anything: a misspelt code, said whatever the flags
                out.append(Finding("HT900", severity("HT900"), path, line, 1, line, 1,
                                   f"inline suppression of {', '.join(unknown)}: no rule has that code",
                                   fix="use a code `hermetic rules` lists", anchor=f"ignore[{','.join(codes)}]"))
            elif ht4:
                out.append(Finding("HT900", severity("HT900"), path, line, 1, line, 1,
                                   f"inline suppression of {', '.join(ht4)}: production-guard findings cannot be "
                                   f"suppressed inline", fix="list the test under [tool.hermetic.guard] exempt",
                                   anchor=f"ignore[{','.join(codes)}]"))
            elif report_unused and (path, ln) not in used:
                out.append(Finding("HT900", severity("HT900"), path, line, 1, line, 1,
                                   f"inline suppression of {', '.join(codes)} suppresses nothing",
                                   fix="remove the comment", anchor=f"ignore[{','.join(codes)}]"))
    return [f for f in out if f.code != "HT900" or _selected("HT900", config.select, config.ignore)]


def baseline_problem(data) -> Optional[str]:
    """Why ``data`` (a parsed JSON file) is not a baseline ``baseline_json`` writes, or None:
    ``{"version": 1, "findings": [{"fingerprint": "hermetic/v1:..."}, ...]}``, each entry a
    fingerprint or an object holding one."""
    if not isinstance(data, dict) or not isinstance(data.get("findings"), list):
        return "not a hermetic baseline (an object with a \"findings\" list)"
    if data.get("version") != 1:
        return f"baseline version {data.get('version')!r}; this hermetic reads version 1"
    for e in data["findings"]:
        fp = e.get("fingerprint") if isinstance(e, dict) else e
        if not isinstance(fp, str) or not fp.startswith("hermetic/v1:"):
            return f"an entry without a hermetic fingerprint: {json.dumps(e)[:80]}"
    return None


def apply_baseline(report: Report, baseline: dict) -> int:
    """Keep the findings whose fingerprint the baseline does not hold; return how many
    baseline entries matched nothing (fixed since the baseline was written)."""
    known: Dict[str, int] = {}
    for e in baseline.get("findings", []):
        fp = e.get("fingerprint") if isinstance(e, dict) else e
        if isinstance(fp, str):
            known[fp] = known.get(fp, 0) + 1
    matched = set()
    kept = []
    for f in report.findings:
        if f.fingerprint in known:
            matched.add(f.fingerprint)
        else:
            kept.append(f)
    report.findings = kept
    return sum(1 for fp in known if fp not in matched)


def baseline_json(report: Report) -> str:
    import json

    entries = [{"fingerprint": f.fingerprint, "code": f.code, "path": f.path} for f in report.findings]
    return json.dumps({"version": 1, "tool": "hermetic", "findings": entries}, indent=2) + "\n"


def _rel_to(root: Path, cwd: Path, path: str) -> str:
    try:
        return (cwd / path).resolve().relative_to(root).as_posix()
    except ValueError:
        return path


def _selected(code: str, select: List[str], ignore: List[str]) -> bool:
    """The most specific matching prefix decides; between a select and an ignore of the same
    length the ignore wins (``--select HT1 --ignore HT1`` reports nothing, as in ruff)."""
    sel = max((len(p) for p in select if code.startswith(p)), default=-1)
    ign = max((len(p) for p in ignore if code.startswith(p)), default=-1)
    return sel >= 0 and sel > ign


def _fingerprints(findings: List[Finding]) -> None:
    counts: Dict[str, int] = {}
    for f in findings:
        o = f.origin or {}
        basis = "\x1f".join([f.code, f.path, f.function, " ".join(f.anchor.split()), str(o.get("kind", "")),
                             str(o.get("expression", ""))])
        n = counts.get(basis, 0)
        counts[basis] = n + 1
        f.fingerprint = "hermetic/v1:" + hashlib.sha256(f"{basis}\x1f{n}".encode()).hexdigest()[:32]


def touching_files(findings: List[Finding], changed: List[str], cwd: Path) -> List[Finding]:
    """The findings whose anchor, trace or origin lies in one of the changed files."""
    rel = {_display(Path(c), cwd.resolve()) for c in changed}

    def touches(f: Finding) -> bool:
        paths = {f.path} | {s.path for s in f.trace} | {t.split("::", 1)[0] for t in f.tests}
        if f.origin and f.origin.get("path"):
            paths.add(f.origin["path"])
        return bool(paths & rel)

    return [f for f in findings if touches(f)]


def findings_at_revision(rev: str, targets: Sequence[str], cwd: Path, config: Optional[Config],
                         report_unused: bool) -> Set[str]:
    """Fingerprints of the same check on git revision ``rev`` (exported with ``git archive``
    into a temporary folder, so the repository itself is not touched). Raises UsageError
    outside a git repository or for an unknown revision."""
    import subprocess
    import tarfile
    import tempfile

    def git(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True)

    top = git("rev-parse", "--show-toplevel")
    if top.returncode != 0:
        raise UsageError("--diff needs a git repository: " + (top.stderr.decode(errors="replace").strip().splitlines()
                                                              or ["not a git repository"])[-1])
    if git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}").returncode != 0:
        raise UsageError(f"--diff: unknown revision {rev!r}")
    root = Path(top.stdout.decode().strip())
    sub = cwd.resolve().relative_to(root.resolve())
    with tempfile.TemporaryDirectory(prefix="hermetic-diff-") as tmp:
        archive = Path(tmp) / "rev.tar"
        with archive.open("wb") as fh:
            proc = subprocess.run(["git", "archive", "--format=tar", rev], cwd=root, stdout=fh)
        if proc.returncode != 0:
            raise UsageError(f"--diff: cannot export revision {rev!r}")
        tree = Path(tmp) / "tree"
        with tarfile.open(archive) as tar:
            if hasattr(tarfile, "data_filter"):
                tar.extractall(tree, filter="data")
            else:  # pragma: no cover - Python < 3.12 without the filter backport
                tar.extractall(tree)
        base_cwd = tree / sub
        if not base_cwd.is_dir():
            return set()
        try:
            report, _cfg = run_check(list(targets), base_cwd, config=config, report_unused_suppressions=report_unused)
        except UsageError:
            return set()
        return {f.fingerprint for f in report.findings}
