"""The import-time reads a value is made of: which environment variables and clock reads, made
while a module was imported, a test uses when it uses the value (HT203 / HT204 ``tests``,
contract section 8: the tests that reach a consumer of the binding).

A read is ``(path, line, variable)`` for the environment, ``(path, line)`` for the clock, and the
same followed by ``(path, line)`` of the module-level constant the value was bound to (its
innermost), so one read in a helper bound by several statements lists each binding's users.
``(path, line)`` alone is a clock function captured at import (a ``partial`` atom's binding).
"""
from __future__ import annotations

from typing import Dict

from .values import Origin, V


_import_reads: Dict[object, tuple] = {}   # value (or (value, False)) -> its import-time reads


def import_reads(v: V, functions: bool = True) -> tuple:
    """The import-time reads value ``v`` is made of (the module docstring's tuples), cached per
    value. With ``functions`` False, a clock function captured at import is not used by being
    bound (a default argument): only its calls use it (``Calls``, a ``partial`` atom called)."""
    key = v if functions else (v, False)
    reads = _import_reads.get(key)
    if reads is not None:
        return reads
    found = []
    todo = [(o, ()) for o in v.origins()]   # (origin, the binding of the constant it is inside)
    for a in v.refs() if functions else ():
        if a[0] == "partial" and len(a) > 4 and isinstance(a[4], tuple):
            found.append(a[4])
    seen = 0
    while todo and seen < 50:
        o, bound = todo.pop()
        seen += 1
        if o.kind == "environment" and o.value == "import" and o.path:
            found.append((o.path, o.line, o.expr))   # the variable: a helper reads many
            if bound:
                found.append((o.path, o.line, o.expr) + bound)
        elif o.kind == "clock" and o.value == "import" and o.path:
            found.append((o.path, o.line))
            if bound:
                found.append((o.path, o.line) + bound)
        elif o.inner:
            bound = (o.path, o.line) if o.kind == "module-constant" and o.path else bound
            todo.extend((i, bound) for i in o.inner)
    reads = tuple(found)
    if len(_import_reads) > 50_000:
        _import_reads.clear()
    _import_reads[key] = reads
    return reads


def from_import_clock(o: Origin, depth: int = 0) -> bool:
    """Origin ``o`` is a clock read at import, or a constant bound to a value made from one."""
    if o.kind == "clock":
        return o.value == "import"
    return o.kind == "module-constant" and depth < 4 and any(
        isinstance(i, Origin) and from_import_clock(i, depth + 1) for i in o.inner)
