"""Calls: a call expression's arguments, what it calls (a project function, a lambda, a
class, a method, a test double), binding arguments to parameters, and calls into code outside
the project (value flow, sinks, substitutes). ``call_function`` itself, with the budgets, is in
``interp``.
"""
from __future__ import annotations

from typing import Dict, List, Optional

from ..catalogue.controls import _DOUBLE_CTORS
from . import argparsemodel, clickmodel, typermodel
from .controls import double, side_effect_given
from .decide import constructs, values
from .regexes import regex_result
from .expected import callable_form, note_raise
from .handlers import (EXCEPTIONS, effects_given, exception_instance, instance_classes, raising_double, returned,
                       watch_entry)
from .libvalues import value_call
from .parametrize import param_row
from .literals import (_BUILTIN_NAMES, _CONTAINER_METHODS, _any_literal_tilde, _canonical, dotted_qualname, _expr_text, _literal_str, _literal_strs, _pick,
                       is_none, truthiness)
from .origins import (in_temp_folder, _CWD_FUNCS, _HOME_FUNCS, _HOME_PREFIXES, _whole_join,
                      _PATH_CTORS, _TEMP_FUNCS, _head, joined_path)
from .state import ANY_VARIABLE, DELETED, SPREAD, Frame, WrittenArgs
from .tmptree import fresh_root, handed as tmp_handed, joined as tmp_joined
from .values import (DOUBLE, DOUBLE_V, EMPTY, EXISTING, INSTANCE, MACHINE_DATA_V, RAISED, UNKNOWN_V, WHOLE, Origin, V,
                     from_machine, instance_class, lit, of, is_exact, seq_atom, union)


# builtins that never change a list they are handed (``len(found)``, ``for x in sorted(found)``)
_PURE_BUILTINS = frozenset("builtins." + n for n in (
    "len", "list", "tuple", "set", "frozenset", "sorted", "reversed", "iter", "enumerate", "zip", "any", "all", "sum",
    "min", "max", "print", "str", "repr", "bool", "isinstance", "id", "hash", "type", "map", "filter", "dict"))
_WRAPS = "functools.wraps()"   # what functools.wraps(f) gives: the decorated function back
# six's dict helpers, each the dict method it stands for on Python 3
_SIX_VIEWS = {f"six.{p}{m}": m for p in ("iter", "view") for m in ("items", "keys", "values")}


