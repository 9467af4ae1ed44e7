"""Origins through value flow (contract section 3 and 8).

The value-flow call lists (the result of a path constructor, ``os.path.join``, ``str`` ...
carries its first argument's origins), and how a derived value keeps, climbs (``dirname``),
joins and wraps (a module constant) the origins of what it was computed from.
"""
from __future__ import annotations

import dataclasses
import posixpath
import re
from pathlib import PurePosixPath
from typing import Dict, List, Optional

from .literals import _literal_str
from .tmptree import collapse, is_basetemp, part_of, parent as tmp_parent
from .values import (DOUBLE, EXISTING, INSTANCE, UNKNOWN_V, Origin, V, _short, anchored_path, holds_item, is_counted, is_exact, lit, seq_atom, union,
                     shipped)


# value-flow functions (contract section 3): the result carries the first argument's origins
_PATH_CTORS = {"pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath", "pathlib.WindowsPath",
               "pathlib.PurePosixPath", "pathlib.PureWindowsPath", "py.path.local", "anyio.Path", "trio.Path"}
_HEAD_FUNCS = {"os.path.join", "os.path.abspath", "os.path.realpath", "os.path.normpath", "os.path.dirname",
               "os.fspath", "os.fsencode", "os.fsdecode", "builtins.str", "builtins.bytes", "posixpath.join",
               "os.path.relpath", "builtins.repr", "builtins.format", "shlex.split", "shlex.join",
               "shlex.quote", "urllib.parse.urljoin", "builtins.list", "builtins.tuple", "builtins.sorted",
               "copy.copy", "copy.deepcopy", "builtins.dict", "os.path.split", "posixpath.split", "os.path.splitext",
               "posixpath.splitext",
               "os.path.commonpath", "posixpath.commonpath", "os.path.basename", "posixpath.basename"}
_DICT_CTORS = {"builtins.dict", "collections.defaultdict", "collections.OrderedDict", "collections.Counter",
               "weakref.WeakValueDictionary", "weakref.WeakKeyDictionary"}
_CONTAINER_CTORS = _DICT_CTORS | {"builtins.list", "builtins.set", "collections.deque", "weakref.WeakSet"}
_PATH_CLASSES = ("pathlib.Path", "pathlib.PosixPath", "pathlib.WindowsPath", "pathlib.PurePath")
_PATH_ATTRS = {"parent", "parents", "name", "stem", "suffix", "anchor", "root", "drive", "parts",
               "strpath", "dirname"}   # the last two: py.path.local's, strings
_PATH_VALUE_METHODS = {"joinpath", "with_name", "with_suffix", "with_stem", "resolve", "absolute", "relative_to",
                       "as_posix", "expanduser", "__fspath__", "join", "dirpath", "mktemp",
                       "getbasetemp", "mkdir_p"}


_TEMP_FUNCS = {"tempfile.mkdtemp", "tempfile.mkstemp", "tempfile.TemporaryDirectory", "tempfile.NamedTemporaryFile",
               "tempfile.TemporaryFile", "tempfile.SpooledTemporaryFile", "tempfile.mktemp"}
_HOME_FUNCS = {"pathlib.Path.home", "os.path.expanduser", "click.get_app_dir", "typer.get_app_dir"}
_HOME_PREFIXES = ("platformdirs.", "appdirs.", "xdg_base_dirs.", "xdg.")
_CWD_FUNCS = {"pathlib.Path.cwd", "os.getcwd", "os.getcwdb"}


def wrap_constant(val: V, name: str, path: str, line: int, module: Optional[str] = None) -> V:
    """A module-level (or class-level) binding: data origins become one module-constant
    origin that remembers what it was computed from (contract section 8, origin.kind)."""
    origins = tuple(sorted(val.origins(), key=_origin_sort))
    refs = []
    for a in val.refs():
        if a[0] == "seq":
            refs.append(("seq", a[1], tuple(wrap_constant(x, name, path, line, module) for x in a[2])) + a[3:])
        elif a[0] == "dict":
            refs.append(("dict", tuple((k, wrap_constant(x, name, path, line, module)) for k, x in a[1])))
        else:
            refs.append(a)
    atoms = list(refs)
    if origins:
        if all(o.kind in ("unknown",) for o in origins):
            atoms.extend(origins)
        elif all(o.kind == "test-value" for o in origins):
            atoms.extend(origins)
        else:
            atoms.append(Origin("module-constant", expr=name, path=path, line=line,
                                value=_const_value(origins), inner=origins, module=module))
    return V(frozenset(atoms), val.is_path)


