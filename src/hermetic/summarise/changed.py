"""The names a file may change in place (a summary's ``changed``): what a module-level container
another module reads may have had done to it.

A name counts when the file assigns an item or a slice of it (``NAME[k] = v``, ``mod.NAME[k] =
v``, ``del NAME[k]``, ``NAME[k] += 1``), calls an in-place method on it (``NAME.append(...)``,
``mod.NAME.update(...)``), rebinds it as a declared ``global``, binds another name to it
(``d = NAME``: the alias may change it), or hands it to a call other than a few builtins that
only read (``register(NAME)``, ``monkeypatch.setitem(NAME, ...)``, ``patch.dict(NAME, ...)``).
By bare name, whatever module binds it: a name two modules share counts for both. Pure: read
from the file's own IR when it is summarised.
"""
from __future__ import annotations

from typing import Iterable, Set

from .ir import (ASSIGN_TARGETS, ASSIGN_VALUE, ATTR_ATTR, ATTR_VALUE, CALL_ARGS, CALL_FUNC, CALL_KWARGS,
                 FOR_ITER, GLOBAL_NAMES, KWARG_VALUE, NAME_ID, TAG, WITH_ITEMS, flat, subscript_root)
from .unparse import calls_in

# in-place methods of the builtin containers (list, dict, set, deque)
_IN_PLACE = frozenset({"append", "extend", "insert", "remove", "pop", "clear", "update", "setdefault",
                       "add", "discard", "popitem", "sort", "reverse", "appendleft", "extendleft",
                       "popleft", "rotate", "__setitem__", "__delitem__", "difference_update",
                       "intersection_update", "symmetric_difference_update"})
# builtins that only read the container they are given
_READERS = frozenset({"len", "sorted", "list", "tuple", "set", "frozenset", "dict", "iter", "enumerate",
                      "zip", "any", "all", "min", "max", "sum", "str", "repr", "isinstance", "print",
                      "reversed", "map", "filter", "bool", "hash", "id", "type", "next", "format"})


def container_constants(body) -> Set[str]:
    """The capitalised names a module's top level binds to a dict, list or set display (or an
    empty ``dict()`` / ``list()`` / ``set()``): the constants whose members ``in`` may decide."""
    out: Set[str] = set()
    for st in body:
        if st[TAG] == "assign" and (st[ASSIGN_VALUE][TAG] in ("dict", "seq") or (
                st[ASSIGN_VALUE][TAG] == "call" and st[ASSIGN_VALUE][CALL_FUNC][TAG] == "name"
                and st[ASSIGN_VALUE][CALL_FUNC][NAME_ID] in ("dict", "list", "set"))):
            out.update(t[NAME_ID] for t in st[ASSIGN_TARGETS] if t[TAG] == "name" and is_constant_name(t[NAME_ID]))
    return out


def is_constant_name(name: str) -> bool:
    """A name spelt as a constant (``LOCALES``, ``_DEFAULTS_2``): the only ones a summary keeps."""
    return any(ch.isalpha() for ch in name) and name.upper() == name


def _named(e) -> str:
    """The name an expression ends in (``NAME`` or ``mod.NAME``), else ""."""
    if e[TAG] == "name":
        return e[NAME_ID]
    if e[TAG] == "attr":
        return e[ATTR_ATTR]
    return ""


def _own(st):
    """What of statement ``st`` is its own, not a nested block's (``flat`` yields those too)."""
    k = st[TAG]
    if k in ("if", "while", "match"):
        return st[1]
    if k == "for":
        return st[FOR_ITER]
    if k == "with":
        return [e for e, _t in st[WITH_ITEMS]]
    if k in ("try", "def", "class"):
        return ()
    return st


def changed_names(bodies: Iterable) -> Set[str]:
    """The names the statement lists ``bodies`` may change in place (see the module's docstring)."""
    out: Set[str] = set()
    for body in bodies:
        for st in flat(body):
            k = st[TAG]
            if k == "global":
                out.update(st[GLOBAL_NAMES])
            elif k in ("assign", "augassign", "del"):
                targets = st[ASSIGN_TARGETS] if k == "assign" else [st[1]]
                for t in targets:
                    if t[TAG] == "sub":
                        out.add(_named(subscript_root(t)))
                if k == "assign" and st[ASSIGN_VALUE][TAG] in ("name", "attr"):
                    out.add(_named(st[ASSIGN_VALUE]))   # an alias may change it
            for c in calls_in(_own(st)):
                fn = c[CALL_FUNC]
                if fn[TAG] == "attr" and fn[ATTR_ATTR] in _IN_PLACE:
                    out.add(_named(fn[ATTR_VALUE]))
                if fn[TAG] == "name" and fn[NAME_ID] in _READERS:
                    continue
                for a in list(c[CALL_ARGS]) + [kw[KWARG_VALUE] for kw in c[CALL_KWARGS]]:
                    if a[TAG] == "star":
                        a = a[1]
                    if a[TAG] in ("name", "attr"):
                        out.add(_named(a))
    out.discard("")
    return out
