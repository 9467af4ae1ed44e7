"""The memo (interp.Interp.memo) reuses a call's result only where running the call again
would give the same result: every fixture project is checked with each reuse recomputed and
compared (events with their verdicts, and the returned value)."""
import pytest

import hermetic.analyse.interp as I
from hermetic.analyse.values import V, stable_key

from helpers import FIXTURES, copy_fixture


class RecomputingMemo(dict):
    """A memo that never answers: each call it would have answered (``Interp._lookup`` finds
    the entry usable there) runs again, and the new entry is compared with the one it would
    have reused."""

    def __init__(self):
        super().__init__()
        self.pending = {}
        self.differing = []
        self.stored = 0

    def __setitem__(self, key, value):
        old, at = self.pending.pop(key, (None, None))
        # the store of the call that looked it up (same frame), not of a later one with its key
        if old is not None and at == value.n_prefix and _outcome(old) != _outcome(value):
            self.differing.append(key[0])
        self.stored += 1
        super().__setitem__(key, value)

    def clear(self):
        self.pending.clear()
        super().clear()


def recomputing(monkeypatch) -> list:
    """Give every Interp a RecomputingMemo (listed in the returned list)."""
    memos = []
    init = I.Interp.__init__
    lookup = I.Interp._lookup

    def recording_init(self, program):
        init(self, program)
        self.memo = RecomputingMemo()
        memos.append(self.memo)

    def never_answering(self, key, depth, ids):
        found = lookup(self, key, depth, ids)
        if found is not None and isinstance(self.memo, RecomputingMemo):
            self.memo.pending[key] = (found[0], len(self.stack))
        return None

    monkeypatch.setattr(I.Interp, "__init__", recording_init)
    monkeypatch.setattr(I.Interp, "_lookup", never_answering)
    return memos


def _outcome(entry) -> tuple:
    # ids as the entry's own numbering: inputs by position, instances it made by order made
    ids = {iid: -1 - i for i, iid in enumerate(entry.ids)}
    ids.update({entry.first_id + j: -1_000_000 - j for j in range(entry.fresh)})
    ret = I._remap(entry.ret, ids)
    # a context manager's factory numbers its control state per run: the number is not the result
    atoms = frozenset(a[:2] if isinstance(a, tuple) and a[0] == "ctxfactory" else a for a in ret.atoms)
    return (sorted({(e.category, e.path, tuple(e.pos), str(e.verdict), e.target) for e in entry.events}),
            stable_key(V(atoms, ret.is_path)),
            [I._remap_write(w, ids)[:3] for w in entry.effects.writes if w[0] != "touch"], entry.effects.steps)


PROJECTS = sorted(p.name for p in FIXTURES.iterdir() if (p / "pyproject.toml").is_file())


@pytest.mark.parametrize("name", PROJECTS)
def test_a_reused_call_is_what_running_it_again_gives(name, tmp_path, monkeypatch):
    from hermetic.api import run_check

    memos = recomputing(monkeypatch)
    # in this process (jobs=1): a fixture of 64 tests or more would go to worker processes
    run_check(["."], copy_fixture(name, tmp_path), use_cache=False, jobs=1)
    assert memos and sum(m.stored for m in memos) > 0
    assert [k for m in memos for k in m.differing] == []


def test_calls_on_objects_another_test_made_are_reused_renumbered(tmp_path, monkeypatch):
    # determinism-memo's box tests make equal Box objects under other numbers: Box.__init__ and
    # Box.write are answered from the memo with the objects renumbered
    from hermetic.api import run_check

    moved = []
    reuse = I.Interp._reuse

    def counting(self, hit, m, here):
        if m:
            moved.append(hit)
        return reuse(self, hit, m, here)

    monkeypatch.setattr(I.Interp, "_reuse", counting)
    run_check(["."], copy_fixture("determinism-memo", tmp_path), use_cache=False)
    assert len(moved) >= 2


def test_calls_inside_a_recursion_are_reused(tmp_path, monkeypatch):
    # determinism-memo's ListSerializer.dump serializes each item twice, inside a recursion the
    # recursion limit cuts: the second serialize(v) is answered from the memo. Before, a call
    # whose run reached the recursion limit was not stored (it depended on its callers), which
    # made Django's migration-writer tests a third of the suite's analysis.
    from hermetic.api import run_check

    inner_hits = []
    lookup = I.Interp._lookup

    def counting(self, key, depth, ids):
        found = lookup(self, key, depth, ids)
        if found is not None and key[0] == "app.jobs.serialize" and "app.jobs.serialize" in self._on_stack:
            inner_hits.append(key)
        return found

    monkeypatch.setattr(I.Interp, "_lookup", counting)
    report, _ = run_check(["."], copy_fixture("determinism-memo", tmp_path), use_cache=False)
    assert inner_hits
    assert any(f.code == "HT102" and "serialized.txt" in f.message for f in report.findings)


@pytest.mark.parametrize("name", ["determinism-memo", "determinism-budget", "flow-objects", "determinism-shared-state"])
def test_the_memo_does_not_change_the_report(name, tmp_path, monkeypatch):
    from hermetic.api import run_check
    from hermetic.report.text import to_json

    project = copy_fixture(name, tmp_path)
    with_memo = to_json(run_check(["."], project, use_cache=False)[0])
    init = I.Interp.__init__

    def without_memo(self, program):
        init(self, program)
        self.use_memo = False

    monkeypatch.setattr(I.Interp, "__init__", without_memo)
    assert to_json(run_check(["."], project, use_cache=False)[0]) == with_memo


