"""The pytest plugin, end to end: pytest runs in a subprocess (pytester) on a copy of
fixtures/runtime, with HOME moved to a scratch folder so nothing can reach the real one."""
import json
import sys
from importlib import metadata
from pathlib import Path

import pytest

from helpers import copy_tree, line_of
from hermetic.api import run_check

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
FIX = "runtime"
STORE = "src/ledgerbox/store.py"
T = "tests/test_store.py::"


@pytest.fixture
def ledgerbox(pytester, monkeypatch):
    """pytester holding a copy of fixtures/runtime, HOME a scratch folder inside it."""
    copy_tree(FIXTURES / FIX, pytester.path, dirs_exist_ok=True)
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
    assert "hermetic.runtime.plugin" in {ep.value for ep in group if ep.name == "hermetic"}, \
        "pytest11 entry point missing: reinstall (pip install -e .) after changing pyproject.toml"


def test_importing_the_plugin_stays_light(pytester):
    res = pytester.runpython_c(
        "import sys, hermetic.runtime.plugin; "
        "print(sorted(m for m in ('libcst', 'rich', 'click', 'hermetic.runtime.recorder', 'hermetic.runtime.audit', "
        "'hermetic.runtime.profiler', 'hermetic.runtime.verdicts', 'hermetic.runtime.events', "
        "'hermetic.runtime.records', 'hermetic.api') if m in sys.modules))")
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
            # a connection written in the test, to a loopback target it chose (T1)
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
    assert connects["test_closed_loopback_port"]["verdict"] == "controlled"


LOOPBACK_APP = """
    import socket
    from urllib.parse import urlsplit

    def fetch(url):
        # the code under test connects where it is told
        parts = urlsplit(url)
        try:
            socket.create_connection((parts.hostname, parts.port), timeout=2).close()
        except OSError:
            pass

    def ping_cache():
        # the code under test's own loopback default: a real local service, if one listens
        socket.getaddrinfo("localhost", "domain")      # a service name, not a port number
        try:
            socket.create_connection(("127.0.0.1", 9), timeout=2).close()
        except OSError:
            pass
    """


def test_loopback_targets_chosen_by_the_test_are_controlled(pytester):
    pytester.makepyfile(netapp=LOOPBACK_APP, test_chosen="""
        import socket

        import netapp

        INVALID_PROXY = "http://localhost:1"

        def test_invalid_url_written_in_the_test():
            netapp.fetch(INVALID_PROXY)

        def test_reconnect_after_the_server_closed():
            server = socket.socket()
            server.bind(("127.0.0.1", 0))
            server.listen()
            host, port = server.getsockname()
            netapp.fetch(f"http://{host}:{port}/")     # while it serves
            server.close()
            netapp.fetch(f"http://{host}:{port}/")     # after it closed

        def test_connect_to_a_server_closed_before_any_connection():
            server = socket.socket()
            server.bind(("127.0.0.1", 0))
            port = server.getsockname()[1]
            server.close()
            netapp.fetch(f"http://127.0.0.1:{port}/")

        def test_default_of_the_code_under_test():
            netapp.ping_cache()
        """)
    run(pytester, "--hermetic=record").assert_outcomes(passed=4)
    rec = record_of(pytester)
    assert rec["summary"]["internal_errors"] == 0
    [lookup] = [e for e in rec["events"] if e["target"] == "localhost:domain"]
    assert (lookup["operation"], lookup["verdict"]) == ("socket.getaddrinfo", "uncontrolled")
    events = [e for e in rec["events"] if e["operation"] == "socket.connect"]
    by_test = {}
    for e in events:
        by_test.setdefault(e["test"].split("::")[1], []).append(e)
    [invalid] = by_test["test_invalid_url_written_in_the_test"]
    assert (invalid["target"], invalid["verdict"]) == ("127.0.0.1:1", "controlled")
    assert invalid["reason"] == "a loopback target chosen in test code (test_chosen.py)"
    assert {e["verdict"] for e in by_test["test_reconnect_after_the_server_closed"]} == {"controlled"}
    [closed] = by_test["test_connect_to_a_server_closed_before_any_connection"]
    assert closed["verdict"] == "controlled" and "closed since" in closed["reason"]
    # near miss: a loopback port written in the code under test, no server of this process
    [default] = by_test["test_default_of_the_code_under_test"]
    assert (default["target"], default["verdict"], default["code"]) == ("127.0.0.1:9", "uncontrolled", "HT105")
    assert default["path"] == "netapp.py"
    run(pytester, "--hermetic=enforce").assert_outcomes(passed=3, failed=1)
    run(pytester, "--hermetic=enforce", "--hermetic-loopback").assert_outcomes(passed=4)


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


