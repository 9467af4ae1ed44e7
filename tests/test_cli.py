"""The command line: exit codes, formats, bad input, determinism (contract sections 7 and 8)."""
import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from hermetic.cli import cli

from helpers import copy_tree

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SCHEMA = Path(__file__).resolve().parent.parent / "src" / "hermetic" / "report" / "report.schema.json"


@pytest.fixture
def quickstart(tmp_path, monkeypatch):
    dest = tmp_path / "quickstart"
    copy_tree(FIXTURES / "quickstart", dest)
    monkeypatch.chdir(dest)
    return dest


def run(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_finding_exits_1_and_json_names_the_sink(quickstart):
    res = run("check", "--format", "json")
    assert res.exit_code == 1
    report = json.loads(res.output)
    [f] = report["findings"]
    assert (f["code"], f["path"], f["line"]) == ("HT101", "src/newsdesk/publish.py", 9)
    assert f["tests"] == ["tests/test_publish.py::test_publishes_the_stories_of_the_day"]
    assert f["origin"]["kind"] == "module-constant"
    assert [s["function"] for s in f["trace"]] == [
        "test_publishes_the_stories_of_the_day", "newsdesk.publish.publish_scheduled", "newsdesk.publish._robot_enabled"]
    assert report["summary"]["tests"] == 1


def test_json_report_validates_against_the_shipped_schema(quickstart):
    jsonschema = pytest.importorskip("jsonschema")
    report = json.loads(run("check", "--format", "json").output)
    jsonschema.validate(report, json.loads(SCHEMA.read_text(encoding="utf-8")))


def test_same_input_gives_the_same_bytes(quickstart):
    first = run("check", "--format", "json").output
    second = run("check", "--format", "json").output
    assert first == second


def test_exit_zero_and_ignore(quickstart):
    assert run("check", "--exit-zero").exit_code == 0
    res = run("check", "--ignore", "HT101", "--format", "json")
    assert res.exit_code == 0
    assert json.loads(res.output)["findings"] == []


def test_fixing_the_test_silences_the_finding(quickstart):
    conftest = quickstart / "tests" / "conftest.py"
    conftest.write_text(conftest.read_text(encoding="utf-8") + '''

@pytest.fixture(autouse=True)
def scratch_settings(tmp_path, monkeypatch):
    from newsdesk import settings
    monkeypatch.setattr(settings, "DB_PATH", tmp_path / "flags.sqlite3")
''', encoding="utf-8")
    res = run("check", "--format", "json")
    assert json.loads(res.output)["findings"] == []
    assert res.exit_code == 0


def test_node_id_selects_one_test(quickstart):
    tests = quickstart / "tests" / "test_publish.py"
    tests.write_text(tests.read_text(encoding="utf-8") + '''

def test_nothing_to_publish(story_db):
    assert publish_scheduled(story_db, "2031-04-03") == 0
''', encoding="utf-8")
    res = run("check", "--format", "json", "tests/test_publish.py::test_nothing_to_publish")
    [f] = json.loads(res.output)["findings"]
    assert f["tests"] == ["tests/test_publish.py::test_nothing_to_publish"]
    assert json.loads(res.output)["summary"]["tests"] == 1


def test_a_parametrized_case_selects_its_whole_test_and_says_so(quickstart):
    tests = quickstart / "tests" / "test_publish.py"
    tests.write_text(tests.read_text(encoding="utf-8") + '''

@pytest.mark.parametrize("day", ["2031-04-03", "2031-04-04"])
def test_nothing_to_publish_on(story_db, day):
    assert publish_scheduled(story_db, day) == 0
''', encoding="utf-8")
    res = run("check", "--format", "json", "tests/test_publish.py::test_nothing_to_publish_on[2031-04-03]")
    [f] = json.loads(res.stdout)["findings"]
    assert f["tests"] == ["tests/test_publish.py::test_nothing_to_publish_on"]
    assert "selects the whole test tests/test_publish.py::test_nothing_to_publish_on" in res.stderr


@pytest.mark.parametrize("where, spelling", [
    ("", "./tests/test_publish.py::test_nothing_to_publish"),
    ("", "tests//test_publish.py::test_nothing_to_publish"),
    ("", "{root}/tests/test_publish.py::test_nothing_to_publish"),
    ("tests", "../tests/test_publish.py::test_nothing_to_publish"),
    ("tests", "test_publish.py::test_nothing_to_publish"),
])
def test_equivalent_spellings_of_a_node_id_select_the_same_test(quickstart, monkeypatch, where, spelling):
    tests = quickstart / "tests" / "test_publish.py"
    tests.write_text(tests.read_text(encoding="utf-8") + '''

def test_nothing_to_publish(story_db):
    assert publish_scheduled(story_db, "2031-04-03") == 0
''', encoding="utf-8")
    monkeypatch.chdir(quickstart / where)
    res = run("check", "--format", "json", spelling.format(root=quickstart))
    out = json.loads(res.output)
    assert out["summary"]["tests"] == 1
    assert [f["tests"] for f in out["findings"]] == [["tests/test_publish.py::test_nothing_to_publish"]]


def test_a_path_beside_a_node_id_keeps_all_its_tests(quickstart):
    tests = quickstart / "tests" / "test_publish.py"
    tests.write_text(tests.read_text(encoding="utf-8") + '''

def test_nothing_to_publish(story_db):
    assert publish_scheduled(story_db, "2031-04-03") == 0
''', encoding="utf-8")
    for args in (["tests", "tests/test_publish.py::test_nothing_to_publish"],
                 ["tests/test_publish.py::test_nothing_to_publish", "tests/test_publish.py"]):
        out = json.loads(run("check", "--format", "json", *args).output)
        assert out["summary"]["tests"] == 2, args
    out = json.loads(run("check", "--format", "json", "tests/test_publish.py::test_nothing_to_publish").output)
    assert out["summary"]["tests"] == 1


def test_unknown_node_id_is_a_usage_error(quickstart):
    res = CliRunner().invoke(cli, ["check", "tests/test_publish.py::test_missing"])
    assert res.exit_code == 2
    assert "no test matches" in res.output


def test_missing_path_is_a_usage_error(quickstart):
    res = CliRunner().invoke(cli, ["check", "no/such/dir"])
    assert res.exit_code == 2
    assert "no such file" in res.output


@pytest.mark.parametrize("table, key", [
    ('[tool.hermetic]\nselcet = ["HT1"]\n', "tool.hermetic.selcet"),
    ('[tool.hermetic]\nfail-on = "never"\n', "tool.hermetic.fail-on"),
    ('[tool.hermetic.controls]\nloopback = "yes"\n', "tool.hermetic.controls.loopback"),
    ('[tool.hermetic.sinks]\ndatabase = ["x.y"]\n', "tool.hermetic.sinks.database"),
])
def test_bad_configuration_exits_2_naming_file_and_key(quickstart, table, key):
    pyproject = quickstart / "pyproject.toml"
    pyproject.write_text(pyproject.read_text(encoding="utf-8") + "\n" + table, encoding="utf-8")
    res = CliRunner().invoke(cli, ["check"])
    assert res.exit_code == 2
    assert "pyproject.toml" in res.output and key in res.output
    assert "Traceback" not in res.output


def test_syntax_error_is_listed_and_the_run_goes_on(quickstart):
    (quickstart / "src" / "newsdesk" / "broken.py").write_text("def f(:\n    pass\n", encoding="utf-8")
    res = run("check", "--format", "json")
    report = json.loads(res.output)
    assert res.exit_code == 1
    [err] = report["errors"]
    assert err["path"] == "src/newsdesk/broken.py"
    assert "\n" not in err["message"] and "syntax error" in err["message"]
    assert [f["code"] for f in report["findings"]] == ["HT101"]
    # the text report says how to leave such files out (a formatter's broken test inputs)
    text = run("check").output
    assert "error src/newsdesk/broken.py" in text and "exclude = [...] in [tool.hermetic]" in text


def test_syntax_error_alone_still_exits_1(quickstart):
    settings = quickstart / "src" / "newsdesk" / "settings.py"
    settings.write_text('from pathlib import Path\n\nDB_PATH = ":memory:"\n', encoding="utf-8")
    (quickstart / "src" / "newsdesk" / "broken.py").write_text("x = (\n", encoding="utf-8")
    res = run("check", "--format", "json")
    assert json.loads(res.output)["findings"] == []
    assert res.exit_code == 1
    assert run("check", "--exit-zero").exit_code == 0


@pytest.mark.parametrize("encoding, prefix, newline", [
    ("utf-8-sig", "", "\n"),
    ("utf-8", "", "\r\n"),
    ("latin-1", "# -*- coding: latin-1 -*-\n", "\n"),
])
def test_bom_crlf_and_pep263_sources_are_analysed(quickstart, encoding, prefix, newline):
    publish = quickstart / "src" / "newsdesk" / "publish.py"
    text = prefix + publish.read_text(encoding="utf-8").replace('"""Publishing', '"""Publishing (café)')
    publish.write_bytes(text.replace("\n", newline).encode(encoding))
    report = json.loads(run("check", "--format", "json").output)
    assert report["errors"] == []
    [f] = report["findings"]
    assert f["line"] == 9 + (1 if prefix else 0)


def test_text_output_has_trace_origin_and_fix(quickstart):
    res = run("check")
    out = res.output
    assert "HT101" in out
    assert "test_publishes_the_stories_of_the_day → publish_scheduled → _robot_enabled" in out
    assert "DB_PATH" in out and "fix:" in out
    assert out.rstrip().splitlines()[-1].startswith("1 finding")


def test_no_tests_is_reported_on_stderr(tmp_path, monkeypatch):
    (tmp_path / "mod.py").write_text("import os\nX = 1\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(cli, ["check"])
    assert res.exit_code == 0
    assert "no tests found" in res.output
    assert "python_files" in res.output   # says where to look (invoke's trial: a silent 0)


def test_rule_explains_a_code():
    res = run("rule", "HT101")
    assert res.exit_code == 0 and "## Fix" in res.output
    assert CliRunner().invoke(cli, ["rule", "HT999"]).exit_code == 2


def test_version():
    res = run("--version")
    assert "hermetic" in res.output and "0.1.0" in res.output


def test_rules_doc_is_generated_from_the_rules():
    doc = Path(__file__).resolve().parent.parent / "docs" / "rules.md"
    assert run("rule", "--all").output == doc.read_text(encoding="utf-8")
    for code in ("HT101", "HT106", "HT201", "HT205", "HT301", "HT304", "HT401", "HT403", "HT900"):
        assert f"## {code} " in doc.read_text(encoding="utf-8")


def test_rules_and_explain():
    listing = run("rules").output.splitlines()
    assert listing[0].startswith("HT101") and any(line.startswith("HT403") for line in listing)
    # HT102's severity follows the operation (a write is an error, a read a warning): both shown
    (ht102,) = [line for line in listing if line.startswith("HT102")]
    assert "error/warning" in ht102 and "error/warning" not in listing[0]
    assert run("explain", "HT202").output == run("rule", "HT202").output
    assert CliRunner().invoke(cli, ["explain", "HT000"]).exit_code == 2


_ENTRY = """\
import sys
import hermetic.engine.workers as W

started = W.start_early


def noting():
    print("cli imported" if "hermetic.cli" in sys.modules else "before the cli", file=sys.stderr)
    started()


W.start_early = noting
sys.argv = ["hermetic"] + sys.argv[1:]
from hermetic.__main__ import main
main()
"""


@pytest.mark.parametrize("args, first", [(["check", "--format", "json"], "before the cli"),
                                         (["--version"], None)])
def test_the_console_script_starts_the_parse_worker_before_the_cli_loads(quickstart, args, first):
    # `hermetic check` forks the parse worker first, so libcst's import in it overlaps the
    # command's own start-up; other commands start none
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _ENTRY, *args], capture_output=True, text=True, check=False)
    lines = done.stderr.splitlines()
    if first is None:
        assert done.returncode == 0 and "before the cli" not in lines
    else:
        assert lines[0] == first and done.returncode == 1
        assert [f["code"] for f in json.loads(done.stdout)["findings"]] == ["HT101"]


