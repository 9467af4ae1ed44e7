"""The pytest plugin, end to end: pytest runs in a subprocess (pytester) on a copy of
fixtures/runtime, with HOME moved to a scratch folder so nothing can reach the real one."""
import json
import shutil
import sys
from importlib import metadata
from pathlib import Path

import pytest

from helpers import line_of
from hermetic.check import run_check

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
FIX = "runtime"
STORE = "src/ledgerbox/store.py"
T = "tests/test_store.py::"


@pytest.fixture
def ledgerbox(pytester, monkeypatch):
    """pytester holding a copy of fixtures/runtime, HOME a scratch folder inside it."""
    shutil.copytree(FIXTURES / FIX, pytester.path, dirs_exist_ok=True)
    home = pytester.path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return pytester


def run(pytester, *args):
    return pytester.runpytest_subprocess("-p", "no:randomly", "-p", "no:cacheprovider", *args)


def record_of(pytester, name="hermetic-record.json"):
    return json.loads((pytester.path / name).read_text(encoding="utf-8"))


def line_in(pytester, name, snippet):
    lines = (pytester.path / name).read_text(encoding="utf-8").splitlines()
    [n] = [i for i, text in enumerate(lines, 1) if snippet in text]
    return n


def events_of(record, test, **match):
    return [e for e in record["events"] if e["test"] == T + test and all(e[k] == v for k, v in match.items())]


# ---- registration ----------------------------------------------------------------------

def test_the_entry_point_registers_the_plugin():
    eps = metadata.entry_points()
    group = eps.select(group="pytest11") if hasattr(eps, "select") else eps.get("pytest11", [])
    assert "hermetic.plugin" in {ep.value for ep in group if ep.name == "hermetic"}, \
        "pytest11 entry point missing: reinstall (pip install -e .) after changing pyproject.toml"


def test_importing_the_plugin_stays_light(pytester):
    res = pytester.runpython_c(
        "import sys, hermetic.plugin; "
        "print(sorted(m for m in ('libcst', 'rich', 'click', 'hermetic.runtime', 'hermetic.check') if m in sys.modules))")
    assert res.ret == 0
    assert res.outlines[-1] == "[]"


def test_without_the_option_nothing_is_active(ledgerbox):
    res = run(ledgerbox)
    res.assert_outcomes(passed=14, skipped=1)
    assert not (ledgerbox.path / "hermetic-record.json").exists()
    assert "hermetic:" not in res.stdout.str()
    # nothing blocked: the uncontrolled write reached the (scratch) home folder
    assert (ledgerbox.path / "home" / ".ledgerbox" / "last.json").exists()


# ---- enforce -----------------------------------------------------------------------------

def test_enforce_fails_a_write_to_the_home_folder(ledgerbox):
    res = run(ledgerbox, "--hermetic=enforce", "-k", "test_save_to_home")
    res.assert_outcomes(failed=1)
    out = res.stdout.str()
    mkdir = line_of(FIX, STORE, "base.mkdir(")
    assert f"HT102 uncontrolled file write {ledgerbox.path / 'home' / '.ledgerbox'} (the home folder)" in out
    assert f"at {STORE}:{mkdir} in save_last" in out
    assert f"called from tests/test_store.py:{line_of(FIX, 'tests/test_store.py', 'store.save_last([1, 2])')}" in out
    # blocked before it happened
    assert not (ledgerbox.path / "home" / ".ledgerbox").exists()


def test_enforce_passes_the_same_write_to_tmp_path(ledgerbox):
    res = run(ledgerbox, "--hermetic=enforce", "-k", "test_save_to_tmp")
    res.assert_outcomes(passed=1)
    rec = record_of(ledgerbox)
    writes = events_of(rec, "test_save_to_tmp", access="write")
    assert {e["operation"] for e in writes} == {"os.mkdir", "open"}
    assert {e["verdict"] for e in writes} == {"controlled"}


def test_enforce_fails_a_violation_the_code_swallows(ledgerbox):
    # save_quietly() catches OSError around the blocked write: the test still fails
    res = run(ledgerbox, "--hermetic=enforce", "-k", "test_save_quietly")
    res.assert_outcomes(failed=1)
    out = res.stdout.str()
    assert "tests/test_store.py::test_save_quietly performed uncontrolled I/O" in out
    assert "the test fails even if the code swallowed the error" in out
    assert not (ledgerbox.path / "home" / ".ledgerbox").exists()


