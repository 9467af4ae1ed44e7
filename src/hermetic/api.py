"""`hermetic check` as a function: ``run_check`` analyses the project holding some targets and
returns a ``report.model.Report``. One call per stage (``_run_stages``):

- discover: the targets, the pytest and hermetic configuration, the project's files;
- read: the sources' bytes and content keys (a cached result for the same inputs ends the run);
- summarise: each file's summary, from the cache or the parse workers;
- link: the program and the pytest model; the last run's outcome when no test's code changed
  (``reuse.settled``), which skips the next three;
- collect, analyse (each selected test in the interpreter, ``engine.parallel``), rules (the
  ``rules`` families turn the results into findings);
- report: filters and suppressions, fingerprints; the caches written.

``RunOptions`` is what the caller asks for, ``Run`` what the stages pass on (both in
``runstate``); the stages from link on are ``pipeline``'s, imported only when a run has no
stored result, while the parse workers work (a warm run loads none of the analysis). It never imports
or executes the analysed code and writes nothing into the analysed tree but its cache folder
(``.hermetic_cache``, with its own ``.gitignore``).
"""
from __future__ import annotations

import errno
import gc
import os
import stat
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from .catalogue.loader import load as load_catalogue
from .config import Config, find_config, find_pytest_config
from .discover.project import SourceFile, discover
from .discover.targets import common_dir, display_path, split_targets
from .engine import workers
from .engine.cache import SummaryCache, serialize
from .engine.entry import scope_key
from .report.assemble import report_from_cache
from .report.model import FileError, Report
from .runstate import Run, RunOptions, phase_done, release_state  # noqa: F401  (release_state: part of the api)


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
    options = RunOptions(targets, cwd, progress, config, report_unused_suppressions, use_cache, jobs, cache_dir)

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
            return _run_check(options)
        finally:
            if not workers.ONE_SHOT:   # the console script's process ends with the report: left as is
                gc.unfreeze()   # frozen after parsing: the summaries are not garbage while the run lasts
                if was:
                    gc.enable()

    return workers.run_deep(work)


def _run_check(options: RunOptions) -> Tuple[Report, Config]:
    """Discover, then the other stages with the summary cache and an early parse worker, both
    let go however the run ends."""
    clock = time.perf_counter
    t_start = clock()
    stats: Dict[str, Any] = {"phases": {}}
    cwd = options.cwd.resolve()
    paths, node_ids = split_targets(options.targets or ["."], cwd)
    anchor = common_dir(paths) if paths else cwd
    pytest_cfg = find_pytest_config(anchor, cwd)
    root = (pytest_cfg.rootdir or anchor).resolve()
    config = options.config
    if config is None:
        config = find_config(root)
    cache_dir = Path(options.cache_dir).resolve() if options.cache_dir else None
    project = discover(root, config, pytest_cfg, [p for p in paths if p != root], skip=cache_dir)
    report = Report()
    report.statistics = stats
    stats["phases"]["discover"] = clock() - t_start

    # per-file work: source -> summary (pure), in worker processes, cached by content
    t_phase = clock()
    cache = SummaryCache(root, enabled=options.use_cache, directory=options.cache_dir)
    # a parse worker importing libcst while the files and the cache are read here
    early = workers.take_early() or (workers.EarlyWorker() if project.files else None)
    run = Run(options, cwd, stats, node_ids, pytest_cfg, root, config, project, report, cache, early, t_phase)
    try:
        done = _run_stages(run)
        done[0].root = str(root)
        return done
    finally:
        cache.wait()   # a run that failed half way does not leave its writer behind
        if early is not None:
            early.close()


def _run_stages(run: Run) -> Tuple[Report, Config]:
    """Read, summarise, link, collect, analyse, rules, report (the module docstring)."""
    entries = _read(run)
    reused = _stored_result(run)
    if reused is not None:
        run.stats.update(files=len(entries), parsed=0, cache_hits=0, jobs=0, result_cache="hit")
        phase_done(run, "parse")
        reused.statistics = run.stats
        return reused, run.config
    _summarise(run, entries)
    phase_done(run, "parse")
    from . import pipeline   # imported while the workers parsed (``_summarise``); a warm run never does
    return pipeline.analyse_and_report(run)


