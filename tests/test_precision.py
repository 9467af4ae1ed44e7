"""Ways the test's own values rule out (contract section 1), fixture precision-values.

Every operation in the fixture is reached by one near-miss test in tests/test_reached.py and
ruled out for the tests in tests/test_ruled_out.py: by a type (isinstance), None, an enum
member, membership in a known list or in the environment the test set, a falsy value, an order, a statement that always raises (also a library call that never returns:
sys.exit, pytest.skip, in a test or a test module's top level),
the platform, a string that is not a path, a file descriptor, a library's shipped file that exists, a sentinel set on the instance, a stream in memory that is no terminal, an exception the test expects (or a warning it expects as one), an enumeration called with a value, a URL scheme in front of tmp_path, a name built at run time, a handler whose try body only calls
a test double with no side effect (or one raising an exception whose errno the test set), a module's object() sentinel, an object the test made compared by identity with a library's
(`stream is sys.__stdout__`), a key the test's dict lacks, a lazy proxy, and
controls made through mocker.patch.dict and a loop of setenv.
"""
import sys

import pytest

from hermetic.analyse.decide import compare, isinstance_of, platform_facts, values
from hermetic.analyse.values import Origin, V, of
from hermetic.api import run_check
from helpers import Expect, Silent, check_files, copy_fixture, fixture_suite, line_of

FIX = "precision-values"
B = "src/decided/branches.py"
P = "src/decided/platforms.py"
S = "src/decided/strings.py"
U = "src/decided/urls.py"
E = "src/decided/envfile.py"
T = "src/decided/tools.py"
C = "src/decided/commands.py"
R = "tests/test_reached.py::"

