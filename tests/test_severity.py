"""Severity by consequence, benign reads, confidence, and what the outputs and gates make of
them (contract section 4 "Severity" / "Confidence", section 6 `[tool.hermetic.benign]`,
section 8's baselines and `--diff`); fixture `severity`."""
import json
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from hermetic.catalogue.loader import effect_of, load, mode_writes
from hermetic.cli import cli
from hermetic.report.formats import to_github, to_junit
from hermetic.report.model import FileError, Finding, Report
from hermetic.rules.durations import duration_reads

from helpers import copy_fixture, have_git, line_of, run_fixture

FIX = "severity"
J, C, E = "src/ranked/journal.py", "src/ranked/timing.py", "src/ranked/terminal.py"


@pytest.fixture(scope="module")
def findings(tmp_path_factory):
    return run_fixture(FIX, tmp_path_factory.mktemp("sev"))


def at(findings, path, snippet, code=None):
    line = line_of(FIX, path, snippet)
    hits = [f for f in findings if f.path == path and f.line == line and (code is None or f.code == code)]
    assert hits, f"nothing at {path}:{line}"
    return hits


@pytest.mark.parametrize("path, snippet, severity", [
    (J, "with open(settings.JOURNAL) as fh:", "warning"),            # a read through open
    (J, 'with open(settings.JOURNAL, "a") as fh:', "error"),         # a write through the same open
    (J, "# a mode the analysis cannot read", "error"),                # unknown mode = change
    (J, '# only ever "r"', "warning"),
    (J, '"r" from one test, "w" from another', "error"),             # one writing test makes it an error
    (J, "# the default, or", "warning"),                              # every alternative a read mode
    (J, "# read-only flags: a warning", "warning"),                   # os.open by its flags (watchdog's kqueue)
    (J, "# creates: an error", "error"),
    (C, "start = time.monotonic()", "note"),                          # a duration's start
    (C, "return time.monotonic() - start", "note"),                   # ... and its end
    (C, "self.began = time.perf_counter()", "note"),                  # across the methods of a class
    (C, "return time.perf_counter() - self.began", "note"),
    (C, "self.start = self.last_eta = time.time()", "note"),         # a chained assignment, both subtracted
    (C, "self.began = self.stamp = time.time()", "warning"),          # ... one of them shown as a date
    (C, "return time.time() - started > 5", "warning"),               # the other side is no clock read
    (C, "return datetime.now().isoformat()", "warning"),              # a wall-clock read
])
def test_severity_boundaries(findings, path, snippet, severity):
    assert {f.severity for f in at(findings, path, snippet)} == {severity}


def test_an_unknown_mode_is_ranked_a_change_but_judged_as_the_read_it_was(findings):
    [f] = at(findings, J, "# a mode the analysis cannot read")
    assert f.severity == "error" and "may write (open)" in f.message
    # a file shipped with the tests, opened with a mode the analysis cannot read: still the
    # controlled read of shipped data (no finding), as before modes were ranked
    assert not [g for g in findings if g.path == "tests/test_ranked.py"]


def test_benign_variables_are_notes_and_the_rest_warnings(findings):
    line = line_of(FIX, E, 'os.environ.get("NO_COLOR")')
    assert sorted((f.message.split("variable ")[1].split(",")[0], f.severity) for f in findings
                  if f.path == E and f.line == line) == [("NO_COLOR", "note"), ("TERM", "note")]
    assert {f.severity for f in at(findings, E, 'os.environ.get("COLUMNS"')} == {"note"}
    assert {f.severity for f in at(findings, E, 'os.getenv("RANKED_COLOR"')} == {"warning"}
    assert {f.severity for f in at(findings, E, 'os.environ.get("RANKED_TOKEN")')} == {"warning"}


