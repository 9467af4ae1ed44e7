"""The abstract interpreter over summaries: ``Interp``, assembled from its parts.

The interpreter runs a test the way pytest would (set-up, fixtures, body), over abstract
values (``values.V``) instead of real ones. It follows calls into the project's own
functions, classes and methods (contract section 3), keeps the substitutes the test
installs (section 2 rows S1-S6) in a ``Ctx``, and records a ``SinkEvent`` at every I/O
operation it reaches, with the target's origins, the verdict and the call chain.

Function results are memoized per (function, abstract arguments, control state), so a
function reached by many tests with the same inputs is evaluated once, and its events are
replayed under each caller's trace.

``Interp`` is one class made of mixins, one module per concern: ``modules`` (imports),
``statements``, ``expressions``, ``objects`` (classes, instances), ``calls``, ``memo``,
``controls`` (substitutes), ``sinks``; its data in ``state``, ``limits``, ``relocate``,
``origins``, ``literals``, the linked program in ``hermetic.link.program``. Here are its
state (``__init__``) and ``call_function`` with the memo's depth check (``_usable``): they
read ``MAX_DEPTH`` and ``STEP_BUDGET`` from this module, where tests set them. The names
other modules use (``I.Frame``, ``I.Program``, ``I.dotted_qualname`` ...) stay importable
from here.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Set, Tuple

from ..catalogue.controls import (_BUILTIN_FIXTURES_CONTROLLED, _FREEZE_FIXTURES, _FS_FAKES, _FS_FIXTURES,
                                  _NET_FIXTURES, _NET_MOCKS, _SUBPROCESS_FIXTURES)
from ..link.program import Program
from .calls import Calls
from .decorators import Decorators
from .processfx import module_inputs, process_lines
from .value_types import Types
from .conditions import Conditions
from .controls import Controls
from .expressions import Expressions
from .limits import (BUDGET_NOTE, IMPORT_STATE_READ, MAX_DEPTH, MEMO_LIMIT, NO_CUT, RUN_STEPS, STEP_BUDGET, SWEEP_BUDGET,
                     SWEEP_DEPTH, SWEEP_RUN_STEPS, TEST_HEAP_BASE)
from ..summarise.ir import dotted_name
from .literals import _BUILTINS, _canonical, dotted_qualname, _literal_str
from .memo import Memo
from .modules import Modules
from .objects import Objects
from .origins import origin_bases
from .relocate import _call_bit, _remap, _remap_write
from .sinks import Sinks
from .state import Ctx, Frame, SinkEvent, _Effects, _MemoEntry
from .statements import Statements
from .containers import Containers
from .values import CONTROLLED, EMPTY, RAISED_V, UNCONTROLLED, UNKNOWN_V, Origin, V, of


# the names runner, pollution, check, engine and the tests use from here
__all__ = ['Interp', 'Program', 'Frame', 'SinkEvent', 'Ctx', 'V', 'EMPTY', 'CONTROLLED', 'UNCONTROLLED', 'of',
           'MAX_DEPTH', 'STEP_BUDGET', 'NO_CUT', 'TEST_HEAP_BASE', '_BUILTINS', '_NET_MOCKS', '_NET_FIXTURES',
           '_FS_FAKES', '_FREEZE_FIXTURES', '_FS_FIXTURES', '_SUBPROCESS_FIXTURES',
           '_BUILTIN_FIXTURES_CONTROLLED', '_remap', '_remap_write', 'origin_bases', '_canonical', '_literal_str',
           'dotted_qualname']


class Interp(Modules, Statements, Containers, Expressions, Conditions, Objects, Calls, Decorators, Types, Memo,
             Controls, Sinks):
    """The abstract interpreter: the state of one analysis process (see ``__init__``).
    The methods are in the mixins, by concern; attribute lookup finds them on the class."""

    def __init__(self, program: Program):
        self.p = program
        self.globals: Dict[str, Dict[str, V]] = {}
        self.ctx = Ctx()
        self.stack: List[Frame] = []
        self.events: List[SinkEvent] = []
        self.heap: Dict[int, Dict[str, Any]] = {}
        self.next_id = 1
        self.wlog: List[tuple] = []   # every write to the heap, class or module state (memo replay)
        self.attr_undo: Optional[list] = None   # inside alternative ways: their attribute writes (ways.py)
        self.memo: Dict[tuple, "_MemoEntry"] = {}   # key -> its latest entry (older ones chained by ``alt``)
        self.memo_alts = 0   # entries chained behind others (the memo's size is both)
        self.unresolved: Dict[Tuple[str, int, int], str] = {}
        self.defaults: Dict[str, Dict[str, V]] = {}
        self.closures: Dict[str, Dict[str, V]] = {}
        self.lambdas: Dict[int, tuple] = {}
        self._lambda_ids: Dict[tuple, int] = {}
        self.import_time = True
        # a test module's top-level `if` statements the import decided: (module, line) -> the way taken
        self.module_ifs: Dict[Tuple[str, int], bool] = {}
        self.import_raised: Set[str] = set()   # modules whose top level raises on every way
        self.steps = 0
        self.budget_hit = False
        # where a call was cut (depth, recursion, budget): the lowest stack index the cut depends on.
        # A call whose own run cut below its frame depends on its callers, so it is not memoized.
        self.cut_at = NO_CUT
        self.stack_base = 0   # index of the frame that the running import (or test) started from
        self._line_budget: tuple = (None, 0)   # (frame, line) whose budget a test's or module's body is spending
        self.class_attrs: Dict[str, Dict[str, V]] = {}
        self.import_events: List[SinkEvent] = []
        self._mro_cache: Dict[str, List[str]] = {}
        self.use_memo = True
        self._site: Tuple[str, tuple] = ("", (0, 0, 0, 0))
        self.escapes: List[tuple] = []   # HT202 candidates: (site, base, derived constant origin)
        self.escape_keys: List[tuple] = []   # the same, by the patched key (for memo replay)
        self.miss_keys: List[tuple] = []
        self.misses: List[tuple] = []    # HT205 candidates: (site, patched, binding, kind, undecided)
        self.sweep = False
        self.missed_depth = 0   # > 0 while running code reached through a binding a patch misses
        self.undecided = 0   # > 0 while running one of alternatives the values do not decide (confidence)
        self.added = None    # (name, method, args) of the last append / add / insert / extend (Statements)
        self.guarded = 0     # > 0 in a try body or a with block: an exception may cut it short (fsmodel)
        # while a `try` body of plain calls runs (``handlers.calls_only``): per call, whether the
        # callee is a test double that raises nothing (``controls.quiet_double``)
        self.try_watch: Optional[List[bool]] = None
        self.cm_ctx: List[Optional[Ctx]] = []
        self.direct_env: List[str] = []   # variables test code sets itself (os.environ[K] = v), S2
        self.consumed: List[tuple] = []   # (path, line) of import-time env/clock reads a test uses
        # (states, test path, test line, on an undecided way): a project function's process-changing
        # statement the run executed, and the test's statement it ran under (HT302 / HT304 at a test's call)
        self.fx_hits: List[tuple] = []
        self.fx_hits_above: Set[tuple] = set()   # the same hits under the test-code frames above the test's
        # (path, first line) of the module-level statements that bound a constant at import
        # (HT203 / HT204: a read bound there is used by the runs that used that constant)
        self.constant_bindings: Set[Tuple[str, int]] = set()
        self._fx_lines: Dict[str, Dict[int, tuple]] = {}
        self._fx_modules: Dict[str, tuple] = {}   # module -> ``processfx.module_inputs``
        self.marks: List[tuple] = []      # HT4xx: ("guard" | "side", (path, line) of the test-owned statement)
        # Shared state a test has written (module globals, class attributes, attributes of
        # instances made at import), cell by cell, for the memo: a memoized call depends on the
        # cells its run read, so it is reused wherever those hold what they held then, whatever
        # else differs. A cell gets a bit when a test first writes it (``_cell``); reads of cells
        # no test has written are not recorded: until then they hold what import left.
        # the cells written so far, by kind ("gattr" | "cattr" | "attr" | "touch"): owner (module,
        # class, instance made at import, module imported after collection) -> name -> bit
        self.watch: Dict[str, Dict[Any, Dict[str, int]]] = {"gattr": {}, "cattr": {}, "attr": {}, "touch": {}}
        self.watch_g = self.watch["gattr"]   # the lookup path's
        self.n_cells = 0
        self.import_version = 0   # a chain over import's own writes to shared state (memo keys at import time)
        self.dirty = 0   # the cells written since the run began, as bits
        self.cver: Dict[int, int] = {}   # bit -> hash of what the cell holds now (dirty cells only)
        self.cjournal: List[tuple] = []   # (bit, its version before the write) for each write of the run
        self.reads = 0   # the written cells the running call has read, as bits
        # every cell the running call has read, written or not, as one of 1,024 bits by a hash of
        # (owner, name): a cell first written after a call began was read by it only if its bit is
        # here (a shared bit only makes the memo more careful)
        self.greads = 0
        self.cell_group: Dict[int, int] = {}   # cell bit -> its bit among ``greads``'
        self._gbits: Dict[Any, Dict[str, int]] = {}   # owner -> name -> its bit among ``greads``' (``_gbit``)
        self.undo: List[tuple] = []   # test-time writes to shared state, to put back after the test
        # (module, name) -> (the dict the test's monkeypatch.setitem left there, the states it had)
        self.table_chain: Dict[tuple, tuple] = {}
        self.shared_roots: List[V] = []   # values holding test instances written to shared state (memo inputs)
        # the cells among them, as bits: a call that reads none of those written before it began
        # depends on the instances only its inputs reach, so its memo key leaves the shared
        # roots out (walking them was most of the key's cost on SQLAlchemy); the functions whose
        # runs did read one are keyed with them from then on
        self.inst_cells = 0
        self.deep_calls: set = set()
        self.short_key = False   # the call being looked up is keyed without them
        self.test_instance = None   # the running test method's ``self`` atom: a fixture's ``request.instance``
        self.fixture_scope = None   # the running test's fixtures (``FixtureScope``): request.getfixturevalue
        self.way_cut = False   # the statement just run left what follows on an undecided way (``exec_block``)
        self.raising = False   # the block that just ended ended by raising, on every way (not by a return)
        self.jumping = False   # ... by a `break` or `continue` on every way (``loops``)
        self.call_raised = False   # a call of the statement being run raises on every way
        self.exits = False   # ... through a library call that never returns (catalogue [raises])
        self.platform_read = False   # the condition being decided read a platform fact (statements)
        # the exception classes the test's `with pytest.raises(E)` expects (``expected``), and
        # whether the run reached E's one raise site: everything unwinds to that `with`
        self.expecting: frozenset = frozenset()
        self.expecting_many: frozenset = frozenset()   # expected, raised at a few places: marks (statements)
        self.expect_hit = False
        self.captured = True   # pytest captures the output: in a test sys.stdout is no terminal (Runner)
        self.finalizers: List[tuple] = []   # (callable, fixture frame) a fixture registered with request.addfinalizer
        self._on_stack: Dict[str, List[int]] = {}   # function -> stack indices of its running calls
        self.depth_cut = False   # a call inside the running one was cut for depth
        self.reach = 0           # the deepest stack a call was made at, within the running call
        self.calls = 0           # the functions called within the running call (``_call_bit``)
        self._ext_bases: Dict[str, List[str]] = {}
        self.method_wrappers: Dict[str, V] = {}   # method -> the wrapper its project decorators return
        self.property_methods: Set[str] = set()   # methods a project descriptor class decorates
        # after collection, a module imported for the first time is imported as at collection, in
        # the state collection left; what its import writes into other modules' state is logged
        # and applied to each run that imports it (touches it), and put back after that run
        self.collected = False
        self.lazy: Dict[str, List[tuple]] = {}   # module -> ("w", kind, owner, name, value) / ("touch", module)
        self.touched: set = set()                # modules the current run has imported
        self._lazy_frames: List[dict] = []       # lazy imports in progress, innermost last
        self._module_names = sorted(program.summaries)
        self._module_index = {m: i for i, m in enumerate(self._module_names)}
        # what a test's result depends on besides the state collection left: the modules whose
        # function bodies (and lambdas) it ran, directly, through a reused call or an import after
        # collection, as bits of ``file_bits`` (the per-test result cache, ``hermetic.engine.reuse``)
        self.file_bits = {m: 1 << i for i, m in enumerate(self._module_names)}
        self.files = 0
        self.lazy_files: Dict[str, int] = {}       # module imported after collection -> what its import ran
        self.lazy_unresolved: Dict[str, tuple] = {}   # ... and the unresolved notes it made
        self.run_unresolved: Dict[Tuple[str, int, int], str] = {}   # the current run's notes
        self.unres_log: List[tuple] = []   # the current run's notes in order (memo entries keep theirs)
        self.collection_ran: List[str] = []   # the functions called during collection, in order

    def fx_lines_of(self, qn: str, f: dict, mod: str) -> Dict[int, tuple]:
        """Line -> the states ``f``'s statement there changes (``processfx.process_lines``), once."""
        lines = self._fx_lines.get(qn)
        if lines is None:
            inputs = self._fx_modules.get(mod)
            if inputs is None:
                inputs = self._fx_modules[mod] = module_inputs(self.p.summaries.get(mod))
            lines = self._fx_lines[qn] = process_lines(f, *inputs)
        return lines

    def _fx_hit(self, keys: tuple, maybe: bool = False) -> None:
        """A statement changing the states ``keys`` ran, under the test's statement on the bottom
        of the stack and under the statement of each test-code frame above it (a helper of the
        test module, which HT304 reports at its own call); ``maybe``: on a way the test's values
        do not decide (so is any hit while ``undecided``)."""
        top = self.stack[0] if self.stack else None
        maybe = maybe or self.undecided > 0
        self.fx_hits.append((keys, top.path if top else "", top.line if top else 0, maybe))
        for fr in self.stack[1:]:
            if fr.in_test:   # kept apart: a memo entry keeps one hit per statement run
                self.fx_hits_above.add((keys, fr.path, fr.line, maybe))

    def in_own_body(self) -> bool:
        """Whether the code running is a test's or fixture's own body, not a function it calls:
        no memoized call is running, so what depends on the running test may be read there."""
        return len(self.stack) <= 1

    def call_function(self, qn: str, args: List[V], kwargs: Dict[str, V], frame: Frame, self_atom=None) -> V:
        entry = self.p.functions.get(qn)
        if entry is None:
            return UNKNOWN_V
        f, mod = entry
        if qn in self.p.control_functions or dotted_qualname(qn) in self.p.control_functions:
            return of(Origin("test-value", expr=qn))
        if self.p.guard_function and qn == self.p.guard_function:
            self._mark("guard")
            return EMPTY   # the guard's own reads are not reported (section 5)
        if self.p.bootstrap and (qn in self.p.bootstrap or dotted_qualname(qn) in self.p.bootstrap):
            given = list(args) + list(kwargs.values())
            scratch = given and all(o.kind == "test-value" for v in given for o in v.origins()) and any(
                True for v in given for _ in v.origins())
            if not scratch:
                self._mark("side")
        here = len(self.stack)   # this call's frame index
        depth = here - self.stack_base
        bit = _call_bit(qn)
        self.calls |= bit   # a call made (or cut) below the caller: its reuse depends on it
        if here > self.reach:
            self.reach = here
        budget, cap = (SWEEP_BUDGET, SWEEP_RUN_STEPS) if self.sweep else (STEP_BUDGET, RUN_STEPS)
        caller = self.stack[-1] if self.stack else frame
        if not self.sweep and (caller.is_module and here == self.stack_base + 1
                               or caller.cls is not None and caller.name == caller.cls
                               or here == 1 and self.stack_base == 0 and caller.in_test and not self.import_time):
            # a module's, a class body's or a test's (fixture's) own body: each of its lines has a
            # budget, so the last calls of a long test, module or class (its decorators) are
            # followed as its first are (issue 25: most cuts were there)
            # the frame itself, not its id: a later frame at a freed address must start afresh
            if self._line_budget[0] is not caller or self._line_budget[1] != caller.line:
                self._line_budget = (caller, caller.line)
                caller.step0 = self.steps
        if depth > (SWEEP_DEPTH if self.sweep else MAX_DEPTH):
            self.depth_cut = True   # the result depends on how deep the call is: memoized with its depth
            if not self.sweep:
                self.budget_hit = True
                fr = self.stack[-1] if self.stack else frame
                self.note_unresolved((fr.path, fr.line, 0), dotted_qualname(qn) + BUDGET_NOTE)
            return UNKNOWN_V
        if self.steps - caller.step0 > budget or self.steps > cap:
            # the calling function has used its budget (its own statements and its callees'): a cut
            # that depends on that call alone, so the call stays reusable; past the cap for the whole
            # run everything on the stack depends on where the run is
            if self.steps > cap:
                self.cut_at = self.stack_base
            self.budget_hit = True
            if not self.sweep:
                fr = self.stack[-1] if self.stack else frame
                self.note_unresolved((fr.path, fr.line, 0), dotted_qualname(qn) + BUDGET_NOTE)
            return UNKNOWN_V
        on_stack = self._on_stack.get(qn)
        if on_stack is not None and len(on_stack) >= 2:
            same = [i for i in on_stack if i >= self.stack_base]   # an import's frames count from its module
            if len(same) >= 2:
                # no cut mark: every call around this one has ``qn`` among its calls, and its memo
                # entry holds how often ``qn`` ran above it, so it is reused only where this check
                # cuts the same way (``_usable``)
                return UNKNOWN_V
        # a decorator that wraps and replaces the function is not followed (contextmanager is)
        loc = self.bind_params(qn, f, args, kwargs, self_atom)
        closure = self.closures.get(qn)
        inst0 = self.inst_cells
        deep = inst0 != 0 and qn in self.deep_calls
        self.short_key = inst0 != 0 and not deep   # read by ``_usable``
        shape, ids = self._canon_inputs(loc, closure, deep)
        key = (qn, shape, self.ctx.key(), self.import_time, self.import_version if self.import_time else 0,
               self.missed_depth > 0, self.sweep, self.undecided > 0, deep, self.expecting, self.expecting_many,
               self.captured, self.guarded > 0)
        # the exceptions doubles raise are test instances whose attributes the test may change
        # between calls, which the key does not see: no reuse while there are any
        memo_ok = self.use_memo and not self.ctx.effects
        found = self._lookup(key, depth, ids) if memo_ok else None
        if found is not None:
            return self._reuse(found[0], found[1], here)
        wstart = len(self.wlog)
        estart, mstart, cstart, kstart = len(self.escape_keys), len(self.miss_keys), len(self.consumed), len(self.marks)
        fxstart = len(self.fx_hits)
        dstart, evstart, cmstart = len(self.direct_env), len(self.events), len(self.cm_ctx)
        outer_cut, self.cut_at = self.cut_at, NO_CUT
        outer_depth_cut, self.depth_cut = self.depth_cut, False
        outer_budget, self.budget_hit = self.budget_hit, False
        outer_reach, outer_calls, self.reach, self.calls = self.reach, self.calls, here, 0
        outer_files, self.files, ustart = self.files, self.file_bits.get(mod, 0), len(self.unres_log)
        outer_reads, outer_greads, self.reads, self.greads = self.reads, self.greads, 0, 0
        dirty0, cells0, jstart = self.dirty, self.n_cells, len(self.cjournal)
        rstart = len(self.collection_ran)
        if not self.collected:
            self.collection_ran.append(qn)
        steps_before = self.steps
        first_id = self.next_id
        ctx_before = key[2]
        cls = f.get("class")
        fr = Frame(module=mod, path=self.p.summaries[mod]["path"], name=qn, line=f["line"],
                   in_test=self.p.in_test.get(mod, False), cls=cls, step0=self.steps)
        fr.locals = loc
        if not self.import_time and not fr.in_test:
            fr.fx_lines = self.fx_lines_of(qn, f, mod)
        cm = f["generator"] and any(dotted_name(d).endswith("contextmanager") for d, _l in f["decorators"])
        if cm and not self.import_time:
            fr.undo0 = len(self.undo)   # what it writes before its yield holds in the `with` block
        self.stack.append(fr)
        self._on_stack.setdefault(qn, []).append(here)
        outer_raising, outer_raised, outer_jumping = self.raising, self.call_raised, self.jumping
        self.jumping = False
        raised = False
        try:
            # every way raised: the block ended raising and no way returned before (a `return`
            # on an undecided way in a loop, then a `raise` after it, is not that)
            # and not on the state of an object made at import, which set-up may have changed
            raised = self.exec_block(f["body"], fr) and self.raising and not fr.returned \
                and not self.greads & IMPORT_STATE_READ
        except RecursionError:
            self.cut_at = 0   # how deep Python's own stack was: depends on everything below
        finally:
            self.raising, self.call_raised, self.jumping = outer_raising, outer_raised, outer_jumping
            self.way_cut = False   # the callee's own early returns leave the caller's way as it was
            self.stack.pop()
            idx = self._on_stack[qn]
            idx.pop()
            if not idx:
                del self._on_stack[qn]
            inner_cut, self.cut_at = self.cut_at, min(outer_cut, self.cut_at)
            inner_depth_cut, self.depth_cut = self.depth_cut, outer_depth_cut or self.depth_cut
            inner_budget, self.budget_hit = self.budget_hit, outer_budget or self.budget_hit
            inner_reach, inner_calls = self.reach, self.calls
            self.reach, self.calls = max(outer_reach, inner_reach), outer_calls | inner_calls
            inner_files = self.files
            self.files |= outer_files
            inner_reads, inner_greads = self.reads, self.greads
            self.reads |= outer_reads
            self.greads |= outer_greads
        ret = fr.returns
        if raised and not f["generator"] and not f["is_async"]:
            ret = RAISED_V   # (a generator or a coroutine raises only when it is run)
        if f["generator"]:
            if fr.yield_ctx is not None:   # what followed the yield ran later: what its call leaves is as at the yield
                self.ctx.tree_changed = fr.yield_ctx.tree_changed
            ret = of(("seq", "list", (fr.yields,))) if fr.yields.atoms else UNKNOWN_V
            if cm:
                cm_id = len(self.cm_ctx)
                self.cm_ctx.append(fr.yield_ctx)   # the control state inside the `with` block
                at_yield = self.state_at_yield(fr)
                ret = of(("ctxfactory", fr.yields, cm_id) + ((at_yield,) if at_yield else ()))
        if f["is_async"] and not ret.atoms:
            ret = UNKNOWN_V
        if len(self.memo) + self.memo_alts > MEMO_LIMIT:
            self.clear_memo()   # bounded memory on large projects: recompute rather than grow
        if inst0 and not deep and inner_reads & inst0:
            # it read test instances through shared state, which its key left out: not stored,
            # and from now on keyed with them
            self.deep_calls.add(qn)
        elif inner_cut >= here and not self.expect_hit and memo_ok:
            # cut, if at all, by its own frames only: the same result anywhere (a run that reached
            # the expected exception's raise unwinds, which a reuse would not)
            ctx_after = self.ctx.copy() if self.ctx.key() != ctx_before else None
            effects = _Effects(
                tuple(self.wlog[wstart:]), ctx_after, tuple(self.escape_keys[estart:]),
                tuple(self.miss_keys[mstart:]), tuple(self.consumed[cstart:]), tuple(self.marks[kstart:]),
                tuple(self.direct_env[dstart:]), inner_cut - here if inner_cut != NO_CUT else NO_CUT,
                self.steps - steps_before, tuple(self.cm_ctx[cmstart:]), cmstart, inner_budget,
                tuple((h[0], h[3]) for h in self.fx_hits[fxstart:]))
            fresh = self.next_id - first_id
            entry = _MemoEntry(ret, tuple(self.events[evstart:]), here, effects, ids, first_id, fresh,
                               depth if inner_depth_cut else None, inner_reach - here, inner_calls,
                               self._above(inner_calls), inner_files, tuple(dict.fromkeys(self.unres_log[ustart:])),
                               tuple(self.collection_ran[rstart:]) if not self.collected else ())
            entry.reads, entry.greads, entry.cells = inner_reads, inner_greads, cells0
            entry.dmask = dmask = inner_reads & dirty0
            if dmask:
                entry.dver = self._versions_at(dmask, jstart)
            self._store(key, entry)
        return ret

    def _usable(self, hit: "_MemoEntry", depth: int) -> bool:
        """Whether a stored call gives here what a first run would: the depth limit and the
        recursion limit cut it where they cut its first run (or nowhere, both times). Under a
        key that left the shared roots out, also that the run's step cap does not fall inside it:
        a first run would be cut there (docs/limits.md: calls keyed as before still are)."""
        if self.short_key and self.steps + hit.effects.steps > (SWEEP_RUN_STEPS if self.sweep else RUN_STEPS):
            return False
        if hit.at_depth is not None:
            if hit.at_depth != depth:
                return False
        elif depth + hit.reach > (SWEEP_DEPTH if self.sweep else MAX_DEPTH):
            return False
        if hit.above or self._on_stack:
            for qn, n in hit.above.items():
                if self._count_above(qn) != n:
                    return False
            for qn in self._on_stack:
                if qn not in hit.above and hit.calls & _call_bit(qn) and self._count_above(qn):
                    return False
        return True
