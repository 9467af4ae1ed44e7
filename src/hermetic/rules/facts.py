"""``Facts``: what the analysis hands every rule family (``rules.uncontrolled``,
``rules.import_time``, ``rules.state_leaks``, ``rules.guard``) in one typed object."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Dict, List

if TYPE_CHECKING:   # for the annotations only
    from ..analyse import interp as I
    from ..analyse.runner import Runner, TestItem, TestRun
    from ..config import Config
    from ..discover.project import SourceFile


@dataclass
class Facts:
    """One analysis' results, read by the rules (none of them changes these).

    ``ip``: the interpreter, in the state collection left (with the modules the tests
    imported), as each test started from; ``runs``: one per analysed test, its sink events,
    patch escapes and misses; ``sweep_events``: the file sinks of HT201's sweep of the
    project functions; ``import_events``: the sinks the modules' import reached;
    ``files_by_module``: module name -> its source file; ``items``: the selected tests.
    """
    ip: "I.Interp"
    runner: "Runner"
    config: "Config"
    items: List["TestItem"]
    runs: List["TestRun"]
    sweep_events: list
    import_events: List["I.SinkEvent"]
    files_by_module: Dict[str, "SourceFile"]
