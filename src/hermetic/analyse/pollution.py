"""HT301-HT304: process state a test or fixture changes and does not put back.

Works on summaries: each function of test code (tests, fixtures, set-up, helpers) and each
test module's top level is scanned for mutations of process-wide state; a mutation is
restored when the same function puts the same thing back in a ``finally`` block, after a
fixture's ``yield``, in ``tearDown``/``addCleanup``, or through monkeypatch / patch.dict
(which are not mutations at all). Names are resolved through the module's imports with
the interpreter's static evaluation. A call of a project function that changes its own
module's state counts as the change, anchored at the call (``effects``: what each such
function changes).
"""
from __future__ import annotations

from typing import Dict, List, Set, Tuple

from . import interp as I
from ..summarise.ir import ASSIGN_LINE, ASSIGN_TARGETS, ASSIGN_VALUE, ATTR_ATTR, ATTR_VALUE, CALL_ARGS, CALL_FUNC, \
    CALL_KWARGS, CALL_POS, DEL_LINE, DEL_TARGET, EXPR_VALUE, FOR_BODY, IF_BODY, IF_ORELSE, IF_TEST, LAMBDA_BODY, \
    LIT_VALUE, NAME_ID, RETURN_VALUE, SUB_INDEX, SUB_VALUE, TAG, TRY_BODY, TRY_FINALLY, TRY_HANDLERS, TRY_ORELSE, \
    WHILE_BODY, WITH_BODY, WITH_ITEMS, dotted_name
from ..summarise.unparse import calls_in
from ..catalogue.process_state import process_state
from .expected import expecting
from .deepeffects import patched_names, project_call
from .effects import CONTAINER_METHODS, is_empty_container   # what project functions change: computed there
from .mpwrap import forwarded_saves
from .process_changes import library_attr_assign, note_binding, process_assign, process_call, protected_by_patch
from .statescan import Mutation, Scan, cached_io, covering, fixture_method, instance_method, reset_names, states_shown  # noqa: F401  (the rules read them from here)
from .statescan import Walk as _Walk, add as _add, bind_import as _bind_import, ext_names as _ext, \
    function_frame as _function_frame, key_of as _key_of, call_locals, literal_locals, monkeypatch_saves as _mp_saves, \
    project_global as _project_global, resolve as _resolve, restored as _restored, scan_frame as _frame, \
    put_back as _put_back, delete as _delete

_ENV_METHODS = {"update", "pop", "setdefault", "clear", "__setitem__", "__delitem__", "popitem"}
_ENV_READS = {"os.environ.get", "os.environ.copy", "os.getenv"}
# the container methods whose first argument names the one entry they change
_ITEM_METHODS = {"pop", "setdefault", "__setitem__", "__delitem__", "add", "remove", "discard"}
_SYSPATH_METHODS = {"insert", "append", "extend", "remove", "pop", "clear", "__setitem__"}


def scan_function(ip: I.Interp, f: dict, mod: str, is_fixture: bool, teardown_restores: Set[tuple],
                  effects: Dict[str, Set[tuple]], fixture=None) -> List[Mutation]:
    """The unrestored mutations of one function of test code (a fixture's too: ``is_fixture``
    does not change the scan). ``fixture``: ``Walk.fixture`` for a test's or fixture's parameters."""
    frame = _function_frame(ip, f, mod)
    sc = Scan()
    wrapped: Set[tuple] = set()   # what the project's decorators of ``f`` put back around it
    for dexpr, _line in f["decorators"]:
        if dexpr[TAG] == "call":
            sc.protected |= _protected_by(ip, dexpr, frame)
        wrapped |= _decorator_restores(ip, dexpr, frame)
    _walk(_Walk(ip, frame, sc, effects, literals=literal_locals(f["body"]), fixture=fixture,
                patched=patched_names(ip, f, frame), made=call_locals(f["body"])), f["body"], in_restore=False)
    restores = sc.restores | teardown_restores | wrapped
    out = []
    seen_keys: Set[tuple] = set()
    taken_back = _set_then_removed(sc.mutations)
    for m in sc.mutations:
        if m.key in taken_back:
            continue
        rebinding = _binds_whole(m) or m.key[0] in ("cwd", "umask")
        if rebinding and m.key in seen_keys:
            continue   # a later rebinding of the same name (often a reset) is the same problem
        seen_keys.add(m.key)
        if m.key in restores or (m.key[0] in ("env", "sysmod") and (m.key[0], "*") in restores):
            continue
        if m.key[0] == "patcher" and ("patcher", "*") in restores:
            continue
        out.append(m)
    return out


