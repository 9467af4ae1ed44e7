"""Value flow through pytest fixtures and parameters (contract section 3), fixture flow-fixtures.

Fixture return and yield values, fixtures of fixtures, @pytest.fixture(name=...), overriding a
conftest fixture by name in a test module, usefixtures, autouse fixtures, parametrize values
and request.param.
"""
import pytest

from hermetic.api import run_check

from helpers import (fixture_suite, Expect, Silent, line_of, listed_at)

FIX = "flow-fixtures"
SP = "src/inbox/spool.py"
TF = "tests/test_fixtures.py::"
DELIVER = "target.write_text(text)"
INDEX = "return sqlite3.connect(dsn)"

EXPECTED = [
    # request.cls.X = ... in a class-scoped fixture: the test methods' self.X
    Expect("request-cls-attribute", "HT104", "src/inbox/stamps.py", "return time.time()",
           tests=["tests/test_class_attribute.py::TestStamps::test_stamp_through_the_class_attribute"]),
    # a base class's function-scoped autouse fixture runs bound to the test's instance: its call of
    # a hook only the test class defines is that class's (keyring's BackendBasicTests; a new user's
    # trial), and the test reads what the fixture set on self
    Expect("fixture-method-bound-to-the-test", "HT103", "src/inbox/stores.py",
           'self.service = os.environ.get("INBOX_KEY_SERVICE")',
           tests=["tests/test_contract.py::TestKeyStore::test_service_named"]),
    # request.getfixturevalue(request.param) runs the fixture each param names (APScheduler's job
    # stores; a new user's trial); a fixture whose params name only a quiet store reaches nothing
    Expect("getfixturevalue-of-a-param", "HT102", "src/inbox/stores.py", 'self.fh = open("inbox-store.log", "a")',
           tests=["tests/test_stores.py::test_any_store"], origin="literal"),
    # request.addfinalizer(remove_marker): the finalizer runs at teardown and is reached by the test
    # (remove_scratch, on tmp_path, is silent)
    Expect("addfinalizer", "HT102", "tests/test_instance.py", "os.remove(marker)",
           tests=["tests/test_instance.py::test_marker_cleaned_up_by_a_finalizer"]),
    # an autouse fixture sets request.instance.spool: the test method's self.spool is that Spool
    # (its scratch twin, bound to tmp_path, is silent; the None its teardown sets comes after the test)
    Expect("request-instance", "HT102", SP, '(Path(self.folder) / "flushed").write_text("")',
           tests=["tests/test_instance.py::TestSpool::test_flush"]),
    # a module-scoped fixture is set up before a function-scoped autouse one moves HOME
    Expect("scope-order", "HT102", "tests/test_scope_order.py", 'rc_path_early.write_text("x"',
           tests=["tests/test_scope_order.py::test_rc_written_early"], origin="home"),
    # the same when the module-scoped fixture is requested only through a usefixtures one (pytest
    # sorts the whole closure by scope); its twin behind a function-scoped path is silent
    Expect("scope-order-through-a-dependency", "HT102", "tests/test_scope_order.py",
           'rc_path_early.rename(rc_path_early.with_suffix(".bak"))',
           tests=["tests/test_scope_order.py::test_defaults_without_an_rc"], origin="home"),
    Expect("scope-order-through-a-dependency-read", "HT102", "tests/test_scope_order.py",
           "if rc_path_early.exists():", tests=["tests/test_scope_order.py::test_defaults_without_an_rc"],
           origin="home"),
    Expect("deliver", "HT102", SP, DELIVER, tests=[
        TF + "test_returned_live_fixture",        # fixture returns settings.SPOOL
        TF + "test_conftest_target_dir",          # conftest's target_dir (not overridden here)
        TF + "test_usefixtures_live",             # usefixtures of a fixture delivering to SPOOL
        "tests/test_autouse.py::test_nothing_else",  # autouse fixture delivering to SPOOL
        "tests/test_instance.py::test_deliver_to_the_plugin_spool",  # a fixture conftest imports
    ], origin="module-constant"),
    Expect("index", "HT101", SP, INDEX, tests=[
        TF + "test_index_parametrized_mixed",     # one parameter is an absolute server path
        TF + "test_index_request_param_replica",  # request.param is an absolute server path
    ]),
]

# (sink snippet, sink code, node id of a test that reaches it with a controlled value, form)
CONTROLLED = [
    (DELIVER, "HT102", TF + "test_returned_fixture", "fixture-return"),
    (DELIVER, "HT102", TF + "test_yielded_fixture", "fixture-yield"),
    (DELIVER, "HT102", TF + "test_fixture_of_fixture", "fixture-of-fixture"),
    (DELIVER, "HT102", TF + "test_named_fixture", "fixture-name-argument"),
    (DELIVER, "HT102", TF + "test_usefixtures_scratch", "usefixtures"),
    (DELIVER, "HT102", "tests/test_override.py::test_overridden_target_dir", "override-by-name"),
    (INDEX, "HT101", TF + "test_index_parametrized_in_memory", "parametrize"),
    (INDEX, "HT101", TF + "test_index_request_param_memory", "request-param"),
]

