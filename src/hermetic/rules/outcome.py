"""``Outcome``: what one analysis and its rules found, as the report takes it and as the
analysis cache keeps it (``engine.reuse`` pickles ``to_dict()``, the dict it always stored,
and a later run that analyses nothing again reads it back with ``from_dict``)."""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Dict, List, Tuple

if TYPE_CHECKING:   # for the annotations only
    from ..report.model import Finding


@dataclass
class Outcome:
    """One analysis' result. The findings are before filters and suppressions; the fields
    from ``deps`` on are what ``reuse.settled`` and HT3xx's key read of the run."""
    findings: List["Finding"]
    unknown: List[dict]   # the report's unknown origins
    tests: int   # selected tests
    unresolved: Dict[Tuple[str, int, int], str]   # (path, line, column) -> the call's text
    inventory: List[dict]
    ran: List[str]   # the modules whose code the tests ran
    sinks: int   # distinct sink sites reached
    def_lines: Dict[str, Tuple[str, int]]   # node id -> (path, line of its def)
    deps: List[str]   # the modules the tests, the sweep and HT3xx's imports ran code of
    lazy: List[str]
    sweep_modules: List[str]
    roots: List[str]   # the HT201 sweep's roots
    globals: Dict[str, List[str]]   # swept module -> its global names (``reuse.reads_no_state``)
    fixture_users: Dict[str, List[str]]   # fixture -> the node ids of the tests using it
    node_ids: List[str]

    def to_dict(self) -> dict:
        """The outcome as the analysis cache stores it: a dict of the fields, in their order."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, d: dict) -> "Outcome":
        """The outcome ``to_dict`` gave (its values shared, not copied). Raises TypeError for
        a dict of other keys."""
        return cls(**d)
