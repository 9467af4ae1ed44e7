"""The abstract interpreter over summaries (linked into a ``Program``: ``hermetic.link.program``).

The interpreter runs a test the way pytest would (set-up, fixtures, body), over abstract
values (``values.V``) instead of real ones. It follows calls into the project's own
functions, classes and methods (contract section 3), keeps the substitutes the test
installs (section 2 rows S1-S6) in a ``Ctx``, and records a ``SinkEvent`` at every I/O
operation it reaches, with the target's origins, the verdict and the call chain.

Function results are memoized per (function, abstract arguments, control state), so a
function reached by many tests with the same inputs is evaluated once, and its events are
replayed under each caller's trace.

Its records are in ``state``, budgets and id ranges in ``limits``, memo renumbering in
``relocate``, origin and literal helpers in ``origins`` and ``literals``. The names other
modules use (``I.Frame``, ``I.Program``, ``I._decorator_name`` ...) stay importable from here.
"""
from __future__ import annotations

import dataclasses
from pathlib import PurePosixPath
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..catalogue.controls import (_BUILTIN_FIXTURES_CONTROLLED, _DOUBLE_CTORS, _FREEZERS, _FREEZE_FIXTURES,
                                  _FS_FAKES, _FS_FIXTURES, _NET_FIXTURES, _NET_MOCKS, _SUBPROCESS_FIXTURES)
from ..catalogue.loader import SinkSpec
from ..link.program import Program
from .limits import (LAZY_BLOCK_BITS, LAZY_HEAP_BASE, MAX_DEPTH, MEMO_ALTERNATIVES, MEMO_LIMIT, NO_CUT,
                     RUN_STEPS, STEP_BUDGET, SWEEP_BUDGET, SWEEP_DEPTH, SWEEP_RUN_STEPS, TEST_HEAP_BASE,
                     _GROUP_BITS, _GROUP_MASK, _TOUCH)
from .literals import (_BUILTINS, _any_literal_tilde, _canonical, _decorator_name, _dotted_name, _expr_text,
                       _literal_int, _literal_str, _literal_strs, _number, _pick, _str_affix, _str_contains,
                       is_none, truthiness)
from .origins import (_CONTAINER_CTORS, _CWD_FUNCS, _DICT_CTORS, _HEAD_FUNCS, _HOME_FUNCS, _HOME_PREFIXES,
                      _PATH_ATTRS, _PATH_CLASSES, _PATH_CTORS, _PATH_VALUE_METHODS, _TEMP_FUNCS, _bases,
                      _climb, _control_reason, _first_item, _has_path_origin, _head, _join_head, _origin_sort,
                      _origin_text, _up, _with_text, wrap_constant)
from .relocate import _CM, _call_bit, _relocatable, _remap, _remap_ctx, _remap_write
from .state import DELETED, Ctx, Frame, SinkEvent, _Effects, _MemoEntry, _Return
from .values import (CONTROLLED, DOUBLE, DOUBLE_V, EMPTY, UNCONTROLLED, UNKNOWN, UNKNOWN_V, Origin,
                     SinkContext, V, classify, lit, of, union)

# the names runner, pollution, check, engine and the tests use from here
__all__ = ['Interp', 'Program', 'Frame', 'SinkEvent', 'Ctx', 'V', 'EMPTY', 'CONTROLLED', 'UNCONTROLLED', 'of',
           'MAX_DEPTH', 'STEP_BUDGET', 'NO_CUT', 'TEST_HEAP_BASE', '_BUILTINS', '_NET_MOCKS', '_NET_FIXTURES',
           '_FS_FAKES', '_FREEZE_FIXTURES', '_FS_FIXTURES', '_SUBPROCESS_FIXTURES',
           '_BUILTIN_FIXTURES_CONTROLLED', '_remap', '_remap_write', '_bases', '_canonical', '_literal_str',
           '_dotted_name', '_decorator_name']


_import_reads: Dict[V, tuple] = {}   # value -> the import-time reads it carries (Interp._consume)


