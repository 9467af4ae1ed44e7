"""The summary cache: one file per summary in ``.hermetic_cache/`` at the project root.

Keyed by the file's bytes, its module name and path, the summary format, the tool and the
Python version (``marshal``'s format is Python's), so an unchanged file is never parsed twice.
The folder carries its own ``.gitignore``. A summary is stored as the ``marshal`` bytes a parse
worker sends (``serialize``): the compact form, lists as tuples and strings interned, which a
fresh and a cached run both load the same way, so a warm run sees exactly the data a cold run
sees. Whole-run results are ``marshal``'d plain data too.
"""
from __future__ import annotations

import hashlib
import json
import marshal
import os
import sys
from pathlib import Path
from typing import List, Optional, Tuple

from .. import __version__
from ..summarise.bodies import LAZY_KEYS, Bodies, LazyFunction
from ..summarise.extract import SUMMARY_VERSION
from .entry import dumps, loads

CACHE_DIR = ".hermetic_cache"
_PY = f"{sys.version_info[0]}.{sys.version_info[1]}/{marshal.version}"   # the format of the cached bytes


_STAMP: Optional[str] = None


def _tool_stamp() -> str:
    """The tool's version plus a hash of its own files' contents: an edited checkout of hermetic
    never reuses results of the code it replaced, and the same release on another machine (a CI
    job restoring the cache) hits. About 1 ms."""
    global _STAMP
    if _STAMP is None:
        here = Path(__file__).resolve().parent.parent   # the whole package, not only engine/
        h = hashlib.sha256(__version__.encode())
        for p in sorted(here.rglob("*")):
            if p.suffix in (".py", ".toml", ".json"):
                h.update(p.relative_to(here).as_posix().encode() + b"\0" + p.read_bytes())
        _STAMP = h.hexdigest()[:16]
    return _STAMP


_RESULT_KEYS = {"findings", "files", "tests", "unresolved", "unknown", "calls", "sinks", "inventory", "errors"}


def _is_summary(data) -> bool:
    """A cached summary (or a cached parse error) of this format, not something else."""
    if not isinstance(data, dict):
        return False
    if set(data) == {"error"}:
        return isinstance(data["error"], str)
    return data.get("version") == SUMMARY_VERSION and all(
        isinstance(data.get(k), t) for k, t in (("module", str), ("path", str), ("body", (list, tuple)),
                                                 ("functions", dict), ("classes", dict)))


def serialize(summary: dict) -> bytes:
    """A summary (or ``{"error": message}``) as the bytes a worker sends and the cache keeps:
    ``compact``'s form in ``marshal``'s format (which keeps the strings interned), after an
    ``L``: the summary without its function bodies, and the bodies as marshal bytes of their
    own, read when a body is first used (``LazyFunction``). JSON text after a ``J`` for the
    rare summary nested deeper than ``marshal`` goes (a chain of 2,000 ``+``)."""
    obj = compact(summary)
    try:
        if isinstance(obj.get("functions"), dict):
            bodies = {qn: (f["body"], f.get("body_digest", "")) for qn, f in obj["functions"].items()}
            head = dict(obj)
            head["functions"] = {qn: {k: v for k, v in f.items() if k not in LAZY_KEYS}
                                 for qn, f in obj["functions"].items()}
            return b"L" + marshal.dumps((head, marshal.dumps(bodies)))
        return b"M" + marshal.dumps(obj)
    except ValueError:
        return b"J" + json.dumps(obj, separators=(",", ":")).encode("utf-8")


def deserialize(data: bytes) -> Optional[dict]:
    """``serialize``'s bytes back; None for bytes that are not a summary of this format."""
    try:
        if data[:1] == b"L":
            head, bodies = marshal.loads(data[1:])
            if not isinstance(head, dict) or not isinstance(bodies, bytes) or not isinstance(
                    head.get("functions"), dict):
                return None
            store = Bodies(bodies)
            head["functions"] = store.functions = {qn: LazyFunction(f, store)
                                                   for qn, f in head["functions"].items()}
            obj = head
        elif data[:1] == b"M":
            obj = marshal.loads(data[1:])
        elif data[:1] == b"J":
            obj = compact(json.loads(data[1:].decode("utf-8")))
        else:
            return None
    except (ValueError, EOFError, TypeError, RecursionError):
        return None
    return obj if _is_summary(obj) else None


_LEAF_TYPES = (str, int, type(None))   # exact types: not bool, since (True,) == (1,) would share
_NESTED = (list, tuple, dict)


