"""The text report wraps each finding's lines to the report's width, the first after its head
and the rest after their indent, whatever the head holds ("(medium confidence)")."""
import io

from hermetic.report.model import Finding, Report
from hermetic.report.text import render_terminal

WORDS = " ".join(f"word{i}" for i in range(60))


def _lines(confidence):
    f = Finding("HT103", "warning", "src/a.py", 3, 1, 3, 9, WORDS, tests=["tests/test_a.py::test_x"],
                confidence=confidence)
    out = io.StringIO()
    render_terminal(Report(findings=[f], files=1, tests=1), out, color=False, width=80)
    return [ln for ln in out.getvalue().splitlines() if "word" in ln]


def test_continuation_lines_use_the_whole_width_after_a_long_head():
    high, medium = _lines("high"), _lines("medium")
    assert medium[0].startswith("  3:1 HT103 (medium confidence) word0")
    assert all(len(ln) <= 80 for ln in high + medium)
    # the continuation lines are as full with the longer head as without it
    assert all(ln.startswith(" " * 6 + "word") for ln in medium[1:])
    assert max(len(ln) for ln in medium[1:]) > 80 - len("word59 ")
