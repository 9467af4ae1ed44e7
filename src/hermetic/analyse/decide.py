"""Conditions the test's values decide (contract section 1, "what a test reaches").

Pure functions over abstract values: the Python values a value can be (literals, constants
bound to literals, tuples of them), comparisons between them, the types of a value's atoms
for ``isinstance``, and the platform facts (``sys.platform``, ``os.name``,
``platform.system()``, ``sys.version_info``) a branch may test. Each answers True / False
when every alternative of the value agrees, and None (undecided: both ways are followed)
otherwise.
"""
from __future__ import annotations

import ast
import errno
import functools
import sys
from typing import Callable, FrozenSet, List, Optional, Tuple

from .limits import MAX_COUNTS
from .rooted import may_be_key, rooted_tails, test_named
from .stdtypes import std_isinstance, stdlib_class
from .tmptree import compared as tmp_compared
from .values import Origin, V, instance_class, is_counted, is_exact, machine_data, of, seq_atom

_NO = object()   # "no Python value known" (None is a value)


@functools.lru_cache(maxsize=4096)
def _parse(text: str):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _NO


def _origin_value(o: Origin):
    """The Python value of a whole literal (``_NO`` for a built string or another origin)."""
    if o.kind != "literal" or o.partial or o.value is None:
        return _NO
    if o.expr[:1] in ("'", '"'):
        return o.value
    if o.expr[:1] in ("b", "B") and o.expr[1:2] in ("'", '"'):
        return _parse(o.value)
    if o.expr[:1].isdigit() or o.expr[:1] == "-" or o.expr in ("True", "False", "None"):
        return _parse(o.value)
    return _NO


def atom_values(a) -> Optional[list]:
    """Every Python value one atom can be, or None when one is not known."""
    if isinstance(a, Origin):
        if a.kind in ("module-constant", "default-argument") and a.inner and not a.partial:
            out = []
            for i in a.inner:
                x = _origin_value(i)
                if x is _NO:
                    return None
                out.append(x)
            return out
        x = _origin_value(a)
        return None if x is _NO else [x]
    if a[0] == "seq" and a[1] in ("tuple", "list") and len(a[2]) <= 16:
        items = []
        for item in a[2]:
            vals = values(item)
            if vals is None or len(vals) != 1:
                return None
            items.append(vals[0])
        return [tuple(items) if a[1] == "tuple" else items]
    return None


def values(v: V) -> Optional[list]:
    """Every Python value ``v`` can be, when each alternative is known; else None."""
    if not v.atoms:
        return None
    out: list = []
    for a in v.ordered():
        vals = atom_values(a)
        if vals is None:
            return None
        out.extend(vals)
    return out


def _agree(results: List[Optional[bool]]) -> Optional[bool]:
    if not results or any(r is None for r in results):
        return None
    return results[0] if all(r == results[0] for r in results) else None


def _is(x, y) -> Optional[bool]:
    # identity is known for the singletons only
    if y is None or isinstance(y, bool):
        return x is y
    if x is None or isinstance(x, bool):
        return x is y
    return None


def _container_keys(v: V) -> Optional[list]:
    """The containers ``in`` may test, one per alternative: a list/tuple/set's items or a dict's
    keys (as a tuple), or a string itself (substring membership)."""
    out: list = []
    for a in v.ordered():
        if isinstance(a, tuple) and a[0] == "seq" and len(a[2]) <= 64:
            items = []
            for item in a[2]:
                vals = values(item)
                if vals is None or len(vals) != 1:
                    return None
                items.append(vals[0])
            out.append(tuple(items))
        elif isinstance(a, tuple) and a[0] == "dict":
            if any(k is None for k, _ in a[1]):
                return None
            out.append(tuple(k for k, _ in a[1]))
        else:
            vals = atom_values(a)
            if vals is None or not all(isinstance(x, str) for x in vals):
                return None
            out.extend(vals)
    return out


def _test_chosen(v: V) -> bool:
    """Every alternative of ``v`` is the test's own: a literal written in test code (a
    parametrize value too) or its ``tmp_path``."""
    return bool(v.atoms) and all(isinstance(a, Origin) and (a.in_test and a.kind == "literal" or a.kind == "test-value")
                                 for a in v.atoms)


