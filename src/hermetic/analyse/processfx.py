"""What a function's own statements change of the process (a pure reading of its summary, no
interpreter): catalogued setters and attributes, ``sys.path``, the environment, a logger's
configuration, and what a ``finally`` or a saved old value writes back. ``effects`` builds a
function's effects on it; the interpreter records which of these statements a test's run executed
(``process_lines``)."""
from __future__ import annotations

from typing import Any, Dict, Optional, Set, Tuple

from ..catalogue.process_state import process_state
from ..summarise.ir import ASSIGN_TARGETS, ASSIGN_VALUE, ATTR_ATTR, ATTR_VALUE, CALL_ARGS, CALL_FUNC, CALL_KWARGS, EXPR_VALUE, \
    DEL_TARGET, DICT_ITEMS, FOR_TARGET, GLOBAL_NAMES, KWARG_NAME, LIT_VALUE, NAME_ID, PARAM_DEFAULT, PARAM_NAME, SUB_INDEX, SUB_VALUE, TAG, TRY_FINALLY, \
    TUPLE_ITEMS, WITH_ITEMS, dotted_name, flat, stmt_line
from ..summarise.unparse import calls_in, module_imports
from .state import FX_STATEMENTS

# the container methods that change a container in place
CONTAINER_METHODS = {"append", "extend", "update", "add", "pop", "clear", "setdefault", "insert", "remove",
                     "discard", "popitem", "__setitem__", "__delitem__"}


def finally_writes(body, aliases: Dict[str, str], names: Optional[Dict[str, str]] = None) -> Set[tuple]:
    """The process state the ``finally`` blocks of ``body`` write back (``_process_writes``);
    ``names``: its locals bound to a literal (``literal_locals``), read from ``body`` when not given."""
    cat = process_state()
    names = literal_locals(body) if names is None else names
    out: Set[tuple] = set()
    for st in flat(body):
        if st[TAG] == "try":
            for inner in flat(st[TRY_FINALLY]):
                out |= _process_writes(inner, cat, restoring=True, aliases=aliases, names=names)
    return out


def module_inputs(summary: Optional[dict]) -> Tuple[Dict[str, str], Set[str]]:
    """What ``process_lines`` reads of a function's module: the names its imports bind and its
    loggers (``log = logging.getLogger(...)``)."""
    aliases = module_imports(summary)
    return aliases, loggers_bound((summary or {}).get("body", ()), aliases)


def process_lines(f: dict, aliases: Dict[str, str], module_loggers: Set[str]) -> Dict[int, tuple]:
    """Line -> the states (effect keys) of ``f``'s simple statements (assignments, calls) that
    change the process on their own (``process_effects`` of each: a setter, a catalogued
    attribute, ``sys.path``, the environment, a logger), whatever their branch: where the
    interpreter records that a test's run executed them (``Interp.fx_hits``). ``aliases`` and
    ``module_loggers``: its module's (``module_inputs``)."""
    loggers = module_loggers | loggers_bound(f["body"], aliases)
    own, declared, names = locals_of(f), declared_globals(f), literal_locals(f["body"])
    defaults = {p[PARAM_NAME]: p[PARAM_DEFAULT] for p in f["params"] if len(p) > PARAM_DEFAULT and p[PARAM_DEFAULT]}
    out: Dict[int, tuple] = {}
    for st in flat(f["body"]):
        if st[TAG] in FX_STATEMENTS:
            keys = process_effects([st], aliases, loggers, names) | _module_writes(st, own, declared, defaults)
            if keys:
                out[stmt_line(st)] = tuple(sorted(set(out.get(stmt_line(st), ())) | keys))
    return out


