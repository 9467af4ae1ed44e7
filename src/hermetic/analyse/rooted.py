"""Texts known to begin at the root of the file system, though not known whole: the text of a
path in the test's own tmp_path (``str(tmp_path / "t")``), and a path made absolute from the
working directory (``os.getcwd()``, ``os.path.abspath("tests/t")``, ``Path(d).resolve()`` and
what is joined after it). Such a text starts with the separator, so it is no key of a dict
whose keys do not (``template in abbreviations``), a pattern that cannot begin with ``/`` does
not match it (``REPO_REGEX.match(template)``), and what ``partition`` cuts off its front still
starts so. Only on POSIX: a Windows path starts with a drive letter.
"""
from __future__ import annotations

import os
import posixpath
from typing import List, Optional

from .origins import _MADE_ABSOLUTE, START_CWD, absolute_literal
from .tmptree import FRESH_EXPRS, part_of
from .values import Origin, V


def _from_cwd(a) -> bool:
    """Atom ``a`` is the working directory's absolute path, or a path made absolute from it."""
    return isinstance(a, Origin) and a.kind == "cwd" and (a.value == START_CWD or a.expr.startswith(_MADE_ABSOLUTE))


def _in_tmp(a) -> bool:
    """Atom ``a`` is some path under tmp_path (its part not known: ``tmptree.collapse``)."""
    return isinstance(a, Origin) and a.kind == "test-value" and (a.expr == "tmp_path" or a.expr in FRESH_EXPRS)


def rooted_tails(v: Optional[V]) -> Optional[List[Optional[str]]]:
    """For a string every alternative of which is a rooted text: per alternative, the part under
    tmp_path it names (tmp_path's texts) or None (the rest unknown). None when ``v`` is a path
    object, when an alternative is not known to be such a text, or off POSIX."""
    if v is None or v.is_path or not v.atoms or os.sep != "/":
        return None
    out: List[Optional[str]] = []
    for a in v.atoms:
        part = part_of(a)
        if part is None and not (_from_cwd(a) or _in_tmp(a)):
            return None
        out.append(part)
    return out


def test_named(v: V) -> bool:
    """Every alternative of the rooted text ``v`` is one the test names: its tmp_path, or a path
    it wrote as a relative literal made absolute (``Path("tests/t").resolve()``). No data of the
    machine's (a user's configuration) holds such a text as a key."""
    return all(_in_tmp(a) or (isinstance(a, Origin) and a.inner and all(
        isinstance(i, Origin) and i.kind == "literal" and i.in_test for i in a.inner)) for a in v.atoms)


def may_be_key(k, tails: List[Optional[str]]) -> bool:
    """Whether the key ``k`` may be one of the rooted texts with ``tails`` (``rooted_tails``)."""
    if not isinstance(k, str) or not k.startswith("/"):
        return False
    return None in tails or k.endswith(tuple(t for t in tails if t is not None))


def partition_front(v: V, sep: Optional[str]) -> bool:
    """``v.partition(sep)[0]`` is again a rooted text of unknown rest: ``v`` is one whose rest
    is unknown and ``sep`` a literal without the separator."""
    tails = rooted_tails(v)
    return bool(sep) and "/" not in sep and tails is not None and all(t is None for t in tails)


def known_ends(v: Optional[V]) -> Optional[List[str]]:
    """For a string each alternative of which is a relative literal made absolute
    (``origins.made_absolute``: ``str(Path("tests/t").resolve())``): the end its text is known to
    have (``"/tests/t"``, normalised as ``resolve`` and ``abspath`` give it). None otherwise, or
    off POSIX."""
    if v is None or v.is_path or not v.atoms or os.sep != "/":
        return None
    out = []
    for a in v.atoms:
        made = absolute_literal(a)
        text = posixpath.normpath(made.inner[0].value) if made is not None else "."
        if text == ".":
            return None   # not such a text, or the working directory itself: no part of it known
        out.append("/" + text)
    return out


def ends_with(ends: List[str], suffix: str) -> Optional[bool]:
    """``text.endswith(suffix)`` for texts with the known ``ends`` (``known_ends``): decided
    where the suffix is no longer than what is known, or does not end as it does."""
    results = set()
    for end in ends:
        if len(suffix) <= len(end):
            results.add(end.endswith(suffix))
        elif not suffix.endswith(end):
            results.add(False)
        else:
            return None
    return results.pop() if len(results) == 1 else None
