"""What the command line writes and reads: a report in each format (``--output-format`` /
``--format``, ``--output``, ``--output-file FMT=FILE``) to a file or standard output, the
per-rule counts (``--statistics``) and the phase timings (``--timings``), JSON files given as
options. A file that cannot be read or written is a
usage error: one line on standard error, exit 2."""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import click

FORMATS = ["text", "json", "sarif", "github", "markdown", "junit"]


def color(stream) -> bool:
    """Whether to colour what goes to ``stream``: a terminal, and ``NO_COLOR`` unset (read only
    for a terminal)."""
    return hasattr(stream, "isatty") and stream.isatty() and not os.environ.get("NO_COLOR")


def main_format(values) -> Tuple[str, List[str]]:
    """``--output-format`` / ``--format`` values as ``(format, legacy FMT=FILE outputs)``: the
    format of the main output (``text`` when none is given; two different ones are a usage
    error, exit 2). ``FMT=FILE`` is what ``--output-file`` takes now, still accepted here with a
    note on standard error."""
    formats, legacy = [], []
    for value in values:
        if "=" in value and value.partition("=")[0] in FORMATS:
            legacy.append(value)
            continue
        if value not in FORMATS:
            click.echo(f"hermetic: --output-format: {value!r} is not one of {', '.join(FORMATS)}", err=True)
            sys.exit(2)
        formats.append(value)
    if legacy:
        click.echo("hermetic: --output-format FMT=FILE is now --output-file FMT=FILE", err=True)
    if len(set(formats)) > 1:
        click.echo(f"hermetic: --output-format given twice ({', '.join(formats)}); the report has one format "
                   f"(--output-file FMT=FILE writes others)", err=True)
        sys.exit(2)
    return (formats[0] if formats else "text"), legacy


def print_rule_statistics(report, fmt: str, output: Optional[str]) -> None:
    """``--statistics``, as ruff prints it: one line per rule code, ``count<TAB>code<TAB>name``,
    most findings first (a JSON list of ``{code, name, count}`` for ``json``), to ``output``
    or standard output, in place of the findings; then, to standard error, how many call sites
    the analysis did not follow and how many of them at its budget (where it stopped early)."""
    import json

    from .rules.registry import RULES

    counts: Dict[str, int] = {}
    for f in report.findings:
        counts[f.code] = counts.get(f.code, 0) + 1
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    if fmt == "json":
        text = json.dumps([{"code": c, "name": RULES[c].name if c in RULES else "", "count": n} for c, n in rows],
                          indent=2) + "\n"
    else:
        width = max((len(str(n)) for _c, n in rows), default=1)
        text = "".join(f"{n:>{width}}\t{c}\t{RULES[c].name if c in RULES else ''}\n" for c, n in rows)
    if output:
        save(output, lambda fh: fh.write(text), "--output")
    else:
        click.echo(text, nl=False)
    unresolved, cuts = unresolved_counts(report)
    if unresolved:   # what the counts leave out, said only where there is some
        calls = "call" if unresolved == 1 else "calls"
        click.echo(f"hermetic: {unresolved} unresolved {calls} ({cuts} where a test's run or an import reached "
                   "the analysis step budget)", err=True)


def unresolved_counts(report) -> Tuple[int, int]:
    """(unresolved call sites, of them cut at the step budget), from the report itself, so a
    run whose result came from the cache counts them as the run that made it did."""
    from .analyse.limits import budget_cut

    calls = report.unresolved_calls
    return len(calls), sum(1 for u in calls if budget_cut(str(u.get("call", ""))))


def print_timings(report) -> None:
    """``--timings``: seconds per phase, then the file, cache and test counts
    (``report.statistics``), to standard error."""
    stats = report.statistics
    phases = stats.get("phases", {})
    lines = ["hermetic: timings"]
    for name in ("discover", "parse", "link", "analyse", "report"):
        if name in phases:
            lines.append(f"  {name:<9} {phases[name]:8.3f} s")
    lines.append(f"  {'total':<9} {sum(phases.values()):8.3f} s")
    lines.append(f"  files {stats.get('files', 0)}, parsed {stats.get('parsed', 0)} "
                 f"in {_processes(stats.get('jobs', 0))}, cache hits {stats.get('cache_hits', 0)}, "
                 f"whole-run result {stats.get('result_cache', 'n/a')}"
                 + (f", tests analysed {stats.get('tests_analysed', 0)} in {_processes(stats['analysis_processes'])}"
                    f", reused {stats.get('tests_reused', 0)}"
                    + (", collection reused" if stats.get("collection") == "reused" else "")
                    if stats.get("analysis_processes") else ""))
    unresolved, cuts = unresolved_counts(report)
    lines.append(f"  unresolved calls {unresolved}, of them at the analysis budget {cuts}")
    click.echo("\n".join(lines), err=True)


