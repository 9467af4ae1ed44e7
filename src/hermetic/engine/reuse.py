"""The per-test result cache: a test whose inputs did not change keeps its last result.

A test's result is a function of the state collection leaves and of the code it runs
(``docs/limits.md``: each test is analysed as if it ran alone). So a run keeps, beside the
summaries, one entry per configuration (``scope_key``) in ``.hermetic_cache/v*/analysis/``:

- ``digest``: the hash of every module's ``import_digest`` (what importing it does: the
  summary without function bodies) and of the configuration: the state collection leaves is
  the same while it is, provided no function that ran during collection changed either
  (``collection``: qualname -> its ``body_digest``: its def line, parameters and body);
- ``keys``: each module's content hash (the summary cache key) at that run;
- per test (by node id) and per HT201 sweep root its ``TestRun`` / ``SweepRun``, with the
  modules whose function bodies it ran (``deps``; through reused memo entries and imports after
  collection too, ``Interp.files``).

- ``outcome``: what the rules found from those results (findings before suppressions,
  unknown origins, unresolved calls, the inventory), with the modules all of it depends on.

The next run with the same digest reruns only the tests and roots whose ``deps`` meet a module
whose content hash changed, and takes the others' results as they were: the report is the one
a cold run gives, byte for byte (tests/test_reuse.py, and the benchmark's one-file run). Where
it would rerun none (``settled``: a function appended, a body no test runs edited, a comment),
it does not collect either and takes the outcome, running only the new HT201 sweep roots that
read no module state. Any other change (a module-level statement, a signature, a decorator, a
line added above a function) changes the digest, and every test runs.

The entry is pickled (``hermetic.engine.entry``: its byte format); only this package's classes
and plain containers are loaded from it, so a cache restored from elsewhere cannot run code. A
damaged or foreign entry is ignored.
"""
from __future__ import annotations

import copy
import hashlib
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple

from ..analyse.runs import SweepRun, TestRun
from ..analyse.sweep import sweep_roots_in
from ..summarise.extract import may_name
from ..summarise.ir import NAME_ID, PARAM_DEFAULT, TAG, dotted_name
# the entry's byte format; ``dumps``, ``loads``, ``blob`` and the format's constants stay
# importable from here, where the tests and ``api`` look for them
from .entry import ANALYSIS_VERSION, part


@dataclass
class Reused:
    """Results taken from the per-test result cache instead of run (``plan``); ``parallel.analyse``
    runs the rest."""

    runs: Dict[int, TestRun] = field(default_factory=dict)     # index into the items -> its run
    sweep: Dict[str, SweepRun] = field(default_factory=dict)   # HT201 sweep root -> its run
    # modules whose file changed while the code an earlier run could have run did not
    # (``same_code``): a function appended, nothing else
    same: Set[str] = field(default_factory=set)


def collection_digest(scope: str, summaries: Dict[str, dict]) -> str:
    """The hash of every module's import digest (aliases included) under ``scope``."""
    h = hashlib.sha256(scope.encode())
    for mod in sorted(summaries):
        s = summaries[mod]
        h.update(f"\0{mod}\0{s['module']}\0{s.get('import_digest', '')}".encode())
    # the container constants some file may change in place: `in` on the others is decided
    changed = {n for s in summaries.values() for n in s.get("changed", ())}
    containers = {n for s in summaries.values() for n in s.get("containers", ())}
    h.update(",".join(sorted(changed & containers)).encode())
    return h.hexdigest()


def load_parts(entry: Optional[dict]) -> Optional[dict]:
    """``entry`` with its tests' and sweep roots' results loaded, or None where one is damaged."""
    if entry is None or part(entry, "tests") is None or part(entry, "sweep") is None:
        return None
    return entry


def reused_parts(prev: Optional[dict], reused, items, analysis) -> Set[str]:
    """The parts of ``prev`` (``"tests"``, ``"sweep"``) that this run took whole: the same tests
    (sweep roots), every result taken from it. The new entry writes their blobs as they were."""
    out: Set[str] = set()
    if prev is None or reused is None:
        return out
    # every item's result was taken from ``prev`` by its node id, and ``prev`` holds no other
    if len(reused.runs) == len(items) == len(prev["tests"]):
        out.add("tests")
    # every root this run swept is a result of ``prev``'s (``plan`` also keeps roots no longer swept)
    if len(analysis.sweep_runs) == len(prev["sweep"]) and all(
            reused.sweep.get(r.root) is r for r in analysis.sweep_runs):
        out.add("sweep")
    return out


