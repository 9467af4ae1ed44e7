"""hermetic verify: the static report and the runtime record, joined per sink anchor."""
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from helpers import copy_tree, line_of
from hermetic.runtime import recorder as runtime
from hermetic.runtime import verify
from hermetic.api import run_check
# loaded now, not first inside a pytester test: pytester drops the modules a test imported, and
# the analysis' classes imported again would not be the ones its caches pickle
import hermetic.pipeline  # noqa: F401,E402
from hermetic.cli import cli
from hermetic.report.text import to_json

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
FIX = "runtime"
STORE = "src/ledgerbox/store.py"
T = "tests/test_store.py::"


def cli_run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def recorded(pytester, monkeypatch):
    """fixtures/runtime copied into pytester, run with --hermetic=record (HOME a scratch folder)."""
    copy_tree(FIXTURES / FIX, pytester.path, dirs_exist_ok=True)
    (pytester.path / "home").mkdir()
    monkeypatch.setenv("HOME", str(pytester.path / "home"))
    pytester.runpytest_subprocess("-p", "no:randomly", "--hermetic=record").assert_outcomes(passed=14, skipped=1)
    return pytester.path


def rows(result, section):
    return {(r["code"], r["line"]): r for r in result[section]}


# ---- end to end on the fixture -------------------------------------------------------------

def test_confirmed_not_exercised_and_missed_on_the_fixture(recorded):
    res = cli_run("verify", recorded / "hermetic-record.json", recorded, "--format", "json")
    assert res.exit_code == 1
    result = json.loads(res.output)
    confirmed = rows(result, "confirmed")
    token = line_of(FIX, STORE, 'os.environ.get("LEDGERBOX_TOKEN"')
    write = line_of(FIX, STORE, "target.write_text(")
    assert confirmed[("HT103", token)]["tests"] == [T + "test_token_default"]
    assert confirmed[("HT102", write)]["tests"] == [T + "test_save_quietly", T + "test_save_to_home"]
    assert set(confirmed) == {("HT103", token), ("HT104", line_of(FIX, STORE, "return time.time()")),
                              ("HT104", line_of(FIX, STORE, "datetime.now()")),
                              ("HT102", line_of(FIX, STORE, "base.mkdir(")), ("HT102", write),
                              ("HT106", line_of(FIX, STORE, "subprocess.run("))}
    assert all(r["tests_not_listed"] == [] for r in result["confirmed"])
    # the skipped test's archive write never ran: not exercised, still a finding
    archive = line_of(FIX, STORE, "/srv/ledgerbox/archive.json")
    assert set(rows(result, "not_exercised")) == {("HT102", archive)}
    assert rows(result, "not_exercised")[("HT102", archive)]["static_tests"] == [T + "test_archive"]
    # getattr(os, <a rot13-decoded name>) is beyond the static analysis: missed, with its stack
    [missed] = result["missed"]
    assert (missed["code"], missed["path"], missed["line"]) == ("HT103", STORE, line_of(FIX, STORE, "return lookup(name)"))
    assert (missed["operation"], missed["targets"], missed["tests"]) == (
        "os.getenv", ["LEDGERBOX_REGION"], [T + "test_setting"])
    assert [s["function"] for s in missed["stack"]] == ["setting", "test_setting"]
    assert result["summary"]["suppressed_events"] == 1      # test_zz_after's time.time(), ignored inline


def test_the_text_report(recorded):
    res = cli_run("verify", recorded / "hermetic-record.json", recorded)
    assert res.exit_code == 1
    out = res.output
    assert "Confirmed: static findings whose sink ran uncontrolled (6)" in out
    assert "Not exercised: static findings whose sink never ran uncontrolled (1)" in out
    assert "Missed by the static analysis: uncontrolled I/O at runtime with no finding at that place (1)" in out
    assert f"HT103 {STORE}:{line_of(FIX, STORE, 'return lookup(name)')} env os.getenv 'LEDGERBOX_REGION'" in out
    assert "verify: 6 confirmed, 1 not exercised, 1 missed; 15 tests run" in out


def test_a_saved_static_report_gives_the_same_join(recorded, tmp_path):
    report, _cfg = run_check([], recorded)
    saved = tmp_path / "static.json"
    saved.write_text(to_json(report), encoding="utf-8")
    from_file = cli_run("verify", recorded / "hermetic-record.json", "--static", saved, "--static-root", recorded,
                        "--format", "json")
    from_run = cli_run("verify", recorded / "hermetic-record.json", recorded, "--format", "json")
    assert from_file.exit_code == from_run.exit_code == 1
    assert json.loads(from_file.output) == json.loads(from_run.output)


