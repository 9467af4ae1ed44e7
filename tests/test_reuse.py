"""The per-test result cache (hermetic.engine.reuse): a run after a change reruns the tests whose code
changed and reuses the others' results, and its report is byte for byte a cold run's."""
import pickle
import textwrap

import pytest

import hermetic.engine.cache as C
import hermetic.engine.parallel as P
from hermetic.engine import entry, reuse
from hermetic.api import run_check
from hermetic.report.text import to_json

from helpers import FIXTURES, copy_fixture

PROJECTS = sorted(p.name for p in FIXTURES.iterdir() if (p / "pyproject.toml").is_file())


@pytest.fixture
def no_whole_run_hits(monkeypatch):
    """Every run analyses: the whole-run result would answer an unchanged tree by itself."""
    monkeypatch.setattr(C.SummaryCache, "get_result", lambda self, key: None)


def _run(project, **kw):
    report, _ = run_check(["."], project, **kw)
    return report


def _cold(project):
    return to_json(_run(project, use_cache=False))


def _write(root, files):
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


APP = {
    "pyproject.toml": "[tool.pytest.ini_options]\ntestpaths = ['tests']\n",
    "src/app/__init__.py": "",
    "src/app/io.py": """\
        import os

        LIMIT = 3


        def read_a():
            return open(os.path.join("data", "a.txt")).read()


        def read_b():
            return 1


        def optional(mod):
            return getattr(mod, "extra", None)
        """,
    "tests/test_io.py": """\
        from app import io


        def test_a():
            assert io.read_a()


        def test_b():
            assert io.read_b() == 1


        def test_limit():
            assert io.LIMIT == 3


        def test_optional():
            f = io.optional(io)
            if f is not None:
                f()
        """,
}


@pytest.mark.parametrize("name", PROJECTS)
@pytest.mark.parametrize("jobs", [1, 2])
def test_an_unchanged_tree_reuses_every_test(name, jobs, tmp_path, monkeypatch, no_whole_run_hits):
    monkeypatch.setattr(P, "MIN_TESTS", 1)
    monkeypatch.setattr(P, "TESTS_PER_PROCESS", 1)
    project = copy_fixture(name, tmp_path)
    first = _run(project, jobs=jobs)
    again = _run(project, jobs=jobs)
    assert first.statistics["tests_reused"] == 0
    assert again.statistics["tests_reused"] == again.tests
    assert again.statistics["tests_analysed"] == 0
    assert to_json(again) == to_json(first)


@pytest.mark.parametrize("name", PROJECTS)
def test_a_function_appended_to_each_module_gives_the_cold_report(name, tmp_path, no_whole_run_hits):
    project = copy_fixture(name, tmp_path)
    _run(project)
    for n, path in enumerate(sorted(project.rglob("*.py"))):
        if ".hermetic_cache" in path.parts or path.stat().st_size == 0:
            continue
        with open(path, "a", encoding="utf-8") as f:
            f.write(f"\n\ndef _appended_{n}():\n    return open('appended.txt').read()\n")
        warm = _run(project)
        assert to_json(warm) == _cold(project), path
        assert warm.statistics["parsed"] == 1


def test_a_changed_body_reruns_the_tests_that_ran_it(tmp_path, no_whole_run_hits):
    project = _write(tmp_path / "p", APP)
    first = _run(project)
    assert [f.tests for f in first.findings if f.code == "HT102"] == [["tests/test_io.py::test_a"]]
    io = project / "src/app/io.py"
    io.write_text(io.read_text().replace("    return 1\n", "    return open('b.txt').read()\n"))
    second = _run(project)
    # every test that ran code of io.py (the unit is the file); test_limit only read a constant
    assert second.statistics["tests_analysed"] == 3
    assert second.statistics["tests_reused"] == 1
    assert sorted(t for f in second.findings if f.code == "HT102" for t in f.tests) == [
        "tests/test_io.py::test_a", "tests/test_io.py::test_b"]
    assert to_json(second) == _cold(project)