def _keys_besides_machine_data(v: V) -> Optional[list]:
    """The containers ``in`` may test, as ``_container_keys``, for a test's own string, where
    ``v`` may be data parsed from a file of the machine's (``values.MACHINE_DATA``): that data
    holds none of the test's strings, and neither do the alternatives merged with it whose
    content the analysis does not know (a user's configuration merged over the program's
    defaults); the defaults' known keys still count. None when ``v`` holds no such data."""
    if not any(machine_data(a) for a in v.atoms):
        return None
    out: list = []
    for a in v.ordered():
        if isinstance(a, tuple) and a[0] == "dict":
            out.append(tuple(k for k, _ in a[1] if k is not None))
        elif not machine_data(a):
            out.extend(_container_keys(of(a)) or ())
    return out or [()]


_BINARY = {
    "Equal": lambda x, y: x == y, "NotEqual": lambda x, y: x != y,
    "LessThan": lambda x, y: x < y, "LessThanEqual": lambda x, y: x <= y,
    "GreaterThan": lambda x, y: x > y, "GreaterThanEqual": lambda x, y: x >= y,
}


def _literal_like(v: V) -> bool:
    return any(isinstance(a, Origin) and (a.kind == "literal" or
                                          (a.kind == "module-constant" and any(i.kind == "literal" for i in a.inner)))
               for a in v.atoms)


_FRESH_KINDS = ("test-value", "home", "cwd", "project-file")


def _distinct_object(a) -> bool:
    """An atom that is one object of its own: a path or folder made at run time, a project
    instance, function or class, a container, a string literal. Not a value that may be None
    or shared (an environment read, a default, a clock, a number, an unknown)."""
    if isinstance(a, Origin):
        if a.kind in _FRESH_KINDS or is_sentinel(a):
            return True
        if a.kind == "literal":
            return a.expr[:1] in ("'", '"')
        if a.kind == "module-constant" and a.inner:
            return all(_distinct_object(i) for i in a.inner)
        return False
    return a[0] in ("inst", "func", "cls", "seq", "dict")


def _made_here(a) -> bool:
    """A project function, class or instance, a container, or an instance a library class call
    made at run time (``io.StringIO()``): never an object a library module holds
    (``sys.__stdout__``) unless the test put it there, which its patch records instead."""
    if isinstance(a, Origin):
        return a.kind == "unknown" and instance_class(a) is not None and a.line is None
    return _distinct_object(a)


def is_sentinel(a) -> bool:
    """Atom ``a`` is the one object a module's top level made with ``object()`` (``MISSING``)."""
    return (isinstance(a, Origin) and a.expr == "object()" and a.line is not None
            and instance_class(a) == "builtins.object")


def _same_as_sentinel(sentinel, v: V) -> Optional[bool]:
    """``v is sentinel``: only the sentinel itself is; a literal, a test value, a project object
    or a container never is; a value the analysis does not know may be."""
    if sentinel in v.atoms:
        return True if len(v.atoms) == 1 else None
    for a in v.atoms:
        if isinstance(a, Origin) and not (a.kind in ("literal", "test-value") or is_sentinel(a)):
            return None
    return False


def identical(left: V, right: V) -> Optional[bool]:
    """``left is right`` by what the values are: the same single instance is itself; values made
    apart (a tmp_path and a constant computed from the home folder, two instances) with no
    alternative in common are different objects. Undecided when both hold a literal (which
    Python may intern) or either may be None or shared (an environment read, a number)."""
    if not left.atoms or not right.atoms:
        return None
    left, right = _unmissed(left), _unmissed(right)
    only = next(iter(left.atoms))
    if len(left.atoms) == 1 and left.atoms == right.atoms and isinstance(only, tuple) and only[0] == "ext":
        return True   # one library object, read twice (a patch in between gives its own value)
    for one, other in ((left, right), (right, left)):
        if len(one.atoms) == 1 and is_sentinel(next(iter(one.atoms))):
            return _same_as_sentinel(next(iter(one.atoms)), other)
    if _literal_like(left) and _literal_like(right):
        return None
    for one, other in ((left, right), (right, left)):
        if all(_made_here(a) for a in one.atoms) and all(isinstance(b, tuple) and b[0] == "ext" for b in other.atoms):
            return False   # a project object, or one a call just made, is none of a library's own objects
    if not all(_distinct_object(a) for a in left.atoms | right.atoms):
        return None
    if len(left.atoms) == 1 and left.atoms == right.atoms and (
            isinstance(only, tuple) and only[0] == "inst" or is_sentinel(only)):
        return True
    return False if left.atoms.isdisjoint(right.atoms) else None


