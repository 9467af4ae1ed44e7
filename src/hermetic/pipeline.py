"""The stages of `hermetic check` that analyse: link, collect, analyse, rules and report
(``analyse_and_report``), after ``api`` found no stored result for the run's inputs and
summarised its files.

A warm run (the whole-run result cache holds the answer) never imports this module, nor the
analysis it imports: ``api`` imports it while the parse workers work (``_summarise``).
"""
from __future__ import annotations

import copy
import gc
import time
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Dict, List, Optional, Tuple

from . import runstate
from .analyse import interp as I
from .analyse.effects import effects_of, function_effects
from .analyse.limits import budget_cut
from .analyse.runner import Runner, TestItem
from .analyse.runs import INTERNAL_ERROR
from .analyse.shipped import Shipped
from .analyse.values import lit
from .config import Config
from .discover.targets import UsageError, is_under, node_matches, rooted_node_id
from .engine import reuse as RU
from .engine import workers
from .engine.entry import blob
from .report.assemble import report_to_cache, unresolved_list, widen_statement_spans
from .report.baseline import set_fingerprints
from .report.filters import filter_findings, wants
from .report.inventory import inventory_of
from .report.model import FileError, Finding, Report
from .rules.facts import Facts
from .rules.guard import ht4_findings
from .rules.import_time import constants_of, ht2_findings
from .rules.outcome import Outcome
from .rules.state_leaks import ht3_findings
from .rules.uncontrolled import import_closure, sink_findings
from .runstate import Run, phase_done


@dataclass
class _Analysis:
    """What ``_analyse`` hands ``_rules`` (``done``: ``parallel.analyse``'s result; ``reused``:
    ``reuse.plan``'s; ``prev``: the last analysis entry, its parts loaded)."""
    done: Any
    reused: Any
    prev: Optional[dict]
    collection_deps: Dict[str, str]   # qualified name -> body digest of the functions collection ran
    import_events: List[I.SinkEvent]   # the sinks the modules' import reached


def analyse_and_report(run: Run) -> Tuple[Report, Config]:
    """Link, collect, analyse, rules, report (``api``'s module docstring), from ``run.summaries``."""
    # summaries live as long as the run: the collector is off for it (``run_check``), but the
    # analysis workers forked from here collect by hand, and frozen objects are not scanned
    # (nor their pages copied into the workers by the scan)
    gc.freeze()
    run.phase_start = time.perf_counter()

    # linking and the interpreter work on summaries only
    kept = _link(run)
    if kept is not None:
        outcome, ht3, effects, swept = kept
        phase_done(run, "link")
        run.stats.update(analysis_processes=1, tests_reused=outcome.tests, tests_analysed=0, collection="reused")
        # the outcome with the new sweep roots' notes, kept before the rules below change its findings
        run.outcome = outcome
        run.new_entry = RU.carried(run.ready["prev"], run.module_keys, run.summaries, ht3, effects,
                                   blob(outcome.to_dict()) if swept else None)
    else:
        run.items = _collect(run)
        phase_done(run, "link")
        run.stats["collection"] = "run"
        run.outcome, run.new_entry = _rules(run, _analyse(run))
    return _report(run)


def _fresh_runner(run: Run) -> Runner:
    """A pytest model over ``run.program`` with an interpreter in its uncollected state."""
    return Runner(I.Interp(run.program), {m: run.files_by_module[m] for m in run.program.summaries}, run.pytest_cfg,
                  run.config)


def _link(run: Run) -> Optional[Tuple[Outcome, Optional[tuple], Optional[Dict[str, tuple]], bool]]:
    """The program over the summaries and a fresh runner (``run.program``, ``run.runner``,
    ``run.ip``); and what ``_settled`` returns when nothing needs analysing again (a function
    appended, code no test runs edited: the last run's outcome, without collecting), else
    None. A guard's HT4xx reads module state anew: with one, always None."""
    summaries, files_by_module, pytest_cfg, config = run.summaries, run.files_by_module, run.pytest_cfg, run.config
    in_test = {m: files_by_module[m].in_test_tree for m in summaries}
    session_env: Dict[str, I.V] = {k: lit(v, pytest_cfg.inifile.name if pytest_cfg.inifile else None, 0, True)
                                   for k, v in pytest_cfg.env.items()}
    program = run.program = I.Program(summaries, in_test, run.ready["catalogue"], config, session_env)
    program.rel_paths = {m: files_by_module[m].rel for m in summaries}
    # data shipped in the checkout decides branches (``analyse.shipped``): a change to it is one to the code's
    run.digest = RU.collection_digest(run.scope + run.project.shipped_digest, summaries)
    program.shipped = Shipped(run.root, run.project.shipped)
    run.wants_ht3 = wants(config, ("HT301", "HT302", "HT303", "HT304"))
    kept = _settled(run) if config.guard is None else None
    run.runner = _fresh_runner(run)
    run.ip = run.runner.ip
    return kept


