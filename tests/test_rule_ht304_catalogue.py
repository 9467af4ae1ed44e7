"""HT304 from the process-state catalogue, restores by snapshot and whole-container patches,
restores that do not restore, and environment writes through project code (fixture
ht304-process-catalogue; contract section 4, HT302 / HT304 and "Restores").

Fires: ``sys.argv`` assigned or appended to, a logger's ``setLevel`` / ``addHandler``,
``logging.disable``, ``signal.signal``, ``socket.setdefaulttimeout``, a warnings filter set at a
test module's top level (collection), ``logging.basicConfig`` / ``sys.argv = ...`` / an
``os.environ`` write / a logger's ``setLevel`` or ``addHandler`` (a module's logger, or one
the function gets) in a project function the test or its ``setUp`` calls, or in the ``__init__`` of a project class the test makes
(``logging.setLoggerClass``), and ``logging.config.dictConfig`` (anchored at the call), a snapshot
taken and never restored, ``os.chdir`` in a test without ``pytester``, and a teardown that
writes a variable back only ``if saved is not None:``.
Silent: monkeypatch / ``patch.object(sys, "argv")`` (decorator, ``with``),
``patch.object(sys, "path", list(sys.path))``, a fixture putting the level back or calling
``logging.disable(logging.NOTSET)`` after ``yield``, ``caplog.set_level``, a logger's handlers written back from a snapshot by an
autouse fixture (the logger a module global: ``ROOT = logging.getLogger()``), ``removeHandler`` in a
``finally``, a saved signal handler put back, a warnings filter or a replaced ``sys.stdout`` in
a test (pytest's warnings and capture plugins put them back after each test), snapshots whose
``restore()`` runs, ``_sys_snapshot``, ``pytester`` (requested, or autouse through a fixture),
``monkeypatch.delenv`` of the variable a project function then sets, an autouse fixture clearing
a cache before and after each test, a conditional restore with an ``else`` that deletes, a
level saved on ``self`` put back in ``teardown_method``, a project decorator restoring in a
``finally``, a global a project function builds once under ``if NAME is None:``.
"""
from helpers import Expect, Silent, fixture_suite, listed_suite

FIX = "ht304-process-catalogue"
TC = "tests/test_changes.py"
TR = "tests/test_restored.py"
TA = "tests/pytester_autouse/test_pathlib_like.py"
CLI = "src/relay/cli.py"

