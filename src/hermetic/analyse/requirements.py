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

from ..summarise.ir import CALL_ARGS, CALL_FUNC, LIT_VALUE, RETURN_VALUE, SEQ_ITEMS, TAG, dotted_name

# exclusions.py names: what a call of each does to a backend it names
_SKIPS_NAMED = {"skip_if", "skip", "no_support", "exclude"}   # skipped on the backends named
_ONLY_NAMED = {"only_on", "only_if"}                           # skipped on every other backend
_RUNS = {"fails_if", "fails_on", "fails_on_everything_except", "open", "warns_if", "against"}
_DEPTH = 8   # requirements that name other requirements (``self.other``), followed this deep


def _last(e) -> str:
    name = dotted_name(e) if e[TAG] in ("name", "attr") else ""
    return name.rsplit(".", 1)[-1]


def _spec_backend(e) -> Optional[str]:
    """The backend a spec literal names (``"sqlite"``, ``"postgresql+psycopg2 >= 12"``)."""
    if e[TAG] != "lit" or not isinstance(e[LIT_VALUE], str) or not e[LIT_VALUE].strip():
        return None
    return e[LIT_VALUE].split()[0].split("+")[0] or None


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
        named = _spec_backend(e)
        return None if named is None else named == backend
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
            named = _spec_backend(args[0])
            return None if named is None else named == backend
        return excludes(args[0], backend, follow, depth + 1)
    if fn in _ONLY_NAMED:
        specs = args[0][SEQ_ITEMS] if args and args[0][TAG] == "seq" else args[:1]
        names = [_spec_backend(x) for x in specs]
        if not names or None in names:
            return None
        return backend not in names
    return None


def returns_of(body: list) -> list:
    """The expressions a function's top-level ``return`` statements give."""
    return [st[RETURN_VALUE] for st in body if st[TAG] == "return" and st[RETURN_VALUE] is not None]
