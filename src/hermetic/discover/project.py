"""The project on disk: which files to analyse, their module names, which are tests.

Module names follow pytest's default ("prepend") import mode: a file in a package is named
from the first folder above it without ``__init__.py`` (its basedir); ``pythonpath``
entries and a ``src/`` folder are import roots too (src and flat layouts, namespace
packages under an import root).
"""
from __future__ import annotations

import fnmatch
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional

from ..config import DEFAULT_EXCLUDES, Config, PytestConfig
from .patterns import gitignore_spec

LEFT_OUT = "left-out"   # ``Project.shipped``: a folder there that the walk did not enter


@dataclass(eq=False)
class SourceFile:
    path: Path          # absolute
    rel: str            # relative to the project root, "/" separators
    module: str         # canonical dotted name
    aliases: List[str]  # other names it can be imported by
    is_package: bool
    is_test: bool       # a test module (pytest's python_files)
    is_conftest: bool
    in_test_tree: bool  # test code: test modules, conftests and helpers beside them


@dataclass
class Project:
    root: Path                       # pytest's rootdir
    files: List[SourceFile] = field(default_factory=list)
    by_module: Dict[str, SourceFile] = field(default_factory=dict)
    by_rel: Dict[str, SourceFile] = field(default_factory=dict)
    unreadable: List[OSError] = field(default_factory=list)   # folders that could not be listed
    # what the checkout ships (``analyse.shipped``): relative path -> "file" / "dir" / "left-out" (a
    # folder the walk did not enter: hidden, excluded, ``__pycache__``), and a hash
    # of those names with each JSON file's size and modification time
    shipped: Dict[str, str] = field(default_factory=dict)
    shipped_digest: str = ""


def _excluded(rel_parts: List[str], spec, prefix: List[str] = ()) -> bool:
    if any(p in DEFAULT_EXCLUDES for p in rel_parts):
        return True
    if spec is not None:
        rel = "/".join(list(prefix) + list(rel_parts))
        if spec.match_file(rel) or spec.match_file(rel + "/"):
            return True
    return False


def _norecurse(name: str, patterns: List[str]) -> bool:
    return any(fnmatch.fnmatch(name, p) for p in patterns)