def _control_reason(target: Optional[V]) -> str:
    """Which controlled origin a target comes from (V1/V2/T1), for the inventory."""
    if target is None:
        return "an in-memory default"
    kinds = []
    for o in target.origins():
        if o.kind == "test-value":
            kinds.append(f"a test value ({o.expr})")
        elif o.kind == "project-file":
            kinds.append("data shipped with the project (V2)")
        elif o.kind == "literal":
            kinds.append(f"the literal {o.value!r} chosen {'in test code' if o.in_test else 'in code'}")
        elif o.kind in ("module-constant", "default-argument"):
            kinds.append(f"{o.expr}, itself controlled")
    if any(not isinstance(a, Origin) for a in target.atoms):
        kinds.append("a test double")
    return "; ".join(sorted(set(kinds))) or "a controlled value"


def origin_bases(o: Origin):
    """Every origin a module constant was derived from, transitively (not itself)."""
    out = []
    todo = list(o.inner)
    seen = set()
    while todo:
        x = todo.pop(0)
        if x in seen:
            continue
        seen.add(x)
        out.append(x)
        if x.kind == "module-constant":
            todo.extend(x.inner)
    return out


def _const_value(origins) -> Optional[str]:
    for o in origins:
        if o.kind == "literal":
            return o.value
        if o.kind == "module-constant" and o.value is not None:
            return o.value
    return None


def from_cwd(v: V, call: str) -> V:
    """``os.path.abspath(p)`` / ``realpath`` / ``Path(p).resolve()`` computed now: a relative
    literal ``p`` becomes the working directory's path (contract section 8: a value computed at
    call time from the working directory has kind ``cwd``); the literal stays its ``inner``, which
    decides it at a sink (``classify``) as the relative path it was (whole when ``p`` is one
    whole relative literal, so the path is known as text: ``fsmodel``)."""
    whole = len(v.atoms) == 1 and all(isinstance(a, Origin) and a.kind == "literal" and not a.partial
                                      and _relative(a) for a in v.atoms)
    v = v if whole else _head(v)   # an absolute literal is normalised or resolved: text not known
    out = []
    for a in v.atoms:
        if isinstance(a, Origin) and a.kind == "literal" and _relative(a):
            a = Origin("cwd", expr=f"{call}({a.expr})", path=a.path, line=a.line, inner=(a,))
        out.append(a)
    return V(frozenset(out), v.is_path)


def _relative(o: Origin) -> bool:
    """A string literal naming a path under the working directory (not a URL)."""
    text = o.value or ""
    return o.expr[:1] in ("'", '"') and bool(text) and not anchored_path(text) and "://" not in text


def _up(v: V) -> V:
    """``os.path.dirname`` of a value: a path built from ``__file__`` climbs one level."""
    return V(frozenset(_climb(a, 1) if isinstance(a, Origin) else a for a in v.atoms), v.is_path)


def _climb(o: Origin, levels: Optional[int]) -> Origin:
    """``o`` a ``levels`` folders higher (None: by an unknown number). A path from ``__file__``
    keeps count of the levels left to the project root, also inside the module constant or
    default argument it was bound to."""
    if o.kind == "project-file" and o.room is not None:
        return dataclasses.replace(o, room=o.room - levels if levels is not None else None)
    if shipped(o) is not None:
        return dataclasses.replace(o, value=EXISTING + "dir")   # the folder of what exists exists
    if o.kind in ("module-constant", "default-argument") and o.inner:
        inner = tuple(_climb(i, levels) for i in o.inner)
        return o if inner == o.inner else dataclasses.replace(o, inner=inner)
    if part_of(o) is not None:
        return tmp_parent(o) if levels == 1 else collapse(o)
    if is_basetemp(o) and levels == 1:   # above pytest's base temporary folder: the machine's
        return tmp_parent(o)
    return _partial(o) if o.kind == "cwd" else o   # the starting folder's parent is another folder


def computed_constant(c: Origin) -> bool:
    """Module constant ``c`` (one value of it) is a path computed at import (from another
    constant, ``__file__``, the home folder, ...): not a literal path, and not a URL (a dict of
    folders may also hold a dict of URL templates). What HT201 is about, and what its sweep
    looks for."""
    if c.kind != "module-constant" or not c.inner or all(i.kind == "literal" for i in c.inner):
        return False
    return not (isinstance(c.value, str) and "://" in c.value)


def _origin_sort(o: Origin):
    return (o.kind, o.expr, o.path or "", o.line or 0, o.value or "")


