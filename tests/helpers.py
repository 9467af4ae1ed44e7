"""Shared helpers: run hermetic on a copy of a fixture project and compare with expectations.

Expectations name their line by a snippet of the source line (unique in the file), so that
an edit to a fixture moves the expectation with it; the comparison itself is by exact line.
"""
from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import pytest

from hermetic.api import run_check

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


@dataclass
class Expect:
    """A finding that must be reported: code, path, the line holding ``snippet``."""

    id: str
    code: str
    path: str
    snippet: str
    tests: Optional[List[str]] = None      # exact set of node ids, when pinned
    origin: Optional[str] = None           # origin.kind, when the contract fixes it
    xfail: str = ""                        # reason, when the tool disagrees with the contract


@dataclass
class Silent:
    """A near miss: no finding of any code at the line holding ``snippet``."""

    id: str
    path: str
    snippet: str
    why: str = ""
    xfail: str = ""


def params(items: Sequence) -> list:
    out = []
    for item in items:
        marks = [pytest.mark.xfail(strict=True, reason=item.xfail)] if item.xfail else []
        out.append(pytest.param(item, id=item.id, marks=marks))
    return out


def copy_tree(src: Path, dest: Path, **kwargs) -> Path:
    """shutil.copytree without what a run left in the fixture (the README's quick start runs
    hermetic inside fixtures/quickstart, leaving a cache there that would make a copy warm)."""
    return Path(shutil.copytree(src, dest, ignore=shutil.ignore_patterns(".hermetic_cache", "__pycache__",
                                                                          ".pytest_cache"), **kwargs))


def copy_fixture(name: str, dest: Path) -> Path:
    return copy_tree(FIXTURES / name, dest / name)


def run_fixture(name: str, dest: Path):
    """Copy fixture ``name`` under ``dest`` and check it there; return the findings."""
    project = copy_fixture(name, dest)
    report, _cfg = run_check([], project)
    assert not report.errors, [(e.path, e.message) for e in report.errors]
    return report.findings


def line_of(fixture: str, path: str, snippet: str) -> int:
    lines = (FIXTURES / fixture / path).read_text(encoding="utf-8").splitlines()
    hits = [n for n, text in enumerate(lines, 1) if snippet in text]
    assert len(hits) == 1, f"snippet {snippet!r} found on lines {hits} of {fixture}/{path}"
    return hits[0]


def at(findings, path: str, line: int, code: Optional[str] = None) -> list:
    return [f for f in findings
            if f.path == path and f.line <= line <= f.end_line and (code is None or f.code == code)]


def describe(findings) -> List[str]:
    return [f"{f.code} {f.path}:{f.line}-{f.end_line} origin={(f.origin or {}).get('kind')} tests={sorted(f.tests)}"
            for f in findings]


def assert_reported(fixture: str, findings, exp: Expect):
    line = line_of(fixture, exp.path, exp.snippet)
    hits = at(findings, exp.path, line, exp.code)
    assert len(hits) == 1, (f"expected one {exp.code} at {exp.path}:{line}; "
                            f"all findings: {describe(findings)}")
    found = hits[0]
    assert found.line == line, f"{exp.code} anchored at line {found.line}, expected {line}"
    if exp.tests is not None:
        assert sorted(found.tests) == sorted(exp.tests)
    if exp.origin is not None:
        assert (found.origin or {}).get("kind") == exp.origin, found.origin
    return found


def assert_silent(fixture: str, findings, near: Silent):
    line = line_of(fixture, near.path, near.snippet)
    hits = at(findings, near.path, line)
    assert not hits, f"{near.path}:{line} must stay silent ({near.why}); got {describe(hits)}"


def assert_nothing_else(fixture: str, findings, expected: Sequence):
    """Labels are exhaustive: every finding must be one of ``expected``."""
    wanted = []
    for item in expected:
        exp = item.values[0] if hasattr(item, "values") else item
        wanted.append((exp.code, exp.path, line_of(fixture, exp.path, exp.snippet)))
    extra = [f for f in findings
             if not any(f.code == c and f.path == p and f.line <= ln <= f.end_line for c, p, ln in wanted)]
    assert not extra, f"unexpected findings: {describe(extra)}"


def listed_at(fixture: str, findings, code: str, path: str, snippet: str) -> set:
    """The node ids listed by the ``code`` finding at the line holding ``snippet`` (empty if none)."""
    line = line_of(fixture, path, snippet)
    return {t for f in at(findings, path, line, code) for t in f.tests}


def listed_params(listed):
    """(id, path, snippet, tests) rows -> pytest params for assert_lists."""
    return [pytest.param(*item[1:4], id=item[0]) for item in listed]


def assert_lists(fixture: str, findings, code: str, path: str, snippet: str, tests):
    """Exactly one ``code`` finding at the snippet's line, listing exactly ``tests``."""
    hits = at(findings, path, line_of(fixture, path, snippet), code)
    assert len(hits) == 1, describe(findings)
    assert sorted(hits[0].tests) == sorted(tests), hits[0].tests


def have_git() -> bool:
    """Whether a `git` program runs (asked of git itself rather than by searching PATH)."""
    import subprocess

    try:
        return subprocess.run(["git", "--version"], capture_output=True, check=False).returncode == 0
    except OSError:
        return False


def check_files(root: Path, files: Dict[str, str]):
    """Write ``files`` (path under ``root`` -> text) beside a bare pytest ``pyproject.toml`` and
    check ``root``: ``(report, outcome)`` of ``run_check``. The caller has changed into ``root``."""
    (root / "pyproject.toml").write_text("[tool.pytest.ini_options]\n", encoding="utf-8")
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return run_check([], root)


def fixture_suite(fixture: str, expected: Sequence, silent: Sequence, optional: Sequence = (),
                  name: str = "findings"):
    """The standard tests of a fixture project, for a test module to bind by name:

        findings, test_reported, test_silent, test_nothing_else = fixture_suite(FIX, EXPECTED, SILENT)

    ``findings`` is a module-scoped fixture (the project checked once); ``test_reported`` asserts
    each expected finding, ``test_silent`` each near miss, ``test_nothing_else`` that the labels
    (``expected`` plus ``optional``) are exhaustive."""
    import pytest

    @pytest.fixture(scope="module", name=name)
    def findings(checked):
        return checked(fixture)

    @pytest.mark.parametrize("exp", params(expected))
    def test_reported(request, exp):
        assert_reported(fixture, request.getfixturevalue(name), exp)

    @pytest.mark.parametrize("near", params(silent))
    def test_silent(request, near):
        assert_silent(fixture, request.getfixturevalue(name), near)

    def test_nothing_else(request):
        assert_nothing_else(fixture, request.getfixturevalue(name), list(expected) + list(optional))

    return findings, test_reported, test_silent, test_nothing_else


def listed_suite(fixture: str, code: str, listed):
    """``test_lists_the_affected_tests`` for a fixture project: each (path, snippet) finding of
    ``code`` lists exactly these tests."""
    import pytest

    @pytest.mark.parametrize("path,snippet,tests", listed_params(listed))
    def test_lists_the_affected_tests(findings, path, snippet, tests):
        assert_lists(fixture, findings, code, path, snippet, tests)

    return test_lists_the_affected_tests
