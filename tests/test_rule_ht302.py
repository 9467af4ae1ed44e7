"""HT302: os.environ / os.putenv / os.unsetenv mutated without restore (fixture ht302-environ).

Fires at the mutation: item assignment, ``pop``, ``update`` in a fixture, ``setdefault`` in
``setUp``, ``putenv``, ``unsetenv``, a ``finally`` that restores a different variable, a ``finally``
that sets a new value instead of the saved one. Silent: monkeypatch ``setenv`` / ``delenv``,
``patch.dict(os.environ)`` (context manager, decorator with ``clear=True``, ``start()`` +
``addCleanup(patcher.stop)``) and writes inside it, ``try/finally`` and fixture code after ``yield``
that put back the saved value, ``tearDown``, a copy of the environment, conftest module level
(session configuration), and a module-scoped autouse fixture that snapshots and restores the
environment (issue 4), and a fixture the test requests (directly or through another fixture)
whose teardown puts the variable back (``pop`` / ``del`` / the saved value after ``yield``, a
whole-environment snapshot, a lambda finalizer); a lambda finalizer or ``addCleanup(os.environ.pop,
...)`` in the test itself. Still reported: the same fixture when the test changes another variable,
the variable changed by a test that does not request it, a plain fixture that pops at set-up. The
save read before a direct write is controlled by that write (S2).
"""

from helpers import (fixture_suite, listed_suite, Expect, Silent, at, line_of)

FIX = "ht302-environ"
TL = "tests/test_leaks.py"
TR = "tests/test_restored.py"
CF = "tests/conftest.py"


EXPECTED = [
    # a project function writing or removing variables it is given (names computed at run time)
    Expect("project-function-computed-names", "HT302", TL, 'envfile.load_pairs([("DEPLOY_FLAVOUR", "plain")])'),
    Expect("project-function-file-entries", "HT302", TL, 'envfile.load_file(tmp_path / "deploy.env")'),
    Expect("project-function-pop", "HT302", TL, 'envfile.forget("DEPLOY_TIER")'),
    Expect("project-function-named-by-a-local", "HT302", TL, "envfile.mark_deploy()"),
    # a session fixture's snapshot is put back after the whole run, not before the next test (section 4)
    Expect("session-snapshot-restores-too-late", "HT302", TL, 'os.environ["DEPLOY_SUITE"] = "nightly"'),
    Expect("module-snapshot-after-the-next-test", "HT302", "tests/isolated/test_snapshot_order.py",
           'os.environ["DEPLOY_SHELF"] = "first"'),
    Expect("item-assignment", "HT302", TL, 'os.environ["DEPLOY_REGION"] = "us"'),
    # near misses: a write before monkeypatch saved the variable (its undo puts that value back),
    # a removal before the test's own set
    Expect("write-before-monkeypatch-saved-it", "HT302", TL, 'os.environ[key] = "d1"'),
    Expect("removed-before-set", "HT302", TL, 'del os.environ["DEPLOY_CRATE"]'),
    Expect("set-after-removal", "HT302", TL, 'os.environ["DEPLOY_CRATE"] = "c1"'),
    Expect("removed-after-monkeypatch-undo", "HT302", TL, 'del os.environ["DEPLOY_HALL"]'),
    Expect("pop", "HT302", TL, 'os.environ.pop("DEPLOY_TOKEN", None)'),
    Expect("update-in-fixture", "HT302", CF, 'os.environ.update({"DEPLOY_TIER": "canary"})'),
    Expect("putenv", "HT302", TL, 'os.putenv("DEPLOY_TRACE", "1")'),
    Expect("unsetenv", "HT302", TL, 'os.unsetenv("DEPLOY_TRACE")'),
    Expect("setdefault-in-setUp", "HT302", TL, 'os.environ.setdefault("DEPLOY_TIER", "standard")'),
    Expect("finally-restores-other-variable", "HT302", TL, 'os.environ["DEPLOY_TIER"] = "spot"'),
    Expect("finally-sets-new-value", "HT302", TL, 'os.environ["DEPLOY_REGION"] = "ap"'),
    # a requested fixture's teardown covers the variables it puts back, for its own tests only
    Expect("requested-fixture-restores-other-variable", "HT302", TL, 'os.environ["DEPLOY_AISLE"] = "a1"',
           tests=[TL + "::test_fixture_removes_another_variable"]),
    Expect("restoring-fixture-not-requested", "HT302", TL, 'os.environ["DEPLOY_ZONE"] = "z3"',
           tests=[TL + "::test_zone_without_the_cleanup_fixture"]),
    Expect("lambda-finalizer-restores-other-variable", "HT302", TL, 'os.environ["DEPLOY_ROW"] = "w1"'),
    # a plain fixture's code runs before the test: not a teardown
    Expect("fixture-clears-before-the-test", "HT302", TL, 'os.environ["DEPLOY_BAY"] = "b1"'),
    Expect("fixture-pop-at-setup", "HT302", CF, 'os.environ.pop("DEPLOY_BAY", None)'),
    # python-dotenv's load_dotenv() sets the file's variables (catalogue [environment-writers]),
    # through a project function (anchored at the test's call) or in the test
    Expect("dotenv-through-project", "HT302", TL, 'config.load_settings(tmp_path / ".env")'),
    Expect("dotenv-in-test", "HT302", TL, 'dotenv.load_dotenv(tmp_path / ".env")'),
    # `if K in os.environ: os.environ.pop(K)` leaves K unset either way: the pop is the change, the
    # membership test no read (near miss: an else that shows which way was taken reads it)
    Expect("guarded-pop", "HT302", TL, 'os.environ.pop("DEPLOY_LANE")'),
    # a method of the object a project fixture returns (`loader.load(...)`); near miss: its other
    # method, which writes no variable
    Expect("fixture-object-method", "HT302", TL, 'loader.load(tmp_path / ".env")'),
    Expect("guarded-pop-with-else", "HT302", TL, 'os.environ.pop("DEPLOY_DOCK")'),
    Expect("membership-read-with-else", "HT103", TL, 'if "DEPLOY_DOCK" in os.environ:'),
]
# may be reported or not: the finally's own write leaves a value of its own
OPTIONAL = [
    Expect("finally-new-value-write", "HT302", TL, 'os.environ["DEPLOY_REGION"] = "eu"'),
]