def _processes(n: int) -> str:
    return "1 process" if n == 1 else f"{n} processes"


def read_json(path: str, what: str):
    """A JSON file given on the command line; exit 2 with the file named when it cannot be read."""
    import json

    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        click.echo(f"hermetic: {path}: cannot read {what}: {exc}", err=True)
        sys.exit(2)


def render(fmt: str, report, cwd: Path, show_unresolved: bool = False, show_unknown: bool = False) -> str:
    """The report in ``fmt`` (not ``text``); JSON holds the ``--show-*`` lists asked for."""
    from .report import formats
    from .report.text import to_json

    if fmt == "json":
        return to_json(report, show_unresolved, show_unknown)
    if fmt == "sarif":
        return formats.to_sarif(report, str(cwd))
    if fmt == "github":
        return formats.to_github(report)
    if fmt == "markdown":
        return formats.to_markdown(report)
    return formats.to_junit(report)


def write_report(fmt: str, report, cwd: Path, dest: str, show_unresolved: bool, show_unknown: bool) -> None:
    from .report.text import render_terminal

    if fmt == "text":
        save(dest, lambda fh: render_terminal(report, fh, color=False, show_unresolved=show_unresolved,
                                                show_unknown=show_unknown), "--output-file")
        return
    text = render(fmt, report, cwd, show_unresolved, show_unknown)
    save(dest, lambda fh: fh.write(text), "--output-file")


def check_outputs(output: Optional[str], extra_outputs,
                  write_baseline: Optional[str]) -> Tuple[List[Tuple[str, str]], Optional[str]]:
    """The ``--output-file FMT=FILE`` pairs, checked, and the main output file: ``(pairs,
    output)``. A value that names no format (``--output-file FILE``) is the main output file,
    as ruff's ``--output-file`` is. Exit 2 on a malformed pair, two main output files, or one
    file named by two outputs (the second would overwrite the first without a word)."""
    extra = []
    for spec in extra_outputs:
        kind, sep, dest = spec.partition("=")
        if sep and kind.isalpha() and kind.islower() and kind not in FORMATS:
            click.echo(f"hermetic: --output-file {spec}: {kind!r} is not one of {', '.join(FORMATS)}", err=True)
            sys.exit(2)
        if not sep or kind not in FORMATS:
            if output and output != spec:
                click.echo(f"hermetic: --output {output} and --output-file {spec}: the report goes to one file "
                           f"(--output-file FMT=FILE for more)", err=True)
                sys.exit(2)
            output = spec
            continue
        if not dest:
            click.echo(f"hermetic: --output-file expects FMT=FILE with FMT one of {', '.join(FORMATS)}", err=True)
            sys.exit(2)
        extra.append((kind, dest))
    seen: Dict[Path, str] = {}
    named = [("--output", output), ("--write-baseline", write_baseline)] + [("--output-file", d) for _k, d in extra]
    for option, dest in named:
        if not dest or dest == "-":
            continue
        where = Path(dest).resolve()
        if where in seen:
            click.echo(f"hermetic: {dest} is named by {seen[where]} and {option}; give each output its own file",
                       err=True)
            sys.exit(2)
        seen[where] = option
    return extra, output


def save(dest: str, write, option: str) -> None:
    """``write(fh)`` into the file ``dest`` (UTF-8; ``-`` is standard output, as for most
    tools); a file that cannot be written is a usage error: one line naming ``option`` and the
    file, exit 2."""
    if dest == "-":
        write(sys.stdout)
        return
    try:
        with open(dest, "w", encoding="utf-8") as fh:
            write(fh)
    except OSError as exc:
        click.echo(f"hermetic: {option}: cannot write {dest}: {exc.strerror or exc}", err=True)
        sys.exit(2)
