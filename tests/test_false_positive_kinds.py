"""Kinds of false positive found on real suites (docs/real-world.md), each pinned by a
finding that must stay silent and a near twin that must still be reported."""
import textwrap

from hermetic.api import run_check


def project(tmp_path, files):
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text), encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\npythonpath = ["src"]\n', encoding="utf-8")
    report, _ = run_check([], tmp_path)
    return sorted((f.code, f.path, f.line) for f in report.findings)


def test_monkeypatch_instance_in_session_fixture_controls_env(tmp_path):
    found = project(tmp_path, {
        "src/app/__init__.py": "",
        "src/app/flags.py": """
            import os
            def debug():
                return os.environ.get("APP_DEBUG")
            def verbose():
                return os.environ.get("APP_VERBOSE")
        """,
        "tests/conftest.py": """
            import pytest
            from _pytest import monkeypatch

            @pytest.fixture(scope="session", autouse=True)
            def standard_env():
                mp = monkeypatch.MonkeyPatch()
                for key in ("APP_DEBUG", "APP_OTHER"):
                    mp.delenv(key, False)
                yield
                mp.undo()
        """,
        "tests/test_flags.py": """
            from app import flags
            def test_debug():
                assert flags.debug() is None
            def test_verbose():
                assert flags.verbose() is None
        """,
    })
    assert found == [("HT103", "src/app/flags.py", 6)]


def test_main_guard_does_not_run_at_import(tmp_path):
    found = project(tmp_path, {
        "src/app/__init__.py": "",
        "src/app/cli.py": """
            import os
            def main():
                return os.environ.get("APP_MODE")
            if __name__ == "__main__":
                main()
            if __name__ == "app.cli":
                STARTED_WITH = os.environ.get("APP_START")
        """,
        "tests/test_cli.py": """
            from app import cli
            def test_imports():
                assert cli
        """,
    })
    assert found == [("HT203", "src/app/cli.py", 8)]


def test_none_is_not_a_path_and_guards_short_circuit(tmp_path):
    found = project(tmp_path, {
        "src/app/__init__.py": "",
        "src/app/load.py": """
            import os
            def load(path=None):
                if path is not None and os.path.isfile(path):
                    return open(path).read()
                return ""
            def load_default(path=None):
                return open(path or "/etc/app.conf").read()
        """,
        "tests/test_load.py": """
            from app.load import load, load_default
            def test_load_nothing():
                assert load() == ""
            def test_load_default():
                assert load_default()
        """,
    })
    assert found == [("HT102", "src/app/load.py", 8)]


def test_clock_function_captured_at_import_is_ht204_not_ht104(tmp_path):
    found = project(tmp_path, {
        "src/app/__init__.py": "",
        "src/app/timing.py": """
            import time
            clock = time.time
            def elapsed(start):
                return clock() - start
            def now():
                return time.time()
        """,
        "tests/test_timing.py": """
            from app import timing
            def test_elapsed():
                assert timing.elapsed(0) > 0
            def test_now():
                assert timing.now() > 0
        """,
    })
    assert found == [("HT104", "src/app/timing.py", 7), ("HT204", "src/app/timing.py", 3)]


def test_expandvars_reads_the_variables_named_in_its_argument(tmp_path):
    found = project(tmp_path, {
        "src/app/__init__.py": "",
        "src/app/paths.py": """
            import os
            def expand(p):
                return os.path.expandvars(p)
        """,
        "tests/test_paths.py": """
            from app.paths import expand
            def test_plain():
                assert expand("a/b") == "a/b"
            def test_set(monkeypatch):
                monkeypatch.setenv("COOKIES", "x")
                assert expand("$COOKIES/a") == "x/a"
            def test_unset():
                assert expand("${JAR}/a")
        """,
    })
    assert found == [("HT103", "src/app/paths.py", 4)]


