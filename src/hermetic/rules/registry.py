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
# src/ledger/settings.py
DB_PATH = "/srv/ledger/ledger.sqlite3"
# src/ledger/db.py
def open_ledger():
    return sqlite3.connect(settings.DB_PATH)   # HT101: a module constant, not the test's database
""",
       "Pass the connection (or its path/DSN) in from the caller, so the test can hand in its fixture; or "
       "monkeypatch the setting to a tmp_path file / in-memory DSN in a fixture.",
       fixture="ht101-connection"),
    _r("HT102", "uncontrolled-file", "error",
       "A test reaches a file-system operation on a path it does not control.",
       "The test reads a file that differs between machines, or writes into the repository, the home folder "
       "or a server folder.",
       """
# src/exporter/report.py
def export_default(rows):
    target = settings.EXPORT_DIR / "report.json"
    target.write_text(json.dumps(rows), encoding="utf-8")   # HT102: EXPORT_DIR is a server folder
""",
       "Take the directory as a parameter and pass tmp_path in the test, or monkeypatch the constant (and every "
       "path derived from it) to tmp_path.",
       fixture="ht102-file"),
    _r("HT103", "uncontrolled-env-read", "warning",
       "A test reaches an environment-variable read at call time of a variable it does not set.",
       "The result depends on the shell the suite runs in: green on one machine, red on another.",
       """
# src/notifier/config.py
def api_token():
    return os.environ["NOTIFIER_TOKEN"]   # HT103 in a test that sets nothing
""",
       "monkeypatch.setenv(\"NAME\", value) (or delenv) in the test or a fixture; or pass the value in.",
       fixture="ht103-env"),
    _r("HT104", "uncontrolled-clock", "warning",
       "A test reaches a clock read at call time with no frozen clock.",
       "The result depends on when the suite runs: date boundaries, DST and slow machines make it flaky.",
       """
# src/stamps/clock.py
def stamp():
    return datetime.now(timezone.utc).isoformat()   # HT104 in a test with no frozen clock
""",
       "Freeze the clock (freezegun.freeze_time, time_machine.travel, the freezer fixture), or pass the time in.",
       fixture="ht104-clock"),
    _r("HT105", "uncontrolled-network", "error",
       "A test reaches a network call to a host it does not control.",
       "The suite depends on a remote service being up and answering the same way, and may change remote state.",
       """
# src/weather/client.py
API_URL = "https://api.weather.example.com/v1"
def current(city):
    resp = requests.get(API_URL, params={"city": city}, timeout=5)   # HT105 without responses/respx/requests-mock
""",
       "Mock the client library (responses, requests-mock, respx, pytest-httpx), or patch the function that "
       "calls it where the code under test looks it up.",
       fixture="ht105-network"),
    _r("HT106", "uncontrolled-subprocess", "error",
       "A test reaches a subprocess it does not control.",
       "The test depends on programs installed on the machine and on the state they read (a git checkout, a "
       "PATH).",
       """
# src/deploy/git.py
def current_branch():
    proc = subprocess.run(["git", "rev-parse", "--abbrev-ref", "HEAD"], capture_output=True, text=True, check=True)   # HT106
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
# src/vault/locations.py
ARCHIVE_ROOT = Path("/srv/vault/archive")
BACKUP_DIR = ARCHIVE_ROOT / "backups"   # HT201: written by store.backup()
""",
       "Compute the path at call time (a function that joins it from the base), or pass it in.",
       fixture="ht201-path-constants"),
    _r("HT202", "patch-escape", "error",
       "A test redirects a base value (a constant, an environment variable, HOME), but an operation it reaches "
       "uses a value derived from that base at import time.",
       "The test believes it moved the state to tmp_path; the derived path still points at the real one, so "
       "the test reads or overwrites real files.",
       """
# src/relay/spool.py
SPOOL_DIR = settings.DATA_ROOT / "spool"
OUTGOING_DIR = SPOOL_DIR / "outgoing"
# tests/test_relay.py
def test_enqueue_moves_only_the_data_root(tmp_path, monkeypatch):
    monkeypatch.setattr(settings, "DATA_ROOT", tmp_path)   # HT202: OUTGOING_DIR still points at the real dir
    spool.enqueue("hello", "hi")
""",
       "Also redirect every derived binding (the hint lists them, ready to paste), or compute them at call time.",
       fixture="ht202-patch-escape"),
    _r("HT203", "import-time-env-read", "warning",
       "An environment variable is read when a module is imported, and a test reaches the module.",
       "monkeypatch.setenv in a test comes too late: the value was fixed at import.",
       """
# src/inventory/config.py
WAREHOUSE = os.getenv("INVENTORY_WAREHOUSE", "main")   # HT203
def page_size(size=int(os.environ.get("INVENTORY_PAGE_SIZE", "50"))):   # HT203: the default is read at import
""",
       "Read the variable at call time (inside the function), or set it in session configuration (pytest-env, "
       "conftest module level before the import).",
       fixture="ht203-import-env"),
    _r("HT204", "import-time-clock-read", "warning",
       "The clock is read (or a clock function captured) when a module is imported.",
       "freeze_time in a test cannot move a value computed at import.",
       """
