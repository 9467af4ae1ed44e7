"""What a test's own run removed from the file system, so a later existence check is decided.

A folder (or file) the run removed for certain (``shutil.rmtree(p)``, ``os.remove(p)``: catalogue
entries with ``removes = true``, on a way every branch before it took, outside a ``try`` body or
a ``with`` block, where an exception may come first) holds nothing afterwards, until the run
writes there again: ``os.path.exists(p + "/x")`` is then False (cookiecutter's teardown removes
its test repository, then checks for files inside it). Only targets known as text are kept (a
literal, a constant bound to one, or ``abspath()`` of a relative literal while the working
directory is the one the tests start in, also after a ``chdir`` back to what ``os.getcwd()``
gave there), as paths normalised with ``os.path.normpath``. A write or a subprocess whose
target the analysis cannot name forgets everything (it may have made anything), as do a call
the analysis cannot follow and a write whose target is not the path it makes (catalogue
``elsewhere``: a path's ``rename``, ``make_archive``). State: ``Ctx.fs_gone`` / ``Ctx.fs_made``.
"""
from __future__ import annotations

import os.path
from typing import Optional

from .origins import START_CWD
from .values import Origin, V


def fs_key(target: Optional[V], cwd_moved: bool) -> Optional[str]:
    """The normalised path ``target`` names, when it is one known text; else None. Relative
    paths count only while the working directory has not moved (``cwd_moved``)."""
    if target is None or len(target.atoms) != 1:
        return None
    (a,) = target.atoms
    if not isinstance(a, Origin):
        return None
    o = a
    while o.kind in ("cwd", "module-constant") and len(o.inner) == 1 and not o.partial:   # a constant = abspath("x")
        o = o.inner[0]
    if o.kind != "literal" or o.partial or not isinstance(o.value, str) or not o.value:
        return None
    if o.expr[:1] not in ("'", '"'):
        return None   # tempfile.gettempdir() and other values the analysis names by their text
    path = os.path.normpath(o.value)
    if not os.path.isabs(path) and cwd_moved:
        return None
    return path


def cwd_moved(ctx) -> bool:
    """Whether the working directory is not (known to be) the one the tests start in: a
    ``chdir`` put back to what ``os.getcwd()`` gave there (``utils.work_in``'s ``finally``) is
    that one, a path built from it (``os.path.join(os.getcwd(), "x")``, its parent) is not."""
    cwd = ctx.cwd
    return cwd is not None and not (cwd.atoms and all(
        isinstance(a, Origin) and a.kind == "cwd" and a.value == START_CWD and not a.partial for a in cwd.atoms))


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def after_removal(ctx, key: str) -> None:
    """``key`` was removed on every way: nothing under it exists, whatever was made there."""
    ctx.fs_made = tuple(m for m in ctx.fs_made if not _under(m, key))
    ctx.fs_gone = tuple(g for g in ctx.fs_gone if not _under(g, key)) + (key,)


def after_write(ctx, key: Optional[str]) -> None:
    """A write that may make ``key`` (None: a target the analysis cannot name, so anything)."""
    if not ctx.fs_gone:
        return
    if key is None:
        ctx.fs_gone, ctx.fs_made = (), ()
    elif key not in ctx.fs_made:
        ctx.fs_made = ctx.fs_made + (key,)


def gone(ctx, key: Optional[str]) -> bool:
    """Whether ``key`` is under a removed path and nothing made since is it, in it or holds it."""
    if key is None or not any(_under(key, g) for g in ctx.fs_gone):
        return False
    return not any(_under(m, key) or _under(key, m) for m in ctx.fs_made)
