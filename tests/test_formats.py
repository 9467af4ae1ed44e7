"""Review formats: SARIF (validated against the OASIS schema), GitHub annotations, Markdown, JUnit."""
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from hermetic.cli import cli
from hermetic.report.formats import _gh_data, _gh_prop, to_markdown
from hermetic.report.model import Finding, Report

from helpers import copy_tree

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def quickstart(tmp_path, monkeypatch):
    dest = tmp_path / "quickstart"
    copy_tree(ROOT / "fixtures" / "quickstart", dest)
    monkeypatch.chdir(dest)
    return dest


def out(*args):
    res = CliRunner().invoke(cli, ["check", *args])
    assert res.exit_code in (0, 1), res.output
    return res.output


def test_sarif_is_valid_and_carries_flows_related_locations_and_fingerprints(quickstart, sarif_schema):
    jsonschema = pytest.importorskip("jsonschema")
    doc = json.loads(out("--format", "sarif"))
    jsonschema.validate(doc, sarif_schema)
    [result] = doc["runs"][0]["results"]
    assert result["ruleId"] == "HT101"
    assert result["partialFingerprints"]["hermetic/v1"].startswith("hermetic/v1:")
    assert result["relatedLocations"][0]["message"]["text"].endswith("::test_publishes_the_stories_of_the_day")
    steps = result["codeFlows"][0]["threadFlows"][0]["locations"]
    assert [s["location"]["physicalLocation"]["region"]["startLine"] for s in steps] == [6, 17, 9]
    assert doc["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"].startswith("file://")
    rules = {r["id"] for r in doc["runs"][0]["tool"]["driver"]["rules"]}
    assert {"HT101", "HT202", "HT304", "HT403"} <= rules


def test_github_annotations_escape_data_and_properties():
    assert _gh_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert _gh_prop("a:b,c") == "a%3Ab%2Cc"


def test_github_format_one_line_per_finding(quickstart):
    lines = out("--format", "github").splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("::error file=src/newsdesk/publish.py,line=9,endLine=9,col=13,title=HT101::")
    assert "\n" not in lines[0]


def test_markdown_has_verdict_table_and_details(quickstart):
    text = out("--format", "markdown")
    assert text.startswith("**hermetic: 1 finding** (1 error, 0 warnings, 0 notes)")
    assert "| HT101 uncontrolled-connection | error | 1 |" in text
    assert "<details><summary>trace</summary>" in text and "**fix:**" in text


def test_markdown_stays_under_the_comment_limit():
    findings = [Finding("HT102", "error", f"src/m{i}.py", 1, 1, 1, 2, "x" * 500, [f"tests/t.py::test_{i}"])
                for i in range(400)]
    text = to_markdown(Report(findings=findings))
    assert len(text) < 65_000
    assert "more findings are not shown" in text


def test_junit_parses_with_a_testcase_per_test(quickstart):
    root = ET.fromstring(out("--format", "junit"))
    cases = root.findall(".//testcase")
    assert [c.get("name") for c in cases] == ["tests/test_publish.py::test_publishes_the_stories_of_the_day"]
    assert cases[0].find("failure").get("type") == "HT101"


def test_several_outputs_in_one_run(quickstart, tmp_path):
    sarif, md = tmp_path / "r.sarif", tmp_path / "r.md"
    text = out("--output-file", f"sarif={sarif}", "--output-file", f"markdown={md}")
    assert "HT101" in text
    assert json.loads(sarif.read_text(encoding="utf-8"))["version"] == "2.1.0"
    assert md.read_text(encoding="utf-8").startswith("**hermetic")
    assert CliRunner().invoke(cli, ["check", "--output-format", "pdf=x"]).exit_code == 2
    assert CliRunner().invoke(cli, ["check", "--output-file", "pdf=x"]).exit_code == 2


def test_inventory_matches_the_golden_file(quickstart):
    res = CliRunner().invoke(cli, ["inventory", "--format", "json"])
    golden = ROOT / "tests" / "golden" / "quickstart-inventory.json"
    assert json.loads(res.output) == json.loads(golden.read_text(encoding="utf-8"))
    text = CliRunner().invoke(cli, ["inventory"]).output
    assert "uncontrolled connection src/newsdesk/publish.py:9" in text


