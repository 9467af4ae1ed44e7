"""What a test writes into its own tmp_path is what the code reads back there.

``(tmp_path / "report.json").write_text("{}")`` on a way every branch before it took leaves the
text at that part (``Ctx.tmp_text``: sorted ``(part, text)`` pairs); ``read_text()`` of the
path reads it back, as a literal of the test's (test data, contract row T1); any other change
at or above the part forgets it. ``json.loads`` of a whole literal is its value: a dict known
whole (``("dict", entries, WHOLE)``: ``get`` of a missing key is the default), a list known by
its items, the literals.
"""
from __future__ import annotations

import configparser
import json
from typing import List, Optional

try:
    import tomllib
except ImportError:   # pragma: no cover - Python 3.10
    import tomli as tomllib

from .literals import _literal_str
from .shipped import NOT_JSON, is_data
from .tmptree import answer as tmp_answer, under
from .values import RAISED_V, UNKNOWN_V, WHOLE, Origin, V, lit, of, seq_atom

_MAX_TEXT = 4096      # longer texts are not kept
_MAX_ITEMS = 64       # nor parsed data with more entries than this, at any level


def is_whole(a) -> bool:
    """Atom ``a`` is a dict known whole: every key a string, no other key possible."""
    return isinstance(a, tuple) and a[0] == "dict" and a[2:] == (WHOLE,)


def forget(texts: tuple, parts: Optional[List[str]]) -> tuple:
    """``texts`` without what a change at ``parts`` (None: anywhere) may have replaced."""
    if not texts:
        return texts
    if parts is None:
        return ()
    return tuple((p, t) for p, t in texts if not any(under(p, q) or under(q, p) for q in parts))


def remember(texts: tuple, part: str, text: str) -> tuple:
    kept = forget(texts, [part])
    return tuple(sorted(kept + ((part, text),))) if len(text) <= _MAX_TEXT else kept


def kept(ctx, parts: Optional[List[str]]) -> Optional[str]:
    """The text the test wrote at the one part ``parts`` names, while the run's tree
    (``Ctx.tmp_tree``) says a file is there; else None."""
    if not ctx.tmp_text or not parts or len(parts) != 1 or tmp_answer(ctx.tmp_tree, "is_file", parts) is not True:
        return None
    return next((t for p, t in ctx.tmp_text if p == parts[0]), None)


def ini_value(text: str, frame) -> Optional[V]:
    """An ini file's text as ``iniconfig.IniConfig`` reads it: a dict known whole of its sections,
    each a dict known whole of its keys' values (literals of the test's); None when it does not parse."""
    parser = configparser.RawConfigParser(strict=False, interpolation=None, default_section="\0",
                                          comment_prefixes=("#", ";"), inline_comment_prefixes=None)
    parser.optionxform = str   # iniconfig keeps the keys as written
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    o = Origin("literal", path=frame.path, line=frame.line, in_test=True)
    return _value({name: dict(parser.items(name)) for name in parser.sections()}, o, [0])


def parsed(call: str, args: List[V], kwargs, frame, shipped=None) -> Optional[V]:
    """``json.loads(text)`` of a whole literal, ``json.load(fh)`` of a file the checkout ships
    (``shipped``), with no hook but an ``OrderedDict`` / ``dict`` one: its value; None otherwise."""
    if call in ("tomllib.loads", "tomli.loads") and len(args) == 1 and not kwargs and len(args[0].atoms) == 1:
        text = _literal_str(args[0])
        try:
            data = tomllib.loads(text) if text is not None else None
        except ValueError:   # tomllib.TOMLDecodeError
            data = None
        return None if data is None else _value(data, next(iter(args[0].atoms)), [0])
    if call not in ("json.loads", "json.load") or len(args) != 1 or len(args[0].atoms) != 1 or \
            any(k != "object_pairs_hook" or not _plain_hook(v) for k, v in kwargs.items()):
        return None
    (o,) = args[0].atoms
    if call == "json.load":
        if shipped is None or not (isinstance(o, tuple) and o[0] == "handle" and o[2:3] == ("shipped",)):
            return None
        data = shipped.data(o[3])
        if data is NOT_JSON:
            return RAISED_V   # json.load of a shipped file that is not JSON: a ValueError
        if not is_data(data):
            return None
        return _value(data, Origin("literal", path=frame.path, line=frame.line, in_test=True), [0])
    if getattr(o, "kind", None) != "literal" or o.partial or not isinstance(o.value, str) or o.expr[:1] not in ("'", '"'):
        return None
    try:
        data = json.loads(o.value)
    except ValueError:
        return None
    return _value(data, o, [0])


def _plain_hook(v: V) -> bool:
    return bool(v.atoms) and all(a in (("ext", "collections.OrderedDict"), ("ext", "builtins.dict")) for a in v.atoms)


def _value(x, o, count: List[int]) -> V:
    count[0] += 1
    if count[0] > _MAX_ITEMS:
        return UNKNOWN_V
    if isinstance(x, dict):
        return of(("dict", tuple((str(k), _value(v, o, count)) for k, v in x.items()), WHOLE))
    if isinstance(x, list):
        return of(seq_atom("list", [_value(v, o, count) for v in x], exact=True))
    return lit(x, o.path, o.line, o.in_test)
