"""Rule codes, their default severities and their documentation (what, why, example, fix).

``hermetic rule CODE`` prints an entry, ``hermetic rule --all`` all of them (``docs/rules.md``);
the SARIF report carries each rule's entry as its help text. Each rule names the fixture project
under ``fixtures/`` that shows it, and ``tests/test_rule_examples.py`` checks the documented
example against that project.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict


@dataclass(frozen=True)
class Rule:
    """One rule's documentation.

    code: the rule code (``HT101``); name: its kebab-case name; severity: the default
    (``error`` / ``warning``; a finding may differ, contract section 4); summary, why, fix:
    one paragraph each; example: Python source, the reported lines marked with a trailing
    ``# HTnnn`` comment; fixture: the folder under ``fixtures/`` whose check reports the
    example (not shown to users).
    """

    code: str
    name: str
    severity: str
    summary: str
    why: str
    example: str
    fix: str
    fixture: str = ""


def _r(code, name, severity, summary, why, example, fix, fixture) -> Rule:
    return Rule(code, name, severity, summary, why, example.strip("\n"), fix, fixture)


RULES: Dict[str, Rule] = {r.code: r for r in [
    _r("HT101", "uncontrolled-connection", "error",
       "A test reaches a database connection or client whose target it does not control.",
       "The test reads or writes a real database (often the one in the deployment settings): it depends on "
       "that state and may change it.",
       """
# src/app/post.py
def _robot_enabled():
    flags = sqlite3.connect(settings.DB_PATH)   # HT101: a module constant, not the fixture's DB
""",
       "Pass the connection (or its path/DSN) in from the caller, so the test can hand in its fixture; or "
       "monkeypatch the setting to a tmp_path file / in-memory DSN in a fixture.",
       fixture="ht101-connection"),
    _r("HT102", "uncontrolled-file", "error",
       "A test reaches a file-system operation on a path it does not control.",
       "The test reads a file that differs between machines, or writes into the repository, the home folder "
       "or a server folder.",
       """
def export_nightly(rows):
    return write_csv(settings.EXPORT_DIR, "nightly", rows)   # the write in write_csv is HT102
""",
       "Take the directory as a parameter and pass tmp_path in the test, or monkeypatch the constant (and every "
       "path derived from it) to tmp_path.",
       fixture="ht102-file"),
    _r("HT103", "uncontrolled-env-read", "error",
       "A test reaches an environment-variable read at call time of a variable it does not set.",
       "The result depends on the shell the suite runs in: green on one machine, red on another.",
       """
grace_days = int(os.environ.get("BILLING_GRACE_DAYS", "30"))   # HT103 in a test that sets nothing
""",
       "monkeypatch.setenv(\"NAME\", value) (or delenv) in the test or a fixture; or pass the value in.",
       fixture="ht103-env"),
    _r("HT104", "uncontrolled-clock", "error",
       "A test reaches a clock read at call time with no frozen clock.",
       "The result depends on when the suite runs: date boundaries, DST and slow machines make it flaky.",
       """
cutoff = datetime.now() - timedelta(days=30)   # HT104
""",
       "Freeze the clock (freezegun.freeze_time, time_machine.travel, the freezer fixture), or pass the time in.",
       fixture="ht104-clock"),
    _r("HT105", "uncontrolled-network", "error",
       "A test reaches a network call to a host it does not control.",
       "The suite depends on a remote service being up and answering the same way, and may change remote state.",
       """
resp = requests.get(API_URL, timeout=5)   # HT105 without responses/respx/requests-mock
""",
       "Mock the client library (responses, requests-mock, respx, pytest-httpx), or patch the function that "
       "calls it where the code under test looks it up.",
       fixture="ht105-network"),
    _r("HT106", "uncontrolled-subprocess", "error",
       "A test reaches a subprocess it does not control.",
       "The test depends on programs installed on the machine and on the state they read (a git checkout, a "
       "PATH).",
       """
