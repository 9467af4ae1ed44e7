"""Holding the static report and the runtime record against each other (``hermetic verify``).

The join is per sink anchor: a static HT1xx finding spans ``path:line..end_line``; a runtime
event has the ``path:line`` of the innermost project frame that performed it (``runtime``).
They meet when the event's line lies in the finding's span, in the same file, and their
codes agree (``COMPATIBLE``: a database client reached through a socket is HT101 statically
and a network event at runtime). Three outcomes:

* **confirmed**: a static HT1xx finding whose sink ran uncontrolled in some test;
* **not exercised**: a static HT1xx finding whose sink never ran uncontrolled (still a
  finding: the run did not take that path, or ran it only controlled);
* **missed**: uncontrolled runtime I/O with no compatible static finding at that place, a
  defect report against the static analysis, with event, stack and test.

Runtime events on a line carrying an inline ``# hermetic: ignore[...]`` are *suppressed*
(the static check suppresses them too) and are neither confirmed nor missed.

Paths: the record's are relative to its pytest rootdir, the report's to the folder the
check ran in (``static_root``); both are made absolute before the join, so the two may differ.
"""
from __future__ import annotations

import copy
import json
import os
from typing import IO, Any, Dict, List, Optional, Sequence, Tuple, Union

from .events import is_violation
from .records import RecordError, load_record, merge
from .verdicts import CONTROLLED

#: static code -> runtime codes that can confirm it
COMPATIBLE = {
    "HT101": {"HT101", "HT105", "HT102"},
    "HT102": {"HT102"},
    "HT103": {"HT103"},
    "HT104": {"HT104"},
    "HT105": {"HT105"},
    "HT106": {"HT106"},
}

#: import-time findings a runtime event confirms: an environment read executed again inside a
#: test (a re-import) lands on the HT203 line; a clock read through a function captured at
#: import (HT204 at the capture) lands at the call, in the same module, on the same clock
#: function. They are never "not exercised": import-time reads are not seen at runtime.
IMPORT_TIME = {"HT203": "HT103", "HT204": "HT104"}

CONFIRMED = "confirmed"
NOT_EXERCISED = "not-exercised"
NOT_APPLICABLE = "n/a"


def _records(records: Union[Dict[str, Any], Sequence[Dict[str, Any]]]) -> Dict[str, Any]:
    if isinstance(records, dict):
        return records
    return merge(list(records))


def load_records(paths: Sequence[str]) -> Dict[str, Any]:
    """Read and merge record files (``RecordError`` with a one-line message on bad input)."""
    return merge([load_record(p) for p in paths])


def _abs(root: str, rel: str) -> str:
    return os.path.normpath(os.path.join(root, rel))


def _rel(root: str, path: str) -> str:
    try:
        r = os.path.relpath(path, root)
    except ValueError:
        return path
    return path if r.startswith("..") else r.replace(os.sep, "/")


def _is_runtime_code(code: str) -> bool:
    return code in COMPATIBLE


def _index(events: Sequence[Dict[str, Any]], root: str) -> Dict[Tuple[str, int], List[Dict[str, Any]]]:
    idx: Dict[Tuple[str, int], List[Dict[str, Any]]] = {}
    for ev in events:
        idx.setdefault((_abs(root, ev["path"]), int(ev["line"])), []).append(ev)
    return idx


def _test_name(ev: Dict[str, Any]) -> str:
    return ev.get("test") or "<collection>"


def _listed(nodeid: str, static_tests: Sequence[str]) -> bool:
    """Whether the run's test ``nodeid`` is one the static report lists: the same id, or a
    parametrized instance (``test_x[a-1]``) of a test the static report names without its
    parameters (``test_x``)."""
    if nodeid in static_tests:
        return True
    bare = nodeid.split("[", 1)[0] if nodeid.endswith("]") else nodeid
    return bare != nodeid and bare in static_tests