REACHED = [
    ("isinstance", "HT103", B, 'return os.environ.get("SERVER_FD")', "test_port_given_as_int"),
    ("is-none-and", "HT103", B, 'return os.environ.get("APP_CONFIG")', "test_nothing_given"),
    ("enum-member", "HT104", B, "return datetime.now()", "test_mode_diff"),
    ("in-list", "HT106", B, 'subprocess.run(["appd", "--daemon"])', "test_daemon_flag"),
    ("not-falsy", "HT103", B, 'folder = os.environ.get("APP_WORKDIR")', "test_folder_empty"),
    ("list-changed-in-place", "HT103", B, 'return os.environ.get("APP_EXTRA_DAEMON")', "test_flag_appended"),
    ("global-list-changed-elsewhere", "HT103", B, 'return os.environ.get("APP_REGISTERED")', "test_registered"),
    ("string-method-result", "HT103", B, 'return os.environ.get("LESS")', "test_pager_is_less"),
    ("path-constant-truthy", "HT102", B, 'if path or os.path.isfile(".decided.env")', "test_env_file_looked_up"),
    ("order", "HT103", B, 'return os.environ.get("APP_RETRY_LIMIT")', "test_many_retries"),
    # test_posix_only's skipif is false here: it runs (and test_windows_only, skipped, is not listed anywhere)
    ("version-info", "HT103", P, 'return os.environ.get("MODERN_FLAG")', "test_modern test_posix_only"),
    # a class defined in each arm of a platform `if`: this platform's
    ("platform-class", "HT103", P, 'return os.environ.get("POSIX_LOCK_DIR")', "test_lock_of_this_platform"),
    ("path-replace", "HT102", S, "path.replace(path.with_suffix", "test_archive"),
    ("joined-path", "HT102", S, 'with open("/".join(chunks), "w")', "test_joined_target"),
    ("environ-membership", "HT102", B, 'with open(os.path.join(base, "state.json"), "w")',
     "test_state_in_the_home_folder"),
    ("url-in-working-directory", "HT101", U, "return sqlalchemy.create_engine(url)",
     "test_engine_in_the_working_directory"),
    ("no-file-loaded", "HT103", E, 'return os.environ.get("DECIDED_FLAG")', "test_flag_without_a_file"),
    ("identity", "HT103", T, 'return os.environ.get("DECIDED_CONFIG")', "test_default_config_file"),
    ("regex-and-return-value", "HT106", T, 'subprocess.check_output(["git", "clone", url])', "test_remote_template"),
    ("library-instance", "HT103", T, 'return os.environ.get("DECIDED_COOKIE_MAX_AGE")', "test_morsel_cookie"),
    # changes.pop("id") takes the entry out of the **changes dict: empty, it is falsy
    ("dict-emptied-by-pop", "HT103", "src/decided/changes.py", 'self.home = os.environ.get("DECIDED_JOB_HOME")',
     "test_job_with_its_id"),
    ("dict-emptied-by-del", "HT103", "src/decided/changes.py", 'return os.environ.get("DECIDED_RENAME_HOME")',
     "test_rename_with_the_old_name"),
    # a standard class's instance (datetime.datetime(...)) is typed by the class itself
    ("standard-class-instance", "HT104", T, "return datetime.datetime.now() + until", "test_deadline_in_an_hour"),
    # a built-in class's instance (object()) is typed by the class too: object() is no int
    # an object the test made (a StringIO, a function) is none of a library module's objects
    ("identity-with-a-library-object", "HT103", T, 'return os.environ.get("DECIDED_CI")',
     "test_colour_for_the_real_stdout"),
    ("builtin-class-instance", "HT103", T, 'return os.environ.get("DECIDED_ROTATION_UNIT")',
     "test_rotation_every_kilobyte"),
    ("cwd-relative-cache", "HT102", C, 'shutil.rmtree(".decided_cache"', "test_cache_cleared_here"),
    ("program-from-the-code", "HT106", "tests/test_reached.py", 'subprocess.run(commands.client_args("joe")',
     "test_real_client"),
    ("typing-cast", "HT103", T, 'return os.environ.get("DECIDED_TEMPROOT")', "test_base_folder_missing"),
    # callable("build") is False: test_command_named gets the decorator back, never a Command
    ("callable", "HT103", B, 'return os.environ.get("APP_COMPLETE_CALLED")', "test_command_bare"),
    # an existence check held in a variable decides no branch (it was taken for a truthy file object)
    ("existence-in-a-variable", "HT102", B, 'with open(path, "w") as fh:', "test_marker_written_here"),
    # p.exists() or False is not False: the fallback stays reachable, with medium confidence
    ("answer-or-literal", "HT102", B, 'return open("notes.txt").read()', "test_notes_fall_back"),
    ("run-time-name", "HT103", S, 'os.environ.get(f"_{prog}_COMPLETE"', "test_completion_var_unset"),
    # Path("tests", "files", "repo.zip") is a known string; Path("tests", "fake-repo") never ends in .zip
    # Pool.__init__(self, creator, **kw) binds the instance, not the class: recycle keeps its default -1
    ("base-init-through-the-class", "HT103", T, 'return os.environ.get("DECIDED_POOL_RECYCLE")', "test_pool_recycled"),
    # assert self.args == [] on a parser given args raises before the read
    ("assert-decided-false", "HT103", B, 'return os.environ.get("DECIDED_ADDOPTS")', "test_parsed_once"),
    # near miss: `seen` is set through a nonlocal callback the app calls, so the assertion holds
    ("assert-after-nonlocal-callback", "HT103", B, 'return os.environ.get("DECIDED_AFTER_CALLBACK")',
     "test_app_answers"),
    # a call that raises on every way ends the caller: only a valid port reads the variable
    ("call-that-raises", "HT103", B, 'return os.environ.get("DECIDED_AFTER_VALIDATE")', "test_valid_port"),
    # near miss: pytest.raises swallows the error, so what follows the block runs
    ("after-an-expected-error", "HT103", B, 'return os.environ.get("DECIDED_AFTER_EXPECTED_ERROR")',
     "test_after_an_expected_error"),
    # a double whose side_effect is an exception class raises when called
    ("double-raising", "HT103", B, 'return os.environ.get("DECIDED_AFTER_ENSURE")', "test_dump_with_its_folder"),
    # `try: import x` / `except ImportError: x = None` at module level leaves either: not decided
    ("optional-import", "HT103", "src/decided/optional.py", 'return os.environ.get("DECIDED_BACKEND_CONFIG")',
     "test_config_through_the_optional_backend"),
    # near miss of a raising call: a raise decided on an object made at import is not passed on
    ("raise-on-import-time-state", "HT103", T, 'return os.environ.get("DECIDED_MODEL_SOURCE")',
     "test_model_after_set_up"),
    # an instance of a class deriving from dict (or defining __len__ / __bool__) may be falsy
    ("instance-of-a-container-class", "HT103", B, 'return os.environ.get("DECIDED_SAVE_TARGET")', "test_form_saved"),
    # a module's top level goes on past a call the analysis takes to raise (it imports in practice)
    ("module-body-past-a-raising-call", "HT103", "src/decided/checked.py",
     'return os.environ.get("DECIDED_AFTER_IMPORT_CHECK")', "test_defined_after_a_top_level_check"),
    # `raise _unexpected(...)` on one way of an undecided if: what follows the if still runs
    ("raise-of-a-raising-call-on-one-way", "HT103", B, 'return os.environ.get("DECIDED_AFTER_KW_CHECK")',
     "test_returning_columns"),
    ("joined-literal-path", "HT103", S, 'return os.environ.get("DECIDED_ZIP_CACHE")', "test_archive_template"),
    # certifi.where() exists (catalogue [existing]); a path built from it need not: the write runs
    ("path-built-from-a-shipped-file", "HT102", "src/decided/bundle.py", 'with open(extracted, "w") as fh:',
     "test_member_of_the_bundle"),
    # near miss: a test that sets the instance's connection to a sentinel first makes none
    ("sentinel-attribute", "HT103", "src/decided/backend.py", 'os.environ.get("DECIDED_BACKEND_URL")',
     "TestBackend::test_connection_made"),
    # near miss: io.StringIO().isatty() is False (catalogue [answers]); the real stdout may be a terminal
    ("stream-in-memory", "HT103", "src/decided/streams.py", 'os.environ.get("DECIDED_PAGER")',
     "test_pager_on_the_real_stdout"),
    # a test expecting the exception raised at one place ends there (pytest.raises, assertRaises);
    # near misses: a test that does not expect it, and one raised at two places
    ("expected-exception", "HT102", "src/decided/expected.py", 'with open("decided-generated.txt", "w")',
     "test_template_generated"),
    ("expected-exception-two-sites", "HT102", "src/decided/expected.py", 'with open("decided-rendered.txt", "w")',
     "test_output_taken_somewhere"),
    # raised at two places, and the test's run reaches one of them only: it ends there; near
    # miss: the same call without pytest.raises
    ("expected-exception-one-site-reached", "HT102", "src/decided/expected.py",
     'with open("decided-published.txt", "w")', "test_published test_publish_conflicts_or_fails"),
    # a warning the test expects as an exception (assertRaisesMessage with the message the one
    # place issues): warnings are errors there, so the run ends at the warn; near miss: pytest.warns
    ("expected-warning", "HT102", "src/decided/expected.py", 'with open("decided-configured.txt", "w")',
     "test_old_option_recorded"),
    # ImportMode("importlib") is the member ImportMode.importlib, and `is` on members compares values
    ("enum-called-with-a-value", "HT103", "src/decided/modes.py", 'os.environ.get("DECIDED_IMPORT_MISMATCH")',
     "test_import_prepended"),
    # a try body that only calls a double raises nothing, so its handler is not reached; near
    # misses: the double given a side effect afterwards, and a patch's mock given one
    ("handler-of-a-double-given-a-side-effect", "HT103", "src/decided/pidfile.py",
     'return os.environ.get("DECIDED_BROKEN_PIDFILE")', "test_pid_file_broken"),
    ("handler-of-a-patch-given-a-side-effect", "HT103", "src/decided/pidfile.py",
     'return os.environ.get("DECIDED_PROCESS_GONE")', "test_process_gone"),
    # the handler catches the instance the double raises: `exc.errno` is the code the test set on
    # it, or OSError(code, message) holds (ENOENT, EAGAIN: ruled out); near misses: ESRCH, EPERM
    # given to Mock(side_effect=...), and an OSError made from unknown arguments
    ("handler-catches-the-instance-raised", "HT103", "src/decided/pidfile.py",
     'return os.environ.get("DECIDED_STALE_PROCESS")',
     "test_stale_process_gone test_stale_process_errno_unknown test_stale_process_double_made_raising"),
    # ... and a handler of another built-in class does not catch it; near miss: a SystemError raised
    ("handler-of-another-class", "HT103", "src/decided/pidfile.py",
     'return os.environ.get("DECIDED_KILL_SYSTEM_ERROR")', "test_stale_process_system_error"),
    # OSError(code, message) is the subclass its code makes (ESRCH: ProcessLookupError); near
    # miss of EPERM (a PermissionError, caught by the OSError handler after it)
    ("handler-of-the-subclass-the-code-makes", "HT103", "src/decided/pidfile.py",
     'return os.environ.get("DECIDED_NO_PROCESS")', "test_process_missing"),
    # no literal is the module's object() sentinel; near misses: the argument left out (the
    # sentinel itself), and a marker made at each call
    ("sentinel-missing", "HT103", "src/decided/backend.py", 'return os.environ.get("DECIDED_OPTION_FALLBACK")',
     "test_option_missing"),
    ("marker-made-per-call", "HT103", "src/decided/backend.py", 'return os.environ.get("DECIDED_FRESH_MARKER")',
     "test_marker_option_given"),
    # self.__dict__["conn"] = conn sets the attribute: a connection given rules the read out
    ("attribute-set-through-dict", "HT103", "src/decided/backend.py", 'return os.environ.get("DECIDED_HOLDER_URL")',
     "test_holder_without_a_connection"),
    # a key the test's context dict does not hold raises KeyError, and the handler says no; near
    # misses: a context that holds it, and one whose inner dict the code sets first
    ("key-the-dict-lacks", "HT103", "src/decided/contexts.py", 'return os.environ.get("DECIDED_COPY_MODE")',
     "test_copied_without_rendering test_copy_list_set_inside"),
    # a lazy proxy (catalogue [lazy]) is the value it stands for: a regular expression compiled on
    # first use matches known strings, a lazy function's result is the function's
    # (test_indented_json_source's text may start with "{" after the space: it may reach it, on a
    # way its values do not decide, so it is listed too and counted in the message)
    ("lazy-regular-expression", "HT103", "src/decided/proxies.py", 'return os.environ.get("DECIDED_JSON_SOURCE")',
     "test_json_source test_indented_json_source"),
    # a lazy proxy made at import reads nothing then (Django's gettext_lazy in WEEKDAYS); called in a test it does
    ("lazy-function-used", "HT103", "src/decided/proxies.py", 'return os.environ.get("DECIDED_LANGUAGE", "en") + message',
     "test_translated_when_used"),
    ("lazy-function", "HT103", "src/decided/proxies.py", 'return os.environ.get("DECIDED_ADMIN_TITLE")',
     "test_admin_title"),
    # a fresh Morsel() holds its reserved keys, each "" (catalogue [mappings]): the entry the test
    # sets takes the branch, the other is ruled out (and `isinstance(Morsel(), Morsel)` stays open)
    ("mapping-entry-set", "HT104", "src/decided/cookies.py", 'return time.time() + int(morsel["max-age"])',
     "test_cookie_max_age"),
    ("mapping-entry-left-empty", "HT103", "src/decided/cookies.py", 'return os.environ.get("DECIDED_COOKIE_EXPIRES")',
     "test_cookie_expires"),
    # sys.exit() never returns (catalogue [raises]): only the run without --version reads on
    ("after-a-library-exit", "HT103", "src/decided/exits.py", 'return os.environ.get("DECIDED_AFTER_EXIT")',
     "test_main_runs"),
    # a copy of a module's dict (copy.copy, dict(...)) keeps its entries: `in` is decided
    ("copied-dict", "HT103", "src/decided/configs.py", 'return os.environ.get("DECIDED_ABBREVIATION_BASE")',
     "test_template_abbreviated"),
    # the user's configuration (parsed from a file in the home folder) holds none of the test's
    # strings: a local template is never abbreviated to a URL; near misses: the program's own
    # abbreviation, and a configuration file the test names (what it holds is not known)
    ("user-config-keys", "HT106", "src/decided/configs.py", 'subprocess.check_output(["git", "clone", source])',
     "test_template_abbreviated_by_default test_template_with_a_config_file_of_its_own"),
    # a record made of keywords (SimpleNamespace, argparse.Namespace, a namedtuple class made at
    # run time) has those attributes: the stage the test passes decides the branch
    ("record-attribute", "HT103", C, 'os.environ.get("DECIDED_SKIP_POST_CHECKOUT")', "test_stage_post_checkout"),
    # a string default argument is its literal: the default decides the comparison
    ("default-argument-value", "HT103", C, 'os.environ.get("DECIDED_SKIP_STAGE")', "test_stage_given"),
    # `cmd += back` on a tuple joins in order (it was either tuple): cmd[0] is known
    ("tuple-augmented-join", "HT103", S, 'os.environ.get("DECIDED_FLAG_AS_PROGRAM")', "test_flag_first"),
    # so does d.pop(key) without a default; near miss: keywords passed as **value the analysis cannot list
    ("key-popped-the-dict-lacks", "HT103", "src/decided/contexts.py", 'return os.environ.get("DECIDED_PROG_NAME_GIVEN")',
     "test_program_named test_program_named_through_unknown_keywords"),
    # os.path.basename of a literal is its last part: "/tmp/." is refused before the read
    ("basename-of-a-literal", "HT103", S, 'return os.environ.get("DECIDED_FILE_NAME")', "test_file_name_kept"),
    # a comprehension whose filter may keep nothing may be empty (it was taken as holding an item)
    ("comprehension-maybe-empty", "HT103", B, 'return os.environ.get("DECIDED_FALLBACK_DIR")', "test_no_folder_found"),
    ("comprehension-filter-read", "HT102", B, "found = [p for p in paths if os.path.isdir(p)]", "test_no_folder_found"),
    # a module constant built from __file__ is no None: the fallback to the working directory is
    # ruled out (test_listing_of_shipped_data; invoke's FilesystemLoader(start=support))
    ("constant-is-not-none", "HT102", B, "return os.listdir(start)", "test_listing_from_the_working_directory"),
    # the parts a known string's split() gives are all there is: `"--daemon" in argv.split()` is
    # decided (test_no_daemon_flag; invoke's `--debug` in a completion's argv)
    ("flag-in-split-parts", "HT103", B, 'return os.environ.get("DECIDED_DAEMON_SOCKET")', "test_daemon_in_the_command_line"),
]
EXPECTED = [Expect(kind, code, path, snippet, tests=[R + t for t in test.split()])
            for kind, code, path, snippet, test in REACHED]
