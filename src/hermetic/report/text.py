"""Report output: the contract's JSON report and the terminal view."""
from __future__ import annotations

import json
from typing import IO, Dict, List

from .. import __version__
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


def render_terminal(report: Report, out: IO[str], color: bool, show_unresolved: bool = False,
                    show_unknown: bool = False, max_tests: int = 3) -> None:
    from rich.console import Console
    from rich.markup import escape

    console = Console(file=out, no_color=not color, highlight=False, soft_wrap=True,
                      force_terminal=color, color_system="auto" if color else None, width=10_000)
    by_path: Dict[str, List[Finding]] = {}
    for f in report.findings:
        by_path.setdefault(f.path, []).append(f)
    for path, fs in by_path.items():
        console.print(f"[bold]{escape(path)}[/bold]")
        for f in fs:
            sev = "red" if f.severity == "error" else "yellow"
            console.print(f"  {f.line}:{f.column} [{sev}]{f.code}[/{sev}] {escape(f.message)}")
            tr = _trace_line(f)
            if tr:
                console.print(f"      [dim]trace:[/dim]  {escape(tr)}")
            if f.origin and f.origin.get("kind") not in (None, "clock"):
                o = f.origin
                where = f" {o['path']}:{o['line']}" if o.get("path") and o.get("line") else ""
                extra = f", from {o['derived_from']}" if o.get("derived_from") else ""
                console.print(f"      [dim]origin:[/dim] {escape(str(o.get('expression')))} "
                              f"({o['kind']}{escape(where)}{extra})")
            if f.tests:
                shown = ", ".join(f.tests[:max_tests])
                more = f" and {len(f.tests) - max_tests} more" if len(f.tests) > max_tests else ""
                console.print(f"      [dim]tests:[/dim]  {escape(shown)}{more}")
            if f.fix:
                fix = f.fix.replace("\n", "\n              ")
                console.print(f"      [dim]fix:[/dim]    {escape(fix)}")
        console.print("")
    for e in report.errors:
        console.print(f"[red]error[/red] {escape(e.path)}: {escape(e.message)}")
    if show_unresolved and report.unresolved_calls:
        console.print("[bold]Unresolved calls[/bold] (not followed):")
        for u in report.unresolved_calls:
            console.print(f"  {escape(u['path'])}:{u['line']}:{u['column']} {escape(u['call'])}")
    if show_unknown and report.unknown_origins:
        console.print("[bold]Operations with an unknown origin[/bold] (not reported, contract row U):")
        for u in report.unknown_origins:
            console.print(f"  {escape(u['path'])}:{u['line']}:{u['column']} {escape(u['operation'])} "
                          f"({u['category']})")
    n = len(report.findings)
    errs = sum(1 for f in report.findings if f.severity == "error")
    console.print(f"{_count(n, 'finding')} ({_count(errs, 'error')}, {_count(n - errs, 'warning')}) in "
                  f"{_count(report.files, 'file')}, {_count(report.tests, 'test')}; "
                  f"{_count(len(report.unresolved_calls), 'unresolved call')}, "
                  f"{_count(len(report.unknown_origins), 'unknown origin')}"
                  + (f"; {_count(len(report.errors), 'file')} not analysed" if report.errors else ""))


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
