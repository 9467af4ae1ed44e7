"""Markers and ``parametrize``: the marks a ``pytestmark`` value holds, and the values each
parameter of a parametrized test takes.
"""
from __future__ import annotations

from typing import Dict, List

from . import interp as I
from .literals import _literal_str, truthiness
from .values import UNKNOWN_V, V, union


def marks_of(v: V) -> List[tuple]:
    """The ``("mark", name, args)`` references in ``v`` (a ``pytestmark`` value: one mark or a
    list of them, nested lists too)."""
    out = []
    for a in v.refs():
        if a[0] == "mark":
            out.append(a)
        elif a[0] == "seq":
            for x in a[2]:
                out.extend(marks_of(x))
    return out


def parametrize_values(names_v: V, values_v: V) -> Dict[str, V]:
    """``@pytest.mark.parametrize(names, values)``: each parameter name -> the union of the
    values it takes over the rows (unknown where the rows are not a literal sequence)."""
    names: List[str] = []
    s = I._literal_str(names_v)
    if s is not None:
        names = [n.strip() for n in s.split(",") if n.strip()]
    else:
        for a in names_v.refs():
            if a[0] == "seq":
                names = [I._literal_str(x) or "" for x in a[2]]
    out: Dict[str, V] = {}
    rows: List[V] = []
    for a in values_v.ordered():
        if isinstance(a, tuple) and a[0] == "seq":
            rows.extend(a[2])
        else:
            rows = []
            break
    for i, n in enumerate(names):
        if not n:
            continue
        if not rows:
            out[n] = UNKNOWN_V
            continue
        vals = []
        for row in rows:
            if len(names) == 1:
                vals.append(row)
                continue
            seqs = [x for x in row.refs() if x[0] == "seq"]
            if seqs and i < len(seqs[0][2]):
                vals.append(seqs[0][2][i])
            else:
                vals.append(UNKNOWN_V)
        out[n] = union(vals)
    return out


SKIPPED = "hermetic:skipped"   # the marker name given to a test that never runs on this platform


def skipped_by(marks: List[tuple]) -> bool:
    """Whether the test's marks skip it: ``skip``, or a ``skipif`` whose condition is known to be
    true (``sys.platform == "win32"`` on Windows, ``not WINDOWS``, a True constant)."""
    for m in marks:
        if m[1] == "skip":
            return True
        if m[1] == "skipif":
            kwargs = dict(m[3]) if len(m) > 3 else {}
            cond = m[2][0] if m[2] else kwargs.get("condition")
            if cond is not None and truthiness(cond) is True and _literal_str(cond) is None:
                return True   # (a string condition is evaluated by pytest: not decided here)
    return False
