"""What one run of the analysis is and yields: a collected test (``TestItem``), a test's
result (``TestRun``), an HT201 sweep root's result (``SweepRun``), and ``start_run``, which
clears what the previous run left in the interpreter.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, FrozenSet, List, Optional, Set

from . import interp as I


@dataclass
class TestItem:
    node_id: str
    module: str
    path: str
    qualname: str                  # function qualname (module.Class.test)
    display: str                   # Class.test or test
    cls: Optional[str]             # class qualname for methods
    def_line: int
    unittest: bool = False
    markers: Set[str] = field(default_factory=set)
    plugin: Optional[str] = None   # the collecting plugin (``plugins``) whose class this test is a method of


@dataclass
class TestRun:
    item: TestItem
    events: List[I.SinkEvent]
    escapes: List[tuple] = field(default_factory=list)   # HT202 candidates
    misses: List[tuple] = field(default_factory=list)    # HT205 candidates
    consumed: Set[tuple] = field(default_factory=set)    # import-time reads whose values it uses
    marks: List[tuple] = field(default_factory=list)     # HT4xx: guard calls and side effects, in order
    fixtures: Set[str] = field(default_factory=set)      # qualnames of the fixtures it used
    # what the result depends on and what it adds to the suite's lists (the per-test result cache)
    deps: int = 0                                         # modules whose code it ran (``Interp.files`` bits)
    unresolved: Dict[tuple, str] = field(default_factory=dict)   # its unresolved-call notes
    touched: List[str] = field(default_factory=list)     # modules imported after collection that it imported
    import_events: List[I.SinkEvent] = field(default_factory=list)   # import-time events of its run
    redirects: FrozenSet[tuple] = frozenset()   # module globals (module, name) it put its own value in


@dataclass
class SweepRun:
    """One HT201 sweep root's run: its file events, and as ``TestRun`` what it depends on."""

    root: str
    events: List[I.SinkEvent]
    deps: int = 0
    unresolved: Dict[tuple, str] = field(default_factory=dict)
    touched: List[str] = field(default_factory=list)


def start_run(ip: I.Interp) -> None:
    """Clear what the previous test (or sweep root) left: its events (import-time ones move to
    ``ip.import_events``), its writes to module, class and import-time instance state (also
    those of the modules it imported after collection), HT202/HT205 candidates, consumed reads,
    S2 writes, guard marks, step count and instances. Instances live for one run, numbered from
    the same base in every run. The write log restarts with them."""
    ip.import_events.extend(e for e in ip.events if e.import_time)
    ip.events = []
    ip.undo_test_writes()   # each test starts from the state import left, whatever ran before it
    ip.escapes, ip.escape_keys, ip.misses, ip.miss_keys = [], [], [], []
    ip.consumed, ip.marks, ip.direct_env = [], [], []
    ip.table_chain = {}
    ip.steps = 0
    ip.cut_at = I.NO_CUT
    ip.depth_cut = ip.budget_hit = False
    ip.reach, ip.calls, ip.reads, ip.greads = 0, 0, 0, 0
    ip.files, ip.run_unresolved, ip.unres_log = 0, {}, []
    ip.shared_roots = []
    ip.test_instance = None
    ip.finalizers = []
    ip.expecting, ip.expecting_many, ip.expect_hit = frozenset(), frozenset(), False
    ip.touched = set()
    ip.collected = True   # imports from now on are imports after collection
    heap = ip.heap
    for iid in range(I.TEST_HEAP_BASE, max(ip.next_id, I.TEST_HEAP_BASE)):   # a run's ids are consecutive
        heap.pop(iid, None)
    ip.next_id = I.TEST_HEAP_BASE
    ip.wlog = []
