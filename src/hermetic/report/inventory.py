"""The inventory: per test, every I/O operation (sink) it reaches and whether, and by what, it
is controlled (``hermetic inventory``, the report's ``inventory``)."""
from __future__ import annotations

from typing import Dict, List

from ..analyse.values import UNCONTROLLED, UNKNOWN
from .origin import describe_origin


def inventory_of(runs) -> List[dict]:
    """Per test: every I/O operation it reaches, and whether (and by what) it is controlled."""
    out = []
    for run in sorted(runs, key=lambda r: r.item.node_id):
        ops: Dict[tuple, dict] = {}
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
            ops[key] = {"category": e.category, "path": e.path, "line": e.pos[0], "operation": e.call,
                        "status": status, "by": why}
        items = [ops[k] for k in sorted(ops)]
        out.append({"test": run.item.node_id, "operations": items,
                    "uncontrolled": sum(1 for o in items if o["status"] == "uncontrolled"),
                    "unknown": sum(1 for o in items if o["status"] == "unknown")})
    return out
