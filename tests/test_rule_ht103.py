"""HT103: environment reads at call time (fixture ht103-env); a loop over the whole environment's
items reads every variable."""
import pytest

from helpers import fixture_suite, Expect, Silent

FIX = "ht103-env"
C = "src/notifier/config.py"
T = "tests/test_config.py::"

EXPECTED = [
    # a test class nested in another is collected (invoke's trial: pytest-relaxed suites nest them)
    Expect("nested-test-class", "HT103", C, 'os.environ.get("NOTIFIER_RETRIES"',
           tests=[T + "TestDelivery::TestRetries::test_retries_default"]),
    # set by neither test; a setenv of another variable does not control it
    Expect("environ-get", "HT103", C, 'os.environ.get("NOTIFIER_SMTP_HOST"',
           tests=[T + "test_default_host", T + "test_host_with_other_variable_set"]),
    Expect("environ-getitem", "HT103", C, 'os.environ["NOTIFIER_TOKEN"]', tests=[T + "test_token_missing"]),
    # a test function imported into another test module is collected there too (a new user's
    # trial on typer)
    Expect("getenv", "HT103", C, 'os.getenv("NOTIFIER_SENDER"',
           tests=[T + "test_default_sender", "tests/test_reexport.py::test_default_sender"]),
    # shutil.which searches the folders on PATH: a read of PATH (the test on a scratch PATH is not listed)
    Expect("which-reads-path", "HT103", C, 'shutil.which("sendmail")', tests=[T + "test_mail_program_on_the_real_path"]),
    # V3: setenv controls the read, but the value it installs (/srv/notices) is then written to
    Expect("setenv-installs-server-path", "HT102", C, '(outbox_dir() / f"{name}.txt").write_text',
           tests=[T + "test_notice_in_server_outbox"]),
    # pytester sets PY_COLORS=0 and HOME to its folder (catalogue [fixture_environment]): only the
    # test without it reads the variables and the home folder
    Expect("pytester-environment", "HT103", C, 'os.environ.get("PY_COLORS")', tests=[T + "test_colour_scheme"]),
    Expect("pytester-environment-later-read", "HT103", C, 'os.environ.get("NOTIFIER_COLOUR_SCHEME")',
           tests=[T + "test_colour_scheme"]),
    Expect("pytester-home", "HT102", C, '(Path.home() / ".notifierrc").read_text()', tests=[T + "test_rc_file"]),
    # os.environ handed to a function that loops over its items reads every variable: a setenv of one
    # does not control it, a cleared environment does (near miss: not listed)
    Expect("whole-environment", "HT103", C, "return {k[len(prefix):].lower(): v for k, v in environ.items()",
           tests=[T + "test_all_settings_with_one_set"]),
]

SILENT = [
    Silent("cleared-or-set", C, 'os.environ.get("NOTIFIER_REGION"', "patch.dict(clear=True) and setenv (S2)"),
    Silent("setenv-read", C, 'os.environ.get("NOTIFIER_OUTBOX"', "both reaching tests setenv it (S2)"),
    Silent("monkeypatch-setenv", "tests/test_config.py", 'monkeypatch.setenv("NOTIFIER_SMTP_HOST"', "restored: not HT302"),
    Silent("patch-dict-cm", "tests/test_config.py", 'mock.patch.dict(os.environ, {"NOTIFIER_TOKEN"', "restored"),
    Silent("patch-dict-decorator", "tests/test_config.py", '@mock.patch.dict(os.environ, {"NOTIFIER_SENDER"', "restored"),
    Silent("patch-dict-clear", "tests/test_config.py", "mock.patch.dict(os.environ, {}, clear=True)", "restored"),
]

findings, test_reported, test_silent, test_nothing_else = fixture_suite(FIX, EXPECTED, SILENT)

# Tests that control the variable the function reads: never listed at that read.
CONTROLLED = [
    ("environ-get", 'os.environ.get("NOTIFIER_SMTP_HOST"', "test_host_from_env"),
    ("environ-getitem", 'os.environ["NOTIFIER_TOKEN"]', "test_token_from_patched_environ"),
    ("getenv", 'os.getenv("NOTIFIER_SENDER"', "test_sender_from_patched_environ"),
    ("getenv", 'os.getenv("NOTIFIER_SENDER"', "test_sender_deleted"),
]


@pytest.mark.parametrize("snippet, test", [c[1:] for c in CONTROLLED], ids=[c[2] for c in CONTROLLED])
def test_controlled_test_not_listed(findings, snippet, test):
    from helpers import listed_at
    assert T + test not in listed_at(FIX, findings, "HT103", C, snippet)




def test_a_read_of_every_variable_says_so(findings):
    from helpers import at, line_of
    line = line_of(FIX, C, "return {k[len(prefix):].lower(): v for k, v in environ.items()")
    [found] = at(findings, C, line, "HT103")
    assert "the whole environment" in found.message and "clear=True" in found.fix, (found.message, found.fix)
