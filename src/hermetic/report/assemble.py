"""Assembling a report: its parts from an analysis outcome, and the report as the whole-run
result cache stores it.

``unresolved_list`` and ``widen_statement_spans`` shape what the analysis outcome gives the
report; ``report_to_cache`` gives the JSON-able dict (the report's JSON form plus each
finding's fix, function and anchor), ``report_from_cache`` reads it back (``api``: a run
whose inputs did not change returns it without analysing).
"""
from __future__ import annotations

from typing import Dict, List, Tuple

from .model import Finding, Report, TraceStep


def unresolved_list(unresolved: Dict[Tuple[str, int, int], str]) -> List[dict]:
    """The report's unresolved calls from ``Interp.unresolved``, by site."""
    return [{"path": p, "line": ln, "column": col, "call": text} for (p, ln, col), text in sorted(unresolved.items())]


def widen_statement_spans(findings: List[Finding], by_path: Dict[str, dict]) -> None:
    """Findings anchored at a whole statement know only its line (statement IR keeps lines):
    give them the statement's span, which the summary records per line."""
    for f in findings:
        if f.line == f.end_line and f.column == f.end_column and f.path in by_path:
            span = by_path[f.path].get("spans", {}).get(str(f.line))
            if span:
                f.column, f.end_line, f.end_column = span


def report_to_cache(report: Report) -> dict:
    """A report as the whole-run result cache stores it (``report_from_cache`` reads it back)."""
    fs = []
    for f in report.findings:
        d = f.to_json()
        d.update({"fix": f.fix, "function": f.function, "anchor": f.anchor, "benign": f.benign})
        fs.append(d)
    return {"findings": fs, "files": report.files, "tests": report.tests, "unresolved": report.unresolved_calls,
            "unknown": report.unknown_origins, "calls": report.calls_seen, "sinks": report.sinks_seen,
            "inventory": report.inventory, "errors": [e.to_json() for e in report.errors],
            "test_locations": {k: list(v) for k, v in report.test_locations.items()}}


def report_from_cache(d: dict, errors) -> Report:
    """The report ``report_to_cache`` stored, with ``errors``. Raises KeyError, TypeError or
    ValueError for a damaged entry."""
    findings = []
    for x in d["findings"]:
        findings.append(Finding(x["code"], x["severity"], x["path"], x["line"], x["column"], x["end_line"],
                                x["end_column"], x["message"], list(x["tests"]),
                                [TraceStep(t["path"], t["line"], t["function"]) for t in x["trace"]], x["origin"],
                                x["fingerprint"], x.get("fix", ""), x.get("function", "<module>"), x.get("anchor", ""),
                                confidence=x.get("confidence", "high"), benign=x.get("benign", ""),
                                maybe_tests=list(x.get("maybe_tests", ()))))
    return Report(findings=findings, errors=list(errors), files=d["files"], tests=d["tests"],
                  unresolved_calls=d["unresolved"], unknown_origins=d["unknown"], calls_seen=d["calls"],
                  sinks_seen=d["sinks"], inventory=d["inventory"],
                  test_locations={k: (v[0], v[1]) for k, v in d.get("test_locations", {}).items()})