def _set_then_removed(mutations: List[Mutation]) -> Set[tuple]:
    """Environment variables the function sets and later removes itself (``os.environ[K] = v``
    ... ``del os.environ[K]``): the removal takes its own change back. The variable is taken as
    unset before (a name the test chose); a removal before any set is a change of its own."""
    first_set: Dict[tuple, int] = {}
    out: Set[tuple] = set()
    for m in mutations:
        if m.key[0] != "env" or m.key[1] == "*":
            continue
        if not m.removes:
            first_set.setdefault(m.key, m.pos[0])
        elif m.key in first_set and m.pos[0] > first_set[m.key]:
            out.add(m.key)
    return out


def _decorator_restores(ip: I.Interp, dexpr, frame) -> Set[tuple]:
    """What a project decorator puts back in the ``finally`` around the call it wraps (its own
    body, or a wrapper it defines): SQLAlchemy's ``@modifies_instrumentation_finders`` saves a
    container, calls the test and restores the container."""
    out: Set[tuple] = set()
    for a in _resolve(ip, dexpr[CALL_FUNC] if dexpr[TAG] == "call" else dexpr, frame).refs():
        if a[0] != "func" or a[1] not in ip.p.functions:
            continue
        g, gmod = ip.p.functions[a[1]]
        out |= restores_of(ip, g, gmod)
        for qn, inner in ip.p.summaries[gmod]["functions"].items():   # a wrapper it defines
            if qn.startswith(a[1] + ".<locals>."):
                out |= restores_of(ip, inner, gmod)
    return out


def _protected_by(ip, call, frame) -> Set[tuple]:
    """``patch.dict(os.environ, ...)`` / ``patch.dict(mod.CONTAINER)`` restore what is changed inside."""
    names = _ext(_resolve(ip, call[CALL_FUNC], frame))
    if not any(n.startswith("unittest.mock.patch.dict") or n.endswith("patch.dict") for n in names) \
            or not call[CALL_ARGS]:
        return protected_by_patch(ip, call, frame, names)
    target = call[CALL_ARGS][0]
    if "os.environ" in _ext(_resolve(ip, target, frame)) or (
            target[TAG] == "lit" and target[LIT_VALUE] == "os.environ"):
        return {("env", "*")}
    if "sys.modules" in _ext(_resolve(ip, target, frame)) or (
            target[TAG] == "lit" and target[LIT_VALUE] == "sys.modules"):
        return {("sysmod", "*")}   # patch.dict(sys.modules): every module entry put back on exit
    g = _project_global(ip, target, frame)
    return {("glob",) + g} if g is not None else set()


def _puts_back(ip, call, frame) -> Set[str]:
    """The kinds of state the context ``call`` makes puts back on exit: ``"cwd"`` for py.path's
    ``as_cwd()`` and ``contextlib.chdir``, and what a project context manager restores after
    its ``yield`` (``"sysmod"``: celery's ``reset_modules``; ``"cwd"``: pre-commit's
    ``testing.util.cwd``)."""
    fn = call[CALL_FUNC]
    if fn[TAG] == "attr" and fn[ATTR_ATTR] == "as_cwd" and not call[CALL_ARGS]:
        return {"cwd"}
    resolved = _resolve(ip, fn, frame)
    out = {"cwd"} if "contextlib.chdir" in _ext(resolved) else set()
    for a in resolved.refs():
        entry = ip.p.functions.get(a[1]) if a[0] == "func" else None
        if entry is not None and entry[0]["generator"]:
            out |= {k[0][0] for k in fixture_restores(ip, entry[0], entry[1], [])}
    return out


