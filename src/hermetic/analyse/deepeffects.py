"""What a project function a test calls changes of the process through the project functions
it calls in turn (``FunctionEffects.deep``), and which names the test replaces for its run, so
that a function it patched is not followed (``patched_names``).

``effects`` reads each function's own body; a helper two calls below the function the test
calls (``run()`` -> ``add_to_sys_path()`` -> ``sys.path.insert``) changes the process as much.
Only process-wide state is followed down (``sys.path``, the environment, catalogued states):
module state stays the changing function's own. The calls are resolved without running
anything: names and attribute chains the module binds, ``Class(...).method``, ``self.method``.
"""
from __future__ import annotations

import re

from typing import Dict, FrozenSet, List, Set, Tuple

from . import interp as I
from ..summarise.ir import ATTR_ATTR, ATTR_VALUE, CALL_ARGS, CALL_FUNC, LIT_VALUE, NAME_ID, TAG, dotted_name
from ..summarise.unparse import calls_in, module_imports
from .effects import changed_state, early_effects, locals_of
from .processfx import finally_writes, spelt
from .statescan import Mutation, Walk, add, effect_shown, made_class_methods, put_back, resolve, restored

DEPTH = 3    # calls below the function the test calls
LIMIT = 60   # functions visited from one


class FunctionEffects(dict):
    """``qualname -> what the function changes itself`` (``effects.function_effects``), and
    what the project functions it calls change of the process (``deep``)."""

    def __init__(self, own: Dict[str, Set[tuple]]):
        super().__init__(own)
        self._deep: Dict[str, Set[tuple]] = {}
        self._callees: Dict[str, List[Tuple[str, FrozenSet[str]]]] = {}
        self._restores: Dict[str, Set[tuple]] = {}   # qualname -> what its finally blocks write back
        self._aliases: Dict[str, Dict[str, str]] = {}   # module -> the names its imports bind

    def deep(self, ip: I.Interp, qn: str, patched: FrozenSet[str] = frozenset()) -> Set[tuple]:
        """The process-wide changes (not ``glob`` / ``takes``) of the project functions ``qn``
        calls, ``DEPTH`` calls deep and at most ``LIMIT`` functions, less what a ``finally`` on
        the way writes back; a callee looked up by a name in ``patched`` (the test replaced it)
        is not followed."""
        if not patched and qn in self._deep:
            return self._deep[qn]
        found: Set[tuple] = set()
        restored: Set[tuple] = set()
        todo, seen = [(qn, 0)], set()
        while todo and len(seen) < LIMIT:
            g, d = todo.pop()
            if g in seen or g not in ip.p.functions:
                continue
            seen.add(g)
            f, mod = ip.p.functions[g]
            if g != qn:
                found |= {k for k in self.get(g, ()) if k[0] not in ("glob", "takes")}
            if g not in self._restores:
                self._restores[g] = finally_writes(f["body"], self.aliases(ip, mod))
            restored |= self._restores[g]
            if d < DEPTH:
                todo.extend((c, d + 1) for c, names in self._static_callees(ip, g, f, mod)
                            if not names & patched)
        out = found - restored
        if not patched:
            self._deep[qn] = out
        return out

    def aliases(self, ip: I.Interp, mod: str) -> Dict[str, str]:
        """The names module ``mod``'s imports bind (``module_imports``), read once."""
        if mod not in self._aliases:
            self._aliases[mod] = module_imports(ip.p.summaries.get(mod))
        return self._aliases[mod]

    def _static_callees(self, ip: I.Interp, qn: str, f: dict, mod: str) -> List[Tuple[str, FrozenSet[str]]]:
        """The project (non-test) functions ``f``'s body calls, each with the names it is looked
        up by (its qualname, its class's, ``mod.NAME`` for a name the module binds): a class call
        is its ``__init__``."""
        if qn in self._callees:
            return self._callees[qn]
        out: List[Tuple[str, FrozenSet[str]]] = []
        if mod in ip.globals:
            frame = I.Frame(module=mod, path=ip.p.summaries[mod]["path"], name="<static>", is_module=False,
                            in_test=False)
            frame.locals = {}
            owner = qn.rsplit(".", 1)[0]
            own = locals_of(f) - {"self"}   # a parameter or local called is not the module's name
            for call in calls_in(f["body"]):
                node = call[CALL_FUNC]
                while node[TAG] == "attr":
                    node = node[ATTR_VALUE]
                if not (node[TAG] == "name" and node[NAME_ID] in own):
                    out.extend(_callee(ip, call[CALL_FUNC], frame, owner, self.aliases(ip, mod)))
        self._callees[qn] = out
        return out


