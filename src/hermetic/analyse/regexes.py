"""What a regular expression decides: ``re.match`` / ``search`` / ``fullmatch`` of a known
pattern on a known string, and of a pattern that can only start with some characters on a
string whose start is known (a path that starts at the root never matches ``https?://``)."""
from __future__ import annotations

import functools
from typing import Optional

from .decide import _agree, values
from .rooted import rooted_tails
from .values import Origin, V


_REGEX_OPS = ("match", "search", "fullmatch")


def regex_flag(name: str) -> Optional[int]:
    """The value of ``re.NAME`` for a flag name (``re.VERBOSE``), or None."""
    import re
    flag = getattr(re, name, None) if name.isupper() else None
    return int(flag) if isinstance(flag, re.RegexFlag) else None


def regex_result(op: str, pattern: V, text: V, flags: Optional[V] = None) -> Optional[bool]:
    """Whether ``re.<op>(pattern, text, flags)`` finds a match, when the pattern, the flags and
    every alternative of the text are known strings (or the text's leading part rules a match
    out: ``_ruled_out_by_start``); None otherwise (also for a pattern that does not compile)."""
    import re
    pv, tv = values(pattern), values(text)
    fv = values(flags) if flags is not None else [0]
    if not tv:
        return _ruled_out_by_start(op, pv, fv, text)   # a string known by its start
    if op not in _REGEX_OPS or not pv or not fv or len(pv) != 1 or len(fv) != 1:
        return None
    if not isinstance(pv[0], str) or not isinstance(fv[0], int) or not all(isinstance(t, str) for t in tv):
        return None
    try:
        rx = re.compile(pv[0], fv[0])
    except (re.error, OverflowError, ValueError):
        return None
    return _agree([getattr(rx, op)(t) is not None for t in tv])


def _ruled_out_by_start(op: str, pv: Optional[list], fv: Optional[list], text: V) -> Optional[bool]:
    """``re.match`` of pattern ``pv`` (with flags ``fv``, as ``values`` gives them) on a string
    known by its leading part only (``"/vsizip/" + name``, the text of a path in tmp_path: the
    separator): False when no string starting so can
    match, because its first character is none the pattern can start with; None otherwise."""
    heads = [a.value if isinstance(a, Origin) and a.kind == "literal" and a.partial and isinstance(a.value, str)
             and a.value else "/" if rooted_tails(V(frozenset([a]), text.is_path)) else None for a in text.atoms]
    heads = [h for h in heads if h]   # a literal's start, or the separator a rooted text starts with
    if op not in ("match", "fullmatch") or not pv or len(pv) != 1 or not isinstance(pv[0], str) or \
            not fv or len(fv) != 1 or not isinstance(fv[0], int) or len(heads) != len(text.atoms):
        return None
    first = _first_chars(pv[0], fv[0])
    if first is None:
        return None
    return False if all(not first(h[0]) for h in heads) else None


@functools.lru_cache(maxsize=512)
def _first_chars(pattern: str, flags: int):
    """A test of the characters a match of ``pattern`` (anchored at the start) can begin with, or
    None where the pattern may match the empty string or holds what this does not read."""
    import re
    sre_parse, c, _compile = _sre()
    if flags & re.IGNORECASE:
        return None
    try:
        parsed = sre_parse.parse(pattern, flags)
    except Exception:   # noqa: BLE001 - a pattern re refuses decides nothing
        return None
    tests = _first_of(list(parsed), c)
    if tests is None:
        return None
    return lambda ch: any(t(ch) for t in tests)


def _first_of(items, c) -> Optional[list]:
    """The tests a first character must pass for ``items`` (a parsed sequence) to match, or None
    when the sequence may be empty or uses an operation not read here."""
    for i, (op, av) in enumerate(items):
        if op is c.AT:
            continue   # ^ and \A consume nothing
        if op is c.LITERAL:
            return [lambda ch, v=av: ord(ch) == v]
        if op is c.IN:
            return [lambda ch, rx=_set_rx(items[i:i + 1]): rx is not None and rx.match(ch) is not None]
        if op is c.SUBPATTERN:
            return _first_of(list(av[-1]), c)
        if op is c.BRANCH:
            out = []
            for alt in av[1]:
                f = _first_of(list(alt), c)
                if f is None:
                    return None
                out.extend(f)
            return out
        if op in (c.MAX_REPEAT, c.MIN_REPEAT):
            lo, _hi, sub = av
            f = _first_of(list(sub), c)
            if f is None:
                return None
            if lo > 0:
                return f
            rest = _first_of(items[i + 1:], c)
            return None if rest is None else f + rest
        return None
    return None


def _set_rx(items):
    """A compiled one-character pattern for a parsed character set (``[...]``, a class such as
    whitespace); None when it cannot be built."""
    sre_parse, _c, sre_compile = _sre()
    try:
        state = getattr(sre_parse, "State", None) or sre_parse.Pattern   # named Pattern before 3.11
        return sre_compile.compile(sre_parse.SubPattern(state(), list(items)), 0)
    except Exception:   # noqa: BLE001 - a set re refuses decides nothing
        return None


def _sre():
    """re's parser, its constants and its compiler (``re._parser`` ... from Python 3.11 on)."""
    try:
        from re import _compiler, _constants, _parser
        return _parser, _constants, _compiler
    except ImportError:   # pragma: no cover - Pythons before 3.11
        import sre_compile, sre_constants, sre_parse  # type: ignore
        return sre_parse, sre_constants, sre_compile