def test_an_appended_function_reruns_no_test(tmp_path, no_whole_run_hits):
    # every function io.py had is as it was, and no code names the new one: the tests that
    # ran io.py's code ran the same code now
    project = _write(tmp_path / "p", APP)
    _run(project)
    io = project / "src/app/io.py"
    io.write_text(io.read_text() + "\n\ndef read_c():\n    return open('c.txt').read()\n")
    second = _run(project)
    assert second.statistics["tests_reused"] == second.tests == 4
    assert second.statistics["parsed"] == 1
    assert to_json(second) == _cold(project)


def test_an_appended_function_with_a_changed_one_reruns_its_tests(tmp_path, no_whole_run_hits):
    project = _write(tmp_path / "p", APP)
    _run(project)
    io = project / "src/app/io.py"
    io.write_text(io.read_text().replace("    return 1\n", "    return 2\n") + "\n\ndef read_c():\n    return 3\n")
    second = _run(project)
    assert second.statistics["tests_analysed"] == 3   # as for the changed body alone
    assert to_json(second) == _cold(project)


def test_a_module_level_change_reruns_everything(tmp_path, no_whole_run_hits):
    project = _write(tmp_path / "p", APP)
    _run(project)
    io = project / "src/app/io.py"
    io.write_text(io.read_text().replace("LIMIT = 3", "LIMIT = 4"))
    second = _run(project)
    assert second.statistics["tests_reused"] == 0
    assert to_json(second) == _cold(project)


def test_an_added_function_that_code_names_reruns_everything(tmp_path, no_whole_run_hits):
    # test_optional looks `extra` up by name (getattr with a string): a new function of that
    # name changes what it reaches, though no test ran code of io.py that changed
    project = _write(tmp_path / "p", APP)
    first = _run(project)
    io = project / "src/app/io.py"
    io.write_text(io.read_text() + "\n\ndef extra():\n    return open('extra.txt').read()\n")
    second = _run(project)
    assert second.statistics["tests_reused"] == 0
    assert len(second.findings) == len(first.findings) + 1
    assert to_json(second) == _cold(project)


def _read_b_at_import(tmp_path):
    """APP with a conftest that runs read_b at import (during collection), after a first run."""
    files = dict(APP)
    files["tests/conftest.py"] = """\
        from app import io

        CALLED = io.read_b()
        """
    project = _write(tmp_path / "p", files)
    _run(project)
    return project


def test_a_function_that_ran_during_collection_changes_everything(tmp_path, no_whole_run_hits):
    project = _read_b_at_import(tmp_path)
    io = project / "src/app/io.py"
    io.write_text(io.read_text().replace("    return 1\n", "    return 2\n"))
    second = _run(project)
    assert second.statistics["tests_reused"] == 0
    assert to_json(second) == _cold(project)


def test_another_function_of_a_file_collection_ran_code_of_keeps_the_rest(tmp_path, no_whole_run_hits):
    # conftest runs read_b at import; read_a, in the same file, did not run during collection
    project = _read_b_at_import(tmp_path)
    io = project / "src/app/io.py"
    io.write_text(io.read_text().replace('"a.txt"', '"a2.txt"'))
    second = _run(project)
    assert second.statistics["tests_reused"] == 1   # test_limit ran no code of io.py
    assert to_json(second) == _cold(project)


def test_a_damaged_or_foreign_entry_is_ignored(tmp_path, no_whole_run_hits):
    project = _write(tmp_path / "p", APP)
    first = _run(project)
    [entry] = list((project / ".hermetic_cache").rglob("analysis/*.bin"))
    entry.write_bytes(entry.read_bytes()[:100])
    second = _run(project)
    assert second.statistics["tests_reused"] == 0
    assert to_json(second) == to_json(first)
    third = _run(project)
    assert third.statistics["tests_reused"] == third.tests


class _Runs:
    def __reduce__(self):
        import os

        return (os.system, ("echo pwned",))


