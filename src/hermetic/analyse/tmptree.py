"""What the test's own ``tmp_path`` holds: it is a new empty folder, so a path under it exists
only where the run made it (``(tmp_path / "a").mkdir()``, ``p.touch()``, ``p.write_text(...)``),
and an existence question about a path under it is answered from what the run made.

Paths are named by their part under the folder: the fixture's value is the atom
``Origin("test-value", "tmp_path", value=TMP)``, and a join with whole string literals
(``tmp_path / "a"``, ``Path(tmp_path, "a", "b")``, ``p.joinpath("c")``, ``os.path.join``)
gives ``value=TMP + "a/b"``; ``str()``, ``os.fspath``, ``abspath`` and ``resolve()`` keep it, ``.parent``
goes up a part. A join with anything else gives the unmarked atom (``value=None``): some path
under the folder, about which nothing is answered.

The tree (``Ctx.tmp_tree``) is a sorted tuple of ``(part, kind)``: ``"file"`` or ``"dir"``
made for certain (with every folder above it), ``"maybe"`` where the run may have made or
removed something (a write on a way the test's values do not decide, an operation the catalogue
does not say what it makes): nothing at or under it is answered. ``("", "maybe")`` is a tree
about which nothing is known: a write or subprocess whose target the analysis cannot name, or a
library call handed a path under the folder, may have made anything in it.
"""
from __future__ import annotations

import dataclasses
import posixpath
from typing import List, Optional, Tuple

from .literals import _literal_str, relative_literal
from .values import COUNTED, EXACT, EXISTS_QUESTIONS, PREFIX, Origin, V

TMP = "tmp "   # the value mark of a path under the test's own tmp_path (``TMP + part``)
UNKNOWN_TREE = (("", "maybe"),)
_ROOTS = ("tmp_path",)
# functions whose result is the path they are given (tmptree keeps its part under tmp_path)
COMMON_PATH = ("os.path.commonpath", "posixpath.commonpath")
SAME_PATH = {"builtins.str", "os.fspath", "os.path.abspath", "os.path.realpath", "os.path.normpath",
             "os.fsdecode"}
# library calls that write no files (handing them a path in tmp_path leaves it as it was)
NO_WRITES = ("builtins.", "typing.", "re.", "fnmatch.", "json.dumps", "textwrap.", "string.", "math.",
             "operator.", "functools.", "itertools.", "collections.", "posixpath.", "os.path.", "pathlib.Pure",
             "pytest.", "unittest.mock.", "warnings.", "logging.getLogger", "shlex.", "urllib.parse.")


# methods of an object the analysis does not follow that look a key up and write nothing
# (``by_file.get(path)``): handing them a path in tmp_path leaves it as it was
LOOKUPS = frozenset({".get", ".__getitem__", ".__contains__", ".index", ".count", ".setdefault", ".pop"})


FRESH = "\x00"   # a part starting so is a new folder of the test's own, not in tmp_path (``fresh_root``)
# what makes a fresh folder -> the expression its value is named by
_FRESH_MAKERS = {"tempfile.mkdtemp": "tempfile.mkdtemp", "tmp_path_factory": "tmp_path_factory.mktemp()",
                 "tmpdir_factory": "tmpdir_factory.mktemp()"}
FRESH_EXPRS = frozenset(_FRESH_MAKERS.values())


def fresh_root(ctx, maker: str, is_path: bool) -> V:
    """What ``tempfile.mkdtemp()`` / ``tmp_path_factory.mktemp(name)`` (``maker``: a key of
    ``_FRESH_MAKERS``) returns: a new
    empty folder of the test's. The tree holds it as a part of its own (``FRESH`` and a number),
    beside tmp_path's, so what the run makes in it is answered as in tmp_path; its text is an
    absolute path whose name is not known."""
    n = sum(1 for p, _k in ctx.tmp_tree if p.startswith(FRESH) and "/" not in p)
    part = f"{FRESH}{n}"
    ctx.tmp_tree = made(ctx.tmp_tree, part, "dir")
    return V(frozenset([Origin("test-value", expr=_FRESH_MAKERS[maker], value=TMP + part)]), is_path)


def is_fresh_root(part: str) -> bool:
    """``part`` is a fresh folder itself, whose name is not known."""
    return part.startswith(FRESH) and "/" not in part