def _module_writes(st, own: Set[str], declared: Set[str], defaults: dict) -> Set[tuple]:
    """``("global-name", NAME)`` for each module-level name statement ``st`` may write (a global
    it declares assigned, an entry or method call of a name it does not bind, an attribute of such
    a name, a parameter whose default is such a name's method called): a superset of the shapes
    ``effects._direct_effects`` reads as module state, so a run that executed none of them did not
    change that state (HT303 at a test's call)."""
    out: Set[tuple] = set()
    if st[TAG] == "assign":
        for t in st[ASSIGN_TARGETS]:
            if t[TAG] == "name" and t[NAME_ID] in declared:
                out.add(("global-name", t[NAME_ID]))
            elif t[TAG] == "attr" and t[ATTR_VALUE][TAG] == "name" and t[ATTR_VALUE][NAME_ID] not in own:
                out.add(("global-name", t[ATTR_ATTR]))
            elif t[TAG] == "sub" and t[SUB_VALUE][TAG] == "name" and t[SUB_VALUE][NAME_ID] not in own:
                out.add(("global-name", t[SUB_VALUE][NAME_ID]))
    elif st[TAG] == "expr" and st[EXPR_VALUE][TAG] == "call":
        fn = st[EXPR_VALUE][CALL_FUNC]
        if fn[TAG] == "attr" and fn[ATTR_ATTR] in CONTAINER_METHODS and fn[ATTR_VALUE][TAG] == "name" \
                and fn[ATTR_VALUE][NAME_ID] not in own:
            out.add(("global-name", fn[ATTR_VALUE][NAME_ID]))
        elif fn[TAG] == "name" and fn[NAME_ID] in defaults:
            d = defaults[fn[NAME_ID]]
            if d[TAG] == "attr" and d[ATTR_VALUE][TAG] == "name":
                out.add(("global-name", d[ATTR_VALUE][NAME_ID]))
    return out


def declared_globals(f: dict) -> Set[str]:
    """The names ``f`` declares ``global``."""
    out: Set[str] = set()
    for st in flat(f["body"]):
        if st[TAG] == "global":
            out |= set(st[GLOBAL_NAMES])
    return out


def locals_of(f: dict) -> Set[str]:
    """Names a function binds (its parameters and assigned names), less those it declares global."""
    return ({p[PARAM_NAME] for p in f["params"]} | assigned_names(f)) - declared_globals(f)


def assigned_names(f: dict) -> Set[str]:
    """The names ``f``'s body assigns (``x = ...``, ``a, b = ...``, ``x += 1``, a ``for`` loop's
    target, ``with ... as x``)."""
    names: Set[str] = set()
    for st in flat(f["body"]):
        todo = list(st[ASSIGN_TARGETS]) if st[TAG] == "assign" else [st[1]] if st[TAG] == "augassign" else \
            [st[FOR_TARGET]] if st[TAG] == "for" else \
            [t for _e, t in st[WITH_ITEMS] if t is not None] if st[TAG] == "with" else []
        while todo:
            t = todo.pop()
            if t[TAG] == "name":
                names.add(t[NAME_ID])
            elif t[TAG] == "tuple":
                todo.extend(t[TUPLE_ITEMS])
    return names


def process_effects(body, aliases: Dict[str, str], loggers: Set[str] = frozenset(),
                    names: Optional[Dict[str, str]] = None) -> Set[tuple]:
    """What a function changes of the process directly (by the dotted names it writes, as
    ``import os`` / ``import logging`` spell them): catalogued process state (``calls``,
    ``attributes``: ``(state,)``; a logger's ``logger-methods`` where the logger is
    ``logging.getLogger(...)``, ``logging.root`` or a name in ``loggers``) and environment
    variables it sets or removes (``("env", NAME)``; ``("env", "*")`` for one whose name is
    computed, ``os.environ[key] = value`` over a file's entries, ``os.environ.update(mapping)``), less
    what its own ``finally`` blocks write again (a set-and-restore), and less a state whose
    setter's old value it passes back to the setter (``old = signal.signal(S, h)`` ...
    ``signal.signal(S, old)``, Django's ``ensure_echo_on``; ``old = os.getcwd()`` ... ``os.chdir(old)``:
    the catalogue's ``getters``)."""
    cat = process_state()
    names = literal_locals(body) if names is None else names
    out: Set[tuple] = set()
    saved: Dict[str, str] = {}   # name -> the state whose old value the setter (or a getter) gave it
    for st in flat(body):
        if st[TAG] == "assign" and st[ASSIGN_VALUE][TAG] == "call":
            called = spelt(dotted_name(st[ASSIGN_VALUE][CALL_FUNC]), aliases)
            state = cat.calls.get(called) or cat.getters.get(called)
            if state:
                if called in cat.calls:
                    out.add((state,))
                saved.update((t[NAME_ID], state) for t in st[ASSIGN_TARGETS] if t[TAG] == "name")
    back = set()
    for st in flat(body):
        if st[TAG] == "expr" and st[EXPR_VALUE][TAG] == "call" and \
                (state := cat.calls.get(spelt(dotted_name(st[EXPR_VALUE][CALL_FUNC]), aliases))) and \
                any(a[TAG] == "name" and saved.get(a[NAME_ID]) == state for a in st[EXPR_VALUE][CALL_ARGS]):
            back.add((state,))   # the old value written back
            continue
        out |= _process_writes(st, cat, aliases=aliases, names=names)
        out |= _logger_writes(st, cat, aliases, loggers)
        if any(spelt(dotted_name(c[CALL_FUNC]), aliases) in cat.env_writers for c in calls_in(st)):
            out.add(("env", "*"))   # load_dotenv(): the variables of a file
    return out - back - finally_writes(body, aliases, names)


