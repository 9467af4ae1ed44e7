"""Source bytes -> a libcst tree, safely: the checks before libcst's native parser sees a file.

``precheck`` parses with CPython's ``ast`` first (which refuses what would overflow libcst's
native stack, and whose tree ``positions.from_ast`` reads ranges off); ``parse_module`` is
``libcst.parse_module`` without per-node validation where CPython accepted the source;
``folded_names`` makes identifiers read NFKC-folded (PEP 3131) while a tree is converted;
``syntax_message`` words a parse failure as one line. Each failure is a ``SummaryError``.
"""
from __future__ import annotations

import contextlib
import re
from typing import Any, Optional, Tuple


class SummaryError(Exception):
    """The file could not be parsed; the message is one line for the report."""


def precheck(data: bytes) -> Tuple[Optional[Any], Optional[SyntaxError]]:
    """Refuse input the native parser cannot take safely, before it sees it.

    libcst's native parser overflows its stack (a segfault, not an exception) on ~1,500 nested
    brackets or a ~10,000-term operator chain. CPython's own parser is the judge: at the default
    recursion limit it refuses more than 200 nested brackets, 100 indentation levels and
    expression trees too deep to build, so a file refused here could not be imported by the
    tests either. So is a NUL byte, which no Python version accepts and libcst reads inside a
    string or a comment. Other syntax errors are left to libcst, which knows newer syntax than an
    older interpreter's ``ast``. Costs about a tenth of the libcst parse. Returns ``(the ast
    module, None)`` (the positions are read off it), or ``(None, the SyntaxError)`` where ``ast``
    refuses the source (libcst may still read it), or ``(None, None)``.
    """
    import ast
    import sys

    limit = sys.getrecursionlimit()
    if limit != DEFAULT_RECURSION_LIMIT:   # parse workers raise it for libcst's recursive walks
        sys.setrecursionlimit(DEFAULT_RECURSION_LIMIT)
    try:
        return ast.parse(data), None
    except SyntaxError as exc:
        if exc.msg and exc.msg.startswith("too many"):
            raise SummaryError(f"too deeply nested to analyse (line {exc.lineno}): {exc.msg}; "
                               "CPython cannot compile it either") from None
        if exc.msg and "null bytes" in exc.msg:
            raise SummaryError(f"cannot parse: {exc.msg}; CPython cannot compile it either") from None
        return None, exc
    except (RecursionError, MemoryError):
        raise SummaryError("too deeply nested or too long an expression to analyse; "
                           "CPython cannot compile it either") from None
    except ValueError as exc:   # null bytes, on Pythons older than the SyntaxError for them
        text = str(exc).splitlines()[0] if str(exc) else "ValueError"
        raise SummaryError(f"cannot parse: {text}; CPython cannot compile it either") from None
    except TypeError:
        pass
    finally:
        if limit != DEFAULT_RECURSION_LIMIT:
            sys.setrecursionlimit(limit)
    return None, None


DEFAULT_RECURSION_LIMIT = 1000


def syntax_message(exc, refused: Optional[SyntaxError]) -> str:
    """One line for a file libcst does not parse. Where CPython refused it too, CPython's
    message and line, which name the mistake ("'(' was never closed" where libcst says what it
    expected at the line after); where CPython accepted it, libcst's, saying so: the code is
    valid, libcst cannot read it (a 5,000-literal implicit concatenation)."""
    if refused is not None and refused.lineno:
        col = f", column {refused.offset}" if refused.offset else ""
        return f"syntax error at line {refused.lineno}{col}: {' '.join(str(refused.msg).split())}"
    text = " ".join(str(exc.message).split())
    if refused is None:
        return f"libcst cannot parse this file, which CPython accepts: {text}"
    return f"syntax error: {text}"


def parse_module(cst, data: bytes):
    """``libcst.parse_module(data)`` without each node re-validating itself as it is built.

    Every libcst node checks its own fields in ``__post_init__``. For a tree the native parser
    built from source that CPython's own parser accepted, that is a fifth of the parse
    (measured on a sixth of Django's files: 4.7 -> 3.8 s), and libcst's own comment there says
    as much. The check is left out only while this parse runs, and only where
    ``__post_init__`` does nothing but that check, so a libcst that puts more there keeps its
    own behaviour. Nodes built by other threads in that window skip it too."""
    base = cst.CSTNode
    post = base.__dict__.get("__post_init__")
    if post is None or getattr(post, "__code__", None) is None or post.__code__.co_names != ("_validate",):
        return cst.parse_module(data)
    base.__post_init__ = _no_check
    try:
        return cst.parse_module(data)
    finally:
        base.__post_init__ = post


def _no_check(self) -> None:
    return None


NON_ASCII_WORD = re.compile(r"\w*[^\x00-\x7f]\w*")


def needs_folding(tree, data: bytes) -> bool:
    """Whether some identifier of the source may change under NFKC (PEP 3131): some non-ASCII
    word of the text (strings and comments included, which errs on the safe side) does. Most
    non-ASCII files are NFKC already, which one C-level check tells."""
    import unicodedata

    try:
        text = data.decode(tree.encoding)
    except (UnicodeDecodeError, LookupError):
        return False
    if unicodedata.is_normalized("NFKC", text):
        return False
    return any(w.isidentifier() and unicodedata.normalize("NFKC", w) != w for w in NON_ASCII_WORD.findall(text))


@contextlib.contextmanager
def folded_names(cst):
    """While it lasts, every libcst ``Name`` reads as Python spells the identifier: NFKC-normalized
    (``ｏｓ`` is ``os``). libcst keeps the source spelling. The slot that stores the value stays
    the storage; only reading goes through the fold. Parse workers run one file at a time."""
    import unicodedata

    slot = cst.Name.__dict__["value"]

    def read(node):
        v = slot.__get__(node, cst.Name)
        return v if v.isascii() else unicodedata.normalize("NFKC", v)

    cst.Name.value = property(read, slot.__set__)
    try:
        yield
    finally:
        cst.Name.value = slot
