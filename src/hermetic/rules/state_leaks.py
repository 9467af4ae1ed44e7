"""HT301-HT304: state a test changes and nothing restores, so later tests see it.

Facts in: the test code's summaries (tests, fixtures, set-up and teardown methods, helpers,
test modules' top level), the project functions' direct state changes
(``pollution.function_effects``) and the restores of teardowns, finalizers, autouse fixtures
and per-test pytest hooks. Out: HT301 (``importlib.reload``), HT302 (``os.environ``), HT303
(module state), HT304 (process state: ``sys.path``, the working directory, started patchers),
one finding per state change with the selected tests it reaches.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath
from typing import Dict, List, Optional, Set

from ..analyse import interp as I
from ..analyse import pollution as P
from ..analyse.deepeffects import FunctionEffects
from ..analyse.effects import changed_state
from ..analyse.fixtures import BUILTIN_PREFIX, FixtureScope
from ..analyse.runner import SKIPPED, Runner, TestItem, plugins_off
from ..catalogue.process_state import process_state, state_key
from ..summarise.bodies import bodies_of, transient_bodies
from ..report.model import Finding
from ..summarise.extract import may_name
from ..summarise.ir import ATTR_ATTR, ATTR_VALUE, CALL_ARGS, CALL_FUNC, CALL_KWARGS, NAME_ID, TAG, dotted_name
from ..summarise.unparse import calls_in
from .facts import Facts
from .resets import called_or_passed, decorator_resets, entry_resets, reached
from .registry import severity


_HT3_FIX = {
    "HT301": "do not reload modules in tests; build fresh objects, or restore what the reload resets",
    "HT302": "use monkeypatch.setenv / monkeypatch.delenv (or mock.patch.dict(os.environ, ...)), which restore",
    "HT303": "use monkeypatch.setattr / monkeypatch.setitem, which restore, or put the old value back in a finally",
    "HT304": "use monkeypatch.syspath_prepend / monkeypatch.chdir, `with patch(...)`, or stop the patcher with "
             "addCleanup(patcher.stop)",
}


_TEARDOWNS = ("tearDown", "tearDownClass", "teardown_method", "teardown_class", "teardown_module",
              "teardown_function", "doCleanups", "teardown_test", "teardown", "asyncTearDown")


_SETUPS = ("setUp", "setUpClass", "setup_method", "setup_class", "asyncSetUp")


_PER_TEST_HOOKS = {"pytest_runtest_setup", "pytest_runtest_teardown", "pytest_runtest_call", "pytest_runtest_protocol",
                   "pytest_runtest_logstart", "pytest_runtest_logfinish", "pytest_fixture_post_finalizer",
                   "pytest_runtest_makereport"}


_REGISTERS = ("addCleanup", "addClassCleanup", "addfinalizer", "callback")


def ht3_findings(facts: Facts, effects: Dict[str, Set[tuple]]) -> List[Finding]:
    """HT301-HT304 over the test code: tests, fixtures, set-up, helpers, test modules' top level.
    ``effects``: the project functions' direct state changes (``pollution.function_effects``);
    what the functions they call change of the process is added at a test's call of them."""
    ip, runner, items, files_by_module = facts.ip, facts.runner, facts.items, facts.files_by_module
    effects = FunctionEffects(effects)
    items = [it for it in items if SKIPPED not in it.markers]   # a test that never runs changes nothing
    hook_restores = _hook_restores(ip, effects)
    # autouse fixtures that snapshot and restore a whole thing (os.environ) cover the tests under them
    covered: Dict[tuple, Set[str]] = {}
    # what the teardown of each fixture puts back ((key, entry), Scan.restored_items), with the
    # tests that use the fixture (directly or through other fixtures)
    requested: Dict[tuple, Set[str]] = {}
    registered_in: Dict[str, Dict[str, Set[str]]] = {}   # module -> _finalizers, read once for both uses
    last_of = _last_tests(items)

    with transient_bodies() as scope:   # fixture bodies read here do not all stay in memory
        for mod, s in sorted(ip.p.summaries.items()):
            if s["module"] != mod or not ip.p.in_test.get(mod, False):
                continue
            scope.release()
            defs = runner.fixture_defs(mod)
            for cls in sorted(defs, key=lambda c: c or ""):
                for d in defs[cls]:
                    users = _restored_in_time(d.scope, runner.fixture_users.get(d.qualname, ()), last_of)
                    if not users:
                        continue
                    f = ip.p.functions[d.qualname][0]
                    if d.autouse and not cls:
                        for key in P.restores_of(ip, f, mod):
                            if key == ("env", "*"):
                                covered.setdefault(key, set()).update(users)
                    registered = registered_in.get(mod)
                    if registered is None:
                        registered = registered_in[mod] = _finalizers(s)
                    fins = [(s["functions"][q], mod) for q in sorted(registered.get(d.qualname, ()))]
                    for item in P.fixture_restores(ip, f, mod, fins):
                        requested.setdefault(item, set()).update(users)
    snapshot_restored = _snapshot_restored(runner)
    for resets in (entry_resets(ip, items), decorator_resets(ip, items)):
        for key, tests in resets.items():
            snapshot_restored.setdefault((key, "*"), set()).update(tests)
    hook_restores = hook_restores | restored_per_test(runner.pytest_cfg)
    tests_by_qn: Dict[str, List[str]] = {}
    tests_by_mod: Dict[str, List[str]] = {}
    for it in items:
        tests_by_qn.setdefault(it.qualname, []).append(it.node_id)
        tests_by_mod.setdefault(it.module, []).append(it.node_id)
    out: List[Finding] = []
    seen_mods = set()
    index = _TestIndex(items, ip)
    shared = _Ht3Scope(ip, runner, files_by_module, seen_mods, tests_by_mod, tests_by_qn, effects, hook_restores,
                       covered, index, requested, registered_in, snapshot_restored, _fx_hits(facts.runs))
    for mod, s in sorted(ip.p.summaries.items()):
        # a test module's bodies are read for its turn only (what the interpreter reads meanwhile
        # for the modules it runs stays)
        store = bodies_of(s)
        was = store is None or store.loaded
        out.extend(_ht3_module(shared, mod, s))
        if not was:
            store.evict()
    return _inner_anchor_only(out, shared.anchors)