def test_an_entry_loads_only_plain_data_and_hermetic_classes():
    import zlib

    def framed(head, parts):
        blobs = [zlib.compress(pickle.dumps(head))] + [zlib.compress(pickle.dumps(parts[k])) for k in entry._PARTS]
        return entry._MAGIC + b"".join(len(b).to_bytes(8, "big") for b in blobs) + b"".join(blobs)

    empty = {"tests": {}, "sweep": {}, "outcome": {}}
    plain = {"version": reuse.ANALYSIS_VERSION, "digest": "d", "keys": {}, "collection": {}, "plain": {}}
    assert reuse.load_parts(entry.loads(framed(plain, empty)))["digest"] == "d"
    assert entry.loads(framed({**plain, "x": _Runs()}, empty)) is None
    # a part is loaded when asked for: a forbidden class or another shape there is a damaged part
    assert reuse.load_parts(entry.loads(framed(plain, {**empty, "tests": {"t": _Runs()}}))) is None
    assert reuse.load_parts(entry.loads(framed(plain, {**empty, "sweep": {"r": _Runs()}}))) is None
    assert reuse.load_parts(entry.loads(framed(plain, {**empty, "tests": []}))) is None
    assert entry.part(entry.loads(framed(plain, {**empty, "outcome": {"o": _Runs()}})), "outcome") is None
    assert entry.loads(framed(plain, empty)[:-3]) is None   # cut short
    assert entry.loads(framed(plain, empty) + b"x") is None   # or longer than its lengths say
    ok = entry.dumps({"version": reuse.ANALYSIS_VERSION, "digest": "d", "keys": {}, "collection": {},
                      "tests": {}, "sweep": {}, "outcome": {"tests": 0}, "plain": {}, "ht3": None})
    assert entry.loads(ok)["digest"] == "d"
    assert entry.part(entry.loads(ok), "outcome") == {"tests": 0}
    assert entry.loads(b"not an entry") is None


REGISTRY_APP = {
    "pyproject.toml": "[tool.pytest.ini_options]\ntestpaths = ['tests']\n",
    "src/app/__init__.py": "",
    "src/app/reg.py": """\
        REG = {}


        def register():
            return 1
        """,
    "src/app/other.py": """\
        SEEN = []


        def note():
            SEEN.append(1)
        """,
    "tests/test_reg.py": """\
        from app import other, reg


        def test_register():
            reg.register()


        def test_note():
            other.note()
        """,
}


def test_a_body_that_starts_changing_module_state_is_reported(tmp_path, no_whole_run_hits):
    """HT303 reads what project functions change (their effects): a body that starts or stops
    changing its module's state changes HT3xx's result, though collection did not change."""
    project = _write(tmp_path / "p", REGISTRY_APP)
    first = _run(project)
    assert [f.anchor for f in first.findings if f.code == "HT303"] == ["app.other.note() changes app.other.SEEN"]
    reg = project / "src/app/reg.py"
    reg.write_text(reg.read_text().replace("    return 1\n", '    REG["x"] = 1\n'))
    second = _run(project)
    assert sorted(f.anchor for f in second.findings if f.code == "HT303") == [
        "app.other.note() changes app.other.SEEN", "app.reg.register() changes app.reg.REG"]
    assert to_json(second) == _cold(project)
    reg.write_text(reg.read_text().replace('    REG["x"] = 1\n', "    return 2\n"))
    assert to_json(_run(project)) == to_json(first)


def test_effects_of_unchanged_modules_come_from_the_entry(tmp_path, monkeypatch, no_whole_run_hits):
    import hermetic.analyse.effects as PO

    project = _write(tmp_path / "p", REGISTRY_APP)
    _run(project)
    read = []
    real = PO._direct_effects
    monkeypatch.setattr(PO, "_direct_effects", lambda f, mod, *rest: read.append(mod) or real(f, mod, *rest))
    reg = project / "src/app/reg.py"
    reg.write_text(reg.read_text().replace("    return 1\n", "    return 2\n"))
    second = _run(project)
    assert set(read) == {"app.reg"}
    assert to_json(second) == _cold(project)


def test_ht3_result_is_reused_only_under_the_same_imports_after_collection():
    old = ("k", [], [], {"tests.helpers": "h1"}, {"app.io": "a1"})
    keys = {"tests.helpers": "h1", "app.io": "a1"}
    assert reuse.ht3_reusable(old, "k", keys, {"app.io": "a1"}, set())
    assert not reuse.ht3_reusable(old, "other key", keys, {"app.io": "a1"}, set())
    # a module HT3xx's own imports ran code of, changed
    assert not reuse.ht3_reusable(old, "k", {**keys, "tests.helpers": "h2"}, {"app.io": "a1"}, set())
    # one the imports after collection ran code of: changed, or changed by an appended function
    assert not reuse.ht3_reusable(old, "k", {**keys, "app.io": "a2"}, {"app.io": "a2"}, set())
    assert reuse.ht3_reusable(old, "k", {**keys, "app.io": "a2"}, {"app.io": "a2"}, {"app.io"})
    # another module imported after collection
    assert not reuse.ht3_reusable(old, "k", keys, {"app.io": "a1", "app.db": "d1"}, set())
    assert not reuse.ht3_reusable(old[:4], "k", keys, {"app.io": "a1"}, set())   # an entry of another shape


