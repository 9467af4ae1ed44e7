"""What an abstract value says of itself: literal text and numbers, truthiness, None-ness,
and the dotted names of calls and decorators (canonical spellings, ``mock.`` ->
``unittest.mock.``).
"""
from __future__ import annotations

import builtins
import collections
from typing import Dict, List, Optional, Sequence, Tuple

from .limits import TEST_HEAP_BASE
from .values import MAYBE_EMPTY, WHOLE, Origin, V, anchored_path, instance_class


# builtins a name resolves to when nothing binds it (``Interp.lookup``)
_BUILTINS = {"open", "str", "bytes", "int", "float", "bool", "len", "print", "isinstance", "dict", "list", "tuple",
             "set", "sorted", "getattr", "setattr", "hasattr", "super", "repr", "format", "callable", "id", "hash",
             "staticmethod", "classmethod", "property", "iter", "next", "enumerate", "zip", "range", "min", "max",
             "sum", "any", "all", "map", "filter", "reversed", "type", "object", "Exception", "ValueError",
             "vars", "frozenset", "abs", "round", "divmod", "issubclass", "exec", "eval", "compile", "__import__",
             "globals"}
# the built-in exception classes (``side_effect=IOError``, ``except OSError``): library names
_BUILTINS |= {name for name, obj in vars(builtins).items()
              if isinstance(obj, type) and issubclass(obj, BaseException) and not name.startswith("_")}
_BUILTIN_NAMES = frozenset(n for n in dir(builtins) if not n.startswith("_") and n not in ("open", "input", "print"))
# one set for every container kind: ``set()`` and ``deque()`` are modelled as lists
_CONTAINER_METHODS = frozenset(n for t in (list, tuple, set, dict, collections.deque) for n in dir(t)
                               if not n.startswith("_"))


def _literal_str(v: Optional[V], prefix: bool = False) -> Optional[str]:
    """The string ``v`` is when it is one string literal (or a constant bound to one); else None.

    A string built from a literal and other parts (``Origin.partial``) is its leading part only:
    accepted where a prefix decides (``prefix=True``: an environment variable's name in a
    message, a file mode, ``~`` or ``$`` in front), never for an equality, a key or a name.
    """
    if v is None:
        return None
    vals = set()
    for o in v.origins():
        if o.kind == "literal" and o.expr[:1] in ("'", '"'):
            if o.partial and not prefix:
                return None
            vals.add(o.value)
    if len(vals) == 1 and len(v.atoms) == 1:
        return vals.pop()
    if len(vals) == 1 and all(isinstance(a, Origin) and a.kind == "literal" for a in v.atoms):
        return vals.pop()
    for o in v.origins():
        if o.kind == "module-constant" and len(v.atoms) == 1 and len(o.inner) == 1 and o.inner[0].kind == "literal":
            if (o.partial or o.inner[0].partial) and not prefix:
                return None
            return o.inner[0].value if o.inner[0].expr[:1] in ("'", '"') else None
    return None


def env_name(v: V) -> Optional[str]:
    """The variable an environment read names: its whole literal name, or ``PREFIX*`` for a name
    built at run time from a known leading part (``f"_{name}_COMPLETE"``); None when unknown."""
    whole = _literal_str(v)
    if whole is not None:
        return whole
    head = _literal_str(v, prefix=True)
    return head + "*" if head is not None else None


def _literal_strs(v: Optional[V]) -> List[str]:
    """Every string a value can be, when all of its atoms are whole string literals (a loop over
    names); otherwise nothing."""
    texts = _str_texts(v) if v is not None else None
    if texts is None or any(partial for _t, partial in texts):
        return []
    return sorted({t for t, _p in texts})


def _str_texts(v: V) -> Optional[List[Tuple[str, bool]]]:
    """(text, partial) for every alternative of ``v`` when each is a string literal or a constant
    bound to one (``partial``: the text is a built string's leading part); else None."""
    if not v.atoms:
        return None
    out = []
    for a in v.ordered():
        if not isinstance(a, Origin):
            return None
        o, partial = a, a.partial
        if a.kind == "module-constant" and len(a.inner) == 1:
            o, partial = a.inner[0], partial or a.inner[0].partial
        if o.kind != "literal" or o.expr[:1] not in ("'", '"') or o.value is None:
            return None
        out.append((o.value, partial))
    return out


def sendable(target: V, schemes: Tuple[str, ...]) -> Optional[V]:
    """The alternatives of a URL ``target`` a library sends to when it takes only ``schemes``
    (``requests.get("tests/data/")`` raises ``MissingSchema`` before anything is sent): an
    alternative whose text (``_literal_str``), or known leading part, cannot start ``scheme:``
    for any of them is left out; one whose text is not known stays. None when none is left."""
    kept = []
    for a in target.ordered():
        one = V(frozenset((a,)))
        whole, head = _literal_str(one), _literal_str(one, prefix=True)
        text = (whole if whole is not None else head or "").lstrip().lower()
        if head is None or any(text.startswith(s + ":") or (whole is None and (s + ":").startswith(text))
                               for s in schemes):
            kept.append(a)
    return V(frozenset(kept), target.is_path) if kept else None