def test_a_file_name_with_a_surrogate_is_recorded_escaped(pytester):
    # click's suite opens such a name at collection: undecodable bytes in a name become "\\udcff"
    pytester.makepyfile(test_names='''
        import os

        NAME = "\\udcff.txt"

        def test_opens_an_undecodable_name(tmp_path):
            with open(os.path.join(os.getcwd(), NAME), "w") as fh:
                fh.write("x")
        ''')
    res = run(pytester, "--hermetic=record")
    res.assert_outcomes(passed=1)
    assert not list(pytester.path.glob("*.tmp"))
    [ev] = [e for e in record_of(pytester)["events"] if e["category"] == "file"]
    assert ev["target"].endswith("\\udcff.txt") and ev["verdict"] == "uncontrolled"   # six characters: \\udcff


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


# ---- environment: who controls a variable ---------------------------------------------------

def test_monkeypatch_deletions_at_any_scope_control_reads(pytester):
    pytester.makeconftest("""
        import pytest

        @pytest.fixture(scope="session", autouse=True)
        def _standard_environ():
            mp = pytest.MonkeyPatch()
            mp.delenv("HERMETIC_SESSION_DELETED", raising=False)    # absent already: no audit event
            yield
            mp.undo()
        """)
    pytester.makepyfile(envapp="""
        import os

        def flag(name):
            return os.environ.get(name)

        def load_settings():
            os.environ["HERMETIC_LOADED"] = "1"      # as load_dotenv() does
        """, test_env="""
        import pytest

        import envapp

        def test_a_first():
            envapp.flag("HERMETIC_SESSION_DELETED")

        def test_b_later():
            envapp.flag("HERMETIC_SESSION_DELETED")

        def test_c_context():
            with pytest.MonkeyPatch.context() as mp:
                mp.delenv("HERMETIC_CONTEXT_DELETED", raising=False)
                envapp.flag("HERMETIC_CONTEXT_DELETED")

        def test_d_after_the_context():
            envapp.flag("HERMETIC_CONTEXT_DELETED")

        def test_e_function_scope(monkeypatch):
            monkeypatch.delenv("HERMETIC_FUNCTION_DELETED", raising=False)
            envapp.flag("HERMETIC_FUNCTION_DELETED")

        def test_f_after_the_function_scope():
            envapp.flag("HERMETIC_FUNCTION_DELETED")

        def test_g_untouched():
            envapp.flag("HERMETIC_NEVER_TOUCHED")

        def test_h_set_by_the_code(monkeypatch):
            monkeypatch.delenv("HERMETIC_LOADED", raising=False)   # restores it after the test
            envapp.load_settings()
            envapp.flag("HERMETIC_LOADED")
        """)
    run(pytester, "--hermetic=record").assert_outcomes(passed=8)
    got = {(e["test"].split("::")[1], e["target"]): e for e in record_of(pytester)["events"] if e["category"] == "env"}
    controlled = [("test_a_first", "HERMETIC_SESSION_DELETED"), ("test_b_later", "HERMETIC_SESSION_DELETED"),
                  ("test_c_context", "HERMETIC_CONTEXT_DELETED"), ("test_e_function_scope", "HERMETIC_FUNCTION_DELETED")]
    for key in controlled:
        assert got[key]["verdict"] == "controlled", (key, got[key]["reason"])
    assert "monkeypatch" in got[("test_b_later", "HERMETIC_SESSION_DELETED")]["reason"]
    # near misses: undone by the time of the read, or never touched: the real environment
    for key in [("test_d_after_the_context", "HERMETIC_CONTEXT_DELETED"),
                ("test_f_after_the_function_scope", "HERMETIC_FUNCTION_DELETED"),
                ("test_g_untouched", "HERMETIC_NEVER_TOUCHED")]:
        assert (got[key]["verdict"], got[key]["reason"]) == ("uncontrolled", "the real environment"), key
    # set by the code under test: controlled, and the reason says who set it
    loaded = got[("test_h_set_by_the_code", "HERMETIC_LOADED")]
    assert loaded["verdict"] == "controlled"
    assert "by the code under test (envapp.py:" in loaded["reason"] and "in load_settings" in loaded["reason"]
    assert "by the test" not in loaded["reason"]


