"""Parse workers: crash isolation, the time budget, deep input; and the cache counts behind the
warm and one-file-changed guarantees (asserted through ``report.statistics``)."""
import json
import marshal
import signal
import sys
import time

import pytest
from click.testing import CliRunner

from hermetic.api import run_check
from hermetic.cli import cli
from hermetic.engine.cache import deserialize, serialize
from hermetic.engine.workers import ParseJob, _summarize_bytes, summarize_all

from helpers import copy_fixture


def crashing(data: bytes, module: str, path: str, is_package: bool) -> bytes:
    if path.endswith("crash.py"):
        import ctypes

        ctypes.string_at(0)   # a real segfault, as libcst's native parser has on a stack overflow
    return _summarize_bytes(data, module, path, is_package)


def slow(data: bytes, module: str, path: str, is_package: bool) -> bytes:
    if path.endswith("slow.py"):
        time.sleep(30)
    return _summarize_bytes(data, module, path, is_package)


class Clock:
    """The pool's clock, moved by the test: budgets expire only when the test says so."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _jobs(*names):
    return [ParseJob(n, b"import os\nx = os.getcwd()\n", n[:-3], n, False) for n in names]


def test_a_worker_that_dies_is_an_error_for_its_file_and_the_rest_go_on():
    results = {r.job.path: r for r in summarize_all(_jobs("a.py", "crash.py", "b.py", "c.py", "crash2crash.py"),
                                                    2, fn=crashing, clock=Clock())}
    assert set(results) == {"a.py", "crash.py", "b.py", "c.py", "crash2crash.py"}
    assert "SIGSEGV" in results["crash.py"].error and results["crash.py"].data is None
    assert "SIGSEGV" in results["crash2crash.py"].error
    for ok in ("a.py", "b.py", "c.py"):
        assert results[ok].error is None and deserialize(results[ok].data)["module"] == ok[:-3]


def test_a_file_over_the_time_budget_is_reported_not_skipped_silently():
    clock = Clock()
    results = {}
    for r in summarize_all(_jobs("slow.py", "a.py", "b.py"), 2, timeout=1.0, fn=slow, clock=clock):
        results[r.job.path] = r
        if {"a.py", "b.py"} <= set(results):
            clock.now = 100.0   # the slow file's budget is spent; the others were done in time
    assert "longer than 1 s" in results["slow.py"].error
    assert results["a.py"].data and results["b.py"].data


def test_the_caller_works_while_the_workers_parse():
    # ``idle`` runs once the workers hold their files, before the first result is waited for
    order = []
    results = summarize_all(_jobs("a.py", "b.py"), 2, clock=Clock(), idle=lambda: order.append("idle"))
    for r in results:
        order.append(r.job.path)
    assert order[0] == "idle" and sorted(order[1:]) == ["a.py", "b.py"]
    nothing = []
    assert list(summarize_all([], 2, idle=lambda: nothing.append("idle"))) == [] and nothing == []


def test_deep_code_that_cpython_compiles_is_summarised_in_a_worker():
    chain = ("x = " + "+".join(["'a'"] * 900) + "\n").encode()
    [res] = list(summarize_all([ParseJob("k", chain, "m", "m.py", False)], 1, clock=Clock()))
    assert res.error is None, res.error
    assert deserialize(res.data)["body"][0][0] == "assign"


def test_a_crash_inside_a_project_is_a_file_error_in_the_report(tmp_path, monkeypatch):
    import hermetic.engine.workers as workers

    project = copy_fixture("quickstart", tmp_path)
    (project / "tests" / "crash.py").write_text("x = 1\n", encoding="utf-8")
    monkeypatch.setattr(workers, "_summarize_bytes", crashing)
    report, _ = run_check([], project, use_cache=False)
    assert [e.path for e in report.errors if "crashed" in e.message] == ["tests/crash.py"]
    assert report.findings, "the rest of the project is still analysed"


def test_warm_run_parses_nothing_and_one_changed_file_parses_one(tmp_path):
    project = copy_fixture("quickstart", tmp_path)
    cold, _ = run_check([], project)
    assert cold.statistics["parsed"] == cold.statistics["files"] > 1
    warm, _ = run_check([], project)
    assert warm.statistics["parsed"] == 0 and warm.statistics["result_cache"] == "hit"
    src = next(p for p in sorted(project.rglob("*.py")) if "tests" not in p.parts)
    src.write_text(src.read_text(encoding="utf-8") + "\n\ndef _added():\n    return open('added.txt').read()\n",
                   encoding="utf-8")
    changed, _ = run_check([], project)
    assert changed.statistics["parsed"] == 1 and changed.statistics["result_cache"] == "miss"
    fresh, _ = run_check([], project, use_cache=False)
    from hermetic.report.text import to_json

    assert to_json(changed) == to_json(fresh)


def test_cache_dir_option_environment_and_clean(tmp_path, monkeypatch):
    project = copy_fixture("quickstart", tmp_path)
    elsewhere = tmp_path / "shared-cache"
    monkeypatch.chdir(project)
    runner = CliRunner()
    r = runner.invoke(cli, ["check", "--exit-zero", "--timings", "--cache-dir", str(elsewhere)])
    assert r.exit_code == 0, r.output
    assert "parse" in r.stderr and "cache hits 0" in r.stderr
    assert elsewhere.is_dir() and not (project / ".hermetic_cache").exists()
    monkeypatch.setenv("HERMETIC_CACHE_DIR", str(elsewhere))
    r = runner.invoke(cli, ["check", "--exit-zero", "--timings"])
    assert "parsed 0" in r.stderr and "whole-run result hit" in r.stderr
    r = runner.invoke(cli, ["clean"])
    assert r.exit_code == 0 and not elsewhere.exists()
    monkeypatch.delenv("HERMETIC_CACHE_DIR")
    runner.invoke(cli, ["check", "--exit-zero"])
    assert (project / ".hermetic_cache").is_dir()
    r = runner.invoke(cli, ["clean"])
    assert "removed" in r.stderr and not (project / ".hermetic_cache").exists()


def test_clean_leaves_a_folder_that_is_not_a_cache_alone(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)   # clean's TARGET defaults to ".": the project is looked up from here
    other = tmp_path / "important"
    other.mkdir()
    (other / "data.txt").write_text("keep", encoding="utf-8")
    r = CliRunner().invoke(cli, ["clean", "--cache-dir", str(other)])
    assert r.exit_code == 2 and (other / "data.txt").exists()


@pytest.mark.parametrize("make, why", [
    (lambda d: (d.mkdir(), (d / "data.txt").write_text("keep", encoding="utf-8")), "holds files hermetic did not write"),
    (lambda d: d.write_text("", encoding="utf-8"), "is a file"),   # click's own check
])
def test_a_cache_dir_that_is_not_one_is_refused_before_any_write(tmp_path, monkeypatch, make, why):
    """--cache-dir at a folder of other files would get hermetic's .gitignore of "*" (git stops
    seeing the folder) and `hermetic clean` would then take it for a cache and remove it."""
    project = copy_fixture("quickstart", tmp_path)
    monkeypatch.chdir(project)
    target = tmp_path / "target"
    make(target)
    before = sorted(p.name for p in target.iterdir()) if target.is_dir() else None
    for args, env in ((["--cache-dir", str(target)], {}), ([], {"HERMETIC_CACHE_DIR": str(target)})):
        r = CliRunner(env=env).invoke(cli, ["check", *args])
        assert r.exit_code == 2 and why in r.stderr
        assert (sorted(p.name for p in target.iterdir()) if target.is_dir() else None) == before
    if target.is_dir():   # not used at all: no complaint
        assert CliRunner().invoke(cli, ["check", "--no-cache", "--cache-dir", str(target)]).exit_code == 1


def test_the_cache_never_adopts_a_folder_of_other_files(tmp_path):
    from hermetic.engine.cache import SummaryCache

    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("keep", encoding="utf-8")
    cache = SummaryCache(tmp_path, directory=folder)
    cache.put("ab" * 32, b"x")
    cache.put_result("cd" * 32, {"findings": []})
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt"] and not cache.enabled


def test_clean_removes_only_what_hermetic_wrote(tmp_path, monkeypatch):
    project = copy_fixture("quickstart", tmp_path)
    monkeypatch.chdir(project)
    cache = tmp_path / "cache"
    assert CliRunner().invoke(cli, ["check", "--cache-dir", str(cache)]).exit_code == 1
    (cache / "later.txt").write_text("someone's", encoding="utf-8")   # put there after hermetic made it
    r = CliRunner().invoke(cli, ["clean", "--cache-dir", str(cache)])
    assert r.exit_code == 0 and "left" in r.stderr
    assert [p.name for p in cache.iterdir()] == ["later.txt"]


@pytest.mark.parametrize("value", ["0", "-1", "\"soon\"", "true"])
def test_bad_file_timeout_exits_2_with_file_and_key(tmp_path, monkeypatch, value):
    project = copy_fixture("quickstart", tmp_path)
    (project / ".hermetic.toml").write_text(f"file-timeout = {value}\n", encoding="utf-8")
    monkeypatch.chdir(project)
    r = CliRunner().invoke(cli, ["check"])
    assert r.exit_code == 2
    assert ".hermetic.toml" in r.stderr and "file-timeout" in r.stderr


def test_a_deep_expression_in_reached_code_is_analysed_end_to_end(tmp_path):
    project = copy_fixture("quickstart", tmp_path)
    pkg = next(p for p in (project / "src").iterdir() if p.is_dir())
    (pkg / "deep.py").write_text("import os\n\n\ndef total():\n    os.getenv('DEEP_FLAG')\n    return "
                                 + " + ".join(["1"] * 2500) + "\n", encoding="utf-8")
    (project / "tests" / "test_deep.py").write_text(f"from {pkg.name}.deep import total\n\n\n"
                                                    "def test_total():\n    assert total()\n", encoding="utf-8")
    report, _ = run_check([], project, use_cache=False)
    assert not report.errors, report.errors
    assert any(f.code == "HT103" and f.path.endswith("deep.py") for f in report.findings)


def test_a_file_that_does_not_parse_is_not_parsed_again(tmp_path):
    project = copy_fixture("quickstart", tmp_path)
    (project / "tests" / "template_hook.py").write_text("{% if x %}\nimport os\n{% endif %}\n", encoding="utf-8")
    first, _ = run_check([], project)
    assert [e.path for e in first.errors] == ["tests/template_hook.py"]
    src = next(p for p in sorted(project.rglob("*.py")) if "tests" not in p.parts)
    src.write_text(src.read_text(encoding="utf-8") + "\n\nX = 1\n", encoding="utf-8")
    second, _ = run_check([], project)
    assert second.statistics["parsed"] == 1
    assert [(e.path, e.message) for e in second.errors] == [(e.path, e.message) for e in first.errors]


def test_corrupt_and_foreign_cache_entries_are_ignored_and_rebuilt(tmp_path):
    from hermetic.report.text import to_json

    project = copy_fixture("quickstart", tmp_path)
    cold, _ = run_check([], project)
    entries = sorted(p for p in (project / ".hermetic_cache").rglob("*.bin")
                     if p.parent.name not in ("analysis", "runs"))
    runs = sorted((project / ".hermetic_cache").rglob("runs/*.bin"))
    assert entries and runs
    entries[0].write_bytes(b"\xff\xfe not a summary")            # corrupt
    entries[1].write_bytes(serialize({"module": 1, "body": "x"}))   # readable, foreign shape
    for r in runs:   # a whole-run result of the right keys with a finding of the wrong shape
        r.write_bytes(marshal.dumps({"findings": [{"code": 1}], "files": 0, "tests": 0, "unresolved": [],
                                     "unknown": [], "calls": 0, "sinks": 0, "inventory": [], "errors": []}))
    again, _ = run_check([], project)
    assert again.statistics["parsed"] == 2 and again.statistics["result_cache"] == "miss"
    assert to_json(again) == to_json(cold)
    for r in sorted((project / ".hermetic_cache").rglob("runs/*.bin")):
        r.write_bytes(b"\x00 not marshal data")   # a damaged whole-run result: a miss, not an error
    third, _ = run_check([], project)
    assert third.statistics["parsed"] == 0 and third.statistics["result_cache"] == "miss"
    assert to_json(third) == to_json(cold)
    assert run_check([], project)[0].statistics["result_cache"] == "hit"   # rebuilt


def test_clean_leaves_a_folder_with_a_v_named_entry_alone(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    project = tmp_path / "project"
    (project / "venv").mkdir(parents=True)   # not a cache, whatever its entries are called
    r = CliRunner().invoke(cli, ["clean", "--cache-dir", str(project)])
    assert r.exit_code == 2 and (project / "venv").is_dir()


def test_compact_shares_short_tuples_but_never_mixes_true_and_one():
    from hermetic.engine.cache import compact
    a = compact({"x": [["name", "self"], ["lit", 1], ["lit", True]], "y": [["name", "self"], ["lit", True], ["lit", 1]]})
    assert a["x"][0] is a["y"][0] and a["x"][1] is a["y"][2]
    assert a["x"][2][1] is True and a["y"][2][1] == 1 and type(a["y"][2][1]) is int


def test_compact_makes_no_cyclic_garbage_and_keeps_nothing_alive():
    # a parse worker compacts every summary with its collector off: garbage in cycles, or a
    # table of every summary's tuples, would pile up there until a collection rescans it
    import gc

    from hermetic.engine.cache import compact

    was = gc.isenabled()
    gc.disable()
    try:
        gc.collect()
        out = compact({"body": [["call", ["name", "f"], [["lit", 1]]], ["name", "self"]] * 50})
        assert out["body"][1] is out["body"][3]
        del out
        assert gc.collect() == 0
        leaf = compact({"a": [["name", "only_here"]]})["a"][0]
        assert sys.getrefcount(leaf) == 2   # this name and the call's argument: no table keeps it
    finally:
        if was:
            gc.enable()


def test_a_serialized_summary_is_what_a_json_round_trip_gives():
    # the bytes a worker sends and the cache keeps hold the data JSON held before: lists as
    # tuples, nothing lost; a summary nested deeper than marshal goes travels as JSON
    from pathlib import Path

    from hermetic.engine.cache import compact
    from hermetic.summarise.extract import summarize

    fixtures = Path(__file__).resolve().parent.parent / "fixtures"
    for p in sorted(fixtures.rglob("*.py"))[:60]:
        s = summarize(p.read_bytes(), "m", p.name)
        data = serialize(s)
        assert data[:1] == b"L"
        back = deserialize(data)
        assert all(f._store.data is not None for f in back["functions"].values())   # read when first used
        assert _eager(back) == compact(json.loads(json.dumps(s)))
    from hermetic.engine.workers import run_deep

    def deep():   # a worker's deep stack and recursion limit
        s = summarize(("x = " + " + ".join(["1"] * 2500) + "\n").encode(), "m", "m.py")
        data = serialize(s)
        return data[:1], _eager(deserialize(data)) == compact(json.loads(json.dumps(s)))

    assert run_deep(deep) == (b"J", True)


def _eager(summary: dict) -> dict:
    """A loaded summary with every function body read, as plain dicts."""
    out = dict(summary)
    out["functions"] = {qn: dict(f, body=f["body"]) for qn, f in summary["functions"].items()}
    return out


def _rec(n: int) -> int:
    return 0 if n == 0 else _rec(n - 1)


def _shallow_calls_at(depth: int) -> None:
    if depth:
        return _shallow_calls_at(depth - 1)
    for _ in range(50):
        _rec(4)


def _sweep_depths() -> None:
    # short recursions from every third depth up to 600 frames: many of them cross the
    # boundary of a 16 KiB frame chunk
    for depth in range(0, 600, 3):
        _shallow_calls_at(depth)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="frames live in chunked stacks from 3.11")
def test_roomy_keeps_callees_in_one_frame_chunk():
    import resource

    from hermetic.engine.workers import roomy

    def faults(fn, *args) -> int:
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        fn(*args)
        return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

    roomy(_sweep_depths)   # the chunk's pages, touched once
    assert roomy(lambda a, b: (a, b), 1, b"x") == (1, b"x")
    # measured: about 1,500 page faults outside, under 20 inside; each one is a chunk mapped
    # again with fresh zeroed pages
    assert faults(roomy, _sweep_depths) < 200 < faults(_sweep_depths)


def test_console_script_runs_the_command_in_a_roomy_frame(monkeypatch):
    import hermetic.cli
    import hermetic.engine.workers
    from hermetic.__main__ import main

    seen = []
    monkeypatch.setattr(hermetic.engine.workers, "roomy", lambda fn, *a: seen.append(fn))
    monkeypatch.setattr(sys, "argv", ["hermetic", "--version"])
    sigint = signal.getsignal(signal.SIGINT)
    try:
        main()   # installs its Ctrl-C handler: put pytest's back for the tests after this one
    finally:
        signal.signal(signal.SIGINT, sigint)
    assert seen == [hermetic.cli.main]


def _summary_entries(project):
    return sorted(p.name for p in (project / ".hermetic_cache").rglob("*.bin") if p.parent.name not in ("analysis", "runs"))


@pytest.mark.skipif(not hasattr(__import__("os"), "fork") or sys.platform == "darwin", reason="needs fork")
def test_many_summaries_are_written_by_a_child_process_after_the_parse(tmp_path, monkeypatch):
    import os

    from hermetic.engine import cache as C

    project = copy_fixture("quickstart", tmp_path)
    forks, written_here = [], []
    fork, write = C._fork_writer, C.SummaryCache._write
    parent = os.getpid()

    def counting_fork():
        pid = fork()
        if pid:
            forks.append(pid)
        return pid

    def recording_write(self, path, text, replace_siblings=False):
        if os.getpid() == parent:
            written_here.append(path.parent.name)
        return write(self, path, text, replace_siblings)

    monkeypatch.setattr(C, "_fork_writer", counting_fork)
    monkeypatch.setattr(C.SummaryCache, "_write", recording_write)
    few, _ = run_check([], project)   # fewer files than WRITE_APART: written here, no fork
    assert few.statistics["parsed"] > 2 and not forks
    assert len([d for d in written_here if d not in ("analysis", "runs")]) == few.statistics["parsed"]

    (project / ".hermetic_cache").rename(tmp_path / "first-cache")
    written_here.clear()
    monkeypatch.setattr(C, "WRITE_APART", 2)
    cold, _ = run_check([], project)
    assert len(forks) == 1
    # the parent wrote only the run's own entries; every summary is there once run_check returns
    assert sorted(set(written_here)) == ["analysis", "runs"]
    assert _summary_entries(project) == sorted(p.name for p in (tmp_path / "first-cache").rglob("*.bin")
                                               if p.parent.name not in ("analysis", "runs"))
    assert len(_summary_entries(project)) == cold.statistics["parsed"]
    warm, _ = run_check([], project)
    assert warm.statistics["parsed"] == 0 and warm.statistics["result_cache"] == "hit"


@pytest.mark.skipif(not hasattr(__import__("os"), "fork") or sys.platform == "darwin", reason="needs fork")
def test_a_writer_process_that_cannot_write_turns_the_cache_off_for_the_run(tmp_path, monkeypatch):
    import os

    from hermetic.engine import cache as C
    from hermetic.report.text import to_json

    project = copy_fixture("quickstart", tmp_path)
    parent, replace = os.getpid(), os.replace

    def failing_in_the_child(src, dst):
        if os.getpid() != parent:
            raise OSError(28, "No space left on device")
        return replace(src, dst)

    monkeypatch.setattr(C, "WRITE_APART", 2)
    monkeypatch.setattr(C.os, "replace", failing_in_the_child)
    first, _ = run_check([], project)
    assert first.statistics["parsed"] > 2
    assert not list((project / ".hermetic_cache").rglob("*.bin"))   # no summaries, so no result naming them
    again, _ = run_check([], project)
    assert again.statistics["parsed"] == first.statistics["parsed"] and again.statistics["result_cache"] == "miss"
    assert to_json(again) == to_json(first) == to_json(run_check([], project, use_cache=False)[0])


def test_a_cache_folder_inside_the_project_does_not_change_what_it_ships(tmp_path):
    # the checkout's names key the analysis (analyse/shipped.py): the cache folder, written by
    # every run, is left out of them, so a warm run still reuses the last result
    project = copy_fixture("quickstart", tmp_path)
    cache = project / "lint-cache"
    run_check([], project, cache_dir=cache)
    warm, _ = run_check([], project, cache_dir=cache)
    assert warm.statistics["result_cache"] == "hit"
    (project / "tests" / "data.json").write_text("{}", encoding="utf-8")
    shipped, _ = run_check([], project, cache_dir=cache)
    assert shipped.statistics["result_cache"] == "miss"   # a data file added: analysed again