# fixtures that run the test in a folder of their own (pre-commit's in_tmpdir / in_git_dir)
WF = "tests/test_working_folder.py"
EXPECTED += [
    # near misses: a fixture changing into a folder of the checkout, a chdir no fixture puts back
    Expect("folder-of-the-checkout", "HT102", WF, 'with open("build-output.txt", "w") as fh:',
           tests=[WF + "::test_build"]),
    Expect("chdir-not-put-back", "HT304", WF, 'os.chdir("/")', tests=[WF + "::test_chdir_here"]),
    # a class made in a function: its methods see the function's variables
    Expect("local-class-closure", "HT102", WF, "with open(target, \"w\") as fh:",
           tests=[WF + "::test_local_class_sees_the_function_variable"], origin="home"),
]

SILENT = [
    # tmpdir.join(...).strpath from a factory class made in the fixture, then a context manager
    # that changes into it around the fixture's yield
    Silent("made-folder", WF, 'os.mkdir("bin")', "the test runs in a folder made in tmpdir"),
    # py.path's ensure_dir() is the folder, as_cwd() runs the block there and changes back on exit
    Silent("as-cwd", WF, 'with open("setup.py", "w") as fh:', "the test runs in tmpdir's repo folder"),
    Silent("chdir-put-back", WF, 'os.chdir(str(in_repo.join("sub")))', "as_cwd() changes back at teardown"),
    # contextlib.chdir: the same for the block
    Silent("chdir-context", WF, 'with open("notes.txt", "w") as fh:', "the block runs in tmp_path"),
    Silent("chdir-context-put-back", WF, 'os.chdir(tmp_path / "sub")', "contextlib.chdir changes back on exit"),
    Silent("addfinalizer-on-tmp", "tests/test_instance.py", "os.remove(scratch)", "a finalizer removing a tmp_path file"),
    Silent("scope-order-late", "tests/test_scope_order.py", 'rc_path_late.write_text("x"',
           "a function-scoped fixture after the autouse HOME move"),
    Silent("autouse-tmp", SP, '(Path(folder) / ".clean").write_text("")', "reached only from an autouse tmp_path fixture"),
    Silent("fixture-mkdir-tmp", "tests/conftest.py", "folder.mkdir()", "T1: inside tmp_path"),
    Silent("autouse-call", "tests/test_autouse.py", "spool.mark_clean(tmp_path)", "tmp_path"),
]

findings, test_reported, test_silent, test_nothing_else = fixture_suite(FIX, EXPECTED, SILENT)


@pytest.mark.parametrize("snippet, code, node, form", CONTROLLED, ids=[c[3] for c in CONTROLLED])
def test_controlled_test_not_listed(findings, snippet, code, node, form):
    assert node not in listed_at(FIX, findings, code, SP, snippet)




def test_a_trace_through_a_fixture_starts_at_the_test(findings):
    # contract section 7: the trace runs from the test; the autouse / requested fixture follows
    line = line_of(FIX, SP, DELIVER)
    [f] = [f for f in findings if f.code == "HT102" and f.path == SP and f.line == line]
    first, second = f.trace[0], f.trace[1]
    assert f"{first.path}::{first.function}" in f.tests
    assert second.path.startswith("tests/") and second.function != first.function


def _fixture_writing(tmp_path, name: str, write: str):
    """The one finding of a project whose only test requests fixture ``name``, whose body runs
    ``write``."""
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n", encoding="utf-8")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / f"test_{name}.py").write_text(
        f"import pytest\nfrom pathlib import Path\n\n\n@pytest.fixture\ndef {name}():\n"
        f"    {write}\n\n\ndef test_{name}({name}):\n    assert True\n", encoding="utf-8")
    report, _cfg = run_check([], tmp_path)
    [f] = report.findings
    return f


def test_a_sink_in_a_fixture_body_gets_the_test_code_fix(tmp_path):
    f = _fixture_writing(tmp_path, "report", "Path('out.txt').write_text('x')")
    assert [s.function for s in f.trace] == ["test_report", "test_report.report"]
    assert f.fix.startswith("build the path from tmp_path")


def test_a_home_folder_path_in_a_fixture_body_gets_the_home_fix(tmp_path):
    # a fixture writing into the real home folder: redirect HOME (a new user's trial on pydantic-settings)
    f = _fixture_writing(tmp_path, "rc", "(Path.home() / '.apprc').write_text('x')")
    assert f.fix.startswith('monkeypatch.setenv("HOME", str(tmp_path))'), f.fix