def test_snapshots_of_the_whole_environment_are_not_reads(pytester):
    pytester.makepyfile(test_snap="""
        import os

        def test_snapshot_and_restore():
            saved = dict(os.environ)
            copied = os.environ.copy()
            assert os.environ == copied
            merged = {**os.environ}
            pairs = list(os.environ.items())
            values = list(os.environ.values())
            os.environ.clear()
            os.environ.update(saved)
            assert len(merged) == len(pairs) == len(values)

        def test_reads_by_name():
            os.environ.get("HERMETIC_BY_GET")
            "HERMETIC_BY_IN" in os.environ
            os.getenv("HERMETIC_BY_GETENV")
            try:
                os.environ["HERMETIC_BY_INDEX"]
            except KeyError:
                pass
        """)
    run(pytester, "--hermetic=record").assert_outcomes(passed=2)
    rec = record_of(pytester)
    env = [e for e in rec["events"] if e["category"] == "env"]
    assert [e for e in env if e["test"].endswith("test_snapshot_and_restore")] == []
    assert sorted((e["operation"], e["target"], e["verdict"]) for e in env) == [
        ("in os.environ", "HERMETIC_BY_IN", "uncontrolled"),
        ("os.environ.get", "HERMETIC_BY_GET", "uncontrolled"),
        ("os.environ[...]", "HERMETIC_BY_INDEX", "uncontrolled"),
        ("os.getenv", "HERMETIC_BY_GETENV", "uncontrolled")]
    assert rec["summary"]["env_snapshots"] > 0


def test_an_environ_pop_in_a_teardown_is_a_restore_not_a_read(pytester):
    pytester.makepyfile(test_restore="""
        import os
        import pytest

        @pytest.fixture
        def flag():
            os.environ["HERMETIC_RESTORED"] = "1"
            yield
            os.environ.pop("HERMETIC_RESTORED", None)
            os.environ.pop("HERMETIC_NEVER_SET", None)

        def test_with_flag(flag):
            pass

        def test_pop_in_the_body_still_reads():
            os.environ.pop("HERMETIC_POPPED", None)
        """)
    run(pytester, "--hermetic=record").assert_outcomes(passed=2)
    rec = record_of(pytester)
    env = [(e["test"].rsplit("::", 1)[-1], e["phase"], e["target"]) for e in rec["events"] if e["category"] == "env"]
    assert env == [("test_pop_in_the_body_still_reads", "call", "HERMETIC_POPPED")]
    assert rec["summary"]["env_restores"] == 2   # the fixture's two, not pytest's own PYTEST_CURRENT_TEST


# ---- files: existence checks and stats, machinery that is not project code ------------------