def _inner_anchor_only(found: List[Finding], anchors: List[tuple]) -> List[Finding]:
    """Drop a change reported at a test's call of a helper of test code when the helper's own
    call that makes it is reported for those tests too (one finding at the project call, not one
    more per test calling the helper: invoke's fifteen tests calling ``_complete``).
    ``anchors``: (finding, state key, the helper called or "", the function holding the call, tests)."""
    inner = {(key, func): tests for _f, key, _call, func, tests in anchors}
    drop = {id(f) for f, key, call, _func, tests in anchors
            if call and tests <= inner.get((key, call), set())}
    return [f for f in found if id(f) not in drop]


@dataclass
class _Ht3Scope:
    """What ``ht3_findings`` works out once and reads for every module (``_ht3_module``).

    ``seen_mods``: the modules done (a module under two names is scanned once);
    ``tests_by_mod`` / ``tests_by_qn``: node ids of the selected tests by module and by
    function; ``hook_restores``: state keys per-test hooks reset; ``covered``: state key ->
    the tests an autouse fixture restoring all of it covers; ``requested``: (state key, entry)
    -> the tests using a fixture whose teardown puts it back; ``registered_in``: module ->
    ``_finalizers`` of it.
    """
    ip: I.Interp
    runner: Runner
    files_by_module: dict
    seen_mods: Set[str]
    tests_by_mod: Dict[str, List[str]]
    tests_by_qn: Dict[str, List[str]]
    effects: Dict[str, Set[tuple]]
    hook_restores: Set[tuple]
    covered: Dict[tuple, Set[str]]
    index: "_TestIndex"
    requested: Dict[tuple, Set[str]]
    registered_in: Dict[str, Dict[str, Set[str]]]
    snapshot_restored: Dict[tuple, Set[str]]
    # test function qualname -> what its runs' project calls changed of the process (``TestRun.fx_hits``,
    # over its parametrized runs), None where a run stopped at the step budget
    fx_hits: Dict[str, Optional[frozenset]] = field(default_factory=dict)
    anchors: List[tuple] = field(default_factory=list)   # ``_inner_anchor_only``'s


