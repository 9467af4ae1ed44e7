"""Tests and fixtures, found in summaries, and run through the interpreter as pytest would.

For each test: import-time code of its module and conftest chain (once, at collection),
xunit/unittest set-up, fixtures in pytest's order (autouse first, dependencies before
dependants, nearest definition of a name wins), decorators' substitutes, then the body.

``Runner`` collects and runs the tests; the pieces it strings together live beside it: what a
run is and yields (``runs``), fixtures (``fixtures``), marks and parametrize (``parametrize``)
and the HT201 sweep (``sweep``). Their names stay importable from here.
"""
from __future__ import annotations

import fnmatch
from dataclasses import replace
from pathlib import PurePosixPath
from typing import Dict, List, Optional, Set

from . import interp as I
from ..summarise.ir import ASSIGN_LINE, ASSIGN_TARGETS, CLASS_QUALNAME, DEF_QUALNAME, PARAM_DEFAULT, PARAM_KIND, \
    PARAM_NAME, TAG, dotted_name
from ..summarise.unparse import module_imports
from .fixtures import FIXTURE_PARAM, FixtureDef, FixtureScope, fixture_decorator, fixture_runs
from .parametrize import SKIPPED, marks_of, parametrize_values, row_runs, skipped_by
from .collected import imported_functions, names_bound as _names_bound
from .plugins import BY_NAME, CollectingPlugin, class_name, configured, plugin_skips, plugins_loaded, requirements_class
from .runs import Rows, SweepRun, TestItem, TestRun, failed_run, merged, start_run
from .sweep import sweep_each, sweep_modules, sweep_roots_in
from .values import DOUBLE_V, EMPTY, UNKNOWN_V, V, of

__all__ = ["SKIPPED", "FixtureDef", "FixtureScope", "Runner", "SweepRun", "TestItem", "TestRun", "start_run",
           "sweep_roots_in"]


def plugins_off(pytest_cfg) -> Set[str]:
    """The pytest plugins ``addopts`` turns off, as ``"no:NAME"`` (``-p no:warnings``); ``-s``,
    ``--capture=no`` and ``-p no:capture`` turn off output capture (``"no:capture"``)."""
    opts = (getattr(pytest_cfg, "addopts", "") or "").split()
    off = {opts[i + 1] for i, o in enumerate(opts[:-1]) if o == "-p"}
    off |= {o[2:] for o in opts if o.startswith("-pno:")}
    if "-s" in opts or "--capture=no" in opts or ("--capture" in opts and "no" in opts):
        off.add("no:capture")
    return off


