"""What project (non-test) functions change of their own module's state when called.

HT303/HT304 anchor a change a test makes through a project function at the test's call of it
(``pollution``'s statement walk looks the callee up here): a function that writes a global it
declares, or fills a container its module holds at module level, or extends ``sys.path``.
Only direct writes, read from each function's own body; the per-module result is what the
per-test result cache keeps, so a module whose body and containers did not change is not
read again.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

from . import interp as I
from ..summarise.bodies import transient_bodies
from ..summarise.ir import ASSIGN_TARGETS, ASSIGN_VALUE, ATTR_ATTR, ATTR_VALUE, CALL_FUNC, EXPR_VALUE, \
    IF_BODY, IF_TEST, NAME_ID, PARAM_DEFAULT, PARAM_NAME, SUB_VALUE, TAG, \
    TRY_FINALLY, dotted_name, flat
from ..summarise.unparse import calls_in, module_imports
from .processfx import CONTAINER_METHODS, declared_globals, locals_of, loggers_bound, process_effects, spelt
from .values import V

# the methods that take entries out: of a container its module defines (and leaves) empty, what
# they take out was put in by a call, reported there; clear() empties it as imported (a reset)
_TAKE_ONE = {"pop", "discard", "remove", "__delitem__", "clear"}


def function_effects(ip: I.Interp, keys: Optional[Dict[str, str]] = None,
                     prev: Optional[Dict[str, tuple]] = None) -> Tuple[Dict[str, Set[tuple]], Dict[str, tuple]]:
    """Project (non-test) functions that mutate a module-level global or container of
    their own module, directly: ``(qualname -> {("glob", module, NAME)}, per module)``.

    A module's effects depend on its bodies (its content key in ``keys``) and on which of its
    globals hold containers, nothing else: the per-module part, ``module -> (content key,
    container names, {qualname: sorted keys})``, is what the per-test result cache keeps, and a
    module whose two inputs match its entry in ``prev`` is not read again."""
    containers = {mod: _held(g) for mod, g in ip.globals.items() if g}
    return effects_of(ip.p, containers, keys, prev)


def _held(g: Dict[str, V]) -> Tuple[Tuple[str, bool], ...]:
    """A module's globals holding containers: sorted ``(name, empty as imported)`` pairs."""
    return tuple(sorted((n, is_empty_container(v)) for n, v in g.items() if is_container(v)))


def _module_inputs(summary: Optional[dict], held) -> Tuple[Set[str], Set[str], Dict[str, str], Set[str]]:
    """What ``_direct_effects`` reads of a function's module: the containers it holds (not weak
    ones: their entries go with their objects, Django's ``AdminSite()`` in ``all_sites``), those
    empty as imported, the names its imports bind, and its loggers."""
    aliases = module_imports(summary)
    body = (summary or {}).get("body", ())
    return ({n for n, _ in held} - _weak_containers(body, aliases), {n for n, e in held if e}, aliases,
            loggers_bound(body, aliases))


def effects_of(program: I.Program, containers: Dict[str, Tuple[str, ...]], keys: Optional[Dict[str, str]] = None,
               prev: Optional[Dict[str, tuple]] = None) -> Tuple[Dict[str, Set[tuple]], Dict[str, tuple]]:
    """``function_effects`` from the names of each imported module's globals that hold
    containers (``containers``: module -> sorted ``(name, empty at its definition)`` pairs; a
    module absent was not imported), as an earlier run's per-module part records them for a run
    that imports nothing."""
    out: Dict[str, Set[tuple]] = {}
    per_module: Dict[str, tuple] = {}
    keys, prev = keys or {}, prev or {}
    by_module: Dict[str, List[tuple]] = {}
    for qn, (f, mod) in program.functions.items():
        if not program.in_test.get(mod, False) and mod in containers:
            by_module.setdefault(mod, []).append((qn, f))
    # every project function's body, read once, module by module (no interpreter runs here, so
    # what the scope reads is the scan's own)
    with transient_bodies() as scope:
        for mod, funcs in by_module.items():
            held = containers[mod]
            key = keys.get(mod)
            old = prev.get(mod)
            if key is not None and isinstance(old, tuple) and len(old) == 3 and old[0] == key \
                    and old[1] == held:
                found = old[2]
            else:
                scope.release()
                found = {}
                names, empty, aliases, loggers = _module_inputs(program.summaries.get(mod), held)
                # the project modules its imports bind (`from . import backend`): their globals
                # are module state too (an import that resolved otherwise would not run)
                others = {n: program.canonical.get(m, m) for n, m in aliases.items()
                          if program.canonical.get(m, m) in program.summaries and m != mod}
                for qn, f in funcs:
                    fx = _direct_effects(f, mod, names, empty, aliases, loggers, others)
                    if fx:
                        found[qn] = sorted(fx)
            per_module[mod] = (key, held, found)
            for qn, fx in found.items():
                out[qn] = set(fx)
    return out, per_module


