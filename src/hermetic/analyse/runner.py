"""Tests and fixtures, found in summaries, and run through the interpreter as pytest would.

For each test: import-time code of its module and conftest chain (once, at collection),
xunit/unittest set-up, fixtures in pytest's order (autouse first, dependencies before
dependants, nearest definition of a name wins), decorators' substitutes, then the body.
"""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath
from typing import Dict, List, Optional, Set

from . import interp as I
from .values import DOUBLE_V, EMPTY, UNKNOWN_V, Origin, V, of, union


@dataclass
class FixtureDef:
    name: str
    qualname: str
    module: str
    autouse: bool
    scope: str
    params: Optional[list]         # the params= expression (IR) or None
    cls: Optional[str] = None


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


def sweep_roots_in(program: I.Program, modules: Set[str]) -> List[str]:
    """The HT201 sweep's roots among ``modules``: their project (not test-tree) functions, but
    those defined inside functions, by qualified name."""
    functions, in_test = program.functions, program.in_test
    return [qn for qn in sorted(functions)
            if ".<locals>." not in qn and functions[qn][1] in modules and not in_test.get(functions[qn][1], False)]


class Runner:
    def __init__(self, interp: I.Interp, files, pytest_cfg, config):
        self.ip = interp
        self.p = interp.p
        # module -> the project modules its import statements name (``check._import_closure``)
        self.import_successors: Dict[str, tuple] = {}
        self.files = files                     # module -> SourceFile
        self.pytest_cfg = pytest_cfg
        self.config = config
        self.static_imports: Dict[str, Dict[str, str]] = {}
        self.fixtures_by_module: Dict[str, Dict[str, List[FixtureDef]]] = {}
        self.conftests_by_dir: Dict[str, str] = {}
        self.fixture_users: Dict[str, Set[str]] = {}   # fixture qualname -> node ids that use it (record())
        self.swept_modules: Set[str] = set()   # the modules whose functions the sweep last ran (sweep_roots)
        self.swept_globals: Dict[str, Set[str]] = {}   # their global names then (reuse.settled)
        self._decorators: Dict[tuple, List[tuple]] = {}   # (module, id of the expression) -> its references
        for mod, sf in files.items():
            if sf.is_conftest:
                self.conftests_by_dir[str(PurePosixPath(sf.rel).parent)] = sf.module

    # ------------------------------------------------------------------ static helpers
    def imports_of(self, mod: str) -> Dict[str, str]:
        if mod in self.static_imports:
            return self.static_imports[mod]
        out: Dict[str, str] = {}
        s = self.p.summaries.get(mod)

        def walk(stmts):
            for st in stmts:
                if st[0] == "import":
                    for local, full, has_as in st[1]:
                        out[local] = full if has_as else full.split(".")[0]
                elif st[0] == "from":
                    for local, attr in st[2]:
                        if local != "*":
                            out[local] = f"{st[1]}.{attr}"
                elif st[0] in ("if", "try"):
                    walk(st[2] if st[0] == "if" else st[1])
                    if st[0] == "if":
                        walk(st[3])
                    else:
                        for _n, body in st[2]:
                            walk(body)

        if s is not None:
            walk(s["body"])
        self.static_imports[mod] = out
        return out

    def static_name(self, expr, mod: str) -> str:
        """Dotted name of a decorator-like expression, through the module's imports."""
        name = I._decorator_name(expr)
        if not name:
            return ""
        head, _, rest = name.partition(".")
        full = self.imports_of(mod).get(head)
        if full:
            return f"{full}.{rest}" if rest else full
        return name

    def fixture_defs(self, mod: str) -> Dict[str, List[FixtureDef]]:
        """Fixtures defined in a module: module-level ones, and per class (key: class qualname)."""
        if mod in self.fixtures_by_module:
            return self.fixtures_by_module[mod]
        out: Dict[str, List[FixtureDef]] = {}
        s = self.p.summaries.get(mod)
        if s is not None:
            for qn, f in s["functions"].items():
                if ".<locals>." in qn:
                    continue
                fx = self._fixture_decorator(f, mod)
                if fx is None:
                    continue
                name, autouse, scope, params = fx
                d = FixtureDef(name or f["name"], qn, mod, autouse, scope, params, f.get("class"))
                out.setdefault(d.cls or "", []).append(d)
        self.fixtures_by_module[mod] = out
        return out

    def _fixture_decorator(self, f, mod):
        for dexpr, _line in f["decorators"]:
            name = self.static_name(dexpr, mod)
            if name in ("pytest.fixture", "pytest.yield_fixture", "pytest_asyncio.fixture", "_pytest.fixtures.fixture",
                        "fixture") or name.endswith(".fixture"):
                kw = {}
                if dexpr[0] == "call":
                    kw = {k: v for k, v in dexpr[3]}
                fname = kw.get("name")
                fname = fname[1] if fname and fname[0] == "lit" else None
                autouse = kw.get("autouse")
                autouse = bool(autouse and autouse[0] == "lit" and autouse[1] is True)
                scope = kw.get("scope")
                scope = scope[1] if scope and scope[0] == "lit" else "function"
                return fname, autouse, scope, kw.get("params")
        return None

    # ------------------------------------------------------------------ collection
    def _match(self, name: str, patterns: List[str]) -> bool:
        for p in patterns:
            if any(c in p for c in "*?["):
                if fnmatch.fnmatch(name, p):
                    return True
            elif name.startswith(p):
                return True
        return False

    def collect(self, mod: str, rootdir_rel: str) -> List[TestItem]:
        s = self.p.summaries[mod]
        items: List[TestItem] = []
        fns = s["functions"]
        fixture_qns = {d.qualname for ds in self.fixture_defs(mod).values() for d in ds}
        for st in s["body"]:
            if st[0] == "def":
                f = fns.get(st[2])
                if f and self._match(f["name"], self.pytest_cfg.python_functions) and st[2] not in fixture_qns:
                    items.append(TestItem(f"{rootdir_rel}::{f['name']}", mod, s["path"], st[2], f["name"], None,
                                          f["line"]))
            elif st[0] == "class":
                items.extend(self._collect_class(st[2], mod, rootdir_rel, fixture_qns))
            elif st[0] == "assign":   # `test_x = make_test(...)`: pytest collects the bound function
                for name in _names_bound(st[1]):
                    if not self._match(name, self.pytest_cfg.python_functions):
                        continue
                    refs = list(self.ip.globals.get(mod, {}).get(name, EMPTY).refs())
                    if len(refs) == 1 and refs[0][0] == "func" and refs[0][1] in fns.keys() | self.p.functions.keys():
                        qn = refs[0][1]
                        items.append(TestItem(f"{rootdir_rel}::{name}", mod, s["path"], qn, name, None, st[3]))
        for it in items:   # decorators are evaluated at import: here, not in each test's run
            if it.cls:
                for cq in self.ip.mro(it.cls):
                    cd, cmod = self.p.classes[cq]
                    for dexpr, _l in cd["decorators"]:
                        self._eval_decorator(dexpr, cmod)
            for dexpr, _l in self.p.functions[it.qualname][0]["decorators"]:
                self._eval_decorator(dexpr, it.module)
        return items

    def _collect_class(self, qn: str, mod: str, rootdir_rel: str, fixture_qns) -> List[TestItem]:
        c, _ = self.p.classes[qn]
        is_unittest = self.ip.is_testcase(qn)
        if not is_unittest:
            if not self._match(c["name"], self.pytest_cfg.python_classes):
                return []
            if self.ip.find_method(qn, "__init__") is not None:
                return []
        items = []
        seen = set()
        for cq in self.ip.mro(qn):
            cd, _ = self.p.classes[cq]
            for mname, mqn in cd["methods"].items():
                if mname in seen:
                    continue
                seen.add(mname)
                ok = mname.startswith("test") if is_unittest else self._match(mname, self.pytest_cfg.python_functions)
                if ok and mqn not in fixture_qns:
                    f, _ = self.p.functions[mqn]
                    items.append(TestItem(f"{rootdir_rel}::{c['name']}::{mname}", mod, self.p.summaries[mod]["path"],
                                          mqn, f"{c['name']}.{mname}", qn, f["line"], unittest=is_unittest))
        items.sort(key=lambda t: (t.def_line, t.node_id))
        return items

    def conftest_chain(self, rel: str) -> List[str]:
        """Conftest modules from the rootdir down to the test file's folder."""
        chain = []
        d = PurePosixPath(rel).parent
        dirs = [d] + list(d.parents)
        for x in reversed(dirs):
            mod = self.conftests_by_dir.get(str(x))
            if mod is not None:
                chain.append(mod)
        return chain

    # ------------------------------------------------------------------ running a test
    def run(self, item: TestItem) -> TestRun:
        ip = self.ip
        start_run(ip)
        ip.ctx = I.Ctx(env=dict(self.p.session_env))
        ip.import_time = False
        chain = self.conftest_chain(self.files[item.module].rel)
        for c in chain:
            ip.import_module(c)
        ip.import_module(item.module)
        test_fn, _ = self.p.functions[item.qualname]
        mframe = I.Frame(module=item.module, path=item.path, name=item.display, in_test=True, line=item.def_line)
        mframe.locals = {}
        ip.stack = []

        # markers and decorator substitutes: class decorators, then the function's own
        deco_atoms = []
        marks = []
        if item.cls:
            for cq in reversed(ip.mro(item.cls)):
                cd, cmod = self.p.classes[cq]
                for dexpr, _l in cd["decorators"]:
                    deco_atoms.extend(self._eval_decorator(dexpr, cmod))
                pm = ip.class_attr(cq, "pytestmark")
                if pm is not None:
                    marks.extend(_marks(pm))
        pm = ip.globals.get(item.module, {}).get("pytestmark")
        if pm is not None:
            marks.extend(_marks(pm))
        for dexpr, _l in reversed(test_fn["decorators"]):
            deco_atoms.extend(self._eval_decorator(dexpr, item.module))
        marks.extend(a for a in deco_atoms if a[0] == "mark")
        item.markers = {m[1] for m in marks}
        usefixtures = []
        param_values: Dict[str, V] = {}
        for m in marks:
            if m[1] == "usefixtures":
                for a in m[2]:
                    s = I._literal_str(a)
                    if s:
                        usefixtures.append(s)
            elif m[1] == "parametrize" and len(m[2]) >= 2:
                param_values.update(_parametrize(m[2][0], m[2][1]))
            elif m[1] in ("disable_socket", "vcr", "block_network", "default_cassette"):
                ip.ctx.net = ip.ctx.net | {"*"}
            elif m[1] in ("freeze_time",):
                ip.ctx.frozen = True

        # self for methods
        self_atom = None
        if item.cls:
            self_atom = ("inst", ip.new_instance(item.cls))

        # xunit set-up
        setups = []
        g = ip.globals.get(item.module, {})
        for name in ("setup_module", "setUpModule"):
            v = g.get(name)
            if v is not None:
                setups.append((v, []))
        if item.cls is None:
            v = g.get("setup_function")
            if v is not None:
                setups.append((v, [UNKNOWN_V]))
        for v, args in setups:
            ip.stack = [mframe]
            ip.apply(v, args, {}, mframe, (test_fn["line"], 0, 0, 0))
        if item.cls:
            for mname in (("setUpClass", "setup_class") if item.unittest else ("setup_class",)):
                m = ip.find_method(item.cls, mname)
                if m:
                    ip.stack = [mframe]
                    ip.call_function(m[1], [], {}, mframe, self_atom=("cls", item.cls))
            for mname in (("setUp", "setup_method") if item.unittest else ("setup_method",)):
                m = ip.find_method(item.cls, mname)
                if m:
                    ip.stack = [mframe]
                    ip.call_function(m[1], [UNKNOWN_V] if mname == "setup_method" else [], {}, mframe,
                                     self_atom=self_atom)

        # fixtures
        fx = _FixtureScope(self, item, chain)
        params = [p for p in test_fn["params"]]
        if item.cls and params and params[0][1] == "pos":
            params = params[1:]
        n_mock = sum(1 for a in deco_atoms if a[0] == "patcher" and a[1] in ("attr",) and not a[2][3])
        # pytest sorts the fixture closure by scope, higher first; within a scope autouse
        # fixtures, then usefixtures, then the test's parameters, in order. A module-scoped
        # fixture the test requests is set up before a function-scoped autouse one.
        rank = {"session": 0, "package": 1, "module": 2, "class": 3, "function": 4}

        def scope_rank(name: str) -> int:
            d = fx.find(name)
            return rank.get(d.scope, 4) if d is not None else 4

        order = [(scope_rank(n), 0, i, n, False) for i, n in enumerate(fx.autouse_names())]
        order += [(scope_rank(n), 1, i, n, False) for i, n in enumerate(usefixtures)]
        for i, prm in enumerate(params):
            d = fx.find(prm[0]) if i >= n_mock and prm[0] not in param_values else None
            if d is not None and rank.get(d.scope, 4) < 4:
                order.append((rank[d.scope], 2, i, prm[0], True))
        for _r, _g, _i, name, with_params in sorted(order):
            if with_params:
                fx.get(name, param_values)
            else:
                fx.get(name)
        loc: Dict[str, V] = {}
        for i, prm in enumerate(params):
            pname, kind, _d = prm[0], prm[1], prm[2]
            if kind in ("var", "varkw"):
                continue
            if i < n_mock:
                loc[pname] = DOUBLE_V
            elif pname in param_values:
                loc[pname] = param_values[pname]
            elif _d is not None and pname not in fx.known_names():
                loc[pname] = ip.defaults.get(item.qualname, {}).get(pname, UNKNOWN_V)
            else:
                loc[pname] = fx.get(pname, param_values)
        # decorator substitutes are active around the call of the test function
        for a in deco_atoms:
            if a[0] == "patcher":
                ip._activate(a)
            elif a[0] == "ext" and a[1] in I._NET_MOCKS:
                ip.ctx.net = ip.ctx.net | {I._NET_MOCKS[a[1]]}
            elif a[0] == "ext" and a[1] in I._FS_FAKES:
                ip.ctx.fs_fake = True
        if self_atom is not None:
            loc["self"] = of(self_atom)
            if params != test_fn["params"]:
                loc[test_fn["params"][0][0]] = of(self_atom)
        frame = I.Frame(module=item.module, path=item.path, name=item.display, line=test_fn["line"], in_test=True,
                        cls=test_fn.get("class"))
        frame.locals = loc
        ip.stack = [frame]
        ip.ran_code(item.module)
        try:
            ip.exec_block(test_fn["body"], frame)
        except RecursionError:
            pass
        if item.cls:
            for mname in (("tearDown", "teardown_method") if item.unittest else ("teardown_method",)):
                m = ip.find_method(item.cls, mname)
                if m:
                    ip.stack = [mframe]
                    ip.call_function(m[1], [UNKNOWN_V] if mname == "teardown_method" else [], {}, mframe,
                                     self_atom=self_atom)
        ip.stack = []
        # a trace starts at the test (contract section 7): code a fixture runs is reached from
        # the test that requests it, so its trace gets the test's step in front
        test_step = (item.path, item.def_line, item.display)
        events = [e if not e.trace or (e.trace[0][0], e.trace[0][2]) == (item.path, item.display)
                  else replace(e, trace=(test_step,) + e.trace, via_fixture=True)
                  for e in ip.events if not e.import_time]
        if ip.direct_env:
            # S2: a variable the test sets itself (directly; that write is HT302) is controlled,
            # also for the reads that save its old value first
            # (a copy: the memo shares event objects between calls)
            events = [replace(e, verdict=I.CONTROLLED)
                      if e.category == "env" and e.verdict == I.UNCONTROLLED and e.target in ip.direct_env else e
                      for e in events]
        import_events = [e for e in ip.events if e.import_time]
        ip.import_events.extend(import_events)
        ip.events = []
        ip.undo_test_writes()
        return TestRun(item, events, list(ip.escapes), list(ip.misses), set(ip.consumed), list(ip.marks), fx.used,
                       ip.files, dict(ip.run_unresolved), sorted(ip.touched), import_events)

    def record(self, run: TestRun) -> None:
        """Take in what a run found out about the suite (which fixtures each test uses)."""
        for qn in run.fixtures:
            self.fixture_users.setdefault(qn, set()).add(run.item.node_id)

    def _sweep_modules(self) -> Set[str]:
        """Modules that bind a path-like constant computed at import (an HT201 candidate),
        and the modules that import them: the only places the sweep needs to look."""
        ip = self.ip
        holders = set()
        for mod, g in ip.globals.items():
            for v in g.values():
                if any(o.kind == "module-constant" and o.module == mod and o.inner
                       and not all(i.kind == "literal" for i in o.inner) for o in v.origins()):
                    holders.add(mod)
                    break
        if not holders:
            return set()
        out = set(holders)
        for mod, s in self.p.summaries.items():
            if s["module"] != mod:
                continue
            targets = set(self.imports_of(mod).values())
            if any(t in holders or t.rsplit(".", 1)[0] in holders for t in targets):
                out.add(mod)
        return out

    def sweep_roots(self) -> List[str]:
        """The functions the HT201 sweep runs, in the order it runs them: the functions of
        project code (not of the test tree) in modules that bind a computed constant or import
        one that does. Depends only on the modules imported so far (``ip.globals``)."""
        self.swept_modules = self._sweep_modules()
        for m in self.swept_modules:
            self.swept_globals.setdefault(m, set()).update(self.ip.globals.get(m, ()))
        return sweep_roots_in(self.p, self.swept_modules)

    def sweep(self, roots: Optional[List[str]] = None, keep_memo: bool = False) -> List[I.SinkEvent]:
        """Every root (default ``sweep_roots()``) once, with unknown arguments and nothing
        patched: the file operations each module constant flows into, whatever the tests
        redirect (HT201). The memo is emptied before and after unless ``keep_memo``."""
        return [e for r in self.sweep_each(roots, keep_memo) for e in r.events]

    def sweep_each(self, roots: Optional[List[str]] = None, keep_memo: bool = False) -> List["SweepRun"]:
        """``sweep``, root by root: what each found and what its result depends on."""
        ip = self.ip
        out: List[SweepRun] = []
        if not keep_memo:
            ip.clear_memo()   # keys hold the sweep flag: no test's entry can be reused (memory)
        ip.ctx = I.Ctx()
        ip.import_time = False
        ip.sweep = True
        for qn in (self.sweep_roots() if roots is None else roots):
            f, mod = self.p.functions[qn]
            start_run(ip)
            ip.ctx = I.Ctx()
            ip.stack = []
            self_atom = None
            cls = f.get("class")
            if cls:
                self_atom = ("inst", ip.new_instance(cls))
            frame = I.Frame(module=mod, path=self.p.summaries[mod]["path"], name="<sweep>")
            try:
                ip.call_function(qn, [], {}, frame, self_atom=self_atom)
            except RecursionError:
                pass
            # only file operations matter here (HT201): the rest is dropped root by root
            out.append(SweepRun(qn, [e for e in ip.events if not e.import_time and e.category == "file"],
                                ip.files, dict(ip.run_unresolved), sorted(ip.touched)))
        start_run(ip)   # the last root's state goes too
        if not keep_memo:
            ip.clear_memo()
        ip.sweep = False
        return out

    def _eval_decorator(self, dexpr, mod: str) -> List[tuple]:
        """The references a decorator expression evaluates to (marks, patchers, ...). Evaluated
        once, at collection (``collect``), as the module's import evaluates it: a test's run
        reuses the value, so what the expression does (``parametrize([AsyncResult("x")])``
        setting a default app) is collection's, not a leak from one test into the next."""
        key = (mod, id(dexpr))
        hit = self._decorators.get(key)
        if hit is not None:
            return hit
        ip = self.ip
        saved = ip.ctx, ip.import_time, ip.stack
        ip.ctx = I.Ctx()
        # decorators (parametrize lists, patch targets) are evaluated when the module is imported
        ip.import_time = True
        frame = I.Frame(module=mod, path=self.p.summaries[mod]["path"], name="<module>", in_test=True,
                        is_module=False)
        frame.locals = {}   # names fall through to the module globals (and patches) in lookup
        ip.stack = [I.Frame(module=mod, path=frame.path, name="<module>", is_module=True)]
        try:
            v = ip.eval(dexpr, frame)
        finally:
            ip.ctx, ip.import_time, ip.stack = saved
        out = self._decorators[key] = list(v.refs())
        return out


