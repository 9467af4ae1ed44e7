"""Types the values decide: ``isinstance``, ``callable`` and the truth of a project
instance (``Interp`` methods; ``decide`` holds the pure rules they use)."""
from __future__ import annotations

from typing import List, Optional

from .decide import isinstance_of, library_class, type_name
from .literals import is_none
from .values import Origin, V


class Types:
    """``Interp`` methods answering what a value's types decide."""

    def decide_isinstance(self, value: V, classes: V) -> Optional[bool]:
        """``isinstance(value, classes)`` when the types of ``value``'s atoms decide it."""
        wanted = []
        for a in classes.ordered():
            items = [x for item in a[2] for x in item.ordered()] if isinstance(a, tuple) and a[0] == "seq" else [a]
            for c in items:
                if isinstance(c, tuple) and c[0] == "ext" and type_name(c[1]):
                    wanted.append(("builtin", type_name(c[1])))
                elif isinstance(c, tuple) and c[0] == "cls":
                    wanted.append(("project", c[1]))
                elif isinstance(c, tuple) and c[0] == "ext" and library_class(c[1]):
                    wanted.append(("library", c[1]))
                else:
                    return None if is_none(value) is not True else False
        return isinstance_of(value, wanted, self._inst_isinstance)

    def decide_callable(self, value: V) -> Optional[bool]:
        """``callable(value)`` when every atom's kind decides it: functions, classes, lambdas,
        partials and test doubles are; literals, containers and instances of a project class
        with no ``__call__`` (and no library base) are not."""
        results: List[Optional[bool]] = []
        for a in value.ordered():
            if isinstance(a, Origin):
                results.append(False if a.kind == "literal" and not value.is_path else None)
            elif a[0] in ("func", "cls", "lambda", "partial", "double", "lazyfn"):
                results.append(True)
            elif a[0] in ("seq", "dict"):
                results.append(False)
            elif a[0] == "inst":
                cls = (self.heap.get(a[1]) or {}).get("cls")
                results.append(None if not cls else True if self.callable_instance(a) else self._no_unless_library(cls))
            else:
                results.append(None)
            if results[-1] is None:
                return None
        return results[0] if results and all(r == results[0] for r in results) else None

    def _inst_isinstance(self, inst: tuple, wanted) -> Optional[bool]:
        cls = (self.heap.get(inst[1]) or {}).get("cls")
        if not cls:
            return None
        kind, name = wanted
        if kind == "project":
            return name in self.mro(cls)
        if kind == "library":
            return self._no_unless_library(cls)
        if name == "object":
            return True
        return self._no_unless_library(cls)

    def inst_truth(self, a: tuple) -> Optional[bool]:
        """An instance is truthy unless its class (or a base) defines ``__bool__`` or ``__len__``,
        or derives from a library class (``class ErrorDict(dict)`` is falsy while empty)."""
        cls = (self.heap.get(a[1]) or {}).get("cls")
        if not cls or self.find_method(cls, "__bool__") or self.find_method(cls, "__len__"):
            return None
        return None if self._no_unless_library(cls) is None else True

    def _no_unless_library(self, cls: str) -> Optional[bool]:
        """False for a class whose bases are all the project's; None (not known) when a library
        class is among them (it may be or do anything)."""
        return None if any(self.external_bases(c) for c in self.mro(cls)) else False
