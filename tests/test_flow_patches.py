"""Substitutes (contract S1, S5, V3), fixture flow-patches.

monkeypatch.setattr (object + name, dotted string), mock.patch as decorator, mock.patch.object as
context manager, patch(...).start() with addCleanup(stop), mocker.patch; on a project function on
the path and on the sink itself. setattr of the URL constant installs a value that is then traced.
"""
import pytest

from helpers import (fixture_suite, Expect, Silent, listed_at)

FIX = "flow-patches"
R = "src/sync/remote.py"
SH = "src/sync/shell.py"
TP = "tests/test_push.py::"
TM = "tests/test_mirror.py::"
PUSH = 'requests.post(API + "/push"'
RSYNC = 'subprocess.run(["rsync"'


EXPECTED = [
    # the project function writes the variables a .env file names, and nothing puts them back
    Expect("dotenv-entries-left-in-the-environment", "HT302", "tests/test_optional.py",
           "optional.load_env_file()   # its variables stay in os.environ"),
    # V3: setattr(remote, "API", "https://staging...") installs a non-loopback URL: still uncontrolled
    # near miss of the loop below: the names patched in it leave push out
    Expect("push", "HT105", R, PUSH, tests=[TP + "test_push_live", TP + "test_push_to_staging",
                                             TP + "test_push_other_names_patched_in_a_loop"]),
    Expect("rsync", "HT106", SH, RSYNC, tests=[TM + "test_mirror_live"], origin="literal"),
    # an import the test blocks in sys.modules raises: the ImportError fallback runs, and nothing
    # after the import (the loader that sets variables never runs, so the test's read is real)
    Expect("blocked-import-fallback", "HT103", "src/sync/optional.py", 'os.environ.get("SYNC_FALLBACK_CODEC"',
           tests=["tests/test_optional.py::test_without_zstandard"]),
    Expect("blocked-import-no-loader", "HT103", "tests/test_optional.py", 'assert "SYNC_TOKEN" not in os.environ',
           tests=["tests/test_optional.py::test_without_dotenv"]),
    # patch.object of a name re-exported in `try: from .disk import Store / except ImportError:
    # Store = placeholder`: the class that has the attribute is patched (requests-cache's
    # SQLiteDict.sorted; a new user's trial); near miss: the unpatched test
    Expect("patched-class-of-a-guarded-re-export", "HT104", "src/sync/stores/disk.py",
           "return (time(),) if not expired else ()", tests=["tests/test_stores.py::TestLedger::test_cleanup"]),
]

CONTROLLED = [
    (R, PUSH, "HT105", TP + "test_push_setattr_object", "setattr-object"),
    (R, PUSH, "HT105", TP + "test_push_setattr_dotted", "setattr-dotted-string"),
    (R, PUSH, "HT105", TP + "test_push_patch_decorator", "patch-decorator"),
    (R, PUSH, "HT105", TP + "test_push_patch_built_target", "patch-decorator-target-built-with-plus"),
    (R, PUSH, "HT105", TP + "test_push_patch_context_manager", "patch-object-context-manager"),
    (R, PUSH, "HT105", TP + "test_push_mocker", "mocker-patch"),
    (R, PUSH, "HT105", TP + "test_push_patch_plain_context_manager", "patch-context-manager"),
    (R, PUSH, "HT105", TP + "TestPushStarted::test_push", "patch-start-addCleanup-on-sink"),
    (R, PUSH, "HT105", TP + "test_push_to_loopback", "setattr-installs-loopback-url"),
    (R, PUSH, "HT105", TP + "test_push_names_patched_in_a_loop", "patch-object-in-a-loop-over-names"),
    (SH, RSYNC, "HT106", TM + "test_mirror_patched_object", "setattr-subprocess-run"),
    (SH, RSYNC, "HT106", TM + "test_mirror_mocker", "mocker-patch-subprocess-run"),
]

SILENT = [
    # the loader may set any variable where dotenv imports: the read after it is not known
    Silent("loader-may-set-it", "tests/test_optional.py", 'assert "SYNC_TOKEN" in os.environ',
           "load_env_file() with dotenv importable may set it"),
    Silent("patched-sink-decorator", R, 'requests.get(API + "/pull"', "requests.get patched by a decorator (S1)"),
    Silent("patch-multiple", R, 'requests.delete(f"{API}/items/', "remote.delete replaced by mock.patch.multiple (S1)"),
    Silent("patch-start", "tests/test_push.py", "self.fake_post = patcher.start()", "stopped by addCleanup: not HT304"),
    Silent("setattr-line", "tests/test_push.py", 'monkeypatch.setattr(remote, "push"', "restored by monkeypatch"),
]

findings, test_reported, test_silent, test_nothing_else = fixture_suite(FIX, EXPECTED, SILENT)


@pytest.mark.parametrize("path, snippet, code, node, form", CONTROLLED, ids=[c[4] for c in CONTROLLED])
def test_patched_test_not_listed(findings, path, snippet, code, node, form):
    assert node not in listed_at(FIX, findings, code, path, snippet)




def test_monkeypatch_undo_puts_back_what_it_replaced(tmp_path, monkeypatch):
    """After ``monkeypatch.undo()`` the real environment and functions are back: what the test
    reaches then is reported; a patch made after the undo, or by mock.patch, still counts."""
    from hermetic.api import run_check

    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_u.py").write_text('''import os
from unittest import mock


def test_env(monkeypatch):
    monkeypatch.setenv("APP_MODE", "x")
    os.getenv("APP_MODE")
    monkeypatch.undo()
    os.getenv("APP_MODE")


def test_attr(monkeypatch):
    monkeypatch.setattr(os, "getcwd", lambda: "/tmp")
    monkeypatch.undo()
    open(os.path.join(os.getcwd(), "x"), "w")


def test_set_again(monkeypatch):
    monkeypatch.setenv("APP_MODE", "x")
    monkeypatch.undo()
    monkeypatch.setenv("APP_MODE", "y")
    os.getenv("APP_MODE")


@mock.patch.dict(os.environ, {"APP_MODE": "z"})
def test_mock_stays(monkeypatch):
    monkeypatch.setenv("OTHER", "1")
    monkeypatch.undo()
    os.getenv("APP_MODE")
''', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    report, _ = run_check([], tmp_path)
    assert sorted((f.code, f.line) for f in report.findings) == [("HT102", 15), ("HT103", 9)]