def test_existence_checks_and_stats_are_seen_through_the_profiler(pytester):
    pytester.makeini("[pytest]\npythonpath = .\n")
    pytester.makepyfile(probe="""
        import os
        from pathlib import Path

        OUTSIDE = "/nonexistent-hermetic-probe/settings.ini"

        def exists(where=OUTSIDE):
            return os.path.exists(where)

        def is_file(where=OUTSIDE):
            return Path(where).is_file()

        def stat(where=OUTSIDE):
            try:
                return os.stat(where)
            except OSError:
                return None

        def access(where=OUTSIDE):
            return os.access(where, os.R_OK)
        """)
    pytester.makepyfile(test_probe="""
        import probe

        def test_outside():
            probe.exists(); probe.is_file(); probe.stat(); probe.access()

        def test_scratch(tmp_path):
            where = str(tmp_path / "settings.ini")
            probe.exists(where); probe.is_file(where); probe.stat(where); probe.access(where)
        """)
    run(pytester, "--hermetic=record").assert_outcomes(passed=2)
    files = [e for e in record_of(pytester)["events"] if e["category"] == "file" and e["path"] == "probe.py"]
    seen = {(e["test"].rsplit("::", 1)[-1], e["operation"], e["verdict"]) for e in files}
    ops = ["os.path.exists", "pathlib.Path.is_file", "os.stat", "os.access"]
    assert seen == {("test_outside", op, "uncontrolled") for op in ops} | {("test_scratch", op, "controlled") for op in ops}
    calls = {"os.path.exists": "os.path.exists(where)", "pathlib.Path.is_file": "Path(where).is_file()",
             "os.stat": "os.stat(where)", "os.access": "os.access(where"}
    for e in files:
        assert e["line"] == line_in(pytester, "probe.py", calls[e["operation"]])
        assert e["target"].endswith("settings.ini") and e["code"] == "HT102"


def test_in_memory_templates_and_entry_point_scans_are_not_project_code(pytester):
    pytester.makeini("[pytest]\npythonpath = .\n")
    pytester.makepyfile(render="""
        import importlib.metadata

        SOURCE = "def body(target):\\n    return open(target).read()\\n"

        def rendered(target):
            # a template engine's way: code compiled under a made-up name (Mako: memory:0x...)
            namespace = {}
            exec(compile(SOURCE, "memory:0x7f0011223344", "exec"), namespace)
            return namespace["body"](target)

        def plugins():
            return list(importlib.metadata.entry_points(group="hermetic.test.none"))
        """)
    pytester.makepyfile(test_render="""
        import render

        def test_template():
            assert render.rendered("/etc/hostname") is not None

        def test_plugins():
            assert render.plugins() == []
        """)
    run(pytester, "--hermetic=record").assert_outcomes(passed=2)
    events = record_of(pytester)["events"]
    assert not [e for e in events if "memory:" in e["path"] or any("memory:" in s["path"] for s in e["stack"])]
    [opened] = [e for e in events if e["operation"] == "open"]
    assert (opened["path"], opened["line"]) == ("render.py", line_in(pytester, "render.py", 'return namespace["body"]'))
    assert not [e for e in events if e["test"].endswith("test_plugins")]


# ---- files: shipped data named by the test; tools' own files ----------------------------------

