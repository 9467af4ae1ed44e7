"""Inline suppressions: ``# hermetic: ignore`` and ``# hermetic: ignore[HT102, HT2]`` comments.

``SUPPRESS`` matches one in a comment's text (or anywhere in a source text, to tell whether
comments need finding at all); ``inline_suppressions`` gives the summary's ``suppressions`` field,
``{line (a string): [codes, or "*" for all]}``.
"""
from __future__ import annotations

import re
from typing import Dict, List

SUPPRESS = re.compile(r"#\s*hermetic:\s*ignore(?:\[([A-Za-z0-9_,\s]+)\])?", re.I)


def inline_suppressions(comments: List[tuple]) -> Dict[str, List[str]]:
    """Inline suppressions by line, from ``(line, comment text)`` pairs."""
    out: Dict[str, List[str]] = {}
    for line, text in comments:
        m = SUPPRESS.search(text)
        if not m:
            continue
        codes = ["*"] if not m.group(1) else [c.strip().upper() for c in m.group(1).split(",") if c.strip()]
        out.setdefault(str(line), []).extend(codes)
    return out