def _settled(run: Run) -> Optional[Tuple[Outcome, Optional[tuple], Optional[Dict[str, tuple]], bool]]:
    """``(outcome, HT3xx result, effects, whether new sweep roots ran)`` of the run that made
    the last analysis entry when they are this run's (``reuse.settled``; HT3xx's key still the
    same; new sweep roots, run by a fresh runner, ran as after collection), else None."""
    prev, digest, module_keys, program = run.ready["prev"], run.digest, run.module_keys, run.program
    found = RU.settled(prev, digest, module_keys, program, run.cache.get) if prev is not None else None
    if found is None:
        return None
    same, new_roots = found
    outcome = Outcome.from_dict(prev["outcome"])
    ht3 = effects = None
    if run.wants_ht3:
        old_effects = prev.get("effects") or {}
        held = {m: e[1] for m, e in old_effects.items() if isinstance(e, tuple) and len(e) == 3}
        effects = effects_of(program, held, module_keys, old_effects)[1]
        key = RU.ht3_key(digest, module_keys, program.summaries, program.in_test, outcome.fixture_users,
                         outcome.node_ids, effects)
        lazy_ran = {m: module_keys.get(m, "") for m in outcome.lazy}
        old = prev.get("ht3")
        if not RU.ht3_reusable(old, key, module_keys, lazy_ran, same):
            return None
        ht3 = old[:3] + ({m: module_keys.get(m, "") for m in old[3]}, lazy_ran)
    if new_roots and not _sweep_new_roots(_fresh_runner(run), new_roots, outcome):
        return None
    return outcome, ht3, effects, bool(new_roots)


def _sweep_new_roots(runner: Runner, roots: List[str], outcome: Outcome) -> bool:
    """Sweep ``roots`` (``reuse.settled``'s new ones, which read no module state) in
    ``runner``'s uncollected state and add what they found to ``outcome``: True when each ran
    as it would after collection (no code but its own, nothing imported, no file operation on a
    module constant, which HT201 would report). False leaves ``outcome`` as it was."""
    ip = runner.ip
    for qn in roots:   # what their defs left at import (no defaults), so no call imports their module
        ip.defaults[qn] = {}
    ip.unresolved = dict(outcome.unresolved)   # the notes they make join these as a run's would
    runs = runner.sweep_each(roots)
    for r in runs:
        mod = runner.p.functions[r.root][1]
        if r.touched or r.deps & ~ip.file_bits.get(mod, 0) or ip.import_events or any(
                constants_of(o) for ev in r.events for o in ev.targets):
            return False
    outcome.unresolved = ip.unresolved
    outcome.roots = sorted(outcome.roots + roots)
    outcome.deps = sorted(set(outcome.deps) | {m for r in runs for m in ip.files_of(r.deps)})
    return True


def _collect(run: Run) -> List[TestItem]:
    """Collection: the conftests (outermost first), then the test modules (discovery counts a
    file a test module only under the targets or testpaths, as pytest collects), imported once
    in ``run.ip``; the tests, those ``run.node_ids`` select where targets name tests. Raises
    ``UsageError`` when no test matches them."""
    ip, runner, project, root, node_ids = run.ip, run.runner, run.project, run.root, run.node_ids
    files_by_module = run.files_by_module
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


def _analyse(run: Run) -> _Analysis:
    """Analyse the collected tests, taking what the last run's entry gives (``reuse.plan``)."""
    from .engine.parallel import analyse   # imported during the parse (``_summarise``)

    ip, runner, items, config = run.ip, run.runner, run.items, run.config
    prev = RU.load_parts(run.ready["prev"])
    program = ip.p
    if config.guard is not None:
        program.import_closure = {m: import_closure(runner, [m], program.summaries) for m in program.summaries}
    # the per-test result cache: tests whose code did not change keep their results
    # the functions that ran during collection, with their bodies' digests
    collection_deps = {qn: ip.p.functions[qn][0]["body_digest"]
                       for qn in set(ip.collection_ran) if qn in ip.p.functions}
    reused = RU.plan(prev, run.digest, run.module_keys, items, ip, run.cache.get)
    done = analyse(runner, items, run.options.jobs or workers.default_jobs(), wants(config, ("HT201",)),
                   run.options.progress, reused)
    run.stats["analysis_processes"] = done.processes
    run.stats["tests_reused"] = len(reused.runs) if reused is not None else 0
    run.stats["tests_analysed"] = len(items) - run.stats["tests_reused"]
    # the rules below read the state collection left (with the modules tests imported), as each
    # test started from
    return _Analysis(done, reused, prev, collection_deps, list(ip.import_events))