EXPECTED = [
    # a conftest's top level: the tests below it (invoke's conftest; a new user's trial)
    Expect("conftest-module-level", "HT304", "tests/conftest_level/conftest.py", "socket.setdefaulttimeout(3)",
           tests=["tests/conftest_level/test_below.py::test_timeout_below"]),
    # a project function's change under a branch: reported where the test's run took it (the run
    # records the statements it executed), not where its values rule it out (invoke's trial)
    Expect("changed-on-the-branch-the-run-took", "HT304", TC, 'assert cli.console(["--debug"])'),
    Expect("warnings-filter-at-collection", "HT304", TC, 'warnings.simplefilter("error")'),
    # a fixture's teardown runs after the modules collected later saw the entry (section 4)
    Expect("sys-modules-at-collection", "HT304", TC, 'sys.modules["relay_fake"] = type(sys)("relay_fake")'),
    Expect("argv-assigned", "HT304", TC, 'sys.argv = ["relay", "--verbose"]'),
    Expect("basic-config-through-project-call-in-assert", "HT304", TC, "assert cli.main(sys.argv[1:])"),
    Expect("argv-appended", "HT304", TC, 'sys.argv.append("--dry-run")'),
    Expect("logger-level", "HT304", TC, 'logging.getLogger("relay").setLevel(logging.DEBUG)'),
    Expect("logger-handler", "HT304", TC, "log.addHandler(logging.StreamHandler(io.StringIO()))"),
    Expect("logging-disable", "HT304", TC, "logging.disable(logging.CRITICAL)"),
    Expect("signal-handler", "HT304", TC, "signal.signal(signal.SIGTERM, lambda *a: None)"),
    Expect("socket-timeout", "HT304", TC, "socket.setdefaulttimeout(5)"),
    Expect("basic-config-through-project-function", "HT304", TC, 'cli.main(["--debug"])'),
    Expect("argv-through-project-function", "HT304", TC, "cli.configure_from_args()"),
    Expect("environment-through-project-function", "HT302", TC, "cli.use_staging()"),
    # the project function calls setdefaulttimeout bound by `from socket import ...`
    Expect("from-imported-call-through-project-function", "HT304", TC, "    cli.patient()"),
    Expect("snapshot-never-restored", "HT304", TC, "sys.path.insert(0, str(tmp_path))   # the snapshot"),
    Expect("chdir-without-pytester", "HT304", TC, "os.chdir(tmp_path)"),
    Expect("conditional-restore", "HT302", TC, 'os.environ["RELAY_TOKEN"] = "t0k3n"'),
    Expect("decorator-restores-nothing", "HT303", TC, 'cli.HOOKS.append("plain")'),
    Expect("global-set-by-project-function", "HT303", TC, 'cli.set_mode("fast")'),
    # a project function called from setUp changing a module logger's level and a local
    # logger's handlers: one finding per state, at the call (near miss: a handler's own level)
    Expect("logger-methods-through-project-function", "HT304", TC, "cli.verbose()   # a project function"),
    # a class whose __init__ changes process state (structlog's LoggerFactory; a new user's trial)
    Expect("logger-class-through-a-constructor", "HT304", TC, "cli.LoggerFactory()   # its __init__"),
    Expect("dict-config-through-project-function", "HT304", TC, "cli.configure_from_dict()"),
    # a helper defined under a version branch the running Python takes (near miss: one it does not)
    Expect("helper-defined-on-this-python", "HT304", TC, "socket.setdefaulttimeout(8)",
           tests=[TC + "::test_a_call_named_run"]),
    Expect("nested-helper", "HT304", TC, "socket.setdefaulttimeout(1)",
           tests=[TC + "::test_nested_helper_changes"]),
    # a method of a project instance the test makes, called in its own body (invoke's trial)
    Expect("method-of-an-instance-made-in-the-test", "HT304", TC, 'cli.Program().run("relay --debug")',
           tests=[TC + "::test_program_run_in_the_test"]),
    Expect("method-of-an-instance-in-a-variable", "HT304", TC, 'program.run("relay " + "--debug")',
           tests=[TC + "::test_program_held_in_a_variable"]),
    # ... changed only on a way the test's values do not decide: reported, medium confidence
    Expect("method-changing-on-an-undecided-way", "HT304", TC, "cli.Program().run_from_environment()",
           tests=[TC + "::test_program_run_from_the_environment"]),
    Expect("the-undecided-ways-variable", "HT103", CLI, 'if os.environ.get("RELAY_DEBUG"):',
           tests=[TC + "::test_program_run_from_the_environment"]),
    # a helper of the test module: one finding at its project call, for the tests calling it
    Expect("helper-own-project-call", "HT304", TC, 'return cli.Program().run("relay --debug " + words)',
           tests=[TC + "::test_debug_through_a_helper"]),
    # a change two project calls below the test's call (watchdog's add_to_sys_path), and a saved
    # handler a helper never writes back (`previous = signal.signal(...)`)
    Expect("sys-path-two-calls-deep", "HT304", TC, 'cli.run_plugins("plugins")'),
    Expect("handler-two-calls-deep", "HT304", TC, "cli.serve()"),
]