# the user's configuration is read whatever the template (the reads are true for the ruled-out test too)
USER_CONFIG_TESTS = [R + "test_template_abbreviated_by_default",
                     "tests/test_ruled_out.py::test_local_template_with_the_user_config"]
EXPECTED += [Expect("user-config-" + kind, code, "src/decided/configs.py", snippet, tests=USER_CONFIG_TESTS)
             for kind, code, snippet in (("constant", "HT201", 'USER_CONFIG = os.path.expanduser("~/.decidedrc")'),
                                         ("opened", "HT102", "with open(path) as fh:"),
                                         ("looked-up", "HT102", "if os.path.exists(USER_CONFIG):"))]
# a module skipped at import by a project helper's platform answer runs no test, nor its
# top-level set-up for that platform (watchdog's darwin-only modules, tests/test_darwin_tools.py);
# near miss: the module the helper keeps (tests/test_other_tools.py)
EXPECTED.append(Expect("helper-decided-module-kept", "HT103", P, 'return os.environ.get("DECIDED_OTHER_TOOL")',
                       tests=["tests/test_other_tools.py::test_other_tool"]))
EXPECTED.append(Expect("helper-decided-top-level-branch", "HT304", "tests/test_other_tools.py",
                       'logging.getLogger("decided.other").setLevel(logging.DEBUG)'))