def compact(obj):
    """A summary with its lists as tuples, its strings interned and its short tuples of
    plain values (``("name", "self")``, ...) shared: the same data in under half the memory
    (Django's 2,627 summaries: 418 MiB as decoded, 186 MiB as tuples, about 17% less again with
    the shared tuples). Every summary the analysis sees has passed through here.

    The shared tuples are shared within one summary: ``marshal`` keeps that sharing (one object,
    then references to it) and no more, so a table kept across summaries would only hold
    objects alive in the parse workers, which their collector then rescans."""
    return _conv(obj, {}) if type(obj) in _NESTED else obj


# a module function, not a closure: a closure that calls itself is a reference cycle, garbage
# left for the collector on every call
def _conv(o, leaves, intern=sys.intern, nested=_NESTED, leaf_types=_LEAF_TYPES):
    if type(o) is not dict:   # a list or a tuple (the extractor makes both)
        t = tuple([_conv(x, leaves) if type(x) in nested else (intern(x) if type(x) is str else x) for x in o])
        if len(t) <= 4:
            for x in t:
                if type(x) not in leaf_types:
                    return t
            return leaves.setdefault(t, t)
        return t
    return {intern(k): (_conv(v, leaves) if type(v) in nested else (intern(v) if type(v) is str else v))
            for k, v in o.items()}


_MARKER = "# created by hermetic\n"   # the first line of the cache folder's own .gitignore


def is_cache_folder(folder: Path) -> bool:
    """Whether ``folder`` is a cache folder hermetic made: its ``.gitignore`` starts with the marker."""
    try:
        with open(folder / ".gitignore", encoding="utf-8") as fh:
            return fh.read(len(_MARKER)) == _MARKER
    except (OSError, ValueError):
        return False


def cache_folder_problem(folder: Path) -> Optional[str]:
    """Why ``folder`` cannot be a cache folder (one line), or None. It can be one that hermetic
    made, an empty folder, or one that does not exist yet and can be made; never a folder that
    holds other files (hermetic would write its ``.gitignore`` of ``*`` there, and ``hermetic
    clean`` would take it for its own)."""
    if folder.exists():
        if not folder.is_dir():
            return "is not a folder"
        if is_cache_folder(folder):
            return None
        try:
            if any(folder.iterdir()):
                return "holds files hermetic did not write; name a new or an empty folder"
        except OSError as exc:
            return f"cannot be read: {exc.strerror or exc}"
        return None
    for up in folder.parents:
        if up.exists():
            return None if up.is_dir() else f"cannot be made: {up} is not a folder"
    return None


def remove_cache_folder(folder: Path) -> bool:
    """Remove what hermetic wrote in its cache folder ``folder``: the version folders, the
    marker and temporary files; then the folder, if nothing else is left in it. Returns
    whether the folder itself went."""
    import re
    import shutil

    for child in list(folder.iterdir()):
        if child.is_dir() and not child.is_symlink() and re.fullmatch(r"v\d+", child.name):
            shutil.rmtree(child, ignore_errors=True)
        elif child.name == ".gitignore" or (child.suffix == ".tmp" and child.is_file()):
            child.unlink(missing_ok=True)
    try:
        folder.rmdir()
        return True
    except OSError:
        return False


WRITE_APART = 64   # held entries written from a child process (fewer: here, a fork costs more)


def _fork_writer() -> Optional[int]:
    """``os.fork()``, or None where there is no fork (Windows) or it is not safe (macOS) or fails."""
    if not hasattr(os, "fork") or sys.platform == "darwin":
        return None
    try:
        return os.fork()
    except OSError:
        return None