class Calls:
    """``Interp`` methods that evaluate and dispatch calls."""

    # ------------------------------------------------------------------ calls
    def eval_call(self, e, frame: Frame) -> V:
        _, fexpr, aexprs, kwexprs, pos = e
        frame.line = pos[0]
        callee = self.eval(fexpr, frame)
        if self.p.guard_function and any(isinstance(a, tuple) and a[0] == "func" and dotted_qualname(a[1]) ==
                                         self.p.guard_function for a in callee.atoms):
            self._mark("guard")   # section 5: the guard and the arguments evaluated for it are not reported
            return EMPTY
        args: List[V] = []
        star = False
        written = True   # no part spread from a value the analysis does not know by its items
        for a in aexprs:
            if a[0] == "star":
                star = True
                inner = self.eval(a[1], frame)
                written = written and len(inner.atoms) == 1 and is_exact(next(iter(inner.atoms)))
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
                for x in v.ordered():
                    if isinstance(x, tuple) and x[0] == "dict":
                        for dk, dv in x[1]:
                            if dk is not None:
                                kwargs[dk] = dv
                            else:
                                kwargs[SPREAD] = UNKNOWN_V
                    else:   # keywords the analysis cannot list: a **kwargs parameter may hold any key
                        kwargs[SPREAD] = UNKNOWN_V
                continue
            kwargs[kname] = v
        args = WrittenArgs(args) if written else args
        if self.ctx.sites:   # print(msg, file=stdout): a missed standard object handed to a call is used
            for v in list(args) + list(kwargs.values()):
                self.used_missed(v)
        if not frame.is_module and not all(a[0] == "ext" and a[1] in _PURE_BUILTINS for a in callee.refs()):
            for a in list(aexprs) + [k for _n, k in kwexprs]:
                if a[0] == "name":
                    self.maybe_filled(a[1], frame)   # collect(found): the callee may append to it
        self._site = (frame.path, tuple(pos))
        if (fexpr[0] == "attr" and fexpr[2] == "pop" and fexpr[1][0] == "name" and len(args) == 1 and not kwargs
                and not frame.in_test and self._missing_key(fexpr[1], self.lookup(fexpr[1][1], frame), args[0], frame)):
            self.call_raised = True   # d.pop(key) without a default, on a dict that lacks it: KeyError
            return EMPTY
        if fexpr[0] == "attr" and fexpr[2] == "update" and fexpr[1][0] == "attr" and fexpr[1][2] == "__dict__":
            self._dict_update(fexpr[1][1], args, kwargs, frame)   # Bunch(**kw): self.__dict__.update(kw)
        if fexpr[0] == "attr" and fexpr[2] == "configure_mock":
            self.ctx.doubles_set = True   # its attributes set: not MagicMock's defaults (``mock_items``)
            if any("side_effect" in k for k in kwargs):
                base = self.eval(fexpr[1], frame)
                self.ctx.raising = side_effect_given(base, self.ctx.raising)
                self.ctx.effects = effects_given(base, UNKNOWN_V, self.ctx.effects, False)   # not followed: unknown
        meth, owner = (fexpr[2], fexpr[1]) if fexpr[0] == "attr" else (None, None)
        if meth in ("append", "add", "insert", "extend"):   # what a list or set takes in (Statements)
            if owner[0] == "name":   # a local one
                self.added = (owner[1], meth, args)
            elif owner[0] == "attr" and owner[1][0] == "name":   # ... or one an instance holds (self.jobs)
                self.added = (("attr", owner[1][1], owner[2]), meth, args)
        elif meth is None:
            return self.apply(callee, args, kwargs, frame, pos, fexpr, star)
        elif frame.in_test and (made := callable_form(self, fexpr, callee, args, kwargs, frame, pos)) is not None:
            return made   # pytest.raises(E, f, x): the call of f
        elif meth == "set_defaults" and kwargs:
            argparsemodel.record_defaults(self, kwargs)   # parser.set_defaults(func=handler)
        elif meth == "parse_args" and (ns := argparsemodel.parsed(callee)) is not None:
            return ns
        out = self.apply(callee, args, kwargs, frame, pos, fexpr, star)
        if meth == "pop" and owner[0] == "name" and args:
            self._drop_key(owner[1], args[0], frame)   # changes.pop("id"): no longer in it
        return out

    def apply(self, callee: V, args: List[V], kwargs: Dict[str, V], frame: Frame, pos, fexpr=None,
              star=False) -> V:
        """Call every alternative of ``callee``. When each of them raises (a project function every
        way through which raises with these values), ``call_raised`` is set and nothing is returned;
        a library's raise is not known."""
        if self.expect_hit:   # unwinding to the test's `with pytest.raises(E)`: nothing more runs
            return EMPTY
        if self.try_watch is not None:
            self.try_watch.append(watch_entry(callee, self.ctx.raising, self.ctx.effects))
        before = self.call_raised
        out = EMPTY
        resolved = False
        all_raise = None
        # a call of one of several callables (a name bound on two ways of an undecided `if`):
        # what each runs is reached on a way the values do not decide (medium confidence)
        several = len({a[:2] for a in callee.atoms if isinstance(a, tuple) and a[0] in ("func", "cls", "ext")}) > 1
        for a in callee.ordered():
            if isinstance(a, Origin):
                continue
            self.call_raised = False
            self.undecided += several
            try:
                r = self._apply_one(a, args, kwargs, frame, pos, fexpr, star)
            finally:
                self.undecided -= several
            resolved = r is not None
            if r is None:
                continue
            if a[0] == "ext":
                # in a test's or a module's own code, not under a branch the values decided: those
                # may be misread there (as a test's assert), the platform's are not
                raised = a[1] in self.p.catalogue.raises and (_module_skip(a[1], kwargs, frame) or not (
                    frame.decided and (frame.in_test or not self._may_raise(frame)))) or RAISED in r.atoms
                self.exits = self.exits or raised
            else:
                raised = self.call_raised or RAISED in r.atoms
            all_raise = raised if all_raise is None else all_raise and raised
            out = out | r.without(RAISED)
        self.call_raised = before or bool(all_raise)
        if not resolved:
            if not self.sweep and not self.builtin_call(fexpr, frame):
                self.note_unresolved((frame.path, pos[0], pos[1]), _expr_text(fexpr))
            tmp_handed(self.ctx, args, kwargs, "." + fexpr[2] if fexpr and fexpr[0] == "attr" else "")
            return UNKNOWN_V
        if all_raise:
            return EMPTY
        return out if out.atoms else EMPTY

    def _apply_one(self, a: tuple, args: List[V], kwargs: Dict[str, V], frame: Frame, pos, fexpr,
                   star) -> Optional[V]:  # noqa: C901 - one dispatch over callable kinds
        """Call one callable atom; None when it is nothing the analysis calls."""
        t = a[0]
        if t in ("func", "cls", "ext") and args and a[1] in self.p.catalogue.lazy:
            return self.lazy_value(a[1], args, frame, pos)
        if t == "func":
            return self.call_function(a[1], args, kwargs, frame, self_atom=a[2])
        if t == "lazyfn":   # gettext_lazy("x"): a proxy, computed when used, never while modules import
            return UNKNOWN_V if self.import_time else self.apply(of(a[1]), args, kwargs, frame, pos)
        if t == "cls":
            return self.instantiate(a[1], args, kwargs, frame)
        if t == "ext":
            return self.call_external(a[1], args, kwargs, frame, pos)
        if a == DOUBLE:
            return DOUBLE_V
        if t == "double":
            return returned(a, self.ctx.returns)   # a double with a return_value
        if t == "meth":
            return self.call_meth(a[1], a[2], args, kwargs, frame, pos)
        if t == "dmeth":
            if (h := argparsemodel.handler(self, a)) is not None:   # args.func(args): which one is not read
                self.undecided += 1
                try:
                    return self.apply(h, args, kwargs, frame, pos)
                finally:
                    self.undecided -= 1
            return self.call_data_method(a[1], a[2], args, kwargs, frame, pos)
        if t == "missed":
            self.missed_depth += 1
            try:
                return self.apply(of(a[1]), args, kwargs, frame, pos, fexpr, star)
            finally:
                self.missed_depth -= 1
        if t == "partial":
            if len(a) > 4 and a[4]:
                # a clock function captured at import: HT204 at the capture, HT205 at a freeze
                if isinstance(a[4], tuple):
                    self.consumed.append(a[4])
                if self.ctx.frozen:
                    self._add_miss(("freeze",), ("the clock",
                                                 f"a function captured at import ({_expr_text(fexpr)})", "captured"))
                return of(Origin("clock", expr="captured", path=frame.path, line=pos[0], value="import"))
            return self.apply(a[1], list(a[2]) + args, {**dict(a[3]), **kwargs}, frame, pos)
        if t == "lambda":
            return self.call_lambda(a[1], args, frame)
        if t == "record-class":
            return self.make_record(args, kwargs)   # a namedtuple class made at run time, called
        if t == "super":
            return UNKNOWN_V
        if t == "inst" and self.callable_instance(a):
            return self.call_method_of(a, "__call__", args, kwargs, frame)   # Middleware()(environ)
        return None

    def builtin_call(self, fexpr, frame: Frame) -> bool:
        """Whether the call the analysis did not follow is of a builtin (``TypeError(...)``, a
        name no module or function binds) or a builtin container's method (``rv.append`` on a
        list): no I/O hides there, so it is not an unresolved call (contract section 8)."""
        if not fexpr:
            return False
        if fexpr[0] == "name":
            name = fexpr[1]
            return (name in _BUILTIN_NAMES and name not in frame.locals
                    and name not in self.globals.get(frame.module, {})
                    and name not in self.closures.get(frame.name, {}))
        if fexpr[0] == "attr" and fexpr[2] in _CONTAINER_METHODS and (
                fexpr[1][0] == "name" or fexpr[1][0] == "attr" and fexpr[1][1][0] == "name"):
            # a name's lookup (or an attribute of one: self.jobs) has no effect to repeat
            base = self.lookup(fexpr[1][1], frame) if fexpr[1][0] == "name" else self.eval(fexpr[1], frame)
            return bool(base.atoms) and all(isinstance(a, tuple) and a[0] in ("seq", "dict") for a in base.atoms)
        return False

    def lazy_value(self, name: str, args: List[V], frame: Frame, pos) -> V:
        """A lazy proxy (catalogue ``[lazy]``) as the value it stands for: what calling its first
        argument returns ("result"), or that argument itself ("function")."""
        if self.p.catalogue.lazy[name] == "function":
            return V(frozenset(("lazyfn", a) if isinstance(a, tuple) else a for a in args[0].atoms), args[0].is_path)
        return self.apply(args[0], [], {}, frame, pos)

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
        written = isinstance(args, WrittenArgs) and not f["decorators"]   # (mock.patch adds one)
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
                        self._consume(defaults[name], functions=False)   # a clock function: at its calls
                    self._stale_default(qn, name, defaults[name])
                    if self.ctx.sites:
                        loc[name] = self._check_miss(defaults[name], "", name,
                                                     f"the default argument {name} of {dotted_qualname(qn)}")
                else:
                    loc[name] = UNKNOWN_V
            elif kind == "var":
                # exact for the arguments a call wrote (or spread from a tuple known by its items),
                # not for the HT201 sweep's none, which stand for any caller
                loc[name] = of(seq_atom("tuple", args[pos_i:], exact=written and not self.sweep))
                pos_i = len(args)
            elif kind == "kw":
                if name in rest_kw:
                    loc[name] = rest_kw.pop(name)
                elif name in defaults:
                    loc[name] = defaults[name]
                else:
                    loc[name] = UNKNOWN_V
            elif kind == "varkw":
                spread = rest_kw.pop(SPREAD, None)
                entries = tuple(sorted(rest_kw.items(), key=lambda kv: kv[0]))
                if spread is None and written and not self.sweep:
                    # the keywords the call wrote, and no others: a missing key's get() is its default
                    loc[name] = of(("dict", entries, WHOLE))
                else:
                    loc[name] = of(("dict", entries + (((None, spread),) if spread is not None else ())))
        return loc

    def _stale_default(self, qn: str, name: str, v: V) -> None:
        """A default evaluated at import holds a clock value; a freeze cannot reach it (HT205)."""
        if not self.ctx.frozen or self.import_time:
            return
        if any(o.kind == "clock" and o.value == "import" for o in v.origins()):
            self._add_miss(("freeze",), ("the clock", f"the default argument {name} of {dotted_qualname(qn)}",
                                         "default"))

    # ------------------------------------------------------------------ externals
    def call_external(self, d: str, args: List[V], kwargs: Dict[str, V], frame: Frame, pos) -> V:  # noqa: C901
        d = _canonical(d)
        if d == "warnings.warn" and (self.expecting or self.expecting_many):
            # a test expecting the warning as an exception passes only where warnings are errors
            category = args[1] if len(args) > 1 else kwargs.get("category")
            if category is not None and note_raise(self, category, frame):
                return EMPTY
        if d in _ENV_LOADERS:
            self.ctx.env[ANY_VARIABLE] = UNKNOWN_V   # sets the variables its file names
        spec = self.p.catalogue.lookup(d)
        if spec is not None and not (d in _TEMP_FUNCS and in_temp_folder(_pick(spec.target, args, kwargs))):
            made = self.sink_call(spec, d, args, kwargs, frame, pos)
            if d in self.p.catalogue.handed:   # a process's target= runs too (in the child)
                self.call_handed(self.p.catalogue.handed[d], args, kwargs, frame, pos)
            if d not in _TEMP_FUNCS:   # a temporary made in the folder dir= names: a write there
                return made
        invoke = self.p.catalogue.invokes.get(d)
        if invoke is not None:
            self.invoke_argument(invoke, args, kwargs, frame, pos)
            return UNKNOWN_V
        if d in self.p.catalogue.handed:   # map(run, parts): run runs (catalogue [handed])
            return self.call_handed(self.p.catalogue.handed[d], args, kwargs, frame, pos)
        if d in self.p.catalogue.parses and args and from_machine(args[0], handles=True):
            return MACHINE_DATA_V   # the user's configuration: what it holds is theirs
        shipped = self.p.catalogue.existing.get(d)
        if shipped:
            # a library's own data file: unknown where, but it exists (catalogue [existing])
            return of(Origin("unknown", expr=d.rsplit(".", 1)[-1] + "()", value=EXISTING + shipped))
        if d in _PATH_CTORS:
            if not args:
                return of(Origin("cwd", expr="Path()", path=frame.path, line=frame.line), is_path=True)
            whole = None if d == "py.path.local" else tmp_joined(args, True) or _whole_join(args, True)
            return (whole or joined_path(args)).with_path(True)
        flowed = value_call(self, d, args, kwargs, frame)
        if flowed is not None:   # a container made, copied or parsed; a path joined, split, made absolute
            return flowed
        if d in _HOME_FUNCS or d.startswith(_HOME_PREFIXES):
            if d == "os.path.expanduser" and args:
                s = _literal_str(args[0], prefix=True)
                if s is not None and not s.startswith("~"):
                    return args[0]
                if s is None:
                    return args[0] if not _any_literal_tilde(args[0]) else self._home(frame, d)
            return self._home(frame, d)
        if d in _CWD_FUNCS:
            return self.working_dir(d.split(".")[-1] + "()", frame.path, frame.line)
        if d == "logging.getLogger":   # a logger, process-wide (HT304 reads its changes and resets)
            name = args[0] if args else kwargs.get("name")
            return of(("ext", "logging.root" if name is None or is_none(name) else "logging.getLogger()"))
        if d == "tempfile.mkdtemp":
            return fresh_root(self.ctx, d, False)   # a new folder of the test's
        if d in _TEMP_FUNCS:
            return of(Origin("test-value", expr=d), is_path=False)
        if d == "tempfile.gettempdir":
            return of(Origin("literal", expr="tempfile.gettempdir()", path=frame.path, line=frame.line, value="/tmp",
                             in_test=frame.in_test))
        if d in self.p.catalogue.records:
            return self.make_record(args, kwargs) if d not in _RECORD_CLASSES else of(("record-class",))
        if d in _DOUBLE_CTORS or d.startswith("unittest.mock.") and d.split(".")[-1][:1].isupper():
            site = (frame.path, tuple(pos) if pos else (frame.line,))
            if any("." in k or k in ("spec_set", "wraps") for k in kwargs):
                self.ctx.doubles_set = True   # MagicMock(**{"keys.return_value": [...]}): attributes set
            effect = kwargs.get("side_effect")
            if effect is not None and instance_classes(self, effect) is not None:
                return raising_double(self, kwargs, site)   # Mock(side_effect=exc): raises the test's exc
            return double(kwargs, site)
        if d in ("functools.partial", "functools.partialmethod") and args:
            captured = self.import_time and self._is_clock_fn(args[0])
            if captured:
                self.record_clock(_canonical(self._clock_name(args[0])), frame, pos, capture=True)
                captured = (frame.path, pos[0])
            return of(("partial", args[0], tuple(args[1:]), tuple(sorted(kwargs.items(), key=lambda kv: kv[0])),
                       captured))
        if d == "pytest.importorskip" and args and (name := _literal_str(args[0])) is not None:
            return self._import_value(name)   # the module itself (imported: its top level runs)
        if d in _SIX_VIEWS and len(args) == 1 and not kwargs:   # six.iteritems(d) is d.items()
            return self.apply(self.eval_attr(args[0], _SIX_VIEWS[d], frame), [], {}, frame, pos)
        if d == "functools.wraps":   # a decorator giving back what it decorates: never calls `wrapped`
            return of(("ext", _WRAPS))
        if d in (_WRAPS, "functools.lru_cache", "functools.cache", "contextlib.contextmanager",
                 "builtins.staticmethod", "builtins.classmethod", "builtins.property"):
            return args[0] if args else UNKNOWN_V
        if d == "builtins.globals" and not args:
            return of(("modglobals", frame.module))   # the module's namespace (its get() is followed)
        if d == "builtins.getattr" and len(args) >= 2:
            name = _literal_str(args[1])
            if name is None:
                # several known names (a parametrize list, a loop over names): each is followed
                names = _literal_strs(args[1])
                return union(self.eval_attr(args[0], n, frame) for n in names) if names else UNKNOWN_V
            return self.eval_attr(args[0], name, frame)
        if d in ("builtins.setattr", "builtins.object.__setattr__") and len(args) == 3 and not kwargs:
            self._setattr(args[0], _literal_str(args[1]), args[2])   # invoke's Config._set
            return lit(None, frame.path, frame.line, frame.in_test)
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
        if d == "builtins.isinstance" and len(args) == 2:
            r = self.decide_isinstance(args[0], args[1])
            return EMPTY if r is None else lit(r, frame.path, frame.line, frame.in_test)
        if d == "builtins.callable" and len(args) == 1:
            r = self.decide_callable(args[0])
            return EMPTY if r is None else lit(r, frame.path, frame.line, frame.in_test)
        if d in ("typing.cast", "typing_extensions.cast") and len(args) == 2:
            return args[1]   # cast(Config, FakeConfig(tmp_path)) is the FakeConfig
        if d == "re.compile" and args:
            return of(("regex", args[0], args[1] if len(args) > 1 else kwargs.get("flags", lit(0, None, None, False))))
        if d in ("re.match", "re.search", "re.fullmatch") and len(args) >= 2:
            found = regex_result(d[3:], args[0], args[1], args[2] if len(args) > 2 else kwargs.get("flags"))
            return UNKNOWN_V if found is None else self.match_value(found, frame)
        if d == "builtins.bool" and len(args) == 1:
            t = truthiness(args[0], self.inst_truth)
            return EMPTY if t is None else lit(t, frame.path, frame.line, frame.in_test)
        if d == "platform.system" and not args:
            return self.platform_value(self.p.platform["platform.system()"], frame)
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
            elif key is None:
                self.ctx.env[ANY_VARIABLE] = UNKNOWN_V
            return EMPTY
        if d == "os.environ.update":
            for a in (args[0].atoms if args else ()):
                if isinstance(a, tuple) and a[0] == "dict":
                    for k2, v2 in a[1]:
                        if k2 is not None:
                            self.ctx.env[k2] = v2
                        else:
                            self.ctx.env[ANY_VARIABLE] = UNKNOWN_V
                else:
                    self.ctx.env[ANY_VARIABLE] = UNKNOWN_V   # variables the analysis cannot name
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
        if d == "contextlib.chdir" and args:
            return of(("patcher", "cwd", (args[0],)))   # the with block runs in that folder
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
            return of(clickmodel.runner(kwargs))
        if d == typermodel.APP:
            return typermodel.app(frame)
        if d == "sys.executable":
            return lit("<python>", frame.path, frame.line, frame.in_test)
        if d in _STD_STREAMS_ISATTY and self.captured and not self.import_time:
            # pytest's capture puts its own files in place of the standard streams for each test
            return lit(False, frame.path, frame.line, frame.in_test)
        ctl = self.test_control(d, args, kwargs, frame)
        if ctl is not None:
            return ctl
        if d.startswith("pytest.mark."):
            return of(("mark", d[len("pytest.mark."):], tuple(args), tuple(sorted(kwargs.items(), key=lambda kv: kv[0]))))
        if d in ("pytest.param",):
            return param_row(args, kwargs)   # a row its marks skip here: left out (``parametrize``)
        if d in self.p.catalogue.stream_wrappers and args and args[0].atoms and all(
                instance_class(a) is not None or isinstance(a, tuple) and a[0] == "handle" for a in args[0].atoms):
            return args[0]   # TextIOWrapper(BytesIO()): answers as the stream it wraps (catalogue)
        if d == "builtins.object" and not args and not kwargs and frame.is_module:
            # MISSING = object() at a module's top level: one object, made once (a sentinel)
            return of(Origin("unknown", expr="object()", path=frame.path, line=frame.line, value=INSTANCE + d))
        if frame.in_test and not self.import_time and d in EXCEPTIONS:
            return exception_instance(self, d, args)   # one the test can set attributes on
        tmp_handed(self.ctx, args, kwargs, d)   # a library call may make files in what it is given
        if constructs(d):
            # an instance of a library class: not None, whatever else it is
            return of(Origin("unknown", expr=d.rsplit(".", 1)[-1] + "()", value=INSTANCE + d))
        return UNKNOWN_V

    def _setattr(self, target: V, name: Optional[str], val: V) -> None:
        """``setattr(obj, "name", val)`` / ``object.__setattr__(self, key, val)``: as
        ``obj.name = val`` on the project's instances, classes and modules (a name not known sets
        nothing the analysis follows)."""
        if name is None:
            return
        for a in target.refs():
            if a[0] == "inst":
                self.set_attr(a[1], name, val)
            elif a[0] == "cls" and a[1] in self.p.classes:
                self.write_state("cattr", a[1], name, val)
            elif a[0] == "mod" and a[1] in self.globals:
                self.write_state("gattr", a[1], name, val)

    def invoke_argument(self, invoke, args: List[V], kwargs: Dict[str, V], frame: Frame, pos) -> None:
        """A library call that calls one of its arguments (a WSGI/ASGI test client calls the app
        it is handed): the argument is called, with ``invoke.nargs`` arguments of unknown value.
        Called where the client is built: the analysis does not follow the client object."""
        app = _pick(invoke.target, args, kwargs)
        if app is None:
            return
        callee = V(frozenset(app.refs()))
        if callee.atoms:
            self.apply(callee, [UNKNOWN_V] * invoke.nargs, {}, frame, pos)

    def _home(self, frame: Frame, d: str) -> V:
        home = self.ctx.env.get("HOME")
        if home is not None and home is not DELETED:
            return home.with_path(True)
        return of(Origin("home", expr=d.split(".")[-1] + "()", path=frame.path, line=frame.line), is_path=True)

    def _dict_update(self, owner, args, kwargs, frame) -> None:
        """``obj.__dict__.update(mapping, **kw)``: each entry the analysis can name sets that
        attribute of ``obj`` (an attribute bag: celery's ``Bunch(open=...)``)."""
        entries = [(k, v) for k, v in kwargs.items() if k != SPREAD]
        if len(args) == 1 and len(args[0].atoms) == 1:
            (a,) = args[0].atoms
            if isinstance(a, tuple) and a[0] == "dict":
                entries = [(k, v) for k, v in a[1] if k is not None] + entries
        for k, v in entries:
            if k.isidentifier():
                self.assign(("attr", owner, k), v, frame)


def _module_skip(name: str, kwargs: Dict[str, V], frame: Frame) -> bool:
    """``pytest.skip(..., allow_module_level=True)`` at a test module's top: trusted under a branch
    the values decide, which there tests the machine (``if not platform.is_darwin():``, a helper
    watchdog's darwin-only modules call), not a test's own values that may be misread."""
    return frame.is_module and frame.in_test and name in ("pytest.skip", "_pytest.outcomes.skip") and \
        values(kwargs.get("allow_module_level", EMPTY)) == [True]


# a standard stream's isatty(): False in a test while pytest captures its output (the default)
_STD_STREAMS_ISATTY = {f"sys.{s}.isatty" for s in ("stdout", "stderr", "stdin", "__stdout__", "__stderr__")}

# library calls (catalogue [records]) that make a class of records rather than a record
_RECORD_CLASSES = {"collections.namedtuple", "typing.NamedTuple"}

# library calls that set environment variables named in a file (python-dotenv)
_ENV_LOADERS = {"dotenv.load_dotenv", "dotenv.main.load_dotenv"}

