"""Function bodies of a loaded summary, read when first used (``LazyFunction``).

The summary cache (``hermetic.engine.cache``) loads a summary with its function bodies left as
one ``marshal`` blob per module (``Bodies``); a body is read on first use. ``transient_bodies``
is a scope that undoes the first reads made inside it, for code that looks into every function
once, module by module (the rules, the HT3xx effects scan), so those bodies do not all stay in
memory. Here, beside the summary format, so the analysis can use the scope without importing
the engine.
"""
from __future__ import annotations

import marshal
from typing import Dict, List, Optional

LAZY_KEYS = ("body", "body_digest")   # a function entry's items kept with its module's bodies
_SCOPES: List[List["Bodies"]] = []   # open ``transient_bodies`` scopes, innermost last


class Bodies:
    """A module's function bodies as marshal bytes until one of them is first read."""

    __slots__ = ("data", "functions", "loaded")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.functions: Dict[str, "LazyFunction"] = {}
        self.loaded = False

    def load(self) -> None:
        if self.loaded:
            return
        self.loaded = True
        try:
            bodies = marshal.loads(self.data)
        except (ValueError, EOFError, TypeError):
            bodies = {}
        if not isinstance(bodies, dict):
            bodies = {}
        for qn, f in self.functions.items():
            body, digest = bodies.get(qn, ((), ""))
            dict.__setitem__(f, "body", body)
            dict.__setitem__(f, "body_digest", digest)
        if _SCOPES:
            _SCOPES[-1].append(self)

    def evict(self) -> None:
        """Drop the bodies again (read anew when next used)."""
        if self.loaded:
            self.loaded = False
            for f in self.functions.values():
                dict.pop(f, "body", None)
                dict.pop(f, "body_digest", None)


def bodies_of(summary: dict) -> Optional[Bodies]:
    """The lazily read bodies of a loaded summary (None for one read whole)."""
    for f in summary["functions"].values():
        return getattr(f, "_store", None)
    return None


class transient_bodies:
    """A scope whose first reads of function bodies are undone when it ends (and at each
    ``release``): for a rule that looks into every function once, module by module, so the
    bodies it reads do not all stay in memory (Django's test tree: 110 MiB)."""

    def __enter__(self) -> "transient_bodies":
        _SCOPES.append([])
        return self

    def release(self) -> None:
        for store in _SCOPES[-1]:
            store.evict()
        _SCOPES[-1].clear()

    def __exit__(self, *exc) -> None:
        self.release()
        _SCOPES.pop()


class LazyFunction(dict):
    """A summary's function entry whose ``"body"`` is read on first use: a run needs the
    bodies of the functions it runs and the rules look into, not of every function of every
    module (pytest's tree: 60% of the summaries' bytes). ``f["body"]`` reads it, and so does
    anything that visits every item; ``get`` and ``in`` stay the plain dict's (they are on
    the interpreter's hot path), so ``f.get("body")`` is None until the body is read."""

    __slots__ = ("_store",)

    def __init__(self, entry: dict, store: Bodies) -> None:
        super().__init__(entry)
        self._store = store

    def __missing__(self, key):
        if key not in LAZY_KEYS:
            raise KeyError(key)
        self._store.load()
        return dict.__getitem__(self, key)

    # whatever may look at every item sees the body too (generic walks over a summary)
    def _all(self) -> "LazyFunction":
        if not self._store.loaded:
            self._store.load()
        return self

    def __iter__(self):
        return dict.__iter__(self._all())

    def __eq__(self, other) -> bool:
        return dict.__eq__(self._all(), other)

    __hash__ = None

    def keys(self):
        return dict.keys(self._all())

    def values(self):
        return dict.values(self._all())

    def items(self):
        return dict.items(self._all())

    def copy(self) -> dict:
        return dict(dict.items(self._all()))

    def __reduce__(self):   # a plain dict with its body, wherever it is pickled to
        return (dict, (dict(self._all()),))