def test_a_run_that_reused_every_result_writes_the_runs_as_they_were(tmp_path, monkeypatch, no_whole_run_hits):
    project = _write(tmp_path / "p", APP)
    _run(project)
    [path] = list((project / ".hermetic_cache").rglob("analysis/*.bin"))
    before = entry.loads(path.read_bytes())
    dumped = []
    real = entry.pickle.dumps
    monkeypatch.setattr(entry.pickle, "dumps", lambda obj, **kw: dumped.append(sorted(obj)) or real(obj, **kw))
    io = project / "src/app/io.py"
    io.write_text(io.read_text() + "\n\ndef read_c():\n    return 3\n")
    second = _run(project)
    assert second.statistics["tests_reused"] == 4
    assert second.statistics["collection"] == "reused"
    after = entry.loads(path.read_bytes())
    assert after["_blobs"] == before["_blobs"]
    assert all("tests" not in keys and "digest" in keys for keys in dumped)   # only the head was pickled
    assert after["keys"] != before["keys"]
    assert to_json(second) == _cold(project)
    io.write_text(io.read_text().replace("return 1", "return 5"))   # a changed body: its tests run again
    dumped.clear()
    third = _run(project)
    assert third.statistics["tests_analysed"] == 3
    # the outcome (before the rules after it change the findings), the head, the tests' results
    assert len(dumped) == 3 and "findings" in dumped[0] and "digest" in dumped[1]
    assert dumped[2] == sorted(entry.part(after, "tests"))
    assert to_json(third) == _cold(project)


def test_a_new_sweep_root_pickles_the_sweep_and_keeps_the_tests_blob(tmp_path, monkeypatch, no_whole_run_hits):
    # a module with a computed path constant: its functions are HT201 sweep roots, so an
    # appended function is one more root to run, while every test's result is reused
    files = dict(APP)
    files["src/app/io.py"] = APP["src/app/io.py"].replace("LIMIT = 3", 'BASE = os.path.join(os.path.dirname(__file__), "data")')
    project = _write(tmp_path / "p", files)
    _run(project)
    [path] = list((project / ".hermetic_cache").rglob("analysis/*.bin"))
    before = reuse.load_parts(entry.loads(path.read_bytes()))
    assert before["sweep"]
    dumped = []
    real = entry.pickle.dumps
    monkeypatch.setattr(entry.pickle, "dumps", lambda obj, **kw: dumped.append(obj) or real(obj, **kw))
    io = project / "src/app/io.py"
    io.write_text(io.read_text() + "\n\ndef write_c():\n    open(BASE, 'w').write('c')\n")
    second = _run(project)
    assert second.statistics["tests_analysed"] == 0
    assert second.statistics["collection"] == "run"   # the new root is swept (reuse.settled)
    after = reuse.load_parts(entry.loads(path.read_bytes()))
    assert after["_blobs"]["tests"] == before["_blobs"]["tests"]
    assert "app.io.write_c" in after["sweep"] and "app.io.write_c" not in before["sweep"]
    # the outcome, the head, then the sweep roots' results
    assert [type(d).__name__ for d in dumped] == ["dict"] * 3 and "digest" in dumped[1]
    assert set(dumped[2]) == set(after["sweep"])
    assert to_json(second) == _cold(project)


@pytest.mark.parametrize("enabled", [True, False])
def test_a_run_leaves_the_collector_as_it_found_it(enabled, tmp_path, no_whole_run_hits):
    # the parse phase and the entry's load run with the collector off; it comes back after
    import gc

    project = _write(tmp_path / "p", APP)
    was = gc.isenabled()
    try:
        if not enabled:
            gc.disable()
        _run(project)
        _run(project)   # the second loads the analysis entry
        assert gc.isenabled() is enabled
    finally:
        if was:
            gc.enable()


