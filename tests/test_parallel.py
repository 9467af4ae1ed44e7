"""Tests analysed in several processes (hermetic.engine.parallel) give the report one process gives,
byte for byte: a test's result is a function of the test alone."""
import json

import pytest

import hermetic.engine.parallel as P
from hermetic.api import run_check
from hermetic.report.text import to_json

from helpers import FIXTURES, copy_fixture

PROJECTS = sorted(p.name for p in FIXTURES.iterdir() if (p / "pyproject.toml").is_file())


def _report(project, jobs):
    report, _ = run_check(["."], project, use_cache=False, jobs=jobs)
    out = json.loads(to_json(report))
    out.pop("statistics", None)
    return out, report.statistics


@pytest.mark.parametrize("name", PROJECTS)
def test_one_process_and_two_give_the_same_report(name, tmp_path, monkeypatch):
    monkeypatch.setattr(P, "MIN_TESTS", 1)       # every fixture project is small
    monkeypatch.setattr(P, "TESTS_PER_PROCESS", 1)
    monkeypatch.setattr(P, "MIN_CHUNK", 1)   # chunks of one test: neighbours land apart
    monkeypatch.setattr(P, "CHUNKS_PER_PROCESS", 64)
    project = copy_fixture(name, tmp_path)
    alone, one = _report(project, 1)
    shared, two = _report(project, 2)
    assert one["analysis_processes"] == 1
    if alone["summary"]["tests"] >= 2:
        assert two["analysis_processes"] == 2
    assert shared == alone


def test_a_decorator_is_evaluated_at_collection_not_in_a_test(tmp_path, monkeypatch):
    # fixtures/determinism-imports: test_params.py's parametrize list makes the default app (and
    # reads APP_LOADER) at import. When each test's run evaluated its decorators again, that
    # write stayed for the tests after test_result in its process only: test_default_app read
    # APP_LOADER at call time (HT103) when it ran in another process.
    monkeypatch.setattr(P, "MIN_TESTS", 1)
    monkeypatch.setattr(P, "TESTS_PER_PROCESS", 1)
    monkeypatch.setattr(P, "MIN_CHUNK", 1)
    monkeypatch.setattr(P, "CHUNKS_PER_PROCESS", 64)
    project = copy_fixture("determinism-imports", tmp_path)
    report, _ = _report(project, 2)
    read = [(f["code"], f["tests"]) for f in report["findings"] if f["path"] == "src/app/apps.py"]
    # the read is HT203 in every process split; the test whose decorator made it uses it
    assert read == [("HT203", ["tests/test_params.py::test_result"])]