# what adds to sys.path, and what else a ``finally`` may do to put it back (celery's cwd_in_path())
_SYSPATH_ADDS = ("insert", "append", "extend")
_SYSPATH_PUTS_BACK = _SYSPATH_ADDS + ("remove", "pop")
# the environment writes whose first argument names the one variable they set or remove
_ENV_ONE_NAMED = ("os.environ.setdefault", "os.environ.__setitem__", "os.environ.pop", "os.putenv", "os.unsetenv")


def _process_writes(st, cat, restoring: bool = False, aliases: Optional[Dict[str, str]] = None,
                    names: Optional[Dict[str, str]] = None) -> Set[tuple]:
    """The process state statement ``st`` writes; ``restoring``: in a ``finally``, where taking
    an entry out of ``sys.path`` or assigning it whole puts it back."""
    out: Set[tuple] = set()
    if st[TAG] == "assign":
        for t in st[ASSIGN_TARGETS]:
            whole = t[SUB_VALUE] if t[TAG] == "sub" else t
            if restoring and dotted_name(whole) == "sys.path":   # sys.path = saved / sys.path[:] = saved
                out.add(("syspath",))
            elif t[TAG] == "attr" and dotted_name(t) in cat.attributes:
                out.add((cat.attributes[dotted_name(t)],))
            elif t[TAG] == "sub" and spelt(dotted_name(t[SUB_VALUE]), aliases or {}) == "os.environ":
                out.add(_env_key(t[SUB_INDEX], names))
    elif st[TAG] == "expr" and st[EXPR_VALUE][TAG] == "call":
        call = st[EXPR_VALUE]
        name = spelt(dotted_name(call[CALL_FUNC]), aliases or {})   # (`from os import chdir`)
        if name in cat.calls:
            out.add((cat.calls[name],))
        elif name.startswith("sys.path.") and name[len("sys.path."):] in (
                _SYSPATH_PUTS_BACK if restoring else _SYSPATH_ADDS):
            out.add(("syspath",))
        elif name in _ENV_ONE_NAMED:   # the variable its first argument names
            if call[CALL_ARGS]:
                out.add(_env_key(call[CALL_ARGS][0], names))
        elif name == "os.environ.update":
            args = call[CALL_ARGS]
            if len(args) == 1 and args[0][TAG] == "dict" and not call[CALL_KWARGS] and \
                    all(k is not None for k, _v in args[0][DICT_ITEMS]):
                out |= {_env_key(k, names) for k, _v in args[0][DICT_ITEMS]}
            else:   # a mapping the function was given, or keywords: variables it does not name
                out |= {("env", kw[KWARG_NAME]) for kw in call[CALL_KWARGS] if kw[KWARG_NAME]} or {("env", "*")}
                if args:
                    out.add(("env", "*"))
        elif name in ("os.environ.clear", "os.environ.popitem"):
            out.add(("env", "*"))
    elif st[TAG] == "del":
        t = st[DEL_TARGET]
        if t[TAG] == "sub" and spelt(dotted_name(t[SUB_VALUE]), aliases or {}) == "os.environ":
            out.add(_env_key(t[SUB_INDEX], names))
    return out