def _rules(run: Run, analysis: _Analysis) -> Tuple[Outcome, dict]:
    """Run the rules on the analysis: ``(outcome, the analysis entry for this run)``; the
    outcome is what the report takes (``reuse.entry`` keeps it as it is here, before the
    rules after it change its findings)."""
    ip, runner, items, config, module_keys = run.ip, run.runner, run.items, run.config, run.module_keys
    done, reused, prev, import_events = analysis.done, analysis.reused, analysis.prev, analysis.import_events
    digest, program = run.digest, ip.p
    runs, sweep_events = done.runs, done.sweep_events
    facts = Facts(ip, runner, config, items, runs, sweep_events, import_events, run.files_by_module)
    findings = sink_findings(facts)
    findings[0].extend(ht2_findings(facts))
    ht3 = None
    effects = None
    lazy_ran = RU.ht3_ran(ip, module_keys)
    if run.wants_ht3:
        effects = function_effects(ip, module_keys, (prev or {}).get("effects"))
        ht3_key = RU.ht3_key(digest, module_keys, run.summaries, program.in_test, runner.fixture_users,
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
    for r in runs:
        ran |= r.deps
    deps = ran
    for r in done.sweep_runs:
        deps |= r.deps
    outcome = Outcome(
        findings=findings[0], unknown=findings[1], tests=len(items),
        unresolved=dict(ip.unresolved),
        inventory=inventory_of(runs, findings[0]),
        ran=ip.files_of(ran),
        sinks=len({(e.path, e.pos) for r in runs for e in r.events} | {(e.path, e.pos) for e in import_events}),
        def_lines={it.node_id: (it.path, it.def_line) for it in items},
        # what ``reuse.settled`` and HT3xx's key read of this run
        deps=sorted(set(ip.files_of(deps)) | set(lazy_ran)),
        lazy=sorted(lazy_ran),
        sweep_modules=sorted(runner.swept_modules), roots=[r.root for r in done.sweep_runs],
        # their global names, when the sweep began and at the end (``reuse.reads_no_state``)
        globals={m: sorted(set(runner.swept_globals.get(m, ())) | set(ip.globals.get(m, ())))
                 for m in runner.swept_modules},
        fixture_users={qn: sorted(users) for qn, users in runner.fixture_users.items()},
        node_ids=[it.node_id for it in items],
    )
    if not run.cache.enabled:
        return outcome, {}
    same = {k: prev["_blobs"][k] for k in RU.reused_parts(prev, reused, items, done)}
    return outcome, RU.entry(digest, module_keys, analysis.collection_deps, items, done, ip, ht3,
                             effects[1] if effects else None, same, blob(outcome.to_dict()))


def _report(run: Run) -> Tuple[Report, Config]:
    """The report from ``run.outcome``: select / ignore and suppressions, the printable form,
    sorted, fingerprinted; then this run's result and analysis entry written to the cache."""
    report, outcome, summaries, config, cache = run.report, run.outcome, run.summaries, run.config, run.cache
    report.tests = outcome.tests
    internal = {site: text for site, text in outcome.unresolved.items() if text.startswith(INTERNAL_ERROR)}
    report.unresolved_calls = unresolved_list({k: v for k, v in outcome.unresolved.items() if k not in internal})
    report.errors.extend(FileError(f"{p}:{ln}", text) for (p, ln, _c), text in sorted(internal.items()))
    # sites where a call was cut at the step budget (docs/limits.md; counted for --statistics)
    run.stats["unresolved"] = len(outcome.unresolved)
    run.stats["budget_cuts"] = sum(1 for t in outcome.unresolved.values() if budget_cut(t))
    report.inventory = outcome.inventory
    # call sites in the modules whose code the tests ran (counted from this run's summaries)
    report.calls_seen = sum(summaries[m].get("calls", 0)
                            for m in {summaries[m]["module"] for m in outcome.ran if m in summaries})
    report.sinks_seen = outcome.sinks
    report.findings, report.unknown_origins = outcome.findings, outcome.unknown
    widen_statement_spans(report.findings, {s["path"]: s for s in summaries.values()})
    def_lines = outcome.def_lines
    report.findings = filter_findings(report.findings, config, run.ip, run.root, run.cwd,
                                      run.options.report_unused_suppressions, def_lines)
    report.test_locations = {t: def_lines[t] for f in report.findings for t in f.tests if t in def_lines}
    report.make_printable()   # before the sort and the fingerprints, which follow what is shown
    report.findings.sort(key=Finding.sort_key)
    set_fingerprints(report.findings)
    cache.wait()   # the summaries are in the cache before the result that names them
    if not run.transient:
        cache.put_result(run.run_key, report_to_cache(report))
        if cache.enabled:
            cache.put_analysis(run.scope, run.new_entry)
    phase_done(run, "analyse")
    if workers.ONE_SHOT:
        # the console script ends once the report is out (``cli._exit``): freeing the summaries
        # and the interpreter's state here, object by object, would only delay that
        runstate.LEFT_FOR_EXIT.append(vars(run))
    return report, config
