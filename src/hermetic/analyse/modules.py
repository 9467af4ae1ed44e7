"""Modules and imports: importing a project module (at collection, or lazily after it in
the state collection left), attribute reads on modules, and the bookkeeping of which modules'
code a run ran (``file_bits``) and which calls it could not follow (unresolved notes).
"""
from __future__ import annotations

import dataclasses
from pathlib import PurePosixPath
from typing import Dict, List, Optional, Tuple

from .limits import LAZY_BLOCK_BITS, LAZY_HEAP_BASE, TEST_HEAP_BASE, _TOUCH
from .state import ANY_VARIABLE, Ctx, Frame
from .values import UNKNOWN_V, Origin, V, lit, of


# pytest's test API, which the analysis models (marks, parametrize rows, expected exceptions):
# where pytest itself is the project, `pytest.mark` is still the mark, not pytest's own code
PYTEST_MODELLED = frozenset({"mark", "param", "raises", "warns", "deprecated_call", "fixture", "skip", "fail",
                             "xfail", "importorskip", "MonkeyPatch"})


class Modules:
    """``Interp`` methods for modules and imports (state: ``Interp.__init__``)."""

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
        if self.ctx.fs_gone:   # it may have made files anywhere (fsmodel)
            self.ctx.fs_gone, self.ctx.fs_made = (), ()

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
            if self.exec_block(s["body"], frame) and self.raising:
                self.import_raised.add(name)   # pytest.skip(allow_module_level=True), sys.exit()
        except RecursionError:
            pass
        finally:
            if s["path"].endswith("conftest.py"):
                # conftest module level is session configuration (S2)
                for k, v in self.ctx.env.items():
                    if k != ANY_VARIABLE:   # unnamed variables would make every read unknown
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
            # once each: an import inside re-notes its own when touched, and a chain of imports
            # doubled the notes at each level (a Django test file alone grew past 24 GiB)
            self.lazy_unresolved[name] = tuple(dict.fromkeys(self.unres_log[unres_from:]))
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
        if mod == "pytest" and name in PYTEST_MODELLED:
            return of(("ext", "pytest." + name))   # pytest's own suite: its test API as modelled
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

    def _import_module_name(self) -> str:
        for fr in reversed(self.stack):
            if fr.is_module:
                return fr.module
        return ""

    def _import_value(self, full: str) -> V:
        if full in self.p.summaries:
            self.import_module(full)
            return of(("mod", self.p.canonical[full]))
        if full in ("typing.TYPE_CHECKING", "typing_extensions.TYPE_CHECKING"):
            return lit(False, None, None, False)   # the imports only type checkers read
        return of(("ext", full))

    def module_attr_static(self, mod: str, attr: str) -> V:
        mod = self.p.canonical.get(mod, mod)
        if mod == "pytest" and attr in PYTEST_MODELLED:
            return of(("ext", "pytest." + attr))
        g = self.globals.get(mod) or {}
        self._read("gattr", mod, attr)
        if attr in g:
            return g[attr]
        sub = f"{mod}.{attr}"
        if sub in self.p.summaries:
            self.import_module(sub)
            return of(("mod", self.p.canonical[sub]))
        return UNKNOWN_V
