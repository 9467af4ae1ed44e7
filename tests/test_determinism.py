"""The report does not depend on the process: set iteration order (string hashing varies per
process) and allocation addresses must not pick the origin or trace a finding shows."""
import json
import subprocess
import sys

from helpers import copy_fixture


def test_same_report_under_every_hash_seed(tmp_path, monkeypatch):
    # fixtures/determinism: one sink reached three ways from one test, through a set of
    # functions, so the interpreter meets the ways in a seed-dependent order
    project = copy_fixture("determinism", tmp_path)
    outputs = set()
    for seed in ("0", "1", "3", "4"):
        monkeypatch.setenv("PYTHONHASHSEED", seed)
        done = subprocess.run([sys.executable, "-m", "hermetic", "check", "--no-cache", "--format", "json"],
                              cwd=project, capture_output=True, text=True, check=False)
        assert done.returncode == 1, done.stderr
        outputs.add(done.stdout)
    assert len(outputs) == 1
    assert '"kind": "cwd"' in outputs.pop()


def test_where_the_step_budget_cuts_does_not_depend_on_the_process(tmp_path, monkeypatch):
    # fixtures/determinism-budget: three writers met through a set, 40 statements each; a budget
    # of 60 steps lets two run. Which two follows the order the alternatives are evaluated in;
    # in frozenset order that varied per hash seed (Django's one-changed run was not identical).
    project = copy_fixture("determinism-budget", tmp_path)
    small_budget = "import hermetic.analyse.interp as I; I.STEP_BUDGET = 60\nfrom hermetic.cli import main; main()"
    outputs = set()
    for seed in ("0", "1", "3", "4", "5"):
        monkeypatch.setenv("PYTHONHASHSEED", seed)
        done = subprocess.run([sys.executable, "-c", small_budget, "check", "--no-cache", "--format", "json"],
                              cwd=project, capture_output=True, text=True, check=False)
        assert done.returncode == 1, done.stderr
        outputs.add(done.stdout)
    assert len(outputs) == 1
    assert len(json.loads(outputs.pop())["findings"]) == 2   # the third writer is past the budget


def _check_json(project, script="from hermetic.cli import main; main()"):
    done = subprocess.run([sys.executable, "-c", script, "check", "--no-cache", "--format", "json"],
                          cwd=project, capture_output=True, text=True, check=False)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)["findings"]


def _tests_at(findings, code, snippet, project, path="src/app/jobs.py"):
    """The tests the ``code`` findings at the line of ``path`` holding ``snippet`` list, sorted."""
    lines = (project / path).read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if snippet in text)
    return sorted(t for f in findings if f["code"] == code and f["path"] == path and f["line"] == line
                  for t in f["tests"])


def test_a_reused_call_gives_what_a_first_run_would(tmp_path):
    # fixtures/determinism-memo: each pair of tests reaches one call in two contexts; the second
    # test reuses the first's result (the memo). Before the memo took these inputs into account,
    # the scratch writer reused the server writer's closure (listed), and the second test's own
    # os.environ write did not control its earlier read (listed: HT103).
    project = copy_fixture("determinism-memo", tmp_path)
    findings = _check_json(project)
    t = "tests/test_jobs.py::"
    assert _tests_at(findings, "HT103", 'os.environ.get("APP_REGION")', project) == []
    # a reused call defines the nested function it returns again, with its own variables: before,
    # write() kept the folder of its last definition (test_scratch_writer_between's tmp_path)
    assert _tests_at(findings, "HT102", 'open(os.path.join(folder, "out.txt")', project) == [
        t + "test_server_writer", t + "test_shared_server_writer", t + "test_shared_server_writer_again"]
    # calls on an object another test made under another number are reused, renumbered
    assert _tests_at(findings, "HT102", 'open(os.path.join(self.folder, "box.txt")', project) == [
        t + "test_box_on_the_server", t + "test_second_box_on_the_server"]
    # test_configure's write to a module global stays in pytest's process, but the analysis of
    # the next test starts from the state import left: test_write_default alone writes to /srv
    assert _tests_at(findings, "HT102", 'open(os.path.join(default_folder()', project) == [t + "test_write_default"]