def _tests_under_conftest(runner: Runner, files_by_module: dict, tests_by_mod: Dict[str, List[str]],
                          conftest: str) -> List[str]:
    """The selected tests whose conftest chain holds the conftest module ``conftest``."""
    return sorted(t for tmod, ts in tests_by_mod.items() if tmod in files_by_module
                  and conftest in runner.conftest_chain(files_by_module[tmod].rel) for t in ts)


def _last_tests(items: List[TestItem]) -> Dict[str, Set[str]]:
    """Scope -> the node ids that run last in their module (``module``) or class (``class``),
    in collection order: a fixture of that scope is torn down right after them."""
    last: Dict[str, Dict[str, str]] = {"module": {}, "class": {}}
    for it in items:
        last["module"][it.node_id.split("::")[0]] = it.node_id
        last["class"][it.node_id.rsplit("::", 1)[0]] = it.node_id
    return {scope: set(ids.values()) for scope, ids in last.items()}


def _restored_in_time(scope: str, users, last_of: Dict[str, Set[str]]) -> Set[str]:
    """The tests among ``users`` whose changes a fixture of ``scope`` puts back before another
    test runs (contract section 4, "Restores"): all of them for a function-scoped fixture, the
    last test of its module or class for a module- or class-scoped one, none for a wider scope."""
    if scope == "function":
        return set(users)
    return set(users) & last_of.get(scope, set())


def _fx_hits(runs) -> Dict[str, Optional[frozenset]]:
    """Test function qualname, and test node id, -> the union of its runs' ``fx_hits`` (None
    when one is None). Each hit names the test-code lines it ran under: the test's, and its
    helpers' and fixtures' (``Interp._fx_hit``)."""
    out: Dict[str, Optional[frozenset]] = {}
    for r in runs:
        for key in (r.item.qualname, r.item.node_id):
            before = out.get(key, frozenset())
            out[key] = None if before is None or r.fx_hits is None else before | r.fx_hits
    return out


def _hits_of(fx_hits: Dict[str, Optional[frozenset]], tests: List[str]) -> Optional[frozenset]:
    """The union of the hits of the runs of ``tests`` (node ids): what a helper or fixture they
    reach executed; None when a run is not known or there is no test."""
    out: Optional[frozenset] = frozenset()
    for t in tests:
        h = fx_hits.get(t)
        if h is None:
            return None
        out = out | h
    return out if tests else None


# how far above a call's line the statement holding it may start (a call inside a long `assert`)
_STATEMENT_SPAN = 30


def _runs_of(m, hits: frozenset, path: str) -> Optional[List[bool]]:
    """Per hit of ``hits`` that made change ``m`` under its call (a change a project function the
    test calls makes, HT302 - HT304 at the test's call), whether it ran on an undecided way; None
    for a change not made through such a call. Module state is matched by its name
    (``processfx._module_writes``)."""
    if not m.call or m.key[0] in ("takes", "lru", "patcher"):
        return None
    key = ("global-name", m.key[2]) if m.key[0] == "glob" else m.key
    line = m.pos[0]
    return [maybe for keys, tpath, tline, maybe in hits
            if tpath == path and line - _STATEMENT_SPAN <= tline <= line and key in keys]


def _not_run(m, hits: frozenset, path: str) -> bool:
    """No run of the test executed a statement making ``m`` under its call (its branch was not
    taken: invoke's ``basicConfig`` under ``if debug``; ``if remember: _CACHE[k] = v``)."""
    return _runs_of(m, hits, path) == []


def _maybe_only(m, hits: Optional[frozenset], path: str) -> bool:
    """The runs made ``m`` only on ways the tests' values do not decide (confidence medium:
    invoke's ``if self.args.debug.value:`` after a parse the analysis does not follow)."""
    found = _runs_of(m, hits, path) if hits is not None else None
    return bool(found) and all(found)


def _snapshot_restored(runner: Runner) -> Dict[tuple, Set[str]]:
    """(state key, "*") -> the tests using a builtin fixture whose teardown puts that state back
    from a snapshot (``pytester``: sys.path, sys.modules, the working directory)."""
    out: Dict[tuple, Set[str]] = {}
    for name, states in process_state().restoring_fixtures.items():
        users = runner.fixture_users.get(BUILTIN_PREFIX + name)
        if users:
            for st in states:
                out.setdefault((state_key(st), "*"), set()).update(users)
    return out


