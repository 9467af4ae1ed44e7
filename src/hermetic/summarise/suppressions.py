"""Inline suppressions: ``# hermetic: ignore``, ``# hermetic: ignore[HT102, HT2]`` and
``# noqa: HT102`` comments.

``SUPPRESS`` matches one in a comment's text (or anywhere in a source text, to tell whether
comments need finding at all); ``inline_suppressions`` gives the summary's ``suppressions`` field,
``{line (a string): [codes, or "*" for all]}``.

A ``# noqa`` counts only for the HT codes it names (``# noqa: E501, HT103`` suppresses HT103);
a bare ``# noqa`` or one naming only other tools' codes suppresses nothing here: it was written
for another linter, and hiding every hermetic finding behind it would be silent
(docs/cli.md, "Selecting rules and suppressing findings").
"""
from __future__ import annotations

import re
from typing import Dict, List

SUPPRESS = re.compile(r"#\s*hermetic:\s*ignore(?:\[([A-Za-z0-9_,\s]+)\])?"
                      r"|#\s*noqa\s*:\s*([A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*)", re.I)


def suppressed_codes(text: str) -> List[str]:
    """The codes a comment's text suppresses: ``["*"]`` for a bare ``# hermetic: ignore``, the
    codes (upper case) it names, the HT codes a ``# noqa:`` names; ``[]`` for none."""
    out: List[str] = []
    for m in SUPPRESS.finditer(text):
        if m.group(2) is not None:   # noqa: only hermetic's own codes, other tools' stay theirs
            out.extend(c for c in re.split(r"[\s,]+", m.group(2).upper()) if c.startswith("HT"))
        elif not m.group(1):
            out.append("*")
        else:
            out.extend(c.strip().upper() for c in m.group(1).split(",") if c.strip())
    return out


def inline_suppressions(comments: List[tuple]) -> Dict[str, List[str]]:
    """Inline suppressions by line, from ``(line, comment text)`` pairs."""
    out: Dict[str, List[str]] = {}
    for line, text in comments:
        codes = suppressed_codes(text)
        if codes:
            out.setdefault(str(line), []).extend(codes)
    return out