# the registry the test fills is left changed: HT303 at the test's call
EXPECTED.append(Expect("registry-left-changed", "HT303", "tests/test_reached.py", 'branches.register("tool")',
                       tests=[R + "test_registered"]))

# a test module skipped as a whole by a module-level pytest.skip the platform decides runs
# nothing; the near miss (skipped on Windows only) runs here
EXPECTED.append(Expect("module-skipped-elsewhere", "HT103", "src/decided/exits.py",
                       'return os.environ.get("DECIDED_POSIX_TOOL")', tests=["tests/test_posix_tools.py::test_posix_tool"]))

L, RO = "src/decided/locales.py", "tests/test_ruled_out.py::"
# not test_unknown_locale_raises: 'klingon' is no key of LOCALES, which no file changes
EXPECTED.append(Expect("constant-dict-near-miss", "HT103", L, 'return os.environ.get("DECIDED_HUMANIZE")',
                       tests=[RO + "test_known_locale"]))
EXPECTED.append(Expect("changed-dict-undecided", "HT103", L, 'return os.environ.get("DECIDED_PLUGIN")',
                       tests=[RO + "test_unknown_plugin"]))
EXPECTED.append(Expect("absolute-literal-read", "HT102", L, 'return name if os.path.exists(name) else ""',
                       tests=[RO + "test_absolute_missing"]))