def restored_per_test(pytest_cfg) -> Set[tuple]:
    """State keys pytest itself puts back after each test (``[restored-per-test]`` of the
    process-state catalogue), less those of plugins the settings turn off (``-p no:warnings``,
    ``-s`` / ``--capture=no`` / ``-p no:capture``)."""
    off = plugins_off(pytest_cfg)
    return {state_key(st) for st, plugin in process_state().restored_per_test.items() if f"no:{plugin}" not in off}


def _ht3_module(scope: _Ht3Scope, mod: str, s: dict) -> List[Finding]:
    """HT301-HT304 in module ``mod`` (summary ``s``), when it is test code a selected test
    reaches."""
    ip, runner, files_by_module, seen_mods = scope.ip, scope.runner, scope.files_by_module, scope.seen_mods
    tests_by_mod, tests_by_qn, effects = scope.tests_by_mod, scope.tests_by_qn, scope.effects
    hook_restores, covered, index = scope.hook_restores, scope.covered, scope.index
    requested, registered_in = scope.requested, scope.registered_in
    out: List[Finding] = []
    if s["module"] != mod or not ip.p.in_test.get(mod, False) or mod in seen_mods:
        return out
    seen_mods.add(mod)
    sf = files_by_module.get(mod)
    if sf is None:
        return out
    if sf.is_test and mod not in tests_by_mod:
        return out   # a test module outside the selected targets
    # a conftest's top level runs at collection, before every test below it and for the rest of the
    # session: HT304 there (contract section 4); its environment and module state are session
    # configuration (S2), not HT302 / HT303
    under = _tests_under_conftest(runner, files_by_module, tests_by_mod, mod) \
        if not sf.is_test and PurePosixPath(sf.rel).name == "conftest.py" else []
    if not sf.is_test and not under and not any(_direct_tests(qn, f, runner, tests_by_qn, index) or index.named_by(f)
                                                for qn, f in s["functions"].items()):
        return out   # a helper module no selected test reaches: nothing to report, nothing to import
    ip.import_module(mod)
    if sf.is_test or under:
        for m in P.scan_module(ip, s, mod, effects):
            if sf.is_test or m.code == "HT304":
                out.append(_ht3_finding(m, s["path"], under or sorted(tests_by_mod.get(mod, [])), "<module>"))
    # tearDown-like methods restore for their whole class
    class_restores: Dict[str, set] = {}
    for cqn, c in s["classes"].items():
        tds = [(ip.p.functions[q][0], mod) for n, q in c["methods"].items() if n in _TEARDOWNS]
        class_restores[cqn] = P.teardown_restores(ip, tds) if tds else set()
    threads: Optional[Set[str]] = None   # the nested functions run as a thread's target, read when first needed
    registered = registered_in[mod] if mod in registered_in else _finalizers(s)
    finalizers = set().union(*registered.values()) if registered else set()
    scopes: Dict[object, FixtureScope] = {}   # a class (or the module) -> its fixture lookup, made when asked
    bound = ip.globals.get(mod)
    for qn, f in sorted(s["functions"].items()):
        if f["name"] in _TEARDOWNS or qn in finalizers:
            continue
        if bound is not None and qn == f"{mod}.{f['name']}" and f["name"] not in bound:
            continue   # defined under a branch the module's import did not take (sys.version_info < (3, 7))
        is_fixture = runner.fixture_of(f, mod) is not None
        restores = set(class_restores.get(f.get("class") or "", set()))
        nested = [(s["functions"][q], mod) for q in sorted(registered.get(qn, ()))]
        if nested:
            restores |= P.teardown_restores(ip, nested)
        params_are_fixtures = is_fixture or qn in tests_by_qn
        mutations = P.scan_function(ip, f, mod, is_fixture, restores, effects,
                                    _fixture_finder(runner, mod, sf.rel, f, scopes) if params_are_fixtures else None)
        if mutations and threads is None:
            threads = _thread_targets(s)
        if mutations and qn in threads:
            per_thread = {state_key(st) for st in process_state().per_thread}
            mutations = [m for m in mutations if m.key not in per_thread]   # the thread's own
        if not mutations:
            continue
        direct = _direct_tests(qn, f, runner, tests_by_qn, index)
        # a test's own call (or its helper's, its fixture's) whose runs never changed the state
        hits = scope.fx_hits.get(qn) if qn in tests_by_qn else _hits_of(
            scope.fx_hits, direct or ([] if is_fixture else _callers(qn, f, s, runner, tests_by_qn, index)))
        if hits is not None:
            mutations = [m for m in mutations if not _not_run(m, hits, s["path"])]
        if not mutations:
            continue
        mutations = [m for m in mutations if m.key not in hook_restores]
        if covered:
            mine = set(direct)
            mutations = [m for m in mutations if not (
                m.key[0] == "env" and mine and mine <= covered.get(("env", "*"), set()))]
        # a fixture reaches the tests that use it, never those that only name it (a local of its name)
        tests = direct or ([] if is_fixture else _callers(qn, f, s, runner, tests_by_qn, index))
        if not tests:
            continue   # no selected test reaches it: a helper nobody calls, another suite's fixture
        if requested and (qn in tests_by_qn or not direct):
            # a test body (or a helper it calls) runs between its fixtures' set-up and teardown:
            # what the teardown of a fixture every one of its tests requests puts back is restored
            mutations = [m for m in mutations if not all(
                any(t in requested.get(c, ()) for c in P.covering(m)) for t in tests)]
        if scope.snapshot_restored:
            # a snapshot fixture's teardown runs after every fixture and test body of its tests
            mutations = [m for m in mutations if not all(
                any(t in scope.snapshot_restored.get(c, ()) for c in P.covering(m)) for t in tests)]
        for m, fixes in _one_per_call(mutations):
            out.append(_ht3_finding(m, s["path"], sorted(tests), qn, fixes))
            if _maybe_only(m, hits, s["path"]):
                out[-1].confidence = "medium"
            scope.anchors.append((out[-1], m.key, m.call or "", I.dotted_qualname(qn), set(tests)))
    return out