_TEARDOWN = """\
import atexit
import sys

atexit.register(lambda: print("torn down", file=sys.stderr))
sys.argv = ["hermetic"] + sys.argv[1:]
from hermetic.__main__ import main
main()
"""


@pytest.mark.parametrize("args, code", [(["--format", "json"], 1), (["--format", "json", "--exit-zero"], 0),
                                        (["--format", "sarif", "-o", "out.sarif"], 1)])
def test_check_from_the_console_script_ends_without_tearing_down_its_objects(quickstart, args, code):
    # a large run's objects freed one by one at exit took a tenth of a second and more; the
    # process ends once the report is written and flushed, with the same exit status
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _TEARDOWN, "check", "--no-cache", *args],
                          capture_output=True, text=True, check=False)
    assert done.returncode == code and "torn down" not in done.stderr
    if "-o" in args:
        assert [r["ruleId"] for r in json.loads((quickstart / "out.sarif").read_text())["runs"][0]["results"]] == ["HT101"]
    else:
        assert [f["code"] for f in json.loads(done.stdout)["findings"]] == ["HT101"]


def test_a_one_shot_run_leaves_its_state_for_the_process_end(quickstart, monkeypatch):
    # the console script's run ends the process: its summaries and interpreter state are kept
    # (and the collector left off) instead of being freed object by object before the report
    import gc

    from hermetic import api as CK
    from hermetic import runstate
    from hermetic.engine import workers

    kept: list = []
    monkeypatch.setattr(runstate, "LEFT_FOR_EXIT", kept)
    monkeypatch.setattr(workers, "ONE_SHOT", True)
    was = gc.isenabled()
    try:
        report, _config = CK.run_check([], quickstart, use_cache=False, jobs=1)
        assert [f.code for f in report.findings] == ["HT101"]
        assert len(kept) == 1 and "ip" in kept[0] and "summaries" in kept[0]
        assert not gc.isenabled() and gc.get_freeze_count() > 0
        CK.release_state()   # before a second run in the process (--diff)
        assert kept == [] and gc.isenabled() and gc.get_freeze_count() == 0
    finally:
        kept.clear()
        gc.unfreeze()
        if was:
            gc.enable()
    monkeypatch.setattr(workers, "ONE_SHOT", False)
    report, _config = CK.run_check([], quickstart, use_cache=False, jobs=1)
    assert [f.code for f in report.findings] == ["HT101"] and kept == [] and gc.isenabled() == was