def test_a_saved_static_report_read_from_another_folder_exits_2_saying_so(tmp_path, monkeypatch):
    proj, elsewhere = tmp_path / "proj", tmp_path / "elsewhere"
    (proj / "src").mkdir(parents=True)
    (proj / "src" / "m.py").write_text("import time\n", encoding="utf-8")
    elsewhere.mkdir()
    record = tmp_path / "rec.json"
    record.write_text(json.dumps(_record(proj, [_event("t::a", "HT104", 3)])), encoding="utf-8")
    static = tmp_path / "static.json"
    static.write_text(json.dumps({"findings": [_finding("HT104", 3, tests=["t::a"])]}), encoding="utf-8")
    monkeypatch.chdir(elsewhere)
    monkeypatch.setenv("NO_COLOR", "1")   # the text report's colours do not depend on the developer's shell
    res = CliRunner().invoke(cli, ["verify", str(record), "--static", str(static)])
    assert res.exit_code == 2 and "--static-root" in res.stderr and str(proj) in res.stderr, res.output
    res = CliRunner().invoke(cli, ["verify", str(record), "--static", str(static), "--static-root", str(proj)])
    assert res.exit_code == 1 and "confirmed" in res.stdout.lower()
    monkeypatch.chdir(proj)   # from the record's rootdir, the default is right
    assert CliRunner().invoke(cli, ["verify", str(record), "--static", str(static)]).exit_code == 1
    # a --static-root holding none of the report's files is said, and the join goes on (invoke's trial)
    res = CliRunner().invoke(cli, ["verify", str(record), "--static", str(static), "--static-root", str(elsewhere)])
    assert res.exit_code == 1 and "none of" in res.stderr and "missed" in res.stderr, res.output


def test_a_static_check_that_finds_no_tests_is_said(tmp_path, monkeypatch):
    # verify without --static checks the records' folder; one pytest collects through a plugin
    # hermetic does not model (pytest-relaxed) has no tests for it: every site would be "missed"
    proj = tmp_path / "proj"
    (proj / "src").mkdir(parents=True)
    (proj / "src" / "m.py").write_text("import time\n", encoding="utf-8")
    record = tmp_path / "rec.json"
    record.write_text(json.dumps(_record(proj, [_event("t::a", "HT104", 3)])), encoding="utf-8")
    monkeypatch.setenv("NO_COLOR", "1")
    res = CliRunner().invoke(cli, ["verify", str(record), str(proj)])
    assert "found no tests" in res.stderr and str(proj) in res.stderr, res.output


def test_annotate_adds_a_runtime_field_per_finding(recorded):
    report, _cfg = run_check([], recorded)
    data = json.loads(to_json(report))
    record = runtime.load_record(str(recorded / "hermetic-record.json"))
    out = verify.annotate(data, record)
    by = {(f["code"], f["line"]): f for f in out["findings"]}
    assert by[("HT103", line_of(FIX, STORE, 'os.environ.get("LEDGERBOX_TOKEN"'))]["runtime"] == "confirmed"
    assert by[("HT103", line_of(FIX, STORE, 'os.environ.get("LEDGERBOX_TOKEN"'))]["runtime_tests"] == [
        T + "test_token_default"]
    assert by[("HT102", line_of(FIX, STORE, "/srv/ledgerbox/archive.json"))]["runtime"] == "not-exercised"
    assert by[("HT204", line_of(FIX, STORE, "STARTED = time.time()"))]["runtime"] == "n/a"
    assert all("runtime" not in f for f in data["findings"])       # the input is left alone


def test_split_runs_are_merged(recorded, pytester):
    for part, sel in (("a", "token"), ("b", "not token")):
        pytester.runpytest_subprocess("-p", "no:randomly", "--hermetic=record", f"--hermetic-record=rec-{part}.json",
                                      "-k", sel)
    whole = json.loads(cli_run("verify", recorded / "hermetic-record.json", recorded, "--format", "json").output)
    split = json.loads(cli_run("verify", recorded / "rec-a.json", recorded / "rec-b.json", recorded,
                               "--format", "json").output)
    assert {k: [(r["code"], r["line"], r.get("tests")) for r in split[k]] for k in ("confirmed", "not_exercised")} == \
        {k: [(r["code"], r["line"], r.get("tests")) for r in whole[k]] for k in ("confirmed", "not_exercised")}
    assert split["summary"]["tests_run"] == whole["summary"]["tests_run"] == 15


# ---- the join, on made-up records ---------------------------------------------------------