def _origin_text(o: Optional[Origin]) -> str:
    if o is None:
        return ""
    if o.kind == "literal":
        return repr(o.value) if o.value is not None else o.expr
    return o.expr


def _with_text(v: V, text: str) -> V:
    """``v`` (one whole string) extended to the whole string ``text``: its origins keep where
    the first part was bound (a literal's line, a constant's name) and carry the new text."""
    expr = _short(repr(text))
    out = []
    for a in v.ordered():
        if isinstance(a, Origin) and a.kind == "literal":
            out.append(dataclasses.replace(a, value=text, expr=expr))
        elif isinstance(a, Origin) and a.kind == "module-constant" and len(a.inner) == 1:
            inner = dataclasses.replace(a.inner[0], value=text, expr=expr)
            out.append(dataclasses.replace(a, value=text, inner=(inner,)))
        else:
            return _head(v)
    return V(frozenset(out), v.is_path)


_PARTIAL: Dict[Origin, Origin] = {}
START_CWD = "."   # the value of the working directory os.getcwd() gives before any chdir


def _partial(o: Origin) -> Origin:
    """``o`` as the first part of a built string (one object per origin)."""
    if shipped(o) is not None:
        return Origin("unknown", expr=o.expr)   # a path built from a shipped file need not exist
    if o.kind == "cwd" and o.value == START_CWD and not o.partial:
        return dataclasses.replace(o, partial=True)   # a path built from the starting folder (fsmodel)
    if part_of(o) is not None:
        return collapse(o)   # some path under tmp_path
    if o.partial or o.kind not in ("literal", "module-constant"):
        return o
    p = _PARTIAL.get(o)
    if p is None:
        if len(_PARTIAL) > 20_000:
            _PARTIAL.clear()
        p = _PARTIAL[o] = dataclasses.replace(o, partial=True)
    return p


def copied(d: str, args) -> Optional[V]:
    """``copy.copy(c)``, ``copy.deepcopy(c)``, ``list(c)``, ``tuple(c)``, ``dict(c)`` of a list,
    tuple or dict whose items are known: a container with the same items (cookiecutter's
    ``copy.copy(DEFAULT_CONFIG)`` keeps its known abbreviations); ``sorted(c)``: a list whose
    one item is any of them (a loop over a sorted list of functions calls each); else None."""
    if len(args) != 1 or d not in _COPIES:
        return None
    v = args[0]
    if not v.atoms or any(not (isinstance(a, tuple) and a[0] in ("seq", "dict")) for a in v.atoms):
        return None
    kinds = {a[0] for a in v.atoms}
    if d in ("builtins.list", "builtins.tuple"):
        if kinds != {"seq"}:
            return None
        kind = d[len("builtins."):]
        # a list made from a list written as it is stays counted; a tuple is exact only from a tuple
        return V(frozenset(seq_atom(kind, a[2], nonempty=holds_item(a),
                                    exact=is_exact(a) or kind == "list" and is_counted(a)) for a in v.atoms))
    if d in ("builtins.set", "builtins.frozenset"):   # the same items, each once: counted where the list was
        if kinds != {"seq"}:
            return None
        return V(frozenset(seq_atom("set", _once(a[2]), exact=is_counted(a)) for a in v.atoms))
    if d == "builtins.sorted":   # the same items in an order not known: each may be any of them
        return V(frozenset(seq_atom("list", (union(a[2]),) if a[2] else ()) for a in v.atoms)) \
            if kinds == {"seq"} else None
    if d == "builtins.dict" and kinds != {"dict"}:
        return None
    return v


_COPIES = {"copy.copy", "copy.deepcopy", "builtins.list", "builtins.tuple", "builtins.dict", "builtins.sorted",
           "builtins.set", "builtins.frozenset"}


def _once(items) -> tuple:
    """``items`` without a repeated value (the same atoms): a set's items."""
    out: list = []
    for x in items:
        if x not in out:
            out.append(x)
    return tuple(out)


_SPLIT = ("os.path.split", "posixpath.split", "os.path.splitext", "posixpath.splitext", "os.path.basename",
          "posixpath.basename")
_BASENAME = _SPLIT[4:]
_SPLITEXT = _SPLIT[2:4]