def test_an_edited_lru_cache_function_reruns_ht3(tmp_path, no_whole_run_hits):
    # HT304 looks into the project functions decorated with lru_cache (an I/O result kept for
    # the process): a body edit there changes HT3xx's result, which must not be reused
    project = copy_fixture("ht304-process-state", tmp_path)
    first = _run(project)
    catalog = project / "src/toolkit/catalog.py"
    catalog.write_text(catalog.read_text().replace(
        'return Path(path).read_text(encoding="utf-8").splitlines()', "return [str(path)]"))
    second = _run(project)
    assert to_json(second) == _cold(project)
    assert [f.code for f in second.findings if f.code == "HT304"] != [f.code for f in first.findings if f.code == "HT304"]


def test_the_sweep_blob_is_kept_only_when_every_root_swept_is_a_reused_one():
    # plan keeps every unchanged root of the entry, also one no longer swept; with one root
    # gone and a new one run, the counts still match, but the old blob would lose the new root
    from types import SimpleNamespace

    from hermetic.analyse.runner import SweepRun

    old_a, old_b, new_c = (SweepRun(root=r, events=[], deps=0, unresolved={}, touched=[]) for r in "abc")
    prev = {"tests": {}, "sweep": {"a": (["m"], old_a), "b": (["m"], old_b)}}
    reused = SimpleNamespace(runs={}, sweep={"a": old_a, "b": old_b})
    assert reuse.reused_parts(prev, reused, [], SimpleNamespace(sweep_runs=[old_a, old_b])) == {"tests", "sweep"}
    assert reuse.reused_parts(prev, reused, [], SimpleNamespace(sweep_runs=[old_a, new_c])) == {"tests"}
    assert reuse.reused_parts(None, reused, [], SimpleNamespace(sweep_runs=[])) == set()


# -- a run with nothing to analyse again takes the last run's outcome without collecting


def _count_imports(monkeypatch):
    import hermetic.analyse.interp as I

    seen = []
    real = I.Interp.import_module
    monkeypatch.setattr(I.Interp, "import_module", lambda self, name, *a, **kw: seen.append(name) or real(self, name, *a, **kw))
    return seen


def _rerun_after(project, rel, edit):
    """The run after ``edit`` (text -> text) of the file ``rel``: its report is a cold run's."""
    path = project / rel
    path.write_text(edit(path.read_text()))
    report = _run(project)
    assert to_json(report) == _cold(project)
    return report


def test_an_appended_function_needs_no_collection(tmp_path, monkeypatch, no_whole_run_hits):
    project = _write(tmp_path / "p", APP)
    first = _run(project)
    assert first.statistics["collection"] == "run"
    imported = _count_imports(monkeypatch)
    io = project / "src/app/io.py"
    io.write_text(io.read_text() + "\n\ndef read_c():\n    return open('c.txt').read()\n")
    second = _run(project)
    assert second.statistics["collection"] == "reused"
    assert imported == []   # the interpreter ran no module's code
    assert second.statistics["tests_reused"] == second.tests == 4
    assert to_json(second) == _cold(project)
    # and the run after it, from the entry that run wrote
    io.write_text(io.read_text() + "\n\ndef read_d():\n    return 4\n")
    third = _run(project)
    assert third.statistics["collection"] == "reused"
    assert to_json(third) == _cold(project)


def test_a_body_no_test_runs_edited_needs_no_collection(tmp_path, monkeypatch, no_whole_run_hits):
    files = dict(APP)
    files["src/app/unused.py"] = "def helper():\n    return 1\n"
    project = _write(tmp_path / "p", files)
    _run(project)
    unused = project / "src/app/unused.py"
    unused.write_text("def helper():\n    return open('h.txt').read()\n")
    second = _run(project)
    assert second.statistics["collection"] == "reused"
    assert to_json(second) == _cold(project)


def test_a_body_a_test_runs_edited_collects_again(tmp_path, no_whole_run_hits):
    project = _write(tmp_path / "p", APP)
    _run(project)
    second = _rerun_after(project, "src/app/io.py", lambda t: t.replace("    return 1\n", "    return 2\n"))
    assert second.statistics["collection"] == "run"


