"""What can happen, in plain words: the clause a finding's message starts its story with
(``"writes into the home folder of whoever runs the tests"``), from the sink's category,
whether it writes, and its target's origin."""
from __future__ import annotations

from typing import Optional

from ..analyse.values import Origin


def _leaf(o: Origin) -> Origin:
    """The value a module constant or default argument was computed from (itself otherwise)."""
    seen = 0
    while o.kind in ("module-constant", "default-argument") and o.inner and seen < 100_000:
        o = next((i for i in o.inner if i.kind != "test-value"), o.inner[0])
        seen += 1
    return o


def _unset_default(o: Origin, leaf: Origin) -> Optional[Origin]:
    """The default a module constant falls back to where the variable ``leaf`` is not set (the
    other value it was computed from), if there is one the report can name."""
    if o.kind not in ("module-constant", "default-argument") or len(o.inner) < 2 or leaf not in o.inner:
        return None
    return next((i for i in o.inner if i is not leaf and i.kind in ("home", "cwd", "literal", "project-file")), None)


def _place(o: Optional[Origin]) -> str:
    """Where a path lies, as words a reader of the report recognises."""
    if o is None:
        return "a place the test does not choose"
    leaf = _leaf(o)
    if leaf.kind == "home":
        return "the home folder of whoever runs the tests"
    if leaf.kind == "cwd":
        return "the folder the tests are run from"
    if leaf.kind == "environment":
        other = _unset_default(o, leaf)
        if other is not None:   # os.environ.get("X", Path.home() / ".cache"): the default where X is not set
            return f"the folder the environment variable {leaf.expr} names where it is set, else {_place(other)}"
        return f"the folder the environment variable {leaf.expr} names (a real one when it is set)"
    if leaf.kind == "project-file":
        return "the project's own source tree" if not (leaf.room is not None and leaf.room < 0) else \
            "a folder above the project"
    if leaf.kind == "literal":
        text = str(leaf.value or "")
        if text.startswith(("/", "~")) or (len(text) > 2 and text[1] == ":"):
            return "a fixed location on the machine that runs the tests"
        return "the folder the tests are run from"
    if leaf.kind == "library-default":
        return "the library's default location"
    return "a place the test does not choose"


# connection calls whose bare (non-URL) target is a file: the others take a host name
_FILE_DATABASES = ("sqlite", "duckdb", "dbm.", "shelve.", "lmdb", "SqliteDatabase")


def consequence(category: str, write: bool, o: Optional[Origin], call: str = "") -> str:
    """One clause: what the operation can do to the machine or a service, or what its result
    depends on (contract section 4's severity, said for a reader). ``call``: the sink's name,
    which tells a database file from a server's host name."""
    if category == "file":
        return f"can change files in {_place(o)}" if write else \
            f"the result depends on files in {_place(o)}"
    if category == "connection":
        leaf = _leaf(o) if o is not None else None
        if leaf is not None and leaf.kind == "environment":
            return f"can read and change the database {leaf.expr} names, your real one when it is set"
        if leaf is not None and leaf.kind == "library-default":
            return "can read and change the server the library defaults to (a real one on a developer's machine)"
        if leaf is not None and leaf.kind == "literal" and not _is_url(leaf) and call and \
                not any(m in call for m in _FILE_DATABASES):
            return f"can read and change the server at {str(leaf.value or '')!r}"   # redis.Redis(host="foo")
        if leaf is not None and leaf.kind in ("home", "cwd", "project-file", "literal") and not _is_url(leaf):
            return f"can read and change a real database file in {_place(o)}"
        return "can read and change a real database or service"
    if category == "network":
        return "sends a real request over the network"
    if category == "subprocess":
        return "runs a real program installed on the machine"
    if category == "env":
        return "the result depends on the environment of whoever runs the tests"
    if category == "clock":
        return "the result depends on the real clock"
    return "reaches something the test does not control"


def _is_url(o: Origin) -> bool:
    text = str(o.value or "")
    return "://" in text or "=" in text