def test_a_call_cut_by_its_callers_is_not_reused(tmp_path):
    # with 3 frames allowed, test_deep reaches record() at the third frame and its write_log() call
    # is cut; test_record then calls record() from the test. A result cut because of the frames
    # around it was reused there, and test_record's write was missed.
    project = copy_fixture("determinism-memo", tmp_path)
    findings = _check_json(project, "import hermetic.analyse.interp as I; I.MAX_DEPTH = 3\nfrom hermetic.cli import main; main()")
    assert _tests_at(findings, "HT102", 'open("/srv/app/jobs.log"', project) == ["tests/test_jobs.py::test_record"]


def test_a_module_first_imported_by_a_test_changes_other_modules_for_its_importers_only(tmp_path):
    # fixtures/determinism-imports: app.devmode sets registry.MODE when imported. Before, the
    # import stayed in force for every later test (test_in_prod reached no write); a reused
    # call that had made the import did not make it again.
    project = copy_fixture("determinism-imports", tmp_path)
    assert _tests_at(_check_json(project), "HT102", 'open("/srv/app/out.txt"', project, "src/app/store.py") == [
        "tests/test_store.py::test_in_prod"]


def test_an_import_time_read_a_reused_call_makes_lists_the_importing_modules_tests(tmp_path):
    # fixtures/determinism-imports (trial on invoke): test_conf_a's import reads /etc/app.yaml
    # through read_system(); test_conf_b's through Config(), whose inner call the memo answers.
    # The replayed event kept test_conf_a as its module, so test_conf_b's test was not listed
    # (and was, with test_conf_a renamed to sort last). Near miss: test_conf_c makes no Config.
    project = copy_fixture("determinism-imports", tmp_path)
    assert _tests_at(_check_json(project), "HT102", 'open("/etc/app.yaml")', project, "src/app/conf.py") == [
        "tests/test_conf_a.py::test_direct", "tests/test_conf_b.py::test_through_an_attribute"]


def test_statistics_count_the_calls_cut_at_the_budget(tmp_path, monkeypatch):
    # --statistics says how many unresolved call sites are budget cuts (issue 25 item 11)
    import hermetic.analyse.interp as interp
    from hermetic.api import run_check

    project = copy_fixture("determinism-budget", tmp_path)
    report, _cfg = run_check([], project, use_cache=False, jobs=1)
    assert report.statistics["budget_cuts"] == 0
    monkeypatch.setattr(interp, "STEP_BUDGET", 60)
    report, _cfg = run_check([], project, use_cache=False, jobs=1)
    assert report.statistics["budget_cuts"] >= 1
    assert report.statistics["unresolved"] >= report.statistics["budget_cuts"]
    # and the text report's last lines say it too, beside the unresolved calls
    import io
    from hermetic.report.text import render_terminal
    out = io.StringIO()
    render_terminal(report, out, color=False, width=200)
    assert f"({report.statistics['budget_cuts']} where a test's run or an import reached the analysis step budget" \
        in out.getvalue()


def test_a_warm_run_counts_the_budget_cuts_the_cold_run_made(tmp_path, monkeypatch):
    # the whole-run result comes from the cache: --statistics and --timings still say how many
    # call sites the analysis cut at its budget (a new user saw the line only on the cold run)
    import hermetic.analyse.interp as interp
    from click.testing import CliRunner
    from hermetic.cli import cli

    project = copy_fixture("determinism-budget", tmp_path)
    monkeypatch.chdir(project)
    monkeypatch.setattr(interp, "STEP_BUDGET", 60)
    args = ["check", "--statistics", "--cache-dir", str(tmp_path / "cache")]
    cold, warm = (CliRunner().invoke(cli, args).stderr for _ in range(2))
    line = [ln for ln in cold.splitlines() if "reached the analysis step budget" in ln]
    assert line and not line[0].startswith("hermetic: 0 ") and "(0 where" not in line[0]
    assert [ln for ln in warm.splitlines() if "reached the analysis step budget" in ln] == line
    timed = CliRunner().invoke(cli, ["check", "--timings", "--cache-dir", str(tmp_path / "cache")]).stderr
    assert "whole-run result hit" in timed and "of them at the analysis budget" in timed
