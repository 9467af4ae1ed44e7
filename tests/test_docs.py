"""The documentation pages agree with the code that cites them.

Comments, docstrings and message strings in ``src/hermetic`` cite rows of the decision table
("(S2)", "contract row U", "rows T1 / X", "S1-S6"); every label cited must be a row that
``docs/semantics.md`` defines, so a reader can look it up without the shared contract.
"""
from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path
from typing import Iterator, List, Set, Tuple

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "hermetic"
SEMANTICS = ROOT / "docs" / "semantics.md"

# A row label: S1-S9, V1-V9, T1-T9 standing alone, or a bare letter after "row(s)" / "contract".
_NUMBERED = re.compile(r"\b([SVT][1-9])\b")
_RANGE = re.compile(r"\b([SVT])([1-9])\s*(?:-|\.\.|–|to)\s*\1([1-9])\b")
_AFTER_WORD = re.compile(r"\b(?:rows?|contract)\s+((?:[A-Z][1-9]?\b\s*(?:/|,|and|or)?\s*)+)")
_LABEL = re.compile(r"\b([A-Z][1-9]?)\b")
# The table rows of docs/semantics.md: "| S1 | ... |".
_DEFINED = re.compile(r"^\|\s*([A-Z][1-9]?)\s*\|", re.M)


def defined_rows() -> Set[str]:
    return set(_DEFINED.findall(SEMANTICS.read_text(encoding="utf-8")))


def cited_rows(text: str) -> Set[str]:
    """The row labels one comment or string cites (ranges expanded: "S1-S6" is S1..S6)."""
    labels = set(_NUMBERED.findall(text))
    for letter, lo, hi in _RANGE.findall(text):
        labels |= {f"{letter}{i}" for i in range(int(lo), int(hi) + 1)}
    for group in _AFTER_WORD.findall(text):
        labels |= set(_LABEL.findall(group))
    return labels


def _python_texts(path: Path) -> Iterator[Tuple[int, str]]:
    """(line, text) of every line of every comment and string literal (docstrings included)."""
    source = path.read_text(encoding="utf-8")
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type in (tokenize.COMMENT, tokenize.STRING):
            for offset, part in enumerate(tok.string.splitlines()):
                yield tok.start[0] + offset, part


def _toml_comments(path: Path) -> Iterator[Tuple[int, str]]:
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if "#" in line:
            yield n, line[line.index("#"):]


def citations() -> List[Tuple[str, int, str]]:
    """(path, line, label) of every row citation in the package's sources and catalogue."""
    out = []
    for path in sorted(SRC.rglob("*")):
        if path.suffix == ".py":
            texts = _python_texts(path)
        elif path.suffix == ".toml":
            texts = _toml_comments(path)
        else:
            continue
        for line, text in texts:
            for label in sorted(cited_rows(text)):
                out.append((str(path.relative_to(ROOT)), line, label))
    return out


def test_citation_forms_are_recognised():
    assert cited_rows("# contract S1: the HT205 at the patch covers it") == {"S1"}
    assert cited_rows("installs (section 2 rows S1-S6) in a Ctx") == {f"S{i}" for i in range(1, 7)}
    assert cited_rows("written where the call is (rows T1 / X).") == {"T1", "X"}
    assert cited_rows("(not reported, contract row U):") == {"U"}
    assert cited_rows("# X.cache_clear(): the lru_cache of X is emptied") == set()
    assert cited_rows("# a Path constant, section 3") == set()


def test_semantics_defines_the_decision_table():
    assert {"S1", "S2", "S3", "S4", "S5", "S6", "V1", "V2", "V3", "T1", "X", "U"} <= defined_rows()


def test_every_cited_row_is_defined():
    found = citations()
    assert len(found) > 20, "the citation scan found almost nothing: has the comment style changed?"
    defined = defined_rows()
    missing = [f"{path}:{line}: {label}" for path, line, label in found if label not in defined]
    assert not missing, "rows cited but not defined in docs/semantics.md:\n" + "\n".join(missing)