@pytest.mark.parametrize("args, message", [
    (["rule"], "give a rule code"),
    (["clean", "no/such/dir"], "no such file or folder"),
    (["config", "no/such/dir"], "no such file or folder"),
])
def test_commands_refuse_what_names_nothing(quickstart, args, message):
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 2 and message in res.stderr


def test_dash_is_standard_output_and_an_empty_inventory_says_so(quickstart):
    res = CliRunner().invoke(cli, ["check", "--format", "json", "-o", "-"])
    assert json.loads(res.stdout)["findings"] and not (quickstart / "-").exists()
    res = CliRunner().invoke(cli, ["inventory", "src/newsdesk/publish.py"])
    assert res.exit_code == 0 and "no tests under the targets" in res.stderr


def test_one_file_for_two_outputs_is_refused_before_the_run(quickstart):
    for args in (["-o", "r.json", "--output-file", "sarif=r.json"],
                 ["--output-file", "json=r.json", "--output-file", "sarif=./r.json"],
                 ["--write-baseline", "r.json", "-o", "r.json"]):
        res = CliRunner().invoke(cli, ["check", *args])
        assert res.exit_code == 2 and "give each output its own file" in res.stderr, args
        assert not (quickstart / "r.json").exists()


def test_output_format_is_the_main_format_and_format_its_alias(quickstart):
    # as in ruff: --output-format FMT is the format of the report; --format stays as an alias
    for option in ("--output-format", "--format"):
        res = CliRunner().invoke(cli, ["check", option, "json"])
        assert res.exit_code == 1 and json.loads(res.stdout)["findings"][0]["code"] == "HT101", res.output
    res = CliRunner().invoke(cli, ["check", "--output-format", "json", "--format", "sarif"])
    assert res.exit_code == 2 and "given twice" in res.stderr


