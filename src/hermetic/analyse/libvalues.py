"""What a library call that moves values returns (contract section 3, value flow): a container
made, copied or parsed (``json.loads`` / ``json.load``: ``contents``), a path joined, split,
taken up a folder or made absolute, a string made of a value. ``value_call`` answers None for
every other call, which ``Calls.call_external`` goes on with.
"""
from __future__ import annotations

from typing import Dict, List, Optional

from .contents import WHOLE, parsed as parsed_text
from .controls import mock_items
from .literals import _literal_str
from .decide import values
from .origins import (FD, FD_CALLS, _CONTAINER_CTORS, _DICT_CTORS, _HEAD_FUNCS, _head, _is_absolute, joined_path, _up, _whole_join, copied,
                      from_cwd, split_path, typed_head)
from .rooted import rooted_tails
from .state import SPREAD, Frame
from .tmptree import joined as tmp_joined, same as tmp_same
from .values import EMPTY, UNKNOWN_V, V, is_counted, lit, of


def value_call(ip, d: str, args: List[V], kwargs: Dict[str, V], frame: Frame) -> Optional[V]:
    """What the library function ``d`` (canonical dotted name) returns for ``args`` /
    ``kwargs`` when it only moves values; None for other functions. ``ip``: the interpreter
    (its catalogue, the run's working directory and the checkout it reads, ``shipped``)."""
    if d in _ITERATING and len(args) == 1 and (empty := mock_items(args[0], ip.ctx)) is not None:
        args = [empty]   # set(m.keys()) of a MagicMock the test set nothing on: no item
    keys = ip.p.catalogue.mappings.get(d)
    if keys is not None and not args and not kwargs:   # a fresh Morsel(): its keys, each ""
        return of(("dict", tuple((k, lit("", frame.path, frame.line, frame.in_test)) for k in keys)))
    if d in _CONTAINER_CTORS and not args:
        if d in ("collections.Counter", "collections.defaultdict"):   # a missing key is no KeyError
            return of(("dict", ((None, UNKNOWN_V),)))
        if d in ("builtins.dict", "collections.OrderedDict"):   # dict(help_option_names=[...])
            return of(("dict", tuple((k, v) if k != SPREAD else (None, UNKNOWN_V) for k, v in kwargs.items())))
        return of(("dict", ())) if d in _DICT_CTORS else of(("seq", "list", ()))
    if d in FD_CALLS:
        return of(FD)   # os.dup(fd): a descriptor, an int
    if d in ("os.path.isabs", "posixpath.isabs") and len(args) == 1:
        absolute = is_absolute(args[0])
        return None if absolute is None else lit(absolute, frame.path, frame.line, frame.in_test)
    if (parsed := parsed_text(d, args, kwargs, frame, ip.p.shipped)) is not None:   # json.loads / load (contents)
        return parsed
    if d in ("builtins.dict", "collections.OrderedDict") and len(args) == 1 and not kwargs and \
            (made := _from_pairs(args[0])) is not None:
        return made   # OrderedDict([]), dict([("a", 1)]): a dict known whole
    if d in ("builtins.set", "builtins.frozenset") and len(args) == 1 and not kwargs and \
            (c := copied(d, args)) is not None:
        return c   # set(d.keys()) of a dict known whole: exactly its keys
    if d in _HEAD_FUNCS:
        if d == "builtins.dict" and args and any(a == ("ext", "os.environ") for a in args[0].refs()):
            return of(("environ-copy",))
        if not args:
            return EMPTY
        if (c := copied(d, args) or split_path(d, args) or tmp_same(d, args)) is not None:
            return c
        if d in ("os.path.join", "posixpath.join"):
            whole = tmp_joined(args, False) or _whole_join(args, False)
            return (whole or joined_path(args)).with_path(False)
        if d in ("builtins.str", "os.fspath") and len(args) == 1:
            whole = _whole_join(args, args[0].is_path)
            if whole is not None:
                return whole.with_path(False)
        if d in ("os.path.dirname", "posixpath.dirname"):
            return _up(_head(args[0])).with_path(False)
        if d in ("os.path.abspath", "os.path.realpath") and ip.ctx.cwd is None:
            return from_cwd(args[0], d.rsplit(".", 1)[-1]).with_path(False)
        return typed_head(d, args[0])
    return None



# builtins that iterate their one argument into a new container
_ITERATING = frozenset({"builtins.list", "builtins.tuple", "builtins.set", "builtins.frozenset", "builtins.sorted"})


def is_absolute(v: V) -> Optional[bool]:
    """``os.path.isabs`` of ``v``: True for a known absolute path (``origins._is_absolute``, or a
    text starting at the root: ``tmp_path``), False when every text it can be is relative, else
    None."""
    if _is_absolute(v) or rooted_tails(v) is not None:
        return True
    texts = values(v)
    return False if texts and all(isinstance(t, str) and not t.startswith("/") for t in texts) else None


def _from_pairs(v: V) -> Optional[V]:
    """``dict(pairs)`` of a list or tuple known by its items, each a pair whose key is a string
    literal: that dict, known whole (``contents.WHOLE``); else None."""
    if len(v.atoms) != 1:
        return None
    (a,) = v.atoms
    if not is_counted(a):
        return None
    entries = []
    for item in a[2]:
        pair = [p for p in item.atoms if is_counted(p) and len(p[2]) == 2]
        if len(pair) != 1 or len(item.atoms) != 1 or (key := _literal_str(pair[0][2][0])) is None:
            return None
        entries.append((key, pair[0][2][1]))
    return of(("dict", tuple(entries), WHOLE))
