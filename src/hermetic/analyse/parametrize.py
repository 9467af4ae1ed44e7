"""Markers and ``parametrize``: the marks a ``pytestmark`` value holds, and the values each
parameter of a parametrized test takes.
"""
from __future__ import annotations

from typing import Dict, List, Optional

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


# what ``pytest.param(..., marks=...)`` gives for a row its marks skip here (``param_row``)
SKIPPED_ROW = ("skipped-row",)


def param_row(args: List[V], kwargs: Dict[str, V]) -> V:
    """``pytest.param(*values, marks=..., id=...)``: the row's value (one value, or a tuple of
    them); ``SKIPPED_ROW`` where its marks skip it on this platform (``skipped_by``)."""
    marks = kwargs.get("marks")
    if marks is not None and skipped_by(marks_of(marks)):
        return V(frozenset([SKIPPED_ROW]))
    return args[0] if len(args) == 1 else V(frozenset([("seq", "tuple", tuple(args))]))


def parametrize_rows(names_v: V, values_v: V) -> Optional[List[Dict[str, V]]]:
    """``@pytest.mark.parametrize(names, values)``: one dict per row that runs here, parameter
    name -> its value in that row (``[]``: every row is skipped); None where the rows are not a
    literal sequence (or the names are unknown)."""
    names = _names(names_v)
    rows: List[V] = []
    for a in values_v.ordered():
        if isinstance(a, tuple) and a[0] == "seq":
            rows.extend(a[2])
        else:
            return None
    if names and rows and all(SKIPPED_ROW in r.atoms for r in rows):
        return []
    rows = [r for r in rows if SKIPPED_ROW not in r.atoms]
    if not names or not rows:
        return None
    out: List[Dict[str, V]] = []
    for row in rows:
        values: Dict[str, V] = {}
        seqs = [x for x in row.refs() if x[0] == "seq"] if len(names) > 1 else []
        for i, n in enumerate(names):
            if not n:
                continue
            if len(names) == 1:
                values[n] = row
            elif seqs and i < len(seqs[0][2]):
                values[n] = seqs[0][2][i]
            else:
                values[n] = UNKNOWN_V
        out.append(values)
    return out


def parametrize_values(names_v: V, values_v: V) -> Dict[str, V]:
    """``@pytest.mark.parametrize(names, values)``: each parameter name -> the union of the
    values it takes over the rows (unknown where the rows are not a literal sequence)."""
    rows = parametrize_rows(names_v, values_v)
    if not rows:
        return {n: UNKNOWN_V for n in _names(names_v) if n}
    return {n: union([r[n] for r in rows]) for n in rows[0]}


def _names(names_v: V) -> List[str]:
    """The parameter names of a parametrize mark ("a, b" or a list of strings; "" for one the
    analysis cannot read)."""
    s = _literal_str(names_v)
    if s is not None:
        return [n.strip() for n in s.split(",") if n.strip()]
    for a in names_v.refs():
        if a[0] == "seq":
            return [_literal_str(x) or "" for x in a[2]]
    return []


MAX_ROWS = 8   # a test with more rows (the product of its parametrize marks) runs once, rows joined


def row_runs(marks: List[tuple]) -> Optional[List[Dict[str, V]]]:
    """The parameter values of each run of a test whose ``parametrize`` marks list 2 to
    ``MAX_ROWS`` rows in all (their product): one dict per run; None where a test runs once
    with the rows joined (one row, too many, or a list the analysis cannot read)."""
    combos: List[Dict[str, V]] = [{}]
    for m in marks:
        if m[1] != "parametrize" or len(m[2]) < 2:
            continue
        rows = parametrize_rows(m[2][0], m[2][1])
        if rows is None or len(combos) * len(rows) > MAX_ROWS:
            return None
        combos = [{**c, **r} for c in combos for r in rows]
    return combos if len(combos) > 1 else None


SKIPPED = "hermetic:skipped"   # the marker name given to a test that never runs on this platform


def skipped_by(marks: List[tuple]) -> bool:
    """Whether the test's marks skip it: ``skip``, or a ``skipif`` whose condition is known to be
    true (``sys.platform == "win32"`` on Windows, ``not WINDOWS``, a True constant)."""
    for m in marks:
        if m[1] == "skip":
            return True
        if m[1] == "parametrize" and len(m[2]) >= 2 and parametrize_rows(m[2][0], m[2][1]) == []:
            return True   # every row's own marks skip it
        if m[1] == "skipif":
            kwargs = dict(m[3]) if len(m) > 3 else {}
            cond = m[2][0] if m[2] else kwargs.get("condition")
            if cond is not None and truthiness(cond) is True and _literal_str(cond) is None:
                return True   # (a string condition is evaluated by pytest: not decided here)
    return False