proc = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True)   # HT106
""",
       "Use pytest-subprocess's fp fixture, or patch subprocess.run where the code under test looks it up.",
       fixture="ht106-subprocess"),
    _r("HT201", "import-time-path-constant", "warning",
       "A module-level path constant computed at import (from another constant, __file__, the home folder, the "
       "environment or the working directory) is written through, or is derived from the home folder / "
       "environment / working directory and read.",
       "Patching the base it was computed from (STATE_DIR, HOME, an environment variable) does not move it: "
       "the tests that redirect the base still write to the real place.",
       """
STATE_DIR = ROOT / "state"
GOALS_FILE = STATE_DIR / "goals.yaml"    # HT201: written by save_goals()
""",
       "Compute the path at call time (a function that joins it from the base), or pass it in.",
       fixture="ht201-path-constants"),
    _r("HT202", "patch-escape", "error",
       "A test redirects a base value (a constant, an environment variable, HOME), but an operation it reaches "
       "uses a value derived from that base at import time.",
       "The test believes it moved the state to tmp_path; the derived path still points at the real one, so "
       "the test reads or overwrites real files.",
       """
monkeypatch.setattr(weekly, "STATE_DIR", tmp_path / "state")   # HT202: GOALS_FILE still points at the real dir
""",
       "Also redirect every derived binding (the hint lists them, ready to paste), or compute them at call time.",
       fixture="ht202-patch-escape"),
    _r("HT203", "import-time-env-read", "warning",
       "An environment variable is read when a module is imported, and a test reaches the module.",
       "monkeypatch.setenv in a test comes too late: the value was fixed at import.",
       """
LEVEL = os.getenv("LOG_LEVEL", "INFO")   # HT203
""",
       "Read the variable at call time (inside the function), or set it in session configuration (pytest-env, "
       "conftest module level before the import).",
       fixture="ht203-import-env"),
    _r("HT204", "import-time-clock-read", "warning",
       "The clock is read (or a clock function captured) when a module is imported.",
       "freeze_time in a test cannot move a value computed at import.",
       """
STARTED = datetime.now()   # HT204
def stamp(at=time.time()): ...   # HT204: the default is evaluated once, at import
""",
       "Read the clock at call time; use `at=None` and `at = time.time() if at is None else at`.",
       fixture="ht204-import-clock"),
    _r("HT205", "patch-misses", "error",
       "A test patches a name, but the code it reaches looks the object up through another binding (`from m "
       "import f`), a default argument or a captured function object that holds the original.",
       "The patch is silently ineffective: the real function runs, and the test passes or fails for reasons "
       "unrelated to what it claims to test.",
       """
with mock.patch("app.clock.utcnow", return_value=NOON):   # HT205: app.pricing did `from app.clock import utcnow`
    pricing.quote(100, "USD")
""",
       "Patch where the name is looked up (`app.pricing.utcnow`), or make the code look it up at call time.",
       fixture="ht205-patch-misses"),
    _r("HT301", "importlib-reload", "error",
       "importlib.reload in a test or fixture.",
       "A reload re-runs the module's top level: registries filled at import by other modules are emptied, "
       "objects other modules hold go stale. Green alone, red in the suite.",
       """
def test_registry_starts_with_smoke_runner():
    importlib.reload(runners)   # HT301: drops the runners registered by bridge.adapters
""",
       "Don't reload; build a fresh object, or restore what the reload resets.",
       fixture="ht301-reload"),
    _r("HT302", "environ-mutation", "error",
       "os.environ / os.putenv / os.unsetenv changed in a test or fixture and not restored.",
       "The change outlives the test: later tests read the variable and pass or fail depending on order.",
       """
os.environ["BRIDGE_MODE"] = "solo"   # HT302
""",
       "monkeypatch.setenv / delenv or mock.patch.dict(os.environ, ...), which restore.",
       fixture="ht302-environ"),
    _r("HT303", "module-state-mutation", "error",
       "A module-level global or container of a project module is changed (or a new attribute is added to the "
       "module) in a test or fixture, directly or through a project function the test calls, and not restored "
       "(a del after yield removes an added attribute).",
       "Every later test sees the changed registry or setting.",
       """
