"""Substitutes a test installs by calling them (contract section 2, rows S1-S6): the calls
``test_control`` recognises (``mock.patch``, ``patch.object``/``patch.dict``/``patch.multiple``,
clock freezers, network mocks, fake file systems), the patchers and context managers they
return being started (``call_meth``, ``_activate``), and ``monkeypatch`` with its undo log.
Which calls count is data (``catalogue/controls.toml``); the fixtures that provide
substitutes are modelled in ``runner``.
"""
from __future__ import annotations

import re
from typing import Optional

from ..catalogue.controls import _FREEZERS, _FS_FAKES, _MOCK_ADAPTERS, _NET_MOCKS, _NET_TRANSPORTS
from ..catalogue.loader import SinkSpec
from . import clickmodel, typermodel
from .contents import is_whole
from .literals import _literal_str, _literal_strs, _pick, truthiness
from .origins import START_CWD
from .tmptree import fresh_root
from .state import ANY_VARIABLE, DELETED, SPREAD, SYS_MODULES, Frame
from .regexes import regex_result
from .values import DOUBLE, DOUBLE_V, EMPTY, INSTANCE, RAISED_V, UNKNOWN_V, Origin, V, lit, of, seq_atom, union


class Controls:
    """``Interp`` methods that install and undo substitutes in ``Interp.ctx``."""

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

    def _owner_having(self, v: V, attr: Optional[str]):
        """Of the classes and modules ``v`` may be, the one that has ``attr`` (patch.object
        raises AttributeError for the others: ``try: from .store import Store / except
        ImportError: Store = placeholder``, requests-cache's backends); None when not one."""
        if attr is None:
            return None
        having = [a for a in v.refs() if a[0] == "cls" and a[1] in self.p.classes and (
            self.find_method(a[1], attr) is not None or self.class_attr(a[1], attr) is not None)
                  or a[0] == "mod" and attr in self.globals.get(a[1], {})]
        return (having[0][0], having[0][1]) if len(having) == 1 else None

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
        value = new if new is not None else double(kwargs, self._site)
        return of(("patcher", "attr", (owner, attr, value, explicit), self._site))

    def _patch_object(self, args, kwargs) -> V:
        if len(args) < 2:
            return of(("patcher", "none", ()))
        attr = _literal_str(args[1])
        owner = self._owner_having(args[0], attr) or self._owner(args[0])
        new = args[2] if len(args) > 2 else kwargs.get("new")
        names = _literal_strs(args[1]) if attr is None else ()
        if owner is not None and names:   # in a loop over known names: each is patched in turn
            return of(("patcher", "multi", tuple((owner, n, new if new is not None else double(kwargs, self._site))
                                                 for n in names), self._site))
        if owner is None or attr is None:
            return of(("patcher", "none", ()))
        return of(("patcher", "attr", (owner, attr, new if new is not None else double(kwargs, self._site),
                                       new is not None),
                   self._site))

    def _patch_dict(self, args, kwargs) -> V:
        if not args:
            return of(("patcher", "none", ()))
        target = args[0]
        is_env = any(a == ("ext", "os.environ") for a in target.refs()) or _literal_str(target) == "os.environ"
        if not is_env and (SYS_MODULES in target.refs() or _literal_str(target) == "sys.modules"):
            # patch.dict(sys.modules, {"dotenv": None}): the entries the code's imports find
            entries = [(SYS_MODULES, k, v) for a in (args[1].refs() if len(args) > 1 else ())
                       if a[0] == "dict" for k, v in a[1] if k is not None]
            return of(("patcher", "multi", tuple(entries), self._site))
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
            self._transport_patched(owner, attr)
            return value
        if kind == "multi":
            for owner, attr, value in payload:
                self.ctx.patches[(owner, attr)] = value
                self.ctx.sites[(owner, attr)] = site
                self._transport_patched(owner, attr)
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
        if kind == "cwd":   # a folder the block runs in: py.path's as_cwd(), contextlib.chdir, click's
            self.ctx.cwd = payload[0] if payload else of(Origin("test-value", expr="isolated_filesystem()"),
                                                         is_path=True)
            return self.ctx.cwd
        return DOUBLE_V

    def _transport_patched(self, owner, attr: str) -> None:
        """A patch of an HTTP library's own transport (``patch.object(HTTPAdapter, "send")``)
        answers every request of that library (catalogue ``net_transports``)."""
        lib = _NET_TRANSPORTS.get(f"{owner[1]}.{attr}") if owner and owner[0] == "ext" else None
        if lib is not None:
            self.ctx.net = self.ctx.net | {lib}

    def call_meth(self, atom, name: str, args, kwargs, frame: Frame, pos) -> V:  # noqa: C901
        t = atom[0]
        if t == "dict":
            if name in ("get", "pop"):
                return _entry_or_default(atom, name, args, frame)
            return _dict_view(atom, name)
        if t == "dictof":   # x.__dict__.copy()
            return of(atom)
        if t == "cls" and name == "__new__":
            return of(("inst", self.new_instance(atom[1])))
        if t == "regex":
            found = regex_result(name, atom[1], args[0], atom[2]) if args else None
            return UNKNOWN_V if found is None else self.match_value(found, frame)
        if t == "handle":
            if name == "isatty" and atom[2:] == ("regular",):
                return lit(False, frame.path, frame.line, frame.in_test)   # a regular file is no terminal
            spec = self.p.catalogue.handle_methods.get(f"{atom[1]}.{name}")
            if spec is not None:
                return self._handle_sink(spec, f"{atom[1]}().{name}", args, kwargs, frame, pos)
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
                if name == "getfixturevalue" and args and (names := _literal_strs(args[0])) and \
                        self.fixture_scope is not None:
                    return union(self.fixture_scope.get(n) for n in names)   # request.getfixturevalue(request.param)
                if name == "addfinalizer" and args and self.in_own_body():
                    # run at teardown, after the test (Runner.run)
                    self.finalizers.append((args[0], frame))
                    return EMPTY
                return UNKNOWN_V
            if fx in ("tmp_path_factory", "tmpdir_factory") and name == "mktemp":
                return fresh_root(self.ctx, fx, True)   # a new folder of the test's
            if fx in ("tmp_path_factory", "tmpdir_factory", "tmp_path", "tmpdir"):
                return of(Origin("test-value", expr=f"{fx}.{name}()"), is_path=True)
            return DOUBLE_V
        if t == "client":
            spec: SinkSpec = atom[2]
            if name == "mount" and len(args) > 1 and spec.lib and any(
                    isinstance(o, Origin) and o.value and _MOCK_ADAPTERS.get(o.value[len(INSTANCE):]) == spec.lib
                    for o in args[1].atoms):
                # a mock adapter mounted (requests-mock's): the test's requests through this
                # library are answered by it (the prefix and the session are not told apart)
                self.ctx.net = self.ctx.net | {spec.lib}
                return EMPTY
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
        if t == "record" and name == "_asdict":
            return of(("dict", tuple((self.heap.get(atom[1]) or {}).get("attrs", {}).items())))
        if t == "record" and name == "_replace":   # a NamedTuple's copy: its fields, some replaced
            h = self.heap.get(atom[1])
            iid = self.new_instance(h["cls"] if h else None)
            spread = SPREAD in kwargs   # fields from a mapping not known: any of them may change
            for field, val in list((h or {}).get("attrs", {}).items()) + list(kwargs.items()):
                if field != SPREAD:
                    self.set_attr(iid, field, UNKNOWN_V if spread and field not in kwargs else val)
            return of(("inst", iid))
        if t == "modglobals" and name == "get" and args:
            # globals().get("_root_" + platform.system(), default): the names the key can be
            names = _literal_strs(args[0])
            if not names:
                return UNKNOWN_V
            g = self.globals.get(atom[1], {})
            default = args[1] if len(args) > 1 else lit(None, frame.path, frame.line, frame.in_test)
            return union(g[n] if n in g else default for n in names)
        if t == "typerapp":   # app.command() / app.callback(): a registering decorator
            return typermodel.registrar(atom, name, args, kwargs) or UNKNOWN_V
        if t == "clirunner":
            if name == "isolated_filesystem":
                # chdir into a fresh temporary folder for the block, restored on exit
                return of(("patcher", "cwd", (), self._site))
            if name == "invoke":
                return clickmodel.invoke(self, atom, args, kwargs, frame, pos)
            return UNKNOWN_V
        if t == "testcase":
            if name in ("enterContext", "enterClassContext", "enterAsyncContext") and args and any(
                    a[0] == "patcher" for a in args[0].refs()):
                return self._start(args[0])   # entered now, exited by the (class) cleanup
            return EMPTY
        if t == "mark":
            return of(atom)
        return UNKNOWN_V

    def _handle_sink(self, spec: SinkSpec, call: str, args, kwargs, frame: Frame, pos) -> V:
        """A file object's method that is an operation of its own (``zf.extractall(path)``)."""
        target = _pick(spec.target, args, kwargs)
        if target is None and spec.cwd_default:
            target = self.working_dir(spec.name.rsplit(".", 1)[-1] + "()", frame.path, pos[0])
        self.record_sink(spec, call, target, frame, pos, write=spec.write)
        return UNKNOWN_V

    def working_dir(self, expr: str, path: str, line: int) -> V:
        """The working directory now: the test's (``monkeypatch.chdir``), else the folder the tests
        start in (``fsmodel.cwd_moved``), as the value of ``expr`` written at ``path:line``."""
        if self.ctx.cwd is not None:
            return self.ctx.cwd.with_path(True)
        return of(Origin("cwd", expr=expr, path=path, line=line, value=START_CWD), is_path=True)

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

    def _set_table_item(self, table: V, key: V, val: Optional[V]) -> None:
        """``monkeypatch.setitem(CONFIG, key, val)`` (``val`` None: ``delitem``) on a dict a module
        binds at import: the module's dict holds the new entry until the test ends (undone with
        the test's writes), so the code that reads it at call time sees the test's value."""
        owner = self._table_owner(table)
        k = _literal_str(key)
        if owner is None or k is None:
            return
        mod, name, held = owner
        (a,) = held.atoms
        entries = tuple((kk, v) for kk, v in a[1] if kk != k)
        if val is not None:
            entries += ((k, val),)
        new = of(("dict", entries))
        self.write_state("gattr", mod, name, new)
        _new, seen = self.table_chain.get((mod, name), (None, frozenset()))
        self.table_chain[(mod, name)] = (new, seen | {table.atoms, held.atoms})

    def _table_owner(self, table: V):
        """``(module, name, value now)`` of the module global that holds dict ``table`` (one
        dict), found through the module-constant origins of its entries (``wrap_constant``);
        None when unsure. Another module's binding of that dict (``from config import CONFIG``)
        still shows it as it was before the test set an entry: the same dict, as long as nothing
        but those entries has been written to the global since (not a new dict bound there)."""
        if len(table.atoms) != 1:
            return None
        (a,) = table.atoms
        if not (isinstance(a, tuple) and a[0] == "dict"):
            return None
        owners = {(o.module, o.expr) for _k, v in a[1] for o in v.origins() if o.kind == "module-constant"}
        if len(owners) != 1:
            return None
        mod, name = owners.pop()
        held = self.globals.get(mod, {}).get(name) if mod else None
        if held is None or len(held.atoms) != 1 or not any(isinstance(h, tuple) and h[0] == "dict" for h in held.atoms):
            return None
        chain = self.table_chain.get((mod, name))
        if held.atoms == table.atoms or chain is not None and chain[0] is held and table.atoms in chain[1]:
            return mod, name, held
        return None

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
                    self._transport_patched(*res)
                return EMPTY
            if len(args) >= 2:
                owner = self._owner(args[0])
                attr = _literal_str(args[1])
                if owner is not None and attr is not None:
                    self._mp_note("patches", (owner, attr))
                    self.ctx.patches[(owner, attr)] = value if value is not None else UNKNOWN_V
                    self.ctx.sites[(owner, attr)] = self._site
                    self._transport_patched(owner, attr)
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
            elif len(args) > 2 and name == "setitem" and SYS_MODULES in args[0].refs() and \
                    (module := _literal_str(args[1])) is not None:
                key = (SYS_MODULES, module)   # the module an import finds (handlers.blocked_import)
                self._mp_note("patches", key)
                self.ctx.patches[key] = args[2]
            elif len(args) > 1:   # delitem's third argument is `raising`
                value = (args[2] if len(args) > 2 else kwargs.get("value", UNKNOWN_V)) if name == "setitem" else None
                self._set_table_item(args[0], args[1], value)
            return EMPTY
        if name == "chdir":
            if args:
                self._mp_note("cwd", None)
                self.ctx.cwd = args[0]
            return EMPTY
        if name == "context":
            return of(("fixture", "monkeypatch"))
        return EMPTY



