"""The summary cache: one JSON file per summary in ``.hermetic_cache/`` at the project root.

Keyed by the file's bytes, its module name and path, and the summary format and tool
versions, so an unchanged file is never parsed twice. The folder carries its own
``.gitignore``. Summaries pass through JSON on both paths (fresh and cached), so a warm run
sees exactly the data a cold run sees.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Dict, Optional

from . import __version__
from .summary import SUMMARY_VERSION

CACHE_DIR = ".hermetic_cache"


_STAMP: Optional[str] = None


def _tool_stamp() -> str:
    """The tool's version plus a hash of its own files' contents: an edited checkout of hermetic
    never reuses results of the code it replaced, and the same release on another machine (a CI
    job restoring the cache) hits. About 1 ms."""
    global _STAMP
    if _STAMP is None:
        here = Path(__file__).resolve().parent
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
        isinstance(data.get(k), t) for k, t in (("module", str), ("path", str), ("body", list),
                                                 ("functions", dict), ("classes", dict)))


_LEAVES: Dict[tuple, tuple] = {}   # short tuples of plain values seen so far: one object each
_LEAF_TYPES = (str, int, type(None))   # exact types: not bool, since (True,) == (1,) would share


def compact(obj):
    """A decoded summary with its lists as tuples, its strings interned and its short tuples of
    plain values (``("name", "self")``, ...) shared: the same data in under half the memory
    (Django's 2,627 summaries: 418 MiB as decoded, 186 MiB as tuples, about 17% less again with
    the shared tuples). Every summary the analysis sees has passed through here."""
    intern = sys.intern
    leaves = _LEAVES
    if len(leaves) > 2_000_000:
        leaves.clear()

    def conv(o):
        if type(o) is list:
            t = tuple([conv(x) if type(x) in (list, dict) else (intern(x) if type(x) is str else x) for x in o])
            if len(t) <= 4:
                for x in t:
                    if type(x) not in _LEAF_TYPES:
                        return t
                return leaves.setdefault(t, t)
            return t
        return {intern(k): (conv(v) if type(v) in (list, dict) else (intern(v) if type(v) is str else v))
                for k, v in o.items()}

    return conv(obj) if type(obj) in (list, dict) else obj


class SummaryCache:
    def __init__(self, root: Path, enabled: bool = True, directory: Optional[Path] = None):
        top = directory if directory is not None else root / CACHE_DIR
        self.dir = top / f"v{SUMMARY_VERSION}"
        # a tree without the owner's write bit is read-only material: leave it untouched (even as root)
        try:
            writable = bool(root.stat().st_mode & 0o200) or directory is not None
        except OSError:
            writable = directory is not None
        self.enabled = enabled and writable
        self.hits = 0

    def key(self, data: bytes, module: str, path: str, is_package: bool) -> str:
        h = hashlib.sha256()
        h.update(f"{_tool_stamp()}\0{SUMMARY_VERSION}\0{module}\0{path}\0{is_package}\0".encode())
        h.update(data)
        return h.hexdigest()

    def get(self, key: str) -> Optional[dict]:
        if not self.enabled:
            return None
        p = self.dir / key[:2] / f"{key}.json"
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):   # missing, unreadable, or corrupt: parse the file again
            return None
        if not _is_summary(data):        # valid JSON of another shape (a foreign entry): ignored
            return None
        self.hits += 1
        return compact(data)

    def put_text(self, key: str, text: str) -> dict:
        """Store a summary given as JSON text; return it decoded (what a later hit returns)."""
        self._write(self.dir / key[:2] / f"{key}.json", text)
        return compact(json.loads(text))

    def _write(self, path: Path, text: str, replace_siblings: bool = False) -> None:
        """Write atomically (a temporary file renamed into place: safe under concurrent runs);
        ``replace_siblings`` first removes the other entries of that folder. A tree that cannot
        be written turns the cache off for the run."""
        if not self.enabled:
            return
        try:
            top = self.dir.parent
            if not (top / ".gitignore").exists():   # `hermetic clean` recognises the folder by it
                top.mkdir(parents=True, exist_ok=True)
                (top / ".gitignore").write_text("# created by hermetic\n*\n", encoding="utf-8")
            path.parent.mkdir(parents=True, exist_ok=True)
            if replace_siblings:
                for old in path.parent.glob("*.json"):
                    old.unlink()
            tmp = path.parent / f"{path.stem}.{os.getpid()}.tmp"
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, path)
        except OSError:
            self.enabled = False

    def get_result(self, key: str) -> Optional[dict]:
        """A whole run's result stored under ``key`` (every input hashed into it)."""
        if not self.enabled:
            return None
        try:
            data = json.loads((self.dir / "runs" / f"{key}.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) and _RESULT_KEYS <= set(data) else None

    def put_result(self, key: str, result: dict) -> None:
        # the latest run only: the cache does not grow with every edit
        self._write(self.dir / "runs" / f"{key}.json", json.dumps(result, separators=(",", ":")),
                    replace_siblings=True)