def scan_module(ip: I.Interp, summary: dict, mod: str, effects) -> List[Mutation]:
    frame = _frame(ip, mod)
    frame.is_module = True   # its imports are the module's (``library_attr_assign``)
    sc = Scan()
    for st in summary["body"]:
        if st[TAG] in ("def", "class"):
            continue
        _walk(_Walk(ip, frame, sc, effects), [st], in_restore=False)
    return [m for m in sc.mutations if m.key not in sc.restores]


def teardown_restores(ip: I.Interp, funcs: List[Tuple[dict, str]]) -> Set[tuple]:
    """Keys put back by tearDown-like methods (everything they mutate counts as restore)."""
    out: Set[tuple] = set()
    for f, mod in funcs:
        out |= _teardown_scan(ip, f, mod).restores
    return out


def _teardown_scan(ip: I.Interp, f: dict, mod: str) -> Scan:
    frame = _function_frame(ip, f, mod)
    sc = Scan()
    _walk(_Walk(ip, frame, sc, {}), f["body"], in_restore=True)
    return sc


def rebinds(ip: I.Interp, f: dict, mod: str) -> Set[tuple]:
    """The module globals ``f`` binds to a new value as a whole (``mail.outbox = []``), not an
    entry of, nor a call on, the container: what set-up code that runs before every test resets."""
    frame = _function_frame(ip, f, mod)
    sc = Scan()
    _walk(_Walk(ip, frame, sc, {}), f["body"], in_restore=False)
    return {m.key for m in sc.mutations if m.key[0] == "glob" and _binds_whole(m)}


def _binds_whole(m: Mutation) -> bool:   # ``mod.NAME = ...``: a new value, not an entry or a call
    return m.what.endswith(" = ...") and "[" not in m.what


def fixture_restores(ip: I.Interp, f: dict, mod: str, finalizers: List[Tuple[dict, str]]) -> Set[tuple]:
    """What a fixture's teardown puts back, as ``(key, entry)`` (``Scan.restored_items``): its
    code after ``yield`` (also in a ``finally`` around it), the lambdas and callables it
    registers as finalizers, and the functions ``finalizers`` it registers (all of whose
    restores count). Code before the ``yield`` runs before the test and is not teardown."""
    frame = _function_frame(ip, f, mod)
    sc = Scan()
    sc.after = [False]
    _walk(_Walk(ip, frame, sc, {}, after_yield=sc.after), f["body"], in_restore=False)
    out = set(sc.teardown)
    for g, gmod in finalizers:
        out |= _teardown_scan(ip, g, gmod).restored_items()
    return out