def _dict_view(atom, name: str) -> V:
    """``d.items()`` / ``.keys()`` / ``.values()`` of a dict whose entries are known, as a list:
    of exactly those entries where the dict is known whole (``contents.WHOLE``)."""
    items = []
    for k, v in atom[1]:
        key = lit(k, None, None, False) if k is not None else UNKNOWN_V
        items.append(key if name == "keys" else v if name == "values" else of(("seq", "tuple", (key, v))))
    return of(seq_atom("list", items, exact=is_whole(atom)))


def mock_items(v: V, ctx) -> Optional[V]:
    """What iterating ``v`` gives when every alternative of it is a plain test double (what a
    ``MagicMock`` call, attribute or item gives) and the test set no attribute on a double
    (``Ctx.doubles_set``): MagicMock's default, no item (its ``__iter__`` gives ``iter([])``,
    ``x in m`` is False): an empty tuple. None otherwise."""
    if ctx.doubles_set or not v.atoms or any(a != DOUBLE for a in v.atoms):
        return None
    return of(seq_atom("tuple", (), exact=True))


def _entry_or_default(atom: tuple, name: str, args, frame: Frame) -> V:
    """``d.get(k, default)`` / ``d.pop(k, default)`` of a known dict at a literal key: its entry
    there; where it has none, the default if the dict is known whole (``contents.WHOLE``), else
    the default or what an entry the analysis cannot name holds (``kwargs.pop("store", Default)``
    of a ``**kwargs`` the call filled). Unknown for a key it cannot read."""
    k = _literal_str(args[0]) if args else None
    if k is None:
        return UNKNOWN_V
    found = [v for key, v in atom[1] if key == k]
    if found:
        return found[-1]
    default = args[1] if len(args) > 1 else lit(None, frame.path, frame.line, frame.in_test) if name == "get" else EMPTY
    return default if is_whole(atom) else default | UNKNOWN_V