def _direct_effects(f: dict, mod: str, containers: Set[str], empty: Set[str] = frozenset(),
                    aliases: Optional[Dict[str, str]] = None, loggers: Set[str] = frozenset(),
                    others: Optional[Dict[str, str]] = None) -> Set[tuple]:
    """``f``'s direct writes to its module's state; ``containers``: the module's globals
    holding containers, ``empty``: those the module defines empty; ``others``: names its
    imports bind to other project modules, whose attributes ``f`` may assign (``backend._limit
    = limit``).

    A container the module defines empty that ``f`` only takes entries out of (``pop(k)``,
    ``discard(x)``, ``remove(x)``, ``clear()``) is ``("takes", mod, NAME)``: no change (it removes
    what a call put in, and that call is where the change is reported: a pool's finalizer popping
    the record its checkout added; emptied, it is as imported), but a cleanup where it runs in a
    ``finally`` or a teardown."""
    declared = declared_globals(f)
    keys: Set[tuple] = set()
    added: Set[str] = set()   # containers f changes other than by taking one entry out
    bound = _bound_container_methods(f, containers)
    for st in flat(f["body"]):
        if st[TAG] == "assign":
            for t in st[ASSIGN_TARGETS]:
                if t[TAG] == "name" and t[NAME_ID] in declared:
                    keys.add(("glob", mod, t[NAME_ID]))
                elif others and t[TAG] == "attr" and t[ATTR_VALUE][TAG] == "name" and \
                        t[ATTR_VALUE][NAME_ID] in others and t[ATTR_VALUE][NAME_ID] not in locals_of(f):
                    keys.add(("glob", others[t[ATTR_VALUE][NAME_ID]], t[ATTR_ATTR]))
                elif t[TAG] == "sub" and t[SUB_VALUE][TAG] == "name" and t[SUB_VALUE][NAME_ID] in containers \
                        and t[SUB_VALUE][NAME_ID] not in locals_of(f):
                    keys.add(("glob", mod, t[SUB_VALUE][NAME_ID]))
                    added.add(t[SUB_VALUE][NAME_ID])
        elif st[TAG] == "expr" and st[EXPR_VALUE][TAG] == "call":
            fn = st[EXPR_VALUE][CALL_FUNC]
            if fn[TAG] == "attr" and fn[ATTR_ATTR] in CONTAINER_METHODS and fn[ATTR_VALUE][TAG] == "name" \
                    and fn[ATTR_VALUE][NAME_ID] in containers and fn[ATTR_VALUE][NAME_ID] not in locals_of(f):
                keys.add(("glob", mod, fn[ATTR_VALUE][NAME_ID]))
                if fn[ATTR_ATTR] not in _TAKE_ONE:
                    added.add(fn[ATTR_VALUE][NAME_ID])
            elif fn[TAG] == "name" and fn[NAME_ID] in bound:
                keys.add(("glob", mod, bound[fn[NAME_ID]][0]))
                if bound[fn[NAME_ID]][1] not in _TAKE_ONE:
                    added.add(bound[fn[NAME_ID]][0])
    for n in empty - added:
        if ("glob", mod, n) in keys:   # only taken out of: a cleanup where it runs as one, else no change
            keys.discard(("glob", mod, n))
            keys.add(("takes", mod, n))
    keys |= process_effects(f["body"], aliases or {}, loggers | loggers_bound(f["body"], aliases or {}))
    # a global the function sets and puts back in its own finally: no change survives the call
    reset = _reset_in_finally(f["body"])
    keys -= {("glob", mod, n) for n in reset if n in declared}
    if others:   # another module's global put back in a finally (click's CliRunner.isolation())
        keys -= {("glob", others[b], a) for b, _dot, a in (n.partition(".") for n in reset) if a and b in others}
    keys -= {("glob", mod, n) for n in _lazy_inits(f["body"], declared)}
    return keys


def early_effects(ip: I.Interp, qn: str) -> Set[tuple]:
    """What a call of project function ``qn`` changes before anything in it could raise: the
    effects of its body's leading statements, up to and including the first that calls or raises
    (Django's ``run_with_reloader`` sets a signal handler first; ``Settings()`` sets ``TZ`` only
    after the checks that raise)."""
    f, mod = ip.p.functions[qn]
    prefix = []
    for st in f["body"]:
        prefix.append(st)
        if st[TAG] == "raise" or next(iter(calls_in(st)), None) is not None:
            break
    inputs = _module_inputs(ip.p.summaries.get(mod), _held(ip.globals.get(mod, {})))
    return _direct_effects(dict(f, body=prefix), mod, *inputs)