def test_a_suppression_added_where_nothing_runs_again_is_applied(tmp_path, no_whole_run_hits):
    # a comment changes no function's code: the outcome is reused, and the rules after it read
    # the suppressions of this run's files
    project = _write(tmp_path / "p", APP)
    first = _run(project)
    assert [f.code for f in first.findings] == ["HT102"]
    second = _rerun_after(project, "src/app/io.py", lambda t: t.replace(
        '"a.txt")).read()', '"a.txt")).read()  # hermetic: ignore[HT102]'))
    assert second.statistics["collection"] == "reused"
    assert second.findings == []


def test_an_appended_sweep_root_is_swept(tmp_path, no_whole_run_hits):
    # the HT201 sweep runs every function of a module holding a computed path constant: one
    # appended there is a new root, so the run collects and sweeps it
    files = dict(APP)
    files["src/app/io.py"] = APP["src/app/io.py"].replace("LIMIT = 3", 'BASE = os.path.join(os.path.dirname(__file__), "data")')
    project = _write(tmp_path / "p", files)
    first = _run(project)
    assert [f.code for f in first.findings if f.code == "HT201"] == []
    second = _rerun_after(project, "src/app/io.py", lambda t: t + "\n\ndef write_c():\n    open(BASE, 'w').write('c')\n")
    assert second.statistics["collection"] == "run"
    assert [f.anchor for f in second.findings if f.code == "HT201"] == ["BASE"]


def test_an_appended_function_with_an_effect_runs_ht3_again(tmp_path, no_whole_run_hits):
    # HT303 reads every project function's effects: a new one changing module state changes its key
    project = _write(tmp_path / "p", REGISTRY_APP)
    _run(project)
    second = _rerun_after(project, "src/app/reg.py", lambda t: t + '\n\ndef fill():\n    REG["y"] = 2\n')
    assert second.statistics["collection"] == "run"


def test_a_guard_collects_every_time(tmp_path, no_whole_run_hits):
    # HT4xx reads module state anew (docs/limits.md)
    project = copy_fixture("ht4-guard", tmp_path)
    _run(project)
    target = next(p for p in sorted(project.rglob("*.py")) if "tests" not in p.parts and p.stat().st_size)
    second = _rerun_after(project, target.relative_to(project), lambda t: t + "\n\ndef _appended():\n    return 1\n")
    assert second.statistics["collection"] == "run"


def test_a_damaged_outcome_collects_again(tmp_path, no_whole_run_hits):
    project = _write(tmp_path / "p", APP)
    first = _run(project)
    [path] = list((project / ".hermetic_cache").rglob("analysis/*.bin"))
    stored = entry.loads(path.read_bytes())
    stored["_blobs"]["outcome"] = b"not a blob"
    path.write_bytes(entry.dumps({k: (None if k in entry._PARTS else v) for k, v in stored.items()}))
    io = project / "src/app/io.py"
    io.write_text(io.read_text() + "\n\ndef read_c():\n    return 3\n")
    second = _run(project)
    assert second.statistics["collection"] == "run"
    assert second.statistics["tests_reused"] == 4   # the tests' results were intact
    assert to_json(second) == to_json(first) == _cold(project)


def _swept_app(tmp_path):
    """APP whose io.py holds a computed path constant: the HT201 sweep runs its functions."""
    files = dict(APP)
    files["src/app/io.py"] = APP["src/app/io.py"].replace("LIMIT = 3", 'BASE = os.path.join(os.path.dirname(__file__), "data")')
    project = _write(tmp_path / "p", files)
    _run(project)
    return project


@pytest.mark.parametrize("body", [
    "return open('c.txt').read()",
    "return undefined_helper(1).go()",   # a call not followed: a note in the report's unresolved list
    "with open(p, 'w') as fh:\n        fh.write(str([x for x in range(3)]))",
])
def test_a_new_sweep_root_that_reads_no_module_state_needs_no_collection(body, tmp_path, monkeypatch,
                                                                          no_whole_run_hits):
    project = _swept_app(tmp_path)
    imported = _count_imports(monkeypatch)
    io = project / "src/app/io.py"
    io.write_text(io.read_text() + f"\n\ndef write_c(p):\n    {body}\n")
    second = _run(project)
    assert second.statistics["collection"] == "reused"
    assert imported == []
    assert to_json(second) == _cold(project)
    third = _run(project)   # and from the entry that run wrote, where write_c is a root
    assert to_json(third) == to_json(second)