def split_path(d: str, args) -> Optional[V]:
    """``os.path.split(p)`` / ``os.path.splitext(p)``: the pair (head, tail) or (root, extension),
    computed where ``p`` is one string literal (``"/etc/invalid/location"`` gives the literals
    ``"/etc/invalid"`` and ``"location"``); else the head as ``os.path.dirname`` gives it (a
    constant's path keeps its origin; the root of ``splitext`` keeps the path's origins) and an
    unknown tail. ``os.path.basename(p)``: the tail of one literal, else unknown. None for other
    calls."""
    if d not in _SPLIT or len(args) != 1:
        return None
    text = _literal_str(args[0])
    o = next(iter(args[0].atoms))
    known = text is not None and isinstance(o, Origin) and o.kind == "literal"   # not a constant: it keeps its name
    if d in _BASENAME:   # the last part of one literal; of anything else not known (a relative name)
        return lit(posixpath.basename(text), o.path, o.line, o.in_test) if known else UNKNOWN_V
    if known:
        parts = (posixpath.splitext if d in _SPLITEXT else posixpath.split)(text)
        return V(frozenset([seq_atom("tuple", tuple(lit(x, o.path, o.line, o.in_test) for x in parts), exact=True)]))
    head = _head(args[0]) if d in _SPLITEXT else _up(_head(args[0]))
    return V(frozenset([seq_atom("tuple", (head.with_path(False), UNKNOWN_V), exact=True)]))


# library calls whose result is never None: call -> the type of what they return
_RESULT_TYPES = {c: c for c in ("builtins.dict", "builtins.list", "builtins.tuple", "builtins.sorted", "builtins.str",
                                "builtins.bytes")}
_RESULT_TYPES.update({c: "builtins.str" for c in ("builtins.repr", "builtins.format", "shlex.join", "shlex.quote",
                                                  "os.path.commonpath")}, **{"shlex.split": "builtins.list"})
_TYPED = {t: Origin("unknown", value=INSTANCE + t) for t in set(_RESULT_TYPES.values()) | {"builtins.int"}}   # one atom per type
# calls whose result is a new file descriptor (an int): ``open(os.dup(fd), mode)`` opens no path
FD_CALLS = frozenset({"os.dup", "os.dup2", "os.memfd_create", "os.eventfd"})
FD = _TYPED["builtins.int"]


def typed_head(call: str, v: V) -> V:
    """``_head`` of a call's first argument, for a library function whose result is never None
    (``dict(x)``, ``str(x)``, ``sorted(x)``): what is not known of it is an instance of the
    result's type, so ``if result is None:`` is decided (the data origins stay as they are)."""
    head = _head(v).with_path(False)
    typed = _TYPED.get(_RESULT_TYPES.get(call, ""))
    if typed is None or not any(isinstance(a, Origin) and a.kind == "unknown" and not a.value for a in head.atoms):
        return head
    return V(frozenset(typed if isinstance(a, Origin) and a.kind == "unknown" and not a.value else a
                       for a in head.atoms))


def _head(v: V) -> V:
    """The origins a derived value keeps: data origins (and the path flag) of its head.

    A literal or constant among them becomes ``partial``: the derived value is built from it
    (``"report" + kind``, ``f"/srv/{name}"``, ``str.replace``), so its text is a prefix at best.
    """
    out = []
    for a in v.ordered():
        if isinstance(a, Origin):
            out.append(_partial(a))
        elif a[0] == "seq":
            for x in a[2][:1]:
                out.extend(x.atoms)
        elif a == DOUBLE or a[0] in ("fixture", "double"):
            out.append(Origin("test-value", expr="double"))
        elif a[0] == "inst":
            out.append(a)
        else:
            out.append(Origin("unknown", expr=a[0]))
    return V(frozenset(out), v.is_path)


def _is_absolute(v: V) -> bool:
    """Every origin of ``v`` is a known absolute path (joining onto it drops what came before)."""
    if not v.atoms:
        return False
    for a in v.ordered():
        if not isinstance(a, Origin):
            return False
        if a.kind in ("test-value", "project-file", "home"):
            continue
        if a.kind == "literal" and isinstance(a.value, str) and a.value.startswith("/"):
            continue   # also one a call gives (tempfile.gettempdir(), tmp_path.parent)
        if a.kind == "module-constant" and a.inner and _is_absolute(V(frozenset(a.inner))):
            continue
        return False
    return True


def _join_head(args: List[V]) -> V:
    """``os.path.join(a, b, c)`` / ``Path(a, b)`` / ``a / b``: the last argument that is a known
    absolute path replaces everything before it; otherwise the first argument leads."""
    for x in reversed(args[1:]):
        if _is_absolute(x):
            return x
    return args[0]


def joined_path(args: List[V]) -> V:
    """What ``_join_head`` leads with, as a derived value (``_head``); a known absolute path
    joined last is the result whole (``Path.cwd() / str(tmp_path / "a")`` is that path)."""
    if len(args) > 1 and _is_absolute(args[-1]):
        return args[-1]
    return _head(_join_head(args))