def test_relative_reads_of_shipped_data_the_test_names_are_controlled(pytester):
    pytester.makeini("[pytest]\npythonpath = .\n")
    (pytester.path / "tests" / "fake-repo").mkdir(parents=True)
    (pytester.path / "tests" / "fake-repo" / "template.json").write_text("{}", encoding="utf-8")
    (pytester.path / "examples").mkdir()
    (pytester.path / "examples" / "input.txt").write_text("x", encoding="utf-8")
    (pytester.path / "settings.ini").write_text("[app]", encoding="utf-8")
    pytester.makepyfile(fileapp="""
        import os

        def read(path):
            with open(path) as fh:
                return fh.read()

        def read_all(folder):
            return {name: read(os.path.join(folder, name)) for name in os.listdir(folder)}

        def read_settings():
            return read("settings.ini")      # the code under test's own relative path

        def write(path):
            with open(path, "w") as fh:
                fh.write("out")
        """)
    pytester.makepyfile(**{"tests/test_rel": """
        import os

        import fileapp

        def test_a_folder_made_sure_of():
            os.makedirs("tests/fake-repo", exist_ok=True)   # already there: nothing is written

        def test_test_data_folder():
            fileapp.read_all("tests/fake-repo")

        def test_named_in_the_test():
            fileapp.read("examples/input.txt")

        def test_settings_of_the_code():
            fileapp.read_settings()

        def test_missing_file():
            try:
                fileapp.read("examples/missing.txt")
            except OSError:
                pass

        def test_written_then_read():
            fileapp.write("examples/made.txt")
            fileapp.read("examples/made.txt")
        """})
    run(pytester, "--hermetic=record", "-p", "no:randomly").assert_outcomes(passed=6)
    rec = record_of(pytester)
    got = {}
    for e in rec["events"]:
        if e["category"] == "file":
            got.setdefault(e["test"].split("::")[1], []).append(e)
    data = got["test_test_data_folder"]
    assert {(e["operation"], e["verdict"]) for e in data} == {("os.listdir", "controlled"), ("open", "controlled")}
    assert {e["reason"] for e in data} == {"a relative read of data shipped with the tests"}
    [named] = got["test_named_in_the_test"]
    assert (named["verdict"], named["reason"]) == (
        "controlled", "a relative read of shipped data named in test code (tests/test_rel.py)")
    # near misses: the code under test's own relative path, a file that is not there, a file the run made
    [settings] = got["test_settings_of_the_code"]
    assert settings["verdict"] == "uncontrolled"
    assert settings["target"] == str(pytester.path / "settings.ini")
    assert settings["reason"] == ("read by the code under test through the relative path 'settings.ini', "
                                  "which the working directory resolves (not chosen by the test)")
    assert [e["verdict"] for e in got["test_missing_file"]] == ["uncontrolled"]
    assert sorted((e["access"], e["verdict"]) for e in got["test_written_then_read"]) == [
        ("read", "uncontrolled"), ("write", "uncontrolled")]
    [made] = [e for e in got["test_written_then_read"] if e["access"] == "read"]
    assert made["reason"] == ("read by the code under test through the relative path 'examples/made.txt', "
                              "which this run wrote into the project (not data shipped with it)")


def test_a_debuggers_own_files_are_machinery(pytester, monkeypatch):
    (pytester.path / "home").mkdir()
    monkeypatch.setenv("HOME", str(pytester.path / "home"))
    pytester.makepyfile(test_doc="""
        import doctest
        import os

        def square(x):
            '''
            >>> square(3)
            9
            '''
            return x * x

        def test_doctest_runs_pdb_setup():
            finder = doctest.DocTestFinder()
            runner = doctest.DocTestRunner()
            for test in finder.find(square, "square", globs={"square": square}):
                runner.run(test)       # builds a pdb.Pdb, which looks for ~/.pdbrc and ./.pdbrc
            assert runner.failures == 0

        def test_own_rc_file():
            try:
                open(os.path.expanduser("~/.hermetic-probe-rc")).close()
            except OSError:
                pass
        """)
    run(pytester, "--hermetic=record").assert_outcomes(passed=2)
    events = record_of(pytester)["events"]
    assert [e for e in events if "pdbrc" in e["target"]] == []
    assert [e for e in events if e["test"].endswith("test_doctest_runs_pdb_setup")] == []
    # near miss: the same kind of read written in the project's code stays flagged
    [own] = [e for e in events if e["test"].endswith("test_own_rc_file")]
    assert (own["operation"], own["verdict"]) == ("open", "uncontrolled")
    assert own["target"].endswith(".hermetic-probe-rc")
