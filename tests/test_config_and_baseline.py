"""Configuration discovery and provenance, config errors, --config, baselines."""
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from hermetic.cli import cli

from helpers import copy_tree

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


@pytest.fixture
def quickstart(tmp_path, monkeypatch):
    dest = tmp_path / "quickstart"
    copy_tree(FIXTURES / "quickstart", dest)
    (dest / ".git").mkdir()   # the repository root: discovery stops here
    monkeypatch.chdir(dest)
    return dest


def invoke(*args):
    return CliRunner().invoke(cli, list(args))


def test_config_prints_values_and_where_they_came_from(quickstart):
    (quickstart / "hermetic.toml").write_text('fail-on = "warning"\nignore = ["HT104"]\n', encoding="utf-8")
    res = invoke("config")
    assert res.exit_code == 0
    assert "hermetic.toml" in res.output.splitlines()[0]
    lines = {ln.split(" = ")[0]: ln for ln in res.output.splitlines()[1:]}
    assert '"warning"' in lines["fail-on"] and "hermetic.toml" in lines["fail-on"]
    assert "# default" in lines["select"]
    # the values are TOML: the lines read back as a table
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib
    body = "\n".join(ln.split("    #")[0] for ln in res.output.splitlines() if not ln.startswith("#"))
    table = tomllib.loads(body)
    assert table["fail-on"] == "warning" and table["ignore"] == ["HT104"] and table["controls"]["loopback"] is False


def test_dot_hermetic_toml_wins_in_its_folder(quickstart):
    (quickstart / "hermetic.toml").write_text('ignore = ["HT104"]\n', encoding="utf-8")
    (quickstart / ".hermetic.toml").write_text('ignore = ["HT101"]\n', encoding="utf-8")
    res = invoke("check", "--format", "json")
    assert json.loads(res.output)["findings"] == []


def test_config_error_suggests_the_key(quickstart):
    (quickstart / "hermetic.toml").write_text('[controls]\nfixture = ["x"]\n', encoding="utf-8")
    res = invoke("check")
    assert res.exit_code == 2
    assert "hermetic.toml" in res.output and "controls.fixture" in res.output
    assert "did you mean 'fixtures'" in res.output and "Traceback" not in res.output
    assert invoke("config").exit_code == 2


@pytest.mark.parametrize("text, where", [
    (b"# caf\xe9\nselect = [\"HT\"]\n", "not UTF-8"),                      # latin-1
    ("select = ['HT']\n".encode("utf-16"), "not UTF-8"),
    (b"exclude = [\"!\"]\n", "exclude"),                                    # gitignore refuses it
    (b"file-timeout = 1e400\n", "file-timeout"),                             # infinite
    (b"file-timeout = 99999999999999999999\n", "file-timeout"),              # past what the pool can wait
    (b"file-timeout = nan\n", "file-timeout"),
])
def test_bad_configuration_values_exit_2_with_the_file_and_key(quickstart, text, where):
    # found by a trial run on hostile input: each was a traceback with exit 1
    (quickstart / "hermetic.toml").write_bytes(text)
    for cmd in ("check", "config"):
        res = invoke(cmd)
        assert res.exit_code == 2, (cmd, res.output)
        assert "Traceback" not in res.output and res.exception is None or isinstance(res.exception, SystemExit)
        line = [ln for ln in res.output.splitlines() if "hermetic.toml" in ln]
        assert line and where in line[0], res.output


@pytest.mark.parametrize("option", ["-o", "--write-baseline", "--output-file"])
def test_an_output_file_that_cannot_be_written_exits_2_naming_it(quickstart, tmp_path, option):
    dest = str(tmp_path / "missing-folder" / "out.json")
    res = invoke("check", option, f"sarif={dest}" if option == "--output-file" else dest)
    assert res.exit_code == 2, res.output
    assert isinstance(res.exception, SystemExit)
    assert f"{option if option != '-o' else '--output'}: cannot write {dest}" in res.output


@pytest.mark.parametrize("args, where", [
    (["--select", "ZZ999"], "--select: unknown rule code 'ZZ999'"),
    (["--select", "ht102"], "did you mean 'HT102'"),
    (["--select", ",,,"], "--select: no rule code given"),
    (["--ignore", "HT7"], "--ignore: unknown rule code 'HT7'"),
])
def test_a_rule_code_that_selects_nothing_is_a_usage_error(quickstart, args, where):
    res = invoke("check", *args)
    assert res.exit_code == 2 and where in res.output, res.output
    (quickstart / "hermetic.toml").write_text('select = ["ZZ999"]\n', encoding="utf-8")
    res = invoke("check")
    assert res.exit_code == 2 and "hermetic.toml" in res.output and "select: unknown rule code" in res.output


def test_an_ignore_as_specific_as_the_select_wins(quickstart):
    assert invoke("check").exit_code == 1   # the example's HT101
    assert invoke("check", "--ignore", "HT").exit_code == 0   # against the default select, HT
    assert invoke("check", "--select", "HT1", "--ignore", "HT1").exit_code == 0
    assert invoke("check", "--select", "HT101", "--ignore", "HT1").exit_code == 1   # the longer prefix decides