def _str_options(v: V) -> Optional[List[Tuple[str, bool]]]:
    """The strings a predicate's argument offers: one string, or the items of a tuple/list of them."""
    seqs = [a for a in v.atoms if isinstance(a, tuple) and a[0] == "seq"]
    if not seqs:
        return _str_texts(v)
    if len(v.atoms) != 1:
        return None
    out = []
    for item in seqs[0][2]:
        t = _str_texts(item)
        if t is None:
            return None
        out.extend(t)
    return out


def _decided(results: List[Optional[bool]]) -> Optional[bool]:
    return results[0] if results and all(r is not None and r == results[0] for r in results) else None


def _str_affix(method: str, base: V, arg: V) -> Optional[bool]:
    """``base.startswith(arg)`` / ``base.endswith(arg)`` when literals decide it for every
    alternative; a built string's known prefix decides ``startswith`` only."""
    texts, options = _str_texts(base), _str_options(arg)
    if texts is None or options is None or any(p for _t, p in options):
        return None
    results: List[Optional[bool]] = []
    for text, partial in texts:
        if not partial:
            hit = text.startswith(tuple(t for t, _p in options)) if method == "startswith" else \
                text.endswith(tuple(t for t, _p in options))
            results.append(hit)
        elif method == "startswith":
            if any(text.startswith(t) for t, _p in options):
                results.append(True)
            elif all(len(text) >= len(t) for t, _p in options):
                results.append(False)   # the known prefix already differs from every option
            else:
                results.append(None)
        else:
            results.append(None)
    return _decided(results)


def _str_contains(item: V, container: V) -> Optional[bool]:
    """``item in container`` when literals decide it: a string among a tuple/list of strings,
    or a substring of a string; None otherwise."""
    options = _str_texts(item)
    if options is None or any(p for _t, p in options):
        return None
    seqs = [a for a in container.atoms if isinstance(a, tuple) and a[0] == "seq"]
    if seqs:
        pool = _str_options(container)
        if pool is None or any(p for _t, p in pool):
            return None
        names = {t for t, _p in pool}
        return _decided([t in names for t, _p in options])
    texts = _str_texts(container)
    if texts is None:
        return None
    results: List[Optional[bool]] = []
    for text, partial in texts:
        for t, _p in options:
            results.append(True if t in text else (None if partial else False))
    return _decided(results)


def _literal_int(v: V) -> Optional[int]:
    for o in v.origins():
        if o.kind == "literal" and not o.partial and o.expr.lstrip("-").isdigit():
            return int(o.expr)
    return None


def _any_literal_tilde(v: V) -> bool:
    return any(o.kind == "literal" and (o.value or "").startswith("~") for o in v.origins())


def _pick(spec_target: Sequence, args: List[V], kwargs: Dict[str, V]) -> Optional[V]:
    for t in spec_target:
        if isinstance(t, int):
            if t < len(args):
                return args[t]
        elif t in kwargs:
            return kwargs[t]
    return None


_TRUTHY_KINDS = ("test-value", "project-file", "home", "cwd", "clock")   # (a clock reads seconds since 1970, a datetime)


def truthiness(v: V, inst_truth=None) -> Optional[bool]:
    """True / False when every atom of ``v`` is known truthy / falsy; else None. ``inst_truth``:
    an instance atom -> its truth (None: not known), where the caller knows the classes; without
    it an instance is truthy."""
    if not v.atoms:
        return None
    states = set()
    for a in v.ordered():
        if isinstance(a, Origin):
            if a.kind == "literal":
                t = _literal_truth(a, a.partial)
                if t is None:
                    return None
                states.add(t)
            elif a.kind in _TRUTHY_KINDS:
                states.add(True)
            elif a.kind in ("module-constant", "default-argument") and a.inner and all(
                    i.kind in _TRUTHY_KINDS or i.kind == "literal" for i in a.inner):
                for i in a.inner:   # TEST_PATH = Path(__file__).parent / "data": a path, truthy
                    t = True if i.kind in _TRUTHY_KINDS else _literal_truth(i, a.partial or i.partial)
                    if t is None:
                        return None
                    states.add(t)
            else:
                return None
        elif a[0] == "inst" and inst_truth is not None:
            t = inst_truth(a)
            if t is None:
                return None
            states.add(t)
        elif a[0] in ("mod", "func", "cls", "inst", "client", "fixture", "double", "handle", "modobj"):
            states.add(True)
        elif a[0] == "seq":
            if len(a) > 3 and a[3] == MAYBE_EMPTY:
                return None
            states.add(bool(a[2]))
        elif a[0] == "dict" and any(k is not None for k, _v in a[1]):
            states.add(True)   # a dict with a named entry (an empty one may be filled elsewhere)
        elif a[0] == "dict" and not a[1] and a[2:] == (WHOLE,):   # known whole: none, for certain
            states.add(False)
        else:
            return None
    if len(states) == 1:
        return states.pop()
    return None


