"""Tests a pytest plugin collects (contract section 1, "test"; fixture plugin-collected).

``tests/sa`` loads SQLAlchemy's testing plugin from its conftest: every subclass of
``sqlalchemy.testing.fixtures.TestBase`` is a test class whatever its name (``MappingTest``),
also one the test module star-imports, and its ``setup_test`` / ``teardown_test`` run around
each test; the plugin's hook answers for every name, so a plain ``test_*`` function and a
plain ``Test*`` class there are not tests, nor are a class's tests that the plugin skips on its
default database, sqlite (``__only_on__ = "postgresql"``, ``__unsupported_on__ = ("sqlite", ...)``, a
requirement of the requirements class ``setup.cfg`` names that excludes sqlite). ``tests/own`` has the project's own base class,
named by ``test-base-classes``: its subclasses are collected whatever their names, those whose
names start with ``_`` are not, and pytest's own collection stays.
"""
import textwrap

from hermetic.api import run_check
from helpers import Expect, Silent, fixture_suite, listed_suite

FIX = "plugin-collected"
ST = "src/ledger/store.py"

EXPECTED = [
    # a __backend__ class is collected under its name and the default backend's suffix, the
    # sqlite library of the running Python (alembic's trial: node ids verify could not join)
    Expect("per-backend-class-name", "HT102", ST, 'open("ledger-backend.csv", "w")',
           tests=["tests/sa/test_mapping.py::" + cls + "_sqlite+pysqlite_"
                  + __import__("sqlite3").sqlite_version.replace(".", "_") + "::" + test
                  for cls, test in (("PerBackendTest", "test_per_backend"), ("SqliteOnlyTest", "test_sqlite_only"))]),
    Expect("configured-base-subclass", "HT102", ST, 'open("ledger-scenario.csv", "w")',
           tests=["tests/own/test_scenarios.py::LedgerScenarios::test_export"]),
    Expect("configured-base-setup-test", "HT103", ST, 'os.environ.get("LEDGER_SCENARIO_TOKEN")'),
    Expect("sqlalchemy-testbase-subclass", "HT102", ST, 'open("ledger-mapping.csv", "w")'),
    Expect("sqlalchemy-setup-test", "HT103", ST, 'os.environ.get("LEDGER_MAPPING_TOKEN")'),
    Expect("sqlalchemy-teardown-test", "HT102", ST, 'os.remove("ledger-mapping.lock")'),
    Expect("sqlalchemy-star-imported-class", "HT102", ST, 'open("ledger-suite.csv", "w")',
           tests=["tests/sa/test_mapping.py::SuiteExportTest::test_suite_export"]),
    # the plugin skips a class on its default database (sqlite) by __only_on__ / __unsupported_on__;
    # near miss: sqlite among the backends it names (only that class's test is listed)
    # ... and a test whose requirement (setup.cfg's requirements class) excludes sqlite: skip_if
    # with no_support("sqlite"), only_on other backends, one combined with "+", a class's
    # __requires__; near misses: open(), fails_on (it runs), a predicate the analysis cannot read
    Expect("sqlalchemy-only-on-includes-sqlite", "HT102", ST, 'with open(f"ledger-{name}.csv", "w") as fh:',
           tests=["tests/sa/test_mapping.py::SqliteAmongOthersTest_sqlite+pysqlite_"
                  + __import__("sqlite3").sqlite_version.replace(".", "_") + "::test_sqlite_among_others_export"]
           + [f"tests/sa/test_mapping.py::RequirementsTest::test_{n}_export"
              for n in ("broken_on_sqlite", "by_predicate", "everywhere")]),
]

SILENT = [
    Silent("underscore-class", ST, 'open("ledger-hidden.csv", "w")', "a class named _* is not collected"),
    Silent("unrelated-class", ST, 'open("ledger-helper.csv", "w")', "neither Test* nor a base's subclass"),
    Silent("plain-function-under-sqlalchemy", ST, 'open("ledger-plain.csv", "w")',
           "SQLAlchemy's plugin collects only TestBase subclasses"),
    Silent("plain-class-under-sqlalchemy", ST, 'open("ledger-plain-class.csv", "w")',
           "SQLAlchemy's plugin collects only TestBase subclasses"),
]

findings, test_reported, test_silent, test_nothing_else = fixture_suite(FIX, EXPECTED, SILENT)

LISTED = [
    ("sqlalchemy-testbase-subclass", ST, 'open("ledger-mapping.csv", "w")',
     ["tests/sa/test_mapping.py::MappingTest::test_mapping"], ""),
]
test_lists_the_affected_tests = listed_suite(FIX, "HT102", LISTED)


def _check(tmp_path, files):
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text), encoding="utf-8")
    report, _ = run_check([], tmp_path)
    return report