def test_configuration_extends_and_trims_the_benign_list(tmp_path):
    from hermetic.api import run_check

    project = copy_fixture(FIX, tmp_path)
    py = project / "pyproject.toml"
    py.write_text(py.read_text(encoding="utf-8") + '\n[tool.hermetic.benign]\nenv = ["RANKED_COLOR"]\n'
                  'remove = ["COLUMNS"]\n', encoding="utf-8")
    report, _ = run_check([], project)
    assert {f.severity for f in at(report.findings, E, 'os.getenv("RANKED_COLOR"')} == {"note"}
    assert {f.severity for f in at(report.findings, E, 'os.environ.get("COLUMNS"')} == {"warning"}


@pytest.mark.parametrize("table, key", [
    ('[tool.hermetic.benign]\ncolour = ["X"]\n', "tool.hermetic.benign.colour"),
    ('[tool.hermetic.benign]\nenv = "TERM"\n', "tool.hermetic.benign.env"),
    ('[tool.hermetic]\nbenign = ["TERM"]\n', "tool.hermetic.benign"),
])
def test_bad_benign_configuration_exits_2_naming_file_and_key(tmp_path, monkeypatch, table, key):
    (tmp_path / "pyproject.toml").write_text(table, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(cli, ["check", "--no-cache"])
    assert res.exit_code == 2
    assert "pyproject.toml" in res.output and key in res.output


def test_confidence_is_medium_past_an_undecided_branch_or_among_several_targets(findings):
    assert [f.confidence for f in at(findings, J, "# undecided branch")] == ["medium"]
    assert [f.confidence for f in at(findings, J, "# one of two targets")] == ["medium"]
    assert [f.confidence for f in at(findings, J, "with open(settings.JOURNAL) as fh:")] == ["high"]
    # reached only past an `if ...: return` the test's values do not decide: medium; where the
    # default decides the return away: high
    assert [f.confidence for f in at(findings, J, "# after a return the test's values")] == ["medium"]
    assert [f.confidence for f in at(findings, J, "# the default decides the return away")] == ["high"]
    assert [f.confidence for f in at(findings, J, "# past a return inside a with block")] == ["medium"]
    assert [f.confidence for f in at(findings, J, "# past a return inside a try body")] == ["medium"]


def test_a_high_finding_shows_the_way_that_makes_it_high(findings):
    # test_backup_maybe (first by name) passes an undecided branch, test_backup_read none: the
    # finding is high, lists both (every reaching test), counts the other in the message and names
    # it in maybe_tests, and its trace is test_backup_read's, so the three agree
    [f] = at(findings, J, "# one test's way is decided")
    assert f.confidence == "high"
    assert f.tests == ["tests/test_ranked.py::test_backup_maybe", "tests/test_ranked.py::test_backup_read"]
    assert f.maybe_tests == ["tests/test_ranked.py::test_backup_maybe"]
    assert f.message.endswith("; 1 more test may reach it on ways its values do not decide")
    assert [step.function for step in f.trace][0] == "test_backup_read"


@pytest.fixture
def project(tmp_path, monkeypatch):
    dest = copy_fixture(FIX, tmp_path)
    monkeypatch.chdir(dest)
    return dest


def check(*args):
    return CliRunner().invoke(cli, ["check", "--no-cache", *args])


def test_min_confidence_high_and_the_json_fields(project):
    every = json.loads(check("--format", "json").output)["findings"]
    high = json.loads(check("--format", "json", "--min-confidence", "high").output)["findings"]
    assert {f["confidence"] for f in every} == {"high", "medium"}
    # five medium in journal.py, and TERM, read only where NO_COLOR is unset (an `and` operand)
    assert {f["confidence"] for f in high} == {"high"} and len(high) == len(every) - 6
    assert {f["severity"] for f in every} == {"error", "warning", "note"}


def test_text_leads_with_errors_then_warnings_and_counts_notes(project):
    text = check().output
    assert text.index("ERRORS") < text.index("WARNINGS")
    assert "timed() reads the real clock" not in text   # a note: counted, not shown
    assert "10 notes not shown (benign reads" in text
    assert "(medium confidence)" in text
    assert "origin:" not in text   # the origin is said once, in the message
    assert all(len(line) <= 100 for line in text.splitlines() if not line.startswith("      tests:"))


def test_fail_on(project, tmp_path):
    assert check().exit_code == 1   # errors
    only_reads = ["--select", "HT103,HT104"]
    assert check(*only_reads).exit_code == 0   # warnings and notes do not fail by default
    assert check(*only_reads, "--fail-on", "warning").exit_code == 1
    assert check("--select", "HT103", "--fail-on", "warning").exit_code == 1
    py = project / "pyproject.toml"
    py.write_text(py.read_text(encoding="utf-8") + '\n[tool.hermetic.benign]\nenv = ["RANKED_COLOR", "RANKED_TOKEN"]\n',
                  encoding="utf-8")
    assert check("--select", "HT103", "--fail-on", "warning").exit_code == 0   # notes never fail


def test_sarif_github_and_markdown_follow_severity(project):
    sarif = json.loads(check("--format", "sarif").output)
    results = sarif["runs"][0]["results"]
    assert {r["level"] for r in results} == {"error", "warning", "note"}
    assert all(r["properties"]["confidence"] in ("high", "medium") and 0 <= r["rank"] <= 100 for r in results)
    ranks = {(r["level"], r["properties"]["confidence"]): r["rank"] for r in results}
    assert ranks[("error", "high")] > ranks[("warning", "high")] > ranks[("warning", "medium")] > ranks[("note", "high")]
    kinds = {line.split(" ", 1)[0] for line in check("--format", "github").output.splitlines()}
    assert kinds == {"::error", "::warning", "::notice"}
    md = check("--format", "markdown").output
    assert md.index("### Errors") < md.index("<details><summary>") and "notes (benign reads" in md
    assert md.index("<details><summary>") < md.index("warnings: the results depend")


def test_sarif_with_notes_validates(project, sarif_schema):
    pytest.importorskip("jsonschema").validate(json.loads(check("--format", "sarif").output), sarif_schema)


def _f(code, severity, tests, path="src/m.py"):
    return Finding(code, severity, path, 3, 1, 3, 2, f"{code} message", list(tests), fix="a fix")


def test_junit_lists_every_test_and_fails_only_on_errors():
    report = Report(findings=[_f("HT102", "error", ["t.py::test_w"]), _f("HT104", "warning", ["t.py::test_r"]),
                              _f("HT204", "warning", [])],
                    inventory=[{"test": n, "operations": []} for n in ("t.py::test_w", "t.py::test_r", "t.py::test_ok")])
    root = ET.fromstring(to_junit(report))
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert sorted(cases) == ["t.py::test_ok", "t.py::test_r", "t.py::test_w"]   # no "<module>" case
    assert cases["t.py::test_w"].find("failure") is not None
    assert cases["t.py::test_r"].find("failure") is None and "HT104" in cases["t.py::test_r"].find("system-out").text
    suite = root.find("testsuite")
    assert (suite.get("tests"), suite.get("failures")) == ("3", "1")
    assert "HT204" in suite.find("system-out").text


def test_github_annotation_of_a_file_not_analysed_has_a_line():
    report = Report(errors=[FileError("src/a.py", "syntax error at line 3"), FileError("src/b.py", "cannot read")])
    lines = to_github(report).splitlines()
    assert lines[0].startswith("::error file=src/a.py,line=3,") and lines[1].startswith("::error file=src/b.py,line=1,")


def test_durations_rule():
    src = (
        "import time\n"
        "def f(step):\n"
        "    t0 = time.monotonic()\n"          # only subtracted: a duration
        "    step()\n"
        "    return time.monotonic() - t0\n"   # subtracted from a clock read: a duration
        "def g():\n"
        "    t0 = time.time()\n"               # also logged: not a duration
        "    print(t0)\n"
        "    return time.time() - t0\n"        # still only subtracted from a clock read
        "def h(start):\n"
        "    return time.time() - start\n"     # a parameter: not a clock read
        "def k():\n"
        "    deadline = time.monotonic() + 5\n"   # a deadline compared with a later read: a duration
        "    return time.monotonic() < deadline\n"
        "def w(timeout):\n"
        "    start = time.perf_counter()\n"       # the time elapsed against a limit (portalocker)
        "    while start + timeout > time.perf_counter():\n"
        "        pass\n"
        "def x(timeout, other):\n"
        "    start = time.time()\n"               # compared with what is no clock read: not
        "    return start + timeout > other\n"
    )
    assert sorted(duration_reads(src)) == [(3, 10), (5, 12), (9, 12), (13, 16), (14, 12), (16, 13), (17, 29)]
    assert duration_reads("def (:\n") == set()


def test_durations_across_methods_deadlines_and_relative_clocks():
    src = (
        "import time\n"
        "class Stream:\n"
        "    def __init__(self, start):\n"
        "        self._start = start\n"
        "    def close(self):\n"
        "        return time.perf_counter() - self._start\n"   # a relative clock in a difference
        "    def wall(self):\n"
        "        return time.time() - self._start\n"           # the wall clock minus a parameter: not
        "class Log:\n"
        "    def begin(self):\n"
        "        self.started = time.time()\n"                # also formatted: not a duration
        "    def end(self):\n"
        "        stop = time.time()\n"                         # subtracted from the class's start
        "        return stop - self.started, str(self.started)\n"
        "def wait(timeout):\n"
        "    end = time.time() + timeout\n"                    # a deadline only subtracted from
        "    return end - time.time()\n"
        "def expired(timeout):\n"
        "    end = time.time() + timeout\n"                    # a deadline compared with a read: one
        "    return time.time() < end\n"
        "def long_ago(s):\n"
        "    s.last = time.monotonic() - 10000\n"              # a fixed amount back: a point in time
        "    s.seen = time.monotonic() - LIMIT - 1\n"
        "    return s.eta - time.monotonic()\n"                # what is left until a point: a duration
    )
    assert sorted(duration_reads(src)) == [(6, 16), (13, 16), (16, 11), (17, 18), (19, 11), (20, 12), (24, 20)]


def test_a_start_handed_to_a_class_that_only_subtracts_it_is_a_duration():
    """``start = perf_counter()`` passed to a class of the module whose ``__init__`` keeps it in
    ``self._start``, read only in ``perf_counter() - self._start`` (httpx's ``BoundSyncStream``):
    a duration. Near misses: a class that also returns the start, and one that changes it."""
    src = (
        "import time\n"
        "class Bound:\n"
        "    def __init__(self, stream, start):\n"
        "        self._stream = stream\n"
        "        self._start = start\n"
        "    def close(self):\n"
        "        return time.perf_counter() - self._start\n"
        "class Leaky:\n"
        "    def __init__(self, start):\n"
        "        self.start = start\n"
        "    def close(self):\n"
        "        return time.time() - self.start, self.start\n"
        "def send(stream):\n"
        "    start = time.time()\n"
        "    return Bound(stream, start=start)\n"
        "def send_positional(stream):\n"
        "    begun = time.time()\n"
        "    return Bound(stream, begun)\n"
        "def send_leaky():\n"
        "    start = time.time()\n"
        "    return Leaky(start)\n"
    )
    found = sorted(duration_reads(src))
    assert (14, 13) in found and (17, 13) in found   # handed to Bound, by keyword and by position
    assert (20, 13) not in found                      # Leaky also returns it


def test_a_clock_function_bound_at_import_and_only_used_for_durations():
    src = (
        "import sys, time\n"
        "if sys.platform == 'win32':\n"
        "    clock = time.perf_counter\n"                 # both bindings: notes (every call a duration)
        "else:\n"
        "    clock = time.time\n"
        "stamp = time.time\n"                             # also formatted: not a duration
        "def send(req):\n"
        "    start = clock()\n"
        "    req()\n"
        "    return clock() - start, str(stamp())\n"
    )
    assert sorted(duration_reads(src)) == [(3, 5), (5, 5), (8, 13), (10, 12)]
    # a clock imported under another name reads the clock where it is called
    assert duration_reads("from time import time as _time\ndef wait(t):\n    end = _time() + t\n"
                          "    return end - _time()\n") == {(3, 11), (4, 18)}
    # near miss: the name is also passed on, so the binding may feed anything
    assert (3, 5) not in duration_reads(src + "def later(f=clock):\n    return f\n")


def test_catalogue_effects_default_from_the_category():
    assert effect_of("connection", {}) == "change" and effect_of("subprocess", {}) == "change"
    assert effect_of("file", {}) == "read" and effect_of("file", {"write": True}) == "change"
    assert effect_of("env", {}) == "read" and effect_of("file", {"effect": "change"}) == "change"
    with pytest.raises(ValueError):
        effect_of("file", {"effect": "delete"})
    cat = load()
    assert cat.calls["os.chmod"].effect == "change" and cat.calls["shutil.rmtree"].effect == "change"
    assert cat.calls["os.path.exists"].effect == "read" and cat.path_methods["exists"].effect == "read"
    assert cat.path_methods["write_text"].effect == "change"
    from hermetic.analyse.values import UNKNOWN_V, Origin, V

    def modes(*texts):
        return V(frozenset(Origin("literal", expr=repr(t), value=t) for t in texts))

    assert mode_writes(None) is False and mode_writes(UNKNOWN_V) is True and mode_writes(UNKNOWN_V, unknown=False) is False
    assert mode_writes(modes("rb")) is False and mode_writes(modes("r", "rb", "rt")) is False
    assert mode_writes(modes("r+")) is True and mode_writes(modes("r", "ab")) is True
    default = V(frozenset({Origin("default-argument", expr="mode", inner=(Origin("literal", expr="'rb'", value="rb"),))}))
    assert mode_writes(default) is False


# ---------------------------------------------------------------- baselines and --diff see new tests
def git(repo, *args):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false",
                    *args], cwd=repo, check=True, capture_output=True)