def test_inventory_says_no_uncontrolled_io_never_proven(quickstart):
    settings = quickstart / "src" / "newsdesk" / "settings.py"
    settings.write_text('DB_PATH = ":memory:"\n', encoding="utf-8")
    text = CliRunner().invoke(cli, ["inventory"]).output
    assert "no uncontrolled I/O found (0 operations with an unknown origin" in text
    assert "proven" not in text


def test_markdown_matches_the_golden_file(quickstart):
    golden = ROOT / "tests" / "golden" / "quickstart-review.md"
    assert out("--format", "markdown") == golden.read_text(encoding="utf-8")


_HOSTILE_TEST = r'''import os


def test_i():
    os.getenv("A\x01B\x1b[31mRED\ud800")
    open("/srv/a|b`c<d>&\"e'\n::error::x%0A.txt", "w")
'''


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github", "markdown", "junit"])
def test_text_from_the_analysed_code_cannot_break_an_output(tmp_path, monkeypatch, fmt, sarif_schema):
    """A lone surrogate (no UTF-8 can encode it) and control characters (a terminal escape, what
    XML refuses, a newline that would start a workflow command) reach reports from literals:
    each format stays whole, and shows them escaped."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_i.py").write_text(_HOSTILE_TEST, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(cli, ["check", "--no-cache", "--format", fmt])
    assert res.exit_code == 1 and res.exception is None or isinstance(res.exception, SystemExit), res.output
    text = res.stdout
    assert "\x1b" not in text and "\x01" not in text and "\ud800" not in text
    assert "\\x1b[31mRED\\ud800" in text or "\\\\x1b[31mRED\\\\ud800" in text
    if fmt == "junit":
        ET.fromstring(text)
    elif fmt == "json":
        assert len(json.loads(text)["findings"]) == 2
    elif fmt == "sarif":
        pytest.importorskip("jsonschema").validate(json.loads(text), sarif_schema)
    elif fmt == "github":
        assert all(line.startswith("::") for line in text.splitlines() if line)
        assert "\n::error::x" not in text
    elif fmt == "markdown":
        assert "/srv/a\\|b\\`c&lt;d&gt;&amp;" in text   # said in the message, nothing taken for Markdown
        assert "<d>" not in text   # no raw HTML


def test_markdown_messages_do_not_turn_into_emphasis():
    from hermetic.report.formats import _code, _md_text

    assert _md_text("__init__() reads *x* [a](b) <b>|") == "\\__init\\_\\_() reads \\*x\\* \\[a\\](b) &lt;b&gt;\\|"
    assert _md_text("_robot_enabled() and DB_PATH") == "_robot_enabled() and DB_PATH"
    assert _code("a`b") == "``a`b``" and _code("`x") == "`` `x ``" and _code("plain") == "`plain`"


def test_sarif_related_locations_are_the_tests_def_lines_from_any_folder(quickstart, monkeypatch):
    # node ids are rootdir-relative, SARIF locations relative to %SRCROOT% (the working folder)
    for where, uri in (("", "tests/test_publish.py"), ("tests", "test_publish.py")):
        monkeypatch.chdir(quickstart / where)
        for _ in range(2):   # cold, then the stored result of the same run
            [result] = json.loads(out("--format", "sarif"))["runs"][0]["results"]
            [rel] = result["relatedLocations"]
            assert rel["physicalLocation"]["artifactLocation"]["uri"] == uri
            assert rel["physicalLocation"]["region"]["startLine"] == 4


def test_inventory_names_what_a_test_s_imports_do(tmp_path, monkeypatch):
    # check lists the tests whose imports run an operation at a module's top level: the
    # inventory says so too (it said "no I/O operation reached": a new user's trial on tldextract)
    (tmp_path / "src" / "app").mkdir(parents=True)
    (tmp_path / "tests").mkdir()
    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\npythonpath = ["src"]\n', encoding="utf-8")
    (tmp_path / "src" / "app" / "__init__.py").write_text(
        'CONF = open("/etc/app.conf").read()\n\n\ndef f():\n    return 1\n', encoding="utf-8")
    (tmp_path / "tests" / "test_a.py").write_text("from app import f\n\n\ndef test_f():\n    assert f() == 1\n",
                                                  encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    inv = json.loads(CliRunner().invoke(cli, ["inventory", "--format", "json"]).output)["tests"]
    (test,) = inv
    assert [(o["path"], o["line"], o["status"], o["severity"]) for o in test["operations"]] == [
        ("src/app/__init__.py", 1, "uncontrolled", "warning")]
    assert "at import" in test["operations"][0]["by"] and test["uncontrolled"] == 1
