"""Statements: executing a block of summary statements (assignments, branches, loops,
``with``, ``try``, returns, definitions) in a frame, and binding names.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

from .expected import note_raise
from .narrow import narrowings, removal_guard
from .controls import side_effect_given
from .handlers import effects_given, exec_try, instance_classes, returns_given
from .loops import exec_for, exec_jump, exec_while, way_ended
from .withblocks import exec_with
from .literals import _literal_str, env_name, _canonical
from .origins import wrap_constant
from ..summarise.ir import EXPR_ASSERT, NONLOCAL_NAMES, dotted_name, stmt_line, subscript_root
from .state import ANY_VARIABLE, FX_STATEMENTS, Frame, _Return, unset_way
from .ways import ModuleWays, TreeWays, WayWrites, union_locals
from .values import EMPTY, UNKNOWN_V, Origin, V, from_call, holds_item, of, seq_atom, union


# methods that change a list, set or dict in place
_MUTATORS = {"append", "extend", "insert", "add", "update", "setdefault", "pop", "popitem", "remove", "discard",
             "clear", "__setitem__", "__delitem__"}


class Statements:
    """``Interp`` methods that execute statements and bind names."""

    # ------------------------------------------------------------------ statements
    def exec_block(self, stmts: Sequence, frame: Frame) -> bool:
        """Run statements; True when the block always ends in return/raise (``raising`` then
        tells which: True when every way raised, also through a call that raises on every way).
        After an ``if`` the test's values do not decide, with a branch that returns or raises,
        the rest of the block runs only on the other way: undecided too (medium confidence)."""
        open_ways = 0
        self.way_cut = False   # left by a statement run outside a block (a class body's)
        try:
            for st in stmts:
                self.call_raised = self.exits = False
                if self.expect_hit:   # the exception the test expects was raised: unwind to its `with`
                    self.raising = True
                    return True
                if frame.is_module:
                    frame.stmt = stmt_line(st)
                ended = self.exec_stmt(st, frame)
                if frame.fx_lines and st[0] in FX_STATEMENTS and stmt_line(st) in frame.fx_lines:
                    # a statement changing the process ran (its own line: a call in a value spanning
                    # lines leaves frame.line at the call's)
                    self._fx_hit(frame.fx_lines[stmt_line(st)])
                if ended:
                    self.call_raised = False   # spent here: `raise _error(...)` on one way of an if
                    return True
                if self.call_raised:   # validate(x) raises for these values: nothing after it runs
                    self.call_raised = False
                    # a module's or class's body goes on (it imports), unless a library call
                    # that never returns ends it (pytest.skip(allow_module_level=True))
                    if self._may_raise(frame) or self.exits:
                        self.raising = True
                        return True
                if self.way_cut:
                    self.way_cut = False
                    open_ways += 1
                    self.undecided += 1
            # the block that holds this one (a `with`, `try` or loop body) goes on only on
            # those ways too; a function's caller does not (call_function clears it)
            self.way_cut = open_ways > 0
            return False
        finally:
            self.undecided -= open_ways

    @staticmethod
    def _may_raise(frame: Frame) -> bool:
        """Whether a raise the values decide ends ``frame``'s run: not a module's or a class's
        body, which imports in practice (the analysis misread a value it decided on)."""
        return not frame.is_module and not (frame.cls is not None and frame.name == frame.cls)

    def _concrete_self(self, frame: Frame) -> bool:
        """``frame`` is a method run on instances of project classes whose own method it is (looked
        up from their class: no override stands between)."""
        v = frame.locals.get("self") if frame.cls is not None else None
        if v is None or not v.atoms:
            return False
        for a in v.atoms:
            cls = self.heap.get(a[1], {}).get("cls") if isinstance(a, tuple) and a[0] == "inst" else None
            m = self.find_method(cls, frame.name.rsplit(".", 1)[-1]) if cls in self.p.classes else None
            if m is None or m[1] != frame.name:
                return False
        return True

    def exec_stmt(self, st, frame: Frame) -> bool:  # noqa: C901 - one dispatch over statement forms
        self.steps += 1
        kind = st[0]
        if kind == "expr":
            frame.line = st[2]
            if len(st) > EXPR_ASSERT:   # `assert test`: a test the values decide false raises; an open one holds
                # (in test code a false one means the values are misread: the test passes in practice)
                fails = self.eval_cond(st[1], frame) is False and not frame.in_test
                self.raising = self.raising or fails
                return fails
            self.eval(st[1], frame)
            e = st[1]
            if e[0] == "call" and e[1][0] == "attr" and e[1][2] in _MUTATORS and e[1][1][0] == "name":
                added, self.added = self.added, None
                if not (e[1][2] == "update" and self._merge_dict(e[1][1][1], e, frame)):
                    # args.append(...): its members change, and it may hold what was put in
                    self._forget_members(e[1][1][1], frame, put=self._put_in(added, e[1][1][1]))
            elif e[0] == "call" and e[1][0] == "attr" and e[1][2] in _MUTATORS and e[1][1][0] == "attr" \
                    and e[1][1][1][0] == "name":   # (the owner a name: read again, no call runs twice)
                added, self.added = self.added, None
                self._forget_attr_members(e[1][1], frame, added)   # request.META.update(...), self.jobs.append(j)
            return False
        if kind == "assign":
            frame.line = st[3]
            val = self.eval(st[2], frame)
            if st[2][0] == "name" and not frame.is_module:
                self.maybe_filled(st[2][1], frame)   # alias = items: a list filled through the alias
            if frame.is_module:
                frame.line = st[3]   # the assignment's line, not that of the last call in its value
                val = self._wrap_constant(val, st[1], frame)
            for t in st[1]:
                self.assign(t, val, frame)
            return False
        if kind == "augassign":
            frame.line = st[4]
            cur = self.eval_target_value(st[1], frame)
            val = self.eval(st[3], frame)
            new = EMPTY
            op = st[2][:-len("Assign")]
            if cur.atoms and all(isinstance(a, Origin) for a in cur.atoms):
                # a string, a path or a number: `prefix += "*"` is a string built from prefix
                new = self.binop(op, cur, val, frame)
            elif op == "Add" and cur.atoms and val.atoms and all(
                    isinstance(a, tuple) and a[0] == "seq" for a in cur.atoms | val.atoms):
                # `cmd += ("-a",)`: the items in order, not either; past a few alternatives (a
                # `+=` under each of many undecided ifs) each keeps its head and may end with any
                # of the items added
                if len(cur.atoms) * len(val.atoms) <= _JOINS:
                    new = self.binop(op, cur, val, frame)
                else:
                    tail = union(i for b in val.atoms for i in b[2])
                    new = V(frozenset(seq_atom(a[1], tuple(a[2]) + ((tail,) if tail.atoms else ()), holds_item(a))
                                      for a in cur.atoms), cur.is_path)
            self.assign(st[1], new if new.atoms else cur | val if cur.atoms else val, frame)
            return False
        if kind == "return":
            frame.line = st[2]
            if st[1] is not None:
                frame.returns = frame.returns | self.eval(st[1], frame)
            self.raising = self.call_raised   # `return f(x)` where f raises raises
            frame.returned = frame.returned or not self.call_raised
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
            decos = self._define_function(qn, frame)
            self._widen_nonlocals(qn, frame)
            self._bind(frame, st[1], self.decorated(qn, decos, frame) if decos else of(("func", qn, None)))
            return False
        if kind == "class":
            qn = st[2]
            frame.line = st[3]
            self._define_class(qn, frame)
            self._bind(frame, st[1], of(("cls", qn)))
            return False
        if kind == "if":
            frame.line = st[4]
            if removal_guard(st):   # `if K in os.environ: os.environ.pop(K)`: K is unset either way
                return self.exec_block(st[2], frame)
            self.platform_read = False
            cond = self.eval_cond(st[1], frame)
            if self.call_raised and self._may_raise(frame):   # the condition raises: neither branch runs
                return False
            if cond is True or cond is False:
                if frame.is_module and frame.in_test:   # the HT30x scan of the module takes the same way
                    self.module_ifs[(frame.module, st[4])] = cond
                # a library exit there may rest on a misread value, unless only scalars decided it
                by_values = not self.platform_read and not self.scalar_condition(st[1], frame)
                frame.decided += by_values
                try:
                    return self.exec_block(st[2] if cond else st[3], frame)
                finally:
                    frame.decided -= by_values
            ended, some = self._branches([st[2], st[3]], frame, narrowings(st[1], frame))
            self.way_cut = some and not ended   # what follows runs only on the other way
            return ended
        if kind == "for":
            return exec_for(self, st, frame)
        if kind == "while":
            return exec_while(self, st, frame)
        if kind == "jump":
            return exec_jump(self, st, frame)
        if kind == "try":
            return exec_try(self, st, frame)
        if kind == "with":
            frame.line = st[3]
            return exec_with(self, st[1], st[2], frame, st[4] if len(st) > 4 else False)
        if kind == "raise":
            frame.line = st[2]
            if st[1] is not None:
                note_raise(self, self.eval(st[1], frame), frame)
            self.raising = True
            if st[1] is not None and dotted_name(st[1]) == "NotImplementedError" and not self._concrete_self(frame):
                # an abstract method: at run time an override is called, which may return (not
                # where the method was found on a known instance's own class: that one runs)
                frame.returned = True
            return True
        if kind == "del":
            frame.line = st[2]
            for t in st[1][1] if st[1][0] == "tuple" else [st[1]]:
                local = t[0] == "sub" and t[1][0] == "name" and t[2][0] != "slice"
                if t[0] != "sub" or not (local or frame.in_test):
                    continue
                key = self.eval(t[2], frame)
                if local:   # del changes["id"]: no longer in it
                    self._drop_key(t[1][1], key, frame)
                if frame.in_test:   # del cache[key] in a test: the class's __delitem__
                    for a in self.eval(t[1], frame).refs():
                        if a[0] == "inst":
                            self.call_method_of(a, "__delitem__", [key], {}, frame)
            return False
        if kind == "global":
            frame.globals_decl = tuple(frame.globals_decl) + tuple(st[1])
            return False
        if kind == "match":
            self.eval(st[1], frame)
            return self._branches(st[2], frame)[0]
        if kind == "ann":
            return False
        return False

    def _branches(self, blocks, frame: Frame, binds=None) -> Tuple[bool, bool]:
        """``_alternatives``, counted in ``undecided``: what runs there is reached with medium confidence."""
        self.undecided += 1
        try:
            return self._alternatives(blocks, frame, binds)
        finally:
            self.undecided -= 1

    def _alternatives(self, blocks, frame: Frame, binds=None) -> Tuple[bool, bool]:
        """Run alternative blocks on copies of the locals and merge them (union): whether every
        block, and whether some block (or an undecided way inside one), returns or raises.
        ``binds``: per block, variables narrowed on that way (``narrow``)."""
        base = dict(frame.locals)
        env_before = dict(self.ctx.env)
        module_ways = ModuleWays(self.globals.setdefault(frame.module, {}) if frame.is_module else None)
        heap_ways = WayWrites(self)   # counters on the test's objects: each way from the same count
        tree_ways = TreeWays(self)   # what the run wrote in the checkout: each way from the same
        results = []
        all_end, some_end, all_raise = True, False, True
        any_jumped = any_returned = False
        set_on: List[set] = []   # per way: the variables it set that were not set before
        for i, b in enumerate(blocks):
            frame.locals = dict(base)
            if binds:
                frame.locals.update(binds[i])
            module_ways.start()
            tree_ways.start()
            env_start = dict(self.ctx.env)
            try:
                ended = self.exec_block(b, frame)
            except BaseException:
                heap_ways.keep_last()
                raise
            if self.expect_hit:   # this way raised what the test expects: it is the test's way
                heap_ways.keep_last()
                frame.locals = base
                self.way_cut = False
                self.raising = True
                return True, True
            heap_ways.end_way()
            tree_ways.end_way()
            set_on.append({k for k, v in self.ctx.env.items() if k not in env_before and env_start.get(k) is not v})
            jumped = ended and way_ended(self, frame)
            any_jumped = any_jumped or jumped
            any_returned = any_returned or (ended and not jumped)
            all_end = all_end and ended
            all_raise = all_raise and ended and self.raising and not jumped
            some_end = some_end or ended or self.way_cut
            if jumped:   # its locals went to the loop; a module's top level keeps its globals
                module_ways.keep()
            elif not ended:
                results.append(frame.locals)
                module_ways.keep()
        module_ways.finish()
        heap_ways.finish()
        tree_ways.finish()
        # a variable set on one of the ways may also be unset (``handlers._set_variable_read``);
        # set on some ways only, a read after the branch may read the machine's own (contract
        # section 2: controlled only where it holds on every way)
        every = set.intersection(*set_on) if set_on else set()
        for k, v in list(self.ctx.env.items()):
            if env_before.get(k) is not v and isinstance(v, V):
                self.ctx.env[k] = v | UNKNOWN_V
                if k not in env_before and k not in every and k != ANY_VARIABLE:
                    self.ctx.env[k] = self.ctx.env[k] | of(unset_way(k))
        self.way_cut = False
        if not results:
            frame.locals = base
            self.raising = all_raise
            self.jumping = any_jumped and not any_returned   # every way jumped: so did the block
            return all_end, some_end
        frame.locals = union_locals(results)
        return False, some_end

    # ------------------------------------------------------------------ binding
    def _bind(self, frame: Frame, name: str, val: V) -> None:
        if frame.is_module:
            self.globals.setdefault(frame.module, {})[name] = val
        elif name in frame.globals_decl:
            self.write_state("gattr", frame.module, name, val)
            return
        frame.locals[name] = val

    def _replace_library_attr(self, owner: tuple, attr: str, val: V, frame: Frame) -> None:
        """``datetime.datetime = Fake`` in test code: the library's attribute is the test's value
        from now on, as ``monkeypatch.setattr(datetime, "datetime", Fake)`` makes it; writing the
        original back (``datetime.datetime = self.saved``, a hand-written context manager's
        ``__exit__``) puts the library's own in place again."""
        key = (owner, attr)
        if val.atoms == {("ext", f"{owner[1]}.{attr}")}:
            self.ctx.patches.pop(key, None)
            self.ctx.sites.pop(key, None)
        else:
            self.ctx.patches[key] = val
            self.ctx.sites[key] = (frame.path, (frame.line, 0, frame.line, 0))

    def assign(self, t, val: V, frame: Frame) -> None:
        k = t[0]
        if k == "name":
            self._bind(frame, t[1], val)
        elif k == "attr":
            base = self.eval(t[1], frame)
            doubles = [a for a in base.refs() if a[0] == "double"]
            if doubles and not (t[2] == "return_value" and all(len(a) > 2 for a in doubles)):
                # m.return_value.stdout = "": not MagicMock's defaults (``mock_items``); a patched
                # function's return_value is what its calls give (``Ctx.returns``), no other double's
                self.ctx.doubles_set = True
            if t[2] == "return_value":   # what the double returns from now on
                self.ctx.returns = returns_given(base, val, self.ctx.returns,
                                                 not (self.undecided or self.guarded or self.missed_depth))
            if t[2] == "side_effect":   # the double may raise from now on (what the test made)
                self.ctx.raising = side_effect_given(base, self.ctx.raising)
                self.ctx.effects = effects_given(base, val, self.ctx.effects, instance_classes(self, val) is not None)
            for a in base.refs():
                if a[0] == "ext" and frame.in_test and len(base.atoms) == 1:
                    self._replace_library_attr(a, t[2], val, frame)
                elif a[0] == "inst":
                    if frame.yield_ctx is not None and a == self.test_instance and self.in_own_body():
                        continue   # a fixture's teardown (past its yield) sets it after the test ran
                    self.set_attr(a[1], t[2], val)
                elif a[0] == "cls":
                    self.write_state("cattr", a[1], t[2], val)
                elif a[0] == "mod" and a[1] in self.globals:
                    self.write_state("gattr", a[1], t[2], val)
                elif a[0] == "func" and a[2] is None and a[1] in self.p.functions:
                    # a function's own attribute (click's f.__click_params__): shared like a class's
                    self.write_state("cattr", a[1], t[2], val)
            if t[1][0] == "name" and not frame.is_module and not any(
                    a[0] in ("inst", "cls", "mod") or a[0] == "func" and a[2] is None for a in base.refs()):
                # a library object's attribute (conn.cert_file = cert[0]): read back by this frame
                frame.locals[f"{t[1][1]}.{t[2]}"], frame.locals[f"{t[1][1]}.{t[2]}#of"] = val, base
                frame.holds = True
        elif k == "sub":
            attr = _literal_str(self.eval(t[2], frame)) if t[1][0] == "attr" and t[1][2] == "__dict__" else None
            if attr is not None:   # self.__dict__["name"] = v sets the attribute (past a __setattr__)
                self.assign(("attr", t[1][1], attr), val, frame)
                return
            base = self.eval(t[1], frame)
            key = self.eval(t[2], frame)
            if t[1][0] == "name" and t[2][0] == "slice" and self._replace_slice(t[1][1], t[2], val, frame):
                return   # args[0:1] = [sys.executable, script]: the list with those items
            if t[1][0] == "name":
                self.store_item(t[1][1], base, key, val, frame)   # a table filled by key (issue 25)
                self._forget_members(t[1][1], frame, kinds=("seq",))   # a list's items change
            elif t[1][0] == "attr":
                self.store_attr_item(t[1], base, key, val, frame)   # self.adapters[prefix] = adapter
            elif t[1][0] == "sub" and subscript_root(t[1])[0] == "name" and not self._store_nested(t, key, val, frame):
                self._forget_nested(subscript_root(t[1])[1], frame)   # d["a"]["b"] = v: inner dicts change
            for a in base.refs():
                if a[0] == "inst" and frame.in_test:   # cache[key] = value in a test: the class's __setitem__
                    self.call_method_of(a, "__setitem__", [key, val], {}, frame)
                if a == ("ext", "os.environ"):
                    kname = env_name(key)
                    if kname is None:
                        self.ctx.env[ANY_VARIABLE] = UNKNOWN_V   # os.environ[key] = v, key computed
                    if kname is not None:
                        self.saved_for_restore(kname, val)
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
        if self.import_time:   # a constant's statement: its import-time reads' users are known by it
            self.constant_bindings.add((frame.path, frame.stmt or frame.line))
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

    def _widen_nonlocals(self, qn: str, frame: Frame) -> None:
        """A nested function that declares ``nonlocal x`` may change ``x`` whenever it is called
        (``start_response`` handed to an app sets ``seen_status``): from its ``def`` on, the
        enclosing ``x`` may also be anything, so no branch or assertion is decided on it."""
        entry = self.p.functions.get(qn)
        if entry is None:
            return
        for st in entry[0]["body"]:
            if st[0] == "nonlocal":
                for name in st[NONLOCAL_NAMES]:
                    if name in frame.locals:
                        frame.locals[name] = frame.locals[name] | UNKNOWN_V

    def _define_function(self, qn: str, frame: Frame, scope: Optional[Dict[str, V]] = None) -> list:
        """Define function ``qn`` in ``frame``: its defaults and the variables it closes over
        (``scope``: a method's are its class's enclosing function's, not the class body's);
        the values of the decorators the caller applies."""
        entry = self.p.functions.get(qn)
        if entry is None:
            return []
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
                elif dexpr[0] == "call" and len(dv.atoms) == 1 and isinstance(o := next(iter(dv.atoms)), Origin) \
                        and from_call(o):   # directory=tempfile.gettempdir()
                    dv = of(Origin("default-argument", expr=f"{name}={o.expr}"[:60], path=frame.path,
                                   line=f["line"], inner=(o,)), is_path=dv.is_path)
                defaults[name] = dv
        self.defaults[qn] = defaults
        if not frame.is_module:
            scope = frame.locals if scope is None else scope
            self.closures[qn] = scope
            self.wlog.append(("def", qn, defaults, scope))   # a memo replay defines it again
        # their values, applied by ``decorated`` (a wrapper's own body runs); a test module's
        # top-level ones are the runner's (fixtures, marks), those in a test's body are applied
        top = bool(frame.is_module or frame.cls and frame.name == frame.cls)
        if top == bool(self.p.in_test.get(mod, False)):
            return []
        return [self.eval(dexpr, frame) for dexpr, _line in f["decorators"]]

    def _define_class(self, qn: str, frame: Frame) -> None:
        entry = self.p.classes.get(qn)
        if entry is None:
            return
        c, mod = entry
        cframe = Frame(module=frame.module, path=frame.path, name=qn, in_test=frame.in_test, cls=qn, step0=self.steps)
        cframe.locals = {}
        saved_stack = self.stack
        self.stack = self.stack + [cframe]
        bound_at: Dict[str, int] = {}   # a class attribute's origin is its own line, not the class's
        # a class made in a function body: its methods see that function's variables
        scope = frame.locals if not (frame.is_module or frame.cls and frame.name == frame.cls) else None
        try:
            for st in c["body"]:
                if st[0] == "assign":
                    bound_at.update((t[1], st[3]) for t in st[1] if t[0] == "name")
                if st[0] in ("def", "class"):
                    if st[0] == "def":
                        decos = self._define_function(st[2], cframe, scope)
                        if decos:
                            self.wrap_method(st[2], decos, cframe)   # issue 25: a wrapper's body runs
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
            attrs.setdefault(k, wrap_constant(v, f"{c['name']}.{k}", frame.path, bound_at.get(k, c["line"])))


_JOINS = 8   # alternatives a `+=` of sequences keeps in full