def test_explicit_config_file(quickstart, tmp_path):
    other = tmp_path / "strict.toml"
    other.write_text('select = ["HT2"]\n', encoding="utf-8")
    res = invoke("check", "--config", str(other), "--format", "json")
    assert res.exit_code == 0 and json.loads(res.output)["findings"] == []
    assert invoke("check", "--config", str(tmp_path / "missing.toml")).exit_code == 2


def test_baseline_hides_known_findings_and_reports_fixed_ones(quickstart, tmp_path):
    baseline = tmp_path / "baseline.json"
    assert invoke("check", "--write-baseline", str(baseline)).exit_code == 0   # it did what it was asked
    res = invoke("check", "--baseline", str(baseline), "--format", "json")
    report = json.loads(res.output)
    assert res.exit_code == 0 and report["findings"] == [] and report["summary"]["baseline_fixed"] == 0
    # fix the finding: the baseline entry no longer matches and is reported as fixed
    settings = quickstart / "src" / "newsdesk" / "settings.py"
    settings.write_text('DB_PATH = ":memory:"\n', encoding="utf-8")
    res = invoke("check", "--baseline", str(baseline), "--format", "json")
    out = res.output
    report = json.loads(out[out.index("{"):out.rindex("}") + 1])
    assert report["summary"]["baseline_fixed"] == 1 and report["findings"] == []
    assert "no longer match" in out


@pytest.mark.parametrize("text", ["[]", "{}", "null", '{"version": 99, "findings": []}',
                                  '{"version": 1, "findings": [5, "x", null]}',
                                  '{"version": 1, "findings": [{"fingerprint": 5}]}'])
def test_a_file_that_is_no_baseline_exits_2(quickstart, tmp_path, text):
    # JSON, but not a baseline: taking it for an empty one would show every finding as new
    baseline = tmp_path / "baseline.json"
    baseline.write_text(text, encoding="utf-8")
    res = invoke("check", "--baseline", str(baseline))
    assert res.exit_code == 2 and "--baseline" in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_baseline_survives_unrelated_edits(quickstart, tmp_path):
    baseline = tmp_path / "baseline.json"
    invoke("check", "--write-baseline", str(baseline))
    publish = quickstart / "src" / "newsdesk" / "publish.py"
    text = publish.read_text(encoding="utf-8")
    text = text.replace('"""Publishing of scheduled stories."""\n',
                        '"""Publishing of scheduled stories."""\n\n\ndef unrelated_helper():\n    return 1\n\n')
    text = text.replace("    flags = sqlite3.connect(", "    # the flag lives in the service database\n    flags = sqlite3.connect(")
    publish.write_text(text, encoding="utf-8")
    res = invoke("check", "--baseline", str(baseline), "--format", "json")
    report = json.loads(res.output)
    assert report["findings"] == [] and report["summary"]["baseline_fixed"] == 0
    # the fresh report still has the finding, on another line, with the same fingerprint
    fresh = json.loads(invoke("check", "--format", "json").output)["findings"]
    assert fresh[0]["line"] != 9
    assert fresh[0]["fingerprint"] == json.loads(baseline.read_text(encoding="utf-8"))["findings"][0]["fingerprint"]


def test_suppression_on_a_test_def_line_is_for_that_test(quickstart):
    tests = quickstart / "tests" / "test_publish.py"
    tests.write_text(tests.read_text(encoding="utf-8").replace(
        "def test_publishes_the_stories_of_the_day(story_db):",
        "def test_publishes_the_stories_of_the_day(story_db):  # hermetic: ignore[HT101]") + '''

def test_second(story_db):
    assert publish_scheduled(story_db, "2031-04-03") == 0
''', encoding="utf-8")
    [f] = json.loads(invoke("check", "--format", "json").output)["findings"]
    assert f["tests"] == ["tests/test_publish.py::test_second"]


def test_summary_cache_gives_the_same_report_and_ignores_itself(quickstart):
    cold = invoke("check", "--format", "json").output
    cache = quickstart / ".hermetic_cache"
    assert (cache / ".gitignore").read_text(encoding="utf-8").strip().endswith("*")
    assert any(cache.rglob("runs/*.bin"))   # the whole-run result
    assert invoke("check", "--format", "json").output == cold
    assert invoke("check", "--format", "json", "--no-cache").output == cold


def test_read_only_tree_gets_no_cache(quickstart):
    quickstart.chmod(0o555)
    try:
        assert invoke("check", "--format", "json").exit_code == 1
        assert not (quickstart / ".hermetic_cache").exists()
    finally:
        quickstart.chmod(0o755)


def test_result_cache_is_invalidated_by_an_edit(quickstart):
    first = invoke("check", "--format", "json").output
    assert invoke("check", "--format", "json").output == first
    settings = quickstart / "src" / "newsdesk" / "settings.py"
    settings.write_text('DB_PATH = ":memory:"\n', encoding="utf-8")
    assert json.loads(invoke("check", "--format", "json").output)["findings"] == []


