"""The state scan's vocabulary, shared by ``pollution`` (the statement walk) and
``process_changes`` (the catalogue's process-wide states): a change (``Mutation``), what one
walk found (``Scan``), what it carries (``Walk``), and static name resolution through a
module's imports without running calls (``resolve``)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Set, Tuple

from . import interp as I
from ..summarise.ir import (ASSIGN_TARGETS, ASSIGN_VALUE, ATTR_ATTR, ATTR_VALUE, CALL_ARGS, CALL_FUNC, FROM_MODULE,
                            FROM_NAMES, IMPORT_NAMES, LIT_VALUE, NAME_ID, SEQ_ITEMS, SUB_INDEX, SUB_VALUE, TAG, flat, EXPR_VALUE, RETURN_VALUE,
                            YIELD_VALUE, dotted_name)
from ..summarise.unparse import calls_in, module_imports
from .effects import is_container, locals_of
from .processfx import call_locals, literal_locals  # noqa: F401  (pollution reads them from here)
from .literals import ext_names
from .values import V, union


@dataclass
class Mutation:
    code: str
    key: tuple
    pos: Tuple[int, int, int, int]
    what: str
    restore_like: bool = False     # the statement itself could be a restore of `key`
    value_is_saved: bool = False   # assigns a saved variable back (a restore shape)
    item: object = None            # the entry of a module container it touches (a literal key), if known
    removes: bool = False          # takes the entry out (del, pop, unsetenv) rather than setting it
    undone: int = 0                # the line of the same body that puts it back, outside a finally
    call: str = ""                 # the project function (or class) whose call changes it, as shown


@dataclass
class Scan:
    mutations: List[Mutation] = field(default_factory=list)
    restores: Set[tuple] = field(default_factory=set)
    protected: Set[tuple] = field(default_factory=set)   # keys a surrounding patch.dict restores
    mp_protected: Set[tuple] = field(default_factory=set)   # of them, those a monkeypatch saved (until its undo())
    # the entries of `restores` keys a restore statement put back: "*" for the whole key; a key
    # that is in `restores` but not here was put back whole
    items: Dict[tuple, Set[object]] = field(default_factory=dict)
    # the restores made at teardown (after the fixture's yield, in a finalizer it registers), as
    # (key, entry); kept where `after` is the walk's after-yield cell
    teardown: Set[Tuple[tuple, object]] = field(default_factory=set)
    after: Optional[list] = None
    finalizing: int = 0

    def restored_items(self) -> Set[Tuple[tuple, object]]:
        """``(key, entry)`` per restore, ``entry`` "*" where the whole key was put back."""
        out = {(k, "*") for k in self.restores if k not in self.items}
        for k, entries in self.items.items():
            out |= {(k, e) for e in entries}
        return out


def restored(sc: Scan, key: tuple, item: object = "*") -> None:
    """Note a restore of ``key`` (of its entry ``item``, "*" for all of it)."""
    sc.restores.add(key)
    sc.items.setdefault(key, set()).add(item)
    if sc.finalizing or (sc.after is not None and sc.after[0]):
        sc.teardown.add((key, item))


@dataclass
class Walk:
    """What one walk over a function's (or a module's) statements carries to every statement
    and call it visits: where names resolve, what it found so far, and what it has seen."""

    ip: I.Interp
    frame: I.Frame
    sc: Scan
    effects: Dict[str, Set[tuple]]   # project function qualname -> what it changes (``effects``)
    # variables holding a saved value (a restore puts it back), "patcher:NAME" for a patcher
    saved: Set[str] = field(default_factory=set)
    after_yield: list = field(default_factory=lambda: [False])   # a cell: past the fixture's yield
    # saved variables the enclosing ``if`` requires to be set (``if saved is not None:``): writing
    # one back there misses the path where there was nothing to save (contract section 4)
    guarded: Set[str] = field(default_factory=set)
    # the function's variables bound once, to a string literal (``key = "NAME"``): the
    # environment variable ``os.environ[key]`` names (``literal_locals``)
    literals: Dict[str, str] = field(default_factory=dict)
    # inside a `with` whose context puts sys.modules back: a module imported there is a fresh
    # copy the block's end discards, so writes to it change no module state
    fresh_modules: int = 0
    # in the statement a `with pytest.raises(...)` (or `assertRaises*`) block expects to raise: a
    # project call there stops at its raise, before what it would change after
    expecting: int = 0
    # the modules this code took out of sys.modules (``sys.modules.pop``, also in a comprehension,
    # or ``del sys.modules[...]``), "*" for a name not known: ``import_module`` of one of them
    # after it makes a copy no one else holds
    modules_out: Set[str] = field(default_factory=set)
    # a test's or fixture's parameter -> the qualname of the project fixture pytest passes
    # there, None for another name (``mpwrap``: a fixture wrapping monkeypatch)
    fixture: Optional[Callable[[str], Optional[str]]] = None
    # the dotted names the function replaces for its run (``deepeffects.patched_names``)
    patched: FrozenSet[str] = frozenset()
    # the function's variables bound once, to a call's result (``p = Program()``: ``call_locals``)
    made: Dict[str, Any] = field(default_factory=dict)


def key_of(w: "Walk", expr) -> object:
    """The literal an index or argument names (directly, or through ``Walk.literals``), else "*"."""
    if expr[TAG] == "lit":
        return expr[LIT_VALUE]
    if expr[TAG] == "name" and expr[NAME_ID] in w.literals:
        return w.literals[expr[NAME_ID]]
    return "*"


def covering(m: Mutation) -> Set[Tuple[tuple, object]]:
    """The restores (``Scan.restored_items``) any of which puts back what ``m`` changed: the
    same key whole, the same entry of a module container, all of os.environ / sys.modules.
    None for a patcher (its key is a variable of the function that started it) or a reload."""
    if m.key[0] in ("patcher", "reload"):
        return set()
    out = {(m.key, "*")}
    if m.item is not None:
        out.add((m.key, m.item))
    if m.key[0] in ("env", "sysmod"):
        out.add(((m.key[0], "*"), "*"))
    return out


def function_frame(ip: I.Interp, f: dict, mod: str) -> I.Frame:
    """A scan frame where the function's own variables shadow module names (``consumer =
    Consumer()`` in a test is not the imported ``consumer`` module)."""
    fr = scan_frame(ip, mod)
    fr.locals = {name: I.EMPTY for name in locals_of(f)}
    return fr


def scan_frame(ip: I.Interp, mod: str) -> I.Frame:
    s = ip.p.summaries[mod]
    fr = I.Frame(module=mod, path=s["path"], name="<pollution>", in_test=True)
    fr.locals = {}   # resolve falls through to the module globals
    return fr


def resolve(ip: I.Interp, e, frame: I.Frame) -> V:
    """Static value of a name/attribute chain (modules, library names) without running calls;
    ``("value", V)`` is one already resolved in another frame (``mpwrap``: a wrapper's own)."""
    if e[TAG] == "value":
        return e[1]
    if e[TAG] == "name":
        if e[NAME_ID] in frame.locals:
            return frame.locals[e[NAME_ID]]
        g = ip.globals.get(frame.module, {})
        if e[NAME_ID] in g:
            return g[e[NAME_ID]]
        return I.of(("ext", f"builtins.{e[NAME_ID]}")) if e[NAME_ID] in I._BUILTINS else I.EMPTY
    if e[TAG] == "attr":
        base = resolve(ip, e[ATTR_VALUE], frame)
        out = I.EMPTY
        for a in base.refs():
            if a[0] == "mod":
                g = ip.globals.get(a[1], {})
                if e[ATTR_ATTR] in g:
                    out = out | g[e[ATTR_ATTR]]
                elif f"{a[1]}.{e[ATTR_ATTR]}" in ip.p.summaries:
                    out = out | I.of(("mod", ip.p.canonical[f"{a[1]}.{e[ATTR_ATTR]}"]))
            elif a[0] == "ext":
                out = out | I.of(("ext", f"{a[1]}.{e[ATTR_ATTR]}"))
        return out
    return I.EMPTY


def project_global(ip: I.Interp, e, frame: I.Frame, container: bool = False) -> Optional[Tuple[str, str]]:
    """``mod.NAME`` of a project module -> (module, NAME), also for a NAME the module does not
    bind (a test adding an attribute changes the module too); with ``container``, only when the
    global holds a list, dict or set."""
    if e[TAG] == "attr":
        base = resolve(ip, e[ATTR_VALUE], frame)
        for a in base.refs():
            if a[0] == "mod" and not ip.p.in_test.get(a[1], False):
                g = ip.globals.get(a[1], {})
                if container and not (e[ATTR_ATTR] in g and is_container(g[e[ATTR_ATTR]])):
                    return None
                return a[1], e[ATTR_ATTR]
    elif e[TAG] == "name" and container and e[NAME_ID] not in frame.locals and \
            is_container(ip.globals.get(frame.module, {}).get(e[NAME_ID], I.EMPTY)):
        # a project module's container imported by name (``from app.registry import REGISTRY``): the
        # same object, so an item stored through the name changes the module's state
        full = module_imports(ip.p.summaries.get(frame.module)).get(e[NAME_ID], "")
        mod, _dot, name = full.rpartition(".")
        if mod in ip.p.summaries and not ip.p.in_test.get(mod, False):
            g = ip.globals.get(mod, {})
            if name in g and is_container(g[name]):
                return mod, name
    return None


def add(sc: Scan, m: Mutation, restoring: bool) -> None:
    if m.key in sc.protected or (m.key[0] in ("env", "sysmod") and (m.key[0], "*") in sc.protected):
        return
    if m.key == ("env", "*") and m.call and any(k[0] == "env" for k in sc.protected):
        return   # variables a project function does not name, while monkeypatch restores some: not known
    if restoring and m.code != "HT301":   # a reload is never a restore
        if m.restore_like:
            restored(sc, m.key, "*" if m.item is None else m.item)
        return
    if m.restore_like and m.code != "HT301":
        changed_before = put_back(sc, m.key, m.pos[0])
        if changed_before and m.code == "HT303":
            return   # putting back (or emptying) what this code changed itself: the change is the finding
    sc.mutations.append(m)


def put_back(sc: Scan, key: tuple, line: int) -> bool:
    """A statement at ``line`` of the body (outside a finally) puts ``key`` back: the earlier
    changes of it say so (only a failure before that line leaves them). Whether there were any."""
    found = False
    for p in sc.mutations:
        if p.key == key and not p.restore_like:
            found = True
            p.undone = p.undone or line
    return found


def delete(w: Walk, t, line: int, restoring: bool) -> None:
    """``del`` of the target ``t`` (a statement at ``line``) in the walk ``w``."""
    ip, frame, sc = w.ip, w.frame, w.sc
    pos = (line, 1, line, 1)
    if t[TAG] == "sub":
        ext = ext_names(resolve(ip, t[SUB_VALUE], frame))
        key = key_of(w, t[SUB_INDEX])
        if "os.environ" in ext:
            add(sc, Mutation("HT302", ("env", key), pos, f"del os.environ[{repr(key) if key != '*' else '...'}]", True,
                              removes=True),
                 restoring)
        elif "sys.modules" in ext:
            w.modules_out.add(key if isinstance(key, str) else "*")
            add(sc, Mutation("HT304", ("sysmod", key), pos, "del sys.modules[...]", True), restoring)
        else:
            g = project_global(ip, t[SUB_VALUE], frame, container=True)
            if g is not None:
                add(sc, Mutation("HT303", ("glob",) + g, pos, f"del {g[0]}.{g[1]}[...]", True,
                                  item=None if key == "*" else key), restoring)
    elif t[TAG] == "attr":
        g = project_global(ip, t, frame)
        if g is None:
            return
        if g[1] in ip.globals.get(g[0], {}):   # a name the module binds: deleting it changes the module
            add(sc, Mutation("HT303", ("glob",) + g, pos, f"del {g[0]}.{g[1]}", True), restoring)
        elif restoring:   # undoes the test's own mod.NAME = ... (after yield, in a finalizer)
            restored(sc, ("glob",) + g)
        else:   # ... or later in its body (put back there, unless a failure comes first)
            put_back(sc, ("glob",) + g, line)


def bind_import(ip: I.Interp, st, frame: I.Frame, fresh: bool = False) -> None:
    """A function's own ``import m`` / ``from pkg import m`` binds the project modules (and the
    names they bind), and library names, in ``frame``, so ``m.NAME = ...`` after it is seen as
    module state (Django's receivers import ``trans_real`` in their body). ``fresh``: the import makes a copy that is
    discarded later (``Walk.fresh_modules``): the names are bound to nothing."""
    if st[TAG] == "import":
        for local, full, aliased in st[IMPORT_NAMES]:
            name = full if aliased else full.split(".")[0]
            if fresh:
                frame.locals[local] = I.EMPTY
            elif name in ip.p.summaries:
                frame.locals[local] = I.of(("mod", ip.p.canonical.get(name, name)))
            elif name.split(".")[0] not in ip.p.summaries:
                frame.locals[local] = I.of(("ext", name))   # a library module: asyncio, os
        return
    mod = st[FROM_MODULE]
    for local, attr in st[FROM_NAMES]:
        sub = f"{mod}.{attr}"
        if fresh:
            frame.locals[local] = I.EMPTY
        elif sub in ip.p.summaries:
            frame.locals[local] = I.of(("mod", ip.p.canonical.get(sub, sub)))
        elif attr in ip.globals.get(mod, {}):
            frame.locals[local] = ip.globals[mod][attr]
        elif mod.split(".")[0] not in ip.p.summaries:
            frame.locals[local] = I.of(("ext", sub))   # from os import environ


# a variable monkeypatch restores whose name the scan cannot read (``setenv(name, v)`` in a loop):
# it protects no named variable, but says the test restores some (``add``)
_UNNAMED = "?"


def monkeypatch_saves(w: "Walk", e) -> Optional[tuple]:
    """The state key a monkeypatch call saves, which its teardown puts back whatever writes it
    after the call: ``setenv`` / ``delenv`` (or ``setitem`` / ``delitem`` of ``os.environ``)
    of a named variable (``("env", NAME)``), ``setattr`` / ``delattr`` of a module global,
    ``(mod, "NAME", ...)`` or dotted ``("pkg.mod.NAME", ...)`` (``("glob", mod, NAME)``); None
    for another call."""
    fn, args = e[CALL_FUNC], e[CALL_ARGS]
    if fn[TAG] == "attr" and fn[ATTR_ATTR] == "append" and fn[ATTR_VALUE][TAG] == "attr" and \
            fn[ATTR_VALUE][ATTR_ATTR] == "_setitem" and fn[ATTR_VALUE][ATTR_VALUE][TAG] == "name" and \
            "monkeypatch" in fn[ATTR_VALUE][ATTR_VALUE][NAME_ID] and len(args) == 1 and \
            args[0][TAG] == "seq" and len(args[0][SEQ_ITEMS]) == 3 and \
            "os.environ" in ext_names(resolve(w.ip, args[0][SEQ_ITEMS][0], w.frame)):
        # monkeypatch._setitem.append((os.environ, K, notset)): its undo deletes K (flask's tests)
        name = key_of(w, args[0][SEQ_ITEMS][1])
        return ("env", _UNNAMED if name == "*" else name)
    if not (fn[TAG] == "attr" and fn[ATTR_VALUE][TAG] == "name" and "monkeypatch" in fn[ATTR_VALUE][NAME_ID]
            and args):
        return None
    meth, ip = fn[ATTR_ATTR], w.ip
    if meth in ("setenv", "delenv"):
        name = key_of(w, args[0])
        return ("env", _UNNAMED if name == "*" else name)
    if meth in ("setitem", "delitem") and len(args) >= 2 and "os.environ" in ext_names(resolve(ip, args[0], w.frame)):
        name = key_of(w, args[1])
        return ("env", _UNNAMED if name == "*" else name)
    if meth not in ("setattr", "delattr"):
        return None
    dotted = args[0][TAG] == "lit" and isinstance(args[0][LIT_VALUE], str)
    if dotted and len(args) == (2 if meth == "setattr" else 1) and "." in args[0][LIT_VALUE]:
        # pytest's dotted form: setattr("pkg.mod.NAME", value), delattr("pkg.mod.NAME")
        modname, _, name = args[0][LIT_VALUE].rpartition(".")
        if modname in ip.p.summaries:
            return ("glob", ip.p.canonical.get(modname, modname), name)
    elif len(args) >= 2 and args[1][TAG] == "lit" and isinstance(args[1][LIT_VALUE], str):
        for a in resolve(ip, args[0], w.frame).refs():
            if a[0] == "mod":
                return ("glob", a[1], args[1][LIT_VALUE])
    return None


def effect_shown(key: tuple) -> Tuple[str, str]:
    """The rule code and the words for what a project function's effect (``effects``) changes."""
    if key[0] == "glob":
        return "HT303", f"{key[1]}.{key[2]}"
    if key[0] == "env":
        return "HT302", "os.environ" if key[1] == "*" else f"os.environ[{key[1]!r}]"
    if key[0] == "syspath":
        return "HT304", "sys.path"
    return "HT304", states_shown([key[0]])


def states_shown(states: List[str]) -> str:
    """The words for catalogued process states a call changes: ``process state (a, b)``."""
    return f"process state ({', '.join(states)})"


def fixture_method(w: "Walk", fn) -> V:
    """``obj.m`` where ``obj`` is a parameter pytest fills with a project fixture that returns or
    yields ``Cls(...)`` of a project class: that class's method ``m`` (the scan runs no fixture,
    so without this a call on the object a fixture made was not followed: environs'
    ``env.read_env()``). EMPTY otherwise."""
    if fn[TAG] != "attr" or fn[ATTR_VALUE][TAG] != "name" or w.fixture is None:
        return I.EMPTY
    qn = w.fixture(fn[ATTR_VALUE][NAME_ID])
    entry = w.ip.p.functions.get(qn) if qn else None
    if entry is None:
        return I.EMPTY
    f, mod = entry
    out = I.EMPTY
    for st in flat(f["body"]):
        made = st[RETURN_VALUE] if st[TAG] == "return" else \
            st[EXPR_VALUE][YIELD_VALUE] if st[TAG] == "expr" and st[EXPR_VALUE][TAG] == "yield" else None
        if made is None or made[TAG] != "call":
            continue
        for m, _cls in made_class_methods(w.ip, made, fn[ATTR_ATTR], scan_frame(w.ip, mod)):
            out = out | I.of(("func", m, None))
    return out


def made_class_methods(ip: I.Interp, call, name: str, frame: I.Frame) -> List[Tuple[str, str]]:
    """``(method qualname, class qualname)`` of method ``name`` of each project class the call
    expression ``call`` makes (``Cls(...).name``), resolved without running anything."""
    out = []
    for a in resolve(ip, call[CALL_FUNC], frame).refs():
        m = ip.find_method(a[1], name) if a[0] == "cls" and a[1] in ip.p.classes else None
        if m is not None:
            out.append((m[1], a[1]))
    return out


def instance_method(w: "Walk", fn) -> V:
    """``Cls(...).m`` and ``obj.m`` for a variable bound once to ``Cls(...)`` (``Walk.made``), of
    a project class: that class's method ``m`` (the scan runs no call, so a test's own
    ``Program().run(argv)`` was not followed). EMPTY otherwise."""
    if fn[TAG] != "attr":
        return I.EMPTY
    made = fn[ATTR_VALUE]
    if made[TAG] == "name":
        made = None if w.frame.locals.get(made[NAME_ID], I.EMPTY).atoms else w.made.get(made[NAME_ID])
    if made is None or made[TAG] != "call":
        return I.EMPTY
    return union(I.of(("func", m, None)) for m, _cls in made_class_methods(w.ip, made, fn[ATTR_ATTR], w.frame))


def reset_names(ip: I.Interp, mod: str) -> str:
    """The module-level containers a reload of ``mod`` builds anew, for HT301's message."""
    s = ip.p.summaries.get(mod)
    if s is None:
        return ""
    names = []
    for st in s["body"]:
        if st[TAG] == "assign" and st[ASSIGN_VALUE][TAG] in ("dict", "seq"):
            for t in st[ASSIGN_TARGETS]:
                if t[TAG] == "name" and not (t[NAME_ID].startswith("__") and t[NAME_ID].endswith("__")):
                    names.append(t[NAME_ID])   # (``__all__``: the module's declaration, rebuilt the same)
    return ", ".join(names)


def _ships(node) -> bool:
    """An expression naming ``__file__`` (``Path(__file__).parent / "x.toml"``): a file the
    project ships beside its code, the same for every test."""
    if isinstance(node, (list, tuple)):
        if len(node) == 2 and node[0] == "name" and node[1] == "__file__":
            return True
        return any(_ships(x) for x in node if isinstance(x, (list, tuple)))
    return False


def cached_io(ip: I.Interp, qn: str) -> bool:
    """A project function decorated with functools.lru_cache / cache whose body does I/O (not
    only reads of files the project ships beside its code: a parsed catalogue is the same for
    every test)."""
    f, mod = ip.p.functions[qn]
    if ip.p.in_test.get(mod, False):
        return False
    if not any(dotted_name(d).rsplit(".", 1)[-1] in ("lru_cache", "cache") for d, _l in f["decorators"]):
        return False
    frame = scan_frame(ip, mod)
    for call in calls_in(f["body"]):
        fn = call[CALL_FUNC]
        if _ships(call):
            continue
        names = ext_names(resolve(ip, fn, frame))
        if any(ip.p.catalogue.lookup(n) is not None for n in names):
            return True
        if fn[TAG] == "attr" and fn[ATTR_ATTR] in ip.p.catalogue.path_methods:
            return True
    return False
