"""A bug of hermetic's in one test's analysis leaves that test out, says so as an error, and the
other tests are analysed (no traceback; exit 1)."""
import json

from click.testing import CliRunner

from hermetic.analyse import runner as runner_mod
from hermetic.cli import cli
from helpers import copy_fixture


def test_a_test_whose_analysis_raises_is_left_out_and_the_run_goes_on(tmp_path, monkeypatch):
    project = copy_fixture("quickstart", tmp_path)
    (project / "tests" / "test_more.py").write_text(
        "def test_broken():\n    pass\n", encoding="utf-8")
    real = runner_mod.Runner._run

    def flaky(self, item, row):
        if item.display == "test_broken":
            raise TypeError("object of type 'NoneType' has no len()")
        return real(self, item, row)

    monkeypatch.setattr(runner_mod.Runner, "_run", flaky)
    monkeypatch.chdir(project)
    res = CliRunner().invoke(cli, ["check", "--no-cache", "--jobs", "1", "--format", "json"])
    assert res.exit_code == 2, res.output   # an internal error (contract section 7), the report still out
    out = json.loads(res.stdout)
    assert [e["path"] for e in out["errors"]] == ["tests/test_more.py:1"]
    assert out["errors"][0]["message"].startswith("hermetic internal error: TypeError")
    assert [f["code"] for f in out["findings"]] == ["HT101"]   # the other test is analysed
    assert all("internal error" not in u["call"] for u in out.get("unresolved_calls", []))
