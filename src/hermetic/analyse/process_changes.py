"""HT304 from the process-state catalogue (``catalogue/process_state.toml``): calls, logger
methods and assignments that change process-wide state, the calls and patches that put it
back, and snapshot objects whose ``restore()`` writes a saved state back.

``pollution``'s statement walk asks here first for each call and assignment target; each
function returns True when it recorded what the statement does (a change, a restore), so the
walk goes no further with it.
"""
from __future__ import annotations

from typing import Optional, Set

from ..catalogue.process_state import process_state, state_key
from ..summarise.ir import ATTR_ATTR, ATTR_VALUE, CALL_ARGS, CALL_FUNC, LIT_VALUE, NAME_ID, TAG
from .statescan import Mutation, Walk, add, ext_names, resolve, restored

_SNAPSHOT_PREFIX = "snapshot:"   # Walk.saved: "snapshot:VAR:state,state" for a snapshot object in VAR
_LOGGER_PREFIX = "logger:"       # Walk.saved: "logger:VAR" for a logger in VAR
# an argument that undoes logging.disable / a logger's level (back to "not set")
_NOTSET = {"logging.NOTSET"}


def _is_saved(w: Walk, e) -> bool:
    """A variable holding a saved value, or an attribute of ``self`` (set by the set-up that
    saved it: ``self.existing_level`` put back in ``teardown_test``)."""
    if e[TAG] == "attr" and e[ATTR_VALUE][TAG] == "name" and e[ATTR_VALUE][NAME_ID] == "self":
        return True
    return e[TAG] == "name" and e[NAME_ID] in w.saved


def _is_logger(w: Walk, e) -> bool:
    """``logging.getLogger(...)``, ``logging.root``, a variable the walk saw bound to one, or a
    global the module bound to one (``LOGGER = logging.getLogger()``)."""
    if e[TAG] == "call":
        return "logging.getLogger" in ext_names(resolve(w.ip, e[CALL_FUNC], w.frame))
    if e[TAG] == "name" and _LOGGER_PREFIX + e[NAME_ID] in w.saved:
        return True
    return bool({"logging.root", "logging.getLogger()"} & ext_names(resolve(w.ip, e, w.frame)))


def _class_names(w: Walk, e) -> Set[str]:
    """Qualified names of the class a call ``e`` constructs (a library's or the project's)."""
    out = ext_names(resolve(w.ip, e[CALL_FUNC], w.frame))
    out |= {a[1] for a in resolve(w.ip, e[CALL_FUNC], w.frame).refs() if a[0] == "cls"}
    return out


def note_binding(w: Walk, name: str, value) -> None:
    """``name = value``: remember a logger or a snapshot object the variable now holds."""
    if value[TAG] != "call":
        return
    if _is_logger(w, value):
        w.saved.add(_LOGGER_PREFIX + name)
        return
    snaps = process_state().snapshots
    for cls in _class_names(w, value):
        if cls in snaps:
            w.saved.add(f"{_SNAPSHOT_PREFIX}{name}:{','.join(snaps[cls])}")
            return


def process_call(w: Walk, e, names: Set[str], pos, restoring: bool, as_context: bool) -> bool:
    """A call that changes or puts back catalogued process state; True when handled."""
    cat = process_state()
    fn, args = e[CALL_FUNC], e[CALL_ARGS]
    if fn[TAG] == "attr":
        recv, meth = fn[ATTR_VALUE], fn[ATTR_ATTR]
        # snap.restore(): the states the snapshot saved are put back
        if meth == "restore" and recv[TAG] == "name":
            for s in w.saved:
                if s.startswith(f"{_SNAPSHOT_PREFIX}{recv[NAME_ID]}:"):
                    for st in s.rsplit(":", 1)[1].split(","):
                        restored(w.sc, state_key(st))
                    return True
        undo = {u: st for st, u in cat.logger_methods.values() if u}
        if (meth in cat.logger_methods or meth in undo) and _is_logger(w, recv):
            if meth in undo:
                restored(w.sc, (undo[meth],))
                return True
            st = cat.logger_methods[meth][0]
            back = bool(args) and (_is_saved(w, args[0]) or bool(ext_names(resolve(w.ip, args[0], w.frame)) & _NOTSET))
            add(w.sc, Mutation("HT304", (st,), pos, f"{_shown(recv)}.{meth}(...)", back), restoring)
            return True
        # sys.argv.append(...): a catalogued container changed in place
        for base in ext_names(resolve(w.ip, recv, w.frame)):
            if meth in cat.container_methods.get(base, ()):
                add(w.sc, Mutation("HT304", (cat.attributes[base],), pos, f"{base}.{meth}(...)",
                                   meth in ("remove", "pop")), restoring)
                return True
    if as_context:
        return False
    extra = getattr(w.ip.p.config, "process_state", None) or {}
    if extra:   # [tool.hermetic] process-state: the project's own calls, library or project functions
        names = names | {a[1] for a in resolve(w.ip, fn, w.frame).refs() if a[0] == "func"}
    for n in sorted(names):
        st = cat.calls.get(n) or extra.get(n)
        if st is None:
            continue
        back = any(_is_saved(w, a) for a in args) or (restoring and n in cat.teardown_restores
                                                      and _fixed_place(w, args))
        if n == "logging.disable":
            back = back or not args or bool(ext_names(resolve(w.ip, args[0], w.frame)) & _NOTSET) or (
                args[0][TAG] == "lit" and args[0][LIT_VALUE] == 0)
        add(w.sc, Mutation("HT304", (st,), pos, f"{n}(...)", back), restoring)
        return True
    return False