def changed_modules(prev: dict, keys: Dict[str, str]) -> Set[str]:
    old = prev["keys"]
    return {m for m in set(old) | set(keys) if old.get(m) != keys.get(m)}


def same_code(prev: dict, changed: Set[str], summaries: Dict[str, dict],
              old_summary: Optional[Callable[[str], Optional[dict]]]) -> Set[str]:
    """The modules of ``changed`` whose file changed but not what importing it does nor any
    function it had: each function of the summary ``old_summary(key)`` gives for the key
    ``prev`` holds is in the new summary with the same body digest (def line, parameters,
    body). A run that ran code of such a module ran the same code now: a function was
    appended (a new plain function is seen only where code names it, which ``plan`` checks)."""
    out: Set[str] = set()
    if old_summary is None:
        return out
    for mod in sorted(changed):
        key, new = prev["keys"].get(mod), summaries.get(mod)
        if key is None or new is None or "import_digest" not in new:
            continue
        old = old_summary(key)
        if old is None or old.get("import_digest") != new["import_digest"]:
            continue
        nf = new["functions"]
        if all(qn in nf and nf[qn]["body_digest"] == f["body_digest"] for qn, f in old["functions"].items()):
            out.add(mod)
    return out


def premise(prev: Optional[dict], digest: str, keys: Dict[str, str], program) -> Optional[Set[str]]:
    """The modules whose file changed since ``prev`` (a loaded entry) was made, when collection
    leaves the state it left then; else None (another digest, a body that ran during collection
    changed, or a plain function added or removed that code names). ``program``: the linked
    summaries (``interp.Program``), so this needs no collection."""
    if prev is None or prev["digest"] != digest:
        return None
    changed = changed_modules(prev, keys)
    # a function that ran during collection and now reads otherwise: the state may differ
    functions = program.functions
    for qn, was in prev["collection"].items():
        entry = functions.get(qn)
        if entry is None:
            return None
        if entry[1] in changed and entry[0]["body_digest"] != was:
            return None
    # a plain function added or removed binds a name or no longer does: unseen while no code
    # names it (a name, an attribute, an import, a dotted name in a short string)
    summaries = program.summaries
    named = set()
    for mod in changed:
        s = summaries.get(mod)
        named.update(set(prev["plain"].get(mod, ())) ^ set(s.get("plain_defs", ()) if s is not None else ()))
    if named and any(not named.isdisjoint(s.get("names", ())) for s in summaries.values()):
        return None
    return changed


def settled(prev: Optional[dict], digest: str, keys: Dict[str, str], program,
            old_summary: Optional[Callable[[str], Optional[dict]]] = None) -> Optional[Tuple[Set[str], List[str]]]:
    """``(same_code``'s modules, new HT201 sweep roots``)`` when nothing of ``prev`` must be
    analysed again but those roots: collection leaves the state it left (``premise``); no
    module whose code that run's tests, sweep roots or imports after collection ran changed but
    as ``same_code`` allows (its outcome's ``deps``); and the sweep has the same roots, or more
    that read no module state (``reads_no_state``: run in any state, each runs as it would in
    collection's, which the caller checks as it runs them). Then that run's outcome is this
    run's, apart from those roots and what the rules after it read of the files (spans,
    suppressions, call counts) and HT3xx's key, which the caller checks. None otherwise."""
    changed = premise(prev, digest, keys, program)
    if changed is None:
        return None
    outcome = part(prev, "outcome")
    if outcome is None or not isinstance(outcome.get("deps"), list):
        return None
    same = same_code(prev, changed, program.summaries, old_summary)
    if not (changed - same).isdisjoint(outcome["deps"]):
        return None
    # the sweep runs every function of its modules: one added there is a root more
    roots = sweep_roots_in(program, set(outcome["sweep_modules"]))
    if roots == outcome["roots"]:
        return same, []
    old = set(outcome["roots"])
    new = [qn for qn in roots if qn not in old]
    if len(roots) - len(new) != len(old):   # a root gone: its module no longer swept, or not the same code
        return None
    bound = outcome["globals"]
    for qn in new:
        f, mod = program.functions[qn]
        if mod not in same or qn.rsplit(".", 1)[-1] not in program.summaries[mod].get("plain_defs", ()) \
                or not reads_no_state(f, bound.get(mod, ())):
            return None
    return same, new