M = "src/decided/merge.py"
EXPECTED.append(Expect("empty-default-near-miss", "HT102", M, "return os.path.exists(settings_path)",
                       tests=[RO + "test_settings_given"]))
# not test_keywords_not_given / test_merged_default: the defaults hold no "/"
EXPECTED.append(Expect("keywords-and-merge", "HT102", M, "os.listdir(pattern)",
                       tests=[RO + "test_keywords_given", RO + "test_merged_override"]))

SILENT = [
    Silent("class-is-not-false", L, 'return os.environ.get("DECIDED_PREFIX")',
           "prefix=int: a class is not False and no str: TypeError before the read"),
    Silent("absolute-returns-first", L, "return path if os.path.exists(path) else",
           "os.path.isabs of an absolute literal: the working-directory path is never made"),
    Silent("module-skipped-here", "src/decided/exits.py", 'return os.environ.get("DECIDED_WINDOWS_TOOL")',
           "pytest.skip(allow_module_level=True) ends the module's import: its tests do not run"),
    Silent("skipped-test-state", "tests/test_ruled_out.py", 'platforms.STATE.append("seen")',
           "a test skipped on this platform changes nothing"),
    Silent("constant-in-a-variable", B, 'with open(path, "a") as fh:', "done = True returns first"),
    Silent("raise-before", B, 'os.environ.get("APP_AFTER_RAISE")', "nothing after a raise runs"),
    Silent("windows-constant", P, 'return os.environ["APPDATA"]', "WINDOWS is False on Linux"),
    Silent("os-name", P, 'return os.environ.get("LOCALAPPDATA")', "os.name is 'posix' on Linux"),
    Silent("platform-system", P, 'return os.environ.get("MAC_SUPPORT_DIR")', "platform.system() is 'Linux'"),
    Silent("windows-class", P, 'return os.environ.get("WIN_LOCK_DIR")', "the other arm's class"),
    Silent("str-join-replace", S, '", ".join(parts).replace', "str.replace on a joined string is no write"),
    Silent("name-replace", S, 'wheel.name.replace("1.0", "1.1")', "a path's .name is a string"),
    Silent("fstring-replace", S, 'f"{folder}/sub".replace', "an f-string is a string"),
    Silent("file-url-into-tmp", U, 'with open(path, "w")', "'file://' + tmp_path points into tmp_path"),
    Silent("save-of-a-restore", T, "old = os.environ.get(name)", "the value read is put back in the finally"),
    Silent("program-replaced-by-slice", "tests/test_ruled_out.py", "subprocess.run(args, check=False)",
           "args[0:1] = [sys.executable, script]: the test's own program"),
    Silent("program-replaced-after-many-options", "tests/test_ruled_out.py", "subprocess.run(options, check=False)",
           "options added by += under undecided branches keep the program first"),
    Silent("type-checking-only", T, 'return os.environ.get("DECIDED_FOR_TYPE_CHECKERS")', "TYPE_CHECKING is False"),
    Silent("file-descriptor", S, 'open(1, "w", closefd=False)', "1 is a file descriptor, not a path"),
    Silent("comprehension-over-a-display", B, 'return os.environ.get("DECIDED_NO_NAMES")',
           "a comprehension over a display, with no filter, holds an item"),
]