def test_a_call_the_run_step_cap_would_cut_is_run_again(tmp_path, monkeypatch):
    # determinism-run-cap: the second test puts an object of its own in module state, so
    # write_report() is keyed without the shared roots, and calls it about 30 steps in; under a
    # run cap of 40 a first run of it is cut before save(), so the run the first test stored
    # (24 steps) must not answer it. Reused, it reported the second test too (SQLAlchemy: two
    # budget notes fewer once the short keys answered more calls)
    from hermetic.api import run_check
    from hermetic.report.text import to_json

    monkeypatch.setattr(I, "RUN_STEPS", 40)
    project = copy_fixture("determinism-run-cap", tmp_path)
    report = run_check(["."], project, use_cache=False)[0]
    assert [[t.rsplit("::", 1)[-1] for t in f.tests] for f in report.findings if f.code == "HT102"] == [["test_report"]]
    init = I.Interp.__init__

    def without_memo(self, program):
        init(self, program)
        self.use_memo = False

    monkeypatch.setattr(I.Interp, "__init__", without_memo)
    assert to_json(run_check(["."], project, use_cache=False)[0]) == to_json(report)


def _lookups_by_test(monkeypatch, name: str, tmp_path, qn: str) -> dict:
    """Run ``hermetic check`` on fixture ``name``: test name -> whether each memo lookup of
    ``qn`` the test made was answered."""
    from hermetic.api import run_check
    from hermetic.analyse.runner import Runner

    seen, current = {}, [None]
    lookup, run = I.Interp._lookup, Runner.run

    def counting(self, key, depth, ids):
        found = lookup(self, key, depth, ids)
        if key[0] == qn and current[0]:
            seen.setdefault(current[0], []).append(found is not None)
        return found

    def running(self, item):
        current[0] = item.node_id.rsplit("::", 1)[-1]
        try:
            return run(self, item)
        finally:
            current[0] = None

    monkeypatch.setattr(I.Interp, "_lookup", counting)
    monkeypatch.setattr(Runner, "run", running)
    run_check(["."], copy_fixture(name, tmp_path), use_cache=False, jobs=1)
    return seen


def test_a_call_is_reused_where_the_shared_state_it_read_is_unchanged(tmp_path, monkeypatch):
    # determinism-shared-state: save() reads DATA_DIR. A test that wrote other module state
    # reuses it (a memo keyed by every write so far did not); a test that wrote DATA_DIR does
    # not, unless an earlier test wrote the same value there; DATA_DIR is first written after
    # save() was stored, so only the owner of what save() read tells the two apart
    seen = _lookups_by_test(monkeypatch, "determinism-shared-state", tmp_path, "app.store.save")
    assert seen["test_save_live"] == [False]
    assert seen["test_save_after_unrelated_write"] == [True]
    assert seen["test_save_redirected"] == [False]
    assert seen["test_save_redirected_again"] == [True]
    assert seen["test_save_elsewhere"] == [False]
    # an object of the test's own in module state that save() does not read leaves its key alone
    assert seen["test_save_with_a_target_registered"] == [True]


def test_a_call_that_read_a_test_object_through_shared_state_is_keyed_by_its_state(tmp_path, monkeypatch):
    # flush() reads store.current, where each test puts a Target of its own: the first run is
    # not stored under a key without the shared objects (it read one), and from then on flush()
    # is keyed with them, so a Target holding another path is never answered by the first run
    # (the cell's version, a hash of the ids, is the same in both tests)
    seen = _lookups_by_test(monkeypatch, "determinism-shared-state", tmp_path, "app.store.flush")
    assert seen == {"test_flush_to_var": [False], "test_flush_to_srv": [False], "test_flush_redirected": [False]}


def test_a_call_that_read_an_instance_attribute_waits_for_its_value(tmp_path, monkeypatch):
    # spool() reads settings.spool, an instance made at import: the redirecting test runs it
    # again; the test after it, with the attribute put back, reuses the first run
    seen = _lookups_by_test(monkeypatch, "determinism-shared-state", tmp_path, "app.store.spool")
    assert seen == {"test_spool_live": [False], "test_spool_redirected": [False], "test_spool_live_again": [True]}


def test_each_test_gets_the_verdict_of_its_own_shared_state(tmp_path):
    from hermetic.api import run_check

    report, _ = run_check(["."], copy_fixture("determinism-shared-state", tmp_path), use_cache=False)
    listed = {f.message.split("(", 1)[0].split()[0]: sorted(t.rsplit("::", 1)[-1] for t in f.tests)
              for f in report.findings if f.code == "HT102"}
    assert listed == {
        "flush": ["test_flush_to_srv", "test_flush_to_var"],
        "save": ["test_save_after_unrelated_write", "test_save_elsewhere", "test_save_live",
                 "test_save_with_a_target_registered"],
        "save_setting": ["test_save_setting_live"],
        "spool": ["test_spool_live", "test_spool_live_again"],
    }