def _whole_join(args: List[V], path: bool) -> Optional[V]:
    """``os.path.join('tests', 'repo')`` / ``Path('tests', 'repo')`` / ``str(Path('tests/'))`` of
    whole string literals: the joined string, known whole (so ``.endswith('.zip')`` or a regular
    expression decides on it), keeping the first literal's origin; a path's text as ``str()``
    gives it (``tests/`` -> ``tests``). None when any part is not a whole literal."""
    if len(args) > 1 and (below := made_absolute(args[0])) is not None:
        return _joined_below(below, args[1:], path)
    texts = [_literal_str(a) for a in args]
    if not texts or any(t is None for t in texts):
        return None
    text = posixpath.join(*texts)
    if path:
        text = str(PurePosixPath(text))
    return _with_text(args[0], text)


_MADE_ABSOLUTE = ("resolve(", "abspath(", "realpath(", "absolute(")


def made_absolute(v: V) -> Optional[Origin]:
    """The one origin of ``v`` when it is a relative literal written whole made absolute from the
    working directory the tests start in (``from_cwd``: ``Path("tests/t").resolve()``); else None."""
    return absolute_literal(next(iter(v.atoms))) if len(v.atoms) == 1 else None


def absolute_literal(a) -> Optional[Origin]:
    """Atom ``a`` when it is such a path (``made_absolute``), else None."""
    if not (isinstance(a, Origin) and a.kind == "cwd" and not a.partial and a.expr.startswith(_MADE_ABSOLUTE)
            and len(a.inner) == 1):
        return None
    i = a.inner[0]
    return a if i.kind == "literal" and not i.partial and isinstance(i.value, str) else None


def _joined_below(a: Origin, rest: List[V], path: bool) -> Optional[V]:
    """A path made absolute from a relative literal (``made_absolute``) joined with relative
    literals written whole: made absolute from the joined literal (``resolve("tests/t/hooks")``),
    so the part below the working directory stays known. None when a part is not such a literal
    or the join climbs out of the working directory."""
    texts = [_literal_str(x) for x in rest]
    if any(t is None or t.startswith("/") for t in texts):
        return None
    text = posixpath.normpath(posixpath.join(a.inner[0].value, *texts))
    if text == ".." or text.startswith("../"):
        return None
    inner = dataclasses.replace(a.inner[0], value=text, expr=repr(text))
    return V(frozenset([dataclasses.replace(a, expr=f"{a.expr.split('(', 1)[0]}({inner.expr})", inner=(inner,))]), path)


_SCHEME_ONLY = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://?/?")


def scheme_only(text) -> bool:
    """``text`` is a URL scheme and nothing else (``"sqlite:///"``, ``"http://"``): a target built
    from it and a value is located by the value, so the value is its origin (issue 25)."""
    return isinstance(text, str) and _SCHEME_ONLY.fullmatch(text) is not None


def _first_item(v: V) -> V:
    for a in v.refs():
        if a[0] == "seq" and a[2]:
            return a[2][0]
    return v


def _has_path_origin(v: V) -> bool:
    return any(o.kind in ("test-value", "project-file", "home", "cwd") for o in v.origins())


_SHAPES = 8   # a list literal with starred parts: at most this many known shapes


def _concat(left: V, right: V) -> Optional[V]:
    """``left + right`` of lists (or tuples) known by their items: each pair of shapes joined
    (up to ``_SHAPES``), or None."""
    seqs = []
    for side in (left, right):
        atoms = side.ordered()
        if not atoms or any(not (isinstance(a, tuple) and a[0] == "seq" and a[1] in ("list", "tuple")) for a in atoms):
            return None
        seqs.append(atoms)
    if len(seqs[0]) * len(seqs[1]) > _SHAPES:
        return None
    joined = frozenset(seq_atom(a[1], tuple(a[2]) + tuple(b[2]), holds_item(a) or holds_item(b),
                                is_counted(a) and is_counted(b))
                       for a in seqs[0] for b in seqs[1] if a[1] == b[1])
    return V(joined) if joined else None


def in_temp_folder(folder: Optional[V]) -> bool:
    """``dir=`` of a temporary file or folder names no folder, or only the shared temporary folder
    (``tempfile.gettempdir()``, a folder in it): the temporary is made as with no ``dir``, under a
    name of its own, so it is the test's own (a fixed name there is another matter)."""
    if folder is None or not folder.atoms:
        return True
    return all(isinstance(a, Origin) and a.kind == "literal" and a.expr == "tempfile.gettempdir()"
               for a in folder.atoms)