def _finding(code, line, end_line=None, tests=(), path="src/m.py"):
    return {"code": code, "severity": "error", "path": path, "line": line, "column": 1,
            "end_line": end_line or line, "end_column": 9, "message": f"{code} here", "tests": list(tests),
            "trace": [], "origin": None, "fingerprint": f"fp-{code}-{line}"}


def _event(test, code, line, verdict="uncontrolled", path="src/m.py", **extra):
    cat = {v: k for k, v in runtime.CATEGORY_CODE.items()}[code]
    ev = {"test": test, "phase": "call", "category": cat, "code": code, "operation": "op", "target": "t",
          "access": "read", "verdict": verdict, "reason": "why", "path": path, "line": line, "function": "f",
          "via": None, "stack": [{"path": path, "line": line, "function": "f"}], "count": 1}
    ev.update(extra)
    return ev


def _record(root, events):
    tests = sorted({e["test"] for e in events if e["test"]})
    return {"version": 1, "kind": "hermetic-record", "rootdir": str(root), "mode": "record", "worker": None,
            "tests": [{"nodeid": t} for t in tests], "events": events, "summary": {}}


def test_an_event_anywhere_in_a_multi_line_span_confirms(tmp_path):
    report = {"findings": [_finding("HT102", 10, 12, tests=["t::a"])]}
    result = verify.join(report, _record(tmp_path, [_event("t::a", "HT102", 12)]))
    assert [r["line"] for r in result["confirmed"]] == [10]
    result = verify.join(report, _record(tmp_path, [_event("t::a", "HT102", 13)]))
    assert result["confirmed"] == [] and [r["line"] for r in result["missed"]] == [13]


def test_codes_must_agree(tmp_path):
    # a database client reached through a socket confirms HT101; a clock read on the same line does not
    report = {"findings": [_finding("HT101", 5, tests=["t::a"])]}
    result = verify.join(report, _record(tmp_path, [_event("t::a", "HT105", 5), _event("t::a", "HT104", 5)]))
    assert [r["code"] for r in result["confirmed"]] == ["HT101"]
    assert [(r["code"], r["line"]) for r in result["missed"]] == [("HT104", 5)]


def test_a_sink_that_ran_only_controlled_is_not_exercised_and_disputed(tmp_path):
    report = {"findings": [_finding("HT103", 7, tests=["t::a"])]}
    result = verify.join(report, _record(tmp_path, [_event("t::a", "HT103", 7, verdict="controlled"),
                                                    _event("t::b", "HT103", 7, verdict="controlled")]))
    [row] = result["not_exercised"]
    assert (row["ran_controlled_in"], row["disputed"]) == (["t::a", "t::b"], ["t::a"])
    assert result["summary"]["disputed"] == 1 and verify.exit_status(result) == 0


def test_a_parametrized_test_matches_the_static_node_id_without_its_parameters(tmp_path):
    # the static report names test_x; the run names each instance, test_x[1] and test_x[two]
    report = {"findings": [_finding("HT103", 7, tests=["t::test_x"]), _finding("HT104", 9, tests=["t::test_x"])]}
    result = verify.join(report, _record(tmp_path, [
        _event("t::test_x[1]", "HT103", 7, verdict="controlled"), _event("t::test_x[two]", "HT103", 7, verdict="controlled"),
        _event("t::test_xy[1]", "HT103", 7, verdict="controlled"), _event("t::test_x[1]", "HT104", 9)]))
    [row] = result["not_exercised"]
    assert row["disputed"] == ["t::test_x[1]", "t::test_x[two]"] and result["summary"]["disputed"] == 1
    [confirmed] = result["confirmed"]
    assert confirmed["tests"] == ["t::test_x[1]"] and confirmed["tests_not_listed"] == []


def test_tests_the_static_finding_does_not_list_are_named(tmp_path):
    report = {"findings": [_finding("HT104", 3, tests=["t::a"])]}
    result = verify.join(report, _record(tmp_path, [_event("t::a", "HT104", 3), _event("t::c", "HT104", 3)]))
    [row] = result["confirmed"]
    assert (row["tests"], row["tests_not_listed"]) == (["t::a", "t::c"], ["t::c"])


def test_suppressed_and_controlled_events_are_not_missed(tmp_path):
    result = verify.join({"findings": []}, _record(tmp_path, [
        _event("t::a", "HT104", 3, suppressed=True), _event("t::a", "HT103", 4, verdict="controlled")]))
    assert result["missed"] == [] and result["summary"]["suppressed_events"] == 1
    assert verify.exit_status(result) == 0