def _unmissed(v: V) -> V:
    """``v`` with each standard object a patch misses as the object itself (``Sinks._check_miss``)."""
    if not any(isinstance(a, tuple) and a[0] == "missed-obj" for a in v.atoms):
        return v
    return V(frozenset(a[1] if isinstance(a, tuple) and a[0] == "missed-obj" else a for a in v.atoms), v.is_path)


def compare(op: str, left: V, right: V) -> Optional[bool]:
    """One comparison ``left OP right`` (libcst operator names) when the values decide it."""
    tmp = tmp_compared(op, left, right)   # paths in the test's tmp_path
    if tmp is not None:
        return tmp
    if op in ("In", "NotIn"):
        if right.atoms and all(is_exact(a) and not a[2] for a in right.atoms):
            return op == "NotIn"   # nothing is in a tuple that holds no item
        items = values(left)
        pools = _container_keys(right)
        if pools is None and items is not None and _test_chosen(left):
            pools = _keys_besides_machine_data(right)
        if items is None and (tails := rooted_tails(left)) is not None:
            # a text starting at the root (a path in tmp_path, one made absolute): no key but such a path is it
            if pools is None and test_named(left):
                pools = _keys_besides_machine_data(right)
            return None if pools is None or any(isinstance(p, str) or any(may_be_key(k, tails) for k in p)
                                                for p in pools) else op == "NotIn"
        if items is None or pools is None:
            return None
        results: List[Optional[bool]] = []
        for x in items:
            for pool in pools:
                if isinstance(pool, str):
                    results.append(x in pool if isinstance(x, str) else None)
                else:
                    results.append(x in pool)
        r = _agree(results)
        return None if r is None else r == (op == "In")
    if op in ("Is", "IsNot") and (_object_vs_singleton(left, right) or _object_vs_singleton(right, left)):
        return op == "IsNot"   # a class or function is never None, True or False
    lv, rv = values(left), values(right)
    if lv is None or rv is None:
        return None
    results = []
    for x in lv:
        for y in rv:
            if op in ("Is", "IsNot"):
                r = _is(x, y)
                results.append(None if r is None else r == (op == "Is"))
                continue
            fn = _BINARY.get(op)
            if fn is None:
                return None
            try:
                results.append(bool(fn(x, y)))
            except TypeError:
                results.append(None)
    return _agree(results)


# -- types for isinstance -------------------------------------------------------------------

_ABC_SEQ = {"Sequence", "Collection", "Container", "Iterable", "Sized", "Reversible"}
_ABC_NUM = {"Number", "Complex", "Real", "Hashable"}
# a built-in type: the names ``isinstance`` accepts for it (object, its bases, the ABCs it is)
_MRO = {
    "str": {"str", "Hashable"} | _ABC_SEQ,
    "bytes": {"bytes", "Hashable", "ByteString"} | _ABC_SEQ,
    "bool": {"bool", "int", "Integral", "Rational"} | _ABC_NUM,
    "int": {"int", "Integral", "Rational"} | _ABC_NUM,
    "float": {"float"} | _ABC_NUM,
    "NoneType": {"NoneType", "Hashable"},
    "list": {"list", "MutableSequence"} | _ABC_SEQ,
    "tuple": {"tuple", "Hashable"} | _ABC_SEQ,
    "set": {"set", "Set", "AbstractSet", "MutableSet", "Collection", "Container", "Iterable", "Sized"},
    "dict": {"dict", "Mapping", "MutableMapping", "Collection", "Container", "Iterable", "Sized"},
    "Path": {"Path", "PurePath", "PosixPath", "PurePosixPath", "PathLike", "Hashable"},
    "function": {"Callable", "Hashable", "FunctionType"},
    "type": {"type", "Callable", "Hashable"},
}
_KNOWN_NAMES: FrozenSet[str] = frozenset(set().union(*_MRO.values()) | {"object", "complex", "frozenset",
                                                                         "bytearray", "Iterator", "Generator"})
# dotted spellings whose last part names one of the types above
_TYPE_MODULES = ("builtins.", "collections.abc.", "typing.", "numbers.", "pathlib.", "os.", "types.")