# src/batch/timing.py
STARTED = datetime.now()   # HT204
def stamp(at=time.time()):   # HT204: the default is evaluated once, at import
""",
       "Read the clock at call time; use `at=None` and `at = time.time() if at is None else at`.",
       fixture="ht204-import-clock"),
    _r("HT205", "patch-misses", "error",
       "A test patches a name, but the code it reaches looks the object up through another binding (`from m "
       "import f`), a default argument or a captured function object that holds the original.",
       "The patch is silently ineffective: the real function runs, and the test passes or fails for reasons "
       "unrelated to what it claims to test. Medium confidence where the missed binding is reached only past "
       "branches the test's values do not decide.",
       """
# src/shop/receipt.py
from shop.clock import utcnow
# tests/test_shop.py
def test_header_patching_the_clock_module():
    with mock.patch.object(clock, "utcnow", return_value=NOON):   # HT205: receipt keeps its own utcnow
        assert receipt.header("Corner Shop") == "Corner Shop 2030-06-01 12:00"
""",
       "Patch where the name is looked up (`shop.receipt.utcnow`), or make the code look it up at call time.",
       fixture="ht205-patch-misses"),
    _r("HT301", "importlib-reload", "error",
       "importlib.reload in a test or fixture.",
       "A reload re-runs the module's top level: registries filled at import by other modules are emptied, "
       "objects other modules hold go stale. Green alone, red in the suite. (A reload of a copy imported "
       "after the module was taken out of sys.modules resets no module others hold: the sys.modules change "
       "is judged as HT304.)",
       """
# tests/test_reload.py
def test_registry_starts_with_aliases():
    importlib.reload(registry)   # HT301: empties EXPORTERS, filled by other modules at import
""",
       "Don't reload; build a fresh object, or restore what the reload resets.",
       fixture="ht301-reload"),
    _r("HT302", "environ-mutation", "error",
       "os.environ / os.putenv / os.unsetenv changed in a test or fixture and not restored.",
       "The change outlives the test: later tests read the variable and pass or fail depending on order.",
       """
# tests/test_leaks.py
def test_region_from_direct_write():
    os.environ["DEPLOY_REGION"] = "us"   # HT302
""",
       "monkeypatch.setenv / delenv or mock.patch.dict(os.environ, ...), which restore.",
       fixture="ht302-environ"),
    _r("HT303", "module-state-mutation", "error",
       "A module-level global or container of a project module is changed (or a new attribute is added to the "
       "module) in a test or fixture, directly or through a project function the test calls, and not restored "
       "(a del after yield removes an added attribute).",
       "Every later test sees the changed registry or setting.",
       """
# tests/test_leaks.py
def test_runner_put_in_registry():
    registry.RUNNERS["shout"] = shout   # HT303
""",
       "monkeypatch.setattr / monkeypatch.setitem, or restore the saved value in a finally block.",
       fixture="ht303-module-state"),
    _r("HT304", "process-state-mutation", "error",
       "Other process-wide state changed without restore: sys.path, sys.modules, os.chdir, os.umask, "
       "patch(...).start() without stop, ... In a test, a fixture, a project function a test calls, or the "
       "module level of a test module or conftest (listing every test below it).",
       "Later tests import different modules, resolve paths against another folder, or still see a patch.",
       """
# tests/test_leaks.py
def test_plugin_dir_inserted(tmp_path):
    sys.path.insert(0, str(tmp_path / "plugins"))   # HT304
...
def test_started_patch_never_stopped():
    mock.patch("toolkit.loader.plugin_dirs", return_value=["x/plugins"]).start()   # HT304: never stopped
""",
       "monkeypatch.syspath_prepend / monkeypatch.chdir, `with patch(...)`, or addCleanup(patcher.stop).",
       fixture="ht304-process-state"),
    _r("HT401", "guard-missing", "error",
       "A test reaches the application database (a configured bootstrap entry, or an uncontrolled connection) "
       "but never calls the configured production guard.",
       "An environment flag that says 'development' while the settings point at production is how fixtures "
       "end up written into production; the guard is the one check that refuses the production schema.",
       """
# tests/test_unguarded.py
def test_monthly_report():   # HT401: reaches ledger.db.connect, no guard call
    assert reports.monthly_total() >= 0
""",
       "Call the guard first (test, fixture, conftest hook or module level), or exempt the test in "
       "[tool.hermetic.guard] exempt with a reason.",
       fixture="ht4-guard"),
    _r("HT402", "guard-too-late", "error",
       "The guard is called, but a side effect (importing or calling a bootstrap entry, an uncontrolled "
       "connection) comes first in the test's set-up order.",
       "By the time the guard runs, the application database has already been opened.",
       """
# tests/test_module_import.py
from ledger import bootstrap   # HT402: the module-level import runs before the fixture that calls the guard
def test_bootstrap_imported_before_fixture_guard(ledger_db):
""",
       "Call the guard in pytest_configure / at conftest module level, or import the bootstrap after it.",
       fixture="ht4-guard"),
    _r("HT403", "production-target", "error",
       "A configured production database name is a connection target reachable from a test.",
       "One wrong environment and the suite talks to production.",
       """