def test_paths_are_joined_as_absolute_paths(tmp_path):
    # the report was made in a subfolder of the record's rootdir
    report = {"findings": [_finding("HT102", 8, path="m.py", tests=["t::a"])]}
    record = _record(tmp_path, [_event("t::a", "HT102", 8, path="src/m.py"), _event("t::a", "HT106", 2, path="src/n.py")])
    result = verify.join(report, record, static_root=str(tmp_path / "src"))
    assert [r["path"] for r in result["confirmed"]] == ["m.py"]
    assert [(r["path"], r["stack"][0]["path"]) for r in result["missed"]] == [("n.py", "n.py")]


def test_collection_events_are_named(tmp_path):
    result = verify.join({"findings": [_finding("HT102", 1)]}, _record(tmp_path, [_event("", "HT102", 1)]))
    assert result["confirmed"][0]["tests"] == ["<collection>"]
    assert result["confirmed"][0]["tests_not_listed"] == []


def test_an_import_time_env_read_run_again_confirms_its_ht203(tmp_path):
    report = {"findings": [_finding("HT203", 5, tests=["t::a"]), _finding("HT203", 30)]}
    result = verify.join(report, _record(tmp_path, [_event("t::a", "HT103", 5), _event("t::a", "HT103", 6)]))
    assert [(r["code"], r["line"], r["tests"]) for r in result["confirmed"]] == [("HT203", 5, ["t::a"])]
    assert [(r["code"], r["line"]) for r in result["missed"]] == [("HT103", 6)]     # near miss: another line
    assert result["not_exercised"] == []        # an import-time read that did not run again is not a row
    out = verify.annotate(report, _record(tmp_path, [_event("t::a", "HT103", 5)]))
    assert [f["runtime"] for f in out["findings"]] == ["confirmed", "n/a"]


def _capture(line, clock, path="src/m.py"):
    f = _finding("HT204", line, path=path)
    f["origin"] = {"kind": "clock", "path": path, "line": line, "expression": clock + "()"}
    f["message"] = f"{clock} captured at import time (a function object bound once)"
    return f


def test_a_clock_read_through_a_captured_function_confirms_its_ht204(tmp_path):
    report = {"findings": [_capture(5, "time.time")]}
    events = [_event("t::a", "HT104", 14, operation="time.time", binding="captured"),
              # near misses: another clock function, the same one called by its own name, another module
              _event("t::a", "HT104", 20, operation="datetime.datetime.now", binding="captured"),
              _event("t::a", "HT104", 22, operation="time.time", binding="name"),
              _event("t::a", "HT104", 3, operation="time.time", binding="captured", path="src/n.py")]
    result = verify.join(report, _record(tmp_path, events))
    [row] = result["confirmed"]
    assert (row["code"], row["line"], row["tests"]) == ("HT204", 5, ["t::a"])
    assert [(r["path"], r["line"]) for r in result["missed"]] == [("src/m.py", 20), ("src/m.py", 22), ("src/n.py", 3)]


def test_captured_clocks_end_to_end(pytester):
    pytester.makeini("[pytest]\npythonpath = src\n")
    pytester.makepyfile(**{"src/clockapp/__init__": "", "src/clockapp/timing": """
        import time
        from datetime import datetime
        from functools import partial

        clock = time.time
        stamp = partial(datetime.now)

        def elapsed(start, now=time.monotonic):
            return now() - start

        def took():
            return clock()

        def direct():
            return time.perf_counter()
        """, "tests/test_timing": """
        from clockapp import timing

        def test_took():
            timing.took()
            timing.elapsed(0.0)
            timing.direct()
        """})
    pytester.runpytest_subprocess("-p", "no:randomly", "--hermetic=record").assert_outcomes(passed=1)
    record = runtime.load_record(str(pytester.path / "hermetic-record.json"))
    bindings = {e["operation"]: e["binding"] for e in record["events"]}
    assert bindings == {"time.time": "captured", "time.monotonic": "captured", "time.perf_counter": "name"}
    report, _cfg = run_check([], pytester.path)
    result = verify.join(json.loads(to_json(report)), record)
    timing = "src/clockapp/timing.py"
    confirmed = {(r["code"], r["line"]) for r in result["confirmed"]}
    assert ("HT204", line_of_text(pytester, timing, "clock = time.time")) in confirmed
    assert ("HT204", line_of_text(pytester, timing, "def elapsed(")) in confirmed
    assert ("HT104", line_of_text(pytester, timing, "time.perf_counter()")) in confirmed
    assert result["missed"] == []


def line_of_text(pytester, name, snippet):
    lines = (pytester.path / name).read_text(encoding="utf-8").splitlines()
    [n] = [i for i, text in enumerate(lines, 1) if snippet in text]
    return n


# ---- the command line ----------------------------------------------------------------------