def _names_bound(targets) -> List[str]:
    """Names a module-level assignment binds (plain names, also inside tuple targets)."""
    out: List[str] = []
    for t in targets:
        if t[0] == "name":
            out.append(t[1])
        elif t[0] == "tuple":   # the summary writes list targets as tuples too
            out.extend(_names_bound(t[1]))
    return out


class _FixtureScope:
    """Fixture resolution and instantiation for one test (each fixture once)."""

    def __init__(self, runner: Runner, item: TestItem, chain: List[str]):
        self.r = runner
        self.item = item
        self.cache: Dict[str, V] = {}
        self.active: Set[str] = set()
        self.used: Set[str] = set()   # qualnames of the fixtures set up
        # nearest first: class (and bases), module, conftests (nearest dir first), plugins
        layers: List[List[FixtureDef]] = []
        if item.cls:
            for cq in runner.ip.mro(item.cls):
                cmod = runner.p.classes[cq][1]
                layers.append(runner.fixture_defs(cmod).get(cq, []))
        layers.append(runner.fixture_defs(item.module).get("", []))
        for c in reversed(chain):
            layers.append(runner.fixture_defs(c).get("", []))
        for plugin in self._plugins([item.module] + chain):
            layers.append(runner.fixture_defs(plugin).get("", []))
        self.layers = layers

    def _plugins(self, mods: List[str]) -> List[str]:
        out = []
        for m in mods:
            v = self.r.ip.globals.get(m, {}).get("pytest_plugins")
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
                if n in self.r.p.summaries and n not in out:
                    self.r.ip.import_module(n)
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
        rank = {"session": 0, "package": 1, "module": 2, "class": 3, "function": 4}
        return sorted(order, key=lambda n: rank.get(self.find(n).scope if self.find(n) else "function", 4))

    def find(self, name: str, below: Optional[FixtureDef] = None) -> Optional[FixtureDef]:
        passed = below is None
        for layer in self.layers:
            for d in layer:
                if d.name != name:
                    continue
                if not passed:
                    if d is below:
                        passed = True
                    continue
                return d
        return None

    def get(self, name: str, param_values: Optional[Dict[str, V]] = None, below: Optional[FixtureDef] = None) -> V:
        ip = self.r.ip
        if below is None and name in self.cache:
            return self.cache[name]
        if param_values and name in param_values:
            return param_values[name]
        d = self.find(name, below)
        if d is None:
            v = self._builtin(name)
            if below is None:
                self.cache[name] = v
            return v
        key = f"{name}@{d.qualname}"
        self.used.add(d.qualname)
        if key in self.active:
            return UNKNOWN_V
        self.active.add(key)
        f, mod = self.r.p.functions[d.qualname]
        loc: Dict[str, V] = {}
        params = f["params"]
        self_atom = None
        if d.cls and params and params[0][1] == "pos":
            self_atom = ("inst", ip.new_instance(d.cls))
            loc[params[0][0]] = of(self_atom)
            params = params[1:]
        for prm in params:
            pname, kind = prm[0], prm[1]
            if kind in ("var", "varkw"):
                continue
            if pname == "request":
                loc[pname] = of(("fixture", "request"))
            elif pname == name:
                loc[pname] = self.get(pname, None, below=d)
            else:
                loc[pname] = self.get(pname)
        if d.params is not None:
            mframe = I.Frame(module=mod, path=self.r.p.summaries[mod]["path"], name="<params>", in_test=True)
            mframe.locals = {}
            pv = ip.eval(d.params, mframe)
            loc["__request_param__"] = ip._element(pv)
        frame = I.Frame(module=mod, path=self.r.p.summaries[mod]["path"], name=d.qualname, line=f["line"],
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
        if name in (self.r.config.control_fixtures or []):
            v = of(Origin("test-value", expr=name))
        self.active.discard(key)
        if below is None:
            self.cache[name] = v
        return v

    def _builtin(self, name: str) -> V:
        ip = self.r.ip
        if name in (self.r.config.control_fixtures or []):
            return of(Origin("test-value", expr=name))
        if name in ("tmp_path", "tmpdir"):
            return of(Origin("test-value", expr=name), is_path=True)
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


def _marks(v: V) -> List[tuple]:
    out = []
    for a in v.refs():
        if a[0] == "mark":
            out.append(a)
        elif a[0] == "seq":
            for x in a[2]:
                out.extend(_marks(x))
    return out


def _parametrize(names_v: V, values_v: V) -> Dict[str, V]:
    names: List[str] = []
    s = I._literal_str(names_v)
    if s is not None:
        names = [n.strip() for n in s.split(",") if n.strip()]
    else:
        for a in names_v.refs():
            if a[0] == "seq":
                names = [I._literal_str(x) or "" for x in a[2]]
    out: Dict[str, V] = {}
    rows: List[V] = []
    for a in values_v.ordered():
        if isinstance(a, tuple) and a[0] == "seq":
            rows.extend(a[2])
        else:
            rows = []
            break
    for i, n in enumerate(names):
        if not n:
            continue
        if not rows:
            out[n] = UNKNOWN_V
            continue
        vals = []
        for row in rows:
            if len(names) == 1:
                vals.append(row)
                continue
            seqs = [x for x in row.refs() if x[0] == "seq"]
            if seqs and i < len(seqs[0][2]):
                vals.append(seqs[0][2][i])
            else:
                vals.append(UNKNOWN_V)
        out[n] = union(vals)
    return out


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
    ip.steps = 0
    ip.cut_at = I.NO_CUT
    ip.depth_cut = ip.budget_hit = False
    ip.reach, ip.calls, ip.reads, ip.greads = 0, 0, 0, 0
    ip.files, ip.run_unresolved, ip.unres_log = 0, {}, []
    ip.shared_roots = []
    ip.touched = set()
    ip.collected = True   # imports from now on are imports after collection
    heap = ip.heap
    for iid in range(I.TEST_HEAP_BASE, max(ip.next_id, I.TEST_HEAP_BASE)):   # a run's ids are consecutive
        heap.pop(iid, None)
    ip.next_id = I.TEST_HEAP_BASE
    ip.wlog = []
