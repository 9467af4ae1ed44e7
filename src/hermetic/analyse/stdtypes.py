"""The standard library's value classes, as the running Python has them: ``datetime.datetime``,
``datetime.timedelta``, ``decimal.Decimal``, ``uuid.UUID``, ``ipaddress.IPv4Address``, and the
built-in classes (``object()`` is no ``int``) ...

A call of one makes an instance of it (``datetime.datetime(3000, 1, 1)``, though its name is
not capitalised), and ``isinstance`` of such an instance is decided by the classes themselves
(``issubclass(datetime.datetime, datetime.timedelta)`` is False, ``datetime.datetime`` is a
``datetime.date``). Only the modules of ``_MODULES`` are imported (pure value types, no I/O at
import); any other name is not known here (None).
"""
from __future__ import annotations

import builtins
import functools
import importlib
import sys
from typing import Optional

# modules whose classes are plain values (importing them does nothing else)
# (not numbers, abc or collections: their ABCs hold built-in values too, which ``decide`` types itself)
_MODULES = frozenset({"builtins", "datetime", "decimal", "fractions", "uuid", "ipaddress", "zoneinfo"})


@functools.lru_cache(maxsize=None)
def stdlib_class(dotted: str) -> Optional[type]:
    """The class ``dotted`` names (``datetime.timedelta``) in one of ``_MODULES``, or None."""
    module, _, name = dotted.rpartition(".")
    if module not in _MODULES or not name or name.startswith("_"):
        return None
    try:
        cls = getattr(importlib.import_module(module), name, None)
    except ImportError:   # pragma: no cover - zoneinfo before Python 3.9
        return None
    return cls if isinstance(cls, type) else None


def std_isinstance(made: str, kind: str, wanted: str) -> Optional[bool]:
    """``isinstance(x, wanted)`` for ``x`` an instance of the standard class ``made``:
    ``kind`` is ``builtin`` (a built-in type's name), ``project`` (a project class: never) or
    ``library`` (a dotted name); None where it is not known."""
    cls = stdlib_class(made)
    if cls is None:
        return None
    if kind == "project":
        return False
    target = getattr(builtins, wanted, None) if kind == "builtin" else stdlib_class(wanted)
    return issubclass(cls, target) if isinstance(target, type) else None


@functools.lru_cache(maxsize=None)
def std_object(dotted: str) -> bool:
    """``dotted`` names an object that is no function or class of a standard library module the
    running Python has already imported (``sys.stdout``, ``os.environ``); nothing is imported here."""
    module, _, name = dotted.rpartition(".")
    mod = sys.modules.get(module)
    if mod is None or module.split(".")[0] not in getattr(sys, "stdlib_module_names", ()):
        return False
    obj = getattr(mod, name, None)
    return obj is not None and not callable(obj)