# builtins that reach module state without naming it
_REACHING = frozenset({"globals", "vars", "locals", "eval", "exec", "compile", "__import__", "breakpoint",
                       "getattr", "setattr", "delattr", "hasattr"})
# statements and expressions that bind or reach names beyond the function's own
_BINDING = frozenset({"import", "from", "global", "nonlocal", "def", "class", "lambda"})


def reads_no_state(f: dict, bound) -> bool:
    """Whether running the function ``f`` (a summary's) can read no module state: no class,
    no defaults, nothing it imports, declares global or defines, and no name it looks up (its
    locals too: what is bound where is not worked out) that its module binds (``bound``: the
    module's global names after collection), a dunder, or a builtin in ``_REACHING``."""
    if f.get("class") or any(p[PARAM_DEFAULT] is not None for p in f["params"]):
        return False
    bound = set(bound)
    todo: list = [f["body"]]
    while todo:
        x = todo.pop()
        if isinstance(x, (list, tuple)):
            if x and isinstance(x[TAG], str):
                if x[TAG] in _BINDING:
                    return False
                if x[TAG] == "name" and len(x) == 2:
                    n = x[NAME_ID]
                    if not isinstance(n, str) or n in bound or n in _REACHING or n.startswith("__"):
                        return False
                    continue
            todo.extend(x)
        elif isinstance(x, dict):
            todo.extend(x.values())
    return True


def plan(prev: Optional[dict], digest: str, keys: Dict[str, str], items: Sequence, ip,
         old_summary: Optional[Callable[[str], Optional[dict]]] = None):
    """What of ``prev`` (a loaded entry, its parts loaded: ``load_parts``) this run can take,
    or None when nothing can be (``premise``). ``old_summary(key)``: the summary cached under
    a content key (``same_code``), None where it is gone."""
    changed = premise(prev, digest, keys, ip.p)
    if changed is None:
        return None
    summaries = ip.p.summaries
    bits = ip.file_bits
    out = Reused()
    out.same = same_code(prev, changed, summaries, old_summary)
    changed = changed - out.same
    tests = prev["tests"]
    for i, it in enumerate(items):
        rec = tests.get(it.node_id)
        if rec is None:
            continue
        deps, run, markers = rec
        if changed.isdisjoint(deps):
            run.deps = _bits(deps, bits)
            run.item = it
            it.markers = markers
            out.runs[i] = run
    for root, (deps, run) in prev["sweep"].items():
        if changed.isdisjoint(deps):
            run.deps = _bits(deps, bits)
            out.sweep[root] = run
    return out


def _bits(mods: List[str], bits: Dict[str, int]) -> int:
    out = 0
    for m in mods:
        out |= bits.get(m, 0)
    return out


def _plain(summaries: Dict[str, dict]) -> Dict[str, list]:
    return {m: s.get("plain_defs", []) for m, s in summaries.items() if s.get("plain_defs")}


def entry(digest: str, keys: Dict[str, str], collection: Dict[str, str], items, analysis, ip,
          ht3: Optional[tuple], effects: Optional[Dict[str, tuple]] = None,
          same: Optional[Dict[str, bytes]] = None, outcome: bytes = b"") -> dict:
    """The entry for this run: its digest, keys, every test's and sweep root's result, HT3xx's
    result ``(key, findings, unresolved notes, {module its own imports ran code of: content key},
    {module imported after collection, or one such import ran code of: content key})``, the
    project functions' effects per module (``effects.function_effects``) and ``outcome``, the
    ``blob`` of what the rules found (``api``). ``same``: the blobs of the loaded entry's parts
    this run took whole (``reused_parts``), written as they were."""
    same = dict(same or {}, outcome=outcome)
    out = {"version": ANALYSIS_VERSION, "digest": digest, "keys": dict(keys), "collection": collection,
           "ht3": ht3, "plain": _plain(ip.p.summaries), "effects": effects or {}, "tests": None, "sweep": None,
           "outcome": None, "_blobs": same}
    if "tests" not in same:
        tests = {}
        for it, run in zip(items, analysis.runs):
            deps = ip.files_of(run.deps)
            item, run.item = run.item, None
            tests[it.node_id] = (deps, _copy(run), set(it.markers))
            run.item = item
        out["tests"] = tests
    if "sweep" not in same:
        out["sweep"] = {r.root: (ip.files_of(r.deps), r) for r in analysis.sweep_runs}
    return out


