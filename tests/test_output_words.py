"""Issue 27's wording items for the report: no internal row names of the decision table, plurals
right, the origin said once (text lines fit a terminal: tests/test_severity.py)."""
import json

import pytest
from click.testing import CliRunner

from hermetic.cli import cli

from helpers import copy_fixture


@pytest.fixture
def clock_project(tmp_path, monkeypatch):
    dest = copy_fixture("ht104-clock", tmp_path)
    monkeypatch.chdir(dest)
    return dest


def test_inventory_says_controls_in_words_not_row_names(clock_project):
    text = CliRunner().invoke(cli, ["inventory"]).output
    assert "a frozen clock" in text
    assert "(S3)" not in text and "(S1)" not in text
    data = json.loads(CliRunner().invoke(cli, ["inventory", "--format", "json"]).output)
    assert all("(S" not in op["by"] for t in data["tests"] for op in t["operations"])
    blocks = text.split("\n\n")
    assert any("warning (depends on the machine it runs on):" in b for b in blocks)
    both = [b for b in blocks if "warning (" in b and "controlled:" in b]
    assert all(b.index("warning (") < b.index("controlled:") for b in both)


def test_unknown_origins_heading_has_no_row_name(clock_project):
    res = CliRunner().invoke(cli, ["check", "--no-cache", "--show-unknown"])
    assert "row U" not in res.output


def test_plurals(clock_project, tmp_path):
    res = CliRunner().invoke(cli, ["check", "--no-cache", "--timings", "--jobs", "1"])
    assert "in 1 process," in res.stderr and "1 processes" not in res.stderr
    base = tmp_path / "b.json"
    CliRunner().invoke(cli, ["check", "--no-cache", "--write-baseline", str(base)])
    data = json.loads(base.read_text(encoding="utf-8"))
    data["findings"].append({"fingerprint": "hermetic/v1:" + "0" * 32})
    base.write_text(json.dumps(data), encoding="utf-8")
    res = CliRunner().invoke(cli, ["check", "--no-cache", "--baseline", str(base)])
    assert "1 baseline entry no longer matches" in res.stderr


def test_a_host_name_is_a_server_and_a_bare_sqlite_path_a_file():
    # rq's trial: Redis(host="foo") was "a real database file in the folder the tests are run from"
    from hermetic.analyse.values import Origin
    from hermetic.report.consequence import consequence
    host = Origin("literal", expr="'cache.internal'", value="cache.internal")
    assert consequence("connection", True, host, "redis.Redis") == "can read and change the server at 'cache.internal'"
    path = Origin("literal", expr="'app.db'", value="app.db")
    assert consequence("connection", True, path, "sqlite3.connect") == \
        "can read and change a real database file in the folder the tests are run from"