def _read(run: Run) -> List[Tuple[SourceFile, str, str, bytes]]:
    """Each readable source file as ``(file, its display path, its content key, its bytes)``;
    unreadable files and folders as the report's errors; ``run.run_key``, the key of the whole
    run's inputs."""
    cache, cwd, report, options = run.cache, run.cwd, run.report, run.options
    run_keys: List[str] = []
    entries: List[Tuple[SourceFile, str, str, bytes]] = []
    for exc in run.project.unreadable:
        folder = Path(os.fsdecode(exc.filename)) if exc.filename else run.root
        report.errors.append(FileError(display_path(folder, cwd), f"cannot read folder: {exc.strerror or exc}"))
    for sf in run.project.files:
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
    run.run_key = cache.key(repr((sorted(run_keys), [e.to_json() for e in report.errors], repr(run.config),
                                  repr(run.pytest_cfg), list(options.targets), str(cwd),
                                  options.report_unused_suppressions, run.project.shipped_digest)).encode(),
                            "<run>", "", False)
    run.files_read = len(run_keys)
    return entries


def _stored_result(run: Run) -> Optional[Report]:
    """The report the whole-run result cache holds for ``run.run_key``, or None (none, or a
    damaged one: the run goes on)."""
    stored = run.cache.get_result(run.run_key)
    try:
        return report_from_cache(stored, [FileError(e["path"], e["message"]) for e in stored["errors"]]) \
            if stored is not None else None
    except (KeyError, TypeError, ValueError, AttributeError):   # a damaged entry: run again
        return None


def _summarise(run: Run, entries: List[Tuple[SourceFile, str, str, bytes]]) -> None:
    """Each file's summary, from the cache or the parse workers: ``run.summaries`` (module ->
    summary, under a package's aliases too), ``run.files_by_module``, ``run.module_keys``;
    the files that failed as the report's errors. Meanwhile (``while_parsing``) the catalogue
    and the last run's analysis entry go into ``run.ready``. ``entries`` is emptied: the
    files' bytes are not needed after this."""
    cache, config, options, report, stats = run.cache, run.config, run.options, run.report, run.stats
    jobs, progress = options.jobs, options.progress
    loaded: Dict[str, dict] = {}
    to_parse: List[workers.ParseJob] = []
    for sf, disp, key, data in entries:
        if key in loaded:
            continue
        s = cache.get(key)
        if s is None:
            to_parse.append(workers.ParseJob(key, data, sf.module, disp, sf.is_package))
            loaded[key] = {}   # placeholder: a file listed twice is parsed once
        else:
            loaded[key] = s
    failed: Dict[str, str] = {k: s["error"] for k, s in loaded.items() if "error" in s}
    transient = False   # a timeout or a crash may not recur: such a run's result is not reused
    scope = run.scope = scope_key(repr(config), repr(run.pytest_cfg), list(options.targets), str(run.cwd),
                                     options.report_unused_suppressions)
    ready = run.ready

    def while_parsing() -> None:
        # what needs no summary, done while the workers parse (a one-file run's parent would
        # otherwise wait idle for its worker's libcst import, then do this)
        if not ready:
            ready["catalogue"] = load_catalogue(config)
            ready["prev"] = cache.get_analysis(scope) if cache.enabled else None
            # the analysis, imported now rather than after the parse (a warm run imports none of it)
            from . import pipeline  # noqa: F401
            from .engine import parallel  # noqa: F401

    cache.hold()   # written once the parse is over (``SummaryCache.hold`` says why)
    for res in workers.summarize_all(to_parse, jobs or workers.default_jobs(), config.file_timeout, early=run.early,
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
    run.transient = transient
    summaries, files_by_module, module_keys = run.summaries, run.files_by_module, run.module_keys
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
    entries.clear()   # the files' bytes are not needed any more
    del loaded
    cache.write_held()   # from a child process, while the linking below runs
    report.files = len({id(s) for s in summaries.values()})
    stats.update(files=run.files_read, parsed=len(to_parse), cache_hits=cache.hits,
                 jobs=min(jobs or workers.default_jobs(), len(to_parse)) if to_parse else 0, result_cache="miss")