def _env_key(idx, names: Optional[Dict[str, str]] = None) -> tuple:
    """``("env", NAME)`` for a variable a string literal names (or a local bound once to one:
    ``names``, ``literal_locals``), ``("env", "*")`` for one the code computes (``os.environ[key]
    = value`` over a file's entries): a change all the same."""
    if idx[TAG] == "lit" and isinstance(idx[LIT_VALUE], str):
        return ("env", idx[LIT_VALUE])
    if idx[TAG] == "name" and names and idx[NAME_ID] in names:
        return ("env", names[idx[NAME_ID]])
    return ("env", "*")


def _bound_once(body) -> Dict[str, Any]:
    """The names ``body`` binds exactly once, by a plain assignment to that name alone, and never
    otherwise (``+=``, a loop's target): name -> the assigned expression."""
    once: Dict[str, Any] = {}
    for st in flat(body):
        targets = st[ASSIGN_TARGETS] if st[TAG] == "assign" else [st[1]] if st[TAG] == "augassign" else \
            [st[FOR_TARGET]] if st[TAG] == "for" else []
        for t in targets:
            if t[TAG] == "name":
                value = st[ASSIGN_VALUE] if st[TAG] == "assign" and len(st[ASSIGN_TARGETS]) == 1 else None
                once[t[NAME_ID]] = value if t[NAME_ID] not in once else None
    return {n: v for n, v in once.items() if v is not None}


def literal_locals(body) -> Dict[str, str]:
    """The names ``body`` binds exactly once (``_bound_once``), to a string literal (``var_name = "X"``)."""
    return {n: v[LIT_VALUE] for n, v in _bound_once(body).items() if v[TAG] == "lit" and isinstance(v[LIT_VALUE], str)}


def call_locals(body) -> Dict[str, Any]:
    """The names ``body`` binds exactly once (``_bound_once``), to a call's result (``p = Program()``):
    name -> the call expression."""
    return {n: v for n, v in _bound_once(body).items() if v[TAG] == "call"}


def loggers_bound(body, aliases: Dict[str, str]) -> Set[str]:
    """Names these statements bind to ``logging.getLogger(...)`` (``log = logging.getLogger(__name__)``)."""
    out: Set[str] = set()
    for st in flat(body):
        if st[TAG] == "assign" and _is_get_logger(st[ASSIGN_VALUE], aliases):
            out |= {t[NAME_ID] for t in st[ASSIGN_TARGETS] if t[TAG] == "name"}
    return out


def _is_get_logger(e, aliases: Dict[str, str]) -> bool:
    return e[TAG] == "call" and spelt(dotted_name(e[CALL_FUNC]), aliases) == "logging.getLogger"


def _logger_writes(st, cat, aliases: Dict[str, str], loggers: Set[str]) -> Set[tuple]:
    """``logger.setLevel(...)`` / ``addHandler`` / ``addFilter`` on a logger (the calls that undo
    one, ``removeHandler``, are no change): the logging state it changes."""
    if st[TAG] != "expr" or st[EXPR_VALUE][TAG] != "call" or st[EXPR_VALUE][CALL_FUNC][TAG] != "attr":
        return set()
    fn = st[EXPR_VALUE][CALL_FUNC]
    recv, meth = fn[ATTR_VALUE], fn[ATTR_ATTR]
    if meth not in cat.logger_methods:
        return set()
    if _is_get_logger(recv, aliases) or spelt(dotted_name(recv), aliases) == "logging.root" or (
            recv[TAG] == "name" and recv[NAME_ID] in loggers):
        return {(cat.logger_methods[meth][0],)}
    return set()


def spelt(name: str, aliases: Dict[str, str]) -> str:
    """A dotted call name with its first part as the module's imports bind it (``module_imports``)."""
    head, dot, rest = name.partition(".")
    return aliases[head] + dot + rest if head in aliases else name
