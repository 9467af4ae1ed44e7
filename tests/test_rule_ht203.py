"""HT203: environment variables read at import time (fixture ht203-import-env).

Reported: a module-level read, a default argument, a class body, and a read in a module the
conftest imports *before* it sets the variable. Silent: a variable the conftest sets at module
level before the import, one set by pytest-env (session configuration), a module no test imports,
and a test's setenv that comes too late but feeds no operation (no HT202). A call-time read is
HT103, never HT203. A helper read at import for several bindings (``X = env("X")``) is one
finding per binding, naming its variable and listing the tests that use that binding.
"""
import pytest

from helpers import (fixture_suite, Expect, Silent, at, line_of, listed_at)

FIX = "ht203-import-env"
C = "src/inventory/config.py"
A = "src/inventory/audit.py"
TF = "tests/test_config.py"
T = TF + "::"

EXPECTED = [
    # section 8: a test using shutil.which's answer bound at import uses the PATH read; a test
    # whose skipIf decorator reads a variable uses that read (Django's HAS_BLACK and
    # PYTHONNODEBUGRANGES: a fresh reader found their lists empty)
    Expect("which-bound-at-import", "HT203", "tests/test_tools.py", 'HAS_FORMATTER = shutil.which("inventory-fmt")',
           tests=["tests/test_tools.py::test_formatted_when_available"]),
    Expect("read-by-a-skip-decorator", "HT203", "tests/test_tools.py", '@unittest.skipIf(os.environ.get("INVENTORY_SKIP_SLOW")',
           tests=["tests/test_tools.py::SlowTests::test_slow"]),
    Expect("module-level", "HT203", C, 'WAREHOUSE = os.getenv("INVENTORY_WAREHOUSE"', origin="environment"),
    Expect("default-argument", "HT203", C, 'def page_size(size=int(os.environ.get("INVENTORY_PAGE_SIZE"',
           origin="environment"),
    Expect("class-body", "HT203", C, 'max_items = int(os.environ.get("INVENTORY_MAX_ITEMS"', origin="environment"),
    # conftest imports inventory.audit first and sets INVENTORY_AUDIT_LEVEL only afterwards
    Expect("conftest-sets-after-import", "HT203", A, 'LEVEL = os.environ.get("INVENTORY_AUDIT_LEVEL"'),
    # the same kind of read at call time is HT103
    Expect("call-time-is-ht103", "HT103", C, 'return os.environ.get("INVENTORY_REGION"',
           tests=[T + "test_region_default"], origin="environment"),
]

SILENT = [
    Silent("imported-in-a-test-body", "src/inventory/late.py", 'LATE_REGION = os.environ.get("INVENTORY_LATE_REGION"',
           "its only import is in a test's body, under that test's monkeypatch (flask's test apps)"),
    Silent("conftest-sets-before-import", C, 'MODE = os.environ.get("INVENTORY_MODE"',
           "S2: conftest module-level code sets it before the import"),
    Silent("pytest-env", C, 'TENANT = os.environ["INVENTORY_TENANT"]', "S2: a pytest-env setting"),
    Silent("module-no-test-imports", "src/inventory/cli.py", 'VERBOSE = os.getenv("INVENTORY_VERBOSE"',
           "not reached by any test"),
    Silent("setenv-too-late-no-sink", TF, 'monkeypatch.setenv("INVENTORY_WAREHOUSE", "north")',
           "WAREHOUSE feeds no operation: not HT202; restored: not HT302; the escape is the HT203"),
    Silent("setenv-call-time", TF, 'monkeypatch.setenv("INVENTORY_REGION", "us")', "restored: not HT302"),
    Silent("conftest-sets-mode", "tests/conftest.py", 'os.environ["INVENTORY_MODE"] = "test"',
           "conftest module level is session configuration, not a test or fixture (HT302)"),
    Silent("conftest-setdefault", "tests/conftest.py", 'os.environ.setdefault("INVENTORY_AUDIT_LEVEL"',
           "conftest module level: not HT302"),
    Silent("conftest-import", "tests/conftest.py", "from inventory import audit", "HT203 is anchored at the read"),
]

D = "src/inventory/defaults.py"
# a helper read at import for three bindings: one finding per binding, naming its variable
OPTIONAL = [Expect("helper-read-per-binding", "HT203", D, "if key not in os.environ:")]
EXPECTED.append(Expect("one-binding-two-variables", "HT203", D, 'if os.getenv("INVENTORY_ANDROID_DATA") == "/data"'))

findings, test_reported, test_silent, test_nothing_else = fixture_suite(FIX, EXPECTED, SILENT, OPTIONAL)


def test_a_helper_read_at_import_is_one_finding_per_binding(findings):
    # (loguru's _defaults.py: 32 bindings through env(), all reported as the first variable)
    found = at(findings, D, line_of(FIX, D, "if key not in os.environ:"), "HT203")
    named = {f.message.split()[2]: f.tests for f in found}
    assert named == {"INVENTORY_AUTOINIT": [], "INVENTORY_FORMAT": [],
                     "INVENTORY_LEVEL": [T + "test_default_level"]}, named
    assert not at(findings, D, line_of(FIX, D, "return os.environ[key]"), "HT203")   # the same bindings
    level = next(f for f in found if "INVENTORY_LEVEL" in f.message)
    assert f"for the binding at {D}:{line_of(FIX, D, 'INVENTORY_LEVEL = env(')}" in level.message, level.message

# section 8: HT203 lists "the tests that reach a consumer" of the value read at import
CONSUMERS = [
    ("module-level", C, 'WAREHOUSE = os.getenv("INVENTORY_WAREHOUSE"',
     ["test_warehouse_default", "test_warehouse_setenv_too_late"]),
    ("default-argument", C, 'def page_size(size=int(', ["test_page_size_default"]),
    ("class-body", C, "max_items = int(", ["test_limits_allow_small_orders"]),
    ("conftest-sets-after-import", A, "LEVEL = os.environ.get(", ["test_audit_level"]),
]


@pytest.mark.parametrize("path, snippet", [(C, 'os.getenv("INVENTORY_WAREHOUSE"'),
                                           (C, 'os.environ.get("INVENTORY_PAGE_SIZE"'),
                                           (C, 'os.environ.get("INVENTORY_MAX_ITEMS"'),
                                           (A, 'os.environ.get("INVENTORY_AUDIT_LEVEL"')],
                         ids=["module-level", "default-argument", "class-body", "audit"])
def test_import_time_read_is_not_ht103(findings, path, snippet):
    assert not at(findings, path, line_of(FIX, path, snippet), "HT103")


def test_setenv_controls_the_call_time_read(findings):
    assert T + "test_region_from_env" not in listed_at(FIX, findings, "HT103", C, 'os.environ.get("INVENTORY_REGION"')


@pytest.mark.parametrize("form, path, snippet, tests", CONSUMERS, ids=[c[0] for c in CONSUMERS])
def test_lists_the_tests_that_reach_a_consumer(findings, form, path, snippet, tests):
    assert listed_at(FIX, findings, "HT203", path, snippet) == {T + t for t in tests}




def test_a_binding_reading_two_variables_is_one_finding_naming_both(findings):
    line = line_of(FIX, D, 'if os.getenv("INVENTORY_ANDROID_DATA") == "/data"')
    [found] = at(findings, D, line, "HT203")
    assert "environment variables INVENTORY_ANDROID_DATA, INVENTORY_ANDROID_ROOT read" in found.message, found.message
