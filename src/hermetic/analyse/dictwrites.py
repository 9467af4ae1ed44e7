"""Writes into dicts the analysis knows by their entries (``d[k] = v``, ``d["a"]["b"] = v``):
pure functions from the dict atoms before to the atoms after."""
from __future__ import annotations

from typing import List, Optional

from .literals import _literal_str, _literal_strs
from .values import V


def _with_entry(table: V, key: V, val: V) -> V:
    """Each dict of ``table`` with ``key`` set to ``val``, in its place where the dict has it; a
    key that is not one string literal is kept as an entry (``None``) any key may find. A dict
    known whole (``contents.WHOLE``) stays so while its keys are string literals; a key that is
    one of several known strings (``narrow``: ``if key in d``) sets each of them maybe."""
    ks = _literal_str(key)
    several = _literal_strs(key) if ks is None else None
    return V(frozenset(_entry_set(d, ks, several, val) for d in table.atoms))


def set_in(v: V, path: List[str], key: V, val: V) -> Optional[V]:
    """``v[path[0]]...[path[-1]][key] = val`` on dicts known down ``path`` (string keys each
    alternative holds): ``v`` with the innermost dict's entry set; None where a dict lacks a key
    of the path, or a value on it is not a dict."""
    if not v.atoms or any(not (isinstance(a, tuple) and a[0] == "dict") for a in v.atoms):
        return None
    if not path:
        return _with_entry(v, key, val)
    out = []
    for d in v.atoms:
        hit = [x for k, x in d[1] if k == path[0]]
        inner = set_in(hit[0], path[1:], key, val) if len(hit) == 1 else None
        if inner is None:
            return None
        out.append(("dict", tuple((k, inner if k == path[0] else x) for k, x in d[1])) + d[2:])
    return V(frozenset(out), v.is_path)


def _entry_set(d: tuple, ks, several, val: V) -> tuple:
    """Dict atom ``d`` with the string key ``ks`` (or each of ``several``, maybe) set to ``val``;
    with neither, an entry any key may find, and ``d`` no longer known whole."""
    keys = {k for k, _ in d[1]}
    if ks is not None and ks in keys:
        return ("dict", tuple((k, val if k == ks else v) for k, v in d[1])) + d[2:]
    if ks is not None:
        return ("dict", tuple(d[1]) + ((ks, val),)) + d[2:]
    if several and set(several) <= keys:
        return ("dict", tuple((k, v | val if k in several else v) for k, v in d[1])) + d[2:]
    if None in keys:   # one entry for every key not known (a loop writing many: rq's 700 entries)
        return ("dict", tuple((k, v | val if k is None else v) for k, v in d[1]))
    return ("dict", tuple(d[1]) + ((None, val),))