def discover(root: Path, config: Config, pytest_cfg: PytestConfig,
             collect_in: Optional[List[Path]] = None, skip: Optional[Path] = None) -> Project:
    """Walk ``root`` (sorted, so the result is stable) and name every Python file.

    A file matching ``python_files`` is a test module where pytest would collect it: under one
    of ``collect_in`` (the targets given), else under the ``testpaths`` that exist, else
    anywhere; a file ``collect_in`` names itself is one whatever its name (pytest collects a file
    given on its command line). ``src/app/ab_test.py`` is then code under test, not a test, when the tests live
    in ``tests/``. ``skip``: a folder left out of the walk (the cache folder, which each run
    writes)."""
    spec = None
    prefix: List[str] = []
    patterns = list(config.exclude)
    if patterns:
        # exclude patterns are relative to the configuration file's folder
        base = (config.root or root).resolve()
        try:
            prefix = list(root.resolve().relative_to(base).parts)
        except ValueError:
            prefix = []
        spec = gitignore_spec(patterns)
        if prefix and _excluded([], spec, prefix):
            # the folder the user asked to check is itself excluded: check it anyway, with the
            # patterns that do not exclude it
            keep = [p for p in patterns
                    if not gitignore_spec([p]).match_file("/".join(prefix) + "/")]
            spec = gitignore_spec(keep) if keep else None
    proj = Project(root=root)
    import_roots = [root / p for p in pytest_cfg.pythonpath]
    if (root / "src").is_dir() and (root / "src") not in import_roots:
        import_roots.append(root / "src")
    test_dirs = pytest_cfg.testpath_dirs(root)
    collect_dirs = collect_in if collect_in else test_dirs
    paths: List[Path] = []
    shipped = proj.shipped
    skipped = os.path.abspath(skip) if skip is not None else None
    stamp = hashlib.sha256()
    # a folder that cannot be listed is an error for the report, not files silently missing
    for dirpath, dirnames, filenames in os.walk(root, onerror=proj.unreadable.append):
        d = Path(dirpath)
        rel_parts = [] if d == root else list(d.relative_to(root).parts)
        keep = []
        for name in sorted(dirnames):
            if _excluded(rel_parts + [name], spec, prefix) or name.startswith(".") or name == "__pycache__" or \
                    skipped is not None and os.path.join(dirpath, name) == skipped:
                rel = "/".join(rel_parts + [name])
                # there, not walked: a listing of its folder is not known whole (not in the digest:
                # runs and tools make such folders, the cache's own too)
                shipped[rel] = LEFT_OUT
                continue
            keep.append(name)
            rel = "/".join(rel_parts + [name])
            shipped[rel] = "dir"
            stamp.update(f"{rel}\0".encode())
        dirnames[:] = keep
        for name in sorted(filenames):
            rel = "/".join(rel_parts + [name])
            shipped[rel] = "file"   # an excluded file is still in the checkout: only its code is not read
            stamp.update(f"{rel}\0".encode())
            if name.endswith(".py"):
                if not _excluded(rel_parts + [name], spec, prefix):
                    paths.append(d / name)
            elif name.endswith(".json"):
                try:
                    st = os.stat(d / name)
                    stamp.update(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
                except OSError:
                    pass
    proj.shipped_digest = stamp.hexdigest()   # the walk's order is sorted: the same tree, the same digest
    paths.sort()
    taken = set()
    root_n = len(root.parts)
    has_init: Dict[Path, bool] = {}   # folder -> holds an __init__.py (one stat per folder)
    for p in paths:
        rel_parts = p.parts[root_n:]
        rel = "/".join(rel_parts)
        names = _module_names(p, root, import_roots, has_init)
        test_named = any(_fnmatch_ex(pat, p) for pat in pytest_cfg.python_files)
        if not names and "." not in p.stem and test_named:
            # a test module named like no identifier ("test_a b.py", "test_a-b.py"): pytest imports
            # it all the same (nothing else can), under its stem
            names = [n for n in [_dotted(p, root, loose=True)] if n]
        if not names:
            continue
        if p.name == "conftest.py" or names[0] in taken:
            # pytest imports each conftest under a name of its own; two test modules of the
            # same basename get distinct names here too
            unique = _dotted(p, root) or rel
            names = [unique] + [n for n in names if n != unique and n not in taken]
            if unique in taken:
                names = [rel] + names[1:]
        taken.add(names[0])
        is_pkg = p.name == "__init__.py"
        base = p.name
        is_conftest = base == "conftest.py"
        # a file named on the command line is collected whatever its name, as pytest does
        named = bool(collect_in) and any(p == t for t in collect_in)
        is_test = not is_conftest and (named or test_named and (
            not collect_dirs or any(p == t or _is_under(p, t) for t in collect_dirs)))
        if is_test and any(_norecurse(part, pytest_cfg.norecursedirs) for part in rel_parts[:-1]):
            is_test = False
        in_tree = is_test or is_conftest or bool(set(rel_parts[:-1]) & {"tests", "test"}) or any(
            _is_under(p, t) for t in test_dirs)
        sf = SourceFile(p, rel, names[0], names[1:], is_pkg, is_test, is_conftest, in_tree)
        proj.files.append(sf)
        proj.by_rel[rel] = sf
    for sf in proj.files:  # canonical names first, then aliases, first come first served
        proj.by_module.setdefault(sf.module, sf)
    for sf in proj.files:
        for a in sf.aliases:
            proj.by_module.setdefault(a, sf)
    return proj


def _fnmatch_ex(pattern: str, path: Path) -> bool:
    """pytest's python_files matching: a pattern without a separator matches the file
    name; one with a separator matches the end of the path."""
    if "/" not in pattern and os.sep not in pattern:
        return fnmatch.fnmatch(path.name, pattern)
    if not os.path.isabs(pattern):
        pattern = f"*/{pattern}"
    return fnmatch.fnmatch(path.as_posix(), pattern)


def _is_under(p: Path, d: Path) -> bool:
    """``p.relative_to(d)`` succeeds. By parts, on POSIX (case-sensitive there, as pathlib
    compares), without parsing ``d`` again: discovery asks this for every file and root."""
    if os.name != "posix":
        try:
            p.relative_to(d)
            return True
        except ValueError:
            return False
    n = len(d.parts)
    return p.parts[:n] == d.parts


def _dotted(p: Path, base: Path, loose: bool = False) -> Optional[str]:
    """The dotted name of ``p`` (a ``.py`` file under ``base``) relative to ``base``; with
    ``loose``, the file's own stem need not be an identifier."""
    parts = list(p.parts[len(base.parts):]) if os.name == "posix" else list(p.relative_to(base).parts)
    if parts:
        parts[-1] = Path(parts[-1]).stem   # what with_suffix("") leaves
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    if not parts or not all(part.isidentifier() for part in (parts[:-1] if loose else parts)):
        return None
    return ".".join(parts)


def _init_in(folder: Path, has_init: Dict[Path, bool]) -> bool:
    found = has_init.get(folder)
    if found is None:
        found = has_init[folder] = (folder / "__init__.py").is_file()
    return found


def _module_names(p: Path, root: Path, import_roots: List[Path], has_init: Dict[Path, bool]) -> List[str]:
    names: List[str] = []
    for r in import_roots:
        if _is_under(p, r):
            n = _dotted(p, r)
            if n and n not in names:
                names.append(n)
    # pytest's basedir: the first folder upwards without __init__.py
    base = p.parent
    while _init_in(base, has_init) and base != root and base.parent != base:
        base = base.parent
    if _init_in(base, has_init) and base == root:
        base = root.parent
    if _is_under(p, base):
        n = _dotted(p, base)
        if n and n not in names:
            names.append(n)
    if _is_under(p, root):
        n = _dotted(p, root)
        if n and n not in names:
            names.append(n)
    if not names:
        stem = p.stem if p.name != "__init__.py" else p.parent.name
        if stem.isidentifier():
            names.append(stem)
    return names
