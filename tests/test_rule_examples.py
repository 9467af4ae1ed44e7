"""Every rule's documented example is real: it is code of the rule's fixture project, and
checking that project reports the rule on the example's marked lines.

An example (``Rule.example`` in ``src/hermetic/rules/registry.py``) is Python source in which

- a comment-only line naming a file (``# src/ledger/db.py``) says which file of the fixture the
  lines below it come from; other comment-only lines and ``...`` are prose and skipped;
- every other line, whitespace-normalised and without its marker comment, is a whole line of
  that file (the file's own trailing comment may be left out), the lines in the file's order;
- a line whose trailing comment starts with a rule code (``# HT203``, ``# HT205: ...``) is a
  line the check reports that code at (the finding's first line).

The fixture projects are those of ``tests/test_rule_ht*.py``; ``Rule.fixture`` names one per rule.
The check runs the command line (``hermetic check --format json --no-cache``) on a copy.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest

from helpers import FIXTURES, copy_fixture
from hermetic.rules.registry import RULES

_MARKER = re.compile(r"#\s*(HT\d{3})\b")
_FILE_HEADER = re.compile(r"^#\s*([\w./-]+\.(?:py|toml|cfg|ini))\s*$")


@dataclass
class ExampleLine:
    """One code line of an example: its normalised text and the rule code its marker names."""

    text: str
    marked: Optional[str] = None


@dataclass
class Block:
    """Consecutive example lines from one file (``path`` None: any file of the fixture)."""

    path: Optional[str]
    lines: List[ExampleLine] = field(default_factory=list)


def _norm(text: str) -> str:
    return " ".join(text.split())


def parse_example(example: str) -> List[Block]:
    """The example's code lines, grouped by the file header above them."""
    blocks = [Block(None)]
    for raw in example.splitlines():
        line = raw.strip()
        if not line or line == "...":
            continue
        if line.startswith("#"):
            header = _FILE_HEADER.match(line)
            if header:
                blocks.append(Block(header.group(1)))
            continue
        marker = _MARKER.search(line)
        code = line[:marker.start()] if marker else line
        blocks[-1].lines.append(ExampleLine(_norm(code), marker.group(1) if marker else None))
    return [b for b in blocks if b.lines]


def _same_line(example: str, source: str) -> bool:
    """The example line is the source line, or the source line without its trailing comment."""
    source = _norm(source)
    return source == example or (source.startswith(example + " #") and example != "")


def locate(block: Block, root: Path) -> Optional[Tuple[str, List[int]]]:
    """(path, line numbers) of the first fixture file holding the block's lines in order."""
    if block.path is not None:
        candidates = [root / block.path]
    else:
        candidates = sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)
    for path in candidates:
        if not path.is_file():
            continue
        source = path.read_text(encoding="utf-8").splitlines()
        numbers, start = [], 0
        for ex in block.lines:
            hit = next((n for n in range(start, len(source)) if _same_line(ex.text, source[n])), None)
            if hit is None:
                break
            numbers.append(hit + 1)
            start = hit + 1
        else:
            return path.relative_to(root).as_posix(), numbers
    return None


_REPORTS: Dict[str, dict] = {}


def fixture_report(name: str, tmp_path_factory) -> dict:
    """The JSON report of ``hermetic check`` on a copy of fixture ``name`` (one run per fixture)."""
    if name not in _REPORTS:
        project = copy_fixture(name, tmp_path_factory.mktemp("example"))
        proc = subprocess.run([sys.executable, "-m", "hermetic", "check", "--format", "json", "--no-cache",
                               "--exit-zero"], cwd=project, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr
        _REPORTS[name] = json.loads(proc.stdout)
    return _REPORTS[name]


CODES = sorted(RULES)


def test_example_format_is_parsed():
    blocks = parse_example('''
# src/app/settings.py
ROOT  =  Path("/srv")
# tests/test_app.py
def test_x():  # hermetic: ignore[HT401]   # HT900: why
...
    os.environ["K"] = "v"   # HT302
''')
    assert [b.path for b in blocks] == ["src/app/settings.py", "tests/test_app.py"]
    assert [(x.text, x.marked) for x in blocks[0].lines] == [('ROOT = Path("/srv")', None)]
    assert [(x.text, x.marked) for x in blocks[1].lines] == [
        ("def test_x(): # hermetic: ignore[HT401]", "HT900"), ('os.environ["K"] = "v"', "HT302")]
    assert _same_line('ROOT = Path("/srv")', 'ROOT = Path("/srv")  # shipped default')
    assert not _same_line('ROOT = Path("/srv")', 'ROOT = Path("/srv") / "x"')


@pytest.mark.parametrize("code", CODES)
def test_rule_has_a_fixture_project(code):
    fixture = RULES[code].fixture
    assert fixture, f"{code} names no fixture project (Rule.fixture)"
    assert (FIXTURES / fixture / "pyproject.toml").is_file(), f"{code}: fixtures/{fixture} is not a project"


@pytest.mark.parametrize("code", CODES)
def test_rule_has_an_example_marking_its_code(code):
    blocks = parse_example(RULES[code].example)
    assert blocks, f"{code} has no example code"
    assert any(line.marked == code for b in blocks for line in b.lines), \
        f"{code}: no line of the example carries a '# {code}' marker"


@pytest.mark.parametrize("code", CODES)
def test_example_is_code_of_the_fixture(code):
    rule = RULES[code]
    root = FIXTURES / rule.fixture
    for block in parse_example(rule.example):
        assert locate(block, root) is not None, (
            f"{code}: these example lines are not, in this order, lines of "
            f"{'fixtures/' + rule.fixture + '/' + block.path if block.path else 'any file of fixtures/' + rule.fixture}: "
            + " | ".join(line.text for line in block.lines))


@pytest.mark.parametrize("code", CODES)
def test_fixture_reports_the_example(code, tmp_path_factory):
    rule = RULES[code]
    root = FIXTURES / rule.fixture
    report = fixture_report(rule.fixture, tmp_path_factory)
    reported = {(f["path"], f["line"]) for f in report["findings"] if f["code"] == code}
    for block in parse_example(rule.example):
        where = locate(block, root)
        assert where is not None, f"{code}: example not found in the fixture (see test_example_is_code_of_the_fixture)"
        path, numbers = where
        for line, n in zip(block.lines, numbers):
            if line.marked == code:
                assert (path, n) in reported, f"{code} is not reported at {rule.fixture}/{path}:{n}: {line.text}"
