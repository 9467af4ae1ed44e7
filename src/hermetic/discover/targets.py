"""What ``hermetic check`` was asked to look at: its targets (paths and node ids) and how they
name files and tests.

A target is a path (file or folder) or a pytest node id (``path::Class::test``), relative to
the working directory. ``split_targets`` resolves them; ``rooted_node_id`` and
``node_matches`` compare a target's node id with the report's (rootdir-relative) ones.
``UsageError`` is bad command-line input (exit 2), raised here and by collection.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import List, Optional, Sequence, Tuple


class UsageError(Exception):
    """Bad command-line input (exit 2)."""


def display_path(path: Path, cwd: Path) -> str:
    try:
        return path.relative_to(cwd).as_posix()
    except ValueError:
        return Path(os.path.relpath(path, cwd)).as_posix()


def split_targets(targets: Sequence[str], cwd: Path) -> Tuple[List[Path], List[Tuple[Path, Optional[str], str]]]:
    """The targets' paths (resolved against ``cwd``); and where any target is a node id, every
    target as ``(its file's or folder's resolved path, what follows its first "::" or None for a
    plain path, the target as given)``, else no entries."""
    paths: List[Path] = []
    picks: List[Tuple[Path, Optional[str], str]] = []
    for t in targets:
        file_part, sep, rest = t.partition("::")
        p = (cwd / file_part).resolve()
        if not p.exists():
            raise UsageError(f"{file_part}: no such file or folder")
        paths.append(p)
        picks.append((p, rest if sep else None, t))
    return paths, picks if any(rest is not None for _p, rest, _t in picks) else []


def common_dir(paths: List[Path]) -> Path:
    dirs = [p if p.is_dir() else p.parent for p in paths]
    common = Path(os.path.commonpath([str(d) for d in dirs]))
    return common


def is_under(p: Path, d: Path) -> bool:
    try:
        p.relative_to(d)
        return p != d
    except ValueError:
        return False


def rooted_node_id(path: Path, rest: str, root: Path) -> Optional[str]:
    """A node id as the report spells it (the file relative to the rootdir), from its file's
    resolved path: ``./tests/x.py``, ``tests//x.py``, ``../tests/x.py`` from ``tests/`` and an
    absolute path all name the same test, as they do for pytest. None outside the rootdir."""
    try:
        rel = path.relative_to(root).as_posix()
    except ValueError:
        return None
    return f"{rel}::{rest}"


def node_matches(node_id: str, want: str) -> bool:
    want = want.split("[", 1)[0]   # a parameter id selects the test (its cases are one item here)
    return node_id == want or node_id.startswith(want + "::")