def test_enforce_without_blocking_lets_it_happen_and_still_fails(ledgerbox):
    res = run(ledgerbox, "--hermetic=enforce", "--hermetic-no-block", "-k", "test_save_quietly")
    res.assert_outcomes(failed=1)
    assert (ledgerbox.path / "home" / ".ledgerbox" / "last.json").exists()


def test_record_mode_observes_without_failing(ledgerbox):
    res = run(ledgerbox, "--hermetic=record", "-k", "test_save_quietly or test_token_default")
    res.assert_outcomes(passed=2)
    rec = record_of(ledgerbox)
    assert [e["verdict"] for e in events_of(rec, "test_save_quietly", operation="open")] == ["uncontrolled"]
    assert rec["summary"]["uncontrolled"] == 3       # mkdir, open, the token read
    assert "3 uncontrolled" in res.stdout.str()


def test_enforce_fails_at_teardown_what_a_fixture_does_after_yield(pytester):
    pytester.makepyfile(test_late="""
        import os
        import pytest

        @pytest.fixture
        def late():
            yield
            os.environ.get("HERMETIC_LATE_PROBE")

        def test_it(late):
            pass
        """)
    res = run(pytester, "--hermetic=enforce")
    res.assert_outcomes(passed=1, errors=1)
    out = res.stdout.str()
    assert "ERROR at teardown of test_it" in out
    assert "environment read 'HERMETIC_LATE_PROBE' (the real environment)" in out
    assert "[teardown]" in out


def test_enforce_fails_an_expected_failure_too(pytester):
    pytester.makepyfile(test_xf="""
        import os
        import pytest

        @pytest.mark.xfail(reason="known bug")
        def test_it():
            os.getenv("HERMETIC_XFAIL_PROBE")
            assert False
        """)
    res = run(pytester, "--hermetic=enforce")
    res.assert_outcomes(failed=1)
    assert "HERMETIC_XFAIL_PROBE" in res.stdout.str()


def test_an_inline_suppression_is_honoured(pytester):
    pytester.makepyfile(test_supp="""
        import os

        def test_it():
            os.getenv("HERMETIC_SUPPRESSED_PROBE")  # hermetic: ignore[HT103]
        """)
    res = run(pytester, "--hermetic=enforce")
    res.assert_outcomes(passed=1)
    [ev] = record_of(pytester)["events"]
    assert (ev["verdict"], ev.get("suppressed")) == ("uncontrolled", True)
    assert "1 more suppressed inline" in res.stdout.str()


# ---- anchors: the record lines up with the static findings ----------------------------

def test_record_anchors_are_the_static_anchors(ledgerbox):
    res = run(ledgerbox, "--hermetic=record")
    res.assert_outcomes(passed=14, skipped=1)
    rec = record_of(ledgerbox)
    report, _cfg = run_check([], ledgerbox.path)
    static = {(f.code, f.path, f.line): set(f.tests) for f in report.findings}
    for test, code, snippet in [("test_token_default", "HT103", 'os.environ.get("LEDGERBOX_TOKEN"'),
                                ("test_stamp", "HT104", "return time.time()"),
                                ("test_label", "HT104", "datetime.now()"),
                                ("test_save_to_home", "HT102", "target.write_text("),
                                ("test_hello", "HT106", "subprocess.run(")]:
        line = line_of(FIX, STORE, snippet)
        [ev] = [e for e in events_of(rec, test, code=code, verdict="uncontrolled") if e["operation"] != "os.mkdir"]
        assert (ev["path"], ev["line"], ev["phase"]) == (STORE, line, "call")
        assert T + test in static[(code, STORE, line)], sorted(static)