SILENT = [
    Silent("helper-branch-its-values-rule-out", TC, 'return cli.Program().run("relay --complete -- " + words)',
           "no part of the command line split() gives is --debug: basicConfig never runs (invoke's _complete)"),
    Silent("helper-called-by-a-test", TC, 'assert _debug("x")',
           "the helper's own call is the finding; not one more at each test calling it"),
    Silent("helper-ruled-out-called-by-a-test", TC, 'assert _complete("-")', "the branch never runs"),
    Silent("change-on-a-branch-the-run-did-not-take", TC, 'assert cli.console(["--quiet"])',
           "the basicConfig under `if \"--debug\" in argv` never runs for this test's line"),
    Silent("chdir-to-a-fixed-folder-in-teardown", TR, "    os.chdir(tmp_path)   # back to the project root",
           "the teardown's os.chdir(ROOT_FOLDER) leaves every later test in one fixed folder (invoke)"),
    Silent("tzset-again-in-teardown", TR, 'time.tzset()   # read again after monkeypatch',
           "time.tzset() after monkeypatch.undo() re-reads the restored TZ"),
    Silent("deep-helper-patched", TC, 'cli.run_plugins("patched")',
           "the helper that changes sys.path is patched for the test: a double runs"),
    Silent("deep-change-written-back-above", TC, "cli.guarded_plugins()",
           "the function the test calls puts sys.path back in a finally"),
    Silent("working-directory-written-back", TC, "assert cli.listing(tmp_path) == []",
           "old = os.getcwd() ... os.chdir(old) in the helper: the catalogue's getters"),
    Silent("saved-handler-written-back", TC, "cli.quiet_terminal()",
           "old = signal.signal(...) ... signal.signal(S, old): Django's ensure_echo_on"),
    Silent("helper-defined-only-on-an-old-python", TC, "socket.setdefaulttimeout(9)",
           "def run(...) under `if sys.version_info < (3, 7):` is never bound (loguru's conftest)"),
    Silent("constructor-changing-nothing", TC, "assert cli.Formatter().fmt", "its __init__ sets its own attribute"),
    Silent("root-handlers-snapshot", "tests/test_logger_snapshot.py", "logging.getLogger().addHandler(",
           "an autouse fixture writes back list(ROOT.handlers), ROOT = logging.getLogger() at the module's top"),
    Silent("named-handlers-snapshot", "tests/test_logger_snapshot.py", 'logging.getLogger("relay.snapshot").addHandler(',
           "the same for a named logger held in a module global"),
    Silent("handler-methods-in-project-function", TC, "assert cli.formatted(io.StringIO()).level",
           "setLevel / addFilter on a handler the function made, not on a logger"),
    Silent("argv-monkeypatched", TR, 'monkeypatch.setattr(sys, "argv"', "restored by monkeypatch"),
    Silent("argv-patched-decorator", TR, 'sys.argv.append("--dry-run")', "inside patch.object(sys, 'argv')"),
    Silent("argv-patched-with", TR, 'sys.argv = ["relay", "--other"]', "inside patch.object(sys, 'argv')"),
    Silent("sys-path-patched", TR, "sys.path.insert(0, str(tmp_path))   # patched whole",
           "inside patch.object(sys, 'path', list(sys.path))"),
    Silent("logger-level-fixture", TR, "log.setLevel(logging.ERROR)", "put back after yield"),
    Silent("logging-disable-fixture", TR, "logging.disable(logging.CRITICAL)", "NOTSET after yield"),
    Silent("caplog", TR, "caplog.set_level(logging.DEBUG", "caplog restores"),
    Silent("handler-removed", TR, "log.addHandler(handler)", "removed in finally"),
    Silent("signal-restored", TR, "saved = signal.signal(signal.SIGUSR1", "the saved handler is put back"),
    Silent("warnings-in-test", TR, 'warnings.simplefilter("ignore")', "pytest's warnings plugin"),
    Silent("stdout-in-test", TR, "sys.stdout = io.StringIO()", "pytest's capture plugin"),
    Silent("snapshot-restored-path", TR, "sys.path.insert(0, str(tmp_path))   # snap restores it",
           "snap.restore()"),
    Silent("snapshot-restored-modules", TR, 'sys.modules.pop("relay.cli", None)   # mods restores it',
           "mods.restore()"),
    Silent("sys-snapshot-fixture", TR, "sys.path.append(str(tmp_path))", "_sys_snapshot restores"),
    Silent("pytester-chdir", TR, "os.chdir(pytester.path)", "pytester's monkeypatch.chdir"),
    Silent("pytester-sys-path", TR, "sys.path.insert(0, str(pytester.path))", "pytester's snapshot"),
    Silent("pytester-sys-modules", TR, 'sys.modules.pop("relay.cli", None)   # pytester restores it',
           "pytester's snapshot"),
    Silent("pytester-autouse-sys-path", TA, "sys.path.insert(0, str(tmp_path))", "autouse pytester"),
    Silent("pytester-autouse-chdir", TA, "os.chdir(tmp_path)", "autouse pytester"),
    Silent("env-restored-by-monkeypatch", TR, "cli.use_staging()", "monkeypatch.delenv saved the variable"),
    Silent("cache-reset-by-autouse", TR, 'cli.remember("k", 1)', "the autouse fixture clears it"),
    Silent("cache-reset-by-autouse-item", TR, 'cli.CACHE["other"] = 2', "the autouse fixture clears it"),
    Silent("cache-clear-before-yield", TR, "cli.CACHE.clear()   # a reset before the test", "a reset"),
    Silent("conditional-restore-with-else", TR, 'os.environ["RELAY_OTHER"] = "x"', "the else deletes it"),
    Silent("root-handlers-snapshot-fixture", TR, "logging.root.addHandler(logging.StreamHandler())",
           "the fixture writes the saved handlers back after yield"),
    Silent("root-handlers-cleared-in-fixture", TR, "logging.root.handlers = []", "put back after yield"),
    Silent("fixture-teardown-pop", TC, 'sys.modules.pop("relay_fake", None)', "a restore (too late)"),
    Silent("level-saved-on-self", TR, "setLevel(logging.DEBUG)   # teardown_method puts it back",
           "teardown_method sets the level saved in self back"),
    Silent("decorator-restores", TR, 'cli.HOOKS.append("decorated")', "the decorator's finally puts it back"),
    Silent("lazy-init-global", TR, 'assert cli.settings()["level"] == "info"',
           "a global built once under `if _SETTINGS is None:`"),
    Silent("project-function-body", CLI, 'os.environ["RELAY_ENV"] = "staging"', "anchored at the test's call"),
]