def type_name(dotted: str) -> Optional[str]:
    """The type an external class name in ``isinstance``'s second argument is, or None."""
    if dotted.startswith(_TYPE_MODULES):
        last = dotted.rsplit(".", 1)[1]
        if last in _KNOWN_NAMES:
            return last
    return None


def library_class(dotted: str) -> bool:
    """Whether ``dotted`` names a library class (``http.cookies.Morsel``): capitalised, outside the
    modules whose names may alias built-in types or ABCs (``typing.Text`` is ``str``)."""
    module, _, last = dotted.rpartition(".")
    return (bool(module) and last[:1].isupper() and not last.isupper() and
            not dotted.startswith(_TYPE_MODULES + ("abc.", "six.", "collections."))) or stdlib_class(dotted) is not None


def atom_type(a, v: V) -> Optional[str]:
    """The built-in type name of one atom (``Path`` for a path object), or None."""
    if isinstance(a, Origin):
        if a.kind == "literal" and not a.partial:
            if v.is_path:
                return None
            x = _origin_value(a)
            return None if x is _NO else type(x).__name__
        if a.kind == "literal" and a.partial and a.expr[:1] in ("'", '"') and not v.is_path:
            return "str"   # an f-string, a join, a '%' format: a string
        if a.kind == "module-constant" and a.inner and not v.is_path:
            kinds = {atom_type(i, v) for i in a.inner}
            return kinds.pop() if len(kinds) == 1 else None
        if a.kind in ("test-value", "home", "cwd", "project-file") and v.is_path:
            return "Path"
        return None
    if a[0] == "seq":
        return a[1]
    if a[0] == "dict":
        return "dict"
    if a[0] == "func":
        return "function"
    if a[0] == "cls":
        return "type"
    if a[0] == "ext" and type_name(a[1]) and a[1].startswith("builtins."):
        return "type"   # a built-in class itself (`prefix=int`): an instance of type
    return None


def _object_vs_singleton(objs: V, singles: V) -> bool:
    """Every atom of ``objs`` is a class or function (a project's, or a built-in class) and every
    value of ``singles`` is None, True or False: no ``is`` between them holds."""
    vals = values(singles)
    return bool(objs.atoms) and vals is not None and all(x is None or x is True or x is False for x in vals) and \
        all(isinstance(a, tuple) and (a[0] in ("cls", "func") or atom_type(a, objs) == "type") for a in objs.atoms)


def builtin_isinstance(tname: str, wanted: str) -> bool:
    return wanted == "object" or wanted in _MRO.get(tname, ())


def isinstance_of(v: V, classes: List[Tuple[str, str]],
                  inst_check: Callable[[tuple, Tuple[str, str]], Optional[bool]]) -> Optional[bool]:
    """``isinstance(v, classes)``: ``classes`` are ("builtin", name), ("project", qualname) or
    ("library", dotted) entries (an unknown class makes it undecided); ``inst_check`` answers
    for a project instance atom."""
    if not classes or not v.atoms:
        return None
    results: List[Optional[bool]] = []
    for a in v.ordered():
        if isinstance(a, tuple) and a[0] == "inst":
            results.append(_any(inst_check(a, c) for c in classes))
            continue
        made = instance_class(a)
        if made is not None and stdlib_class(made) is not None:   # datetime.datetime(3000, 1, 1)
            results.append(_any(std_isinstance(made, kind, name) for kind, name in classes))
            continue
        t = atom_type(a, v)
        if t is None:
            return None
        # a built-in value is no instance of a project class, nor of a library class (a path
        # object may be a library's, and a dict a library's mapping, a Counter() or a Morsel():
        # undecided)
        results.append(_any((builtin_isinstance(t, name) if kind == "builtin" else
                             None if (kind == "library" and t in ("Path", "dict")) else False)
                            for kind, name in classes))
    return _agree(results)


def _any(results) -> Optional[bool]:
    rs = list(results)
    if any(r is True for r in rs):
        return True
    return False if all(r is False for r in rs) else None


# -- the platform ---------------------------------------------------------------------------

PLATFORMS = ("linux", "darwin", "win32", "cygwin", "freebsd", "aix")
_SYSTEM = {"linux": "Linux", "darwin": "Darwin", "win32": "Windows", "cygwin": "CYGWIN_NT", "freebsd": "FreeBSD",
           "aix": "AIX"}