def double(kwargs, site: Optional[tuple] = None) -> V:
    """A test double; called, it returns its ``return_value`` when one is given
    (``patch("m.is_installed", return_value=False)``, ``Mock(return_value=1816)``), raises
    when its ``side_effect`` is an exception class (``side_effect=IOError``), and is its
    ``side_effect`` when that is a function of the project or test (a call gives what it gives).

    One made at ``site`` (``(path, pos)``) with no side effect and wrapping nothing is
    ``("double", returns, site)``: a call of it raises nothing until the test gives it one
    (``m.side_effect = E``, ``m.configure_mock(side_effect=E)``: ``Ctx.raising``, ``quiet_double``)."""
    effect = kwargs.get("side_effect")
    if effect is not None and _exception_classes(effect):
        return of(("double", RAISED_V))
    if effect is not None and effect.atoms and all(isinstance(a, tuple) and (a[0] == "lambda" or a[0] == "func")
                                                   for a in effect.atoms):
        return effect   # side_effect=lambda x: x: a call gives what the function gives (invoke's expanduser)
    ret = kwargs.get("return_value")
    if site is not None and not any("side_effect" in k or k == "wraps" for k in kwargs):
        return of(("double", DOUBLE_V if ret is None else ret, site))
    return DOUBLE_V if ret is None else of(("double", ret))


