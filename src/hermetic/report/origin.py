"""Origin wording: how a finding names where a sink's target came from.

``describe_origin`` gives the message text (``DB_PATH (a module constant, app/db.py:3, from
the environment variable APP_DB)``), ``origin_json`` the report's ``origin`` object
(``{"kind", "path", "line", "expression"[, "derived_from"]}``), both from an
``analyse.values.Origin``.
"""
from __future__ import annotations

from typing import Optional

from ..analyse.values import Origin, from_call


def origin_json(o: Optional[Origin]) -> Optional[dict]:
    if o is None:
        return None
    kind = o.kind
    if kind == "project-file":
        kind = "literal"
    # a literal is shown by its value, but one a library call gives by the call (tempfile.gettempdir())
    out = {"kind": kind, "path": o.path, "line": o.line, "expression": o.expr if kind != "literal" else (
        repr(o.value) if o.value is not None and not from_call(o) else o.expr)}
    if o.kind in ("module-constant", "default-argument") and o.inner:
        leaf = _leaf(o)
        if leaf is not None and leaf.kind != o.kind:
            out["derived_from"] = "literal" if leaf.kind == "project-file" else leaf.kind
    return out


def _leaf(o: Origin) -> Optional[Origin]:
    while o.kind in ("module-constant", "default-argument") and o.inner:
        nxt = next((i for i in o.inner if i.kind not in ("test-value",)), o.inner[0])
        o = nxt
    return o


def source_words(o: Origin) -> Optional[str]:
    """The words for a value a path or name is built from: ``the environment variable X``,
    ``the home folder``, ``the working directory``, ``the constant X``, ``__file__``; None for
    other kinds. The one wording of these kinds: findings, HT202's bases and module constants'
    sources all use it."""
    if o.kind == "environment":
        return f"the environment variable {o.expr}"
    if o.kind == "home":
        return "the home folder"
    if o.kind == "cwd":
        return "the working directory"
    if o.kind == "module-constant":
        return f"the constant {o.expr}"
    if o.kind == "project-file":
        return "__file__"
    return None


def describe_origin(o: Optional[Origin], noun: str = "value") -> str:
    """How a finding names the target a sink acts on; ``noun``: what the target is (``path`` for
    a file operation), for a target an environment variable gives."""
    if o is None:
        return "an uncontrolled value"
    loc = f", {o.path}:{o.line}" if o.path and o.line else ""
    if o.kind == "module-constant":
        leaf = _leaf(o)
        src = ""
        if leaf is not None and leaf is not o:
            if leaf.kind in ("environment", "home", "cwd"):
                src = f", from {source_words(leaf)}"
            elif leaf.kind == "literal":
                src = f", the literal {leaf.value!r}" if leaf.value is not None else ""
            elif leaf.kind == "project-file" and leaf.room is not None and leaf.room < 0:
                src = ", built from __file__, above the project root"
            elif leaf.kind == "project-file":
                src = ", built from __file__ (inside the project)"
        what = "a class attribute" if "." in o.expr else "a module constant"   # Class.NAME
        return f"{o.expr} ({what}{loc}{src})"
    if o.kind == "environment":   # "reads (Path.exists) a path from the environment variable X"
        return f"a {noun} from {source_words(o)}"
    if o.kind == "literal" and o.expr[:1] not in ("'", '"'):
        return f"{o.expr} ({o.value!r}{loc})"
    if o.kind == "literal":
        return f"the literal {o.value!r} in the code{loc}" if not o.in_test else f"the literal {o.value!r}{loc}"
    if o.kind == "project-file" and o.room is not None and o.room < 0:
        return f"a path above the project root (from __file__{loc})"
    if o.kind == "project-file":
        return f"a path inside the project tree (from __file__{loc})"
    if o.kind == "default-argument":
        return f"the default argument {o.expr}{loc}"
    if o.kind == "library-default":
        return f"the library's default target ({o.expr}{loc})"
    if o.kind == "cwd" and o.inner:   # abspath('data/x'): a path under it, made at call time
        return f"{o.expr} (in the working directory{loc})"
    if o.kind in ("home", "cwd"):
        return f"{source_words(o)} ({o.expr}{loc})"
    if o.kind == "clock":
        return "the real clock"
    return o.expr or o.kind