def test_environment_snapshots_are_not_reads(tmp_path):
    found = project(tmp_path, {
        "src/app/__init__.py": "",
        "src/app/run.py": """
            import os
            import subprocess
            def env_for_child():
                return dict(os.environ)
        """,
        "tests/test_run.py": """
            import os
            from app.run import env_for_child
            def test_env():
                saved = os.environ.copy()
                assert env_for_child() == saved
        """,
    })
    assert found == []


def test_module_proxy_objects_are_not_containers(tmp_path):
    found = project(tmp_path, {
        "src/app/__init__.py": "",
        "src/app/state.py": """
            import contextvars
            from somewhere import LocalProxy
            session = LocalProxy(lambda: None)
            REGISTRY = {}
        """,
        "tests/test_state.py": """
            from app import state
            def test_session():
                state.session["user"] = "x"
            def test_registry():
                state.REGISTRY["k"] = 1
        """,
    })
    assert found == [("HT303", "tests/test_state.py", 6)]


def test_finalizer_functions_restore_sys_path(tmp_path):
    found = project(tmp_path, {
        "tests/test_paths.py": """
            import sys
            def test_restored(request):
                original = sys.path[:]
                def reset():
                    sys.path[:] = original
                request.addfinalizer(reset)
                sys.path.insert(0, "x")
            def test_leaks():
                sys.path.insert(0, "y")
        """,
    })
    assert found == [("HT304", "tests/test_paths.py", 10)]


def test_inline_suppressions_and_ht900(tmp_path):
    files = {
        "src/app/__init__.py": "",
        "src/app/cfg.py": """
            import os
            def token():
                return os.environ.get("TOKEN", "")  # hermetic: ignore[HT103]
            def label(now):
                return now.isoformat()  # hermetic: ignore[HT104]
            def level():
                return os.environ.get("LEVEL", "")
        """,
        "tests/test_cfg.py": """
            from app import cfg
            def test_token():  # hermetic: ignore[HT401]
                assert cfg.token() == "" and cfg.level() == ""
        """,
    }
    found = project(tmp_path, files)
    assert found == [("HT103", "src/app/cfg.py", 8), ("HT900", "tests/test_cfg.py", 3)]
    report, _ = run_check([], tmp_path, report_unused_suppressions=True)
    assert sorted((f.code, f.path, f.line) for f in report.findings) == [
        ("HT103", "src/app/cfg.py", 8), ("HT900", "src/app/cfg.py", 6), ("HT900", "tests/test_cfg.py", 3)]


def test_a_suppression_naming_no_rule_is_ht900_with_the_flag_only(tmp_path):
    # a misspelt code suppresses nothing: HT900 with --report-unused-suppressions, as the contract
    # says of every suppression that suppresses nothing (only HT4xx ones are said whatever the flags)
    files = {
        "tests/test_env.py": """
            import os
            def test_a():
                os.getenv("X")  # hermetic: ignore[HT999]
            def test_b():
                os.getenv("Y")  # hermetic: ignore[HT1, BOGUS]
            def test_c():
                os.getenv("Z")  # hermetic: ignore[HT103]
        """,
    }
    found = project(tmp_path, files)
    assert found == [("HT103", "tests/test_env.py", 4)]
    report, _ = run_check([], tmp_path, report_unused_suppressions=True)
    hits = sorted((f.code, f.path, f.line) for f in report.findings)
    assert hits == [("HT103", "tests/test_env.py", 4), ("HT900", "tests/test_env.py", 4),
                    ("HT900", "tests/test_env.py", 6)]
    assert "no rule has that code" in next(f.message for f in report.findings if f.line == 4 and f.code == "HT900")