# pytest's rootdir without a configuration file (pytest 8's findpaths): the nearest
# pyproject.toml even without [tool.pytest.ini_options], else the nearest setup.py, else the
# common ancestor of the invocation folder and the arguments.
@pytest.mark.parametrize("marker, body", [("setup.py", "from setuptools import setup\nsetup()\n"),
                                          ("pyproject.toml", "[project]\nname = 'app'\n")])
def test_rootdir_without_pytest_settings(tmp_path, marker, body):
    from hermetic.api import run_check
    from hermetic.config import find_pytest_config

    (tmp_path / marker).write_text(body, encoding="utf-8")
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__init__.py").write_text("import os\n\n\ndef home():\n    return os.getenv('APP_HOME')\n",
                                                  encoding="utf-8")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_app.py").write_text("from app import home\n\n\ndef test_home():\n    home()\n",
                                                    encoding="utf-8")
    assert find_pytest_config(tmp_path / "tests", tmp_path).rootdir == tmp_path
    report, _ = run_check(["tests"], tmp_path)
    assert [f.tests for f in report.findings] == [["tests/test_app.py::test_home"]]
    assert (tmp_path / ".hermetic_cache").is_dir() and not (tmp_path / "tests" / ".hermetic_cache").exists()


def test_rootdir_is_the_common_ancestor_without_any_marker(tmp_path):
    from hermetic.config import find_pytest_config

    (tmp_path / "a" / "b").mkdir(parents=True)
    cfg = find_pytest_config(tmp_path / "a" / "b", tmp_path / "a")
    assert cfg.rootdir == tmp_path / "a" and cfg.inifile is None


def test_a_target_outside_the_working_folder_is_its_own_project(tmp_path, monkeypatch):
    """Without markers, a sibling target is not analysed together with the working folder's
    project: the common ancestor would parse both and resolve names across them."""
    from hermetic.api import run_check
    from hermetic.config import find_pytest_config

    for name, var in (("a", "A_HOME"), ("b", "B_HOME")):
        (tmp_path / name / "tests").mkdir(parents=True)
        (tmp_path / name / "app.py").write_text(f"import os\n\n\ndef home():\n    return os.getenv('{var}')\n",
                                                encoding="utf-8")
        (tmp_path / name / "tests" / "test_app.py").write_text(
            "from app import home\n\n\ndef test_home():\n    home()\n", encoding="utf-8")
    assert find_pytest_config(tmp_path / "b", tmp_path / "a").rootdir == tmp_path / "b"
    assert find_pytest_config(tmp_path / "a" / "tests", tmp_path / "a").rootdir == tmp_path / "a"
    monkeypatch.chdir(tmp_path / "a")
    report, _ = run_check([str(tmp_path / "b")], tmp_path / "a")
    # paths are shown relative to the working folder, node ids relative to the rootdir
    assert [(f.path, f.tests) for f in report.findings] == [("../b/app.py", ["tests/test_app.py::test_home"])]
    assert "B_HOME" in report.findings[0].message


@pytest.mark.parametrize("testpaths, selected", [
    ("5", ["it/test_b.py::test_b", "unit/test_a.py::test_a"]),          # a number: matches nothing
    ("['nowhere']", ["it/test_b.py::test_b", "unit/test_a.py::test_a"]),  # no match: every test, as pytest
    ("['un*']", ["unit/test_a.py::test_a"]),                           # a glob, as pytest expands it
    ("'it'", ["it/test_b.py::test_b"]),                                # a string: split like the ini form
])
def test_testpaths_are_globs_and_a_miss_selects_every_test(tmp_path, monkeypatch, testpaths, selected):
    from hermetic.api import run_check

    (tmp_path / "pyproject.toml").write_text(f"[tool.pytest.ini_options]\ntestpaths = {testpaths}\n",
                                             encoding="utf-8")
    (tmp_path / "app.py").write_text("import os\n\n\ndef home():\n    return os.getenv('HOME_DIR')\n",
                                     encoding="utf-8")
    for d, name in (("unit", "a"), ("it", "b")):
        (tmp_path / d).mkdir()
        (tmp_path / d / f"test_{name}.py").write_text(f"from app import home\n\n\ndef test_{name}():\n    home()\n",
                                                      encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    report, _ = run_check([], tmp_path)
    assert sorted(t for f in report.findings for t in f.tests) == selected


@pytest.mark.parametrize("line, key", [('select = "HT2"', "select"), ('exclude = "tests"', "exclude"),
                                       ("select = []", "select"),
                                       ('[tool.hermetic.sinks]\nconnection = "x"', "sinks.connection")])
def test_a_string_or_an_empty_select_where_a_list_is_expected_exits_2(quickstart, line, key):
    (quickstart / "hermetic.toml").write_text(line + "\n", encoding="utf-8")
    res = invoke("check")
    assert res.exit_code == 2 and "hermetic.toml" in res.stderr and key in res.stderr


def test_a_config_option_that_is_not_a_file_says_so(quickstart):
    res = invoke("check", "--config", "/dev/null")
    assert res.exit_code == 2 and "not a regular file" in res.stderr