class Runner:
    def __init__(self, interp: I.Interp, files, pytest_cfg, config):
        self.ip = interp
        self.p = interp.p
        # module -> the project modules its import statements name (``rules.uncontrolled.import_closure``)
        self.import_successors: Dict[str, tuple] = {}
        self.files = files                     # module -> SourceFile
        self.pytest_cfg = pytest_cfg
        self._req_cls: Dict[str, Optional[str]] = {}   # plugin name -> its requirements class
        self.config = config
        interp.captured = "no:capture" not in plugins_off(pytest_cfg)   # sys.stdout is no terminal in a test
        self.static_imports: Dict[str, Dict[str, str]] = {}
        self.fixtures_by_module: Dict[str, Dict[str, List[FixtureDef]]] = {}
        self.conftests_by_dir: Dict[str, str] = {}
        self.fixture_users: Dict[str, Set[str]] = {}   # fixture qualname -> node ids that use it (record())
        self.swept_modules: Set[str] = set()   # the modules whose functions the sweep last ran (sweep_roots)
        self.swept_globals: Dict[str, Set[str]] = {}   # their global names then (reuse.settled)
        self._decorators: Dict[tuple, List[tuple]] = {}   # (module, id of the expression) -> its references
        # the same key -> the import-time reads its evaluation made (``TestRun.consumed`` of the tests
        # it decorates: `@skipIf(os.environ.get("X"), ...)` uses the read)
        self._decorator_reads: Dict[tuple, tuple] = {}
        # collecting plugins (``plugins``): test-base-classes, per conftest the known ones it loads, resolved bases
        self._configured = configured(getattr(config, "test_base_classes", ()) or ())
        self._loaded: Dict[str, List[CollectingPlugin]] = {}
        self._bases: Dict[str, Set[str]] = {}
        for mod, sf in files.items():
            if sf.is_conftest:
                self.conftests_by_dir[str(PurePosixPath(sf.rel).parent)] = sf.module

    # ------------------------------------------------------------------ static helpers
    def imports_of(self, mod: str) -> Dict[str, str]:
        if mod not in self.static_imports:
            self.static_imports[mod] = module_imports(self.p.summaries.get(mod))
        return self.static_imports[mod]

    def static_name(self, expr, mod: str) -> str:
        """Dotted name of a decorator-like expression, through the module's imports."""
        name = dotted_name(expr)
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
                fx = self.fixture_of(f, mod)
                if fx is None:
                    continue
                name, autouse, scope, params = fx
                d = FixtureDef(name or f["name"], qn, mod, autouse, scope, params, f.get("class"))
                out.setdefault(d.cls or "", []).append(d)
            # a fixture imported by name is one of this module's too (pytest collects the
            # module's attributes): celery's conftest imports celery_app from its own plugin
            own = {d.name for d in out.get("", [])}
            for local, full in sorted(self.imports_of(mod).items()):
                entry = self.p.functions.get(full)
                if entry is None or local in own:
                    continue
                f, fmod = entry
                fx = self.fixture_of(f, fmod)
                if fx is not None and not f.get("class"):
                    name, autouse, scope, params = fx
                    out.setdefault("", []).append(FixtureDef(name or local, full, fmod, autouse, scope, params))
        self.fixtures_by_module[mod] = out
        return out

    def fixture_of(self, f, mod):
        return fixture_decorator(f, mod, self.static_name)

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
        plugins = self.collecting_plugins(rootdir_rel)
        exclusive = any(pl.exclusive for pl in plugins)
        for st in s["body"]:
            if st[TAG] == "def":
                qn = st[DEF_QUALNAME]
                f = fns.get(qn)
                if f and self._match(f["name"], self.pytest_cfg.python_functions) and qn not in fixture_qns \
                        and not exclusive:
                    items.append(TestItem(f"{rootdir_rel}::{f['name']}", mod, s["path"], qn, f["name"], None,
                                          f["line"]))
            elif st[TAG] == "class":
                pl = self.plugin_of(st[CLASS_QUALNAME], plugins)
                if pl is not None:
                    items.extend(self._collect_class(st[CLASS_QUALNAME], mod, rootdir_rel, fixture_qns, pl))
                elif not exclusive:
                    items.extend(self._collect_class(st[CLASS_QUALNAME], mod, rootdir_rel, fixture_qns))
            elif st[TAG] == "assign" and not exclusive:
                # `test_x = make_test(...)`: pytest collects the bound function
                for name in _names_bound(st[ASSIGN_TARGETS]):
                    if not self._match(name, self.pytest_cfg.python_functions):
                        continue
                    refs = list(self.ip.globals.get(mod, {}).get(name, EMPTY).refs())
                    if len(refs) == 1 and refs[0][0] == "func" and refs[0][1] in fns.keys() | self.p.functions.keys():
                        qn = refs[0][1]
                        items.append(TestItem(f"{rootdir_rel}::{name}", mod, s["path"], qn, name, None,
                                              st[ASSIGN_LINE]))
        if not exclusive:   # a test function imported from another test module is collected here too
            items.extend(imported_functions(self, mod, rootdir_rel, s, {it.node_id for it in items}))
        if plugins:   # a plugin collects the classes the module's namespace holds, imported ones too
            items.extend(self._collect_imported(mod, rootdir_rel, fixture_qns, plugins))
        for it in items:   # decorators are evaluated at import: here, not in each test's run
            if it.cls:
                for cq in self.ip.mro(it.cls):
                    cd, cmod = self.p.classes[cq]
                    for dexpr, line in cd["decorators"]:
                        self._eval_decorator(dexpr, cmod, line)
            for dexpr, line in self.p.functions[it.qualname][0]["decorators"]:
                self._eval_decorator(dexpr, it.module, line)
        return items

    def _collect_class(self, qn: str, mod: str, rootdir_rel: str, fixture_qns,
                       plugin: Optional[CollectingPlugin] = None, outer: str = "") -> List[TestItem]:
        c, _ = self.p.classes[qn]
        is_unittest = self.ip.is_testcase(qn)
        if plugin is not None:
            if c["name"].startswith("_") or self.ip.find_method(qn, "__init__") is not None:
                return []
        elif not is_unittest:
            if not self._match(c["name"], self.pytest_cfg.python_classes):
                return []
            if self.ip.find_method(qn, "__init__") is not None:
                return []
        items = []
        seen = set()
        cname = class_name(self.ip, plugin, qn, c["name"])   # Cls_sqlite+pysqlite_3_40_1 for a __backend__ class
        for cq in self.ip.mro(qn):
            cd, _ = self.p.classes[cq]
            for mname, mqn in cd["methods"].items():
                if mname in seen:
                    continue
                seen.add(mname)
                if plugin is not None and plugin.method_prefix is not None:
                    ok = mname.startswith(plugin.method_prefix)
                elif is_unittest:
                    ok = mname.startswith("test")
                else:
                    ok = self._match(mname, self.pytest_cfg.python_functions)
                if ok and mqn not in fixture_qns:
                    f, _ = self.p.functions[mqn]
                    items.append(TestItem(f"{rootdir_rel}::{outer}{cname}::{mname}", mod, self.p.summaries[mod]["path"],
                                          mqn, f"{c['name']}.{mname}", qn, f["line"], unittest=is_unittest,
                                          plugin=plugin.name if plugin is not None else None))
        if plugin is None and not is_unittest:
            # pytest collects the classes a test class holds by the same rules (pytest-relaxed's
            # suites nest them): node ids Outer::Inner::test
            for inner in sorted(q for q in self.p.classes if q.startswith(qn + ".") and "." not in q[len(qn) + 1:]):
                items.extend(self._collect_class(inner, mod, rootdir_rel, fixture_qns, outer=f"{outer}{cname}::"))
        items.sort(key=lambda t: (t.def_line, t.node_id))
        return items

    # ------------------------------------------------------------------ collecting plugins
    def collecting_plugins(self, rel: str) -> List[CollectingPlugin]:
        """The collecting plugins active for the test file ``rel``: ``test-base-classes``, then the
        known plugins its conftest chain loads."""
        out = [self._configured] if self._configured is not None else []
        for c in self.conftest_chain(rel):
            if c not in self._loaded:
                self._loaded[c] = plugins_loaded(self.p.summaries[c]["body"]) if c in self.p.summaries else []
            out.extend(pl for pl in self._loaded[c] if pl not in out)
        return out

    def plugin_by_name(self, name: str) -> Optional[CollectingPlugin]:
        if self._configured is not None and name == self._configured.name:
            return self._configured
        return BY_NAME.get(name)

    def _resolved_bases(self, pl: CollectingPlugin) -> Set[str]:
        """A plugin's base class names, each also as the class it names through re-exports
        (``pkg.Base`` bound by ``from .base import Base``), read statically: nothing is imported."""
        hit = self._bases.get(pl.name)
        if hit is not None:
            return hit
        out: Set[str] = set()
        for name in pl.bases:
            for _ in range(8):   # a chain of re-exports, bounded
                out.add(name)
                mod, _, attr = name.rpartition(".")
                if name in self.p.classes or mod not in self.p.summaries:
                    break
                nxt = self.imports_of(mod).get(attr)
                if not nxt or nxt == name:
                    break
                name = nxt
        self._bases[pl.name] = out
        return out

    def plugin_of(self, qn: str, plugins: List[CollectingPlugin]) -> Optional[CollectingPlugin]:
        """The first of ``plugins`` that collects class ``qn`` (a subclass of one of its bases, the
        project's or a library's), or None."""
        if not plugins or qn not in self.p.classes:
            return None
        chain = None
        for pl in plugins:
            bases = self._resolved_bases(pl)
            if chain is None:
                chain = set(self.ip.mro(qn)[1:]) | set(self.ip.external_bases(qn))
            if chain & bases:
                return pl
        return None

    def _collect_imported(self, mod: str, rootdir_rel: str, fixture_qns,
                          plugins: List[CollectingPlugin]) -> List[TestItem]:
        """Test classes a plugin collects that the module imports rather than defines
        (``from sqlalchemy.testing.suite import *``): pytest walks the module's namespace."""
        items: List[TestItem] = []
        seen: Set[str] = set()
        for name, v in self.ip.globals.get(mod, {}).items():
            if name.startswith("_"):
                continue
            refs = list(v.refs())
            if len(refs) != 1 or refs[0][0] != "cls":
                continue
            qn = refs[0][1]
            if qn in seen or qn not in self.p.classes or self.p.classes[qn][1] == mod:
                continue
            seen.add(qn)
            pl = self.plugin_of(qn, plugins)
            if pl is not None:
                items.extend(self._collect_class(qn, mod, rootdir_rel, fixture_qns, pl))
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
        """The test's run: one per row of its ``parametrize`` marks where they list a few
        (``parametrize.row_runs``), merged (``runs.merged``), so each row's values decide its
        branches; else one, each parameter the union of its rows' values."""
        try:
            try:
                return self._run(item, None)
            except Rows as rows:
                return merged(item, [self._run(item, r) for r in rows.runs])
        except Exception as exc:   # noqa: BLE001 - a bug of ours: this test is left out, the run goes on
            return failed_run(self.ip, item, exc)

    def _run(self, item: TestItem, row: Optional[Dict[str, V]]) -> TestRun:
        """One run of the test: with ``row``, those parameter values; with None, raises
        ``runs.Rows`` before anything of the test runs where its rows are to run one by one."""
        ip = self.ip
        start_run(ip)
        ip.ctx = I.Ctx(env=dict(self.p.session_env))
        ip.import_time = False
        chain = self.conftest_chain(self.files[item.module].rel)
        for c in chain:
            ip.import_module(c)
        ip.import_module(item.module)
        test_fn, fmod = self.p.functions[item.qualname]
        mframe = I.Frame(module=item.module, path=item.path, name=item.display, in_test=True, line=item.def_line)
        mframe.locals = {}
        ip.stack = []

        # markers and decorator substitutes: class decorators, then the function's own
        deco_atoms = []
        marks = []
        if item.cls:
            for cq in reversed(ip.mro(item.cls)):
                cd, cmod = self.p.classes[cq]
                for dexpr, line in cd["decorators"]:
                    deco_atoms.extend(self._eval_decorator(dexpr, cmod, line))
                    ip.consumed.extend(self._decorator_reads.get((cmod, id(dexpr)), ()))
                pm = ip.class_attr(cq, "pytestmark")
                if pm is not None:
                    marks.extend(marks_of(pm))
        pm = ip.globals.get(item.module, {}).get("pytestmark")
        if pm is not None:
            marks.extend(marks_of(pm))
        n_class_decos = len(deco_atoms)
        for dexpr, line in reversed(test_fn["decorators"]):
            deco_atoms.extend(self._eval_decorator(dexpr, item.module, line))
            ip.consumed.extend(self._decorator_reads.get((item.module, id(dexpr)), ()))
        marks.extend(a for a in deco_atoms if a[0] == "mark")
        item.markers = {m[1] for m in marks}
        plugin = BY_NAME.get(item.plugin) if item.plugin else None
        if item.module in ip.import_raised or any(c in ip.import_raised for c in chain) or skipped_by(marks) or \
                plugin is not None and plugin_skips(
                ip, item.cls, plugin, test_fn, requirements_class(plugin, self.pytest_cfg.rootdir, self._req_cls)):
            # never runs here (its module or a conftest raises at import, a skip, a skipif the
            # platform or constants decide, a backend the collecting plugin's default run does
            # not test): nothing reached
            item.markers.add(SKIPPED)
            import_events = [e for e in ip.events if e.import_time]
            ip.import_events.extend(import_events)
            ip.events = []
            ip.undo_test_writes()
            return TestRun(item, [], deps=ip.files, unresolved=dict(ip.run_unresolved), touched=sorted(ip.touched),
                           import_events=import_events)
        usefixtures = []
        param_values: Dict[str, V] = dict(row or {})
        for m in marks:
            if m[1] == "usefixtures":
                for a in m[2]:
                    s = I._literal_str(a)
                    if s:
                        usefixtures.append(s)
            elif m[1] == "parametrize" and len(m[2]) >= 2:
                for k, v in parametrize_values(m[2][0], m[2][1]).items():
                    param_values.setdefault(k, v)   # the rows joined, where this run's row does not give it
            elif m[1] in ("disable_socket", "vcr", "block_network", "default_cassette"):
                ip.ctx.net = ip.ctx.net | {"*"}
            elif m[1] in ("freeze_time",):
                ip.ctx.frozen = True

        fx = FixtureScope(self.ip, self.fixture_defs, self.config, item, chain)
        ip.fixture_scope = fx   # request.getfixturevalue(name) in the test's fixtures
        params = [p for p in test_fn["params"]]
        if item.cls and params and params[0][PARAM_KIND] == "pos":
            params = params[1:]
        if row is None:
            runs = fixture_runs(row_runs(marks), fx, usefixtures, params, param_values)
            if runs is not None:
                raise Rows(runs)   # before anything of the test ran
        fx.fixture_params = {k[len(FIXTURE_PARAM):]: v for k, v in param_values.items() if k.startswith(FIXTURE_PARAM)}

        # self for methods
        self_atom = None
        if item.cls:
            self_atom = ("inst", ip.new_instance(item.cls))
            ip.test_instance = self_atom

        # xunit set-up: the module's, then the function's or the class's and the method's
        g = ip.globals.get(item.module, {})
        xunit = _XUNIT_UNITTEST if item.unittest else _XUNIT
        self._call_module_functions(g, ("setup_module", "setUpModule") + (() if item.cls else ("setup_function",)),
                                    mframe, test_fn["line"])
        if item.cls:
            self._call_methods(item, xunit["setup_class"], ("cls", item.cls), mframe)
            self._call_methods(item, xunit["setup_method"], self_atom, mframe)

        plugin = self.plugin_by_name(item.plugin) if item.plugin else None
        if plugin is not None:   # the plugin's class-scoped set-up
            self._call_methods(item, plugin.setup_class, ("cls", item.cls), mframe)

        # fixtures
        # the mocks the patch decorators pass, the bottom one's first; with a class's patches too,
        # which is which is not kept (each a double that may raise)
        mocks = [a[2][2] for a in deco_atoms if a[0] == "patcher" and a[1] in ("attr",) and not a[2][3]]
        n_mock = len(mocks)
        if any(a[0] == "patcher" for a in deco_atoms[:n_class_decos]):
            mocks = [DOUBLE_V] * n_mock
        fx.set_up(usefixtures, params, n_mock, param_values)
        loc: Dict[str, V] = {}
        for i, prm in enumerate(params):
            pname, kind, _d = prm[PARAM_NAME], prm[PARAM_KIND], prm[PARAM_DEFAULT]
            if kind in ("var", "varkw"):
                continue
            if i < n_mock:
                loc[pname] = mocks[i]   # the double the i-th patch from the bottom installed
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
                loc[test_fn["params"][0][PARAM_NAME]] = of(self_atom)
        if plugin is not None:   # the plugin's per-test set-up runs inside its function-scoped fixture
            self._call_methods(item, plugin.setup, self_atom, mframe)
        # the body runs in the module that defines it (a test inherited from a base class or
        # star-imported from another file): its names and its findings' lines are that file's
        frame = I.Frame(module=fmod, path=self.p.summaries[fmod]["path"], name=item.display, line=test_fn["line"],
                        in_test=True, cls=test_fn.get("class"))
        frame.locals = loc
        ip.stack = [frame]
        ip.ran_code(item.module)
        if fmod != item.module:
            ip.ran_code(fmod)
        redirects = _redirects(ip)   # the fixtures' and the set-up's
        try:
            ip.exec_block(test_fn["body"], frame)
        except RecursionError:
            pass
        redirects |= _redirects(ip)   # and the body's
        if item.cls:
            self._call_methods(item, xunit["teardown_method"], self_atom, mframe)
        if plugin is not None:
            self._call_methods(item, plugin.teardown, self_atom, mframe)
            self._call_methods(item, plugin.teardown_class, ("cls", item.cls), mframe)
        for fin, fframe in reversed(ip.finalizers):   # request.addfinalizer: last registered, first run
            ip.stack = [fframe]
            ip.apply(fin, [], {}, fframe, (fframe.line, 0, 0, 0))
        # xunit tear-down after the test's own: the function's, then the class's and the module's
        # (once for all their tests, and so reached from each of them, as their set-ups are)
        if item.cls:
            self._call_methods(item, xunit["teardown_class"], ("cls", item.cls), mframe)
        self._call_module_functions(g, (() if item.cls else ("teardown_function",)) + ("teardown_module",
                                                                                          "tearDownModule"),
                                    mframe, test_fn["line"])
        ip.stack = []
        # a trace starts at the test (contract section 8, `trace`): code a fixture runs is reached from
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
                       ip.files, dict(ip.run_unresolved), sorted(ip.touched), import_events, redirects,
                       None if ip.budget_hit else frozenset(ip.fx_hits).union(ip.fx_hits_above))

    def _call_methods(self, item: TestItem, names, atom, mframe) -> None:
        """Call each of the methods ``names`` the test's class has, bound to ``atom`` (pytest's
        ``setup_method`` / ``teardown_method`` get the test method, unknown here)."""
        for mname in names:
            m = self.ip.find_method(item.cls, mname)
            if m:
                self.ip.stack = [mframe]
                self.ip.call_function(m[1], [UNKNOWN_V] if mname in _TAKES_METHOD else [], {}, mframe, self_atom=atom)

    def _call_module_functions(self, g: Dict[str, V], names, mframe, line: int) -> None:
        """Call each of the test module's xunit functions ``names`` it defines (``setup_function``
        / ``teardown_function`` get the test function, unknown here)."""
        for name in names:
            v = g.get(name)
            if v is not None:
                self.ip.stack = [mframe]
                self.ip.apply(v, [UNKNOWN_V] if name in _TAKES_METHOD else [], {}, mframe, (line, 0, 0, 0))

    def record(self, run: TestRun) -> None:
        """Take in what a run found out about the suite (which fixtures each test uses)."""
        for qn in run.fixtures:
            self.fixture_users.setdefault(qn, set()).add(run.item.node_id)

    def sweep_roots(self) -> List[str]:
        """The functions the HT201 sweep runs, in the order it runs them: the functions of
        project code (not of the test tree) in modules that bind a computed constant or import
        one that does. Depends only on the modules imported so far (``ip.globals``)."""
        self.swept_modules = sweep_modules(self.ip, self.imports_of)
        for m in self.swept_modules:
            self.swept_globals.setdefault(m, set()).update(self.ip.globals.get(m, ()))
        return sweep_roots_in(self.p, self.swept_modules)

    def sweep(self, roots: Optional[List[str]] = None, keep_memo: bool = False) -> List[I.SinkEvent]:
        """Every root (default ``sweep_roots()``) once, with unknown arguments and nothing
        patched: the file operations each module constant flows into, whatever the tests
        redirect (HT201). The memo is emptied before and after unless ``keep_memo``."""
        return [e for r in self.sweep_each(roots, keep_memo) for e in r.events]

    def sweep_each(self, roots: Optional[List[str]] = None, keep_memo: bool = False) -> List[SweepRun]:
        """``sweep``, root by root: what each found and what its result depends on."""
        return sweep_each(self.ip, self.sweep_roots() if roots is None else roots, keep_memo)

    def _eval_decorator(self, dexpr, mod: str, line: int = 0) -> List[tuple]:
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
                        is_module=False, line=line)
        frame.locals = {}   # names fall through to the module globals (and patches) in lookup
        ip.stack = [I.Frame(module=mod, path=frame.path, name="<module>", is_module=True, line=line)]
        events_from = len(ip.events)
        try:
            v = ip.eval(dexpr, frame)
        finally:
            ip.ctx, ip.import_time, ip.stack = saved
        self._decorator_reads[key] = tuple(
            (e.path, e.pos[0], e.target) if e.category == "env" else (e.path, e.pos[0])
            for e in ip.events[events_from:] if e.import_time and e.category in ("env", "clock"))
        out = self._decorators[key] = list(v.refs())
        return out


# xunit set-up and tear-down methods of a test class, in the order each pair runs (pytest's; a
# unittest class's own first), and those pytest hands the test method or function
_XUNIT = {"setup_class": ("setup_class",), "setup_method": ("setup_method",),
          "teardown_method": ("teardown_method",), "teardown_class": ("teardown_class",)}
_XUNIT_UNITTEST = {"setup_class": ("setUpClass", "setup_class"), "setup_method": ("setUp", "setup_method"),
                   "teardown_method": ("tearDown", "teardown_method"),
                   "teardown_class": ("tearDownClass", "teardown_class")}
_TAKES_METHOD = frozenset({"setup_method", "teardown_method", "setup_function", "teardown_function"})


def _redirects(ip) -> frozenset:
    """The module globals (module, name) the test has put its own value in so far: a patch
    installed on one (setattr, mock.patch) or an entry set in the dict one holds (setitem)."""
    out = {(k[0][1], k[1]) for k in ip.ctx.sites if isinstance(k[0], tuple) and k[0][0] == "mod"}
    return frozenset(out | set(ip.table_chain))