def carried(prev: dict, keys: Dict[str, str], summaries: Dict[str, dict], ht3: Optional[tuple],
            effects: Optional[Dict[str, tuple]], outcome: Optional[bytes] = None) -> dict:
    """The entry of a run that analysed nothing again (``settled``): ``prev``'s results as they
    were, under this run's content keys, and its outcome, or ``outcome`` (a ``blob``: new sweep
    roots ran)."""
    blobs = dict(prev["_blobs"])
    if outcome is not None:
        blobs["outcome"] = outcome
    return {"version": ANALYSIS_VERSION, "digest": prev["digest"], "keys": dict(keys),
            "collection": prev["collection"], "ht3": ht3, "plain": _plain(summaries), "effects": effects or {},
            "tests": None, "sweep": None, "outcome": None, "_blobs": blobs}


def _copy(run):
    return copy.copy(run)


def ht3_key(digest: str, keys: Dict[str, str], summaries: Dict[str, dict], in_test: Dict[str, bool],
            fixture_users: Dict[str, Set[str]], node_ids: List[str], effects: Dict[str, tuple]) -> str:
    """What HT301-HT304 read besides the collection state: the test tree's files, the project
    functions they look into (``lru_cache``d ones), the bodies imports after collection ran,
    the project functions' effects (``effects``: per module, from ``effects.function_effects``),
    which fixtures each test used (``fixture_users``) and the tests (``node_ids``). The modules
    HT3xx's own imports run code of are known after it ran: ``ht3_reusable`` checks them."""
    h = hashlib.sha256(digest.encode())
    looked = set()
    for mod, s in summaries.items():
        if in_test.get(mod, False):
            looked.add(mod)
            continue
        if not may_name(s, _CACHE_DECORATORS):
            continue   # no function of a file that never names them is decorated with them
        for f in s["functions"].values():
            if any(dotted_name(d).rsplit(".", 1)[-1] in _CACHE_DECORATORS for d, _l in f["decorators"]):
                looked.add(mod)
                break
    for mod in sorted(looked):
        h.update(f"\0{mod}\0{keys.get(mod, '')}".encode())
    h.update(repr(sorted((qn, sorted(users)) for qn, users in fixture_users.items())).encode())
    h.update(repr(list(node_ids)).encode())
    h.update(repr(sorted((m, sorted(fx.items())) for m, (_k, _c, fx) in effects.items() if fx)).encode())
    return h.hexdigest()


_CACHE_DECORATORS = ("cache", "lru_cache")


def ht3_ran(ip, keys: Dict[str, str], since: Optional[Set[str]] = None) -> Dict[str, str]:
    """The modules imported after collection (after ``since``, the modules imported after
    collection before then) and those their imports ran code of: module -> content key."""
    out = set()
    for mod, bits in ip.lazy_files.items():
        if since is None or mod not in since:
            out.add(mod)
            out.update(ip.files_of(bits))
    return {m: keys.get(m, "") for m in sorted(out)}


def ht3_reusable(old, key: str, keys: Dict[str, str], ran: Dict[str, str], same: Set[str]) -> bool:
    """Whether the stored HT3xx result ``old`` answers this run: the same key, the same modules
    imported after collection (``ran``, from ``ht3_ran``), and each module those imports and
    HT3xx's own ran code of unchanged or changed only as ``same_code`` allows (``same``)."""
    if not isinstance(old, tuple) or len(old) != 5 or old[0] != key or set(old[4]) != set(ran):
        return False
    return all(keys.get(m, "") == k or m in same for m, k in list(old[3].items()) + list(old[4].items()))