@pytest.mark.parametrize("body", [
    "open(BASE, 'w').write('c')",   # a module constant
    "return open(__file__).read()",   # a dunder: module state
    "import os\n    return os.getcwd()",   # an import
    "return globals()['BASE']",   # a builtin that reaches module state
])
def test_a_new_sweep_root_that_may_read_module_state_collects(body, tmp_path, no_whole_run_hits):
    second = _rerun_after(_swept_app(tmp_path), "src/app/io.py", lambda t: t + f"\n\ndef write_c():\n    {body}\n")
    assert second.statistics["collection"] == "run"


def test_a_new_sweep_root_with_a_default_collects(tmp_path, no_whole_run_hits):
    # the default is a value its def made at import: collection's
    second = _rerun_after(_swept_app(tmp_path), "src/app/io.py",
                          lambda t: t + "\n\ndef write_c(p='c.txt'):\n    return open(p).read()\n")
    assert second.statistics["collection"] == "run"


def test_reads_no_state_looks_at_every_name():
    f = {"params": [["p", "pos", None]], "class": None,
         "body": [("expr", ("call", ("attr", ("call", ("name", "open"), [("name", "p")], []), "read"), [], []))]}
    assert reuse.reads_no_state(f, {"BASE"})
    assert not reuse.reads_no_state(f, {"open"})   # the module binds it
    assert not reuse.reads_no_state({**f, "class": "app.C"}, set())
    assert not reuse.reads_no_state({**f, "params": [["p", "pos", ("lit", 1)]]}, set())
    nested = {**f, "body": [("if", ("name", "p"), [("expr", ("call", ("name", "eval"), [], []))], [])]}
    assert not reuse.reads_no_state(nested, set())
    assert not reuse.reads_no_state({**f, "body": [("global", ["X"])]}, set())


_WARM = """
import sys
from pathlib import Path
from hermetic.api import run_check
report, _ = run_check([], Path(sys.argv[1]), jobs=1)
print(report.statistics.get("result_cache"), [f.code for f in report.findings],
      sorted(m for m in sys.modules if m.startswith(("hermetic.analyse", "hermetic.rules.", "hermetic.pipeline"))
             and m != "hermetic.rules.registry"))
"""


def test_a_run_with_a_stored_result_imports_none_of_the_analysis(tmp_path):
    # a warm run answers from the whole-run result cache: loading the interpreter, the pytest
    # model and the rules for it cost a quarter of its time
    import subprocess
    import sys

    project = copy_fixture("quickstart", tmp_path)
    runs = [subprocess.run([sys.executable, "-c", _WARM, str(project)], capture_output=True, text=True, check=True)
            for _ in range(2)]
    first, second = (r.stdout.strip() for r in runs)
    assert first.startswith("miss ['HT101'] [") and "hermetic.analyse.interp" in first
    assert second == "hit ['HT101'] []"


def test_a_constant_another_file_starts_changing_reruns_the_tests(tmp_path, no_whole_run_hits):
    # `name not in LOCALES` is decided while no file changes LOCALES in place; a file that starts
    # to (in a function no test runs) makes it undecided, so the cached results cannot stand
    project = _write(tmp_path / "p", {
        "pyproject.toml": "[tool.pytest.ini_options]\npythonpath = ['src']\n",
        "src/app/__init__.py": "",
        "src/app/loc.py": """\
            import os
            LOCALES = {"en": 1}
            def humanize(name):
                if name not in LOCALES:
                    raise ValueError(name)
                return os.environ.get("LOC_READ")
        """,
        "src/app/other.py": "from app import loc\n\ndef unrelated(x):\n    return loc.LOCALES.get(x)\n",
        "tests/test_loc.py": """\
            from app.loc import humanize
            def test_unknown():
                try:
                    humanize("klingon")
                except ValueError:
                    pass
        """,
    })
    assert _run(project).findings == []
    (project / "src/app/other.py").write_text(
        "from app import loc\n\ndef unrelated(x):\n    loc.LOCALES['klingon'] = x\n", encoding="utf-8")
    again = _run(project)
    assert again.statistics["tests_analysed"] == 1, again.statistics
    assert [f.code for f in again.findings] == ["HT103"]
    assert to_json(again) == _cold(project)