LISTED = [
    ("item-assignment", TL, 'os.environ["DEPLOY_REGION"] = "us"', [TL + "::test_region_from_direct_write"], ""),
    ("update-in-fixture", CF, "os.environ.update({\"DEPLOY_TIER\"", [TL + "::test_tier_from_leaking_fixture"], ""),
    ("setdefault-in-setUp", TL, "os.environ.setdefault(", [TL + "::TestDefaultTier::test_label"], ""),
    ("finally-sets-new-value", TL, 'os.environ["DEPLOY_REGION"] = "ap"', [TL + "::test_finally_sets_a_new_value"], ""),
]

SILENT = [
    Silent("computed-names-while-monkeypatch-restores", TR, 'envfile.load_pairs([("DEPLOY_FLAVOUR", "sweet")])',
           "the function's variables are not named, and monkeypatch restores some: not known, not reported"),
    Silent("monkeypatch-setitem-internals", TR, "envfile.set_stage()",
           "monkeypatch._setitem.append((os.environ, K, notset)) deletes K at teardown"),
    Silent("pytest-current-test", TR, 'envfile.mark_current("tests/test_restored.py::x (call)")',
           "pytest's runner sets PYTEST_CURRENT_TEST for every test and removes it (restored-per-test)"),
    Silent("project-function-under-patch-dict", TR, 'envfile.load_pairs([("DEPLOY_FLAVOUR", "fancy")])',
           "patch.dict(os.environ) puts the whole environment back on exit"),
    Silent("project-function-body-computed", "src/deploy/envfile.py", "os.environ[key] = value   # a name the caller gives",
           "anchored at the test's call, not in the project function"),
    Silent("uncalled-helper", "tests/conftest.py", 'os.environ.update({"RELEASE_TIER": "session"})',
           "a helper no test calls: nothing reaches it"),
    Silent("unused-fixture", "tests/conftest.py", 'os.environ["RELEASE_TIER"] = "unused"', "a fixture no test requests"),
    Silent("write-after-monkeypatch-saved-it", TR, "del os.environ[key]   # monkeypatch saved",
           "monkeypatch.setenv saved the variable first: its undo puts it back"),
    Silent("own-variable-around-monkeypatch", TR, 'os.environ["DEPLOY_GATE"] = "g0"',
           "removed by the test itself after monkeypatch's undo put it back"),
    Silent("own-variable-removed-after-undo", TR, 'del os.environ["DEPLOY_GATE"]', "the removal of its own change"),
    Silent("own-variable-set", TR, 'os.environ["DEPLOY_SHELF"] = "s1"', "the test removes it itself"),
    Silent("own-variable-removed", TR, 'del os.environ["DEPLOY_SHELF"]', "the removal of its own change"),
    Silent("setenv", TR, 'monkeypatch.setenv("DEPLOY_REGION", "us")', "restored by monkeypatch"),
    Silent("membership-guarding-its-removal", TL, 'if "DEPLOY_LANE" in os.environ:', "unset on both ways"),
    Silent("fixture-object-other-method", TL, 'assert loader.peek(tmp_path / ".env")', "peek() changes nothing"),
    Silent("dotenv-under-patch-dict", TR, 'dotenv.load_dotenv(tmp_path / ".env")', "patch.dict restores the mapping"),
    Silent("delenv", TR, 'monkeypatch.delenv("DEPLOY_REGION"', "restored by monkeypatch"),
    Silent("patch-dict-context", TR, 'mock.patch.dict(os.environ, {"DEPLOY_REGION": "sa"})', "undone on exit"),
    Silent("write-inside-patch-dict", TR, 'os.environ["DEPLOY_REGION"] = "af"',
           "patch.dict restores the whole mapping on exit"),
    Silent("write-under-patch-dict-decorator", TR, 'os.environ["DEPLOY_TIER"] = "edge"',
           "the decorator's patch.dict (clear=True) restores the whole mapping"),
    Silent("try-finally-write", TR, 'os.environ["DEPLOY_REGION"] = "cn"', "the finally puts back the saved value"),
    Silent("try-finally-save-read", TR, 'saved = os.environ.get("DEPLOY_REGION")',
           "S2: the test sets DEPLOY_REGION itself"),
    Silent("try-finally-restore", TR, 'os.environ["DEPLOY_REGION"] = saved', "the restore itself"),
    Silent("yield-fixture-write", CF, 'os.environ["DEPLOY_TIER"] = "batch"', "restored after yield"),
    Silent("yield-fixture-save-read", CF, 'old = os.environ.get("DEPLOY_TIER")',
           "S2: the fixture sets DEPLOY_TIER itself"),
    Silent("patcher-start-addCleanup", TR, "patcher.start()", "stopped through addCleanup"),
    Silent("tearDown-write", TR, 'os.environ["DEPLOY_REGION"] = "oc"', "tearDown puts back the saved value"),
    Silent("setUp-save-read", TR, 'self._saved_region = os.environ.get("DEPLOY_REGION")',
           "S2: setUp sets DEPLOY_REGION itself"),
    Silent("different-variable-save-read", TL, 'saved_region = os.environ.get("DEPLOY_REGION")',
           "S2: the test writes DEPLOY_REGION itself (in the finally)"),
    Silent("read-after-own-write", TL, 'config.tier_label(os.environ["DEPLOY_TIER"])',
           "S2: the test set DEPLOY_TIER itself"),
    Silent("copy-of-environ", TR, 'env["DEPLOY_REGION"] = "us"', "a copy, not os.environ"),
    Silent("environ-copy-read", TR, "env = os.environ.copy()", "a snapshot, no variable read"),
    Silent("conftest-module-level", CF, 'os.environ.setdefault("DEPLOY_STAGE", "test")',
           "conftest module level is session configuration, not pollution"),
    Silent("module-snapshot-fixture", "tests/isolated/test_snapshot.py", 'os.environ["DEPLOY_TIER"] = "isolated"',
           "a module-scoped autouse fixture snapshots and restores os.environ"),
    Silent("module-snapshot-last-test", "tests/isolated/test_snapshot_order.py", 'os.environ["DEPLOY_AISLE"] = "last"',
           "the last test of its module: the module-scoped snapshot is put back before any other test runs"),
    Silent("snapshot-restore", "tests/isolated/conftest.py", "os.environ.clear()", "the snapshot restore itself"),
    Silent("requested-fixture-pop", TR, 'os.environ["DEPLOY_ZONE"] = "z1"',
           "the requested fixture pops DEPLOY_ZONE after its yield"),
    Silent("requested-fixture-del", TR, 'os.environ["DEPLOY_RACK"] = "r1"',
           "the requested fixture deletes DEPLOY_RACK after its yield"),
    Silent("requested-fixture-saved-value", TR, 'os.environ["DEPLOY_POOL"] = "p1"',
           "the requested fixture puts back the value it saved before its yield"),
    Silent("requested-fixture-save-read", CF, 'old_pool = os.environ.get("DEPLOY_POOL")',
           "S2: every test requesting it sets DEPLOY_POOL itself"),
    Silent("requested-snapshot-fixture", TR, 'os.environ["DEPLOY_CELL"] = "c1"',
           "a requested (not autouse) fixture snapshots and restores the whole os.environ"),
    Silent("requested-snapshot-restore", CF, "os.environ.update(snapshot)", "the snapshot restore itself"),
    Silent("lambda-finalizer", TR, 'os.environ["DEPLOY_SHARD"] = "s1"',
           "the requested fixture's lambda finalizer pops DEPLOY_SHARD"),
    Silent("lambda-finalizer-body", CF, 'lambda: os.environ.pop("DEPLOY_SHARD", None)', "the restore itself"),
    Silent("fixture-through-fixture", TR, 'os.environ["DEPLOY_ZONE"] = "z2"',
           "requested through another fixture, zone_cleanup pops DEPLOY_ZONE"),
    Silent("own-lambda-finalizer", TR, 'os.environ["DEPLOY_LANE"] = "l1"', "the test's own lambda finalizer pops it"),
    Silent("addCleanup-callable", TR, 'os.environ["DEPLOY_LANE"] = "l2"',
           "addCleanup(os.environ.pop, NAME, None) removes it"),
    Silent("call-time-read", "src/deploy/config.py", 'os.environ.get("DEPLOY_REGION", "eu")',
           "S2: every test reaching it sets DEPLOY_REGION (direct write, setenv, delenv, patch.dict)"),
]