def static_root_problem(report: Dict[str, Any], rootdir: Optional[str], cwd: str) -> Optional[str]:
    """Why a static report's paths, taken relative to ``cwd`` (``--static-root``'s default),
    cannot be the files the record ran, or None: run from another folder than the record's
    ``rootdir``, not one of the report's files is there, so every event would be "missed"."""
    paths = [f.get("path") for f in report.get("findings", []) if isinstance(f.get("path"), str)]
    if not rootdir or not paths or os.path.normcase(os.path.abspath(rootdir)) == os.path.normcase(cwd):
        return None
    if any(os.path.exists(os.path.join(cwd, p)) for p in paths):
        return None
    return (f"its paths are relative to the folder the check ran in, and none of its files is in {cwd}; "
            f"run verify from {rootdir} (the record's rootdir) or give --static-root FOLDER")


def join(report: Dict[str, Any], records: Union[Dict[str, Any], Sequence[Dict[str, Any]]],
         static_root: Optional[str] = None) -> Dict[str, Any]:
    """The verify result: confirmed / not exercised / missed rows and a summary.

    ``report`` is the static JSON report (contract section 8); ``static_root`` the folder its
    paths are relative to (default: the record's rootdir).
    """
    record = _records(records)
    rec_root = str(record.get("rootdir") or os.getcwd())
    root = os.path.abspath(static_root) if static_root else rec_root
    events = list(record.get("events", []))
    idx = _index(events, rec_root)
    used: set = set()
    confirmed: List[Dict[str, Any]] = []
    not_exercised: List[Dict[str, Any]] = []
    static_ht1 = [f for f in report.get("findings", []) if _is_runtime_code(f.get("code", ""))]
    for f in static_ht1:
        path = _abs(root, f["path"])
        ok = COMPATIBLE[f["code"]]
        at: List[Dict[str, Any]] = []
        for line in range(int(f["line"]), int(f.get("end_line") or f["line"]) + 1):
            at.extend(e for e in idx.get((path, line), ()) if e["code"] in ok)
        for e in at:
            used.add(id(e))
        bad = [e for e in at if is_violation(e)]
        row = {
            "code": f["code"], "path": f["path"], "line": f["line"], "end_line": f.get("end_line", f["line"]),
            "message": f.get("message", ""), "fingerprint": f.get("fingerprint", ""),
            "static_tests": list(f.get("tests", [])),
        }
        if bad:
            tests = sorted({_test_name(e) for e in bad})
            row["runtime"] = CONFIRMED
            row["tests"] = tests
            row["tests_not_listed"] = [t for t in tests if not _listed(t, row["static_tests"]) and t != "<collection>"]
            row["events"] = [_brief(e) for e in bad]
            confirmed.append(row)
        else:
            ran = sorted({_test_name(e) for e in at if e["verdict"] == CONTROLLED})
            row["runtime"] = NOT_EXERCISED
            row["ran_controlled_in"] = ran
            # a test the static finding lists ran the sink, and it was controlled at runtime
            row["disputed"] = [t for t in ran if _listed(t, row["static_tests"])]
            not_exercised.append(row)
    by_file: Dict[str, List[Dict[str, Any]]] = {}
    for e in events:
        if is_violation(e) and id(e) not in used:
            by_file.setdefault(_abs(rec_root, e["path"]), []).append(e)
    for f in report.get("findings", []):
        code = f.get("code", "")
        if code not in IMPORT_TIME:
            continue
        path = _abs(root, f["path"])
        span = range(int(f["line"]), int(f.get("end_line") or f["line"]) + 1)
        if code == "HT203":
            bad = [e for e in by_file.get(path, ()) if e["code"] == "HT103" and int(e["line"]) in span]
        else:
            clock = _captured_clock(f)
            bad = [e for e in by_file.get(path, ()) if e["code"] == "HT104" and e.get("binding") != "name"
                   and (int(e["line"]) in span or (clock is not None and e.get("operation") == clock))]
        if not bad:
            continue
        for e in bad:
            used.add(id(e))
        tests = sorted({_test_name(e) for e in bad})
        static_tests = list(f.get("tests", []))
        confirmed.append({
            "code": code, "path": f["path"], "line": f["line"], "end_line": f.get("end_line", f["line"]),
            "message": f.get("message", ""), "fingerprint": f.get("fingerprint", ""), "static_tests": static_tests,
            "runtime": CONFIRMED, "tests": tests,
            "tests_not_listed": [t for t in tests if not _listed(t, static_tests) and t != "<collection>"],
            "events": [_brief(e) for e in bad]})
    missed_rows: Dict[tuple, Dict[str, Any]] = {}
    suppressed = 0
    for e in events:
        if id(e) in used or e.get("verdict") != "uncontrolled":
            continue
        if e.get("suppressed"):
            suppressed += e.get("count", 1)
            continue
        key = (e["path"], e["line"], e["code"], e["operation"])
        row = missed_rows.get(key)
        if row is None:
            shown = _rel(root, _abs(rec_root, e["path"]))
            row = missed_rows[key] = {
                "code": e["code"], "category": e["category"], "path": shown, "line": e["line"],
                "operation": e["operation"], "via": e.get("via"), "function": e.get("function"),
                "targets": [], "reasons": [], "tests": [], "stack": [
                    dict(s, path=_rel(root, _abs(rec_root, s["path"]))) for s in e.get("stack", [])],
                "count": 0,
            }
        row["count"] += e.get("count", 1)
        for field, value in (("targets", e.get("target", "")), ("reasons", e.get("reason", "")),
                             ("tests", _test_name(e))):
            if value not in row[field]:
                row[field].append(value)
    missed = sorted(missed_rows.values(), key=lambda r: (r["path"], r["line"], r["code"], r["operation"]))
    for r in missed:
        r["tests"].sort()
    summary = {
        "static_findings": len(static_ht1),
        "confirmed": len(confirmed),
        "not_exercised": len(not_exercised),
        "disputed": sum(1 for r in not_exercised if r["disputed"]),
        "missed": len(missed),
        "suppressed_events": suppressed,
        "tests_run": len(record.get("tests", [])),
        "events": sum(e.get("count", 1) for e in events),
        "uncontrolled_events": sum(e.get("count", 1) for e in events if is_violation(e)),
    }
    return {
        "version": 1,
        "kind": "hermetic-verify",
        "rootdir": rec_root,
        "confirmed": confirmed,
        "not_exercised": not_exercised,
        "missed": missed,
        "static_errors": list(report.get("errors", [])),
        "summary": summary,
    }