def _root_of(part: str) -> str:
    """The part of the folder ``part`` is in: ``""`` (tmp_path) or a fresh folder's."""
    return part.split("/", 1)[0] if part.startswith(FRESH) else ""


def root_atom(expr: str) -> Origin:
    """The fixture's value: the folder itself."""
    return Origin("test-value", expr=expr, value=TMP if expr in _ROOTS else None)


def part_of(a) -> Optional[str]:
    """The part under tmp_path that atom ``a`` names (``""`` the folder), or None."""
    if isinstance(a, Origin) and a.kind == "test-value" and a.value is not None and a.value.startswith(TMP):
        return a.value[len(TMP):]
    return None


def marked_only(v: Optional[V]) -> Optional[List[str]]:
    """The parts of ``v`` when every atom is a path under tmp_path with a known part, else None."""
    if v is None or not v.atoms:
        return None
    parts = [part_of(a) for a in v.atoms]
    return None if any(p is None for p in parts) else parts


def relative_parts(cwd: Optional[V], target: Optional[V]) -> Optional[List[str]]:
    """The parts of a relative literal ``target`` (also a constant or default argument bound to
    one) while the working directory ``cwd`` is a path in tmp_path with a known part
    (``with work_in(str(tmp_path / "t")):`` then ``os.path.isdir("hooks")``); else None."""
    bases = marked_only(cwd)
    rel = relative_literal(target, through=True) if bases is not None else None
    if rel is None:
        return None
    text = rel.value
    out = []
    for base in bases:
        joined = posixpath.normpath(posixpath.join(base, text)) if base else posixpath.normpath(text)
        if joined == ".." or joined.startswith("../") or _root_of(joined) != _root_of(base):
            return None
        out.append("" if joined == "." else joined)
    return out


def under_tmp(v: Optional[V]) -> bool:
    """Some atom of ``v`` is a path in tmp_path (known part or not)."""
    return v is not None and any(isinstance(a, Origin) and a.kind == "test-value" and (a.expr in _ROOTS or a.expr in FRESH_EXPRS)
                                 for a in v.atoms)


def collapse(a: Origin) -> Origin:
    """A value built from a path under tmp_path with other parts: some path under it."""
    return dataclasses.replace(a, value=None)


def child(a: Origin, texts: List[str]) -> Optional[Origin]:
    """``a`` joined with the relative texts ``texts``; None when one is absolute or climbs out."""
    part = part_of(a)
    if part is None or any(t.startswith("/") for t in texts):
        return None
    joined = posixpath.normpath(posixpath.join(part, *texts)) if texts else part
    if joined == ".":
        joined = ""
    if joined.startswith("..") or _root_of(joined) != _root_of(part):
        return None
    return dataclasses.replace(a, value=TMP + joined)


BASETEMP = ".parent"   # the expression suffix of pytest's base temporary folder for the run


def is_basetemp(a: Origin) -> bool:
    """``a`` is pytest's base temporary folder for the run (``tmp_path.parent``: ``parent``)."""
    return a.kind == "test-value" and a.expr.endswith(BASETEMP) and a.value is None


def parent(a: Origin) -> Origin:
    """``.parent`` of a path under tmp_path: a part up. The parent of tmp_path (or of a folder
    ``tmp_path_factory.mktemp()`` made) is pytest's base temporary folder, made new for the run:
    the test's run's, not the machine's (kept as a test value, no part known). Above it, and
    above a ``mkdtemp()`` folder, is the machine's: a literal absolute path, a fixed location."""
    part = part_of(a)
    if part is None:
        if is_basetemp(a):
            return Origin("literal", expr=f"{a.expr}.parent", path=a.path, line=a.line,
                          value="/tmp/pytest-of-<user>", in_test=a.in_test)
        return a
    if part == _root_of(part):
        if a.expr == "tempfile.mkdtemp":
            return Origin("literal", expr=f"{a.expr}().parent", path=a.path, line=a.line, value="/tmp",
                          in_test=a.in_test)
        return Origin("test-value", expr=f"{a.expr}{BASETEMP}", path=a.path, line=a.line, in_test=a.in_test)
    return dataclasses.replace(a, value=TMP + posixpath.dirname(part))