# a file the test never wrote in tmp_path holds no variables, but what dotenv_values() returns for
# a missing file is not modelled: the load may write the environment (HT302 at the call)
OPTIONAL = [Expect("load-of-a-missing-file", "HT302", "tests/test_ruled_out.py", 'envfile.load(tmp_path / ".env")')]

findings, test_reported, test_silent, test_nothing_else = fixture_suite(FIX, EXPECTED, SILENT, OPTIONAL)


def test_an_answer_about_the_file_system_keeps_its_branch_undecided(findings):
    """``safe_exists()`` returns ``p.exists()`` or ``False``: not False, so the fallback after
    ``if not found`` runs on an undecided branch (medium), not for certain (high)."""
    line = line_of(FIX, B, 'return open("notes.txt").read()')
    assert [f.confidence for f in findings if f.path == B and f.line == line] == ["medium"]


@pytest.mark.skipif(sys.platform == "win32", reason="the fixture's near misses assume a POSIX platform")
def test_the_configured_platform_decides_platform_branches(tmp_path, monkeypatch):
    """``platform = "win32"`` takes the Windows branches (and not the POSIX ones)."""
    root = copy_fixture(FIX, tmp_path)
    with open(root / "pyproject.toml", "a", encoding="utf-8") as f:
        f.write('\n[tool.hermetic]\nplatform = "win32"\n')
    monkeypatch.chdir(root)
    report, _ = run_check([], root)
    lines = {(f.path, f.line) for f in report.findings}
    assert (P, line_of(FIX, P, 'return os.environ["APPDATA"]')) in lines
    assert (P, line_of(FIX, P, 'return os.environ.get("LOCALAPPDATA")')) in lines
    assert (P, line_of(FIX, P, 'return os.environ.get("MAC_SUPPORT_DIR")')) not in lines
    assert (P, line_of(FIX, P, 'return os.environ.get("WIN_LOCK_DIR")')) in lines
    assert (P, line_of(FIX, P, 'return os.environ.get("POSIX_LOCK_DIR")')) not in lines


def test_an_unknown_platform_is_a_configuration_error(tmp_path):
    from hermetic.config import ConfigError, parse_hermetic
    with pytest.raises(ConfigError, match=r"tool\.hermetic\.platform: expected one of"):
        parse_hermetic({"platform": "windows"}, tmp_path / "pyproject.toml")


def _lit(x) -> V:
    # built by hand: values.lit interns into a module-level table (state a test would leave behind)
    return of(Origin("literal", expr=repr(x), path="m.py", line=1, value=x if isinstance(x, str) else repr(x)))


def test_values_of_literals_constants_and_tuples():
    assert values(_lit("a") | _lit(3)) in (["a", 3], [3, "a"])
    assert values(of(("seq", "tuple", (_lit(3), _lit(8))))) == [(3, 8)]
    built = of(Origin("literal", expr="'pre'", value="pre", partial=True))
    assert values(built) is None   # a string built from parts has no one value
    assert values(of(Origin("environment", expr="HOME"))) is None


@pytest.mark.parametrize("op, left, right, expected", [
    ("Equal", "a", "a", True), ("NotEqual", "a", "b", True), ("Equal", 1, 2, False),
    ("LessThan", 2, 3, True), ("GreaterThanEqual", (3, 12), (3, 8), True),
    ("In", "x", ("x", "y"), True), ("NotIn", "z", ("x", "y"), True), ("In", "ab", "cabd", True),
    ("Is", None, None, True), ("IsNot", True, None, True), ("LessThan", "a", 1, None),
])
def test_compare_decides_known_values(op, left, right, expected):
    def v(x):
        return of(("seq", "tuple", tuple(_lit(i) for i in x))) if isinstance(x, tuple) else _lit(x)
    assert compare(op, v(left), v(right)) is expected