def _walk(w: _Walk, stmts, in_restore: bool) -> None:
    """Note the mutations and restores of ``stmts`` in ``w.sc``; ``in_restore``: inside a
    ``finally`` block or a teardown method, where a change counts as a restore."""
    ip, frame, sc, saved = w.ip, w.frame, w.sc, w.saved
    prev = None   # (key, index) of the one change the previous statement made
    for st in stmts:
        before = len(sc.mutations)
        try:
            k = st[TAG]
            restoring = in_restore or w.after_yield[0]
            if k == "assign":
                w.modules_out.update(_module_name(c) for c in calls_in(st[ASSIGN_VALUE])
                                     if "sys.modules.pop" in _ext(_resolve(ip, c[CALL_FUNC], frame)))
                for t in st[ASSIGN_TARGETS]:
                    _assign(w, t, st[ASSIGN_VALUE], st, restoring)
                if st[ASSIGN_VALUE][TAG] == "call":
                    _call(w, st[ASSIGN_VALUE], restoring)
                    for t in st[ASSIGN_TARGETS]:
                        if t[TAG] == "name":
                            note_binding(w, t[NAME_ID], st[ASSIGN_VALUE])
                if _is_env_read(ip, st[ASSIGN_VALUE], frame) or \
                        st[ASSIGN_VALUE][TAG] in ("name", "attr", "call", "seq", "sub"):
                    for t in st[ASSIGN_TARGETS]:
                        if t[TAG] == "name":
                            saved.add(t[NAME_ID])
                if st[ASSIGN_VALUE][TAG] == "call" and _is_patch_call(ip, st[ASSIGN_VALUE], frame):
                    for t in st[ASSIGN_TARGETS]:
                        if t[TAG] == "name":
                            saved.add("patcher:" + t[NAME_ID])
                        elif t[TAG] == "attr" and t[ATTR_VALUE][TAG] == "name" and t[ATTR_VALUE][NAME_ID] == "self":
                            saved.add("patcher:self." + t[ATTR_ATTR])
            elif k == "del":
                _delete(w, st[DEL_TARGET], st[DEL_LINE], restoring)
            elif k == "expr":
                e = st[EXPR_VALUE]
                if e[TAG] == "yield":
                    w.after_yield[0] = True
                    continue
                if e[TAG] == "call":
                    _call(w, e, restoring)
                else:   # calls inside an assert, a comparison, ...
                    for call in calls_in(e):
                        _call(w, call, restoring)
            elif k == "if" and frame.is_module and (frame.module, st[4]) in ip.module_ifs:
                # a test module's top-level branch its import decided (`if platform.is_darwin():`)
                _walk(w, st[IF_BODY] if ip.module_ifs[(frame.module, st[4])] else st[IF_ORELSE], in_restore)
            elif k == "if":
                guard = _set_guard(st[IF_TEST]) if restoring else ""
                if guard and guard not in w.guarded:
                    w.guarded.add(guard)
                    _walk(w, st[IF_BODY], in_restore)
                    w.guarded.discard(guard)
                else:
                    _walk(w, st[IF_BODY], in_restore)
                _walk(w, st[IF_ORELSE], in_restore)
            elif k in ("for", "while"):
                _walk(w, st[FOR_BODY] if k == "for" else st[WHILE_BODY], in_restore)
            elif k == "try":
                _walk(w, st[TRY_BODY], in_restore)
                for _n, b, _t in st[TRY_HANDLERS]:
                    _walk(w, b, in_restore)
                _walk(w, st[TRY_ORELSE], in_restore)
                _walk(w, st[TRY_FINALLY], True)
            elif k == "with":
                added: Set[tuple] = set()
                fresh = 0
                back: Set[str] = set()   # what the context managers put back on exit
                for item, _t in st[WITH_ITEMS]:
                    if item[TAG] == "call":
                        _call(w, item, restoring, as_context=True)
                        protects = _protected_by(ip, item, frame)
                        added |= protects - sc.protected
                        back |= _puts_back(ip, item, frame)
                        fresh = fresh or int(("sysmod", "*") in protects or "sysmod" in back)
                sc.protected |= added
                w.fresh_modules += fresh
                body = st[WITH_BODY]
                if body and any(expecting(item) for item, _t in st[WITH_ITEMS]):
                    # `with pytest.raises(E): f()`: the last statement raises, so what a project
                    # function changes after its check does not happen (Django's Settings() raising
                    # its deprecation warning before it sets TZ)
                    _walk(w, body[:-1], in_restore)
                    w.expecting += 1
                    _walk(w, body[-1:], in_restore)
                    w.expecting -= 1
                else:
                    _walk(w, body, in_restore)
                w.fresh_modules -= fresh
                sc.protected -= added
                if "cwd" in back:
                    _restored(sc, ("cwd",))   # its exit changes back (after a fixture's yield: at teardown)
            elif k in ("import", "from"):
                _bind_import(ip, st, frame, fresh=w.fresh_modules > 0)
            elif k == "return" and st[RETURN_VALUE] is not None and st[RETURN_VALUE][TAG] == "call":
                _call(w, st[RETURN_VALUE], restoring)
        finally:
            prev = _put_back_at_once(sc, before, prev)