def _captured_clock(f: Dict[str, Any]) -> Optional[str]:
    """The clock function an HT204 finding captures (``time.time``), as the runtime names it."""
    expr = ((f.get("origin") or {}).get("expression") or "").strip()
    if not expr:
        words = (f.get("message") or "").split()
        expr = words[0] if words else ""
    expr = expr[:-2] if expr.endswith("()") else expr
    return expr or None


def _brief(e: Dict[str, Any]) -> Dict[str, Any]:
    return {"test": _test_name(e), "phase": e.get("phase"), "operation": e.get("operation"),
            "target": e.get("target"), "reason": e.get("reason"), "count": e.get("count", 1)}


def annotate(report: Dict[str, Any], records: Union[Dict[str, Any], Sequence[Dict[str, Any]]],
             root: Optional[str] = None) -> Dict[str, Any]:
    """A copy of the static JSON report with ``runtime`` on every finding:
    ``"confirmed"`` (with ``runtime_tests``), ``"not-exercised"``, or ``"n/a"`` for codes that
    have no runtime counterpart (everything but HT101-HT106). ``root`` is the folder the
    report's paths are relative to (default: the record's rootdir)."""
    result = join(report, records, static_root=root)
    by_key = {(r["path"], r["line"], r["code"], r["fingerprint"]): r
              for r in result["confirmed"] + result["not_exercised"]}
    out = copy.deepcopy(report)
    for f in out.get("findings", []):
        row = by_key.get((f.get("path"), f.get("line"), f.get("code"), f.get("fingerprint", "")))
        if row is None:
            f["runtime"] = NOT_APPLICABLE
        else:
            f["runtime"] = row["runtime"]
            if row["runtime"] == CONFIRMED:
                f["runtime_tests"] = list(row["tests"])
    return out


def exit_status(result: Dict[str, Any]) -> int:
    """1 when uncontrolled I/O really happened (a confirmed or a missed row) or the static
    check could not analyse a file; else 0 (not-exercised rows alone are `hermetic check`'s)."""
    s = result["summary"]
    return 1 if (s["confirmed"] or s["missed"] or result.get("static_errors")) else 0