def test_output_file_writes_extra_formats_and_a_plain_file_is_the_main_output(quickstart):
    res = CliRunner().invoke(cli, ["check", "--output-format", "json", "--output-file", "sarif=r.sarif",
                                   "--output-file", "github=r.txt"])
    assert res.exit_code == 1 and json.loads(res.stdout)["findings"]
    assert json.loads((quickstart / "r.sarif").read_text(encoding="utf-8"))["version"] == "2.1.0"
    assert (quickstart / "r.txt").read_text(encoding="utf-8").startswith("::error")
    res = CliRunner().invoke(cli, ["check", "--output-format", "json", "--output-file", "main.json"])
    assert res.stdout == "" and json.loads((quickstart / "main.json").read_text(encoding="utf-8"))["findings"]
    # the FMT=FILE form --output-format took before still works, with a note
    res = CliRunner().invoke(cli, ["check", "--output-format", "markdown=r.md"])
    assert res.exit_code == 1 and (quickstart / "r.md").is_file() and "--output-file FMT=FILE" in res.stderr


def test_statistics_counts_findings_per_rule_as_ruff_does(quickstart):
    publish = quickstart / "tests" / "test_publish.py"
    publish.write_text(publish.read_text(encoding="utf-8") + textwrap.dedent("""
        import os, time
        def test_reads_the_environment():
            assert os.environ.get("NEWSDESK_A") is None and os.getenv("NEWSDESK_B") is None
            time.time()
    """), encoding="utf-8")
    res = CliRunner().invoke(cli, ["check", "--statistics"])
    assert res.exit_code == 1, res.output
    assert res.stdout.splitlines() == ["2\tHT103\tuncontrolled-env-read", "1\tHT101\tuncontrolled-connection",
                                       "1\tHT104\tuncontrolled-clock"]
    # what the analysis did not follow goes to standard error, where there is some: the quickstart
    # has none (test_determinism's budget test has some)
    assert res.stderr == ""
    res = CliRunner().invoke(cli, ["check", "--statistics", "--output-format", "json"])
    assert json.loads(res.stdout)[0] == {"code": "HT103", "name": "uncontrolled-env-read", "count": 2}
    res = CliRunner().invoke(cli, ["check", "--timings"])   # the per-phase timings have their own flag
    assert "HT101" in res.stdout and "hermetic: timings" in res.stderr and "discover" in res.stderr


