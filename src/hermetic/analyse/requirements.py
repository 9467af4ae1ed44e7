"""Which tests a collecting plugin's requirements skip on its default backend.

SQLAlchemy's testing plugin skips a test whose requirement excludes the database it runs on:
``@testing.requires.two_phase_transactions`` on the method, ``__requires__ = ("name", ...)``
on the class. A requirement is a property of the project's requirements class (``[sqla_testing]
requirement_cls = test.requirements:DefaultRequirements`` in ``setup.cfg``) returning an
exclusion: ``skip_if([no_support("sqlite", ...), ...])``, ``only_on(["postgresql"])``,
``exclusions.closed()``, ``a + b`` ... (``sqlalchemy/testing/exclusions.py``). The property's
``return`` is read as written, on the summaries (nothing runs): the test is skipped when every
``return`` surely excludes the default backend. Anything else (a predicate function, a
version, a requirement of the library's own class) excludes nothing, so the test is analysed.
"""
from __future__ import annotations

from typing import Callable, Optional

from ..summarise.ir import CALL_ARGS, CALL_FUNC, LIT_VALUE, RETURN_VALUE, SEQ_ITEMS, TAG, dotted_name, flat

# exclusions.py names: what a call of each does to a backend it names
_SKIPS_NAMED = {"skip_if", "skip", "no_support", "exclude"}   # skipped on the backends named
_ONLY_NAMED = {"only_on", "only_if"}                           # skipped on every other backend
_RUNS = {"fails_if", "fails_on", "fails_on_everything_except", "open", "warns_if", "against"}
_DEPTH = 8   # requirements that name other requirements (``self.other``), followed this deep


def _last(e) -> str:
    name = dotted_name(e) if e[TAG] in ("name", "attr") else ""
    return name.rsplit(".", 1)[-1]


def spec_of(text) -> Optional[tuple]:
    """``(backend, exact)`` of a backend spec: ``"sqlite"`` names all of SQLite (exact),
    ``"postgresql+psycopg2 >= 12"`` only some of PostgreSQL (a driver or a version: not exact);
    None for what is not such a string."""
    if not isinstance(text, str) or not text.strip():
        return None
    words = text.split()
    name, _, driver = words[0].partition("+")
    return (name, len(words) == 1 and not driver) if name else None


def _spec(e) -> Optional[tuple]:
    """``spec_of`` a literal (IR)."""
    return spec_of(e[LIT_VALUE]) if e[TAG] == "lit" else None


def _names(e, backend: str) -> Optional[bool]:
    """Whether the spec ``e`` surely names every configuration of ``backend`` (True), surely
    none (False: another backend), or only some of them, or cannot be read (None)."""
    spec = _spec(e)
    if spec is None:
        return None
    return False if spec[0] != backend else True if spec[1] else None


def excludes(e, backend: str, follow: Callable[[str], Optional[list]], depth: int = 0) -> Optional[bool]:
    """Whether the exclusion expression ``e`` (IR) surely skips a test on ``backend`` (True),
    surely runs it (False), or the analysis cannot tell (None). ``follow(name)``: the ``return``
    expressions of the requirement ``self.name``, or None."""
    if depth > _DEPTH:
        return None
    tag = e[TAG]
    if tag == "seq":   # skip_if([...]): any item that skips
        found = [excludes(x, backend, follow, depth + 1) for x in e[SEQ_ITEMS]]
        return True if True in found else False if found and all(f is False for f in found) else None
    if tag == "bin":   # a + b: both apply
        parts = [excludes(x, backend, follow, depth + 1) for x in (e[2], e[3])]
        return True if True in parts else False if parts == [False, False] else None
    if tag == "lit":
        return _names(e, backend)
    if tag == "attr" and e[1][TAG] == "name" and e[1][1] == "self":
        returns = follow(e[2])
        if not returns:
            return None
        found = [excludes(r, backend, follow, depth + 1) for r in returns]
        return True if all(f is True for f in found) else False if all(f is False for f in found) else None
    if tag != "call":
        return None
    fn = _last(e[CALL_FUNC])
    args = e[CALL_ARGS]
    if fn == "closed":
        return True
    if fn in _RUNS:
        return False
    if fn in _SKIPS_NAMED:
        if not args:
            return None
        if fn in ("no_support", "exclude"):
            return _names(args[0], backend) if fn == "no_support" or len(args) < 3 else None   # exclude(db, op, spec)
        if args[0][TAG] == "attr":
            return None   # skip_if(self.other): skips where the other requirement runs
        return excludes(args[0], backend, follow, depth + 1)
    if fn in _ONLY_NAMED:
        specs = args[0][SEQ_ITEMS] if args and args[0][TAG] == "seq" else args[:1]
        found = [_spec(x) for x in specs]
        if not found or None in found:
            return None
        if any(name == backend for name, _exact in found):
            return False if any(name == backend and exact for name, exact in found) else None
        return True
    return None


def returns_of(body: list) -> list:
    """The expressions a function's ``return`` statements give, when all of them are at its top
    level (a return under an ``if`` or ``try`` depends on what the analysis does not run: no
    answer, an empty list)."""
    top = {id(st) for st in body}
    if any(st[TAG] == "return" and id(st) not in top for st in flat(body)):
        return []
    return [st[RETURN_VALUE] for st in body if st[TAG] == "return" and st[RETURN_VALUE] is not None]