ENV_TESTS = '''import os

from ranked import terminal


def test_token_one(monkeypatch):
    terminal.api_token()


def test_token_two(monkeypatch):
    monkeypatch.setenv("RANKED_TOKEN", "x")
    terminal.api_token()
'''


@pytest.fixture
def env_repo(tmp_path, monkeypatch):
    if not have_git():
        pytest.skip("git is not installed")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    dest = copy_fixture(FIX, tmp_path)
    (dest / "tests" / "test_ranked.py").unlink()
    (dest / "tests" / "test_token.py").write_text(ENV_TESTS, encoding="utf-8")
    git(dest, "init", "-q")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "one test reaches the read uncontrolled")
    monkeypatch.chdir(dest)
    return dest


def _drop_setenv(repo: Path) -> None:
    p = repo / "tests" / "test_token.py"
    p.write_text(p.read_text(encoding="utf-8").replace('    monkeypatch.setenv("RANKED_TOKEN", "x")\n', ""),
                 encoding="utf-8")


def test_baseline_sees_a_new_test_reaching_a_known_sink(env_repo, tmp_path):
    base = tmp_path / "baseline.json"
    assert check("--write-baseline", str(base), "--select", "HT103").exit_code in (0, 1)
    assert json.loads(check("--baseline", str(base), "--format", "json").output)["findings"] == []
    _drop_setenv(env_repo)
    [f] = json.loads(check("--baseline", str(base), "--format", "json").output)["findings"]
    assert f["code"] == "HT103" and "tests/test_token.py::test_token_two" in f["tests"]
    # an old baseline entry that names no tests covers every test
    old = json.loads(base.read_text(encoding="utf-8"))
    for e in old["findings"]:
        e.pop("tests")
    base.write_text(json.dumps(old), encoding="utf-8")
    assert json.loads(check("--baseline", str(base), "--format", "json").output)["findings"] == []


def test_diff_sees_a_new_test_reaching_a_known_sink(env_repo):
    assert json.loads(check("--diff", "HEAD", "--format", "json").output)["findings"] == []
    _drop_setenv(env_repo)
    [f] = json.loads(check("--diff", "HEAD", "--format", "json").output)["findings"]
    assert (f["code"], f["tests"]) == ("HT103", ["tests/test_token.py::test_token_one",
                                                 "tests/test_token.py::test_token_two"])