def _one_per_call(mutations: list) -> list:
    """``(mutation, fixes)`` pairs: a project function changing several catalogued process states
    at one call (a logger's level and its handlers) is one mutation naming them all, with each
    state's fix."""
    out: list = []
    at: Dict[tuple, int] = {}
    states: Dict[tuple, List[str]] = {}
    fixes = process_state().fixes
    for m in mutations:
        if m.code != "HT304" or m.undone or not m.call or m.key[0] == "syspath":
            out.append((m, []))
            continue
        k, fix = (m.pos, m.call), fixes.get(m.key[0])
        if k not in at:
            at[k], states[k] = len(out), [m.key[0]]
            out.append((m, [fix] if fix else []))
            continue
        states[k].append(m.key[0])
        first, given = out[at[k]]
        out[at[k]] = (replace(first, what=f"{m.call}() changes {P.states_shown(states[k])}"),
                      given + ([fix] if fix and fix not in given else []))
    return out


def _fixture_finder(runner: Runner, mod: str, rel: str, f: dict, scopes: Dict[object, FixtureScope]):
    """``Walk.fixture`` for test or fixture ``f`` of ``mod`` (file ``rel``): a parameter's name ->
    the qualname of the fixture pytest passes there (``FixtureScope.find``: its class's, its
    module's, the conftests' nearest first, plugins'), None for another name or a builtin."""
    names = {p[0] for p in f["params"]}

    def find(name: str):
        if name not in names:
            return None
        cls = f.get("class")
        fs = scopes.get(cls)
        if fs is None:
            where = TestItem("", mod, "", f["qualname"], "", cls, 0)   # only its module and class are read
            fs = scopes[cls] = FixtureScope(runner.ip, runner.fixture_defs, runner.config, where,
                                            runner.conftest_chain(rel))
        d = fs.find(name)
        return d.qualname if d is not None and d.qualname != f["qualname"] else None
    return find


