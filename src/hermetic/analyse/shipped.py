"""What the checkout ships: the files and folders under the project root, and the JSON they hold.

A path a test names as a relative literal, while the working directory is the one the tests
start in (the project root, contract row T1: a read of data shipped with the tests), is a path in
the checkout; so is a relative literal of the code's while the working directory is such a
folder (``with work_in(template):``). ``os.path.isdir("tests/templates/plain")`` is then answered
from the checkout as discovery found it: yes where it is there (and the run has not removed it);
where it is not, no under a folder the checkout ships below the root while the run has written
nowhere it cannot name (``Ctx.tree_changed`` / ``tree_made``, ``may_be_missing``), else unknown
(a test may have made it). ``json.load`` of such a file opened for reading
is what the file holds (``contents``), so a branch on a key of a template's configuration takes
the way the shipped file decides (cookiecutter's nested templates, ``_copy_without_render``).

``os.listdir`` of a shipped folder below the root lists the names discovery found there, sorted
(the order ``os.listdir`` gives is not known: a loop that stops at its first match takes the
first in sorted order), while the run has written nowhere in it or anywhere it cannot name, and
discovery entered every folder in it.

The names come from discovery's walk (``Shipped.names``: relative path -> ``file`` / ``dir``;
excluded and hidden folders are ``LEFT_OUT``, not walked); the analysis cache keys on
discovery's ``Project.shipped_digest`` (every name walked, and each JSON file's size and
modification time), so a data file added, removed or edited analyses every test again. State: the parsed files, kept per process.
"""
from __future__ import annotations

import json
import os.path
from pathlib import Path
from typing import Dict, List, Optional

from ..discover.project import LEFT_OUT
from .fsmodel import cwd_moved
from .literals import relative_literal
from .origins import made_absolute
from .values import EXISTS_QUESTIONS, Origin, V

_MAX_BYTES = 64 * 1024   # larger files are not parsed

class Shipped:
    """The checkout under ``root``: ``names`` maps each relative path (``/``-separated) to
    ``"file"``, ``"dir"`` or ``LEFT_OUT`` (a folder discovery did not enter)."""

    def __init__(self, root: Path, names: Dict[str, str]):
        self.root = root
        self.names = names
        self._parsed: Dict[str, object] = {}
        self._children: Optional[Dict[str, List[str]]] = None   # folder -> its names (``listing``)

    def kind(self, rel: str) -> Optional[str]:
        """``"file"`` / ``"dir"`` where the checkout holds ``rel``; None where it does not, or
        where discovery did not walk it (a hidden or excluded folder: ``"left-out"``)."""
        kind = "dir" if rel == "" else self.names.get(rel)
        return None if kind == LEFT_OUT else kind

    def listing(self, rel: str) -> Optional[List[str]]:
        """The names in the shipped folder ``rel`` (sorted), or None: not a shipped folder, the
        root (runs and tools leave things there), or one holding a folder discovery left out."""
        if rel == "" or self.kind(rel) != "dir":
            return None
        if self._children is None:
            self._children = {}
            for name in self.names:
                parent, _, base = name.rpartition("/")
                self._children.setdefault(parent, []).append(base)
        names = self._children.get(rel, [])
        if any(self.names.get(f"{rel}/{n}") == LEFT_OUT for n in names):
            return None
        return sorted(names)

    def answer(self, question: str, rel: str, missing: bool = False) -> Optional[bool]:
        """``question`` (``exists``, ``isdir`` ...) about ``rel``: True / False where the
        checkout holds it; where it does not, False if ``missing`` (the run has made nothing
        there) and the folder above is a shipped one (the root too, for a name that is not hidden
        and that discovery did not see there), else None; None for other questions."""
        if question not in EXISTS_QUESTIONS:
            return None
        wanted = EXISTS_QUESTIONS[question]
        kind = self.kind(rel)
        if kind is None:
            parent, _, name = rel.rpartition("/")
            if parent == "":   # at the root: tools leave hidden names there (.pytest_cache, .coverage)
                return False if missing and not name.startswith(".") and rel not in self.names else None
            return False if missing and self.kind(parent) == "dir" else None
        return wanted is None or kind == wanted

    def data(self, rel: str):
        """The parsed JSON of the shipped file ``rel``; ``NOT_JSON`` for a UTF-8 text ``json`` refuses
        (``json.load`` of it raises ``ValueError``); ``_NONE`` when not known (not a file, too large,
        not UTF-8)."""
        if rel in self._parsed:
            return self._parsed[rel]
        out = _NONE
        if self.names.get(rel) == "file":
            try:
                p = self.root / rel
                if p.stat().st_size <= _MAX_BYTES:
                    text = p.read_text(encoding="utf-8")
                    try:
                        out = json.loads(text)
                    except ValueError:
                        out = NOT_JSON
            except (OSError, ValueError):
                out = _NONE
        self._parsed[rel] = out
        return out


_NONE = object()
NOT_JSON = object()   # a shipped text that is not JSON: reading it as JSON raises


def is_data(x) -> bool:
    return x is not _NONE and x is not NOT_JSON


def shipped_rel(target: Optional[V], ctx) -> Optional[str]:
    """The checkout-relative path ``target`` names, or None: a relative string literal written in
    test code while the working directory is the starting one; or any relative literal (a
    constant or default argument bound to one too) while the working directory is such a path of
    the test's (``with work_in(template):``). Not one climbing out of the root."""
    if target is not None and (absolute := made_absolute(target)) is not None:
        return _rel(absolute.inner[0], "")   # Path("tests/t").resolve(): the checkout's tests/t
    base = ""
    if cwd_moved(ctx):
        absolute = made_absolute(ctx.cwd)   # with work_in(Path("tests/t").resolve()):
        base = _rel(absolute.inner[0] if absolute is not None else relative_literal(ctx.cwd), "")
        if not base:
            return None
    return _rel(relative_literal(target, through=bool(base)), base)


def _rel(a: Optional[Origin], base: str) -> Optional[str]:
    """Literal ``a``'s path joined to the checkout-relative folder ``base``, normalised ("" for
    the root); None for a test-chosen folder that is not one, or one climbing out of the root."""
    if a is None or not (a.in_test or base):
        return None
    rel = os.path.normpath(os.path.join(base, a.value)).replace(os.sep, "/")
    if rel == ".":
        return ""
    if rel == ".." or rel.startswith("../") or ":" in rel:
        return None
    return rel


_MAX_MADE = 32   # past this many paths written, any path may have been made


def made_in_tree(ctx, key: Optional[str]) -> None:
    """A write outside tmp_path reached at ``key`` (``fsmodel.fs_key``: a known path text), or
    anywhere (None: a target not named, a program run)."""
    if key is None or len(ctx.tree_made) >= _MAX_MADE:
        ctx.tree_changed = True
    elif key not in ctx.tree_made:
        ctx.tree_made = ctx.tree_made + (key,)


def may_be_missing(ctx, rel: str, root: Path) -> bool:
    """Whether a path the checkout does not hold is missing still: the run wrote nowhere it
    cannot name, and no path it named is ``rel``, holds it or lies in it (nor, for a name at the
    root, is at the root itself)."""
    if ctx.tree_changed:
        return False
    for key in ctx.tree_made:
        if os.path.isabs(key):
            try:
                key = os.path.relpath(key, root)
            except ValueError:
                continue
        key = key.replace(os.sep, "/")
        if key in (".", "") or rel == key or rel.startswith(key + "/") or key.startswith(rel + "/"):
            return False
        if "/" not in rel and "/" not in key and not key.startswith("../"):
            return False   # the run made something at the root: what is beside it there (a lock) is not known
    return True

