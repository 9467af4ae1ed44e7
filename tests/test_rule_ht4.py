"""HT401, HT402 and HT900 for HT4xx: the production-guard wiring check (contract section 5).

ht4-guard: guard ``tests.support.refuse_production``, bootstrap entries ``ledger.bootstrap`` (a
module) and ``ledger.db.connect`` (a function), an exemption table. Silent: the guard first in
the body, through a helper, in a fixture, in a fixture requested (or depended on, or autouse)
before the database fixture, in a conftest ``pytest_configure`` hook or at conftest module level;
an exempt test; a scratch ``tmp_path`` database (through the bootstrap function or a direct
``sqlite3.connect``); ``:memory:``; an import of the module that holds a bootstrap function; the
guard's own reads and the arguments evaluated for its call. HT401 at the ``def`` line (also when
decorated); HT402 at the first side effect (one per test): in the body, in a fixture, a
session-scoped fixture that runs before a function-scoped guard, a module-level bootstrap import
before a fixture guard. An inline suppression of HT4xx is HT900 and does not suppress.
HT403 (production names): tests/test_rule_ht403.py.
"""
import re

import pytest

from helpers import Expect, Silent, copy_fixture, describe, fixture_suite, listed_at
from hermetic.api import run_check

G = "ht4-guard"
TG = "tests/test_guarded.py"
TU = "tests/test_unguarded.py"
CF = "tests/conftest.py"
DB = "src/ledger/db.py"


GUARD_EXPECTED = [
    Expect("never-guard", "HT401", TU, "def test_monthly_report():", tests=[TU + "::test_monthly_report"]),
    Expect("never-guard-decorated", "HT401", TU, "def test_audit_events(event):", tests=[TU + "::test_audit_events"]),
    Expect("never-guard-suppressed-inline", "HT401", TU, "def test_suppressed_inline():",
           tests=[TU + "::test_suppressed_inline"]),
    # a parametrized test runs once per row: the guard on one row does not cover the other
    Expect("never-guard-on-one-row", "HT401", TU, "def test_guard_on_one_row(guarded):",
           tests=[TU + "::test_guard_on_one_row"]),
    Expect("too-late-in-body", "HT402", TU, "total = reports.monthly_total()", tests=[TU + "::test_guard_too_late"]),
    Expect("too-late-connection-sink", "HT402", TU, 'audit.record("start")', tests=[TU + "::test_audit_before_guard"]),
    Expect("too-late-in-fixture", "HT402", CF, "conn = db.connect()  # before its guard",
           tests=[TU + "::test_late_fixture"]),
    Expect("db-fixture-requested-before-guard", "HT402", CF, "conn = db.connect()  # no guard of its own",
           tests=[TU + "::test_db_fixture_requested_before_guard"]),
    Expect("session-fixture-before-function-guard", "HT402", CF, "# one connection for the whole session",
           tests=[TU + "::test_session_fixture_runs_before_function_guard"]),
    Expect("module-import-before-fixture-guard", "HT402", "tests/test_module_import.py", "from ledger import bootstrap",
           tests=["tests/test_module_import.py::test_bootstrap_imported_before_fixture_guard"]),
    Expect("too-late-suppressed-inline", "HT402", TU, "reports.monthly_total()  # hermetic: ignore[HT402]",
           tests=[TU + "::test_late_guard_suppressed_inline"]),
    Expect("suppression-of-HT401", "HT900", TU, "def test_suppressed_inline():  # hermetic: ignore[HT401]"),
    Expect("suppression-of-HT402", "HT900", TU, "# hermetic: ignore[HT402]"),
    # the uncontrolled connections themselves (HT101); tests pinned below where it matters
    Expect("app-db-connection", "HT101", DB, "return sqlite3.connect(path or settings.DB_FILE)", origin="module-constant"),
    Expect("audit-connection", "HT101", "src/ledger/audit.py", "sqlite3.connect(settings.AUDIT_FILE)",
           tests=[TU + "::test_audit_events", TU + "::test_audit_before_guard"], origin="module-constant"),
]