def _thread_targets(s: dict) -> Set[str]:
    """The nested functions of module summary ``s`` that their enclosing function hands to
    ``threading.Thread(target=...)`` (qualnames)."""
    found: Set[str] = set()
    for qn, f in s["functions"].items():
        for call in calls_in(f["body"]):
            if dotted_name(call[CALL_FUNC]).rpartition(".")[2] != "Thread":
                continue
            for name, value in call[CALL_KWARGS]:
                if name == "target" and value[TAG] == "name":
                    found.add(f"{qn}.<locals>.{value[NAME_ID]}")
    return found


def _callers(qn: str, f: dict, s: dict, runner: Runner, tests_by_qn, index: "_TestIndex") -> List[str]:
    """The tests that reach a helper: for a function nested in another (``go`` defined inside a
    test), the tests of the function it is defined in, not every test naming a ``go``."""
    if ".<locals>." in qn:
        outer = qn.rsplit(".<locals>.", 1)[0]
        of = s["functions"].get(outer)
        if of is not None:
            return _direct_tests(outer, of, runner, tests_by_qn, index) or \
                _callers(outer, of, s, runner, tests_by_qn, index)
    return index.callers(f)


def _direct_tests(qn: str, f: dict, runner: Runner, tests_by_qn, index: "_TestIndex") -> List[str]:
    """The selected tests a function is (node ids), or the tests of a fixture it is, or of the
    class whose set-up it is; else none (a helper reaches the tests that name it,
    ``_TestIndex.callers``). HT301-HT304 report a state change against these."""
    if qn in tests_by_qn:
        return tests_by_qn[qn]
    users = runner.fixture_users.get(qn)
    if users:
        return sorted(users)
    if f.get("class") and f["name"] in _SETUPS:
        return index.of_class(f["class"])
    return []


class _TestIndex:
    """The selected tests by the names their bodies use and by the classes they belong to
    (built once: HT3xx asks for every helper and set-up method)."""

    def __init__(self, items: List[TestItem], ip: I.Interp) -> None:
        self.by_name: Dict[str, List[TestItem]] = {}
        self.by_class: Dict[str, List[TestItem]] = {}
        seen: Dict[str, Set[str]] = {}   # a test method inherited by many classes is read once
        with transient_bodies() as scope:   # the tests' bodies are read once here, module by module
            last = None
            for it in items:
                if it.module != last:
                    scope.release()
                    last = it.module
                names = seen.get(it.qualname)
                if names is None:
                    names = seen[it.qualname] = set()
                    _names_in(ip.p.functions[it.qualname][0]["body"], names)
                for n in names:
                    self.by_name.setdefault(n, []).append(it)
                if it.cls:
                    for c in ip.mro(it.cls):
                        self.by_class.setdefault(c, []).append(it)

    def named_by(self, f: dict) -> List[TestItem]:
        """Tests whose body names a helper (``self.helper(...)``, ``helper(...)``): the tests a
        helper's state change reaches (of its class, for a method)."""
        its = self.by_name.get(f["name"], [])
        if its and f.get("class"):
            mine = {id(it) for it in self.by_class.get(f["class"], [])}
            its = [it for it in its if id(it) in mine]
        return its

    def callers(self, f: dict) -> List[str]:
        """The node ids of ``named_by(f)``, sorted."""
        return sorted(it.node_id for it in self.named_by(f))

    def of_class(self, cls: str) -> List[str]:
        return [it.node_id for it in self.by_class.get(cls, [])]


def _names_in(node, out: Set[str]) -> None:
    """Every name (``x``) and attribute name (``.x``) in an IR subtree, into ``out``.
    A loop over a stack rather than a recursion: about twice as fast on Django's test bodies."""
    if type(node) is not tuple and type(node) is not list:
        return
    stack = [node]
    pop, push, add = stack.pop, stack.append, out.add
    while stack:
        n = pop()
        if len(n) >= 2:
            head = n[TAG]
            if head == "name":
                if type(n[NAME_ID]) is str:
                    add(n[NAME_ID])
            elif head == "attr" and len(n) >= 3 and type(n[ATTR_ATTR]) is str:
                add(n[ATTR_ATTR])
        for x in n:
            if type(x) is tuple or type(x) is list:
                push(x)


