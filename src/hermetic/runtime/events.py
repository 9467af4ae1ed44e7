"""Recorded events as values: how one is described, ordered, counted and suppressed.

An event is the plain dict ``Recorder._add`` makes (``test``, ``phase``, ``category``,
``code``, ``operation``, ``target``, ``access``, ``verdict``, ``reason``, ``path``, ``line``,
``function``, ``via``, ``stack``, ``count``, and ``suppressed`` when an inline
``# hermetic: ignore[...]`` covers it) from a ``Judged`` operation. The functions here read
such dicts (and frames, for ``qualname``) and keep no state, so the record files
(``records``) and the plugin's terminal summary use them without a recorder.
"""
from __future__ import annotations

import re
from typing import Any, Dict, NamedTuple, Optional, Sequence

from .verdicts import UNCONTROLLED

PHASES = ("collect", "setup", "call", "teardown")


class Judged(NamedTuple):
    """What one operation is, as judged before it is recorded (``Recorder._add`` makes the event)."""

    operation: str      # the audit event or function: "open", "os.environ[...]", "time.time", ...
    target: str         # the path, address, command line or variable name ("" for a clock)
    write: bool
    verdict: str        # CONTROLLED or UNCONTROLLED
    reason: str


# the static check's patterns (hermetic.summarise.suppressions), repeated: the runtime imports
# nothing of the static side
_SUPPRESS = re.compile(r"#\s*hermetic:\s*ignore(?:\[([A-Za-z0-9_,\s]+)\])?"
                       r"|#\s*noqa\s*:\s*([A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*)", re.I)


def suppressed_at(filename: str, line: int, code: str) -> bool:
    """Whether the source line carries an inline ``# hermetic: ignore[CODE]`` or ``# noqa: CODE``
    (the static check's syntax) that covers ``code``: the runtime honours what the static check does."""
    import linecache

    for m in _SUPPRESS.finditer(linecache.getline(filename, line)):
        if m.group(2) is not None:
            codes = [c for c in re.split(r"[\s,]+", m.group(2).upper()) if c.startswith("HT")]
        elif not m.group(1):
            return True
        else:
            codes = [c.strip().upper() for c in m.group(1).split(",") if c.strip()]
        if any(code.startswith(c) for c in codes):
            return True
    return False


def event_order(ev: Dict[str, Any]):
    """Sort key of an event within one test: phase, then place, then what it was."""
    return (PHASES.index(ev["phase"]) if ev["phase"] in PHASES else 9, ev["path"], ev["line"], ev["code"],
            ev["operation"], ev["target"], ev["verdict"])


def qualname(frame, module: bool = False) -> str:
    """The qualified name of the function ``frame`` runs (``module.name`` with ``module``)."""
    code = frame.f_code
    name = getattr(code, "co_qualname", code.co_name)
    if module:
        mod = frame.f_globals.get("__name__") or ""
        return f"{mod}.{name}" if mod else name
    return name


def describe_event(ev: Dict[str, Any]) -> str:
    """One line: 'HT102 file write /x (the home folder) at src/m.py:12 in f'."""
    what = {"file": f"file {ev['access']}", "connection": "database connection", "env": "environment read",
            "clock": "clock read", "network": "network access", "subprocess": "subprocess"}[ev["category"]]
    target = f" {ev['target']!r}" if ev["category"] == "env" else (f" {ev['target']}" if ev["target"] else "")
    via = f" via {ev['via']}" if ev.get("via") else ""
    return (f"{ev['code']} uncontrolled {what}{target} ({ev['reason']}): {ev['operation']}{via} "
            f"at {ev['path']}:{ev['line']} in {ev['function']}")


def format_violations(nodeid: str, events: Sequence[Dict[str, Any]]) -> str:
    """The enforce-mode failure text: each operation with its project stack."""
    lines = [f"hermetic: {nodeid} performed uncontrolled I/O ({len(events)} operation"
             f"{'' if len(events) == 1 else 's'}):"]
    for ev in events:
        times = f" [{ev['count']} times]" if ev.get("count", 1) > 1 else ""
        lines.append(f"  {describe_event(ev)} [{ev['phase']}]{times}")
        for step in ev.get("stack", [])[1:]:
            lines.append(f"      called from {step['path']}:{step['line']} in {step['function']}")
    lines.append("  (recorded when it happened; the test fails even if the code swallowed the error. "
                 "Control it with tmp_path, monkeypatch or a freeze, or see `hermetic explain <code>`.)")
    return "\n".join(lines)


def is_violation(ev: Dict[str, Any]) -> bool:
    """Uncontrolled and not suppressed inline."""
    return ev.get("verdict") == UNCONTROLLED and not ev.get("suppressed")


def summarize(events: Sequence[Dict[str, Any]], tests: int, counts: Optional[Dict[str, int]] = None) -> Dict[str, Any]:
    """The record's ``summary``: event counts (each event weighs its ``count``) in total and by
    category, then the recorder's own ``counts`` (ignored, indirect, ...) by name."""
    by_cat: Dict[str, Dict[str, int]] = {}
    for ev in events:
        c = by_cat.setdefault(ev["category"], {"events": 0, "uncontrolled": 0})
        c["events"] += ev["count"]
        if is_violation(ev):
            c["uncontrolled"] += ev["count"]
    out: Dict[str, Any] = {
        "tests": tests,
        "events": sum(e["count"] for e in events),
        "distinct_events": len(events),
        "uncontrolled": sum(e["count"] for e in events if is_violation(e)),
        "suppressed": sum(e["count"] for e in events if e.get("suppressed")),
        "by_category": {k: by_cat[k] for k in sorted(by_cat)},
    }
    for k, v in sorted((counts or {}).items()):
        out[k] = v
    return out
