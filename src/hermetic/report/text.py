"""Report output: the contract's JSON report and the terminal view."""
from __future__ import annotations

import json
import re
from typing import IO, Dict, List

from .. import __version__
from ..analyse.limits import budget_cut
from ..analyse.runs import INTERNAL_ERROR
from .model import Finding, Report


def to_json(report: Report, show_unresolved: bool = False, show_unknown: bool = False) -> str:
    """The JSON report of contract section 8; the same input gives the same bytes. The
    ``show_*`` flags add the ``unresolved`` / ``unknown`` lists (``report.notfollowed``)."""
    data = {
        "version": 1,
        "tool": {"name": "hermetic", "version": __version__},
        "findings": [f.to_json() for f in report.findings],
        "errors": [e.to_json() for e in sorted(report.errors, key=lambda e: e.path)],
        "summary": {
            "files": report.files,
            "tests": report.tests,
            "findings": len(report.findings),
            "unresolved_calls": len(report.unresolved_calls),
            "unknown_origins": len(report.unknown_origins),
            "calls": report.calls_seen,
            "sinks": report.sinks_seen,
        },
    }
    if report.baseline_fixed is not None:
        data["summary"]["baseline_fixed"] = report.baseline_fixed
    if show_unresolved or show_unknown:
        from .notfollowed import unknown_rows, unresolved_rows

        if show_unresolved:
            data["unresolved"] = unresolved_rows(report.unresolved_calls)
        if show_unknown:
            data["unknown"] = unknown_rows(report.unknown_origins)
    return json.dumps(data, indent=2, sort_keys=False, ensure_ascii=False) + "\n"


def _trace_line(f: Finding) -> str:
    names = []
    for step in f.trace:
        name = step.function.rsplit(".", 1)[-1] if "." in step.function and not step.function.startswith("<") else step.function
        if not names or names[-1] != name:
            names.append(name)
    return " → ".join(names)


#: the order the text report shows severities in, and what each heading says
SEVERITY_HEADINGS = (("error", "can change something outside the test's sandbox or reach a real service"),
                     ("warning", "the result depends on the machine the tests run on"))
WIDTH = 100   # columns of a line the text report wraps to where the terminal's width is not known


def render_terminal(report: Report, out: IO[str], color: bool, show_unresolved: bool = False,
                    show_unknown: bool = False, max_tests: int = 3, width: int = 0) -> None:
    """The text report: errors first, then warnings, each grouped by file; the notes as one
    count line; then the files that could not be analysed and the summary. Lines wrap at
    ``width`` columns (``WIDTH`` when 0); a finding's origin is said once, in its message."""
    from rich.console import Console
    from rich.markup import escape

    width = width or WIDTH
    console = Console(file=out, no_color=not color, highlight=False, soft_wrap=True,
                      force_terminal=color, color_system="auto" if color else None, width=10_000)

    def say(head: str, text: str, indent: int, style: str = "") -> None:
        """``head`` (markup) then ``text`` (plain), wrapped, continuation lines at ``indent``."""
        import textwrap

        plain_head = re.sub(r"\[/?[a-z ]+\]", "", head)
        # the first line after the head, the others after ``indent``: each as wide as the report
        lines = textwrap.wrap(text, width=max(40 + len(plain_head), width), initial_indent=" " * len(plain_head),
                              subsequent_indent=" " * indent, break_on_hyphens=False, break_long_words=False)
        lines = lines or [""]
        console.print(head + escape(lines[0][len(plain_head):]))
        for ln in lines[1:]:
            console.print(escape(ln))

    for sev, heading in SEVERITY_HEADINGS:
        fs = [f for f in report.findings if f.severity == sev]
        if not fs:
            continue
        colour = "red" if sev == "error" else "yellow"
        console.print(f"[bold {colour}]{_count(len(fs), sev).upper()}[/bold {colour}]: {heading}")
        console.print("")
        by_path: Dict[str, List[Finding]] = {}
        for f in fs:
            by_path.setdefault(f.path, []).append(f)
        for path, group in by_path.items():
            console.print(f"[bold]{escape(path)}[/bold]")
            for f in group:
                medium = " (medium confidence)" if f.confidence == "medium" else ""
                say(f"  {f.line}:{f.column} [{colour}]{f.code}[/{colour}]{medium} ", f.message, 6)
                tr = _trace_line(f)
                if tr:
                    say("      [dim]trace:[/dim]  ", tr, 14)
                maybe = set(f.maybe_tests)
                decided = [t for t in f.tests if t not in maybe]
                if decided:
                    shown = ", ".join(decided[:max_tests])
                    more = f" and {len(decided) - max_tests} more" if len(decided) > max_tests else ""
                    say("      [dim]tests:[/dim]  ", shown + more, 14)
                if f.maybe_tests:   # the count in the message, named
                    shown = ", ".join(f.maybe_tests[:max_tests])
                    more = f" and {len(f.maybe_tests) - max_tests} more" if len(f.maybe_tests) > max_tests else ""
                    say("      [dim]maybe:[/dim]  ", shown + more, 14)
                if f.fix:
                    for i, part in enumerate(f.fix.split("\n")):
                        say("      [dim]fix:[/dim]    " if i == 0 else " " * 14, part, 14)
            console.print("")
    for e in report.errors:
        console.print(f"[red]error[/red] {escape(e.path)}: {escape(e.message)}")
    if any(not e.message.startswith(INTERNAL_ERROR) for e in report.errors):
        # a formatter's broken inputs, templates that are Python only once rendered
        console.print(escape("files that are not meant to be Python (test data, templates) can be left out "
                             "with exclude = [...] in [tool.hermetic]"))
    if show_unresolved and report.unresolved_calls:
        console.print("[bold]Unresolved calls[/bold] (not followed):")
        for u in report.unresolved_calls:
            console.print(f"  {escape(u['path'])}:{u['line']}:{u['column']} {escape(u['call'])}")
    if show_unknown and report.unknown_origins:
        console.print("[bold]Operations with an unknown origin[/bold] (not reported: the analysis does not guess "
                      "an origin it cannot see):")
        for u in report.unknown_origins:
            console.print(f"  {escape(u['path'])}:{u['line']}:{u['column']} {escape(u['operation'])} "
                          f"({u['category']})")
    notes = sum(1 for f in report.findings if f.severity == "note")
    if notes:
        console.print(f"{_count(notes, 'note')} not shown (benign reads; --format json lists them)")
    if report.unresolved_calls or report.unknown_origins:
        cuts = sum(1 for u in report.unresolved_calls if budget_cut(str(u.get("call", ""))))
        console.print(f"not followed: {_count(len(report.unresolved_calls), 'unresolved call')}"
                      + (f" ({cuts} where a test's run or an import reached the analysis step budget: what lies "
                         "beyond them is not followed)" if cuts else "")
                      + f", {_count(len(report.unknown_origins), 'unknown origin')} (--show-unresolved, --show-unknown)")
    n = len(report.findings)
    errs = sum(1 for f in report.findings if f.severity == "error")
    internal = sum(1 for e in report.errors if e.message.startswith(INTERNAL_ERROR))
    unread = len(report.errors) - internal
    console.print(f"{_count(n, 'finding')} ({_count(errs, 'error')}, {_count(n - errs - notes, 'warning')}, "
                  f"{_count(notes, 'note')}) in {_count(report.files, 'file')}, {_count(report.tests, 'test')}"
                  + (f"; {_count(unread, 'file')} not analysed" if unread else "")
                  + (f"; {_count(internal, 'test')} not analysed (internal errors)" if internal else ""))


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