def _fixed_place(w: Walk, args) -> bool:
    """The arguments of a restoring call name no place the test made: none (``time.tzset()``),
    or a value the module binds from the project's files or a literal (``os.chdir(ROOT)``), not
    ``tmp_path / ".."``."""
    if not args:
        return True
    v = resolve(w.ip, args[0], w.frame)
    kinds = {o.kind for o in v.origins()}
    return bool(kinds) and kinds <= {"project-file", "literal", "module-constant"}


def _shown(e) -> str:
    if e[TAG] == "name":
        return e[NAME_ID]
    if e[TAG] == "attr":
        return f"{_shown(e[ATTR_VALUE])}.{e[ATTR_ATTR]}" if e[ATTR_VALUE][TAG] in ("name", "attr") else e[ATTR_ATTR]
    if e[TAG] == "call":
        return "logging.getLogger(...)"
    return "logger"


def process_assign(w: Walk, t, value_saved: bool, pos, restoring: bool) -> bool:
    """``sys.argv = ...`` / ``sys.stdout = ...`` / ``sys.argv[1:] = ...``; True when handled."""
    cat = process_state()
    if t[TAG] == "attr":
        for base in ext_names(resolve(w.ip, t[ATTR_VALUE], w.frame)):
            name = f"{base}.{t[ATTR_ATTR]}"
            if name in cat.attributes:
                add(w.sc, Mutation("HT304", (cat.attributes[name],), pos, f"{name} = ...", value_saved), restoring)
                return True
        if t[ATTR_ATTR] in cat.logger_attributes and _is_logger(w, t[ATTR_VALUE]):
            st = cat.logger_attributes[t[ATTR_ATTR]]
            # after a yield or in a finally, setting a logger's handlers or level is a reset
            what = f"{_shown(t[ATTR_VALUE])}.{t[ATTR_ATTR]} = ..."
            add(w.sc, Mutation("HT304", (st,), pos, what, True), restoring)
            return True
    elif t[TAG] == "sub":
        inner = t[1]
        if inner[TAG] == "attr" and inner[ATTR_ATTR] in cat.logger_attributes and _is_logger(w, inner[ATTR_VALUE]):
            st = cat.logger_attributes[inner[ATTR_ATTR]]
            what = f"{_shown(inner[ATTR_VALUE])}.{inner[ATTR_ATTR]}[...] = ..."
            add(w.sc, Mutation("HT304", (st,), pos, what, True), restoring)
            return True
        for name in ext_names(resolve(w.ip, t[1], w.frame)):
            if name in cat.container_methods:
                add(w.sc, Mutation("HT304", (cat.attributes[name],), pos, f"{name}[...] = ...", value_saved),
                    restoring)
                return True
    return False


def protected_by_patch(w_ip, call, frame, names: Set[str]) -> Set[tuple]:
    """The states a whole-container patch replaces for its extent: ``patch.object(sys, "path",
    list(sys.path))``, ``patch("sys.argv", [...])``, ``patch.object(sys, "stdout", ...)``;
    ``warnings.catch_warnings()`` saves and restores the warnings filters."""
    if names & {"warnings.catch_warnings"}:
        return {("warnings-filters",)}
    if not any(n.startswith("unittest.mock.patch") or n.endswith(".patch") or n.endswith("patch.object")
               for n in names):
        return set()
    args = call[CALL_ARGS]
    target: Optional[str] = None
    if any(n.endswith("patch.object") for n in names) and len(args) >= 2 and args[1][TAG] == "lit" \
            and isinstance(args[1][LIT_VALUE], str):
        for base in ext_names(resolve(w_ip, args[0], frame)):
            target = f"{base}.{args[1][LIT_VALUE]}"
    elif args and args[0][TAG] == "lit" and isinstance(args[0][LIT_VALUE], str):
        target = args[0][LIT_VALUE]
    if target is None:
        return set()
    if target == "sys.path":
        return {("syspath",)}
    if target == "sys.modules":
        return {("sysmod", "*")}
    st = process_state().attributes.get(target)
    return {(st,)} if st else set()


def library_attr_assign(w: Walk, t, value_saved: bool, pos, restoring: bool) -> None:
    """``mod.attr = ...`` of a library module's (or class's) attribute no other state names
    (``pollution._assign`` decides those first): replaced for every later test unless written
    back (``datetime.datetime = Fake``). The owner must be a name the test module imports at its
    top: not an attribute chain (``mod.cassandra.cluster``, where the test may have put a double
    at ``mod.cassandra``), nor a name the function imports itself (after a test replaced the
    module in ``sys.modules``)."""
    owner = t[ATTR_VALUE]
    if owner[TAG] != "name" or (not w.frame.is_module and owner[NAME_ID] in w.frame.locals):
        return
    for base in ext_names(resolve(w.ip, owner, w.frame)):
        name = f"{base}.{t[ATTR_ATTR]}"
        add(w.sc, Mutation("HT304", ("libattr", name), pos, f"{name} = ...", value_saved), restoring)
        return
