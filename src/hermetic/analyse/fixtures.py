"""Fixtures: how a fixture is declared (``FixtureDef``, ``fixture_decorator``) and how one
test's fixtures are found and set up (``FixtureScope``): nearest definition of a name first
(class, module, conftests nearest first, plugins), each fixture once per test, a fixture
overriding one of the same name reaching the one below it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Set

from . import interp as I
from ..catalogue.controls import _FIXTURE_ENVIRONMENT
from ..catalogue.process_state import process_state
from ..summarise.ir import CALL_KWARGS, LIT_VALUE, PARAM_KIND, PARAM_NAME, TAG
from .parametrize import MAX_ROWS, SKIPPED_ROW
from .runs import TestItem
from .state import DELETED
from .tmptree import root_atom
from .values import DOUBLE_V, EMPTY, UNKNOWN_V, Origin, V, lit, of

# a run's row entry (``runs.Rows``): FIXTURE_PARAM + a fixture's qualname -> the param it takes
FIXTURE_PARAM = "\x00fixture-param:"

# pytest sets fixtures up by scope, higher first
SCOPE_RANK = {"session": 0, "package": 1, "module": 2, "class": 3, "function": 4}


# ``FixtureScope.used`` names a builtin fixture it set up as this prefix and its name (only
# those whose teardown restores process state: ``catalogue/process_state.toml``)
BUILTIN_PREFIX = "builtin:"


# the modules of pytest's builtin fixtures: when pytest's own suite is the project, a test's
# `tmp_path` is still the builtin (a new empty folder), not the function that makes it
_BUILT_IN = ("_pytest.",)


@dataclass
class FixtureDef:
    name: str
    qualname: str
    module: str
    autouse: bool
    scope: str
    params: Optional[list]         # the params= expression (IR) or None
    cls: Optional[str] = None


def fixture_decorator(f: dict, mod: str, static_name: Callable[[Any, str], str]) -> Optional[tuple]:
    """``(name or None, autouse, scope, params expression or None)`` of the fixture decorator of
    ``f`` (a summary's function of module ``mod``), or None when it has none. ``static_name``:
    a decorator expression's dotted name through the module's imports (``Runner.static_name``)."""
    for dexpr, _line in f["decorators"]:
        name = static_name(dexpr, mod)
        if name in ("pytest.fixture", "pytest.yield_fixture", "pytest_asyncio.fixture", "_pytest.fixtures.fixture",
                    "fixture") or name.endswith(".fixture"):
            kw = {}
            if dexpr[TAG] == "call":
                kw = {k: v for k, v in dexpr[CALL_KWARGS]}
            fname = kw.get("name")
            fname = fname[LIT_VALUE] if fname and fname[TAG] == "lit" else None
            autouse = kw.get("autouse")
            autouse = bool(autouse and autouse[TAG] == "lit" and autouse[LIT_VALUE] is True)
            scope = kw.get("scope")
            scope = scope[LIT_VALUE] if scope and scope[TAG] == "lit" else "function"
            return fname, autouse, scope, kw.get("params")
    return None


class FixtureScope:
    """Fixture resolution and instantiation for one test (each fixture once).

    ``fixture_defs(module)``: the fixtures a module defines (``Runner.fixture_defs``);
    ``config``: the run's ``Config`` (its ``control_fixtures``); ``chain``: the test's
    conftest modules, rootdir first."""

    def __init__(self, ip: I.Interp, fixture_defs: Callable[[str], Dict[str, List[FixtureDef]]], config,
                 item: TestItem, chain: List[str]):
        self.ip = ip
        self.p = ip.p
        self.config = config
        self.item = item
        self.cache: Dict[str, V] = {}
        self.active: Set[str] = set()
        self.used: Set[str] = set()   # qualnames of the fixtures set up
        self.fixture_params: Dict[str, V] = {}   # qualname -> the param this run gives it (``param_rows``)
        # nearest first: class (and bases), module, conftests (nearest dir first), plugins
        layers: List[List[FixtureDef]] = []
        if item.cls:
            for cq in ip.mro(item.cls):
                cmod = ip.p.classes[cq][1]
                layers.append(fixture_defs(cmod).get(cq, []))
        layers.append(fixture_defs(item.module).get("", []))
        for c in reversed(chain):
            layers.append(fixture_defs(c).get("", []))
        for plugin in self._plugins([item.module] + chain):
            layers.append(fixture_defs(plugin).get("", []))
        self.layers = layers

    def _plugins(self, mods: List[str]) -> List[str]:
        out = []
        for m in mods:
            v = self.ip.globals.get(m, {}).get("pytest_plugins")
            if v is None:
                continue
            names = []
            for a in v.ordered():
                if isinstance(a, Origin):
                    s = I._literal_str(of(a))
                    if s:
                        names.append(s)
                elif a[0] == "seq":
                    for x in a[2]:
                        s = I._literal_str(x)
                        if s:
                            names.append(s)
            for n in names:
                if n in self.p.summaries and n not in out:
                    self.ip.import_module(n)
                    out.append(n)
        return out

    def known_names(self) -> Set[str]:
        return {d.name for layer in self.layers for d in layer}

    def autouse_names(self) -> List[str]:
        seen: Dict[str, FixtureDef] = {}
        order = []
        for layer in reversed(self.layers):
            for d in layer:
                if d.autouse and d.name not in seen:
                    seen[d.name] = d
                    order.append(d.name)
        # pytest: higher scopes first
        return sorted(order, key=lambda n: SCOPE_RANK.get(self.find(n).scope if self.find(n) else "function", 4))

    def find(self, name: str, below: Optional[FixtureDef] = None) -> Optional[FixtureDef]:
        passed = below is None
        for layer in self.layers:
            for d in layer:
                if d.name != name or d.module.startswith(_BUILT_IN):
                    continue   # pytest's own fixtures (its suite analysed as a project) are modelled
                if not passed:
                    if d is below:
                        passed = True
                    continue
                return d
        return None

    def dependencies(self, names: List[str], known: Set[str]) -> List[str]:
        """The fixtures that the fixtures ``names`` request, transitively, in the order pytest's
        closure finds them (each once, none of ``known``)."""
        out: List[str] = []
        queue = list(names)
        seen = set(known)
        while queue:
            d = self.find(queue.pop(0))
            if d is None:
                continue
            f = self.p.functions[d.qualname][0]
            params = f["params"][1:] if d.cls else f["params"]
            for prm in params:
                dep = prm[PARAM_NAME]
                if prm[PARAM_KIND] in ("var", "varkw") or dep in seen or dep in ("request", d.name):
                    continue
                seen.add(dep)
                out.append(dep)
                queue.append(dep)
        return out

    def param_rows(self, requested: List[str], known: Set[str]) -> List[Dict[str, V]]:
        """The runs the fixtures ``requested`` (and those they request, none of ``known``) make
        a test take: one per combination of the ``params`` of those that list a few items
        (pytest runs the test once per param), as row entries ``FIXTURE_PARAM + qualname`` ->
        that param; ``[{}]`` where none does."""
        rows: List[Dict[str, V]] = [{}]
        for name in list(requested) + self.dependencies(list(requested), set(requested) | known):
            d = self.find(name)
            if d is None or d.params is None:
                continue
            pv = self._params(d)
            items = [x for a in pv.ordered() if isinstance(a, tuple) and a[0] == "seq" for x in a[2]
                     if SKIPPED_ROW not in x.atoms]   # a param its marks skip here: no run
            if len(pv.atoms) != 1 or not items or len(rows) * len(items) > MAX_ROWS:
                continue   # not a list read item by item, or too many runs: the params joined
            rows = [{**r, FIXTURE_PARAM + d.qualname: x} for r in rows for x in items]
        return rows

    def _params(self, d: FixtureDef) -> V:
        """The value of fixture ``d``'s ``params`` (evaluated in its module)."""
        mframe = I.Frame(module=d.module, path=self.p.summaries[d.module]["path"], name="<params>", in_test=True)
        mframe.locals = {}
        return self.ip.eval(d.params, mframe)

    def requested(self, usefixtures: List[str], params: list, param_values: Dict[str, V], n_mock: int = 0) -> List[str]:
        """The fixtures a test requests itself: autouse ones, its ``usefixtures``, and its
        parameters past the first ``n_mock`` (patch decorators' doubles) that parametrize does not give."""
        return list(self.autouse_names()) + list(usefixtures) + [
            prm[PARAM_NAME] for i, prm in enumerate(params) if i >= n_mock and prm[PARAM_NAME] not in param_values]

    def set_up(self, usefixtures: List[str], params: list, n_mock: int, param_values: Dict[str, V]) -> None:
        """Set up the fixtures a test uses before its body runs, in pytest's order: ``usefixtures``
        (its marks' names), ``params`` (its parameters, the first ``n_mock`` of them the doubles
        patch decorators pass), ``param_values`` (those parametrize gives)."""
        # pytest sorts the fixture closure by scope, higher first; within a scope autouse
        # fixtures, then usefixtures, then the test's parameters, in order. A module-scoped
        # fixture the test requests is set up before a function-scoped autouse one.
        def scope_rank(name: str) -> int:
            d = self.find(name)
            return SCOPE_RANK.get(d.scope, 4) if d is not None else 4

        order = [(scope_rank(n), 0, i, n, False) for i, n in enumerate(self.autouse_names())]
        order += [(scope_rank(n), 1, i, n, False) for i, n in enumerate(usefixtures)]
        for i, prm in enumerate(params):
            d = self.find(prm[PARAM_NAME]) if i >= n_mock and prm[PARAM_NAME] not in param_values else None
            if d is not None and SCOPE_RANK.get(d.scope, 4) < 4:
                order.append((SCOPE_RANK[d.scope], 2, i, prm[PARAM_NAME], True))
        # fixtures of a higher scope that the requested ones request in turn join the sort too:
        # a module-scoped fixture behind a usefixtures one is set up before the autouse ones
        requested = self.requested(usefixtures, params, param_values, n_mock)
        deps = self.dependencies(requested, set(requested) | set(param_values))
        order += [(scope_rank(n), 3, i, n, False) for i, n in enumerate(deps) if scope_rank(n) < 4]
        for _r, _g, _i, name, with_params in sorted(order):
            if with_params:
                self.get(name, param_values)
            else:
                self.get(name)

    def get(self, name: str, param_values: Optional[Dict[str, V]] = None, below: Optional[FixtureDef] = None) -> V:
        ip = self.ip
        if below is None and name in self.cache:
            return self.cache[name]
        if param_values and name in param_values:
            return param_values[name]
        d = self.find(name, below)
        if d is None:
            if name in process_state().restoring_fixtures:   # its teardown restores state (HT3xx)
                self.used.add(BUILTIN_PREFIX + name)
            v = self._builtin(name)
            if below is None:
                self.cache[name] = v
            return v
        key = f"{name}@{d.qualname}"
        self.used.add(d.qualname)
        if key in self.active:
            return UNKNOWN_V
        self.active.add(key)
        f, mod = self.p.functions[d.qualname]
        loc: Dict[str, V] = {}
        params = f["params"]
        self_atom = None
        if d.cls and params and params[0][PARAM_KIND] == "pos":
            # a function-scoped fixture method runs bound to the test's own instance (a base
            # class's autouse fixture calling a hook only the test's class defines: keyring's
            # BackendBasicTests.init_backend); another scope gets an instance of its own
            inst = ip.test_instance
            cls = ip.heap.get(inst[1], {}).get("cls") if inst is not None and inst[0] == "inst" else None
            self_atom = inst if d.scope == "function" and cls is not None and d.cls in ip.mro(cls) else \
                ("inst", ip.new_instance(d.cls))
            loc[params[0][PARAM_NAME]] = of(self_atom)
            params = params[1:]
        for prm in params:
            pname, kind = prm[PARAM_NAME], prm[PARAM_KIND]
            if kind in ("var", "varkw"):
                continue
            if pname == "request":
                loc[pname] = of(("fixture", "request"))
            elif pname == name:
                loc[pname] = self.get(pname, None, below=d)
            else:
                loc[pname] = self.get(pname)
        if d.params is not None:
            row = self.fixture_params.get(d.qualname)   # this run's param (``param_rows``), else all joined
            loc["__request_param__"] = row if row is not None else ip._element(self._params(d))
        frame = I.Frame(module=mod, path=self.p.summaries[mod]["path"], name=d.qualname, line=f["line"],
                        in_test=True, cls=d.cls)
        frame.locals = loc
        saved_stack = ip.stack
        ip.stack = [frame]
        ip.ran_code(mod)
        try:
            ip.exec_block(f["body"], frame)
        except RecursionError:
            pass
        finally:
            ip.stack = saved_stack
        if f["generator"]:
            v = frame.yields
            if frame.yield_ctx is not None:
                # the test runs at the yield: inside its `with freeze_time(...)`, patch, ...
                ip.ctx = frame.yield_ctx
        else:
            v = frame.returns
        if not v.atoms:
            v = EMPTY
        if name in (self.config.control_fixtures or []):
            v = of(Origin("test-value", expr=name))
        self.active.discard(key)
        if below is None:
            self.cache[name] = v
        return v

    def _builtin(self, name: str) -> V:
        ip = self.ip
        if name in (self.config.control_fixtures or []):
            return of(Origin("test-value", expr=name))
        if name in ("tmp_path", "tmpdir"):
            return of(root_atom(name), is_path=True)   # a new empty folder (tmptree)
        if name in ("pytester", "testdir"):
            # it changes into its own temporary folder for the test (monkeypatch.chdir) and sets
            # variables (HOME there, PY_COLORS=0, ...: the catalogue's [fixture_environment])
            folder = of(Origin("test-value", expr=f"{name}.path"), is_path=True)
            ip.ctx.cwd = folder
            for key, value in _FIXTURE_ENVIRONMENT.get(name, {}).items():
                if value is False:
                    ip.ctx.env[key] = DELETED
                else:
                    ip.ctx.env[key] = folder if value == "tmp" else lit(str(value), None, None, True)
            return of(Origin("test-value", expr=name))
        if name in ("tmp_path_factory", "tmpdir_factory"):
            return of(("fixture", name))
        if name == "monkeypatch":
            return of(("fixture", "monkeypatch"))
        if name in ("mocker", "module_mocker", "class_mocker", "session_mocker", "package_mocker"):
            return of(("fixture", "mocker"))
        if name == "request":
            return of(("fixture", "request"))
        if name in I._FREEZE_FIXTURES:
            ip.ctx.frozen = True
            return DOUBLE_V
        if name in I._FS_FIXTURES:
            ip.ctx.fs_fake = True
            return DOUBLE_V
        if name in I._SUBPROCESS_FIXTURES:
            ip.ctx.subprocess_fake = True
            return DOUBLE_V
        if name in I._NET_FIXTURES:
            lib = I._NET_FIXTURES[name]
            if lib:
                ip.ctx.net = ip.ctx.net | {lib}
            return DOUBLE_V
        if name in I._BUILTIN_FIXTURES_CONTROLLED:
            return of(Origin("test-value", expr=name))
        return UNKNOWN_V


def fixture_runs(rows: Optional[List[Dict[str, V]]], fx: FixtureScope, usefixtures: List[str], params: list,
                 param_values: Dict[str, V]) -> Optional[List[Dict[str, V]]]:
    """The runs of one test: its ``parametrize`` rows (``parametrize.row_runs``; None: one)
    times the params of the fixtures it uses (``FixtureScope.param_rows``), while there are at
    most ``MAX_ROWS`` (else the rows alone); None where it runs once."""
    runs = rows or [{}]
    requested = fx.requested(usefixtures, params, param_values)   # (a patch's double named as a fixture: rare)
    by_param = fx.param_rows(requested, set(param_values))
    if len(by_param) > 1 and len(runs) * len(by_param) <= MAX_ROWS:
        runs = [{**r, **f} for r in runs for f in by_param]
    return runs if len(runs) > 1 else None