GUARD_SILENT = [
    Silent("guard-first-def", TG, "def test_guard_first_in_body():", "guard is the first statement"),
    Silent("guard-first-call", TG, "conn = db.connect()", "called after the guard"),
    Silent("guard-through-helper", TG, "def test_guard_through_helper():", "the helper calls the guard"),
    Silent("guard-in-fixture", TG, "def test_guard_in_fixture(ledger_db):", "the fixture calls the guard first"),
    Silent("guard-fixture-requested-first", TG, "def test_guard_fixture_requested_first(guard, raw_db):",
           "request order: the guard fixture first"),
    Silent("guard-fixture-dependency", TG, "def test_fixture_depending_on_guard(checked_db):",
           "dependencies before dependants"),
    Silent("dependency-fixture-connect", CF, "# its dependency ran the guard", "after its dependency's guard"),
    Silent("autouse-guard", "tests/autoguarded/test_autoguarded.py", "def test_raw_db_after_autouse_guard",
           "autouse fixtures come first within a scope"),
    Silent("fixture-connect-after-guard", CF, "conn = db.connect()  # after the guard", "after the guard"),
    Silent("pytest-configure-guard", "tests/hooked/test_hooked.py", "def test_start_after_configure_hook",
           "the guard runs in a conftest pytest_configure hook, before everything"),
    Silent("pytest-configure-module-import", "tests/hooked/test_hooked.py", "from ledger import bootstrap",
           "the configure hook comes before the test module's imports"),
    Silent("conftest-module-level-guard", "tests/modlevel/test_modlevel.py", "def test_report_after_conftest_guard",
           "the guard runs at conftest module level"),
    Silent("conftest-module-level-then-import", "tests/modlevel/test_modlevel.py", "from ledger import bootstrap, reports",
           "conftest module level comes before the test module's"),
    Silent("exempt", "tests/test_exempt.py", "def test_scratch_copy", "listed in exempt"),
    Silent("exempt-call", "tests/test_exempt.py", "reports.monthly_total()", "listed in exempt"),
    Silent("scratch-db-fixture-test", TG, "def test_scratch_database_only(scratch_db):",
           "a tmp_path scratch database does not reach the application database"),
    Silent("scratch-db-fixture", CF, 'db.connect(tmp_path / "scratch.sqlite3")', "scratch database"),
    Silent("own-tmp-database", TG, "def test_own_tmp_database(tmp_path):", "scratch database"),
    Silent("in-memory", TG, "def test_in_memory_database():", "in-memory database"),
    Silent("module-holding-bootstrap-function", TG, "def test_imports_the_module_holding_the_bootstrap_function",
           "importing ledger.db does not call ledger.db.connect"),
    Silent("guard-own-env-read", "tests/support.py", 'os.environ.get("LEDGER_DB_NAME")', "the guard's own read"),
    Silent("guard-argument", TG, 'refuse_production(os.environ.get("LEDGER_DB_NAME", "ledger_dev"))',
           "an argument evaluated for the guard call"),
    Silent("one-HT402-per-test", TU, "    from ledger import bootstrap", "the second side effect before the guard"),
    Silent("project-code-call", "src/ledger/reports.py", "conn = db.connect()", "HT401 belongs at the test's def"),
    Silent("bootstrap-internal-call", "src/ledger/bootstrap.py", "conn = db.connect(path)", "project code"),
    Silent("query-on-passed-connection", "src/ledger/accounts.py", "conn.execute(", "a use of a connection"),
    Silent("no-production-name", "src/ledger/settings.py", 'DB_FILE = "/srv/ledger/ledger_dev.sqlite3"',
           "ledger_dev is not the production name ledger_live"),
]

findings, test_reported, test_silent, test_nothing_else = fixture_suite(G, GUARD_EXPECTED, GUARD_SILENT)


@pytest.mark.parametrize("test", [TG + "::test_scratch_database_only", TG + "::test_own_tmp_database",
                                  TG + "::test_in_memory_database",
                                  TG + "::test_imports_the_module_holding_the_bootstrap_function"])
def test_scratch_and_memory_tests_not_listed_by_the_app_db_connection(findings, test):
    listed = listed_at(G, findings, "HT101", DB, "return sqlite3.connect(path or settings.DB_FILE)")
    assert listed and test not in listed, sorted(listed)


def test_exempt_test_still_listed_by_HT101(findings):
    """Exemptions excuse a test from HT4xx only."""
    listed = listed_at(G, findings, "HT101", DB, "return sqlite3.connect(path or settings.DB_FILE)")
    assert "tests/test_exempt.py::test_scratch_copy" in listed, sorted(listed)


def test_one_HT402_per_test(findings):
    per_test = {}
    for f in findings:
        if f.code == "HT402":
            for t in f.tests:
                per_test[t] = per_test.get(t, 0) + 1
    assert per_test and all(n == 1 for n in per_test.values()), per_test


def test_HT4xx_have_no_origin(findings):
    ht4 = [f for f in findings if f.code.startswith("HT4")]
    assert ht4 and all(not f.origin for f in ht4), describe(ht4)


def test_guard_inactive_without_configuration(tmp_path, monkeypatch):
    """Contract section 5: HT4xx only when [tool.hermetic.guard] is configured."""
    project = copy_fixture(G, tmp_path)
    pyproject = project / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    pyproject.write_text(re.sub(r"\[tool\.hermetic\.guard\].*", "", text, flags=re.S), encoding="utf-8")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    report, _cfg = run_check([], project)
    assert not report.errors
    codes = {f.code for f in report.findings}
    assert "HT101" in codes and not {c for c in codes if c.startswith("HT4")}, sorted(codes)