def test_record_classifies_the_controlled_runs(ledgerbox):
    run(ledgerbox, "--hermetic=record").assert_outcomes(passed=14, skipped=1)
    rec = record_of(ledgerbox)
    token = line_of(FIX, STORE, 'os.environ.get("LEDGERBOX_TOKEN"')
    for test in ("test_token_from_env", "test_token_deleted"):      # monkeypatch.setenv / delenv
        [ev] = events_of(rec, test, code="HT103")
        assert (ev["line"], ev["verdict"], ev["target"]) == (token, "controlled", "LEDGERBOX_TOKEN")
    assert events_of(rec, "test_stamp_substituted", category="clock") == []   # the substitute ran, not the clock
    assert {e["verdict"] for e in events_of(rec, "test_ledger_in_memory")} == {"controlled"}
    [db] = events_of(rec, "test_ledger_in_tmp", category="connection")
    assert db["verdict"] == "controlled" and db["reason"] == "under the test's temporary folder"
    assert events_of(rec, "test_archive") == []                  # skipped: never ran
    missed = line_of(FIX, STORE, "return lookup(name)")
    [ev] = events_of(rec, "test_setting")
    assert (ev["operation"], ev["line"], ev["verdict"]) == ("os.getenv", missed, "uncontrolled")
    assert [s["function"] for s in ev["stack"]] == ["setting", "test_setting"]
    assert rec["rootdir"] == str(ledgerbox.path)
    tests = {t["nodeid"]: t for t in rec["tests"]}
    assert tests[T + "test_archive"]["outcome"] == "skipped"
    assert tests[T + "test_stamp"]["uncontrolled"] == 1


def test_no_profiler_is_left_behind(ledgerbox):
    # tests/test_zz_after.py runs last and checks what every earlier test started with
    for mode, outcomes in (("record", dict(passed=4)), ("enforce", dict(passed=2, failed=2))):
        res = run(ledgerbox, f"--hermetic={mode}", "-v", "-k", "test_label or test_stamp or test_zz_after")
        res.assert_outcomes(**outcomes)
        assert "test_zz_after.py::test_no_profiler_left_behind PASSED" in res.stdout.str()


def test_a_prior_profiler_is_chained_and_restored(pytester):
    pytester.makeconftest("""
        import sys

        SEEN = []
        MINE = lambda frame, event, arg: SEEN.append(frame.f_code.co_name)

        def pytest_runtest_logstart(nodeid, location):
            sys.setprofile(MINE)

        def pytest_runtest_logfinish(nodeid, location):
            assert sys.getprofile() is MINE, sys.getprofile()
            assert "helper" in SEEN     # called only inside the plugin's window: it was chained
            sys.setprofile(None)
        """)
    pytester.makepyfile(test_chain="""
        import time

        def helper():
            return 1

        def test_it():
            assert helper() == 1
            time.time()
        """)
    res = run(pytester, "--hermetic=record")
    res.assert_outcomes(passed=1)
    assert "INTERNALERROR" not in res.stdout.str()
    [ev] = record_of(pytester)["events"]
    assert (ev["operation"], ev["path"], ev["line"]) == ("time.time", "test_chain.py", line_in(pytester, "test_chain.py", "time.time()"))


def test_reads_in_a_thread_started_by_the_test_are_seen(pytester):
    pytester.makepyfile(test_thread="""
        import sys
        import threading
        import time

        def test_it():
            seen = []
            th = threading.Thread(target=lambda: seen.append(time.time()))
            th.start()
            th.join()
            assert seen
        """)
    res = run(pytester, "--hermetic=record")
    res.assert_outcomes(passed=1)
    [ev] = record_of(pytester)["events"]
    assert (ev["test"], ev["operation"], ev["line"]) == (
        "test_thread.py::test_it", "time.time", line_in(pytester, "test_thread.py", "time.time()"))


def test_loopback_servers_of_the_test_are_controlled(pytester):
    pytester.makepyfile(test_net="""
        import socket

        def test_own_server():
            server = socket.socket()
            server.bind(("127.0.0.1", 0))
            server.listen()
            client = socket.create_connection(server.getsockname(), timeout=2)
            client.close()
            server.close()

        def test_closed_loopback_port():
            probe = socket.socket()
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
            probe.close()
            try:
                socket.create_connection(("127.0.0.1", port), timeout=2).close()
            except OSError:
                pass
        """)
    run(pytester, "--hermetic=record").assert_outcomes(passed=2)
    events = record_of(pytester)["events"]
    connects = {e["test"].split("::")[1]: e for e in events if e["operation"] == "socket.connect"}
    assert connects["test_own_server"]["verdict"] == "controlled"
    assert connects["test_closed_loopback_port"]["verdict"] == "uncontrolled"
    assert connects["test_closed_loopback_port"]["code"] == "HT105"
    run(pytester, "--hermetic=enforce").assert_outcomes(passed=1, failed=1)
    run(pytester, "--hermetic=enforce", "--hermetic-loopback").assert_outcomes(passed=2)


