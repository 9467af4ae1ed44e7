"""The inventory: per test, every I/O operation (sink) it reaches and whether, and by what, it
is controlled (``hermetic inventory``, the report's ``inventory``)."""
from __future__ import annotations

import re
from typing import Dict, List

from ..analyse.values import UNCONTROLLED, UNKNOWN
from ..rules.registry import CATEGORY_CODE, severity_of
from .origin import describe_origin

# the decision table's row names (``(S3)``, ``(V2)``) the analysis' reasons carry: the
# inventory says them in words (docs/semantics.md has the table)
_ROW = re.compile(r" \((?:S|T|V|X|U)\d*\)")

#: the inventory's groups, most consequential first (``hermetic inventory``)
GROUPS = (("error", "can change something outside its sandbox or reach a real service"),
          ("warning", "depends on the machine it runs on"),
          ("unknown", "an origin the analysis cannot follow"),
          ("controlled", ""))


def inventory_of(runs, findings=()) -> List[dict]:
    """Per test: every I/O operation it reaches, and whether (and by what) it is controlled;
    with ``findings``, also the uncontrolled operations the imports it runs do (an HT1xx finding
    anchored at a module's top level lists the tests whose imports run it), as ``check`` does."""
    at_import: Dict[str, List[dict]] = {}
    category = {code: cat for cat, code in CATEGORY_CODE.items()}
    for f in findings:
        if f.code in category and f.trace and f.trace[0].function == "<module>":
            op = {"category": category[f.code], "path": f.path, "line": f.line, "operation": f.anchor.split("(")[0],
                  "status": "uncontrolled", "severity": f.severity, "by": f.message.split(": ")[0], "column": f.column}
            for t in f.tests:
                at_import.setdefault(t, []).append(op)
    out = []
    for run in sorted(runs, key=lambda r: r.item.node_id):
        ops: Dict[tuple, dict] = {}
        for op in at_import.get(run.item.node_id, ()):
            op = dict(op)
            ops[(op["path"], op["line"], op.pop("column"), op["category"])] = op
        for e in run.events:
            key = (e.path, e.pos[0], e.pos[1], e.category)
            if key in ops and ops[key]["status"] == "uncontrolled":
                continue
            if e.missed:
                status, why = "controlled", "reached through a binding a patch misses (see HT205)"
            elif e.verdict == UNCONTROLLED:
                status, why = "uncontrolled", describe_origin(e.origin) if e.category not in ("clock",) else \
                    "the real clock"
            elif e.verdict == UNKNOWN:
                status, why = "unknown", "an origin the analysis cannot follow"
            else:
                status, why = "controlled", e.reason or "a controlled value"
            sev = severity_of(CATEGORY_CODE[e.category], e.may_write) if status == "uncontrolled" else None
            ops[key] = {"category": e.category, "path": e.path, "line": e.pos[0], "operation": e.call,
                        "status": status, "severity": sev, "by": _ROW.sub("", why)}
        items = [ops[k] for k in sorted(ops)]
        out.append({"test": run.item.node_id, "operations": items,
                    "uncontrolled": sum(1 for o in items if o["status"] == "uncontrolled"),
                    "errors": sum(1 for o in items if o["severity"] == "error"),
                    "unknown": sum(1 for o in items if o["status"] == "unknown")})
    return out


def group_of(op: dict) -> str:
    """The inventory group (``GROUPS``) an operation of ``inventory_of`` is shown in."""
    if op["status"] == "uncontrolled":
        return op.get("severity") or "error"
    return "unknown" if op["status"] == "unknown" else "controlled"
