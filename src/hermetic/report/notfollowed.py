"""What the analysis did not follow, as the JSON report lists it with ``--show-unresolved`` /
``--show-unknown`` (contract section 8: path, line, the call or expression, the reason)."""
from __future__ import annotations

from typing import Any, Dict, List


def unresolved_rows(calls: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """``report.unresolved_calls`` as ``[{path, line, column, call, reason}]``; a note the
    analysis added to the call's text (``f (analysis budget reached)``) becomes the reason."""
    out = []
    for u in calls:
        call, reason = u["call"], "the callee could not be resolved"
        if call.endswith(")") and " (" in call:
            call, _sep, note = call[:-1].rpartition(" (")
            reason = note
        out.append({"path": u["path"], "line": u["line"], "column": u["column"], "call": call, "reason": reason})
    return out


def unknown_rows(origins: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """``report.unknown_origins`` as ``[{path, line, column, expression, category, tests,
    reason}]``: operations not reported because their target's origin cannot be seen."""
    return [{"path": u["path"], "line": u["line"], "column": u["column"], "expression": u["operation"],
             "category": u["category"], "tests": list(u.get("tests", [])),
             "reason": "the target comes from something the analysis cannot follow"} for u in origins]