def test_compare_is_undecided_when_alternatives_disagree():
    assert compare("Equal", _lit("a") | _lit("b"), _lit("a")) is None
    assert compare("Equal", _lit("a") | _lit("b"), _lit("c")) is False


def test_isinstance_by_the_types_of_the_atoms():
    builtin = [("builtin", "int")]
    assert isinstance_of(_lit("5000"), builtin, lambda a, c: None) is False
    assert isinstance_of(_lit(5000), builtin, lambda a, c: None) is True
    assert isinstance_of(_lit(True), builtin, lambda a, c: None) is True   # bool is an int
    assert isinstance_of(_lit(1) | _lit("1"), builtin, lambda a, c: None) is None
    assert isinstance_of(of(Origin("environment", expr="PORT")), builtin, lambda a, c: None) is None
    path = V(frozenset([Origin("test-value", expr="tmp_path")]), True)
    assert isinstance_of(path, [("builtin", "PathLike")], lambda a, c: None) is True
    assert isinstance_of(_lit("x"), [("project", "app.Thing")], lambda a, c: None) is False


def test_platform_facts_follow_the_configured_platform():
    win = platform_facts("win32")
    assert (win["os.name"], win["platform.system()"], win["os.sep"]) == ("nt", "Windows", "\\")
    linux = platform_facts("linux")
    assert (linux["sys.platform"], linux["os.name"], linux["platform.system()"]) == ("linux", "posix", "Linux")
    assert platform_facts(None)["sys.platform"] == sys.platform
    assert platform_facts(None)["sys.version_info"] == tuple(sys.version_info[:3])


def test_identity_is_decided_only_for_objects_made_apart():
    from hermetic.analyse.decide import identical

    tmp = V(frozenset([Origin("test-value", expr="tmp_path")]), True)
    home_constant = of(Origin("module-constant", expr="USER_CONFIG", inner=(Origin("home", expr="expanduser()"),)))
    env = of(Origin("environment", expr="APP_X"))
    assert identical(tmp, home_constant) is False
    assert identical(_lit("tests/x.cfg"), home_constant) is False
    assert identical(env, _lit(None)) is None          # an environment read may be None
    assert identical(_lit("a"), _lit("a")) is None      # two literals may be one interned object
    assert identical(of(("inst", 7)), of(("inst", 7))) is True
    assert identical(of(("inst", 7)), of(("inst", 8))) is False


def test_a_missing_key_raises_only_where_the_dict_is_known(tmp_path, monkeypatch):
    """``d["key"]`` raises KeyError only on a dict whose keys are all known: not on a global
    (filled elsewhere), an attribute, a ``Counter``, nor in test code (the test passes)."""
    monkeypatch.chdir(tmp_path)
    code = (
        "import os\nfrom collections import Counter\n\nSETTINGS = {'a': 1}\n\n\n"
        "class Box:\n    def __init__(self):\n        self.table = {'a': 1}\n\n\n"
        "def from_global():\n    SETTINGS['missing']\n    return os.environ.get('G_READ')\n\n\n"
        "def from_attribute(box):\n    box.table['missing']\n    return os.environ.get('A_READ')\n\n\n"
        "def from_counter():\n    c = Counter()\n    c['missing']\n    return os.environ.get('C_READ')\n\n\n"
        "def from_local():\n    d = {'a': 1}\n    d['missing']\n    return os.environ.get('L_READ')\n\n\n"
        "def plain():\n    return os.environ.get('T_READ')\n")
    test = ("import os\nimport app\n\n\n"
            "def test_lookups():\n    d = {}\n    d['x']\n    app.plain()\n    app.from_global()\n"
            "    app.from_attribute(app.Box())\n    app.from_counter()\n    app.from_local()\n")
    report, _ = check_files(tmp_path, {"app.py": code, "tests/test_app.py": test})
    read = {f.message.split("variable ")[1].split(",")[0] for f in report.findings if f.code == "HT103"}
    assert read == {"G_READ", "A_READ", "C_READ", "T_READ"}


def test_a_raise_site_counts_for_the_message_a_test_names():
    """assertRaisesMessage(E, msg) counts the places whose message may hold msg: a literal that
    holds it, the same constant, one the analysis cannot read; not another literal, nor another
    constant."""
    from hermetic.analyse.expected import _may_match

    wanted = ("name", "OLD_MSG", "the old option is deprecated")
    assert _may_match(("name", "OLD_MSG", None), wanted)
    assert not _may_match(("name", "NEW_MSG", None), wanted)
    assert _may_match(("text", "warning: the old option is deprecated, use new"), wanted)
    assert not _may_match(("text", "the option was renamed"), wanted)
    assert _may_match(None, wanted) and _may_match(("text", "anything"), None)
    assert _may_match(("name", "ANY", None), ("text", "renamed"))