def _bound_container_methods(f: dict, containers: Set[str]) -> Dict[str, Tuple[str, str]]:
    """Parameters whose default is a method of a module container (celery's
    ``task_reserved(request, add_request=requests.__setitem__)``) -> (that container, the
    method): calling the parameter with its default changes the container."""
    out: Dict[str, Tuple[str, str]] = {}
    for p in f["params"]:
        d = p[PARAM_DEFAULT] if len(p) > PARAM_DEFAULT else None
        if d is not None and d[TAG] == "attr" and d[ATTR_ATTR] in CONTAINER_METHODS \
                and d[ATTR_VALUE][TAG] == "name" and d[ATTR_VALUE][NAME_ID] in containers:
            out[p[PARAM_NAME]] = (d[ATTR_VALUE][NAME_ID], d[ATTR_ATTR])
    return out


def _lazy_inits(stmts, declared: Set[str]) -> Set[str]:
    """Globals the function assigns only under ``if NAME is None:`` (or ``if not NAME:``): a
    lazily built value, the same whichever call builds it first, not state a test leaves."""
    def assigned(st) -> List[str]:
        return [t[NAME_ID] for t in st[ASSIGN_TARGETS] if t[TAG] == "name" and t[NAME_ID] in declared] \
            if st[TAG] == "assign" else []

    counts: Dict[str, int] = {}   # assignments of each global not under its own guard
    for st in flat(stmts):
        for n in assigned(st):
            counts[n] = counts.get(n, 0) + 1
    guarded: Set[str] = set()
    for st in flat(stmts):
        if st[TAG] != "if":
            continue
        test, g = st[IF_TEST], ""
        if test[TAG] == "cmp" and list(test[1]) == ["Is"] and len(test[2]) == 2 and \
                tuple(test[2][1]) == ("lit", None) and test[2][0][TAG] == "name":
            g = test[2][0][NAME_ID]
        elif test[TAG] == "unary" and test[1] == "Not" and test[2][TAG] == "name":
            g = test[2][NAME_ID]
        if g in declared:
            for inner in flat(st[IF_BODY]):
                if g in assigned(inner):
                    guarded.add(g)
                    counts[g] -= 1
    return {g for g in guarded if counts.get(g, 0) <= 0}


_WEAK_CTORS = {"weakref.WeakSet", "weakref.WeakValueDictionary", "weakref.WeakKeyDictionary"}


def _weak_containers(body, aliases: Dict[str, str]) -> Set[str]:
    """Names a module's top level binds to a weak container (``all_sites = WeakSet()``)."""
    out: Set[str] = set()
    for st in body:
        if st[TAG] == "assign" and st[ASSIGN_VALUE][TAG] == "call" and \
                spelt(dotted_name(st[ASSIGN_VALUE][CALL_FUNC]), aliases) in _WEAK_CTORS:
            out |= {t[NAME_ID] for t in st[ASSIGN_TARGETS] if t[TAG] == "name"}
    return out


def _reset_in_finally(stmts) -> Set[str]:
    """What the ``finally`` blocks of these statements (at any depth) assign: names (``X``) and a
    name's attributes (``mod.X``), as written."""
    out: Set[str] = set()
    for st in flat(stmts):
        if st[TAG] == "try":
            for inner in flat(st[TRY_FINALLY]):
                if inner[TAG] == "assign":
                    out |= {dotted_name(t) for t in inner[ASSIGN_TARGETS] if t[TAG] in ("name", "attr")} - {""}
    return out


def changed_state(key: tuple) -> tuple:
    """The state an effect key is about: ``("takes", mod, NAME)`` is the global's ``("glob", mod,
    NAME)``; any other key is its own."""
    return ("glob",) + key[1:] if key[0] == "takes" else key


def is_container(v: V) -> bool:
    """A module global known to hold a list, dict or set (not a proxy or other object)."""
    return any(isinstance(a, tuple) and a[0] in ("seq", "dict") for a in v.atoms)


def is_empty_container(v: V) -> bool:
    """A module global that holds an empty list, dict or set on every way it was bound."""
    return bool(v.atoms) and all(isinstance(a, tuple) and (a[0] == "seq" and not a[2] or a[0] == "dict" and not a[1])
                                 for a in v.atoms)