def test_noqa_with_hermetic_codes_suppresses_like_hermetic_ignore(tmp_path):
    # `# noqa: HT103` is `# hermetic: ignore[HT103]`; a bare `# noqa` or other tools' codes are not ours
    found = project(tmp_path, {
        "tests/test_env.py": """
            import os
            def test_a():
                os.getenv("A")  # noqa: HT103
            def test_b():
                os.getenv("B")  # noqa: E501,HT103
            def test_c():
                os.getenv("C")  # noqa
            def test_d():
                os.getenv("D")  # noqa: E501
            def test_e():
                os.getenv("E")  # noqa: HT104
        """,
        "tests/test_guarded.py": """
            def test_f():  # noqa: HT401
                pass
        """,
    })
    assert found == [("HT103", "tests/test_env.py", 8), ("HT103", "tests/test_env.py", 10),
                     ("HT103", "tests/test_env.py", 12), ("HT900", "tests/test_guarded.py", 2)]


def test_only_patchers_need_a_stop(tmp_path):
    found = project(tmp_path, {
        "tests/test_threads.py": """
            import threading
            import unittest
            from unittest import mock

            def test_thread_start():
                t = threading.Thread(target=print)
                t.start()

            class TestWithTeardown(unittest.TestCase):
                def setUp(self):
                    self.p = mock.patch("os.getcwd")
                    self.p.start()
                def tearDown(self):
                    self.p.stop()
                def test_x(self):
                    pass

            def test_leaked_patcher():
                p = mock.patch("os.getcwd")
                p.start()
        """,
    })
    assert found == [("HT304", "tests/test_threads.py", 21)]


def test_patched_builtins_class_attributes_and_call_time_imports(tmp_path):
    found = project(tmp_path, {
        "src/app/__init__.py": "",
        "src/app/logs.py": """
            class Store:
                def path(self):
                    return "/var/log/app.log"
                def write(self, text):
                    with open(self.path(), "a") as fh:
                        fh.write(text)
            def mongo():
                from pymongo import MongoClient
                return MongoClient("mongodb://db.internal")
        """,
        "tests/test_logs.py": """
            from unittest.mock import patch
            from app.logs import Store, mongo

            @patch("builtins.open")
            def test_open_patched(fake_open):
                Store().write("x")

            def test_method_patched(monkeypatch, tmp_path):
                monkeypatch.setattr(Store, "path", lambda self: str(tmp_path / "a.log"))
                Store().write("x")

            def test_client_patched():
                with patch("pymongo.MongoClient"):
                    mongo()

            def test_real():
                mongo()
        """,
    })
    assert found == [("HT101", "src/app/logs.py", 10)]


def test_isinstance_guard_and_reload_in_finally(tmp_path):
    found = project(tmp_path, {
        "src/app/__init__.py": "",
        "src/app/db.py": """
            import os
            import sqlite3
            from pathlib import Path
            def open_db(path=None, memory=False):
                if memory:
                    return sqlite3.connect(":memory:")
                if isinstance(path, (str, Path)):
                    if os.path.exists(path):
                        os.remove(path)
                    return sqlite3.connect(str(path))
        """,
        "tests/test_db.py": """
            import importlib
            from app import db

            def test_memory():
                assert db.open_db(memory=True)

            def test_reload():
                try:
                    pass
                finally:
                    importlib.reload(db)
        """,
    })
    assert found == [("HT301", "tests/test_db.py", 12)]


def test_teardown_test_restores(tmp_path):
    found = project(tmp_path, {
        "src/app/__init__.py": "",
        "src/app/reg.py": "REGISTRY = {}\n",
        "tests/test_reg.py": """
            from app import reg

            class TestReg:
                def setup_method(self):
                    reg.REGISTRY["x"] = 1
                def teardown_test(self):
                    del reg.REGISTRY["x"]
                def test_x(self):
                    assert reg.REGISTRY
        """,
    })
    assert found == []