def parents(a: Origin) -> Optional[tuple]:
    """``p.parents`` of a path under tmp_path with a known part: its folders in tmp_path, nearest
    first, then one atom standing for the folders above tmp_path (a tuple marked ``PREFIX``)."""
    part = part_of(a)
    if part is None:
        return None
    folders = []
    top = _root_of(part)
    while part and part != top:
        part = posixpath.dirname(part)
        folders.append(dataclasses.replace(a, value=TMP + part))
    return ("seq", "tuple", tuple(V(frozenset([f]), True) for f in folders) + (V(frozenset([collapse(a)]), True),),
            PREFIX)


def compared(op: str, left: V, right: V) -> Optional[bool]:
    """``left == right`` / ``!=`` of two paths in tmp_path with known parts (of one kind: both
    paths or both strings) or of two lists of them known by their items, and ``left in right`` / ``not in`` of one such path in tuples or
    lists of such paths known by their items (``p.parents``: the folders above tmp_path are none
    of them); None otherwise."""
    if op in ("Equal", "NotEqual") and len(left.atoms) == len(right.atoms) == 1:
        (la,), (ra,) = left.atoms, right.atoms
        if all(isinstance(x, tuple) and x[0] == "seq" and len(x) > 3 and x[3] in (EXACT, COUNTED) for x in (la, ra)):
            # lists of such paths: of other lengths, or item by item (``dirs != [ancestor]``)
            if len(la[2]) != len(ra[2]):
                return op == "NotEqual"
            same = [compared("Equal", x, y) for x, y in zip(la[2], ra[2])]
            if None in same:
                return None
            return all(same) == (op == "Equal")
    lp = marked_only(left)
    if lp is None or len(lp) != 1:
        return None
    if op in ("Equal", "NotEqual"):
        rp = marked_only(right)
        if rp is None or len(rp) != 1 or left.is_path != right.is_path:
            return None
        return (lp[0] == rp[0]) == (op == "Equal")
    if op not in ("In", "NotIn") or not right.atoms:
        return None
    found = set()
    for a in right.atoms:
        if not (isinstance(a, tuple) and a[0] == "seq" and len(a) > 3 and a[3] in (PREFIX, EXACT, COUNTED)):
            return None
        items = a[2][:-1] if a[3] == PREFIX else a[2]
        parts = [marked_only(x) for x in items]
        if any(p is None or len(p) != 1 or x.is_path != left.is_path for p, x in zip(parts, items)):
            return None
        found.add(any(p[0] == lp[0] for p in parts))
    return None if len(found) != 1 else found.pop() == (op == "In")


def under(part: str, top: str) -> bool:
    """Part ``part`` is ``top`` or below it (``""``: the folder itself is above all)."""
    return top == "" or part == top or part.startswith(top + "/")


def made(tree: tuple, part: str, kind: str) -> tuple:
    """The tree after ``part`` was made as ``kind`` (``"file"`` / ``"dir"``) for certain."""
    if tree == UNKNOWN_TREE:
        return tree
    entries = dict(tree)
    if entries.get(part) == "maybe":
        return tree   # what was there is not known: neither is what it is now
    up = posixpath.dirname(part)
    while up:
        if entries.get(up) != "maybe":
            entries[up] = "dir"
        up = posixpath.dirname(up)
    entries[part] = kind
    return tuple(sorted(entries.items()))


def maybe(tree: tuple, part: Optional[str]) -> tuple:
    """The tree after something may have changed at ``part`` (None: anywhere in the folder)."""
    if part is None or part == "":
        return UNKNOWN_TREE
    entries = {p: k for p, k in tree if not under(p, part)}
    entries[part] = "maybe"
    return tuple(sorted(entries.items()))


def removed(tree: tuple, part: str) -> tuple:
    """The tree after ``part`` was removed for certain: nothing at or under it."""
    if tree == UNKNOWN_TREE or part == "":
        return UNKNOWN_TREE
    if any(k == "maybe" and under(part, p) for p, k in tree):
        return tree
    return tuple((p, k) for p, k in tree if not under(p, part))


def answer(tree: tuple, question: str, parts: List[str]) -> Optional[bool]:
    """What the existence question ``question`` (``exists``, ``is_file`` ...) answers about every
    one of ``parts``, when the tree knows and they agree; else None."""
    wanted = EXISTS_QUESTIONS.get(question, "?")
    if wanted == "?":
        return None
    answers = set()
    for part in parts:
        kind = _kind(tree, part)
        if kind is None:
            return None
        answers.add(kind != "absent" and (wanted is None or kind == wanted))
    return answers.pop() if len(answers) == 1 else None