def _put_back_at_once(sc: Scan, before: int, prev):
    """A change the very next statement puts back with the saved value (``umask = os.umask(0)``
    then ``os.umask(umask)``: nothing runs in between) leaves nothing: both are dropped. Returns
    the ``prev`` for the next statement."""
    added = sc.mutations[before:]
    if (prev is not None and len(added) == 1 and added[0].restore_like and added[0].key == prev[0]
            and prev[1] < before and sc.mutations[prev[1]].key == prev[0]):
        del sc.mutations[before]
        del sc.mutations[prev[1]]
        return None
    return (added[0].key, before) if len(added) == 1 else None


def _set_guard(test) -> str:
    """The variable an ``if`` requires to hold a value: ``saved`` of ``if saved is not None:`` or
    ``if saved:`` (also ``self.saved``); "" for any other test."""
    if test[TAG] == "cmp" and list(test[1]) == ["IsNot"] and len(test[2]) == 2 and tuple(test[2][1]) == ("lit", None):
        test = test[2][0]
    return dotted_name(test) if test[TAG] in ("name", "attr") else ""


def _is_env_read(ip, e, frame) -> bool:
    return e[TAG] == "call" and bool(_ext(_resolve(ip, e[CALL_FUNC], frame)) & _ENV_READS)


def _assign(w: _Walk, t, value, st, restoring: bool) -> None:
    """An assignment of ``value`` to the target ``t`` (statement ``st``)."""
    ip, frame, sc, saved = w.ip, w.frame, w.sc, w.saved
    line = st[ASSIGN_LINE]
    pos = (line, 1, line, 1)
    value_saved = value[TAG] == "name" and value[NAME_ID] in saved or value[TAG] in ("sub", "call") and restoring or (
        restoring and value[TAG] in ("name", "attr"))
    if w.guarded and value[TAG] in ("name", "attr") and dotted_name(value) in w.guarded:
        value_saved = False   # written back only where it was set: not where it was unset
    if process_assign(w, t, value_saved, pos, restoring):
        return
    if t[TAG] == "sub":
        base = _resolve(ip, t[SUB_VALUE], frame)
        ext = _ext(base)
        key = _key_of(w, t[SUB_INDEX])
        if "os.environ" in ext:
            shown = repr(key) if key != "*" else "..."
            _add(sc, Mutation("HT302", ("env", key), pos, f"os.environ[{shown}] = ...", value_saved, value_saved),
                 restoring)
            return
        if "sys.modules" in ext:
            _add(sc, Mutation("HT304", ("sysmod", key), pos, "sys.modules[...] = ...", True), restoring)
            return
        if "sys.path" in ext:
            _add(sc, Mutation("HT304", ("syspath",), pos, "sys.path[...] = ...", True), restoring)
            return
        g = _project_global(ip, t[SUB_VALUE], frame, container=True)
        if g is not None:
            _add(sc, Mutation("HT303", ("glob",) + g, pos, f"{g[0]}.{g[1]}[...] = ...", value_saved,
                              item=None if key == "*" else key), restoring)
    elif t[TAG] == "attr":
        ext = _ext(_resolve(ip, t[ATTR_VALUE], frame))
        if "os" in ext and t[ATTR_ATTR] == "environ":
            _add(sc, Mutation("HT302", ("env", "*"), pos, "os.environ = ...", value_saved), restoring)
            return
        if "sys" in ext and t[ATTR_ATTR] in ("path", "modules"):
            _add(sc, Mutation("HT304", ("syspath",) if t[ATTR_ATTR] == "path" else ("sysmod", "*"), pos,
                              f"sys.{t[ATTR_ATTR]} = ...", value_saved), restoring)
            return
        g = _project_global(ip, t, frame)
        if g is not None:
            back = value_saved or (restoring and _import_literal(ip, g[0], g[1], value))
            _add(sc, Mutation("HT303", ("glob",) + g, pos, f"{g[0]}.{g[1]} = ...", back), restoring)
        else:
            library_attr_assign(w, t, value_saved, pos, restoring)


