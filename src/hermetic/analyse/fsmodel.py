"""What a test's own run removed from the file system, so a later existence check is decided;
and the paths whose answer is the same on every machine (``known_answer``).

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
from typing import Optional, Tuple

from .origins import START_CWD
from .values import Origin, V


def fs_key(target: Optional[V], cwd_moved: bool) -> Optional[str]:
    """The normalised path ``target`` names, when it is one known text; else None. Relative
    paths count only while the working directory has not moved (``cwd_moved``)."""
    if target is None or len(target.atoms) != 1:
        return None
    (a,) = target.atoms
    text = _whole_text(a, ("cwd", "module-constant"))   # a constant = abspath("x")
    if not text:
        return None
    path = os.path.normpath(text)
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


# what a folder answers to each question a path can be asked (``returns = "value"`` calls)
_FOLDER_ANSWERS = {"exists": True, "lexists": True, "isdir": True, "is_dir": True, "isfile": False,
                   "is_file": False, "is_zipfile": False, "is_tarfile": False}
_EMPTY_ANSWERS = dict.fromkeys(_FOLDER_ANSWERS, False)


def known_answer(call: str, target: Optional[V], folders, posix: bool) -> Tuple[Optional[bool], Optional[V]]:
    """What ``call`` (a dotted name: ``os.path.exists``, ``zipfile.is_zipfile`` ...) answers
    about ``target``, for the values it may be that are paths written whole whose answer does not
    depend on the machine: the empty path (exists nowhere), or on POSIX one of ``folders``
    (catalogue ``[existing-folders]``: ``/``, ``/etc`` ...). ``(answer, None)`` when every value
    is one of those and they agree; ``(None, rest)`` when some are, ``rest`` being the others
    (the read that depends on the machine); ``(None, target)`` otherwise."""
    question = call.rsplit(".", 1)[-1]
    if question not in _FOLDER_ANSWERS or target is None or not target.atoms:
        return None, target
    answers, rest = set(), []
    for a in target.atoms:
        text = _whole_text(a)
        if text == "":
            answers.add(_EMPTY_ANSWERS[question])
        elif posix and text is not None and os.path.normpath(text) in folders:
            answers.add(_FOLDER_ANSWERS[question])
        else:
            rest.append(a)
    if rest:
        return None, (V(frozenset(rest), target.is_path) if answers else target)
    if len(answers) == 1:
        return answers.pop(), None
    return None, target   # the values answer differently: the answer is not known


def _whole_text(a, through=("module-constant",)) -> Optional[str]:
    """The text of a string literal written whole, also behind origins of the kinds
    ``through`` bound to one (a constant, ``abspath()`` of a literal); else None (also for
    ``tempfile.gettempdir()`` and other values the analysis names by their text)."""
    while isinstance(a, Origin) and a.kind in through and len(a.inner) == 1 and not a.partial:
        a = a.inner[0]
    if not isinstance(a, Origin) or a.kind != "literal" or a.partial or not isinstance(a.value, str):
        return None
    return a.value if a.expr[:1] in ("'", '"') else None