def _kind(tree: tuple, part: str) -> Optional[str]:
    """``"file"``, ``"dir"``, ``"absent"``, or None when the tree does not know."""
    if part == "":
        return "dir"
    below = False
    for p, k in tree:
        if p == part:
            return None if k == "maybe" else k
        if under(part, p):   # a folder or file above it
            if k == "maybe":
                return None
            if k == "file":
                return "absent"
        elif p.startswith(part + "/"):
            if k == "maybe":
                return None
            below = True
    return "dir" if below else "absent"


def parts_of_texts(args: List[V]) -> Optional[Tuple[Origin, List[str]]]:
    """``(atom, texts)`` when ``args`` join a path under tmp_path (one marked atom, the last
    absolute part) with whole string literals after it; else None."""
    start = None
    for i, v in enumerate(args):
        if len(v.atoms) == 1 and part_of(next(iter(v.atoms))) is not None:
            start = i
    if start is None:
        return None
    texts = []
    for v in args[start + 1:]:
        t = _literal_str(v)
        if t is None:
            return None
        texts.append(t)
    return next(iter(args[start].atoms)), texts


def joined(args: List[V], is_path: bool) -> Optional[V]:
    """``tmp_path / "a"``, ``Path(p, "b")``, ``os.path.join(p, "c")`` of a path under tmp_path and
    whole string literals: the path they name; None otherwise."""
    found = parts_of_texts(args)
    if found is None:
        return None
    a = child(found[0], found[1])
    return None if a is None else V(frozenset([a]), is_path)


# characters the text of a tmp_path may hold before its part (pytest's base folder, the
# test's name cut to 30 word characters, a number): a separator of none of them is only found
# in the part
_ROOT_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./")


def str_answer(name: str, parts: List[str], arg: str):
    """What the string method ``name`` answers with the whole literal ``arg`` for the text of
    every path of ``parts`` (an absolute path ending in the part): ``startswith`` / ``endswith``
    a bool, ``find`` an int, ``split`` / ``partition`` ``"same"`` (one item, the path itself; the
    path and two empty strings); None when not known."""
    answers = set()
    for part in parts:
        if name == "startswith":   # the text starts with "/" (or a drive letter, on Windows)
            r = True if arg == "" else (False if arg[0] not in "/\\" and not arg[0].isalnum() else None)
        elif name == "endswith":
            known = part[len(_root_of(part)):].lstrip("/")   # a fresh folder's own name is not known
            r = known.endswith(arg) if known and len(arg) <= len(known) and "/" not in arg else None
        elif name in ("find", "split", "rsplit", "partition", "rpartition") and arg and not (set(arg) & _ROOT_CHARS):
            r = None if arg in part else (-1 if name == "find" else "same")
        else:
            r = None
        if r is None:
            return None
        answers.add(r)
    return answers.pop() if len(answers) == 1 else None


def handed(ctx, args: List[V], kwargs, call: str = "") -> None:
    """A call the analysis does not follow (``call``: a library function's dotted name, ""
    for one it cannot name) was handed a path in tmp_path: it may have made anything there."""
    if ctx.tmp_tree == UNKNOWN_TREE or (call and call.startswith(NO_WRITES)) or call in LOOKUPS:
        return
    if any(under_tmp(v) for v in args) or any(under_tmp(v) for v in kwargs.values()):
        ctx.tmp_tree = UNKNOWN_TREE


def same(call: str, args: List[V]) -> Optional[V]:
    """``str(p)``, ``os.path.abspath(p)`` ... of a path under tmp_path with a known part: the same
    path (as a string); ``os.path.commonpath([p, q])`` of such paths: the one their parts share.
    None otherwise."""
    if call in SAME_PATH and len(args) == 1 and marked_only(args[0]):
        return args[0].with_path(False)
    if call in COMMON_PATH and len(args) == 1 and len(args[0].atoms) == 1:
        (seq,) = args[0].atoms
        items = seq[2] if isinstance(seq, tuple) and seq[0] == "seq" else ()
        parts = [marked_only(v) for v in items]
        if items and all(p is not None and len(p) == 1 for p in parts):
            shared = posixpath.commonpath(["/" + p[0] for p in parts])[1:]   # "/" for the folder itself
            return V(frozenset([dataclasses.replace(next(iter(items[0].atoms)), value=TMP + shared)]), False)
    return None