def test_import_time_io_is_recorded_as_collection(pytester):
    pytester.makepyfile(test_import="""
        from pathlib import Path

        Path("state.txt").write_text("written at import")

        def test_it():
            pass
        """)
    res = run(pytester, "--hermetic=enforce")
    res.assert_outcomes(passed=1)      # collection is recorded, never blocked or failed
    [ev] = record_of(pytester)["events"]
    assert (ev["test"], ev["phase"], ev["verdict"], ev["line"]) == (
        "", "collect", "uncontrolled", line_in(pytester, "test_import.py", "write_text"))
    assert ev["reason"] == "a write into the project tree"
    assert "hermetic: at import (collection): HT102" in res.stdout.str()


def test_the_record_path_option(ledgerbox):
    run(ledgerbox, "--hermetic=record", "--hermetic-record=out/run.json", "-k", "test_stamp").assert_outcomes(passed=2)
    assert not (ledgerbox.path / "hermetic-record.json").exists()
    rec = record_of(ledgerbox, "out/run.json")
    assert rec["kind"] == "hermetic-record" and rec["mode"] == "record"
    assert {t["nodeid"] for t in rec["tests"]} == {T + "test_stamp", T + "test_stamp_substituted"}
    assert rec["python"] == ".".join(map(str, sys.version_info[:3]))


def test_a_forked_child_inherits_no_profiler(pytester):
    pytester.makepyfile(test_fork="""
        import multiprocessing
        import sys

        def probe(queue):
            queue.put(sys.getprofile() is None)

        def test_it():
            ctx = multiprocessing.get_context("fork")
            queue = ctx.Queue()
            child = ctx.Process(target=probe, args=(queue,))
            child.start()
            child.join()
            assert queue.get(timeout=10) is True
            assert sys.getprofile() is not None     # the parent's window is still open
        """)
    res = run(pytester, "--hermetic=record")
    res.assert_outcomes(passed=1)
    [fork] = [e for e in record_of(pytester)["events"] if e["category"] == "subprocess"]
    assert (fork["operation"], fork["verdict"]) == ("os.fork", "controlled")   # started by the test itself


def test_a_real_clock_read_past_a_substitute_is_flagged_as_an_escape(pytester):
    pytester.makepyfile(test_escape="""
        import time

        REAL = time.time

        def test_it(monkeypatch):
            monkeypatch.setattr(time, "time", lambda: 0.0)
            assert time.time() == 0.0        # the substitute: no real clock read
            assert REAL() > 0                # a binding captured before it: the real clock
        """)
    run(pytester, "--hermetic=record").assert_outcomes(passed=1)
    [ev] = record_of(pytester)["events"]
    assert ev["line"] == line_in(pytester, "test_escape.py", "REAL() > 0")
    assert ev["reason"].startswith("the real clock (a substitute is installed, but this call reached the real clock")


def test_an_xdist_worker_writes_its_own_record(pytester):
    # what pytest-xdist gives a worker's config; the controller (dist != "no") writes nothing
    pytester.makeconftest("""
        def pytest_configure(config):
            config.workerinput = {"workerid": "gw3"}
        """)
    pytester.makepyfile(test_w="""
        import os

        def test_it():
            os.getenv("HERMETIC_WORKER_PROBE")
        """)
    run(pytester, "--hermetic=record").assert_outcomes(passed=1)
    assert not (pytester.path / "hermetic-record.json").exists()
    rec = record_of(pytester, "hermetic-record-gw3.json")
    assert rec["worker"] == "gw3" and [e["target"] for e in rec["events"]] == ["HERMETIC_WORKER_PROBE"]