def test_bad_input_exits_2(tmp_path):
    (tmp_path / "proj").mkdir()
    (tmp_path / "other").mkdir()
    bad = tmp_path / "bad.json"
    bad.write_text("[]", encoding="utf-8")
    good = tmp_path / "rec.json"
    good.write_text(json.dumps(_record(tmp_path / "proj", [])), encoding="utf-8")
    notreport = tmp_path / "static.json"
    notreport.write_text("{}", encoding="utf-8")
    for args, msg in (((bad, tmp_path / "proj"), "not a hermetic record"),
                      ((tmp_path / "proj",), "needs at least one record"),
                      ((good, tmp_path / "proj", tmp_path / "other"), "one project folder"),
                      ((good, tmp_path / "proj", "--static", notreport), "not both"),
                      ((good, "--static", notreport), "not a hermetic JSON report")):
        res = cli_run("verify", *args)
        assert res.exit_code == 2, (args, res.output)
        assert msg in res.output


def test_exit_codes(tmp_path):
    static = tmp_path / "static.json"
    static.write_text(json.dumps({"findings": [_finding("HT104", 3, tests=["t::a"])]}), encoding="utf-8")
    rec = tmp_path / "rec.json"
    rec.write_text(json.dumps(_record(tmp_path, [])), encoding="utf-8")
    assert cli_run("verify", rec, "--static", static, "--static-root", tmp_path).exit_code == 0   # only not exercised
    rec.write_text(json.dumps(_record(tmp_path, [_event("t::a", "HT104", 3)])), encoding="utf-8")
    assert cli_run("verify", rec, "--static", static, "--static-root", tmp_path).exit_code == 1   # confirmed
    assert cli_run("verify", rec, "--static", static, "--static-root", tmp_path, "--exit-zero").exit_code == 0
    out = tmp_path / "out.json"
    assert cli_run("verify", rec, "--static", static, "--static-root", tmp_path, "--format", "json", "-o", out).exit_code == 1
    assert json.loads(out.read_text(encoding="utf-8"))["summary"]["confirmed"] == 1


# ---- check --runtime: the runtime field in JSON and SARIF ------------------------------------

def test_check_runtime_marks_findings_in_json_and_sarif(recorded, monkeypatch):
    monkeypatch.chdir(recorded)
    record = recorded / "hermetic-record.json"
    res = CliRunner().invoke(cli, ["check", "--runtime", str(record), "--format", "json"])
    assert res.exit_code == 1, res.output
    by_line = {(f["code"], f["line"]): f for f in json.loads(res.stdout)["findings"]}
    write = by_line[("HT102", line_of(FIX, STORE, "target.write_text("))]
    assert write["runtime"] == "confirmed" and write["runtime_tests"] == [T + "test_save_quietly",
                                                                         T + "test_save_to_home"]
    assert by_line[("HT102", line_of(FIX, STORE, "/srv/ledgerbox/archive.json"))]["runtime"] == "not-exercised"
    assert {f["runtime"] for f in by_line.values() if not f["code"].startswith("HT1")} <= {"n/a"}
    res = CliRunner().invoke(cli, ["check", "--runtime", str(record), "--format", "sarif"])
    props = [r["properties"] for r in json.loads(res.stdout)["runs"][0]["results"]]
    assert {p["runtime"] for p in props} >= {"confirmed", "not-exercised"}


def test_check_runtime_with_a_bad_record_exits_2(tmp_path, monkeypatch):
    copy_tree(FIXTURES / FIX, tmp_path / "p")
    bad = tmp_path / "record.json"
    bad.write_text("{not json", encoding="utf-8")
    monkeypatch.chdir(tmp_path / "p")
    res = CliRunner().invoke(cli, ["check", "--runtime", str(bad)])
    assert res.exit_code == 2 and "record" in res.stderr


def test_check_runtime_with_another_projects_record_says_so(tmp_path, monkeypatch):
    copy_tree(FIXTURES / FIX, tmp_path / "p")
    other = tmp_path / "other"
    other.mkdir()
    record = tmp_path / "record.json"
    record.write_text(json.dumps(_record(other, [])), encoding="utf-8")
    monkeypatch.chdir(tmp_path / "p")
    res = CliRunner().invoke(cli, ["check", "--runtime", str(record)])
    assert res.exit_code == 1 and f"made in {other}, not in this project" in res.stderr
    mine = tmp_path / "mine.json"
    mine.write_text(json.dumps(_record(tmp_path / "p", [])), encoding="utf-8")
    assert "not in this project" not in CliRunner().invoke(cli, ["check", "--runtime", str(mine)]).stderr