runners.RUNNERS["upper"] = UpperRunner()   # HT303
""",
       "monkeypatch.setattr / monkeypatch.setitem, or restore the saved value in a finally block.",
       fixture="ht303-module-state"),
    _r("HT304", "process-state-mutation", "error",
       "Other process-wide state changed without restore: sys.path, sys.modules, os.chdir, os.umask, "
       "patch(...).start() without stop, ...",
       "Later tests import different modules, resolve paths against another folder, or still see a patch.",
       """
sys.path.insert(0, PLUGINS)   # HT304
mock.patch("toolbox.clock.now").start()   # HT304: never stopped
""",
       "monkeypatch.syspath_prepend / monkeypatch.chdir, `with patch(...)`, or addCleanup(patcher.stop).",
       fixture="ht304-process-state"),
    _r("HT401", "guard-missing", "error",
       "A test reaches the application database (a configured bootstrap entry, or an uncontrolled connection) "
       "but never calls the configured production guard.",
       "An environment flag that says 'development' while the settings point at production is how fixtures "
       "end up written into production; the guard is the one check that refuses the production schema.",
       """
def test_occupancy_report_counts_seats():   # HT401: reaches app.bootstrap, no guard call
    assert occupancy_report()["seats"] >= 0
""",
       "Call the guard first (test, fixture, conftest hook or module level), or exempt the test in "
       "[tool.hermetic.guard] exempt with a reason.",
       fixture="ht4-guard"),
    _r("HT402", "guard-too-late", "error",
       "The guard is called, but a side effect (importing or calling a bootstrap entry, an uncontrolled "
       "connection) comes first in the test's set-up order.",
       "By the time the guard runs, the application database has already been opened.",
       """
from orders import bootstrap   # HT402: the module-level import runs before the fixture that calls the guard
""",
       "Call the guard in pytest_configure / at conftest module level, or import the bootstrap after it.",
       fixture="ht4-guard"),
    _r("HT403", "production-target", "error",
       "A configured production database name is a connection target reachable from a test.",
       "One wrong environment and the suite talks to production.",
       """
DEFAULT_DSN = "postgresql://db.internal/orders_prod "   # HT403 with production = ["Orders_Prod"]
""",
       "Keep production names out of defaults the tests reach; pass scratch targets in.",
       fixture="ht4-production-name"),
    _r("HT900", "suppression", "warning",
       "An inline suppression that suppresses nothing (with --report-unused-suppressions), or one of an HT4xx "
       "code or of a code no rule has (always).",
       "Stale suppressions hide future findings; production-guard exemptions belong in configuration.",
       """
return now.date().isoformat()  # hermetic: ignore[HT104]   <- nothing to suppress here
""",
       "Remove the comment; for HT4xx, list the test under [tool.hermetic.guard] exempt; for a misspelt code, "
       "use one `hermetic rules` lists.",
       fixture="ht4-guard"),
]}


def severity(code: str) -> str:
    r = RULES.get(code)
    return r.severity if r else ("error" if code.startswith("HT1") else "warning")


def describe(code: str) -> str:
    r = RULES.get(code.upper())
    if r is None:
        raise KeyError(code)
    return (f"{r.code} ({r.name}) [{r.severity}]\n\n## What it does\n{r.summary}\n\n## Why is this bad?\n{r.why}\n\n"
            f"## Example\n```python\n{r.example}\n```\n\n## Fix\n{r.fix}\n")


def all_docs() -> str:
    """docs/rules.md: every rule's page, generated from this module."""
    parts = ["# hermetic rules\n\nGenerated by `hermetic rule --all`; edit `src/hermetic/rules/registry.py`.\n"]
    for code in sorted(RULES):
        parts.append("\n## " + describe(code).replace("\n## ", "\n### "))
    return "".join(parts)