def to_json(result: Dict[str, Any]) -> str:
    return json.dumps(result, indent=2, ensure_ascii=False) + "\n"


def render_text(result: Dict[str, Any], out: IO[str], color: bool = False, max_tests: int = 3) -> None:
    from rich.console import Console
    from rich.markup import escape

    console = Console(file=out, no_color=not color, highlight=False, soft_wrap=True,
                      force_terminal=color, color_system="auto" if color else None, width=10_000)

    def tests_line(label: str, tests: List[str]) -> None:
        if tests:
            more = f" and {len(tests) - max_tests} more" if len(tests) > max_tests else ""
            console.print(f"      [dim]{label}[/dim] {escape(', '.join(tests[:max_tests]))}{more}")

    rows = result["confirmed"]
    console.print(f"[bold]Confirmed[/bold]: static findings whose sink ran uncontrolled ({len(rows)})")
    for r in rows:
        console.print(f"  [red]{r['code']}[/red] {escape(r['path'])}:{r['line']} {escape(r['message'])}")
        tests_line("ran uncontrolled in:", r["tests"])
        tests_line("not listed by the static finding:", r["tests_not_listed"])
    console.print("")
    rows = result["not_exercised"]
    console.print(f"[bold]Not exercised[/bold]: static findings whose sink never ran uncontrolled ({len(rows)})")
    for r in rows:
        console.print(f"  [yellow]{r['code']}[/yellow] {escape(r['path'])}:{r['line']} {escape(r['message'])}")
        if r["disputed"]:
            tests_line("disputed: ran controlled in tests the finding lists:", r["disputed"])
        elif r["ran_controlled_in"]:
            tests_line("ran, controlled, in:", r["ran_controlled_in"])
    console.print("")
    rows = result["missed"]
    console.print(f"[bold]Missed by the static analysis[/bold]: uncontrolled I/O at runtime with no finding "
                  f"at that place ({len(rows)})")
    for r in rows:
        via = f" via {r['via']}" if r.get("via") else ""
        targets = ", ".join(repr(t) if r["category"] == "env" else str(t) for t in r["targets"][:3] if t != "")
        console.print(f"  [magenta]{r['code']}[/magenta] {escape(r['path'])}:{r['line']} {r['category']} "
                      f"{escape(r['operation'])}{escape(via)} {escape(targets)} ({escape('; '.join(r['reasons']))})")
        tests_line("test:", r["tests"])
        for i, step in enumerate(r["stack"]):
            label = "stack:" if i == 0 else "      "
            console.print(f"      [dim]{label}[/dim] {escape(step['path'])}:{step['line']} in {escape(step['function'])}")
    for e in result.get("static_errors", []):
        console.print(f"[red]error[/red] {escape(str(e.get('path')))}: {escape(str(e.get('message')))}")
    s = result["summary"]
    console.print("")
    console.print(f"verify: {s['confirmed']} confirmed, {s['not_exercised']} not exercised"
                  + (f" ({s['disputed']} disputed)" if s["disputed"] else "")
                  + f", {s['missed']} missed; {s['tests_run']} tests run, {s['events']} I/O events "
                  f"({s['uncontrolled_events']} uncontrolled"
                  + (f", {s['suppressed_events']} suppressed inline" if s["suppressed_events"] else "") + ")")


def static_report(project: str, config_file: Optional[str] = None) -> Dict[str, Any]:
    """Run the static check on ``project`` and return its JSON report as a dict."""
    from pathlib import Path

    from ..api import run_check
    from ..report.text import to_json as report_json

    explicit = None
    if config_file:
        from ..config import load_config_file

        explicit = load_config_file(Path(config_file).resolve())
    report, _cfg = run_check([], Path(project), config=explicit)
    return json.loads(report_json(report))


__all__ = ["annotate", "join", "load_records", "render_text", "to_json", "exit_status", "static_report",
           "RecordError", "CONFIRMED", "NOT_EXERCISED", "NOT_APPLICABLE"]
