"""Command line: ``hermetic check``, ``rule`` / ``explain``, ``rules``, ``config``, ``inventory``,
``clean``, ``verify``. Exit codes per contract section 7.

Every command imports what it needs when it runs: ``hermetic --version`` and ``hermetic
rules`` start without the analysis (and ``check`` forks its parse worker before importing it).
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import List, NamedTuple, Optional, Tuple

import click

from . import __version__
from .cli_io import (FORMATS, check_outputs, color, main_format, print_rule_statistics, print_timings, read_json,
                     render, save, write_report)


class _Group(click.Group):
    def main(self, *args, **kwargs):  # usage errors exit 2 (click's default too); keep messages one line
        return super().main(*args, **kwargs)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="hermetic")
def cli() -> None:
    """hermetic: find the I/O your tests reach but do not control."""


class CheckOptions(NamedTuple):
    """``hermetic check``'s command line as click parsed it: one field per option (the
    comment names the option where its name differs), built once by ``check``."""
    targets: Tuple[str, ...]   # paths or node ids; none: the current folder
    fmt: str   # --output-format / --format
    output: Optional[str]
    select: Optional[str]   # comma-separated codes or prefixes, every --select joined
    ignore: Optional[str]
    fail_on: Optional[str]
    exit_zero: bool
    show_unresolved: bool
    show_unknown: bool
    report_unused_suppressions: bool
    config_file: Optional[str]   # --config
    baseline: Optional[str]
    write_baseline: Optional[str]
    extra_outputs: Tuple[str, ...] = ()   # --output-file FMT=FILE
    diff_rev: Optional[str] = None   # --diff
    touching: bool = False
    no_cache: bool = False
    cache_dir: Optional[str] = None
    jobs: Optional[int] = None
    statistics: bool = False
    timings: bool = False
    runtime_records: Tuple[str, ...] = ()   # --runtime
    min_confidence: Optional[str] = None


@cli.command()
@click.argument("targets", nargs=-1)
@click.option("--output-format", "--format", "fmt", multiple=True, metavar="FMT",
              help=f"Format of the report: {', '.join(FORMATS)} (default: text).")
@click.option("--output-file", "extra_outputs", multiple=True, metavar="FMT=FILE",
              help="Also write the report in FMT to FILE (repeatable), e.g. sarif=hermetic.sarif; "
                   "a plain FILE is --output FILE, as in ruff.")
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write the report to FILE instead of standard output.")
@click.option("--select", multiple=True, metavar="CODES", help="Comma-separated rule codes or prefixes to report (default: HT); "
                                               "repeated options add up.")
@click.option("--ignore", multiple=True, metavar="CODES", help="Comma-separated rule codes or prefixes to leave out; "
                                               "repeated options add up.")
@click.option("--fail-on", type=click.Choice(["error", "warning"]), default=None,
              help="Lowest severity that makes the exit status 1 (default: error).")
@click.option("--min-confidence", type=click.Choice(["high", "medium"]), default=None,
              help="Report only findings of this confidence or above (high: every branch on the way decided, "
                   "one target).")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--show-unresolved", is_flag=True, help="List the calls that could not be resolved.")
@click.option("--show-unknown", is_flag=True, help="List the operations whose target has an unknown origin.")
@click.option("--report-unused-suppressions", is_flag=True, help="Report inline suppressions that suppress nothing (HT900).")
@click.option("--config", "config_file", type=click.Path(dir_okay=False), default=None,
              help="Use this configuration file instead of the discovered one.")
@click.option("--diff", "diff_rev", default=None, metavar="REV",
              help="Report only findings whose fingerprint is absent when the same check runs on git revision REV.")
@click.option("--touching", is_flag=True,
              help="TARGETS are changed files (pre-commit): analyse the whole project, report the findings whose "
                   "anchor, trace or origin is in one of them.")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the summary cache (.hermetic_cache).")
@click.option("--cache-dir", type=click.Path(file_okay=False), default=None, envvar="HERMETIC_CACHE_DIR",
              help="Keep the cache here instead of ROOT/.hermetic_cache (env: HERMETIC_CACHE_DIR).")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
              help="Processes that parse files and analyse tests (default: one per CPU); "
                   "the report is the same for every count.")
@click.option("--statistics", is_flag=True,
              help="Print the number of findings per rule instead of the findings (as ruff does).")
@click.option("--timings", is_flag=True,
              help="Print the time per phase, files parsed and cache hits to standard error.")
@click.option("--runtime", "runtime_records", multiple=True, type=click.Path(dir_okay=False),
              help="Runtime record(s) from pytest --hermetic=record: mark each HT1xx finding confirmed or "
                   "not exercised (repeatable).")
@click.option("--baseline", type=click.Path(dir_okay=False), default=None,
              help="Report only findings whose fingerprint is not in this baseline file.")
@click.option("--write-baseline", type=click.Path(dir_okay=False), default=None,
              help="Write the findings' fingerprints to this baseline file.")
def check(**options) -> None:
    """Audit the tests under TARGETS (paths or pytest node ids; default: the current folder)."""
    fmt, legacy = main_format(options.pop("fmt"))
    for flag in ("select", "ignore"):   # every --select counts, as in ruff
        options[flag] = ",".join(options[flag]) if options[flag] else None
    options["extra_outputs"] = tuple(legacy) + tuple(options["extra_outputs"])
    _check(CheckOptions(fmt=fmt, **options))


def _check(opts: CheckOptions) -> None:
    """``hermetic check``: the run, then the command line's own narrowing and outputs; exits
    with the status contract section 7 gives."""
    from .config import ConfigError, rule_codes

    try:   # before any work: a misspelt code would otherwise silently select nothing
        selected = None if opts.select is None else rule_codes(_codes(opts.select), "--select", empty_ok=False)
        ignored = None if opts.ignore is None else rule_codes(_codes(opts.ignore), "--ignore")
    except ConfigError as exc:
        click.echo(f"hermetic: {exc}", err=True)
        sys.exit(2)
    extra, output = check_outputs(opts.output, opts.extra_outputs, opts.write_baseline)   # before any work
    opts = opts._replace(output=output)
    if opts.cache_dir and not opts.no_cache:
        from .engine.cache import cache_folder_problem

        problem = cache_folder_problem(Path(opts.cache_dir).resolve())
        if problem:
            click.echo(f"hermetic: --cache-dir / HERMETIC_CACHE_DIR {opts.cache_dir}: {problem}", err=True)
            sys.exit(2)
    cwd = Path.cwd()
    report, config = _run(opts, cwd)
    # the report phase's duration for --timings: a clock read only subtracted from another
    t_report = time.perf_counter()  # hermetic: ignore[HT104]
    if opts.runtime_records:
        _mark_runtime(report, opts.runtime_records, cwd)
    if selected is not None:
        config.select = selected
    if ignored:
        config.ignore = ignored
    if selected is not None or ignored:
        from .report.filters import is_selected

        report.findings = [f for f in report.findings if is_selected(f.code, config.select, config.ignore)]
    if opts.min_confidence:
        from .report.filters import at_confidence

        report.findings = at_confidence(report.findings, opts.min_confidence)
    if opts.fail_on:
        config.fail_on = opts.fail_on
    _baselines(opts, report)
    if report.tests == 0:
        click.echo("hermetic: no tests found: no file matched pytest's python_files (test_*.py and *_test.py "
                   "unless pytest's configuration says otherwise), or no function or class in them matched "
                   "python_functions / python_classes (a plugin's own collection is not read)", err=True)
    for t in opts.targets:
        if "::" in t and "[" in t:   # ``discover.targets.node_matches``
            click.echo(f"hermetic: {t} selects the whole test {t.split('[', 1)[0]}: findings name tests, "
                       f"not their parametrized cases", err=True)
    _emit(opts, report, cwd, extra)
    if opts.timings:
        report.statistics.setdefault("phases", {})["report"] = time.perf_counter() - t_report  # hermetic: ignore[HT104]
        print_timings(report)
    levels = ("error",) if config.fail_on == "error" else ("error", "warning")
    failing = any(f.severity in levels for f in report.findings) or bool(report.errors)
    from .analyse.runs import INTERNAL_ERROR
    if any(e.message.startswith(INTERNAL_ERROR) for e in report.errors):
        _exit(2)   # a bug of hermetic's (contract section 7), said once the report is out
    # a run that wrote the baseline did what it was asked: its findings are now the accepted ones
    _exit(1 if failing and not opts.exit_zero and not opts.write_baseline else 0)


def _run(opts: CheckOptions, cwd: Path):
    """``run_check`` on the targets (on the whole project for ``--touching``, then the findings
    touching them; ``--diff``: without those of the same check at the revision), with a status
    line on a terminal: ``(report, config)``. Exits 2 on bad configuration or input."""
    from .engine.workers import start_early

    start_early()   # a parse worker imports libcst while the rest starts up
    from .api import run_check
    from .config import ConfigError
    from .discover.targets import UsageError

    status = None
    if sys.stderr.isatty():
        from rich.console import Console

        status = Console(stderr=True).status("hermetic: reading files")
        status.start()
    progress = (lambda msg: status.update(f"hermetic: {msg}")) if status is not None else None
    try:
        explicit = None
        if opts.config_file:
            from .config import load_config_file

            explicit = load_config_file(Path(opts.config_file).resolve())
        changed = [str((cwd / t).resolve()) for t in opts.targets] if opts.touching else []
        check_targets = [] if opts.touching else list(opts.targets)
        report, config = run_check(check_targets, cwd, progress=progress, config=explicit,
                                   report_unused_suppressions=opts.report_unused_suppressions,
                                   use_cache=not opts.no_cache, jobs=opts.jobs or 0,
                                   cache_dir=Path(opts.cache_dir).resolve() if opts.cache_dir else None)
        if opts.touching:
            from .report.baseline import touching_files

            report.findings = touching_files(report.findings, changed, cwd)
        if opts.diff_rev:
            from .api import release_state
            from .report.baseline import findings_at_revision, is_new

            release_state()   # the run above is done with: not held through the second one
            before = findings_at_revision(opts.diff_rev, cwd, lambda base: run_check(
                check_targets, base, config=explicit, report_unused_suppressions=opts.report_unused_suppressions)[0])
            report.findings = [f for f in report.findings if is_new(f, before)]
    except ConfigError as exc:
        click.echo(f"hermetic: {exc}", err=True)
        sys.exit(2)
    except UsageError as exc:
        click.echo(f"hermetic: {exc}", err=True)
        sys.exit(2)
    except RecursionError:
        click.echo("hermetic: internal error: recursion too deep", err=True)
        sys.exit(2)
    finally:
        if status is not None:
            status.stop()
    return report, config


def _baselines(opts: CheckOptions, report) -> None:
    """``--write-baseline`` (the findings as they are now), then ``--baseline`` (the findings it
    does not hold are kept); exits 2 on a file that is no baseline."""
    if opts.write_baseline:
        from .report.baseline import baseline_json

        save(opts.write_baseline, lambda fh: fh.write(baseline_json(report)), "--write-baseline")
        click.echo(f"hermetic: wrote {len(report.findings)} findings to {opts.write_baseline}", err=True)
    if opts.baseline:
        from .report.baseline import apply_baseline, baseline_problem

        data = read_json(opts.baseline, "the baseline")
        problem = baseline_problem(data)
        if problem:
            click.echo(f"hermetic: --baseline {opts.baseline}: {problem}", err=True)
            sys.exit(2)
        report.baseline_fixed = apply_baseline(report, data)
        if report.baseline_fixed:
            click.echo(f"hermetic: {report.baseline_fixed} baseline "
                       f"{'entry no longer matches' if report.baseline_fixed == 1 else 'entries no longer match'} (fixed); "
                       f"rewrite the baseline to shrink it", err=True)


def _emit(opts: CheckOptions, report, cwd: Path, extra: List[Tuple[str, str]]) -> None:
    """The report into each ``--output-format`` file, then in ``--format`` to ``--output`` or
    standard output."""
    from .report.text import render_terminal

    for kind, dest in extra:
        write_report(kind, report, cwd, dest, opts.show_unresolved, opts.show_unknown)
    if opts.statistics:
        print_rule_statistics(report, opts.fmt, opts.output)
    elif opts.fmt != "text":
        text = render(opts.fmt, report, cwd, opts.show_unresolved, opts.show_unknown)
        if opts.output:
            save(opts.output, lambda fh: fh.write(text), "--output")
        else:
            click.echo(text, nl=False)
    else:
        if opts.output:
            save(opts.output, lambda fh: render_terminal(report, fh, color=False,
                                                           show_unresolved=opts.show_unresolved,
                                                           show_unknown=opts.show_unknown), "--output")
        else:
            render_terminal(report, sys.stdout, color=color(sys.stdout), show_unresolved=opts.show_unresolved,
                            show_unknown=opts.show_unknown)


def _mark_runtime(report, records, cwd: Path) -> None:
    """Set ``runtime`` on every finding from runtime records (``hermetic verify``'s join)."""
    import json as _json

    from .report.text import to_json
    from .runtime.recorder import RecordError
    from .runtime.verify import annotate, load_records

    try:
        loaded = load_records(list(records))
    except (RecordError, OSError, ValueError) as exc:
        click.echo(f"hermetic: --runtime: {exc}", err=True)
        sys.exit(2)
    recorded = loaded.get("rootdir") if isinstance(loaded, dict) else None
    if recorded and report.root and Path(str(recorded)).resolve() != Path(report.root).resolve():
        click.echo(f"hermetic: --runtime: the records were made in {recorded}, not in this project "
                   f"({report.root}); their tests and paths match nothing here", err=True)
    marked = annotate(_json.loads(to_json(report)), loaded, root=str(cwd))
    by_key = {(f["path"], f["line"], f["code"], f["fingerprint"]): f for f in marked["findings"]}
    for f in report.findings:
        m = by_key.get((f.path, f.line, f.code, f.fingerprint))
        if m is not None:
            f.runtime = m.get("runtime")
            f.runtime_tests = list(m.get("runtime_tests", []))


def _codes(text: str) -> List[str]:
    """A comma-separated ``--select`` / ``--ignore`` value as its codes."""
    return [c.strip() for c in text.split(",") if c.strip()]


def _toml(value) -> str:
    """``value`` written as TOML writes it (what `hermetic config` prints can be pasted back)."""
    import json as _json

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        items = ", ".join(f"{_json.dumps(str(k))} = {_toml(v)}" for k, v in value.items())
        return "{" + (f" {items} " if items else "") + "}"
    return _json.dumps(str(value))


@cli.command("config")
@click.argument("target", required=False, default=".")
@click.option("--config", "config_file", type=click.Path(dir_okay=False), default=None)
def config_cmd(target: str, config_file: Optional[str]) -> None:
    """Print the resolved configuration and where each value came from."""
    from .config import ConfigError, describe, find_config, load_config_file

    if not Path(target).exists():
        click.echo(f"hermetic: {target}: no such file or folder", err=True)
        sys.exit(2)
    try:
        cfg = load_config_file(Path(config_file).resolve()) if config_file else find_config(Path(target).resolve())
    except ConfigError as exc:
        click.echo(f"hermetic: {exc}", err=True)
        sys.exit(2)
    click.echo(f"# configuration file: {cfg.source if cfg.source else 'none (defaults)'}")
    for key, value, origin in describe(cfg):
        if value is None:
            click.echo(f"# {key} is not set    # {origin}")
        else:
            click.echo(f"{key} = {_toml(value)}    # {origin}")


@cli.command()
@click.argument("code", required=False)
@click.option("--all", "all_rules", is_flag=True, help="Every rule, as the Markdown of docs/rules.md.")
def rule(code: Optional[str], all_rules: bool) -> None:
    """Explain a rule: what it finds, why it matters, an example, the fix."""
    if all_rules:
        from .rules.registry import all_docs

        click.echo(all_docs(), nl=False)
        return
    if not code:
        click.echo("hermetic: rule: give a rule code (`hermetic rules` lists them) or --all", err=True)
        sys.exit(2)
    _explain(code)


def _explain(code: str) -> None:
    """Print rule ``code``'s documentation (``hermetic rule CODE``, ``hermetic explain CODE``);
    exit 2 for a code no rule has."""
    from .rules.registry import describe

    try:
        click.echo(describe(code))
    except KeyError:
        click.echo(f"hermetic: unknown rule code {code!r}", err=True)
        sys.exit(2)


@cli.command("inventory")
@click.argument("targets", nargs=-1)
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text", show_default=True)
def inventory_cmd(targets: List[str], fmt: str) -> None:
    """For each test: every I/O operation it reaches and how it is controlled, or not."""
    import json as _json

    from .api import run_check
    from .config import ConfigError
    from .discover.targets import UsageError

    try:
        report, _config = run_check(list(targets), Path.cwd())
    except (ConfigError, UsageError) as exc:
        click.echo(f"hermetic: {exc}", err=True)
        sys.exit(2)
    inv = report.inventory
    if fmt == "json":
        click.echo(_json.dumps({"tests": inv, "unresolved_calls": len(report.unresolved_calls),
                                "unknown_origins": len(report.unknown_origins)}, indent=2))
        return
    md = fmt == "markdown"
    if not inv:
        click.echo("hermetic: no tests under the targets", err=True)
    from .report.inventory import GROUPS, group_of

    for t in inv:
        click.echo(f"{'### ' if md else ''}{t['test']}")
        if not t["operations"]:
            click.echo(f"{'- ' if md else '  '}no I/O operation reached")
        for group, words in GROUPS:   # most consequential first
            ops = [o for o in t["operations"] if group_of(o) == group]
            if ops:
                click.echo(f"{'- ' if md else '  '}{group}" + (f" ({words}):" if words else ":"))
            for o in ops:
                click.echo(f"{'  - ' if md else '    '}{o['status']:<12} {o['category']:<10} {o['path']}:{o['line']} "
                           f"{o['operation']}: {o['by']}")
        if t["operations"] and not t["uncontrolled"]:
            click.echo(f"{'- ' if md else '  '}no uncontrolled I/O found ({_n(t['unknown'], 'operation')} with an "
                       f"unknown origin; {_n(len(report.unresolved_calls), 'unresolved call')} in the run)")
        click.echo("")


def _n(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural unless ``n`` is 1."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


@cli.command("clean")
@click.argument("target", required=False, default=".")
@click.option("--cache-dir", type=click.Path(file_okay=False), default=None, envvar="HERMETIC_CACHE_DIR",
              help="The cache folder to remove (env: HERMETIC_CACHE_DIR); default: ROOT/.hermetic_cache.")
def clean_cmd(target: str, cache_dir: Optional[str]) -> None:
    """Remove the cache of the project holding TARGET."""
    from .engine.cache import CACHE_DIR, is_cache_folder, remove_cache_folder
    from .config import find_pytest_config

    start = Path(target).resolve()
    if not start.exists():
        click.echo(f"hermetic: {target}: no such file or folder", err=True)
        sys.exit(2)
    if cache_dir:
        folder = Path(cache_dir).resolve()
    else:
        anchor = start if start.is_dir() else start.parent
        folder = ((find_pytest_config(anchor, Path.cwd()).rootdir or anchor).resolve()) / CACHE_DIR
    if not folder.is_dir():
        click.echo(f"hermetic: no cache at {folder}", err=True)
        return
    if not is_cache_folder(folder):   # only a folder hermetic made (it writes the marker first)
        click.echo(f"hermetic: {folder} does not look like a hermetic cache; left alone", err=True)
        sys.exit(2)
    if remove_cache_folder(folder):
        click.echo(f"hermetic: removed {folder}", err=True)
    else:   # files someone else put there stay
        click.echo(f"hermetic: removed the cache entries in {folder}; the other files there were left", err=True)


@cli.command("rules")
def rules_cmd() -> None:
    """List every rule: code, name, default severity, one line."""
    from .rules.registry import RULES, severity_of

    for code in sorted(RULES):
        r = RULES[code]
        by_operation = {severity_of(code, True), severity_of(code, False)}
        shown = "error/warning" if len(by_operation) > 1 else r.severity   # HT102: a write / a read
        click.echo(f"{code}  {r.name:<28} {shown:<13} {r.summary}")


@cli.command("explain")
@click.argument("code")
def explain_cmd(code: str) -> None:
    """What a rule finds, why it matters, an example and the fix (same text as `rule`)."""
    _explain(code)


@cli.command("verify")
@click.argument("inputs", nargs=-1, required=True, metavar="RECORD.json... [PATH]")
@click.option("--static", "static_file", type=click.Path(dir_okay=False), default=None,
              help="Read the static report from this file (hermetic check --format json) instead of running the check.")
@click.option("--static-root", type=click.Path(file_okay=False), default=None,
              help="The folder the --static report's paths are relative to (default: the current folder).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="Output format.")
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write the result to FILE instead of standard output.")
@click.option("--config", "config_file", type=click.Path(dir_okay=False), default=None,
              help="Use this configuration file for the static check.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when uncontrolled I/O was confirmed or missed.")
def verify_cmd(inputs: List[str], static_file: Optional[str], static_root: Optional[str], fmt: str,
               output: Optional[str], config_file: Optional[str], exit_zero: bool) -> None:
    """Join runtime records (pytest --hermetic=record) with the static report, per sink anchor.

    RECORD.json files (xdist workers' records are merged); PATH is the project to check
    (default: the records' rootdir), or give --static REPORT.json. Exit 1 when uncontrolled
    I/O ran (confirmed or missed rows), 0 otherwise, 2 on bad input.
    """
    from .config import ConfigError
    from .discover.targets import UsageError
    from .runtime.recorder import RecordError
    from .runtime.verify import (exit_status, join, load_records, render_text, static_report, static_root_problem,
                                 to_json)

    folders = [i for i in inputs if Path(i).is_dir()]
    files = [i for i in inputs if not Path(i).is_dir()]
    if len(folders) > 1 or (folders and static_file):
        click.echo("hermetic: verify takes one project folder, or --static REPORT.json, not both", err=True)
        sys.exit(2)
    if not files:
        click.echo("hermetic: verify needs at least one record file (pytest --hermetic=record)", err=True)
        sys.exit(2)
    try:
        record = load_records(files)
    except RecordError as exc:
        click.echo(f"hermetic: {exc}", err=True)
        sys.exit(2)
    try:
        if static_file:
            report = read_json(static_file, "the static report")
            if not isinstance(report, dict) or not isinstance(report.get("findings"), list):
                click.echo(f"hermetic: {static_file}: not a hermetic JSON report", err=True)
                sys.exit(2)
            root = str(Path(static_root or ".").resolve())
            problem = static_root_problem(report, record.get("rootdir"), root)
            if problem and not static_root:
                click.echo(f"hermetic: verify --static {static_file}: {problem}", err=True)
                sys.exit(2)
            if problem:   # the folder the user named: said, and the join goes on
                click.echo(f"hermetic: warning: none of {static_file}'s files is under --static-root {root}: "
                           "every run-time site will show as missed", err=True)
        else:
            rootdir = record.get("rootdir")
            project = folders[0] if folders else (rootdir if rootdir and Path(rootdir).is_dir() else ".")
            report = static_report(project, config_file)
            root = str(Path(project).resolve())
            if not (report.get("summary") or {}).get("tests"):
                click.echo(f"hermetic: warning: the static check of {root} found no tests: every run-time site "
                           "will show as missed (give the project folder, or --static REPORT.json)", err=True)
    except (ConfigError, UsageError) as exc:
        click.echo(f"hermetic: {exc}", err=True)
        sys.exit(2)
    result = join(report, record, static_root=root)
    if fmt == "json":
        text = to_json(result)
        if output:
            save(output, lambda fh: fh.write(text), "--output")
        else:
            click.echo(text, nl=False)
    elif output:
        save(output, lambda fh: render_text(result, fh, color=False), "--output")
    else:
        render_text(result, sys.stdout, color=color(sys.stdout))
    _exit(0 if exit_zero else exit_status(result))


_FAST_EXIT = False   # set by ``main``: the process ends with the command


def _exit(code: int) -> None:
    """End the command with ``code``. From the console script, without tearing down the
    analysis' objects one by one (a tenth of a second on a large run): every file is written
    and closed by now, every worker process stopped."""
    if _FAST_EXIT:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()   # an error here (a full disk) is ``main``'s to report
        os._exit(code)
    sys.exit(code)


def main() -> None:
    global _FAST_EXIT
    from .engine import workers

    _FAST_EXIT = workers.ONE_SHOT = True
    if sys.stdout is None:   # started with standard output closed: what goes there is discarded
        sys.stdout = open(os.devnull, "w", encoding="utf-8")
    try:
        cli(prog_name="hermetic")
    except OSError as exc:   # standard output full or gone (a broken pipe click handles itself)
        workers.last_words(f"hermetic: cannot write to standard output: {exc.strerror or exc}", 2)