findings, test_reported, test_silent, test_nothing_else = fixture_suite(FIX, EXPECTED, SILENT)

LISTED = [
    # a helper nested in a test reaches that test, not every test that names a `go`
    ("nested-helper", TC, "socket.setdefaulttimeout(1)", [TC + "::test_nested_helper_changes"], ""),
]
test_lists_the_affected_tests = listed_suite(FIX, "HT304", LISTED)


def test_project_extends_the_process_state_table(tmp_path):
    """``process-state`` in [tool.hermetic] adds calls to the catalogue's table: a project's own
    function that reconfigures the process, or a library's."""
    import textwrap

    from hermetic.api import run_check

    def check(root, extra):
        files = {
            "src/app/__init__.py": "",
            "src/app/logs.py": "def setup(level):\n    return level\n",
            "tests/test_logs.py": """
                import colorama
                from app import logs
                def test_setup():
                    logs.setup("DEBUG")
                def test_colors():
                    colorama.init()
            """,
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n' + extra,
        }
        for rel, text in files.items():
            p = root / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(textwrap.dedent(text), encoding="utf-8")
        report, _ = run_check([], root)
        return sorted((f.code, f.line) for f in report.findings)

    assert check(tmp_path / "plain", "") == []
    extended = '[tool.hermetic]\nprocess-state = { "app.logs.setup" = "logging-config", "colorama.init" = "streams" }\n'
    assert check(tmp_path / "extended", extended) == [("HT304", 5), ("HT304", 7)]


def test_process_state_key_is_validated(tmp_path):
    import pytest

    from hermetic.config import ConfigError, parse_hermetic

    with pytest.raises(ConfigError, match="process-state"):
        parse_hermetic({"process-state": ["app.logs.setup"]}, tmp_path / "pyproject.toml")


def test_the_time_zone_recursion_limit_and_logging_config_have_their_own_fix():
    # time.tzset() and sys.setrecursionlimit() got the general hint (syspath_prepend / chdir /
    # patch), which does not apply to them (a new user's trial on schedule)
    from hermetic.catalogue.process_state import process_state

    ps = process_state()
    assert "time.tzset()" in ps.fixes["tz"] and "getrecursionlimit" in ps.fixes["recursionlimit"]
    assert "caplog" in ps.fixes["logging-config"]   # logging.basicConfig (tldextract's CLI tests)


def test_every_catalogued_state_has_its_own_fix():
    from hermetic.catalogue.process_state import process_state
    cat = process_state()
    states = set(cat.calls.values()) | set(cat.attributes.values()) | {s for s, _u in cat.logger_methods.values()}
    assert sorted(s for s in states if s not in cat.fixes) == []


def test_a_change_made_on_undecided_ways_only_is_medium_confidence(findings):
    # invoke's `if self.args.debug.value: enable_logging()` after a parse not followed
    from helpers import at, line_of
    (undecided,) = at(findings, TC, line_of(FIX, TC, "cli.Program().run_from_environment()"), "HT304")
    (decided,) = at(findings, TC, line_of(FIX, TC, 'cli.Program().run("relay --debug")'), "HT304")
    assert (undecided.confidence, decided.confidence) == ("medium", "high")