def _import_literal(ip: I.Interp, mod: str, name: str, value) -> bool:
    """Whether ``value`` (an expression) is a constant the module's top level binds NAME to, in
    its body or under a top-level ``if`` / ``try`` (``flag = True`` / ``flag = False`` after an
    optional import): a literal, or an empty ``{}`` / ``[]`` (a cache rebuilt lazily). A reset
    to it in a ``finally`` or a teardown puts the import-time state back."""
    if not _constant(value):
        return False
    s = ip.p.summaries.get(mod)
    if s is None:
        return False
    found = []
    todo = list(s["body"])
    while todo:
        st = todo.pop()
        if st[TAG] == "assign" and any(t == ("name", name) for t in st[ASSIGN_TARGETS]):
            found.append(st[ASSIGN_VALUE])
        elif st[TAG] == "if":
            todo.extend(list(st[IF_BODY]) + list(st[IF_ORELSE]))
        elif st[TAG] == "try":
            todo.extend(list(st[TRY_BODY]) + [x for _n, b, _t in st[TRY_HANDLERS] for x in b] + list(st[TRY_ORELSE]))
    return bool(found) and all(_constant(f) for f in found) and any(_same(f, value) for f in found)


def _constant(e) -> bool:
    return e[TAG] == "lit" or (e[TAG] == "dict" and not e[1]) or (e[TAG] == "seq" and not e[2])


def _same(a, b) -> bool:
    return (a[TAG], a[1]) == (b[TAG], b[1]) if a[TAG] == "lit" else (a[TAG] == b[TAG] and
                                                                      (a[TAG] == "dict" or a[1] == b[1]))