def test_without_the_key_a_base_subclass_is_not_a_test(tmp_path):
    files = {
        "tests/base.py": "class ScenarioTest:\n    pass\n",
        "tests/test_s.py": """
            import os
            from tests.base import ScenarioTest
            class Ledger(ScenarioTest):
                def test_env(self):
                    return os.environ.get("LEDGER_X")
        """,
        "tests/__init__.py": "",
        "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["."]\n',
    }
    assert _check(tmp_path, files).tests == 0
    files["pyproject.toml"] += '[tool.hermetic]\ntest-base-classes = ["tests.base.ScenarioTest"]\n'
    report = _check(tmp_path / "with", files)
    assert report.tests == 1
    assert [f.code for f in report.findings] == ["HT103"]


def test_base_class_names_are_validated(tmp_path):
    import pytest
    from hermetic.config import ConfigError, parse_hermetic

    with pytest.raises(ConfigError, match="test-base-classes"):
        parse_hermetic({"test-base-classes": ["not a name"]}, tmp_path / "pyproject.toml")
    with pytest.raises(ConfigError, match="test-base-classes"):
        parse_hermetic({"test-base-classes": "tests.Base"}, tmp_path / "pyproject.toml")


def test_backend_specs_the_plugin_skips_a_class_by():
    from hermetic.analyse.plugins import SQLALCHEMY, skipped_on_default
    assert skipped_on_default(SQLALCHEMY, ["postgresql"], None)
    assert skipped_on_default(SQLALCHEMY, ["mysql+pymysql", "postgresql >= 12"], None)
    assert not skipped_on_default(SQLALCHEMY, ["sqlite >= 3.30", "postgresql"], None)
    assert skipped_on_default(SQLALCHEMY, None, ["sqlite"])
    assert not skipped_on_default(SQLALCHEMY, None, ["mssql"])
    assert not skipped_on_default(SQLALCHEMY, None, ["sqlite+aiosqlite"])   # another driver than the default's
    assert not skipped_on_default(SQLALCHEMY, None, ["sqlite < 3.8"])       # an old version only
    # a spec the analysis cannot read, or one naming only a driver, skips nothing
    assert not skipped_on_default(SQLALCHEMY, ["postgresql", None], None)
    assert not skipped_on_default(SQLALCHEMY, ["+asyncpg"], None)
    assert not skipped_on_default(SQLALCHEMY, None, None)


def test_requirement_exclusions_read_as_written():
    """``requirements.excludes`` on IR expressions: what skips the default backend, what runs."""
    from hermetic.analyse.requirements import excludes

    def call(fn, *args):
        return ("call", ("name", fn), list(args), [], (1, 0, 1, 0))

    def lit(v):
        return ("lit", v)

    def nothing(_name):
        return None

    assert excludes(call("skip_if", ("seq", "list", [call("no_support", lit("sqlite"), lit("x"))])), "sqlite", nothing)
    assert excludes(call("skip_if", lit("sqlite")), "sqlite", nothing)
    assert excludes(call("only_on", ("seq", "list", [lit("postgresql")])), "sqlite", nothing)
    assert excludes(call("only_on", lit("sqlite+pysqlite")), "sqlite", nothing) is None    # one driver of it
    assert excludes(call("only_on", lit("sqlite")), "sqlite", nothing) is False
    # a version or a driver names only some SQLite: skipped or not depends on what runs
    assert excludes(call("skip_if", ("seq", "list", [lit("postgresql < 12"), lit("sqlite < 3.31")])), "sqlite",
                    nothing) is None
    assert excludes(call("skip_if", lit("sqlite+aiosqlite")), "sqlite", nothing) is None
    assert excludes(call("exclude", lit("sqlite"), lit("<"), ("seq", "tuple", [lit(3), lit(31)])), "sqlite",
                    nothing) is None
    # skip_if(self.other) skips where the other requirement runs: not read
    assert excludes(call("skip_if", ("attr", ("name", "self"), "two_phase")), "sqlite",
                    {"two_phase": [call("skip_if", lit("sqlite"))]}.get) is None
    assert excludes(call("closed"), "sqlite", nothing) is True
    assert excludes(call("fails_on", lit("sqlite")), "sqlite", nothing) is False
    assert excludes(call("skip_if", ("lambda", [], lit(True), (1, 0, 1, 0))), "sqlite", nothing) is None
    # self.other is followed, and a + b skips where either does
    other = ("attr", ("name", "self"), "two_phase")
    follow = {"two_phase": [call("skip_if", lit("sqlite"))]}.get
    assert excludes(("bin", "Add", call("open"), other, (1, 0, 1, 0)), "sqlite", follow) is True
    assert excludes(("attr", ("name", "self"), "missing"), "sqlite", follow) is None


def test_a_requirement_with_a_return_under_a_branch_is_not_read():
    from hermetic.analyse.requirements import returns_of
    ret = ("return", ("call", ("name", "closed"), [], [], (1, 0, 1, 0)), 3)
    branch = ("if", ("name", "x"), [("return", ("call", ("name", "open"), [], [], (2, 0, 2, 0)), 2)], [], 1)
    assert returns_of([ret]) == [ret[1]]
    assert returns_of([branch, ret]) == []
