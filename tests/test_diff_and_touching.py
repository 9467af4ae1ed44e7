"""--diff REV (findings absent at a git revision) and --touching (pre-commit's changed files)."""
import json
import subprocess
from pathlib import Path

import pytest

from helpers import copy_tree, have_git
from click.testing import CliRunner

from hermetic.cli import cli

ROOT = Path(__file__).resolve().parent.parent

FIXED = '''

@pytest.fixture(autouse=True)
def scratch_settings(tmp_path, monkeypatch):
    from newsdesk import settings
    monkeypatch.setattr(settings, "DB_PATH", tmp_path / "flags.sqlite3")
'''


def git(repo, *args):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false",
                    *args], cwd=repo, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path, monkeypatch):
    if not have_git():
        pytest.skip("git is not installed")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    dest = tmp_path / "repo"
    copy_tree(ROOT / "fixtures" / "quickstart", dest)
    conftest = dest / "tests" / "conftest.py"
    conftest.write_text(conftest.read_text(encoding="utf-8") + FIXED, encoding="utf-8")
    git(dest, "init", "-q")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "fixed")
    monkeypatch.chdir(dest)
    return dest


def run(*args):
    return CliRunner().invoke(cli, ["check", *args])


def test_diff_reports_the_finding_a_deleted_patch_brings_back(repo):
    conftest = repo / "tests" / "conftest.py"
    text = conftest.read_text(encoding="utf-8")
    conftest.write_text(text.replace('    monkeypatch.setattr(settings, "DB_PATH", tmp_path / "flags.sqlite3")\n', ""),
                        encoding="utf-8")
    res = run("--diff", "HEAD", "--format", "json")
    [f] = json.loads(res.output)["findings"]
    assert (f["code"], f["path"], f["line"]) == ("HT101", "src/newsdesk/publish.py", 9)
    # the same check against the working tree as its own base reports nothing new
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "regress")
    assert json.loads(run("--diff", "HEAD", "--format", "json").output)["findings"] == []


def test_diff_errors(repo, tmp_path, monkeypatch):
    res = run("--diff", "no-such-rev")
    assert res.exit_code == 2 and "unknown revision" in res.output
    outside = tmp_path / "outside"
    copy_tree(ROOT / "fixtures" / "quickstart", outside)
    monkeypatch.chdir(outside)
    res = run("--diff", "HEAD")
    assert res.exit_code == 2 and "git repository" in res.output


def test_touching_reports_findings_whose_trace_touches_the_changed_files(tmp_path, monkeypatch):
    dest = tmp_path / "qs"
    copy_tree(ROOT / "fixtures" / "quickstart", dest)
    monkeypatch.chdir(dest)
    # the sink lives in src/, the changed file is only the test: whole-program analysis finds it
    res = run("--touching", "tests/test_publish.py", "--format", "json")
    assert [f["code"] for f in json.loads(res.output)["findings"]] == ["HT101"]
    assert res.exit_code == 1
    res = run("--touching", "src/newsdesk/__init__.py", "--format", "json")
    assert json.loads(res.output)["findings"] == [] and res.exit_code == 0