def _call(w: _Walk, e, restoring: bool, as_context: bool = False) -> None:
    """A call expression ``e``; ``as_context``: the call of a ``with`` item."""
    ip, frame, sc, saved = w.ip, w.frame, w.sc, w.saved
    pos = tuple(e[CALL_POS])
    fn = e[CALL_FUNC]
    callee = _resolve(ip, fn, frame)
    callee = callee if callee.atoms else fixture_method(w, fn)   # env.read_env(), env a fixture's Env()
    callee = callee if callee.atoms else instance_method(w, fn)   # Program().run(argv), p.run() after p = Program()
    names = _ext(callee)
    args = e[CALL_ARGS]
    # patcher.start() / patch(...).start() / patcher.stop()
    if fn[TAG] == "attr" and fn[ATTR_ATTR] in ("start", "stop"):
        recv = fn[ATTR_VALUE]
        key = None
        stop = fn[ATTR_ATTR] == "stop"
        if recv[TAG] == "name" and (stop or "patcher:" + recv[NAME_ID] in saved):
            key = ("patcher", recv[NAME_ID])
        elif recv[TAG] == "attr" and recv[ATTR_VALUE][TAG] == "name" and recv[ATTR_VALUE][NAME_ID] == "self" and (
                stop or "patcher:self." + recv[ATTR_ATTR] in saved):
            key = ("patcher", "self." + recv[ATTR_ATTR])
        elif recv[TAG] == "call" and _is_patch_call(ip, recv, frame):
            key = ("patcher", f"@{pos}")
        if key is not None:
            if fn[ATTR_ATTR] == "start":
                _add(sc, Mutation("HT304", key, pos, "patch(...).start() with no stop()"), restoring)
            else:
                _restored(sc, key)
            return
    if fn[TAG] == "attr" and fn[ATTR_ATTR] in ("addCleanup", "addClassCleanup", "addfinalizer", "enterContext",
                                               "enterClassContext", "callback"):
        # a lambda registered as a finalizer runs at teardown: what it changes is a restore
        for a in args:
            if a[TAG] == "lambda":
                sc.finalizing += 1
                for inner in calls_in(a[LAMBDA_BODY]):
                    _call(w, inner, True)
                sc.finalizing -= 1
        # addCleanup(os.environ.pop, "K", None): the callable is called with the other arguments;
        # addfinalizer(partial(logger.removeHandler, h)): with the partial's
        later = None   # (callable, its arguments, its keywords) run at teardown
        if fn[ATTR_ATTR] in ("addCleanup", "addClassCleanup", "callback") and args and args[0][TAG] in ("attr", "name"):
            later = (args[0], list(args[1:]), e[CALL_KWARGS])
        elif args and args[0][TAG] == "call" and "functools.partial" in _ext(_resolve(ip, args[0][CALL_FUNC], frame)) \
                and args[0][CALL_ARGS]:
            later = (args[0][CALL_ARGS][0], list(args[0][CALL_ARGS][1:]), args[0][CALL_KWARGS])
        if later is not None:
            sc.finalizing += 1
            _call(w, ("call",) + later + (e[CALL_POS],), True)
            sc.finalizing -= 1
        for a in args:
            if a[TAG] == "attr" and a[ATTR_ATTR] == "stop":
                r = a[ATTR_VALUE]
                if r[TAG] == "name":
                    _restored(sc, ("patcher", r[NAME_ID]))
                elif r[TAG] == "attr" and r[ATTR_VALUE][TAG] == "name" and r[ATTR_VALUE][NAME_ID] == "self":
                    _restored(sc, ("patcher", "self." + r[ATTR_ATTR]))
            ext = _ext(_resolve(ip, a, frame))
            if ext & {"unittest.mock.patch.stopall"}:
                sc.mutations = [m for m in sc.mutations if m.key[0] != "patcher"]
                _restored(sc, ("patcher", "*"))
            if ext & {"os.chdir"}:
                _restored(sc, ("cwd",))
            if ext & {"sys.path.remove", "sys.path.pop"}:
                _restored(sc, ("syspath",))
        return
    saved = _mp_saves(w, e)
    saved = {saved} if saved is not None else forwarded_saves(w, e)   # or through a project wrapper
    if saved:
        # monkeypatch saved it: its undo at teardown puts it back, whatever the test or its
        # callees write there from here on (not what was written before: that is what it puts back)
        sc.protected |= saved
        sc.mp_protected |= saved
        return
    if fn[TAG] == "attr" and fn[ATTR_ATTR] == "undo" and fn[ATTR_VALUE][TAG] == "name" \
            and "monkeypatch" in fn[ATTR_VALUE][NAME_ID] and sc.mp_protected:
        # undone now: what is written from here on stays
        sc.protected -= sc.mp_protected
        sc.mp_protected.clear()
        return
    if names & {"unittest.mock.patch.stopall"}:
        _restored(sc, ("patcher", "*"))
        sc.mutations = [m for m in sc.mutations if m.key[0] != "patcher"]
        return
    if names & {"importlib.reload", "imp.reload"}:
        if args and args[0][TAG] == "call" and _module_name(args[0]) in w.modules_out and \
                "importlib.import_module" in _ext(_resolve(ip, args[0][CALL_FUNC], frame)):
            return   # reload(import_module(name)) of a module taken out: a copy no one else holds
        target = _resolve(ip, args[0], frame) if args else I.EMPTY
        mods = [a[1] for a in target.refs() if a[0] == "mod"]
        what = reset_names(ip, mods[0]) if mods else ""
        _add(sc, Mutation("HT301", ("reload", pos), pos, what), restoring)
        return
    for n in names:
        if n.startswith("os.environ.") and n.rsplit(".", 1)[1] in _ENV_METHODS:
            meth = n.rsplit(".", 1)[1]
            key = _key_of(w, args[0]) if args else "*"
            if meth in ("update", "clear"):
                key = "*"
            restore_like = meth in ("pop", "__delitem__") or (meth == "update" and restoring) or (
                meth == "__setitem__" and restoring and len(args) > 1 and args[1][TAG] in ("name", "attr"))
            _add(sc, Mutation("HT302", ("env", key), pos, f"os.environ.{meth}(...)", restore_like,
                              removes=meth in ("pop", "__delitem__")), restoring)
            return
        if n in process_state().env_writers:   # load_dotenv(): the file's variables, unknown here
            _add(sc, Mutation("HT302", ("env", "*"), pos, f"{n}(...)"), restoring)
            return
        if n in ("os.putenv", "os.unsetenv"):
            key = _key_of(w, args[0]) if args else "*"
            _add(sc, Mutation("HT302", ("env", key), pos, f"{n}(...)", n == "os.unsetenv",
                              removes=n == "os.unsetenv"), restoring)
            return
        if n.startswith("sys.path.") and n.rsplit(".", 1)[1] in _SYSPATH_METHODS:
            meth = n.rsplit(".", 1)[1]
            _add(sc, Mutation("HT304", ("syspath",), pos, f"sys.path.{meth}(...)", meth in ("remove", "pop")),
                 restoring)
            return
        if n.startswith("sys.modules.") and n.rsplit(".", 1)[1] in CONTAINER_METHODS:
            meth = n.rsplit(".", 1)[1]
            key = args[0][LIT_VALUE] if meth in ("pop", "setdefault") and args and args[0][TAG] == "lit" else "*"
            if meth == "pop":
                w.modules_out.add(key if isinstance(key, str) else "*")
            _add(sc, Mutation("HT304", ("sysmod", key), pos, f"{n}(...)", True), restoring)
            return
    if process_call(w, e, names, pos, restoring, as_context):
        return
    # a project module's container or global
    if fn[TAG] == "attr" and fn[ATTR_ATTR] in CONTAINER_METHODS:
        g = _project_global(ip, fn[ATTR_VALUE], frame, container=True)
        if g is not None:
            if fn[ATTR_ATTR] == "clear" and is_empty_container(ip.globals.get(g[0], {}).get(g[1], I.EMPTY)):
                # emptying a container the module starts empty puts it back as imported: a reset
                if restoring:
                    _restored(sc, ("glob",) + g)
                else:
                    _put_back(sc, ("glob",) + g, pos[0])
                return
            item = args[0][LIT_VALUE] if fn[ATTR_ATTR] in _ITEM_METHODS and args and args[0][TAG] == "lit" else None
            _add(sc, Mutation("HT303", ("glob",) + g, pos, f"{g[0]}.{g[1]}.{fn[ATTR_ATTR]}(...)",
                              fn[ATTR_ATTR] in ("pop", "remove", "discard", "clear", "update"), item=item), restoring)
            return
    if names & {"builtins.setattr"} and len(args) >= 2 and args[1][TAG] == "lit":
        base = _resolve(ip, args[0], frame)
        for a in base.refs():
            if a[0] == "mod" and not ip.p.in_test.get(a[1], False):
                _add(sc, Mutation("HT303", ("glob", a[1], args[1][LIT_VALUE]), pos, f"setattr({a[1]}, ...)"),
                     restoring)
                return
    # X.cache_clear(): the lru_cache of X is emptied (a restore)
    if fn[TAG] == "attr" and fn[ATTR_ATTR] == "cache_clear":
        for a in _resolve(ip, fn[ATTR_VALUE], frame).refs():
            if a[0] == "func":
                _restored(sc, ("lru", a[1]))
        return
    # a test fills the lru_cache of an I/O function of the code under test
    for a in callee.refs():
        if a[0] == "func" and a[1] in ip.p.functions and cached_io(ip, a[1]):
            _add(sc, Mutation("HT304", ("lru", a[1]), pos,
                              f"{I.dotted_qualname(a[1])}() fills its lru_cache with what it read"), restoring)
            return
    # a project function (or class, by its __init__) that mutates its module's or the process's
    # state (anchored at this call)
    project_call(w, callee, pos, restoring)


def _module_name(call) -> str:
    """The module a call's first argument names (``sys.modules.pop("x")``), "*" when not a literal."""
    a = call[CALL_ARGS][0] if call[CALL_ARGS] else None
    return a[LIT_VALUE] if a is not None and a[TAG] == "lit" and isinstance(a[LIT_VALUE], str) else "*"


def _is_patch_call(ip, e, frame) -> bool:
    names = _ext(_resolve(ip, e[CALL_FUNC], frame))
    return any(n.startswith("unittest.mock.patch") for n in names)


def restores_of(ip: I.Interp, f: dict, mod: str) -> Set[tuple]:
    """What a function puts back (in ``finally`` blocks and after a fixture's ``yield``)."""
    frame = _function_frame(ip, f, mod)
    sc = Scan()
    _walk(_Walk(ip, frame, sc, {}), f["body"], in_restore=False)
    return sc.restores
