"""What the command line writes and reads: a report in each format (``--format``,
``--output``, ``--output-format FMT=FILE``) to a file or standard output, the statistics
(``--statistics``), JSON files given as options. A file that cannot be read or written is a
usage error: one line on standard error, exit 2."""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import click

FORMATS = ["text", "json", "sarif", "github", "markdown", "junit"]


def color(stream) -> bool:
    """Whether to colour what goes to ``stream``: a terminal, and ``NO_COLOR`` unset."""
    if os.environ.get("NO_COLOR"):
        return False
    return hasattr(stream, "isatty") and stream.isatty()


def print_statistics(stats: dict) -> None:
    """``--statistics``: seconds per phase, then the file, cache and test counts
    (``report.statistics``), to standard error."""
    phases = stats.get("phases", {})
    lines = ["hermetic: statistics"]
    for name in ("discover", "parse", "link", "analyse", "report"):
        if name in phases:
            lines.append(f"  {name:<9} {phases[name]:8.3f} s")
    lines.append(f"  {'total':<9} {sum(phases.values()):8.3f} s")
    lines.append(f"  files {stats.get('files', 0)}, parsed {stats.get('parsed', 0)} "
                 f"in {stats.get('jobs', 0)} processes, cache hits {stats.get('cache_hits', 0)}, "
                 f"whole-run result {stats.get('result_cache', 'n/a')}"
                 + (f", tests analysed {stats.get('tests_analysed', 0)} in {stats['analysis_processes']} "
                    f"processes, reused {stats.get('tests_reused', 0)}"
                    + (", collection reused" if stats.get("collection") == "reused" else "")
                    if stats.get("analysis_processes") else ""))
    if "budget_cuts" in stats:
        lines.append(f"  unresolved calls {stats.get('unresolved', 0)}, of them at the analysis budget "
                     f"{stats['budget_cuts']}")
    click.echo("\n".join(lines), err=True)


def read_json(path: str, what: str):
    """A JSON file given on the command line; exit 2 with the file named when it cannot be read."""
    import json

    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        click.echo(f"hermetic: {path}: cannot read {what}: {exc}", err=True)
        sys.exit(2)


def render(fmt: str, report, cwd: Path) -> str:
    from .report import formats
    from .report.text import to_json

    if fmt == "json":
        return to_json(report)
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
                                                show_unknown=show_unknown), "--output-format")
        return
    text = render(fmt, report, cwd)
    save(dest, lambda fh: fh.write(text), "--output-format")


def check_outputs(output: Optional[str], extra_outputs, write_baseline: Optional[str]) -> List[Tuple[str, str]]:
    """The ``--output-format FMT=FILE`` pairs, checked; exit 2 on a malformed one, or on one
    file named by two outputs (the second would overwrite the first without a word)."""
    extra = []
    for spec in extra_outputs:
        kind, sep, dest = spec.partition("=")
        if not sep or kind not in FORMATS or not dest:
            click.echo(f"hermetic: --output-format expects FMT=FILE with FMT one of {', '.join(FORMATS)}", err=True)
            sys.exit(2)
        extra.append((kind, dest))
    seen: Dict[Path, str] = {}
    named = [("--output", output), ("--write-baseline", write_baseline)] + [("--output-format", d) for _k, d in extra]
    for option, dest in named:
        if not dest or dest == "-":
            continue
        where = Path(dest).resolve()
        if where in seen:
            click.echo(f"hermetic: {dest} is named by {seen[where]} and {option}; give each output its own file",
                       err=True)
            sys.exit(2)
        seen[where] = option
    return extra


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
