"""What one run of the analysis is and yields: a collected test (``TestItem``), a test's
result (``TestRun``), an HT201 sweep root's result (``SweepRun``), and ``start_run``, which
clears what the previous run left in the interpreter.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

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
    # (states, test path, test line) of the process-changing statements of project functions its
    # run executed (``Interp.fx_hits``); None where not known (the run stopped at the step budget,
    # a run an older cache kept)
    fx_hits: Optional[FrozenSet[tuple]] = None


@dataclass
class SweepRun:
    """One HT201 sweep root's run: its file events, and as ``TestRun`` what it depends on."""

    root: str
    events: List[I.SinkEvent]
    deps: int = 0
    unresolved: Dict[tuple, str] = field(default_factory=dict)
    touched: List[str] = field(default_factory=list)


# the text of the note a test whose analysis raised leaves (``failed_run``): the report shows it
# as an error line, not among the unresolved calls
INTERNAL_ERROR = "hermetic internal error:"


def failed_run(ip: I.Interp, item: TestItem, exc: Exception) -> TestRun:
    """The run of a test whose analysis raised ``exc`` (a bug of hermetic's): nothing found for
    it, and a note at its ``def`` line the report turns into an error, so the other tests are
    analysed and the run exits 1 instead of ending in a traceback."""
    site = (item.path, item.def_line, 0)
    text = f"{INTERNAL_ERROR} {type(exc).__name__}: {exc} (the test was not analysed; please report it)"
    ip.note_unresolved(site, text)
    ip.stack = []
    return TestRun(item, [], unresolved={site: text})


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
    ip.consumed, ip.marks, ip.direct_env, ip.fx_hits = [], [], [], []
    ip.fx_hits_above = set()
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


class Rows(Exception):
    """Raised by a test's first run when its parametrize rows are to run one by one (``runs``:
    each run's parameter values), before anything of the test ran."""

    def __init__(self, runs: List[dict]) -> None:
        super().__init__(len(runs))
        self.runs = runs


def _event_key(e: I.SinkEvent) -> tuple:
    return (e.category, e.path, e.pos, e.call, e.verdict, e.origin, e.trace, e.import_time, e.module, e.target,
            e.write, e.targets, e.missed, e.reason, e.via_fixture, e.undecided, e.several, e.may_write)


def _unique(items: list, key=lambda x: x) -> list:
    seen: Set = set()
    out = []
    for x in items:
        k = key(x)
        if k not in seen:
            seen.add(k)
            out.append(x)
    return out


def guard_order(marks: List[tuple]) -> Tuple[Optional[int], Optional[int]]:
    """Where the first side effect and the first guard call are among HT4xx marks (``("side",
    place)`` / ``("guard", place)``, in the order they happen): their indexes, None for none."""
    side = next((i for i, m in enumerate(marks) if m[0] == "side"), None)
    guard = next((i for i, m in enumerate(marks) if m[0] == "guard"), None)
    return side, guard


def _guard_rank(marks: List[tuple]) -> int:
    """How badly a run's HT4xx marks order the guard: 2 a side effect and no guard (HT401), 1 a
    side effect first (HT402), 0 neither (``rules.guard``)."""
    side, guard = guard_order(marks)
    if side is None:
        return 0
    return 2 if guard is None else int(side < guard)


def merged(item: TestItem, runs: List[TestRun]) -> TestRun:
    """One ``TestRun`` for a test run once per parametrize row: what any row reached (each
    event once), and the guard marks of the row that orders them worst."""
    return TestRun(
        item,
        _unique([e for r in runs for e in r.events], _event_key),
        _unique([x for r in runs for x in r.escapes], repr),
        _unique([x for r in runs for x in r.misses], repr),
        set().union(*(r.consumed for r in runs)),
        list(max(runs, key=lambda r: _guard_rank(r.marks)).marks),
        set().union(*(r.fixtures for r in runs)),
        _or_bits(r.deps for r in runs),
        {k: v for r in runs for k, v in r.unresolved.items()},
        sorted(set().union(*(r.touched for r in runs))),
        _unique([e for r in runs for e in r.import_events], _event_key),
        frozenset().union(*(r.redirects for r in runs)),
        None if any(r.fx_hits is None for r in runs) else frozenset().union(*(r.fx_hits for r in runs)))


def _or_bits(values) -> int:
    out = 0
    for v in values:
        out |= v
    return out