def test_join_with_an_absolute_part_and_chdir_context_managers(tmp_path):
    found = project(tmp_path, {
        "src/app/__init__.py": "",
        "src/app/files.py": """
            import contextlib
            import os
            ROOT = os.getcwd()
            def load(name):
                return open(os.path.join(ROOT, name)).read()
            @contextlib.contextmanager
            def work_in(folder):
                old = os.getcwd()
                os.chdir(folder)
                yield
                os.chdir(old)
            def listing(folder):
                with work_in(folder):
                    return list(os.walk("."))
        """,
        "tests/test_files.py": """
            from pathlib import Path
            from app import files
            DATA = Path(__file__).parent / "data"
            def test_absolute(tmp_path):
                assert files.load(str(tmp_path / "c.cfg")) is not None
            def test_relative():
                assert files.load("c.cfg") is not None
            def test_listing_shipped():
                assert files.listing(str(DATA))
            def test_listing_tmp(tmp_path):
                assert files.listing(tmp_path)
        """,
    })
    assert found == [("HT102", "src/app/files.py", 6), ("HT201", "src/app/files.py", 4)]


def test_relative_path_under_a_chdir_to_an_unknown_folder_is_unknown(tmp_path):
    found = project(tmp_path, {
        "src/app/__init__.py": "",
        "src/app/walk.py": """
            import contextlib
            import os
            @contextlib.contextmanager
            def work_in(folder):
                old = os.getcwd()
                try:
                    os.chdir(folder)
                    yield
                finally:
                    os.chdir(old)
            def listing(root):
                with work_in(os.listdir(root)[0]):
                    return list(os.walk("."))
            def outside():
                return os.listdir(".")
        """,
        "tests/test_walk.py": """
            from app import walk
            def test_listing(tmp_path):
                assert walk.listing(tmp_path) is not None
            def test_outside():
                assert walk.outside() is not None
        """,
    })
    assert found == [("HT102", "src/app/walk.py", 16)]


def test_state_reset_by_the_projects_own_pytest_hook_is_restored(tmp_path):
    found = project(tmp_path, {
        "src/app/__init__.py": "",
        "src/app/sessions.py": """
            _open = set()
            _log = []
            def session():
                s = object()
                _open.add(s)
                _log.append(s)
                return s
            def close_all():
                _open.clear()
        """,
        "src/app/plugin.py": """
            from app import sessions
            def after_test(item):
                sessions.close_all()
            def pytest_runtest_teardown(item, nextitem):
                _run(after_test, item)
            def _run(fn, *args):
                return fn(*args)
        """,
        "tests/test_sessions.py": """
            from app import sessions
            def test_session():
                assert sessions.session()
        """,
    })
    assert found == [("HT303", "tests/test_sessions.py", 4)]


def test_hook_reaching_a_module_bound_late(tmp_path):
    found = project(tmp_path, {
        "src/app/__init__.py": "",
        "src/app/fixtures.py": """
            _open = set()
            def session():
                s = object()
                _open.add(s)
                return s
            def after_test():
                _open.clear()
        """,
        "src/app/plugin_base.py": """
            fixtures = None
            def post_begin():
                global fixtures
                from app import fixtures
            def after_test(item):
                fixtures.after_test()
        """,
        "src/app/pytestplugin.py": """
            from app import plugin_base
            def pytest_runtest_teardown(item, nextitem):
                plugin_base.after_test(item)
        """,
        "tests/test_sessions.py": """
            from app import fixtures
            def test_session():
                assert fixtures.session()
        """,
    })
    assert found == []


def test_imported_modules_have_a_file_so_the_cwd_fallback_is_not_taken(tmp_path):
    found = project(tmp_path, {
        "src/app/__init__.py": "",
        "src/app/h.py": """
            import os
            import sys
            def get_root_path(import_name):
                mod = sys.modules.get(import_name)
                if mod is not None and hasattr(mod, "__file__") and mod.__file__ is not None:
                    return os.path.dirname(os.path.abspath(mod.__file__))
                return os.getcwd()
            def read(name):
                return open(os.path.join(get_root_path(name), "static/x.html")).read()
            def write(name):
                open(os.path.join(get_root_path(name), "out.txt"), "w").write("x")
        """,
        "tests/test_h.py": """
            from app import h
            def test_read():
                h.read(__name__)
            def test_write():
                h.write(__name__)
        """,
    })
    assert found == [("HT102", "src/app/h.py", 12)]