# src/shipping/settings.py
ORDERS_DSN = "postgresql://app@db.internal:5432/SHIPPING_PROD "   # HT403 with production = ["Shipping_Prod"]
""",
       "Keep production names out of defaults the tests reach; pass scratch targets in.",
       fixture="ht4-production-name"),
    _r("HT900", "suppression", "warning",
       "An inline suppression that suppresses nothing, a misspelt code included (with "
       "--report-unused-suppressions), or one of an HT4xx code (always).",
       "Stale suppressions hide future findings; production-guard exemptions belong in configuration.",
       """
# tests/test_unguarded.py
def test_suppressed_inline():  # hermetic: ignore[HT401]   # HT900: an HT4xx exemption belongs in configuration
""",
       "Remove the comment; for HT4xx, list the test under [tool.hermetic.guard] exempt; for a misspelt code, "
       "use one `hermetic rules` lists.",
       fixture="ht4-guard"),
]}


#: sink category (catalogue/sinks.toml) -> the HT1xx rule that reports it uncontrolled; the
#: runtime half names a recorded operation's rule by the same table
CATEGORY_CODE: Dict[str, str] = {
    "connection": "HT101",
    "file": "HT102",
    "env": "HT103",
    "clock": "HT104",
    "network": "HT105",
    "subprocess": "HT106",
}


def severity(code: str) -> str:
    """A rule's severity (``Rule.severity``); HT102's follows the operation (``severity_of``)."""
    r = RULES.get(code)
    return r.severity if r else ("error" if code.startswith("HT1") else "warning")


def severity_of(code: str, changes: bool) -> str:
    """A finding's severity by consequence (contract section 4): HT102 is an error when the
    operation writes, creates, deletes, moves or changes permissions (``changes``), a warning
    when it reads; every other code has its rule's. A benign read becomes a note later
    (``report.filters.rank``), where the configured benign list is known."""
    if code == "HT102":
        return "error" if changes else "warning"
    return severity(code)


#: how a rule's findings are ranked where it is not its one severity (contract section 4)
_SEVERITY_WORDS: Dict[str, str] = {
    "HT102": "error when the operation writes, creates, deletes, moves or changes permissions (an `open` by its "
             "mode; a mode the analysis cannot read counts as a write); warning when it reads (also existence "
             "checks, listings and `stat`).",
    "HT103": "warning; a note for a variable that only changes presentation (listed here).",
    "HT104": "warning; a note for a duration: a clock read whose value is only subtracted from another clock "
             "read (`start = monotonic(); ...; monotonic() - start`, also a start kept in a `self` attribute "
             "by another method of the class, or handed to a class of the module that keeps it in `self.x` "
             "and only subtracts it from a clock read, or a deadline `end = time() + timeout; end - time()`, "
             "also one compared with a later read: `start + timeout > perf_counter()`, `time() < end`), or a "
             "read of a clock that counts from an arbitrary point (`monotonic`, `perf_counter`) in a "
             "difference other than one taking a fixed amount from it (`monotonic() - 10000` is a point in time).",
    "HT203": "warning; a note for a variable that only changes presentation (listed here).",
    "HT204": "warning; a note for a clock function bound to a name at import (`preferred_clock = time.time`) "
             "whose every use is a call that is a duration.",
}


def severity_words(code: str) -> str:
    """The ``## Severity`` section of a rule's page: its severity by consequence, and for the
    rules with notes the benign list (``catalogue/benign.toml``)."""
    from ..catalogue.benign import packaged_benign

    r = RULES[code]
    words = _SEVERITY_WORDS.get(code)
    if words is None:
        what = "the test can change something outside its sandbox or reach a real service" if r.severity == "error" \
            else "the test's result depends on the machine it runs on"
        words = f"{r.severity}: {what}."
    if code in ("HT103", "HT203"):
        names = ", ".join(f"`{n}`" for n in sorted(packaged_benign().env))
        words += (f" Benign variables: {names}. `[tool.hermetic.benign]` adds names (`env = [...]`) and takes "
                  f"them out (`remove = [...]`). Notes are in the JSON and SARIF reports and counted in the text "
                  f"report; `fail-on` never fails on them.")
    return words


def describe(code: str) -> str:
    r = RULES.get(code.upper())
    if r is None:
        raise KeyError(code)
    return (f"{r.code} ({r.name}) [{r.severity}]\n\n## What it does\n{r.summary}\n\n## Why is this bad?\n{r.why}\n\n"
            f"## Severity\n{severity_words(r.code)}\n\n"
            f"## Example\n```python\n{r.example}\n```\n\n## Fix\n{r.fix}\n")


def all_docs() -> str:
    """docs/rules.md: every rule's page, generated from this module."""
    parts = ["# hermetic rules\n\nGenerated by `hermetic rule --all`; edit `src/hermetic/rules/registry.py`.\n"]
    for code in sorted(RULES):
        parts.append("\n## " + describe(code).replace("\n## ", "\n### "))
    return "".join(parts)