def _callee(ip: I.Interp, node, frame: I.Frame, owner: str, aliases: Dict[str, str]) -> List[Tuple[str, FrozenSet[str]]]:
    """What one call's callee expression names, without running anything (``aliases``: what the
    module's imports bind)."""
    found: List[Tuple[str, str]] = []   # (function qualname, a name it is looked up by)
    names: Set[str] = set()
    if node[TAG] == "attr" and node[ATTR_VALUE][TAG] == "name" and node[ATTR_VALUE][NAME_ID] == "self" \
            and owner in ip.p.classes:
        m = ip.find_method(owner, node[ATTR_ATTR])   # self.method(): the declared class's
        if m:
            found.append((m[1], m[1]))
    elif node[TAG] == "attr" and node[ATTR_VALUE][TAG] == "call" and node[ATTR_VALUE][CALL_FUNC][TAG] in ("name", "attr"):
        found.extend(made_class_methods(ip, node[ATTR_VALUE], node[ATTR_ATTR], frame))   # Class(...).method()
    elif node[TAG] in ("name", "attr"):
        dotted = dotted_name(node)
        if dotted:
            names.add(f"{frame.module}.{dotted}" if node[TAG] == "name" else spelt(dotted, aliases))
        for a in resolve(ip, node, frame).refs():
            if a[0] == "func":
                found.append((a[1], a[1]))
            elif a[0] == "cls" and a[1] in ip.p.classes:
                init = ip.find_method(a[1], "__init__")
                if init:
                    found.append((init[1], a[1]))
    out = []
    for c, name in found:
        if c in ip.p.functions and not ip.p.in_test.get(ip.p.functions[c][1], False) \
                and ip.p.functions[c][1] in ip.globals:
            out.append((c, frozenset(names | {c, name})))
    return out


def project_call(w: Walk, callee, pos: tuple, restoring: bool) -> None:
    """A call in test code of a project function (or class, by its ``__init__``) that changes
    its module's or the process's state: a ``Mutation`` anchored at the call for each state (a
    container it only takes entries out of is put back there). In a statement the test expects
    to raise, only what the function changes before anything in it could raise; otherwise also
    what the functions it calls change of the process (``FunctionEffects.deep``)."""
    ip, sc, effects = w.ip, w.sc, w.effects
    for a in callee.refs():
        init = ip.find_method(a[1], "__init__") if a[0] == "cls" else None
        qn = a[1] if a[0] == "func" else init[1] if init else None
        if qn not in ip.p.functions:
            continue
        own = effects.get(qn, set())
        keys = own & early_effects(ip, qn) if w.expecting else \
            own | (effects.deep(ip, qn, w.patched) if isinstance(effects, FunctionEffects) else set())
        if not keys and qn not in effects:
            continue
        for key in sorted(keys):
            if key[0] == "takes":   # only takes entries out: a cleanup, never a change
                if restoring:
                    restored(sc, changed_state(key))
                else:
                    put_back(sc, changed_state(key), pos[0])
                continue
            if restoring:
                restored(sc, key)
                continue
            code, what = effect_shown(key)
            shown = re.sub(r"@\d+$", "", I.dotted_qualname(a[1]))   # the function, or the class the test called
            add(sc, Mutation(code, key, pos, f"{shown}() changes {what}", call=shown), restoring)
        return


# how tests replace a name for their run: the callee's last part, with the owner's spelling
_PATCHERS = ("patch", "patch.object", "setattr")


def patched_names(ip: I.Interp, f: dict, frame: I.Frame) -> FrozenSet[str]:
    """The dotted names ``f`` (a test or fixture) replaces anywhere in its decorators or body:
    ``@patch("m.f")``, ``with patch.object(m, "f")``, ``mocker.patch("m.f")``,
    ``monkeypatch.setattr("m.f", ...)`` / ``(m, "f", ...)``. A project function found through
    one of them is the double while the test runs (not followed by ``FunctionEffects.deep``)."""
    calls = [d for d, _line in f["decorators"] if d[TAG] == "call"] + list(calls_in(f["body"]))
    out: Set[str] = set()
    for call in calls:
        fn = call[CALL_FUNC]
        spelt = dotted_name(fn) or ""
        if not any(spelt == p or spelt.endswith("." + p) for p in _PATCHERS):
            continue
        args = call[CALL_ARGS]
        if args and args[0][TAG] == "lit" and isinstance(args[0][LIT_VALUE], str):
            out.add(args[0][LIT_VALUE])
        elif len(args) >= 2 and args[1][TAG] == "lit" and isinstance(args[1][LIT_VALUE], str):
            for a in resolve(ip, args[0], frame).atoms:
                if isinstance(a, tuple) and a[0] in ("mod", "cls", "ext") and isinstance(a[1], str):
                    out.add(f"{a[1]}.{args[1][LIT_VALUE]}")
    return frozenset(out)