def test_a_pattern_rules_out_strings_by_their_first_character():
    """re.match on a string known by its start: ruled out when the pattern cannot begin with
    its first character; left open where the pattern may match an empty string, ignores case,
    or begins with something not read here."""
    from hermetic.analyse.regexes import _first_chars

    starts = _first_chars(r"^(\s+)?\{.*}(\s+)?$", 16)
    assert not starts("/") and starts("{") and starts(" ")
    assert _first_chars(r"(git|hg)\+|https?://", 0)("h") and not _first_chars(r"(git|hg)\+|https?://", 0)("t")
    assert _first_chars(r"a*", 0) is None                 # may match nothing
    assert _first_chars(r"abc", 2) is None                # re.IGNORECASE
    assert _first_chars(r"(?=x)x", 0) is None             # a lookahead


def test_pytest_own_suite_keeps_its_test_api_modelled(tmp_path, monkeypatch):
    """Where pytest itself is the project, ``pytest.mark.parametrize`` is still a mark (its rows
    run one by one) and ``tmp_path`` the builtin empty folder, not pytest's own code for them:
    the row writing ``app.ini`` reads no variable, the other does (near miss)."""
    monkeypatch.chdir(tmp_path)
    files = {
        "src/pytest/__init__.py": "from _pytest.mark import MARK_GEN as mark\n",
        "src/_pytest/__init__.py": "",
        "src/_pytest/mark.py": "class MarkGenerator:\n    pass\n\n\nMARK_GEN = MarkGenerator()\n",
        "src/_pytest/tmpdir.py": ("import tempfile\nfrom pathlib import Path\n\nimport pytest\n\n\n"
                                  "@pytest.fixture\ndef tmp_path():\n    return Path(tempfile.mkdtemp())\n"),
        "src/app.py": ("import os\n\n\ndef settings(folder):\n    if (folder / 'app.ini').is_file():\n"
                       "        return (folder / 'app.ini').read_text()\n    return os.environ.get('APP_INI')\n"),
        "testing/conftest.py": "pytest_plugins = ['_pytest.tmpdir']\n",
        "testing/test_app.py": ("import pytest\n\nimport app\n\n\n@pytest.mark.parametrize('made', [True, False])\n"
                                "def test_settings(tmp_path, made):\n    if made:\n"
                                "        (tmp_path / 'app.ini').write_text('x')\n    app.settings(tmp_path)\n"),
    }
    files["pyproject.toml"] = '[tool.pytest.ini_options]\npythonpath = ["src"]\n'
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    report, _ = run_check([], tmp_path)
    reads = [f for f in report.findings if f.code == "HT103"]
    assert len(reads) == 1 and "APP_INI" in reads[0].message
    assert reads[0].tests == ["testing/test_app.py::test_settings"]
    assert reads[0].confidence == "high"   # the row that made no app.ini, decided


def test_a_dict_holding_only_entries_the_analysis_cannot_name_may_be_empty():
    # `if changes: raise` on a **changes a caller spread an unknown dict into: it may be empty
    # (APScheduler's Job._modify refused every job; a new user's trial); one known whole and
    # empty is falsy, one with a named entry truthy
    from hermetic.analyse.contents import WHOLE
    from hermetic.analyse.literals import truthiness
    from hermetic.analyse.values import UNKNOWN_V, Origin, of

    named = of(Origin("literal", expr="'x'", value="x", in_test=True))   # (not values.lit: it interns)
    assert truthiness(of(("dict", ((None, UNKNOWN_V),)))) is None
    assert truthiness(of(("dict", (), WHOLE))) is False
    assert truthiness(of(("dict", (("id", named), (None, UNKNOWN_V))))) is True


def test_an_object_instance_is_ruled_out_by_isinstance_int(findings):
    # object() is typed by the built-in class: test_rotation_refused raises first, not even counted
    line = line_of(FIX, T, 'return os.environ.get("DECIDED_ROTATION_UNIT")')
    [found] = [f for f in findings if f.path == T and f.line == line]
    assert "may reach it" not in found.message, found.message
    made = of(Origin("unknown", expr="object()", value="instance builtins.object"))
    assert isinstance_of(made, [("builtin", "int")], lambda a, c: None) is False
    assert isinstance_of(made, [("builtin", "object")], lambda a, c: None) is True


def test_an_object_the_test_made_is_no_library_object(findings):
    line = line_of(FIX, T, 'return os.environ.get("DECIDED_CI")')
    [found] = [f for f in findings if f.path == T and f.line == line]
    assert "may reach it" not in found.message, found.message   # the two ruled out are not counted


def test_a_lazy_proxy_made_at_import_reads_nothing_then(findings):
    line = line_of(FIX, "src/decided/proxies.py", 'return os.environ.get("DECIDED_LANGUAGE", "en") + message')
    assert not [f for f in findings if f.code == "HT203" and f.line == line and f.path == "src/decided/proxies.py"]