def test_repeated_select_and_ignore_add_up(quickstart):
    publish = quickstart / "tests" / "test_publish.py"
    publish.write_text(publish.read_text(encoding="utf-8") + textwrap.dedent("""
        import os, time
        def test_reads_the_environment():
            assert os.environ.get("NEWSDESK_A") is None
            time.time()
    """), encoding="utf-8")

    def codes(*args):
        res = CliRunner().invoke(cli, ["check", "--output-format", "json", *args])
        return sorted({f["code"] for f in json.loads(res.stdout)["findings"]})

    assert codes("--select", "HT103", "--select", "HT104") == ["HT103", "HT104"]
    assert codes("--select", "HT103,HT104", "--select", "HT101") == ["HT101", "HT103", "HT104"]
    assert codes("--ignore", "HT103", "--ignore", "HT104") == ["HT101"]


def test_show_unresolved_and_show_unknown_add_lists_to_the_json_report(quickstart):
    jsonschema = pytest.importorskip("jsonschema")
    (quickstart / "tests" / "test_more.py").write_text(textwrap.dedent("""
        import sqlite3
        from helpers_elsewhere import *   # make_path: a name the analysis cannot see

        def helper(items, n):
            rv = []
            for item in items:
                rv.append(item)
            seen = set()
            seen.add(n)
            if n is None:
                raise TypeError("no n")
            return rv

        def test_more():
            helper([1], 2)
            sqlite3.connect(make_path())
    """), encoding="utf-8")
    plain = json.loads(run("check", "--output-format", "json").output)
    assert "unresolved" not in plain and "unknown" not in plain
    res = run("check", "--output-format", "json", "--show-unresolved", "--show-unknown")
    report = json.loads(res.output)
    jsonschema.validate(report, json.loads(SCHEMA.read_text(encoding="utf-8")))
    # builtins (TypeError, a list's append, a set's add) are not unresolved calls
    assert [(u["path"], u["call"]) for u in report["unresolved"]] == [("tests/test_more.py", "make_path")]
    assert report["unresolved"][0]["reason"] and report["summary"]["unresolved_calls"] == 1
    assert [(u["path"], u["line"], u["expression"]) for u in report["unknown"]] == [
        ("tests/test_more.py", 17, "sqlite3.connect")]


def test_statistics_say_nothing_of_unresolved_calls_when_there_are_none(tmp_path, monkeypatch):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text("import os\n\ndef test_a():\n    os.environ.get('A_VAR')\n",
                                                   encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(cli, ["check", "--no-cache", "--statistics"])
    assert res.stdout.splitlines() == ["1\tHT103\tuncontrolled-env-read"]
    assert "unresolved" not in res.stderr