def quiet_double(a, raising: frozenset) -> bool:
    """Atom ``a`` is a test double whose call raises nothing: made with no side effect, and given
    none since (``raising``: ``Ctx.raising``)."""
    return (isinstance(a, tuple) and a[0] == "double" and len(a) > 2 and a[2] not in raising
            and ANY_VARIABLE not in raising)


def side_effect_given(base: V, raising: frozenset) -> frozenset:
    """``raising`` after ``base.side_effect = ...``: the doubles of ``base`` may raise from now on
    (all of them when one has no site)."""
    sites = set()
    for a in base.atoms:
        if isinstance(a, tuple) and a[0] == "double":
            sites.add(a[2] if len(a) > 2 else ANY_VARIABLE)
    return raising | sites if sites else raising


_EXCEPTION_NAME = re.compile(r"(Error|Exception|Exit|Interrupt|Timeout)$")


def _exception_classes(v: V) -> bool:
    """Every alternative of ``v`` is a class named as an exception (``OSError``,
    ``requests.exceptions.ConnectionError``, a project's ``RepositoryNotFound`` is not)."""
    return bool(v.atoms) and all(isinstance(a, tuple) and a[0] in ("ext", "cls") and isinstance(a[1], str)
                                 and _EXCEPTION_NAME.search(a[1].rpartition(".")[2]) for a in v.atoms)