findings, test_reported, test_silent, test_nothing_else = fixture_suite(FIX, EXPECTED, SILENT, OPTIONAL)
test_lists_the_affected_tests = listed_suite(FIX, "HT302", LISTED)




def test_a_test_module_top_level_write_gets_a_fix_for_the_whole_run(tmp_path, monkeypatch):
    import json

    from click.testing import CliRunner

    from hermetic.cli import cli

    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_tz.py").write_text(
        'import os\n\nos.environ["TZ"] = "UTC"\n\n\ndef test_a():\n    pass\n\n\n'
        'def test_b():\n    os.environ["APP_MODE"] = "x"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    found = json.loads(CliRunner().invoke(cli, ["check", "--no-cache", "--format", "json"]).stdout)["findings"]
    fixes = {f["line"]: f["fix"] for f in found if f["code"] == "HT302"}
    assert "pytest-env" in fixes[3]   # no test's monkeypatch reaches a module's top level
    assert fixes[11].startswith("use monkeypatch.setenv")   # near miss: in a test


def test_a_local_bound_to_a_literal_names_the_variable(findings):
    [found] = at(findings, TL, line_of(FIX, TL, "envfile.mark_deploy()"), "HT302")
    assert "os.environ['DEPLOY_MARK']" in found.message, found.message