# errno.ENOENT, ...: `exc.errno == errno.ESRCH` on an exception the test made (``handlers``)
_ERRNO_CODES = {f"errno.{name}": getattr(errno, name) for name in dir(errno) if name[:1] == "E"}


def platform_facts(platform: Optional[str] = None) -> dict:
    """The values platform checks read: ``sys.platform`` (``platform``, or the running
    Python's), ``os.name``, ``os.sep``, ``platform.system()``, ``sys.version_info`` and the
    ``errno`` codes (the running Python's: the tests run on it)."""
    plat = platform or sys.platform
    key = next((p for p in PLATFORMS if plat.startswith(p)), plat)
    windows = key == "win32"
    return {
        **_ERRNO_CODES,
        "sys.platform": plat,
        "os.name": "nt" if windows else "posix",
        "os.sep": "\\" if windows else "/",
        "os.pathsep": ";" if windows else ":",
        "platform.system()": _SYSTEM.get(key, plat.capitalize()),
        "sys.version_info": tuple(sys.version_info[:3]),
    }


_INSTANCE_BUILTINS = {"builtins.object", "builtins.Exception", "builtins.ValueError", "builtins.TypeError",
                      "builtins.RuntimeError", "builtins.KeyError", "builtins.OSError"}


def constructs(d: str) -> bool:
    """Whether calling the library name ``d`` makes an instance (a class by its spelling)."""
    last = d.rsplit(".", 1)[-1]
    return d in _INSTANCE_BUILTINS or (last[:1].isupper() and not last.isupper() and "_" not in last[:2]) or \
        stdlib_class(d) is not None


_ARITHMETIC = {"Add": lambda x, y: x + y, "Subtract": lambda x, y: x - y, "Multiply": lambda x, y: x * y,
               "BitOr": lambda x, y: x | y, "BitAnd": lambda x, y: x & y, "FloorDivide": lambda x, y: x // y}


def _arithmetic(op: str, left: V, right: V) -> Optional[list]:
    """``left OP right`` for each pair when both are known integers (not bools), a few of them
    (a counter changed on alternative ways: ``{-5, -4} + 1`` is ``{-4, -3}``); else None."""
    fn = _ARITHMETIC.get(op)
    if fn is None:
        return None
    lv, rv = values(left), values(right)
    if not lv or not rv or len(lv) * len(rv) > MAX_COUNTS:
        return None
    out = []
    for x in lv:
        for y in rv:
            if type(x) is not int or type(y) is not int or (op == "FloorDivide" and y == 0) or abs(x) > 2 ** 64 \
                    or abs(y) > 2 ** 64:
                return None
            r = fn(x, y)
            if r not in out:
                out.append(r)
    return out


_SET_OPS = {"BitAnd": lambda x, y: x & y, "BitOr": lambda x, y: x | y, "Subtract": lambda x, y: x - y}


def set_algebra(op: str, left: V, right: V) -> Optional[V]:
    """``left & right``, ``|``, ``-`` of sets known by their items (a display, ``set()`` of a
    dict known whole's keys) whose items are known values: for each pair of alternatives, the
    set of exactly the items the operation leaves (the left operand's, then the right's); None
    when an alternative is not such a set."""
    fn = _SET_OPS.get(op)
    if fn is None or not left.atoms or not right.atoms or len(left.atoms) * len(right.atoms) > 16:
        return None
    lsides, rsides = [_set_items(a) for a in left.ordered()], [_set_items(a) for a in right.ordered()]
    if any(x is None for x in lsides + rsides):
        return None
    out = []
    for ls in lsides:
        for rs in rsides:
            kept = fn(set(ls), set(rs))
            out.append(seq_atom("set", [x for t, x in ls.items() if t in kept] +
                                [x for t, x in rs.items() if t in kept and t not in ls], exact=True))
    return V(frozenset(out))


def _set_items(a) -> Optional[dict]:
    """A set atom known by its items, each one hashable value: {its items' values: the items}."""
    if not (is_counted(a) and a[1] in ("set", "frozenset")):
        return None
    out = {}
    for item in a[2]:
        vals = values(item)
        if vals is None or len(vals) != 1 or not isinstance(vals[0], (str, int, float, bool, type(None))):
            return None
        out[vals[0]] = item
    return out