def _finalizers(s: dict) -> Dict[str, Set[str]]:
    """Functions of the module registered with addfinalizer / addCleanup, by the function that
    registers them: a nested function, a module-level one, a method of its class through
    ``self.name``. They are teardown code (restores, not mutations)."""
    out: Dict[str, Set[str]] = {}
    if not may_name(s, _REGISTERS):
        return out   # the file never names one (its names hold every attribute it uses)
    fns = s["functions"]
    for qn, f in fns.items():
        for node in calls_in(f["body"]):
            fn = node[CALL_FUNC]
            if fn[TAG] == "attr" and fn[ATTR_ATTR] in _REGISTERS:
                for a in node[CALL_ARGS][:1]:   # the callable (addCleanup passes the others to it)
                    found = None
                    if a[TAG] == "name":   # a nested function, else a module-level one
                        found = next((c for c in (f"{qn}.<locals>.{a[NAME_ID]}", f"{s['module']}.{a[NAME_ID]}")
                                      if c in fns), None)
                    elif a[TAG] == "attr" and a[ATTR_VALUE] == ("name", "self") and f.get("class") and \
                            f"{f['class']}.{a[ATTR_ATTR]}" in fns:
                        found = f"{f['class']}.{a[ATTR_ATTR]}"
                    if found is not None and found != qn:
                        out.setdefault(qn, set()).add(found)
    return out


def _hook_restores(ip: I.Interp, effects: Dict[str, Set[tuple]]) -> Set[tuple]:
    """Module state that the project's own per-test pytest hooks reset (a plugin that clears a
    registry after every test restores it for every test). Follows the functions the hooks
    call or pass on, a few levels deep."""
    hooks = [qn for qn, (f, _m) in ip.p.functions.items() if f["name"] in _PER_TEST_HOOKS]
    keys: Set[tuple] = set()
    for qn in reached(ip, hooks, lambda f, mod: called_or_passed(ip, f, mod), 6, 500):
        # module state a hook writes is reset per test; a hook's environment or process
        # writes (PYTEST_CURRENT_TEST) put back nothing the test changed
        keys |= {changed_state(k) for k in effects.get(qn, ()) if k[0] in ("glob", "syspath", "takes")}
    return keys


_MODULE_ENV_FIX = ("set it for the whole run where pytest's configuration does (pytest-env's `env`), or in a "
                   "session-scoped autouse fixture with monkeypatch.MonkeyPatch.context(), which restores")
_UNDONE_FIX = ("move the line that puts it back into a `finally:` (or a fixture's teardown), or change it "
               "with monkeypatch")


def _ht3_finding(m, path: str, tests: List[str], func: str, fixes: Optional[List[str]] = None) -> Finding:
    if m.code == "HT301":
        msg = "importlib.reload() re-runs the module's top level and resets its state" + (
            f" ({m.what})" if m.what else "") + " for every test that runs after this one"
    else:
        head = {"HT302": m.what if "() changes " in m.what else f"{m.what} changes the process environment",
                "HT303": f"{m.what}: module state changed"}.get(m.code, f"{m.what}: process-wide state changed")
        if m.undone:   # the test puts it back, but where a failure before it skips the restore
            msg = (f"{head} and put back at line {m.undone}, but not in a finally or a teardown: a test that "
                   "fails before that line leaves the change to the tests after it")
        else:
            msg = head + {"HT302": " and nothing restores it: later tests see the change",
                          "HT303": " and never restored, so later tests see it"}.get(m.code, " and never restored")
    line, col, end_line, end_col = m.pos
    fix = _UNDONE_FIX if m.undone and m.code != "HT301" else _HT3_FIX[m.code]
    if m.code == "HT304" and not m.undone and m.key and m.key[0] in process_state().fixes:
        fix = "; ".join(fixes) if fixes else process_state().fixes[m.key[0]]   # the state's own fix (catalogue)
    if m.code == "HT302" and func == "<module>" and not m.undone:   # no test's monkeypatch reaches a module's top
        fix = _MODULE_ENV_FIX
    if m.key[:1] == ("lru",) and not m.undone:   # the cache of a function that read files or the environment
        fix = f"empty it after the test: {m.what.split('(')[0]}.cache_clear() in a finalizer or teardown"
    return Finding(m.code, severity(m.code), path, line, col, end_line or line, end_col or col, msg, tests, [],
                   None, fix=fix, function=func, anchor=m.what)