class SummaryCache:
    def __init__(self, root: Path, enabled: bool = True, directory: Optional[Path] = None):
        top = directory if directory is not None else root / CACHE_DIR
        self.dir = top / f"v{SUMMARY_VERSION}"
        self._dir = str(self.dir)
        # a tree without the owner's write bit is read-only material: leave it untouched (even as root)
        try:
            writable = bool(root.stat().st_mode & 0o200) or directory is not None
        except OSError:
            writable = directory is not None
        self.enabled = enabled and writable
        self.hits = 0
        self._held: Optional[List[Tuple[Path, bytes]]] = None   # ``hold``: entries not written yet
        self._writer: Optional[int] = None   # ``write_held``'s child process

    def key(self, data: bytes, module: str, path: str, is_package: bool) -> str:
        h = hashlib.sha256()
        h.update(f"{_tool_stamp()}\0{SUMMARY_VERSION}\0{_PY}\0{module}\0{path}\0{is_package}\0".encode())
        h.update(data)
        return h.hexdigest()

    def get(self, key: str) -> Optional[dict]:
        if not self.enabled:
            return None
        try:   # plain strings and open(): a pathlib path per entry cost a third of the read
            with open(os.path.join(self._dir, key[:2], key + ".bin"), "rb") as fh:
                data = fh.read()
        except OSError:   # missing or unreadable: parse the file again
            return None
        s = deserialize(data)
        if s is None:     # corrupt, or another shape (a foreign entry): ignored
            return None
        self.hits += 1
        return s

    def put(self, key: str, data: bytes) -> Optional[dict]:
        """Store a summary given as ``serialize``'s bytes; return it loaded (what a later hit
        returns), or None for bytes that are no summary."""
        path = self.dir / key[:2] / f"{key}.bin"
        if self._held is not None:
            self._held.append((path, data))
        else:
            self._write(path, data)
        return deserialize(data)

    def hold(self) -> None:
        """Keep the summaries ``put`` from now on in memory, to be written by ``write_held``.

        For the parse phase of a run that parses many files. Creating a file is the slow part of
        storing a summary (on ext4 without a journal, a new inode is searched for past every
        inode deleted in the last half minute or so: about 1 ms each after a cache was removed),
        and the process that writes is the one that feeds the parse workers, each of which waits
        for its next file meanwhile (Django's cold run: a parse phase 3 s shorter with no writes
        at all, about 1 s shorter with them held, over two interleaved pairs)."""
        if self.enabled and self._held is None:
            self._held = []

    def write_held(self) -> None:
        """Write what ``hold`` kept: from a child process forked for it when there are at least
        ``WRITE_APART`` entries (it writes while the run goes on; ``wait`` ends it), else here."""
        held, self._held = self._held, None
        if not held:
            return
        pid = _fork_writer() if len(held) >= WRITE_APART else None
        if pid is None:
            for path, data in held:
                self._write(path, data)
        elif pid == 0:   # the child: write, and end without running anything of the parent's
            status = 1
            try:
                for path, data in held:
                    self._write(path, data)
                status = 0 if self.enabled else 1
            finally:
                os._exit(status)
        else:
            self._writer = pid

    def wait(self) -> None:
        """Wait for ``write_held``'s child; a child that could not write turns the cache off for
        the rest of the run, as a write here that fails does."""
        pid, self._writer = self._writer, None
        if pid is None:
            return
        try:
            _pid, status = os.waitpid(pid, 0)
        except ChildProcessError:
            return
        if status != 0:
            self.enabled = False

    def _write(self, path: Path, text, replace_siblings: bool = False) -> None:
        """Write atomically (a temporary file renamed into place: safe under concurrent runs);
        ``replace_siblings`` first removes the other entries of that folder. A tree that cannot
        be written turns the cache off for the run."""
        if not self.enabled:
            return
        try:
            top = self.dir.parent
            if not is_cache_folder(top):   # `hermetic clean` recognises the folder by its marker
                if cache_folder_problem(top):
                    self.enabled = False   # never adopt a folder of someone else's files
                    return
                top.mkdir(parents=True, exist_ok=True)
                (top / ".gitignore").write_text(_MARKER + "*\n", encoding="utf-8")
            path.parent.mkdir(parents=True, exist_ok=True)
            if replace_siblings:
                for old in path.parent.iterdir():
                    if old.suffix in (".bin", ".json"):
                        old.unlink()
            tmp = path.parent / f"{path.stem}.{os.getpid()}.tmp"
            if isinstance(text, bytes):
                tmp.write_bytes(text)
            else:
                tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, path)
        except OSError:
            self.enabled = False

    def get_analysis(self, scope: str) -> Optional[dict]:
        """The per-test result cache entry of the configuration ``scope`` (``hermetic.engine.reuse``;
        its bytes: ``hermetic.engine.entry``)."""
        if not self.enabled:
            return None
        try:
            data = (self.dir / "analysis" / f"{scope}.bin").read_bytes()
        except OSError:
            return None
        return loads(data)

    def put_analysis(self, scope: str, entry: dict) -> None:
        if not self.enabled:
            return
        self._write(self.dir / "analysis" / f"{scope}.bin", dumps(entry))

    def get_result(self, key: str) -> Optional[dict]:
        """A whole run's result stored under ``key`` (every input hashed into it)."""
        if not self.enabled:
            return None
        try:
            data = marshal.loads((self.dir / "runs" / f"{key}.bin").read_bytes())
        except (OSError, ValueError, EOFError, TypeError):
            return None
        return data if isinstance(data, dict) and _RESULT_KEYS <= set(data) else None

    def put_result(self, key: str, result: dict) -> None:
        """Store a whole run's result (plain data: ``marshal``, five times faster to write than
        JSON, 20 ms on pytest's tree). Only the latest run's: the cache does not grow with every edit."""
        self._write(self.dir / "runs" / f"{key}.bin", marshal.dumps(result), replace_siblings=True)