def test_tests_bound_by_assignment_are_collected(tmp_path):
    """pytest collects `test_x = make_test(...)` (a function bound by assignment); so does the
    analysis, under the name it is bound to."""
    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\npythonpath = ["src"]\n', encoding="utf-8")
    (tmp_path / "src" / "app").mkdir(parents=True)
    (tmp_path / "src" / "app" / "__init__.py").write_text(
        "import os\n\n\ndef rc():\n    return open(os.path.expanduser('~/.apprc')).read()\n", encoding="utf-8")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_made.py").write_text(
        "from app import rc\n\n\ndef make():\n    def check():\n        rc()\n    return check\n\n\n"
        "test_made, helper = make(), make()\n", encoding="utf-8")
    report, _ = run_check([], tmp_path)
    assert report.tests == 1
    assert [f.tests for f in report.findings if f.code == "HT102"] == [["tests/test_made.py::test_made"]]


def test_an_inherited_test_is_anchored_where_its_code_is(tmp_path):
    # SQLAlchemy's dialect suite (`from sqlalchemy.testing.suite import *` in a one-line file)
    # and every base class of tests kept in another file: the finding's line is in the file that
    # defines the test, not in the one collecting it
    found = project(tmp_path, {
        "tests/__init__.py": "",
        "tests/suite.py": """
            from datetime import datetime


            class ClockTests:
                # inherited by the test classes of other files
                def test_stamp(self):
                    return datetime.now()
        """,
        "tests/test_dialect.py": """
            from datetime import datetime
            from tests.suite import ClockTests


            class TestDialect(ClockTests):
                def test_local_stamp(self):
                    return datetime.now()
        """,
    })
    assert found == [("HT104", "tests/suite.py", 8), ("HT104", "tests/test_dialect.py", 8)]


def test_an_augmented_string_keeps_the_origin_of_what_it_extends(tmp_path):
    # pytest's argcomplete: `prefix += "*"` then glob(prefix) globs what the test passed, not
    # the code's "*" in the working folder
    (tmp_path / "src/app").mkdir(parents=True)
    (tmp_path / "src/app/__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "src/app/complete.py").write_text(textwrap.dedent("""
        from glob import glob


        def complete(prefix):
            if "*" not in prefix:
                prefix += "*"
            return glob(prefix)
    """), encoding="utf-8")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests/test_complete.py").write_text(textwrap.dedent("""
        from app.complete import complete


        def test_system_folder():
            complete("/usr/")
    """), encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\npythonpath = ["src"]\n', encoding="utf-8")
    report, _ = run_check([], tmp_path)
    [found] = report.findings
    assert (found.code, found.line) == ("HT102", 8)
    assert "the literal '/usr/*', tests/test_complete.py:6" in found.message, found.message


def test_a_fixture_reaches_its_users_not_a_test_naming_a_local_like_it(tmp_path):
    # dynaconf's trial: with one test selected by node id, a module fixture's environment write
    # was listed for a test whose local variable has the fixture's name
    project(tmp_path, {
        "src/app/__init__.py": "",
        "tests/conftest.py": """
            import os
            import pytest
            @pytest.fixture(scope="module")
            def settings():
                os.environ["APP_HOST"] = "host.com"
                return {"host": "host.com"}
        """,
        "tests/test_a.py": """
            def test_uses_settings(settings):
                assert settings["host"] == "host.com"
            def test_no_settings():
                settings = {"x": 1}
                assert settings["x"] == 1
        """,
    })
    only, _ = run_check(["tests/test_a.py::test_no_settings"], tmp_path)
    assert only.findings == []
    both, _ = run_check(["tests/test_a.py"], tmp_path)   # near miss: the fixture's user is selected
    assert [(f.code, f.tests) for f in both.findings] == [("HT302", ["tests/test_a.py::test_uses_settings"])]
