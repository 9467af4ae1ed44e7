"""The memo: storing a call's result with what it read, finding a reusable entry for the
same inputs and control state, renumbering and replaying it; and the cells of shared state
(module globals, class attributes, instances made at import) whose reads and writes it tracks.

Every read of shared state must be recorded: through ``_read``, or by marking ``greads`` as
the inlined module-global read in ``Expressions.lookup`` does. A read not recorded lets a stale
entry be reused silently (``tests/test_memo.py``, ``tests/test_determinism.py`` guard it).
"""
from __future__ import annotations

import dataclasses
from typing import Dict, List, Optional, Tuple

from .limits import MEMO_ALTERNATIVES, NO_CUT, TEST_HEAP_BASE, _GROUP_BITS, _GROUP_MASK
from .literals import _number
from .relocate import _CM, _call_bit, _relocatable, _remap, _remap_ctx, _remap_write
from .state import _MemoEntry
from .values import V


class Memo:
    """``Interp`` methods of the memo and the shared-state cells it watches."""

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

    def _canon_inputs(self, loc: Dict[str, V], closure: Optional[Dict[str, V]],
                      shared: bool = True) -> Tuple[tuple, tuple]:
        """A call's inputs with the instances a test made renamed by the order they are found in:
        ``(shape, ids)``, where ``shape`` is hashable and equal for calls on equal state (the
        arguments, a nested function's enclosing variables, the variables the lambdas among them
        captured, and every instance reachable from these, from the patches in force and from
        what the test wrote into module state, unless ``shared`` is false), and ``ids`` the
        instance ids in that order. Instances made at import are shared by every test and keep
        their ids: the state reads of their attributes are the call's dependencies on shared
        state (``_same_cells``). Without ``shared`` the form is for a call that reads no cell
        holding the test's instances (``Interp.deep_calls``)."""
        roots: List[V] = list(loc.values())
        ck = sorted(closure) if closure else ()
        if ck:
            roots.extend([closure[k] for k in ck])
        if self.ctx.patches:
            roots.extend(self.ctx.patches.values())
        if shared and self.shared_roots:
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
            states.append((sig[0], tuple(map(found.get, sig[1], sig[1]))))   # found.get(iid, iid) each

        def canon(v: V) -> tuple:
            return (v.shape(), tuple(map(found.get, v._insts, v._insts))) if v._insts else hash(v)

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
        for keys, maybe in done.fx_hits:
            self._fx_hit(keys, maybe)
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
            # an import-time event belongs to the module (and statement) importing now, not the
            # one that made the entry
            if self.import_time:
                module, binding = self._import_module_name(), self.module_statement()
                self.events.extend(dataclasses.replace(ev, trace=prefix + ev.trace[n:], module=module, binding=binding)
                                   for ev in hit.events)
            else:
                self.events.extend(dataclasses.replace(ev, trace=prefix + ev.trace[n:]) for ev in hit.events)
        return _remap(hit.ret, m) if m else hit.ret

    def _state_store(self, kind: str, owner, write: bool = True) -> Dict[str, V]:
        """The attributes of a shared-state owner (``write_state``'s kinds); with ``write`` False
        only to read them (nothing is made, an instance's signature stays)."""
        if kind == "gattr":
            return self.globals.setdefault(owner, {}) if write else self.globals.get(owner, {})
        if kind == "cattr":
            return self.class_attrs.setdefault(owner, {}) if write else self.class_attrs.get(owner, {})
        if not write:
            return self.heap.get(owner, {}).get("attrs", {})
        h = self.heap.setdefault(owner, {"cls": None, "attrs": {}})
        h.pop("sig", None)
        return h["attrs"]

    def written_since(self, start: int) -> tuple:
        """The shared-state cells written since the undo log held ``start`` entries, with what
        they hold now (``cells_now``)."""
        return self.cells_now(self.undo[start:])

    def cells_now(self, cells) -> tuple:
        """What the shared-state cells ``cells`` (``(kind, owner, name, ...)`` each) hold now:
        ``((kind, owner, name, value), ...)``, each cell once, in order; a cell that holds
        nothing is left out."""
        out, seen = [], set()
        for cell in cells:
            kind, owner, name = cell[0], cell[1], cell[2]
            if (kind, owner, name) in seen:
                continue
            seen.add((kind, owner, name))
            store = self._state_store(kind, owner, write=False)
            if name in store:
                out.append((kind, owner, name, store[name]))
        return tuple(out)

    def state_at_yield(self, fr) -> tuple:
        """What the shared-state cells a context-manager generator wrote held at its yield (the
        state its ``with`` block runs in), for those written before it (``fr.yield_writes``) and
        after it (the value the first write after it replaced): ``((kind, owner, name, value),
        ...)``; a cell that held nothing at the yield is left out."""
        if fr.yield_undo < 0:
            return ()
        out = list(fr.yield_writes)
        seen = {w[:3] for w in out}
        for kind, owner, name, had, old in self.undo[fr.yield_undo:]:
            if (kind, owner, name) not in seen:
                seen.add((kind, owner, name))
                if had:
                    out.append((kind, owner, name, old))
        return tuple(out)

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
            bit = self._cell(kind, owner, name)
            if val.instances():   # test instances now reachable from shared state: memo inputs
                self.shared_roots.append(val)
                self.inst_cells |= bit
            self._set_cell(bit, hash(val))
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
        self.inst_cells = 0

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
                if self.attr_undo is not None:
                    self.attr_undo.append((w[1], w[2], h["attrs"].get(w[2])))
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