class Interp:
    def __init__(self, program: Program):
        self.p = program
        self.globals: Dict[str, Dict[str, V]] = {}
        self.ctx = Ctx()
        self.stack: List[Frame] = []
        self.events: List[SinkEvent] = []
        self.heap: Dict[int, Dict[str, Any]] = {}
        self.next_id = 1
        self.wlog: List[tuple] = []   # every write to the heap, class or module state (memo replay)
        self.memo: Dict[tuple, "_MemoEntry"] = {}   # key -> its latest entry (older ones chained by ``alt``)
        self.memo_alts = 0   # entries chained behind others (the memo's size is both)
        self.unresolved: Dict[Tuple[str, int, int], str] = {}
        self.defaults: Dict[str, Dict[str, V]] = {}
        self.closures: Dict[str, Dict[str, V]] = {}
        self.lambdas: Dict[int, tuple] = {}
        self._lambda_ids: Dict[tuple, int] = {}
        self.import_time = True
        self.steps = 0
        self.budget_hit = False
        # where a call was cut (depth, recursion, budget): the lowest stack index the cut depends on.
        # A call whose own run cut below its frame depends on its callers, so it is not memoized.
        self.cut_at = NO_CUT
        self.stack_base = 0   # index of the frame that the running import (or test) started from
        self.class_attrs: Dict[str, Dict[str, V]] = {}
        self.import_events: List[SinkEvent] = []
        self._mro_cache: Dict[str, List[str]] = {}
        self.use_memo = True
        self._site: Tuple[str, tuple] = ("", (0, 0, 0, 0))
        self.escapes: List[tuple] = []   # HT202 candidates: (site, base, derived constant origin)
        self.escape_keys: List[tuple] = []   # the same, by the patched key (for memo replay)
        self.miss_keys: List[tuple] = []
        self.misses: List[tuple] = []    # HT205 candidates: (site, what the patch misses, right target)
        self.sweep = False
        self.missed_depth = 0   # > 0 while running code reached through a binding a patch misses
        self.cm_ctx: List[Optional[Ctx]] = []
        self.direct_env: List[str] = []   # variables test code sets itself (os.environ[K] = v), S2
        self.consumed: List[tuple] = []   # (path, line) of import-time env/clock reads a test uses
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
        self.shared_roots: List[V] = []   # values holding test instances written to shared state (memo inputs)
        self._on_stack: Dict[str, List[int]] = {}   # function -> stack indices of its running calls
        self.depth_cut = False   # a call inside the running one was cut for depth
        self.reach = 0           # the deepest stack a call was made at, within the running call
        self.calls = 0           # the functions called within the running call (``_call_bit``)
        self._ext_bases: Dict[str, List[str]] = {}
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

    def note_unresolved(self, site: Tuple[str, int, int], text: str) -> None:
        """A call the analysis does not follow; of several texts for one site, the least is
        kept, so the list does not depend on which test reached the site first."""
        old = self.unresolved.get(site)
        if old is None or text < old:
            self.unresolved[site] = text
        old = self.run_unresolved.get(site)
        if old is None or text < old:
            self.run_unresolved[site] = text
        self.unres_log.append((site, text))

    def ran_code(self, mod: str) -> None:
        """The running test (or call) ran code of ``mod`` outside its import: it depends on it."""
        self.files |= self.file_bits.get(mod, 0)

    def files_of(self, bits: int) -> List[str]:
        """The module names ``bits`` (``file_bits``) stand for, sorted."""
        names = self._module_names
        out = []
        while bits:
            low = bits & -bits
            out.append(names[low.bit_length() - 1])
            bits ^= low
        return out

    # ------------------------------------------------------------------ modules
    def import_module(self, name: str) -> Optional[Dict[str, V]]:
        """Run a project module's top level once (import time); return its globals."""
        name = self.p.canonical.get(name, name)
        g = self.globals.get(name)
        if g is not None:
            self._read("touch", name, _TOUCH)
            if name not in self.touched and name in self.lazy:
                self._touch(name)
            return g
        s = self.p.summaries.get(name)
        if s is None:
            return None
        if self.collected and not (self._lazy_frames and self._lazy_frames[-1]["mod"] == name):
            return self._lazy_import(name)
        # importing a.b.c runs a and a.b first
        parts = name.split(".")
        for i in range(1, len(parts)):
            parent = ".".join(parts[:i])
            if parent in self.p.summaries and parent not in self.globals:
                self.import_module(parent)
        rel = self.p.rel_paths.get(name)
        room = len(PurePosixPath(rel).parts) if rel else None   # parents up to the project root
        g: Dict[str, V] = {"__name__": lit(name, s["path"], 0, False),
                           "__file__": of(Origin("project-file", expr="__file__", path=s["path"], line=0, room=room),
                                          is_path=False)}
        self.globals[name] = g
        saved = (self.ctx, self.import_time, self.stack, self.steps, self.stack_base, self.cut_at, self.depth_cut,
                 self.reach, self.calls, self.next_id)
        lazy = bool(self._lazy_frames)
        if lazy:   # instances made at import live as long as the module: numbered in the module's own block
            self.next_id = LAZY_HEAP_BASE + (self._module_index[name] << LAZY_BLOCK_BITS)
        env = dict(self.p.session_env)
        if self.import_time:
            env.update(self.ctx.env)  # a conftest that sets a variable, then imports
        self.ctx = Ctx(env=env)
        self.import_time = True
        frame = Frame(module=name, path=s["path"], name="<module>", in_test=self.p.in_test.get(name, False),
                      is_module=True)
        # the importer's frames stay for traces; depth, recursion and steps count from the module
        # frame, so the module's state does not depend on which test imported it first
        self.stack_base = len(self.stack)
        self.stack = list(self.stack) + [frame]
        self.steps = 0
        try:
            self.exec_block(s["body"], frame)
        except RecursionError:
            pass
        finally:
            if s["path"].endswith("conftest.py"):
                # conftest module level is session configuration (S2)
                for k, v in self.ctx.env.items():
                    self.p.session_env.setdefault(k, v)
            if not lazy:   # collection: one counter for everything made before the tests
                saved = saved[:-1] + (self.next_id,)
            (self.ctx, self.import_time, self.stack, self.steps, self.stack_base, self.cut_at, self.depth_cut,
             self.reach, self.calls, self.next_id) = saved
        return g

    def _lazy_import(self, name: str) -> Optional[Dict[str, V]]:
        """First import of ``name`` after collection. It runs in the state collection left: the
        running test's writes, and those of the imports around this one, are taken away
        meanwhile. So its module state is the same whichever test imports it first, directly
        or through another module. What it writes into other modules' state is logged and
        applied through ``_touch``, as for every later run that imports it."""
        current = []   # the writes in force, taken away; their values come back afterwards
        for kind, owner, attr, had, old in reversed(self.undo):
            store = self._state_store(kind, owner)
            current.append((kind, owner, attr, attr in store, store.get(attr)))
            if had:
                store[attr] = old
            else:
                store.pop(attr, None)
        undo_len, wlog, touched = len(self.undo), self.wlog, self.touched
        cells = (self.dirty, self.cver, self.cjournal, self.reads, self.greads)
        # nothing is in force, nothing touched; what the import writes is no memo replay's
        self.wlog, self.touched = [], set()
        self.dirty, self.cver, self.cjournal, self.reads, self.greads = 0, {}, [], 0, 0
        files_before, self.files, unres_from = self.files, 0, len(self.unres_log)
        events_from, importer = len(self.events), len(self.stack)
        self._lazy_frames.append({"mod": name, "log": [], "created": {name}})
        try:
            g = self.import_module(name)
        finally:
            done = self._lazy_frames.pop()
            self.lazy[name] = done["log"]
            self.lazy_files[name] = self.files
            self.lazy_unresolved[name] = tuple(self.unres_log[unres_from:])
            self.files |= files_before
            if self._lazy_frames:
                self._lazy_frames[-1]["created"] |= done["created"]
            for kind, owner, attr, had, old in reversed(self.undo[undo_len:]):   # the import's writes go
                store = self._state_store(kind, owner)
                if had:
                    store[attr] = old
                else:
                    store.pop(attr, None)
            del self.undo[undo_len:]
            for kind, owner, attr, had, val in reversed(current):   # what was in force comes back
                store = self._state_store(kind, owner)
                if had:
                    store[attr] = val
                else:
                    store.pop(attr, None)
            self.wlog, self.touched = wlog, touched
            # the import ran in the state collection left: it read nothing the running call depends on
            self.dirty, self.cver, self.cjournal, self.reads, self.greads = cells
            # the import's own events, traced from its module frame whoever imported it: import-time
            # events of the run, not part of any call's result the memo keeps
            self.import_events.extend(dataclasses.replace(e, trace=e.trace[importer:])
                                      for e in self.events[events_from:])
            del self.events[events_from:]
        self._touch(name)   # its writes into other modules, as every later importer gets them
        return g

    def _touch(self, name: str) -> None:
        """Apply to the current run what importing ``name`` after collection writes into other
        modules' state (undone with the run's writes); recorded for memo replays."""
        self.touched.add(name)
        self.files |= self.lazy_files.get(name, 0)
        for site, text in self.lazy_unresolved.get(name, ()):
            self.note_unresolved(site, text)
        if self._lazy_frames:
            self._lazy_frames[-1]["log"].append(("touch", name))
        wlog, self.wlog = self.wlog, []
        frames, self._lazy_frames = self._lazy_frames, []
        import_time, self.import_time = self.import_time, False
        wrote = len(self.cjournal)
        try:
            for item in self.lazy[name]:
                if item[0] == "touch":
                    if item[1] not in self.touched:
                        self._touch(item[1])
                else:
                    self.write_state(item[1], item[2], item[3], item[4])
        finally:
            self.wlog, self._lazy_frames, self.import_time = wlog, frames, import_time
        if len(self.cjournal) > wrote:   # whether it is touched yet changes what a later import of it does
            self._set_cell(self._cell("touch", name, _TOUCH), 1)
        self.wlog.append(("touch", name))

    def _owner_module(self, kind: str, owner) -> Optional[str]:
        if kind == "gattr":
            return owner
        if kind == "cattr":
            entry = self.p.classes.get(owner)
            return entry[1] if entry is not None else None
        if LAZY_HEAP_BASE <= owner < TEST_HEAP_BASE:
            idx = (owner - LAZY_HEAP_BASE) >> LAZY_BLOCK_BITS
            return self._module_names[idx] if idx < len(self._module_names) else None
        return None   # made at collection

    def module_attr(self, mod: str, name: str) -> V:
        mod = self.p.canonical.get(mod, mod)
        key = (("mod", mod), name)
        if key in self.ctx.patches:
            return self.ctx.patches[key]
        g = self.import_module(mod)
        self._read("gattr", mod, name)
        if g is not None and name in g:
            v = g[name]
            if not self.import_time:
                self._consume(v)
            if self.ctx.sites:
                v = self._check_miss(v, mod, name)
            return v
        sub = f"{mod}.{name}"
        if sub in self.p.summaries:
            self.import_module(sub)
            return of(("mod", self.p.canonical[sub]))
        if g is not None and "*star*" in g:
            return UNKNOWN_V
        return UNKNOWN_V

    # ------------------------------------------------------------------ statements
    def exec_block(self, stmts: Sequence, frame: Frame) -> bool:
        """Run statements; True when the block always ends in return/raise."""
        for st in stmts:
            if self.exec_stmt(st, frame):
                return True
        return False

    def exec_stmt(self, st, frame: Frame) -> bool:  # noqa: C901 - one dispatch over statement forms
        self.steps += 1
        kind = st[0]
        if kind == "expr":
            frame.line = st[2]
            self.eval(st[1], frame)
            return False
        if kind == "assign":
            frame.line = st[3]
            val = self.eval(st[2], frame)
            if frame.is_module:
                val = self._wrap_constant(val, st[1], frame)
            for t in st[1]:
                self.assign(t, val, frame)
            return False
        if kind == "augassign":
            frame.line = st[4]
            cur = self.eval_target_value(st[1], frame)
            val = self.eval(st[3], frame)
            self.assign(st[1], cur | val if cur.atoms else val, frame)
            return False
        if kind == "return":
            frame.line = st[2]
            if st[1] is not None:
                frame.returns = frame.returns | self.eval(st[1], frame)
            return True
        if kind == "import":
            frame.line = st[2]
            if self.p.bootstrap and not self.import_time:
                self._import_marks([full for _l, full, _a in st[1]])
            for local, full, has_as in st[1]:
                if full not in self.p.summaries and full.split(".", 1)[0] in self.p.summaries and not self.sweep:
                    # under a project package, naming no module of it: what it binds is not followed
                    self.note_unresolved((frame.path, st[2], 1), f"import {full} (no such module in the project)")
                if has_as:
                    frame_val = self._import_value(full)
                else:
                    top = full.split(".")[0]
                    self._import_value(full)
                    frame_val = self._import_value(top)
                self._bind(frame, local, frame_val)
            return False
        if kind == "from":
            frame.line = st[3]
            mod = st[1]
            if self.p.bootstrap and not self.import_time:
                self._import_marks([mod] + [f"{mod}.{attr}" for _l, attr in st[2]])
            if mod in self.p.summaries:
                self.import_module(mod)
                for local, attr in st[2]:
                    if local == "*":
                        g = self.globals.get(mod) or {}
                        for b in self.watch_g.get(mod, {}).values():   # also those a test's write would add
                            self.reads |= b
                        for k, v in g.items():
                            self.greads |= self._gbit(mod, k)
                            if not k.startswith("_"):
                                self._bind(frame, k, v)
                        continue
                    if not frame.is_module and not self.import_time:
                        # a from-import at call time reads the attribute as it is now (patched or not)
                        self._bind(frame, local, self.module_attr(mod, attr))
                    else:
                        self._bind(frame, local, self.module_attr_static(mod, attr))
            else:
                for local, attr in st[2]:
                    if local == "*":
                        continue
                    full = f"{mod}.{attr}"
                    key = (("ext", mod), attr)
                    if not frame.is_module and not self.import_time and key in self.ctx.patches:
                        self._bind(frame, local, self.ctx.patches[key])
                    else:
                        self._bind(frame, local, self._import_value(full))
            return False
        if kind == "def":
            qn = st[2]
            frame.line = st[3]
            self._define_function(qn, frame)
            self._bind(frame, st[1], of(("func", qn, None)))
            return False
        if kind == "class":
            qn = st[2]
            frame.line = st[3]
            self._define_class(qn, frame)
            self._bind(frame, st[1], of(("cls", qn)))
            return False
        if kind == "if":
            frame.line = st[4]
            cond = self.eval_cond(st[1], frame)
            if cond is True:
                return self.exec_block(st[2], frame)
            if cond is False:
                return self.exec_block(st[3], frame)
            return self._branches([st[2], st[3]], frame)
        if kind == "for":
            frame.line = st[5]
            it = self.eval(st[2], frame)
            self.assign(st[1], self._element(it), frame)
            self._branches([st[3], []], frame)
            self.exec_block(st[4], frame)
            return False
        if kind == "while":
            frame.line = st[4]
            self.eval(st[1], frame)
            self._branches([st[2], []], frame)
            self.exec_block(st[3], frame)
            return False
        if kind == "try":
            frame.line = st[5]
            ended = self.exec_block(st[1], frame)
            for name, body in st[2]:
                if name:
                    self._bind(frame, name, UNKNOWN_V)
                self._branches([body, []], frame)
            if not ended:
                ended = self.exec_block(st[3], frame)
            if self.exec_block(st[4], frame):
                return True
            return ended and not st[2]
        if kind == "with":
            frame.line = st[3]
            return self.exec_with(st[1], st[2], frame, st[4] if len(st) > 4 else False)
        if kind == "raise":
            frame.line = st[2]
            if st[1] is not None:
                self.eval(st[1], frame)
            return True
        if kind == "del":
            return False
        if kind == "global":
            frame.globals_decl = tuple(frame.globals_decl) + tuple(st[1])
            return False
        if kind == "match":
            self.eval(st[1], frame)
            return self._branches(st[2], frame)
        if kind == "ann":
            return False
        return False

    def _branches(self, blocks, frame: Frame) -> bool:
        """Run alternative blocks on copies of the locals and merge them (union)."""
        base = dict(frame.locals)
        results = []
        all_end = True
        for b in blocks:
            frame.locals = dict(base)
            ended = self.exec_block(b, frame)
            all_end = all_end and ended
            if not ended:
                results.append(frame.locals)
        if not results:
            frame.locals = base
            return all_end
        merged: Dict[str, V] = {}
        for loc in results:
            for k, v in loc.items():
                merged[k] = merged[k] | v if k in merged else v
        frame.locals = merged
        return False

    def exec_with(self, items, body, frame: Frame, is_async: bool = False) -> bool:
        enter_name, exit_name = ("__aenter__", "__aexit__") if is_async else ("__enter__", "__exit__")
        saved_ctx = None
        exits = []
        for expr, tgt in items:
            val = self.eval(expr, frame)
            bound = val
            for a in val.refs():
                if a[0] == "patcher":
                    if saved_ctx is None:
                        saved_ctx = self.ctx.copy()
                    bound = self._activate(a)
                elif a[0] == "fixture" and a[1] == "monkeypatch":
                    if saved_ctx is None:
                        saved_ctx = self.ctx.copy()
                elif a[0] == "ctxfactory":
                    if saved_ctx is None:
                        saved_ctx = self.ctx.copy()
                    inner = self.cm_ctx[a[2]] if len(a) > 2 and a[2] < len(self.cm_ctx) else None
                    if inner is not None:
                        self.ctx = inner.copy()
                    bound = a[1]
                elif a[0] == "inst":
                    enter = self.call_method_of(a, enter_name, [], {}, frame)
                    if enter is not None:
                        bound = enter if enter.atoms else val
                    exits.append(a)
            if tgt is not None:
                self.assign(tgt, bound, frame)
        ended = self.exec_block(body, frame)
        for a in exits:
            self.call_method_of(a, exit_name, [UNKNOWN_V, UNKNOWN_V, UNKNOWN_V], {}, frame)
        if saved_ctx is not None:
            self.ctx = saved_ctx
        return ended

    # ------------------------------------------------------------------ binding
    def _bind(self, frame: Frame, name: str, val: V) -> None:
        if frame.is_module:
            self.globals.setdefault(frame.module, {})[name] = val
        elif name in frame.globals_decl:
            self.write_state("gattr", frame.module, name, val)
            return
        frame.locals[name] = val

    def assign(self, t, val: V, frame: Frame) -> None:
        k = t[0]
        if k == "name":
            self._bind(frame, t[1], val)
        elif k == "attr":
            base = self.eval(t[1], frame)
            for a in base.refs():
                if a[0] == "inst":
                    self.set_attr(a[1], t[2], val)
                elif a[0] == "cls":
                    self.write_state("cattr", a[1], t[2], val)
                elif a[0] == "mod" and a[1] in self.globals:
                    self.write_state("gattr", a[1], t[2], val)
        elif k == "sub":
            base = self.eval(t[1], frame)
            key = self.eval(t[2], frame)
            for a in base.refs():
                if a == ("ext", "os.environ"):
                    kname = _literal_str(key, prefix=True)
                    if kname is not None:
                        # the test's own os.environ[K] = v controls its reads of K (S2); project
                        # code's write controls only the reads after it (through ctx.env)
                        self.ctx.env[kname] = val
                        if frame.in_test:
                            self.direct_env.append(kname)
        elif k == "tuple":
            seqs = [a[2] for a in val.refs() if a[0] == "seq"]
            for i, sub in enumerate(t[1]):
                if seqs and all(i < len(items) for items in seqs):
                    self.assign(sub, union(items[i] for items in seqs), frame)
                else:
                    self.assign(sub, self._element(val), frame)

    def eval_target_value(self, t, frame: Frame) -> V:
        if t[0] == "name":
            return self.lookup(t[1], frame)
        if t[0] == "attr":
            return self.eval(("attr", t[1], t[2]), frame)
        return EMPTY

    def _wrap_constant(self, val: V, targets, frame: Frame) -> V:
        val = self._capture_clock(val, frame)
        names = [t[1] for t in targets if t[0] == "name"]
        if not names:
            return val
        return wrap_constant(val, names[0], frame.path, frame.line, frame.module)

    # ------------------------------------------------------------------ definitions
    def _capture_clock(self, val: V, frame: Frame, pos=None) -> V:
        """A clock function bound at import (``clock = time.time``): HT204 at the capture; its
        later calls read a function a freeze cannot reach (HT205), not a call-time HT104."""
        name = self._clock_name(val)
        if not name or not self.import_time:
            return val
        self.record_clock(_canonical(name), frame, tuple(pos) if pos else (frame.line, 1, frame.line, 1),
                          capture=True)
        atoms = [a for a in val.ordered() if not (isinstance(a, tuple) and a[0] == "ext" and a[1] == name)]
        atoms.append(("partial", of(("ext", name)), (), (), (frame.path, frame.line)))
        return V(frozenset(atoms), val.is_path)

    def _define_function(self, qn: str, frame: Frame) -> None:
        entry = self.p.functions.get(qn)
        if entry is None:
            return
        f, mod = entry
        defaults: Dict[str, V] = {}
        for prm in f["params"]:
            name, dexpr = prm[0], prm[2]
            if dexpr is not None:
                dpos = prm[3] if len(prm) > 3 and prm[3] else None
                if dpos:
                    frame.line = dpos[0]
                dv = self.eval(dexpr, frame)
                if frame.is_module or frame.cls:
                    dv = self._capture_clock(dv, frame, dpos)
                if dexpr[0] == "lit" and isinstance(dexpr[1], str):
                    dv = of(Origin("default-argument", expr=f"{name}={dexpr[1]!r}"[:60], path=frame.path,
                                   line=f["line"], inner=tuple(dv.origins())))
                defaults[name] = dv
        self.defaults[qn] = defaults
        if not frame.is_module:
            self.closures[qn] = frame.locals
            self.wlog.append(("def", qn, defaults, frame.locals))   # a memo replay defines it again
        for dexpr, _line in f["decorators"]:
            if frame.is_module and not self.p.in_test.get(mod, False):
                self.eval(dexpr, frame)

    def _define_class(self, qn: str, frame: Frame) -> None:
        entry = self.p.classes.get(qn)
        if entry is None:
            return
        c, mod = entry
        cframe = Frame(module=frame.module, path=frame.path, name=qn, in_test=frame.in_test, cls=qn, step0=self.steps)
        cframe.locals = {}
        saved_stack = self.stack
        self.stack = self.stack + [cframe]
        try:
            for st in c["body"]:
                if st[0] in ("def", "class"):
                    if st[0] == "def":
                        self._define_function(st[2], cframe)
                    else:
                        self._define_class(st[2], cframe)
                        cframe.locals[st[1]] = of(("cls", st[2]))
                    continue
                self.exec_stmt(st, cframe)
        except _Return:
            pass
        finally:
            self.stack = saved_stack
        attrs = self.class_attrs.setdefault(qn, {})
        for k, v in cframe.locals.items():
            attrs.setdefault(k, wrap_constant(v, f"{c['name']}.{k}", frame.path, c["line"]))

    def mro(self, qn: str, seen=None) -> List[str]:
        if seen is None:
            hit = self._mro_cache.get(qn)
            if hit is not None:
                return hit
            out = self._mro(qn, set())
            self._mro_cache[qn] = out
            return out
        return self._mro(qn, seen)

    def _mro(self, qn: str, seen) -> List[str]:
        if qn in seen or qn not in self.p.classes:
            return []
        seen.add(qn)
        out = [qn]
        c, mod = self.p.classes[qn]
        for b in c["bases"]:
            for bq in self.static_class(b, mod):
                for x in self._mro(bq, seen):
                    if x not in out:
                        out.append(x)
        return out

    def static_class(self, expr, mod: str) -> List[str]:
        val = self.eval_static(expr, mod)
        return [a[1] for a in val.refs() if a[0] == "cls"]

    def eval_static(self, expr, mod: str) -> V:
        self.import_module(mod)
        frame = Frame(module=mod, path=self.p.summaries[mod]["path"], name="<static>", is_module=False,
                      in_test=self.p.in_test.get(mod, False))
        frame.locals = {}   # lookup falls through to the module globals
        saved = self.ctx
        self.ctx = Ctx()
        try:
            return self.eval(expr, frame)
        finally:
            self.ctx = saved

    def external_bases(self, qn: str) -> List[str]:
        if qn in self._ext_bases:
            return self._ext_bases[qn]
        out = self._ext_bases[qn] = []
        for c in self.mro(qn):
            cd, mod = self.p.classes[c]
            for b in cd["bases"]:
                for a in self.eval_static(b, mod).refs():
                    if a[0] == "ext":
                        out.append(a[1])
        return out

    def find_method(self, cls_qn: str, name: str, after: Optional[str] = None) -> Optional[Tuple[str, str]]:
        chain = self.mro(cls_qn)
        if after is not None and after in chain:
            chain = chain[chain.index(after) + 1:]
        for c in chain:
            cd, _ = self.p.classes[c]
            if name in cd["methods"]:
                return c, cd["methods"][name]
        return None

    def class_attr(self, cls_qn: str, name: str) -> Optional[V]:
        for c in self.mro(cls_qn):
            key = (("cls", c), name)
            if key in self.ctx.patches:
                return self.ctx.patches[key]
            self._read("cattr", c, name)
            attrs = self.class_attrs.get(c)
            if attrs is None:
                _, mod = self.p.classes[c]
                self.import_module(mod)
                attrs = self.class_attrs.get(c, {})
            if name in attrs:
                if not self.import_time:
                    self._consume(attrs[name])
                return attrs[name]
        return None

    # ------------------------------------------------------------------ lookup
    def lookup(self, name: str, frame: Frame) -> V:
        if name in frame.locals and not frame.is_module:
            return frame.locals[name]
        cl = self.closures.get(frame.name)
        if cl is not None and name in cl:
            return cl[name]
        key = (("mod", frame.module), name)
        if key in self.ctx.patches:
            return self.ctx.patches[key]
        # ``self._read("gattr", frame.module, name)``, inlined: this is the hot path
        gb = self._gbits.get(frame.module)
        b = gb.get(name) if gb is not None else None
        self.greads |= b if b is not None else self._gbit(frame.module, name)
        w = self.watch_g.get(frame.module)
        if w is not None and name in w:
            self.reads |= w[name]
        g = self.globals.get(frame.module)
        if g is not None and name in g:
            v = g[name]
            if not self.import_time:
                self._consume(v)
            if self.ctx.sites:
                v = self._check_miss(v, frame.module, name)
            return v
        if name in frame.locals:
            return frame.locals[name]
        if name in _BUILTINS:
            key = (("ext", "builtins"), name)
            if key in self.ctx.patches:
                return self.ctx.patches[key]
            return of(("ext", f"builtins.{name}"))
        if name == "__builtins__":   # the builtins module (its dict in an imported module)
            return of(("ext", "builtins"))
        return UNKNOWN_V

    # ------------------------------------------------------------------ expressions
    def eval(self, e, frame: Frame) -> V:  # noqa: C901 - one dispatch over expression forms
        k = e[0]
        if k == "lit":
            return lit(e[1], frame.path, frame.line, frame.in_test)
        if k == "name":
            return self.lookup(e[1], frame)
        if k == "attr":
            return self.eval_attr(self.eval(e[1], frame), e[2], frame, e)
        if k == "call":
            return self.eval_call(e, frame)
        if k == "fstr":
            parts = e[1]
            vals = [self.eval(p, frame) for p in parts]
            if not parts:
                return lit("", frame.path, frame.line, frame.in_test)
            first = parts[0]
            if first[0] == "lit" and isinstance(first[1], str) and first[1] != "":
                text = first[1]
                whole = lit(text, frame.path, frame.line, frame.in_test)
                return whole if len(parts) == 1 else _head(whole)
            return _head(vals[0])
        if k == "bin":
            left = self.eval(e[2], frame)
            right = self.eval(e[3], frame)
            op = e[1]
            if op == "Modulo" and _literal_str(left, prefix=True) is not None:
                tmpl = _literal_str(left, prefix=True)
                if tmpl.startswith("%"):
                    return _head(_first_item(right))
                return _head(left)
            if op == "Add":
                whole = _literal_str(left), _literal_str(right)
                if whole[0] is not None and whole[1] is not None:   # MODULE + ".name": a whole string
                    return _with_text(left, whole[0] + whole[1])
            if op in ("Add", "Divide", "Modulo"):
                res = _head(_join_head([left, right]) if op == "Divide" else left)
                if op == "Divide":
                    res = res.with_path(left.is_path or right.is_path or _has_path_origin(left))
                return res
            return EMPTY
        if k == "bool":
            return self.eval_boolop(e, frame)
        if k == "ifx":
            cond = self.eval_cond(e[1], frame)
            if cond is True:
                return self.eval(e[2], frame)
            if cond is False:
                return self.eval(e[3], frame)
            return self.eval(e[2], frame) | self.eval(e[3], frame)
        if k == "sub":
            return self.eval_sub(e, frame)
        if k == "seq":
            items = []
            for it in e[2]:
                if it[0] == "star":
                    items.append(self._element(self.eval(it[1], frame)))
                else:
                    items.append(self.eval(it, frame))
            return of(("seq", e[1], tuple(items)))
        if k == "dict":
            items = []
            for kexpr, vexpr in e[1]:
                key = self.eval(kexpr, frame) if kexpr is not None else EMPTY
                items.append((_literal_str(key), self.eval(vexpr, frame)))
            return of(("dict", tuple(items)))
        if k == "lambda":
            # numbered in evaluation order, not by address: memo keys hash it, and a run's result
            # must not depend on where the allocator put the summary
            # (by place, not by object: a body read again after ``transient_bodies`` is a new object)
            lid = self._lambda_ids.setdefault((frame.path, e[3][0], e[3][1]), len(self._lambda_ids))
            captured = dict(frame.locals)
            self.lambdas[lid] = (e, frame.module, frame.path, captured, frame.in_test)
            self.wlog.append(("lambda", lid, None, captured))
            if frame.in_test:
                return of(DOUBLE)
            return of(("lambda", lid))
        if k == "yield":
            v = self.eval(e[1], frame)
            frame.yields = frame.yields | v
            if frame.yield_ctx is None:
                frame.yield_ctx = self.ctx.copy()
            return UNKNOWN_V
        if k == "cmp":
            return self.eval_cmp(e, frame)
        if k == "unary":
            self.eval(e[2], frame)
            return EMPTY
        if k == "comp":
            saved = dict(frame.locals)
            for tgt, it, ifs in e[1]:
                self.assign(tgt, self._element(self.eval(it, frame)), frame)
                for cond in ifs:
                    self.eval(cond, frame)
            out = union(self.eval(x, frame) for x in e[2])
            frame.locals = saved
            return of(("seq", "list", (out,))) if out.atoms else EMPTY
        if k == "walrus":
            v = self.eval(e[2], frame)
            self.assign(e[1], v, frame)
            return v
        if k == "star":
            return self.eval(e[1], frame)
        return UNKNOWN_V

    def eval_boolop(self, e, frame: Frame) -> V:
        op, operands = e[1], e[2]
        out = EMPTY
        for i, x in enumerate(operands):
            last = i == len(operands) - 1
            if x[0] in ("cmp", "unary", "bool"):
                t = self.eval_cond(x, frame)
                v = EMPTY
            else:
                v = self.eval(x, frame)
                t = truthiness(v)
            if op == "or":
                if t is True:
                    return out | v
                if t is False and not last:
                    continue
                out = out | v
            else:
                if t is False:
                    return out | v
                if t is True and not last:
                    continue
                out = out | v
        return out

    def eval_cond(self, e, frame: Frame) -> Optional[bool]:
        k = e[0]
        if k == "cmp" and len(e[1]) == 1 and e[1][0] in ("Is", "IsNot"):
            left, right = e[2]
            if right[0] == "lit" and right[1] is None:
                v = self.eval(left, frame)
                n = is_none(v)
                if n is None:
                    return None
                return n if e[1][0] == "Is" else (not n)
        if k == "cmp" and len(e[1]) == 1 and e[1][0] in ("Equal", "NotEqual"):
            a, b = (self.eval(x, frame) for x in e[2])
            sa, sb = _literal_str(a), _literal_str(b)
            if sa is not None and sb is not None and len(a.atoms) == 1 and len(b.atoms) == 1:
                return (sa == sb) == (e[1][0] == "Equal")
            return None
        if k == "cmp" and len(e[1]) == 1 and e[1][0] in ("In", "NotIn"):
            a, b = (self.eval(x, frame) for x in e[2])
            if self._environ_membership(a, b, e[3], frame):
                return None
            r = _str_contains(a, b)
            return None if r is None else r == (e[1][0] == "In")
        if (k == "call" and e[1][0] == "attr" and e[1][2] in ("startswith", "endswith") and len(e[2]) == 1
                and not e[3] and e[1][1][0] in ("name", "attr", "lit") and e[2][0][0] in ("name", "attr", "lit", "seq")):
            base = self.eval(e[1][1], frame)
            if base.atoms and all(isinstance(x, Origin) for x in base.atoms):   # str data: no method of ours
                return _str_affix(e[1][2], base, self.eval(e[2][0], frame))
        if k == "unary" and e[1] == "Not":
            r = self.eval_cond(e[2], frame)
            return None if r is None else (not r)
        if k in ("name", "attr"):
            return truthiness(self.eval(e, frame))
        if k == "bool":
            # short-circuit: operands after a deciding one are not evaluated (nor their sinks)
            unknown = False
            for x in e[2]:
                r = self.eval_cond(x, frame)
                if e[1] == "and" and r is False:
                    return False
                if e[1] == "or" and r is True:
                    return True
                if r is None:
                    unknown = True
            if unknown:
                return None
            return e[1] == "and"
        if k == "call" and e[1] == ("name", "isinstance") or (k == "call" and list(e[1]) == ["name", "isinstance"]):
            if e[2]:
                first = self.eval(e[2][0], frame)
                if is_none(first) is True:
                    return False
        v = self.eval(e, frame)
        if k == "call" and v.atoms and all((isinstance(a, tuple) and a[0] in ("inst", "modobj")) or
                                           (isinstance(a, Origin) and a.kind == "literal") for a in v.atoms):
            return truthiness(v)
        return None

    def eval_cmp(self, e, frame: Frame) -> V:
        ops, items = e[1], e[2]
        vals = [self.eval(x, frame) for x in items]
        for i, op in enumerate(ops):
            if op in ("In", "NotIn"):
                self._environ_membership(vals[i], vals[i + 1], e[3], frame)
        return EMPTY

    def _environ_membership(self, key: V, container: V, pos, frame: Frame) -> bool:
        """``key in os.environ`` reads the variable: recorded; True when ``container`` is it."""
        if not any(a == ("ext", "os.environ") for a in container.refs()):
            return False
        self.env_read(_literal_str(key, prefix=True), tuple(pos), frame, "os.environ")
        return True

    def eval_sub(self, e, frame: Frame) -> V:
        base = self.eval(e[1], frame)
        key = self.eval(e[2], frame)
        out = EMPTY
        for a in base.ordered():
            if a == ("ext", "os.environ") or a == ("ext", "os.environb"):
                out = out | self.env_read(_literal_str(key, prefix=True), tuple(e[3]), frame, "os.environ")
            elif isinstance(a, Origin):
                out = out | of(a, is_path=base.is_path)
            elif a[0] == "seq":
                idx = _literal_int(key)
                if idx is not None and -len(a[2]) <= idx < len(a[2]):
                    out = out | a[2][idx]
                else:
                    out = out | union(a[2])
            elif a[0] == "dict":
                ks = _literal_str(key)
                hit = [v for kk, v in a[1] if kk == ks] if ks is not None else []
                out = out | (union(hit) if hit else union(v for _, v in a[1]) if ks is None else UNKNOWN_V)
            elif a == DOUBLE:
                out = out | DOUBLE_V
            elif a == ("ext", "builtins") and _literal_str(key) is not None:
                out = out | self.eval_attr(of(a), _literal_str(key), frame)   # __builtins__["open"]
            else:
                out = out | UNKNOWN_V
        return out if out.atoms else UNKNOWN_V

    def _element(self, v: V) -> V:
        out = EMPTY
        for a in v.ordered():
            if isinstance(a, Origin):
                out = out | of(a)
            elif a[0] == "seq":
                out = out | union(a[2])
            elif a[0] == "dict":
                out = out | union(lit(k, None, None, False) for k, _ in a[1] if k is not None)
            elif a == DOUBLE:
                out = out | DOUBLE_V
            else:
                out = out | UNKNOWN_V
        return out if out.atoms else UNKNOWN_V

    # ------------------------------------------------------------------ attributes
    def eval_attr(self, base: V, name: str, frame: Frame, node=None) -> V:  # noqa: C901
        out = EMPTY
        for a in base.ordered():
            if isinstance(a, Origin):
                if name in _PATH_ATTRS:
                    if name in ("parent", "parents"):
                        a = _climb(a, 1 if name == "parent" else None)
                    out = out | of(a, is_path=name in ("parent", "parents") or base.is_path)
                else:
                    out = out | of(("dmeth", of(a, is_path=base.is_path), name))
                continue
            t = a[0]
            if t == "mod":
                out = out | self.module_attr(a[1], name)
            elif t == "ext":
                key = (("ext", a[1]), name)
                if key in self.ctx.patches:
                    out = out | self.ctx.patches[key]
                elif frame.in_test and a[1] == "sys" and name == "executable":
                    # the interpreter, named by the test: a program the test chose, wherever the
                    # call that starts it is (row T1), as a literal program name from the test is
                    out = out | of(Origin("test-value", expr="sys.executable", path=frame.path, line=frame.line))
                else:
                    out = out | of(("ext", f"{a[1]}.{name}"))
            elif t == "cls":
                v = self.class_attr(a[1], name)
                if v is not None:
                    out = out | v
                else:
                    m = self.find_method(a[1], name)
                    out = out | (of(("func", m[1], ("cls", a[1]))) if m else UNKNOWN_V)
            elif t == "inst":
                out = out | self.inst_attr(a, name, frame)
            elif t == "super":
                m = self.find_method(a[2], name, after=a[1])
                out = out | (of(("func", m[1], a[3])) if m else UNKNOWN_V)
            elif a == DOUBLE:
                out = out | DOUBLE_V
            elif t == "modobj":
                out = out | (of(Origin("project-file", expr="module.__file__")) if name == "__file__" else UNKNOWN_V)
            elif t == "fixture" and a[1] == "request" and name == "param":
                out = out | self.lookup("__request_param__", frame)
            elif t in ("client", "fixture", "patcher", "handle", "mark", "partial", "ctxfactory", "clirunner"):
                out = out | of(("meth", a, name))
            elif t == "func":
                out = out | UNKNOWN_V
            else:
                out = out | UNKNOWN_V
        return out if out.atoms else UNKNOWN_V

    def inst_attr(self, a, name: str, frame: Frame) -> V:
        key = (("inst", a[1]), name)
        if key in self.ctx.patches:
            return self.ctx.patches[key]
        if a[1] < TEST_HEAP_BASE:   # an instance made at import: shared state
            self._read("attr", a[1], name)
        h = self.heap.get(a[1])
        if h is None:
            return UNKNOWN_V
        if name in h["attrs"]:
            return h["attrs"][name]
        cls = h["cls"]
        if cls is None:
            return UNKNOWN_V
        if self.ctx.patches:
            for c in self.mro(cls):
                if (("cls", c), name) in self.ctx.patches:
                    return self.ctx.patches[(("cls", c), name)]
        m = self.find_method(cls, name)
        if m is not None:
            f = self.p.functions.get(m[1], (None, None))[0]
            if f is not None and any(_decorator_name(d) in ("property", "cached_property", "functools.cached_property")
                                     for d, _l in f["decorators"]):
                return self.call_function(m[1], [], {}, frame, self_atom=a)
            if f is not None and any(_decorator_name(d) in ("staticmethod",) for d, _l in f["decorators"]):
                return of(("func", m[1], None))
            if f is not None and any(_decorator_name(d) in ("classmethod",) for d, _l in f["decorators"]):
                return of(("func", m[1], ("cls", cls)))
            return of(("func", m[1], a))
        v = self.class_attr(cls, name)
        if v is not None:
            return v
        for ext in self.external_bases(cls):
            if ext.endswith("TestCase"):
                return of(("meth", ("testcase", a[1]), name))
        return UNKNOWN_V

    # ------------------------------------------------------------------ calls
    def eval_call(self, e, frame: Frame) -> V:
        _, fexpr, aexprs, kwexprs, pos = e
        frame.line = pos[0]
        callee = self.eval(fexpr, frame)
        if self.p.guard_function and any(isinstance(a, tuple) and a[0] == "func" and _dotted_name(a[1]) ==
                                         self.p.guard_function for a in callee.atoms):
            self._mark("guard")   # section 5: the guard and the arguments evaluated for it are not reported
            return EMPTY
        args: List[V] = []
        star = False
        for a in aexprs:
            if a[0] == "star":
                star = True
                inner = self.eval(a[1], frame)
                seqs = [x for x in inner.refs() if x[0] == "seq"]
                if seqs:
                    args.extend(seqs[0][2])
                else:
                    args.append(self._element(inner))
            else:
                args.append(self.eval(a, frame))
        kwargs: Dict[str, V] = {}
        for kname, kexpr in kwexprs:
            v = self.eval(kexpr, frame)
            if kname == "**":
                for x in v.refs():
                    if x[0] == "dict":
                        for dk, dv in x[1]:
                            if dk is not None:
                                kwargs[dk] = dv
                continue
            kwargs[kname] = v
        self._site = (frame.path, tuple(pos))
        return self.apply(callee, args, kwargs, frame, pos, fexpr, star)

    def apply(self, callee: V, args: List[V], kwargs: Dict[str, V], frame: Frame, pos, fexpr=None,
              star=False) -> V:
        out = EMPTY
        resolved = False
        for a in callee.ordered():
            if isinstance(a, Origin):
                if a.kind == "unknown":
                    continue
                continue
            t = a[0]
            resolved = True
            if t == "func":
                out = out | self.call_function(a[1], args, kwargs, frame, self_atom=a[2])
            elif t == "cls":
                out = out | self.instantiate(a[1], args, kwargs, frame)
            elif t == "ext":
                out = out | self.call_external(a[1], args, kwargs, frame, pos)
            elif a == DOUBLE:
                out = out | DOUBLE_V
            elif t == "meth":
                out = out | self.call_meth(a[1], a[2], args, kwargs, frame, pos)
            elif t == "dmeth":
                out = out | self.call_data_method(a[1], a[2], args, kwargs, frame, pos)
            elif t == "missed":
                self.missed_depth += 1
                try:
                    out = out | self.apply(of(a[1]), args, kwargs, frame, pos, fexpr, star)
                finally:
                    self.missed_depth -= 1
            elif t == "partial":
                if len(a) > 4 and a[4]:
                    # a clock function captured at import: HT204 at the capture, HT205 at a freeze
                    if isinstance(a[4], tuple):
                        self.consumed.append(a[4])
                    if self.ctx.frozen:
                        self._add_miss(("freeze",), ("the clock",
                                                     f"a function captured at import ({_expr_text(fexpr)})", "captured"))
                    out = out | of(Origin("clock", expr="captured", path=frame.path, line=pos[0], value="import"))
                    continue
                out = out | self.apply(a[1], list(a[2]) + args, {**dict(a[3]), **kwargs}, frame, pos)
            elif t == "lambda":
                out = out | self.call_lambda(a[1], args, frame)
            elif t == "super":
                out = out | UNKNOWN_V
            else:
                resolved = False
        if not resolved:
            if not self.sweep:
                self.note_unresolved((frame.path, pos[0], pos[1]), _expr_text(fexpr))
            return UNKNOWN_V
        return out if out.atoms else EMPTY

    def call_lambda(self, lid: int, args: List[V], frame: Frame) -> V:
        entry = self.lambdas.get(lid)
        if entry is None:
            return UNKNOWN_V
        e, mod, path, loc, in_test = entry
        self.files |= self.file_bits.get(mod, 0)
        lf = Frame(module=mod, path=path, name="<lambda>", line=e[3][0], in_test=in_test)
        lf.locals = dict(loc)
        for i, prm in enumerate(e[1]):
            pname = prm[0]
            lf.locals[pname] = args[i] if i < len(args) else UNKNOWN_V
        return self.eval(e[2], lf)

    def bind_params(self, qn: str, f: dict, args: List[V], kwargs: Dict[str, V], self_atom) -> Dict[str, V]:
        params = f["params"]
        loc: Dict[str, V] = {}
        defaults = self.defaults.get(qn)
        if defaults is None:
            mod = self.p.functions[qn][1]
            self.import_module(mod)
            defaults = self.defaults.get(qn, {})
        args = list(args)
        if self_atom is not None and params and params[0][1] == "pos":
            loc[params[0][0]] = of(self_atom)
            params = params[1:]
        pos_i = 0
        rest_kw = dict(kwargs)
        for prm in params:
            name, kind = prm[0], prm[1]
            if kind == "pos":
                if pos_i < len(args):
                    loc[name] = args[pos_i]
                    pos_i += 1
                elif name in rest_kw:
                    loc[name] = rest_kw.pop(name)
                elif name in defaults:
                    loc[name] = defaults[name]
                    if not self.import_time:
                        self._consume(defaults[name])
                    self._stale_default(qn, name, defaults[name])
                    if self.ctx.sites:
                        loc[name] = self._check_miss(defaults[name], "", name,
                                                     f"the default argument {name} of {_dotted_name(qn)}")
                else:
                    loc[name] = UNKNOWN_V
            elif kind == "var":
                loc[name] = of(("seq", "tuple", tuple(args[pos_i:])))
                pos_i = len(args)
            elif kind == "kw":
                if name in rest_kw:
                    loc[name] = rest_kw.pop(name)
                elif name in defaults:
                    loc[name] = defaults[name]
                else:
                    loc[name] = UNKNOWN_V
            elif kind == "varkw":
                loc[name] = of(("dict", tuple(sorted(rest_kw.items(), key=lambda kv: kv[0]))))
        return loc

    def _stale_default(self, qn: str, name: str, v: V) -> None:
        """A default evaluated at import holds a clock value; a freeze cannot reach it (HT205)."""
        if not self.ctx.frozen or self.import_time:
            return
        if any(o.kind == "clock" and o.value == "import" for o in v.origins()):
            self._add_miss(("freeze",), ("the clock", f"the default argument {name} of {_dotted_name(qn)}",
                                         "default"))

    def call_function(self, qn: str, args: List[V], kwargs: Dict[str, V], frame: Frame, self_atom=None) -> V:
        entry = self.p.functions.get(qn)
        if entry is None:
            return UNKNOWN_V
        f, mod = entry
        if qn in self.p.control_functions or _dotted_name(qn) in self.p.control_functions:
            return of(Origin("test-value", expr=qn))
        if self.p.guard_function and qn == self.p.guard_function:
            self._mark("guard")
            return EMPTY   # the guard's own reads are not reported (section 5)
        if self.p.bootstrap and (qn in self.p.bootstrap or _dotted_name(qn) in self.p.bootstrap):
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
        if depth > (SWEEP_DEPTH if self.sweep else MAX_DEPTH):
            self.depth_cut = True   # the result depends on how deep the call is: memoized with its depth
            if not self.sweep:
                self.budget_hit = True
                fr = self.stack[-1] if self.stack else frame
                self.note_unresolved((fr.path, fr.line, 0), f"{_dotted_name(qn)} (analysis budget reached)")
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
                self.note_unresolved((fr.path, fr.line, 0), f"{_dotted_name(qn)} (analysis budget reached)")
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
        shape, ids = self._canon_inputs(loc, closure)
        key = (qn, shape, self.ctx.key(), self.import_time, self.import_version if self.import_time else 0,
               self.missed_depth > 0, self.sweep)
        found = self._lookup(key, depth, ids) if self.use_memo else None
        if found is not None:
            return self._reuse(found[0], found[1], here)
        wstart = len(self.wlog)
        estart, mstart, cstart, kstart = len(self.escape_keys), len(self.miss_keys), len(self.consumed), len(self.marks)
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
        self.stack.append(fr)
        self._on_stack.setdefault(qn, []).append(here)
        try:
            self.exec_block(f["body"], fr)
        except RecursionError:
            self.cut_at = 0   # how deep Python's own stack was: depends on everything below
        finally:
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
        if f["generator"]:
            ret = of(("seq", "list", (fr.yields,))) if fr.yields.atoms else UNKNOWN_V
            if any(_decorator_name(d).endswith("contextmanager") for d, _l in f["decorators"]):
                cm_id = len(self.cm_ctx)
                self.cm_ctx.append(fr.yield_ctx)   # the control state inside the `with` block
                ret = of(("ctxfactory", fr.yields, cm_id))
        if f["is_async"] and not ret.atoms:
            ret = UNKNOWN_V
        if len(self.memo) + self.memo_alts > MEMO_LIMIT:
            self.clear_memo()   # bounded memory on large projects: recompute rather than grow
        if inner_cut >= here:   # cut, if at all, by its own frames only: the same result anywhere
            ctx_after = self.ctx.copy() if self.ctx.key() != ctx_before else None
            effects = _Effects(
                tuple(self.wlog[wstart:]), ctx_after, tuple(self.escape_keys[estart:]),
                tuple(self.miss_keys[mstart:]), tuple(self.consumed[cstart:]), tuple(self.marks[kstart:]),
                tuple(self.direct_env[dstart:]), inner_cut - here if inner_cut != NO_CUT else NO_CUT,
                self.steps - steps_before, tuple(self.cm_ctx[cmstart:]), cmstart, inner_budget)
            fresh = self.next_id - first_id
            entry = _MemoEntry(ret, tuple(self.events[evstart:]), here, effects, ids, first_id, fresh,
                               depth if inner_depth_cut else None, inner_reach - here, inner_calls,
                               self._above(inner_calls), inner_files, tuple(self.unres_log[ustart:]),
                               tuple(self.collection_ran[rstart:]) if not self.collected else ())
            entry.reads, entry.greads, entry.cells = inner_reads, inner_greads, cells0
            entry.dmask = dmask = inner_reads & dirty0
            if dmask:
                entry.dver = self._versions_at(dmask, jstart)
            self._store(key, entry)
        return ret

    # ------------------------------------------------------------------ the memo
    def clear_memo(self) -> None:
        self.memo.clear()
        self.memo_alts = 0

    def _store(self, key: tuple, entry: "_MemoEntry") -> None:
        """``entry`` first for ``key``; the older ones for the same call (on other shared state)
        after it, ``MEMO_ALTERNATIVES`` in all."""
        older = self.memo.get(key)
        if older is not None and MEMO_ALTERNATIVES > 1:
            entry.alt, last, n = older, older, 2
            while n < MEMO_ALTERNATIVES and last.alt is not None:
                last, n = last.alt, n + 1
            if last.alt is None:   # the chain grew by one (else its last entry goes)
                self.memo_alts += 1
            last.alt = None
        self.memo[key] = entry

    def _canon_inputs(self, loc: Dict[str, V], closure: Optional[Dict[str, V]]) -> Tuple[tuple, tuple]:
        """A call's inputs with the instances a test made renamed by the order they are found in:
        ``(shape, ids)``, where ``shape`` is hashable and equal for calls on equal state (the
        arguments, a nested function's enclosing variables, the variables the lambdas among them
        captured, and every instance reachable from these, from the patches in force and from
        what the test wrote into module state), and ``ids`` the instance ids in that order.
        Instances made at import are shared by every test and keep their ids: the state
        reads of their attributes are the call's dependencies on shared state (``_same_cells``)."""
        roots: List[V] = list(loc.values())
        ck = sorted(closure) if closure else ()
        if ck:
            roots.extend([closure[k] for k in ck])
        if self.ctx.patches:
            roots.extend(self.ctx.patches.values())
        if self.shared_roots:
            roots.extend(self.shared_roots)
        found: Dict[int, int] = {}
        order: List[int] = []
        lams: List[int] = []
        for v in roots:   # one pass: lambdas and test instances, in the order found
            insts = v.instances()   # also fills ``_lams``
            if v._lams:
                lams.extend(v._lams)
            if insts:
                _number(insts, found, order)
        lam = ()
        if lams:
            lams = sorted(set(lams))
            lam_vals = [(lid, self.lambdas[lid][3]) for lid in lams if lid in self.lambdas]
            for _lid, captured in lam_vals:   # what they captured, after every other input
                for k in sorted(captured):
                    _number(captured[k].instances(), found, order)
        if not order and not lams:
            args = tuple((k, hash(v)) for k, v in loc.items())
            cl = tuple((k, hash(closure[k])) for k in ck) if ck else ()
            return (args, cl), ()
        heap = self.heap
        states = []
        i = 0
        while i < len(order):   # breadth first, in the order found: the numbering is deterministic
            h = heap.get(order[i])
            i += 1
            if h is None:
                states.append(None)
                continue
            sig = h.get("sig")
            if sig is None:   # cached until the instance's next write
                attrs = h["attrs"]
                names = sorted(attrs)
                sig = h["sig"] = (hash((h["cls"], tuple((k, attrs[k].shape()) for k in names))),
                                  tuple(iid for k in names for iid in attrs[k].instances()))
            _number(sig[1], found, order)
            states.append((sig[0], tuple(found.get(iid, iid) for iid in sig[1])))

        def canon(v: V) -> tuple:
            return (v.shape(), tuple(found.get(iid, iid) for iid in v._insts)) if v._insts else hash(v)

        args = tuple((k, canon(v)) for k, v in loc.items())
        cl = tuple((k, canon(closure[k])) for k in ck) if ck else ()
        if lams:
            lam = tuple((lid, tuple((k, canon(captured[k])) for k in sorted(captured))) for lid, captured in lam_vals)
        return (args, cl, tuple(states), lam), tuple(order)

    def _lookup(self, key: tuple, depth: int, ids: tuple) -> Optional[Tuple["_MemoEntry", Dict[int, int]]]:
        """The stored call for ``key`` that can stand for a run here, with its relocation."""
        hit = self.memo.get(key)
        while hit is not None:
            if self._same_cells(hit) and self._usable(hit, depth):
                m = self._relocation(hit, ids)
                if m is not None:
                    return hit, m
            hit = hit.alt
        return None

    def _same_cells(self, hit: "_MemoEntry") -> bool:
        """Whether the shared state a stored call read holds now what it held when its run began:
        no cell it did not watch for is written, and of the cells it read, the same ones are
        written, with the same values."""
        dirty = self.dirty
        if not dirty:
            return not hit.dmask
        if (hit.reads & dirty) != hit.dmask:
            return False
        late = dirty >> hit.cells
        if late:   # cells first written after it began: it may have read them only where it read their owner
            groups, greads, shift = self.cell_group, hit.greads, hit.cells
            while late:
                low = late & -late
                late ^= low
                if groups[low << shift] & greads:
                    return False
        if hit.dmask:
            cver = self.cver
            for bit, version in hit.dver:
                if cver.get(bit) != version:
                    return False
        return True

    def _versions_at(self, mask: int, jstart: int) -> tuple:
        """The versions the cells of ``mask`` had at write-journal position ``jstart``."""
        out = {}
        for bit, before in self.cjournal[jstart:]:
            if bit & mask and bit not in out:
                out[bit] = before
        cver = self.cver
        rest = mask
        while rest:
            bit = rest & -rest
            rest ^= bit
            if bit not in out:
                out[bit] = cver.get(bit)
        return tuple(sorted(out.items()))

    def _count_above(self, qn: str) -> int:
        """How many calls of ``qn`` the current run has on the stack (recursion counts from the
        run's base, as the recursion limit does)."""
        base = self.stack_base
        return sum(1 for i in self._on_stack.get(qn, ()) if i >= base)

    def _above(self, calls: int) -> Dict[str, int]:
        """Of the functions running now, those ``calls`` may hold, with how often each runs."""
        out = {}
        for qn in self._on_stack:
            if calls & _call_bit(qn):
                n = self._count_above(qn)
                if n:
                    out[qn] = n
        return out

    def _usable(self, hit: "_MemoEntry", depth: int) -> bool:
        """Whether a stored call gives here what a first run would: the depth limit and the
        recursion limit cut it where they cut its first run (or nowhere, both times)."""
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

    def _relocation(self, hit: "_MemoEntry", ids: tuple) -> Optional[Dict[int, int]]:
        """How the ids of a stored call map onto this one's: instances found in its inputs by
        position, instances it made onto the next free ids. None when the entry cannot be moved."""
        m: Dict[int, int] = {}
        for old, new in zip(hit.ids, ids):
            if old != new:
                m[old] = new
        if hit.fresh and hit.first_id != self.next_id:
            d = self.next_id - hit.first_id
            for old in range(hit.first_id, hit.first_id + hit.fresh):
                m[old] = old + d
        if hit.effects.cms and len(self.cm_ctx) != hit.effects.cm_start:
            m[_CM] = len(self.cm_ctx) - hit.effects.cm_start   # context-manager states move too
        if m:
            if hit.movable is None:
                hit.movable = _relocatable(hit)
            if not hit.movable:
                return None
        return m

    def _reuse(self, hit: "_MemoEntry", m: Dict[int, int], here: int) -> V:
        """Replay a stored call under ``m`` (ids of the stored run -> ids here): what it wrote,
        the control state it left, its candidates and marks, its events under this call's trace."""
        done = hit.effects
        self.steps += done.steps   # a reused call costs what it cost: the budget does not depend on order
        self.calls |= hit.calls
        self.reads |= hit.reads
        self.greads |= hit.greads
        self.files |= hit.files
        for site, text in hit.unresolved:
            self.note_unresolved(site, text)
        if not self.collected:
            self.collection_ran.extend(hit.ran)
        if here + hit.reach > self.reach:
            self.reach = here + hit.reach
        if done.budget_hit:
            self.budget_hit = True
        if done.rel_cut != NO_CUT:
            self.cut_at = min(self.cut_at, here + done.rel_cut)
        if hit.at_depth is not None:
            self.depth_cut = True
        for c in done.cms:
            self.cm_ctx.append(_remap_ctx(c, m) if m and c is not None else c)
        for key, rest in done.escapes:
            self._add_escape(_remap(key, m), _remap(rest, m)) if m else self._add_escape(key, rest)
        for key, rest in done.misses:
            self._add_miss(_remap(key, m), _remap(rest, m)) if m else self._add_miss(key, rest)
        self.consumed.extend(done.consumed)
        self.direct_env.extend(done.direct_env)
        for kind, _anchor in done.marks:
            self._mark(kind)
        self._replay(done.writes, m)
        self.next_id += hit.fresh
        if done.ctx_after is not None:
            self.ctx = _remap_ctx(done.ctx_after, m) if m else done.ctx_after.copy()
        if hit.events:
            prefix = tuple((fr.path, fr.line, fr.name) for fr in self.stack)
            n = hit.n_prefix
            self.events.extend(dataclasses.replace(ev, trace=prefix + ev.trace[n:]) for ev in hit.events)
        return _remap(hit.ret, m) if m else hit.ret

    def new_instance(self, cls: Optional[str]) -> int:
        iid = self.next_id
        self.next_id += 1
        self.heap[iid] = {"cls": cls, "attrs": {}}
        self.wlog.append(("new", iid, cls))
        return iid

    def set_attr(self, iid: int, name: str, val: V) -> None:
        if iid < TEST_HEAP_BASE:   # an instance made at import: shared by every test
            self.write_state("attr", iid, name, val)
            return
        h = self.heap.setdefault(iid, {"cls": None, "attrs": {}})
        h["attrs"][name] = val
        h.pop("sig", None)
        self.wlog.append(("attr", iid, name, val))

    def _state_store(self, kind: str, owner) -> Dict[str, V]:
        if kind == "gattr":
            return self.globals.setdefault(owner, {})
        if kind == "cattr":
            return self.class_attrs.setdefault(owner, {})
        h = self.heap.setdefault(owner, {"cls": None, "attrs": {}})
        h.pop("sig", None)
        return h["attrs"]

    def write_state(self, kind: str, owner, name: str, val: V) -> None:
        """A write to state every test shares: a module global ("gattr"), a class attribute
        ("cattr") or an attribute of an instance made at import ("attr"). Outside import it is
        logged for undo, so each test starts from the state import left (``undo_test_writes``)."""
        store = self._state_store(kind, owner)
        external = False
        if self._lazy_frames and self.import_time:
            frame = self._lazy_frames[-1]
            external = self._owner_module(kind, owner) not in frame["created"]
            if external:
                frame["log"].append(("w", kind, owner, name, val))
        if self.import_time and not external:
            # permanent, what every test starts from. After collection such a write is to the state
            # of a module being imported for the first time, which no earlier call can have read;
            # calls at import time hold this version in their memo keys.
            self.import_version = hash((self.import_version, kind, owner, name, hash(val)))
        else:
            self.undo.append((kind, owner, name, name in store, store.get(name)))
            if val.instances():   # test instances now reachable from shared state: memo inputs
                self.shared_roots.append(val)
            self._set_cell(self._cell(kind, owner, name), hash(val))
        store[name] = val
        self.wlog.append((kind, owner, name, val))

    def _cell(self, kind: str, owner, name: str) -> int:
        """The bit of a shared-state cell, given on its first test-time write."""
        names = self.watch[kind].setdefault(owner, {})
        bit = names.get(name)
        if bit is None:
            bit = names[name] = 1 << self.n_cells
            self.n_cells += 1
            self.cell_group[bit] = self._gbit(owner, name)
        return bit

    def _read(self, kind: str, owner, name: str) -> None:
        """The running call reads cell (owner, name) of ``kind`` (``_cell``): a memo dependency."""
        gb = self._gbits.get(owner)
        b = gb.get(name) if gb is not None else None
        self.greads |= b if b is not None else self._gbit(owner, name)
        w = self.watch[kind].get(owner)
        if w is not None and name in w:
            self.reads |= w[name]

    def _gbit(self, owner, name: str) -> int:
        """The bit among ``greads``' of cell (owner, name), cached (name lookups are the hot path)."""
        b = _GROUP_BITS[(hash(owner) ^ hash(name)) & _GROUP_MASK]
        self._gbits.setdefault(owner, {})[name] = b
        return b

    def _set_cell(self, bit: int, version: int) -> None:
        self.cjournal.append((bit, self.cver.get(bit)))
        self.cver[bit] = version
        self.dirty |= bit

    def undo_test_writes(self) -> None:
        """Put back what the last test (or sweep root) wrote to shared state."""
        for kind, owner, name, had, old in reversed(self.undo):
            store = self._state_store(kind, owner)
            if had:
                store[name] = old
            else:
                store.pop(name, None)
        self.undo = []
        self.dirty, self.cver, self.cjournal = 0, {}, []

    def _replay(self, writes, m: Dict[int, int]) -> None:
        for w in writes:
            if m:
                w = _remap_write(w, m)
            kind = w[0]
            if kind == "new":
                self.heap[w[1]] = {"cls": w[2], "attrs": {}}
                self.wlog.append(w)
            elif kind == "attr" and w[1] >= TEST_HEAP_BASE:
                h = self.heap.setdefault(w[1], {"cls": None, "attrs": {}})
                h["attrs"][w[2]] = w[3]
                h.pop("sig", None)
                self.wlog.append(w)
            elif kind == "def":   # a nested function defined again: its defaults and enclosing variables
                self.defaults[w[1]] = w[2]
                if w[3] is not None:
                    self.closures[w[1]] = w[3]
                self.wlog.append(w)
            elif kind == "touch":
                if w[1] not in self.touched:
                    self._touch(w[1])
            elif kind == "lambda":
                entry = self.lambdas.get(w[1])
                if entry is not None:
                    self.lambdas[w[1]] = entry[:3] + (w[3],) + entry[4:]
                self.wlog.append(w)
            else:   # shared state: logged for undo, and the version moves as the first run's did
                self.write_state(w[0], w[1], w[2], w[3])

    def instantiate(self, qn: str, args: List[V], kwargs: Dict[str, V], frame: Frame) -> V:
        if qn not in self.p.classes:
            return UNKNOWN_V
        c, mod = self.p.classes[qn]
        if self.p.in_test.get(mod, False) and not self.is_testcase(qn):
            # an object of a class defined in test code is a test double (V1)
            pass
        atom = ("inst", self.new_instance(qn))
        init = self.find_method(qn, "__init__")
        if init is not None:
            self.call_function(init[1], args, kwargs, frame, self_atom=atom)
        else:
            self._dataclass_init(qn, args, kwargs, atom)
        return of(atom)

    def _dataclass_init(self, qn: str, args: List[V], kwargs: Dict[str, V], atom) -> None:
        fields: List[str] = []
        for c in reversed(self.mro(qn)):
            cd, _ = self.p.classes[c]
            for st in cd["body"]:
                if st[0] in ("assign", "ann") and (st[0] == "ann" or len(st) > 4):
                    t = st[1][0] if st[0] == "assign" else st[1]
                    if t[0] == "name" and t[1] not in fields:
                        fields.append(t[1])
        for i, name in enumerate(fields):
            if i < len(args):
                self.set_attr(atom[1], name, args[i])
            elif name in kwargs:
                self.set_attr(atom[1], name, kwargs[name])

    def is_testcase(self, qn: str) -> bool:
        return any(b.endswith("TestCase") for b in self.external_bases(qn))

    def call_method_of(self, atom, name: str, args, kwargs, frame: Frame) -> Optional[V]:
        if atom[0] != "inst":
            return None
        h = self.heap.get(atom[1])
        if not h or not h["cls"]:
            return None
        m = self.find_method(h["cls"], name)
        if m is None:
            return None
        return self.call_function(m[1], args, kwargs, frame, self_atom=atom)

    # ------------------------------------------------------------------ externals
    def call_external(self, d: str, args: List[V], kwargs: Dict[str, V], frame: Frame, pos) -> V:  # noqa: C901
        d = _canonical(d)
        spec = self.p.catalogue.lookup(d)
        if spec is not None:
            return self.sink_call(spec, d, args, kwargs, frame, pos)
        if d in _PATH_CTORS:
            if not args:
                return of(Origin("cwd", expr="Path()", path=frame.path, line=frame.line), is_path=True)
            return _head(_join_head(args)).with_path(True)
        if d in _CONTAINER_CTORS and not args:
            return of(("dict", ())) if d in _DICT_CTORS else of(("seq", "list", ()))
        if d in _HEAD_FUNCS:
            if d == "builtins.dict" and args and any(a == ("ext", "os.environ") for a in args[0].refs()):
                return of(("environ-copy",))
            if not args:
                return EMPTY
            if d in ("os.path.join", "posixpath.join"):
                return _head(_join_head(args)).with_path(False)
            if d in ("os.path.dirname", "posixpath.dirname"):
                return _up(_head(args[0])).with_path(False)
            return _head(args[0]).with_path(False)
        if d in _HOME_FUNCS or d.startswith(_HOME_PREFIXES):
            if d == "os.path.expanduser" and args:
                s = _literal_str(args[0], prefix=True)
                if s is not None and not s.startswith("~"):
                    return args[0]
                if s is None:
                    return args[0] if not _any_literal_tilde(args[0]) else self._home(frame, d)
            return self._home(frame, d)
        if d in _CWD_FUNCS:
            if self.ctx.cwd is not None:
                return self.ctx.cwd.with_path(True)
            return of(Origin("cwd", expr=d.split(".")[-1] + "()", path=frame.path, line=frame.line), is_path=True)
        if d in _TEMP_FUNCS:
            return of(Origin("test-value", expr=d), is_path=False)
        if d == "tempfile.gettempdir":
            return of(Origin("literal", expr="tempfile.gettempdir()", path=frame.path, line=frame.line, value="/tmp",
                             in_test=frame.in_test))
        if d in _DOUBLE_CTORS or d.startswith("unittest.mock.") and d.split(".")[-1][:1].isupper():
            return DOUBLE_V
        if d in ("functools.partial", "functools.partialmethod") and args:
            captured = self.import_time and self._is_clock_fn(args[0])
            if captured:
                self.record_clock(_canonical(self._clock_name(args[0])), frame, pos, capture=True)
                captured = (frame.path, pos[0])
            return of(("partial", args[0], tuple(args[1:]), tuple(sorted(kwargs.items(), key=lambda kv: kv[0])),
                       captured))
        if d in ("functools.wraps", "functools.lru_cache", "functools.cache", "contextlib.contextmanager",
                 "builtins.staticmethod", "builtins.classmethod", "builtins.property"):
            return args[0] if args else UNKNOWN_V
        if d == "builtins.getattr" and len(args) >= 2:
            name = _literal_str(args[1])
            if name is None:
                return UNKNOWN_V
            return self.eval_attr(args[0], name, frame)
        if d == "builtins.super":
            if frame.cls and "self" in frame.locals:
                selfv = frame.locals.get("self")
                for a in selfv.refs():
                    if a[0] in ("inst", "cls"):
                        cls = self.heap.get(a[1], {}).get("cls") if a[0] == "inst" else a[1]
                        if cls:
                            return of(("super", frame.cls, cls, a))
            return UNKNOWN_V
        if d in ("builtins.int", "builtins.float", "decimal.Decimal") and args:
            return _head(args[0]).with_path(False)   # a number parsed from a value keeps its origin
        if d == "sys.modules.get":
            return of(("modobj",))   # an imported module: it has a __file__ inside the project
        if d == "builtins.hasattr" and len(args) == 2 and any(a == ("modobj",) for a in args[0].refs()):
            return lit(_literal_str(args[1]) in ("__file__", "__name__"), frame.path, frame.line, frame.in_test)
        if d in ("builtins.isinstance", "builtins.len", "builtins.print", "builtins.hasattr", "builtins.callable",
                 "builtins.bool", "builtins.int", "builtins.float", "builtins.id", "builtins.hash"):
            return EMPTY
        if d == "os.environ.setdefault" or d == "os.putenv":
            key = _literal_str(args[0], prefix=True) if args else None
            if key is not None and frame.in_test:
                self.direct_env.append(key)
            if key is not None and len(args) > 1:
                if d == "os.putenv" or key not in self.ctx.env:
                    self.ctx.env[key] = args[1]
            return EMPTY
        if d == "os.environ.update":
            for a in (args[0].refs() if args else ()):
                if a[0] == "dict":
                    for k2, v2 in a[1]:
                        if k2 is not None:
                            self.ctx.env[k2] = v2
            for k2, v2 in kwargs.items():
                self.ctx.env[k2] = v2
            return EMPTY
        if d in ("os.environ.pop", "os.unsetenv", "os.environ.__delitem__"):
            key = _literal_str(args[0], prefix=True) if args else None
            if key is not None:
                self.ctx.env[key] = DELETED
            return EMPTY
        if d == "os.environ.clear":
            self.ctx.env_all = True
            return EMPTY
        if d.startswith("os.environ."):
            return EMPTY
        if d == "os.chdir" and args and not self.import_time:
            self.ctx.cwd = args[0]
            return EMPTY
        if d in ("importlib.import_module",) and args:
            name = _literal_str(args[0])
            if name and name in self.p.summaries:
                return self._import_value(name)
            return UNKNOWN_V
        if d in ("pytest.MonkeyPatch", "_pytest.monkeypatch.MonkeyPatch", "pytest.MonkeyPatch.context",
                 "_pytest.monkeypatch.MonkeyPatch.context", "pytest.monkeypatch.MonkeyPatch"):
            return of(("fixture", "monkeypatch"))
        if d in ("click.testing.CliRunner", "typer.testing.CliRunner"):
            return of(("clirunner",))
        if d == "sys.executable":
            return lit("<python>", frame.path, frame.line, frame.in_test)
        ctl = self.test_control(d, args, kwargs, frame)
        if ctl is not None:
            return ctl
        if d.startswith("pytest.mark."):
            return of(("mark", d[len("pytest.mark."):], tuple(args), tuple(sorted(kwargs.items(), key=lambda kv: kv[0]))))
        if d in ("pytest.param",):
            return args[0] if len(args) == 1 else of(("seq", "tuple", tuple(args)))
        return UNKNOWN_V

    def _home(self, frame: Frame, d: str) -> V:
        home = self.ctx.env.get("HOME")
        if home is not None and home is not DELETED:
            return home.with_path(True)
        return of(Origin("home", expr=d.split(".")[-1] + "()", path=frame.path, line=frame.line), is_path=True)

    # -- substitutes (S1-S6) ---------------------------------------------------------
    def test_control(self, d: str, args, kwargs, frame: Frame) -> Optional[V]:
        leaf = d.split(".")[-1]
        if d in ("unittest.mock.patch", "mock.patch", "unittest.mock._patch") or d.endswith(".mock.patch"):
            return self._patch_string(args, kwargs, frame)
        if d in ("unittest.mock.patch.object", "mock.patch.object") or (leaf == "object" and "patch" in d):
            return self._patch_object(args, kwargs)
        if leaf == "dict" and "patch" in d:
            return self._patch_dict(args, kwargs)
        if leaf == "multiple" and "patch" in d:
            owner = self._owner(args[0]) if args else None
            if owner is None and args and _literal_str(args[0]):
                owner = self._object_from_string(_literal_str(args[0]))
            entries = tuple((owner, k, v) for k, v in sorted(kwargs.items(), key=lambda kv: kv[0])) if owner else ()
            return of(("patcher", "multi", entries, self._site))
        if leaf == "stopall":
            return EMPTY
        if d in _FREEZERS or leaf in ("freeze_time",):
            return of(("patcher", "freeze", (), self._site))
        if d in _NET_MOCKS:
            if d in ("responses.start", "httpretty.enable"):
                self.ctx.net = self.ctx.net | {_NET_MOCKS[d]}
                return EMPTY
            return of(("patcher", "net", _NET_MOCKS[d], self._site))
        if leaf == "use_cassette":
            return of(("patcher", "net", "*", self._site))
        if d in _FS_FAKES:
            return of(("patcher", "fs", (), self._site))
        return None

    def _owner(self, v: V):
        for a in v.refs():
            if a[0] in ("mod", "ext", "cls", "inst"):
                return (a[0], a[1])
        return None

    def _owner_from_string(self, target: str):
        parts = target.split(".")
        for i in range(len(parts) - 1, 0, -1):
            mod = ".".join(parts[:i])
            if mod in self.p.summaries:
                mod = self.p.canonical[mod]
                rest = parts[i:]
                owner = ("mod", mod)
                for attr in rest[:-1]:
                    val = self.eval_attr(of(owner), attr, Frame(module=mod, path="", name="<patch>"))
                    o = self._owner(val)
                    if o is None:
                        return None
                    owner = o
                return owner, rest[-1]
        if len(parts) < 2:
            return None
        return ("ext", ".".join(parts[:-1])), parts[-1]

    def _object_from_string(self, target: str):
        """The owner key of the object a dotted string names (a module, class or library)."""
        if target in self.p.summaries:
            return ("mod", self.p.canonical[target])
        res = self._owner_from_string(target)
        if res is None:
            return None
        owner, attr = res
        if owner[0] == "ext":
            return ("ext", f"{owner[1]}.{attr}")
        return self._owner(self.eval_attr(of(owner), attr, Frame(module="", path="", name="<patch>")))

    def _patch_string(self, args, kwargs, frame: Frame) -> V:
        target = _literal_str(args[0]) if args else _literal_str(kwargs.get("target", EMPTY))
        if not target:
            return of(("patcher", "none", ()))
        res = self._owner_from_string(target)
        if res is None:
            return of(("patcher", "none", ()))
        owner, attr = res
        new = args[1] if len(args) > 1 else kwargs.get("new")
        explicit = new is not None
        value = new if new is not None else DOUBLE_V
        return of(("patcher", "attr", (owner, attr, value, explicit), self._site))

    def _patch_object(self, args, kwargs) -> V:
        if len(args) < 2:
            return of(("patcher", "none", ()))
        owner = self._owner(args[0])
        attr = _literal_str(args[1])
        if owner is None or attr is None:
            return of(("patcher", "none", ()))
        new = args[2] if len(args) > 2 else kwargs.get("new")
        return of(("patcher", "attr", (owner, attr, new if new is not None else DOUBLE_V, new is not None), self._site))

    def _patch_dict(self, args, kwargs) -> V:
        if not args:
            return of(("patcher", "none", ()))
        target = args[0]
        is_env = any(a == ("ext", "os.environ") for a in target.refs()) or _literal_str(target) == "os.environ"
        if not is_env:
            return of(("patcher", "none", ()))
        entries = []
        if len(args) > 1:
            for a in args[1].refs():
                if a[0] == "dict":
                    entries.extend((k, v) for k, v in a[1] if k is not None)
        clear = kwargs.get("clear")
        for k2, v2 in kwargs.items():
            if k2 != "clear":
                entries.append((k2, v2))
        return of(("patcher", "env", (tuple(entries), bool(clear is not None and truthiness(clear))), self._site))

    def _activate(self, a) -> V:
        """Install a patcher's substitute in the current control state; its value."""
        kind, payload = a[1], a[2]
        site = a[3] if len(a) > 3 else self._site
        if kind == "attr":
            owner, attr, value, _explicit = payload
            self.ctx.patches[(owner, attr)] = value
            self.ctx.sites[(owner, attr)] = site
            return value
        if kind == "multi":
            for owner, attr, value in payload:
                self.ctx.patches[(owner, attr)] = value
                self.ctx.sites[(owner, attr)] = site
            return DOUBLE_V
        if kind == "env":
            entries, clear = payload
            if clear:
                self.ctx.env_all = True
            for k, v in entries:
                self.ctx.env[k] = v
                self.ctx.sites[("env", k)] = site
            return DOUBLE_V
        if kind == "freeze":
            self.ctx.frozen = True
            self.ctx.sites.setdefault(("freeze",), site)
            return DOUBLE_V
        if kind == "net":
            self.ctx.net = self.ctx.net | {payload}
            return DOUBLE_V
        if kind == "fs":
            self.ctx.fs_fake = True
            return DOUBLE_V
        if kind == "cwd":
            self.ctx.cwd = of(Origin("test-value", expr="isolated_filesystem()"), is_path=True)
            return self.ctx.cwd
        return DOUBLE_V

    def call_meth(self, atom, name: str, args, kwargs, frame: Frame, pos) -> V:  # noqa: C901
        t = atom[0]
        if t == "patcher":
            if name == "start":
                return self._activate(atom)
            if name in ("stop", "__exit__"):
                return EMPTY
            return DOUBLE_V
        if t == "fixture":
            fx = atom[1]
            if fx == "monkeypatch":
                return self.monkeypatch(name, args, kwargs, frame)
            if fx == "mocker":
                if name in ("patch",):
                    return self._start(self._patch_string(args, kwargs, frame))
                if name in ("spy", "stub", "Mock", "MagicMock", "AsyncMock", "create_autospec", "mock_open"):
                    return DOUBLE_V
                return DOUBLE_V
            if fx == "mocker.patch":
                if name == "object":
                    return self._start(self._patch_object(args, kwargs))
                if name == "dict":
                    return self._start(self._patch_dict(args, kwargs))
                if name == "multiple":
                    return self._start(self.test_control("mock.patch.multiple", args, kwargs, frame) or EMPTY)
                return DOUBLE_V
            if fx == "request":
                if name == "param":
                    return frame.locals.get("__request_param__", UNKNOWN_V)
                return UNKNOWN_V
            if fx in ("tmp_path_factory", "tmpdir_factory", "tmp_path", "tmpdir"):
                return of(Origin("test-value", expr=f"{fx}.{name}()"), is_path=True)
            return DOUBLE_V
        if t == "client":
            spec: SinkSpec = atom[2]
            key = (("ext", atom[1]), name)
            if key in self.ctx.patches:
                return self.apply(self.ctx.patches[key], args, kwargs, frame, pos)
            targets = dict(spec.extra_methods)
            if len(atom) > 3:
                return UNKNOWN_V   # the constructor fixed the target: a use, not a sink
            if name in spec.methods or name in targets:
                tspec = targets.get(name, spec.method_target)
                target = _pick(tspec, args, kwargs)
                return self.record_sink(spec, f"{atom[1]}().{name}", target, frame, pos, lib=spec.lib)
            return UNKNOWN_V
        if t == "ctxfactory":
            return atom[1]
        if t == "clirunner":
            if name == "isolated_filesystem":
                # chdir into a fresh temporary folder for the block, restored on exit
                return of(("patcher", "cwd", (), self._site))
            return UNKNOWN_V
        if t == "testcase":
            if name in ("addCleanup", "enterContext", "addClassCleanup"):
                return EMPTY
            return EMPTY
        if t == "mark":
            return of(atom)
        return UNKNOWN_V

    def _start(self, v: V) -> V:
        out = EMPTY
        for a in v.refs():
            if a[0] == "patcher":
                out = out | self._activate(a)
        return out if out.atoms else DOUBLE_V

    def _mp_note(self, store: str, key) -> None:
        """Log what a monkeypatch change to ``store`` at ``key`` replaces (for ``undo``)."""
        c = self.ctx
        if store == "cwd":
            c.set_log(c.mp_log + (("cwd", None, True, c.cwd),))
            return
        site = key if store == "patches" else ("env", key)
        c.set_log(c.mp_log + tuple((st, k, k in getattr(c, st), getattr(c, st).get(k))
                                   for st, k in ((store, key), ("sites", site))))

    def _mp_undo(self) -> None:
        """``monkeypatch.undo()``: every change the test's monkeypatch made, put back."""
        c = self.ctx
        for st, k, had, old in reversed(c.mp_log):
            if st == "cwd":
                c.cwd = old
                continue
            d = getattr(c, st)
            if had:
                d[k] = old
            else:
                d.pop(k, None)
        c.set_log(())

    def monkeypatch(self, name: str, args, kwargs, frame: Frame) -> V:
        if name == "undo":
            self._mp_undo()
            return EMPTY
        if name == "setattr":
            value = args[2] if len(args) > 2 else kwargs.get("value")
            if len(args) >= 2 and _literal_str(args[0]) is not None and (len(args) == 2 or value is None):
                res = self._owner_from_string(_literal_str(args[0]))
                if res is not None:
                    self._mp_note("patches", res)
                    self.ctx.patches[res] = args[1]
                    self.ctx.sites[res] = self._site
                return EMPTY
            if len(args) >= 2:
                owner = self._owner(args[0])
                attr = _literal_str(args[1])
                if owner is not None and attr is not None:
                    self._mp_note("patches", (owner, attr))
                    self.ctx.patches[(owner, attr)] = value if value is not None else UNKNOWN_V
                    self.ctx.sites[(owner, attr)] = self._site
            return EMPTY
        if name == "delattr":
            if args:
                if len(args) == 1 and _literal_str(args[0]):
                    res = self._owner_from_string(_literal_str(args[0]))
                    if res is not None:
                        self._mp_note("patches", res)
                        self.ctx.patches[res] = UNKNOWN_V
                elif len(args) >= 2:
                    owner = self._owner(args[0])
                    attr = _literal_str(args[1])
                    if owner and attr:
                        self._mp_note("patches", (owner, attr))
                        self.ctx.patches[(owner, attr)] = UNKNOWN_V
            return EMPTY
        if name == "setenv":
            value = args[1] if len(args) > 1 else kwargs.get("value", UNKNOWN_V)
            for key in _literal_strs(args[0] if args else kwargs.get("name", EMPTY)):
                self._mp_note("env", key)
                self.ctx.env[key] = value
                self.ctx.sites[("env", key)] = self._site
            return EMPTY
        if name == "delenv":
            for key in _literal_strs(args[0] if args else kwargs.get("name", EMPTY)):
                self._mp_note("env", key)
                self.ctx.env[key] = DELETED
            return EMPTY
        if name in ("setitem", "delitem"):
            if args and any(a == ("ext", "os.environ") for a in args[0].refs()) and len(args) > 1:
                key = _literal_str(args[1], prefix=True)
                if key is not None:
                    self._mp_note("env", key)
                    self.ctx.env[key] = (args[2] if len(args) > 2 else UNKNOWN_V) if name == "setitem" else DELETED
            return EMPTY
        if name == "chdir":
            if args:
                self._mp_note("cwd", None)
                self.ctx.cwd = args[0]
            return EMPTY
        if name == "context":
            return of(("fixture", "monkeypatch"))
        return EMPTY

    def call_data_method(self, base: V, name: str, args, kwargs, frame: Frame, pos) -> V:
        spec = self.p.catalogue.path_methods.get(name)
        if spec is not None and (base.is_path or spec.distinctive):
            # S1 on the sink itself: patch("pathlib.Path.write_text") / patch.object(Path, ...)
            for owner in _PATH_CLASSES:
                key = (("ext", owner), name)
                if key in self.ctx.patches:
                    return self.apply(self.ctx.patches[key], args, kwargs, frame, pos)
            write = spec.write
            if spec.mode:
                m = _pick(spec.mode, args, kwargs)
                ms = _literal_str(m, prefix=True) if m is not None else None
                write = bool(ms and any(c in ms for c in "wax+"))
            return self.record_sink(spec, f"Path.{name}", base, frame, pos, write=write, path_method=True)
        if name in _PATH_VALUE_METHODS:
            return _head(base).with_path(True)
        if name == "expanduser":
            return base.with_path(True)
        if name in ("format", "format_map") and _literal_str(base, prefix=True) is not None:
            tmpl = _literal_str(base, prefix=True)
            if tmpl.startswith("{") and args:
                return _head(args[0])
            return _head(base)
        if name in ("upper", "lower", "strip") and _literal_str(base) is not None:
            text = _literal_str(base)
            return lit(getattr(text, name)(), frame.path, frame.line, frame.in_test)
        if name in ("strip", "rstrip", "lstrip", "lower", "upper", "replace", "encode", "decode", "rsplit",
                    "split", "removesuffix", "removeprefix", "casefold", "title", "expandtabs", "ljust", "rjust",
                    "__str__", "copy", "get", "mktemp", "getbasetemp"):
            return _head(base)
        return UNKNOWN_V

    # ------------------------------------------------------------------ sinks
    def sink_call(self, spec: SinkSpec, d: str, args, kwargs, frame: Frame, pos) -> V:
        cat = spec.category
        if cat == "clock":
            if spec.only_without_args and args:
                return EMPTY
            if spec.only_with_args and len(args) < spec.only_with_args + 1:
                pass
            self.record_clock(d, frame, pos)
            return of(Origin("clock", expr=f"{d}()", path=frame.path, line=pos[0],
                             value="import" if self.import_time else None))
        if cat == "env":
            if spec.variable:
                self.env_read(spec.variable, pos, frame, d)
                return UNKNOWN_V   # the program's path, found on the variable's folders
            if d == "os.environ.copy":
                return of(("environ-copy",))   # a snapshot (usually to restore or pass on): no read of a variable
            if d == "os.path.expandvars":
                return self.expandvars(args[0] if args else None, pos, frame)
            key = _pick(spec.target, args, kwargs)
            default = args[1] if len(args) > 1 else kwargs.get("default")
            return self.env_read(_literal_str(key, prefix=True) if key is not None else None, pos, frame, d, default)
        target = _pick(spec.target, args, kwargs)
        if target is None and spec.only_with_target:
            if spec.methods:
                return of(("client", d, spec))
            return EMPTY
        write = spec.write
        if spec.mode:
            m = _pick(spec.mode, args, kwargs)
            ms = _literal_str(m, prefix=True) if m is not None else None
            write = bool(ms and any(c in ms for c in "wax+"))
        if spec.methods and target is None:
            return of(("client", d, spec))
        self.record_sink(spec, d, target, frame, pos, write=write, lib=spec.lib)
        if spec.methods:
            return of(("client", d, spec, "targeted"))
        if cat == "file":
            return of(("handle", d))
        return of(("client", d, spec))

    def _import_marks(self, names) -> None:
        closure = self.p.import_closure
        if closure is None:
            return
        if any(self.p.canonical.get(n, n) in self.p.bootstrap_modules or
               (self.p.canonical.get(n, n) in closure and closure[self.p.canonical.get(n, n)] & self.p.bootstrap_modules)
               for n in names):
            self._mark("side")

    def _mark(self, kind: str) -> None:
        if self.import_time or self.sweep or not self.p.guard_function:
            return
        fr = self.stack[0] if self.stack else None
        self.marks.append((kind, (fr.path, fr.line) if fr is not None else ("", 0)))

    def _consume(self, v: V) -> None:
        """A test uses a value computed at import from the environment or the clock: it
        reaches a consumer of that import-time read (HT203/HT204 ``tests``)."""
        reads = _import_reads.get(v)
        if reads is None:
            found = []
            todo = list(v.origins())
            for a in v.refs():
                if a[0] == "partial" and len(a) > 4 and isinstance(a[4], tuple):
                    found.append(a[4])
            seen = 0
            while todo and seen < 50:
                o = todo.pop()
                seen += 1
                if o.kind in ("environment", "clock") and o.value == "import" and o.path:
                    found.append((o.path, o.line))
                elif o.inner:
                    todo.extend(o.inner)
            reads = tuple(found)
            if len(_import_reads) > 50_000:
                _import_reads.clear()
            _import_reads[v] = reads
        if reads:
            self.consumed.extend(reads)

    def _add_miss(self, key, rest: tuple) -> bool:
        """Record an HT205 candidate at the site that installed ``key`` (resolved now, and again
        when a memoized call is replayed under another test's sites)."""
        site = self.ctx.sites.get(key)
        if site is None:
            return False
        self.misses.append((site,) + rest)
        self.miss_keys.append((key, rest))
        return True

    def _add_escape(self, key, rest: tuple) -> None:
        site = self.ctx.sites.get(key)
        if site is None:
            return
        self.escapes.append((site,) + rest)
        self.escape_keys.append((key, rest))

    def _check_miss(self, v: V, mod: str, name: str, what: Optional[str] = None) -> V:
        """HT205: ``mod.name`` holds a function (or library object) whose defining binding
        the test patched; this lookup goes through ``mod``'s own binding and misses it.
        Returns the value with the missed atoms marked: what runs through them is reported
        once, as the HT205 at the patch (contract S1), not again as HT1xx."""
        if self.import_time:
            return v
        out = []
        for a in v.ordered():
            out.append(a)
            if not isinstance(a, tuple):
                continue
            key = None
            if a[0] == "func" and a[2] is None:
                entry = self.p.functions.get(a[1])
                if entry is None or entry[0].get("class"):
                    continue
                owner_mod = entry[1]
                key = (("mod", owner_mod), entry[0]["name"])
            elif a[0] == "ext" and "." in a[1]:
                owner, attr = a[1].rsplit(".", 1)
                key = (("ext", owner), attr)
            if key is None or key == (("mod", mod), name) or key not in self.ctx.patches:
                continue
            if self._add_miss(key, (f"{key[0][1]}.{key[1]}", what or f"{mod}.{name}",
                                    "default" if what else "binding")):
                out[-1] = ("missed", a)
        return V(frozenset(out), v.is_path) if len(out) == len(v.atoms) else v

    def _escapes(self, target: V, frame: Frame, pos) -> None:
        """HT202: the operation uses a constant derived at import from a base this test
        redirects (a patched constant, a set environment variable, HOME)."""
        if not self.ctx.sites:
            return
        for o in target.origins():
            if o.kind != "module-constant":
                continue
            for base in _bases(o):
                key = None
                if base.kind == "module-constant" and base.module:
                    key = (("mod", base.module), base.expr)
                elif base.kind == "environment":
                    key = ("env", base.expr)
                elif base.kind == "home":
                    key = ("env", "HOME")
                if key is not None and key in self.ctx.sites and (key[0] == "env" or key in self.ctx.patches):
                    self._add_escape(key, (base, o, frame.path, tuple(pos)))

    def _sink_ctx(self) -> SinkContext:
        cwd_ok = False
        cwd_origins = None
        if self.ctx.cwd is not None:
            cwd_origins = tuple(self.ctx.cwd.origins())
            cwd_ok = bool(cwd_origins) and all(o.kind == "test-value" for o in cwd_origins)
        return SinkContext(cwd_controlled=cwd_ok, fs_fake=self.ctx.fs_fake, loopback=bool(self.p.config.loopback),
                           cwd_origins=cwd_origins)

    def record_sink(self, spec: SinkSpec, call: str, target: Optional[V], frame: Frame, pos, write=False,
                    lib: str = "", path_method=False) -> V:
        cat = spec.category
        verdict, origin, ttext = self.judge(spec, target, cat, write, frame)
        if target is not None and not self.import_time:
            self._escapes(target, frame, pos)
        reason = _control_reason(target) if verdict == CONTROLLED else ""
        if cat == "network" and verdict != CONTROLLED and (
                "*" in self.ctx.net or (lib and lib in self.ctx.net)):
            verdict, reason = CONTROLLED, "a network mock (S4)"
        if cat == "subprocess" and self.ctx.subprocess_fake:
            verdict, reason = CONTROLLED, "the fp fixture (S5)"
        if cat == "file" and self.ctx.fs_fake and verdict != CONTROLLED and not self.import_time:
            verdict, reason = CONTROLLED, "pyfakefs (S6)"
        ev = SinkEvent(cat, frame.path, tuple(pos), call, verdict, origin, (), self.import_time,
                       self._import_module_name(), ttext, write)
        ev.reason = reason
        if cat in ("file", "connection") and target is not None:
            ev.targets = tuple(target.origins())
        if cat == "connection" and verdict == UNCONTROLLED:
            self._mark("side")
        self._record(ev)
        if path_method:
            if call.rsplit(".", 1)[-1] in ("iterdir", "glob", "rglob", "readlink"):
                return _head(target).with_path(True) if target is not None else EMPTY
            if call.rsplit(".", 1)[-1] in ("read_text", "read_bytes"):
                return UNKNOWN_V   # the file's contents, not a path
            if call.rsplit(".", 1)[-1] == "open":
                return of(("handle", call))
            return EMPTY
        return EMPTY

    def judge(self, spec: SinkSpec, target: Optional[V], cat: str, write: bool, frame: Frame):
        if target is None:
            if spec.default == "memory":
                return CONTROLLED, None, ""
            if spec.default == "library-default" or cat in ("connection", "network"):
                return UNCONTROLLED, Origin("library-default", expr=f"{spec.name}()", path=frame.path,
                                            line=frame.line), ""
            return UNKNOWN, Origin("unknown"), ""
        if cat == "subprocess":
            target = self._program(target, frame)
        sctx = self._sink_ctx()
        origins = sorted(target.origins(), key=_origin_sort)
        refs = [a for a in target.refs()]
        verdicts = []
        for o in origins:
            verdicts.append((classify(o, cat, write, sctx), o))
        for a in refs:
            if a == DOUBLE or a[0] == "fixture":
                verdicts.append((CONTROLLED, None))
            elif a[0] == "inst" and self._is_test_class_inst(a):
                verdicts.append((CONTROLLED, None))
            elif a[0] == "client":
                verdicts.append((CONTROLLED, None))
            else:
                verdicts.append((UNKNOWN, Origin("unknown", expr=a[0])))
        if not verdicts:
            return UNKNOWN, Origin("unknown"), ""
        for v, o in verdicts:
            if v == UNCONTROLLED:
                return UNCONTROLLED, o, _origin_text(o)
        for v, o in verdicts:
            if v == UNKNOWN:
                return UNKNOWN, o, ""
        return CONTROLLED, None, ""

    def _program(self, target: V, frame: Frame) -> V:
        """The program a subprocess call starts (argv[0] of a list); ``sys.executable`` is a
        known program (this interpreter), written where the call is (rows T1 / X)."""
        out = EMPTY
        for a in target.ordered():
            if not isinstance(a, Origin) and a[0] == "seq":
                out = out | (a[2][0] if a[2] else UNKNOWN_V)
            else:
                out = out | of(a)
        if any(a == ("ext", "sys.executable") for a in out.refs()):
            interpreter = Origin("literal", expr="sys.executable", path=frame.path, line=frame.line,
                                 value="sys.executable", in_test=frame.in_test)
            out = V(frozenset(interpreter if a == ("ext", "sys.executable") else a for a in out.atoms), out.is_path)
        return out

    def _is_test_class_inst(self, a) -> bool:
        h = self.heap.get(a[1])
        if not h or not h["cls"]:
            return False
        return self.p.in_test.get(self.p.classes[h["cls"]][1], False)

    def _is_clock_fn(self, v: V) -> bool:
        return bool(self._clock_name(v))

    def _clock_name(self, v: V) -> str:
        for a in v.refs():
            if a[0] == "ext":
                spec = self.p.catalogue.lookup(_canonical(a[1]))
                if spec is not None and spec.category == "clock":
                    return a[1]
        return ""

    def record_clock(self, d: str, frame: Frame, pos, capture: bool = False) -> None:
        verdict = CONTROLLED if (self.ctx.frozen and not self.import_time) else UNCONTROLLED
        reason = "a frozen clock (S3)" if verdict == CONTROLLED else ""
        key = None
        for k in self.ctx.patches:
            if k[0] == ("ext", d.rsplit(".", 1)[0]) and k[1] == d.rsplit(".", 1)[1]:
                key = k
        if key is not None:
            verdict = CONTROLLED
        origin = Origin("clock", expr=f"{d}()", path=frame.path, line=pos[0])
        ev = SinkEvent("clock", frame.path, tuple(pos), d, verdict, origin, (), self.import_time,
                       self._import_module_name(), "capture" if capture else "", False)
        ev.reason = reason or ("a patched clock function (S1)" if verdict == CONTROLLED else "")
        self._record(ev)

    def env_read(self, key: Optional[str], pos, frame: Frame, call: str, default: Optional[V] = None) -> V:
        pos = tuple(pos)
        if key is None:
            self._record(SinkEvent("env", frame.path, pos, call, UNKNOWN, Origin("unknown"), (),
                                   self.import_time, self._import_module_name(), "", False))
            return UNKNOWN_V
        if key == "*":
            verdict = CONTROLLED if self.ctx.env_all else UNCONTROLLED
            self._record(SinkEvent("env", frame.path, pos, call, verdict,
                                   Origin("environment", expr="os.environ", path=frame.path, line=pos[0]), (),
                                   self.import_time, self._import_module_name(), "os.environ", False))
            return of(Origin("environment", expr="os.environ", path=frame.path, line=pos[0]))
        if key in self.ctx.env:
            val = self.ctx.env[key]
            ev = SinkEvent("env", frame.path, pos, call, CONTROLLED, None, (), self.import_time,
                           self._import_module_name(), key, False)
            ev.reason = f"{key} set by the test or session configuration (S2)"
            self._record(ev)
            if val is DELETED:
                return default if default is not None else EMPTY
            return val
        if self.ctx.env_all:
            self._record(SinkEvent("env", frame.path, pos, call, CONTROLLED, None, (), self.import_time,
                                   self._import_module_name(), key, False))
            return default if default is not None else EMPTY
        origin = Origin("environment", expr=key, path=frame.path, line=pos[0],
                        value="import" if self.import_time else None)
        self._record(SinkEvent("env", frame.path, pos, call, UNCONTROLLED, origin, (), self.import_time,
                               self._import_module_name(), key, False))
        return of(origin)

    def expandvars(self, arg: Optional[V], pos, frame: Frame) -> V:
        """``os.path.expandvars(p)`` reads the variables named in ``p`` (none when ``p`` has no $)."""
        import re as _re

        if arg is None:
            return EMPTY
        text = _literal_str(arg, prefix=True)
        if text is None:
            if any(o.kind == "unknown" for o in arg.origins()) or not any(True for _ in arg.origins()):
                self.env_read(None, pos, frame, "os.path.expandvars")
            return arg
        names = _re.findall(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))", text)
        out = arg
        for a, b in names:
            out = out | self.env_read(a or b, pos, frame, "os.path.expandvars")
        return out

    def _import_module_name(self) -> str:
        for fr in reversed(self.stack):
            if fr.is_module:
                return fr.module
        return ""

    def _record(self, ev: SinkEvent) -> None:
        if self.missed_depth:
            ev.missed = True
        trace = tuple((fr.path, fr.line, fr.name) for fr in self.stack)
        if trace:
            last = trace[-1]
            trace = trace[:-1] + ((last[0], ev.pos[0], last[2]),)
        ev.trace = trace
        self.events.append(ev)

    def _emit(self, rel: SinkEvent, prefix) -> None:
        self.events.append(dataclasses.replace(rel, trace=tuple(prefix) + rel.trace))

    def _import_value(self, full: str) -> V:
        if full in self.p.summaries:
            self.import_module(full)
            return of(("mod", self.p.canonical[full]))
        return of(("ext", full))

    def module_attr_static(self, mod: str, attr: str) -> V:
        mod = self.p.canonical.get(mod, mod)
        g = self.globals.get(mod) or {}
        self._read("gattr", mod, attr)
        if attr in g:
            return g[attr]
        sub = f"{mod}.{attr}"
        if sub in self.p.summaries:
            self.import_module(sub)
            return of(("mod", self.p.canonical[sub]))
        return UNKNOWN_V