def _literal_truth(o: Origin, partial: bool) -> Optional[bool]:
    """Truth of a literal; of a string built from it, True when its known prefix is not empty."""
    if partial:
        return True if o.expr[:1] in ("'", '"') and o.value else None
    return o.expr not in ("None", "''", '""', "0", "False", "0.0")


def is_none(v: V) -> Optional[bool]:
    if not v.atoms:
        return None
    states = set()
    for a in v.ordered():
        if isinstance(a, Origin):
            if a.kind == "literal":
                states.add(a.expr == "None" and not a.partial)   # a built value is not None
            elif a.kind == "module-constant" and a.inner:
                # a constant is None where what it was bound to is (``HERE = os.path.dirname(__file__)``: not)
                inner = False if a.partial else is_none(V(frozenset(a.inner)))
                if inner is None:
                    return None
                states.add(inner)
            elif a.kind in ("test-value", "project-file", "home", "cwd", "default-argument", "clock"):
                states.add(False)
            elif instance_class(a) is not None:   # a library class's instance
                states.add(False)
            else:
                return None
        elif a[0] in ("mod", "func", "cls", "inst", "client", "fixture", "double", "seq", "dict", "handle", "modobj"):
            states.add(False)
        else:
            return None
    return states.pop() if len(states) == 1 else None


def _number(insts, found: Dict[int, int], order: List[int]) -> None:
    """Number the test instances among ``insts`` not numbered yet (``_canon_inputs``): the
    next free negative number in ``found``, the id appended to ``order``."""
    for iid in insts:
        if iid >= TEST_HEAP_BASE and iid not in found:
            found[iid] = -1 - len(order)
            order.append(iid)


def _canonical(d: str) -> str:
    """``d`` under the name the catalogue knows it by (``io.open`` -> ``open``); cached: a run
    asks again for the same few thousand names hundreds of thousands of times."""
    c = _CANONICAL.get(d)
    if c is None:
        if len(_CANONICAL) > 100_000:
            _CANONICAL.clear()
        c = _CANONICAL[d] = _canonical_of(d)
    return c


def _canonical_of(d: str) -> str:
    for a, b in _ALIASES:
        if d == a or d.startswith(a + "."):
            return b + d[len(a):]
    return d


_CANONICAL: Dict[str, str] = {}


_ALIASES = (("builtins.open", "open"), ("io.open", "open"), ("mock.", "unittest.mock."),
            ("posixpath", "os.path"), ("ntpath", "os.path"), ("pathlib.Path.home", "pathlib.Path.home"),
            ("time_machine.travel", "time_machine.travel"))


def dotted_qualname(qn: str) -> str:
    """``qn`` as a user writes the name: the ``.<locals>`` steps of nested functions left out."""
    return qn.replace(".<locals>", "")


def _expr_text(e) -> str:
    if e is None:
        return "?"
    k = e[0]
    if k == "name":
        return e[1]
    if k == "attr":
        return f"{_expr_text(e[1])}.{e[2]}"
    if k == "call":
        return f"{_expr_text(e[1])}(...)"
    if k == "sub":
        return f"{_expr_text(e[1])}[...]"
    return k


def ext_names(v) -> set:
    """The library names (canonical) a value holds: ``{"click.option"}`` for ``click.option``."""
    return {_canonical(a[1]) for a in v.refs() if a[0] == "ext"}


def inline_nonempty(expr) -> bool:
    """A loop's (or a comprehension's) iterable is written in place with an item of its own
    (nothing can empty it first): a list or set display, or ``.items()`` / ``.keys()`` /
    ``.values()`` of a dict display."""
    if expr[0] == "call" and expr[1][0] == "attr" and expr[1][2] in ("items", "keys", "values") and not expr[2]:
        expr = expr[1][1]
        return expr[0] == "dict" and any(k is not None for k, _v in expr[1])
    return expr[0] == "seq" and any(x[0] != "star" for x in expr[2])


def relative_literal(v: Optional[V], through: bool = False) -> Optional[Origin]:
    """The one string literal written whole that ``v`` is, when it names a path relative to the
    working directory (not absolute, not under ``~``); with ``through``, also behind a constant
    or default argument bound to one. None otherwise."""
    if v is None or len(v.atoms) != 1:
        return None
    (a,) = v.atoms
    while through and isinstance(a, Origin) and a.kind in ("module-constant", "default-argument") and \
            len(a.inner) == 1 and not a.partial:
        a = a.inner[0]
    if not isinstance(a, Origin) or a.kind != "literal" or a.partial or not isinstance(a.value, str) or \
            not a.value or a.expr[:1] not in ("'", '"') or anchored_path(a.value):
        return None
    return a
