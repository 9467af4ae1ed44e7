"""What a click command is, read from its decorators: ``@click.command()`` / ``@click.group()``
on a project function, its ``@click.option`` / ``@click.argument`` parameters (also those a
project decorator adds), and the commands registered with a group. Used by ``clickmodel``,
which runs a command line through them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from .decide import values
from .literals import _literal_str, ext_names
from .state import Ctx, Frame
from .values import UNKNOWN_V, Origin, V, lit, of, seq_atom

_PKG = ("click", "click.decorators")
_COMMAND = {f"{p}.{n}": n for p in _PKG for n in ("command", "group")}
_OPTION = {f"{p}.option" for p in _PKG}
_ARGUMENT = {f"{p}.argument" for p in _PKG}
_VERSION = {f"{p}.version_option" for p in _PKG}
_PASS_CONTEXT = {f"{p}.pass_context" for p in _PKG}
_NOT_LITERAL = object()   # what ``_lit`` gives for an expression that is no literal
# parameter types whose value is the string the test passed (a path, a choice)
_KEEPS_TEXT = {"builtins.str", "click.STRING", "click.Path", "click.types.Path", "click.Choice", "click.types.Choice",
               "click.types.STRING"}


@dataclass
class Param:
    name: str                 # the callback's keyword
    argument: bool
    decls: Tuple[str, ...] = ()      # option strings that set it ("--force", "-f")
    off: Tuple[str, ...] = ()        # option strings that clear a boolean flag ("--no-force")
    flag: bool = False
    flag_value: Optional[V] = None
    default: Optional[V] = None      # None: not known
    multiple: bool = False
    count: bool = False
    nargs: int = 1
    exposed: bool = True
    converts: bool = False    # its type makes something else of the text (an int, an open file)
    outside: bool = False     # the value may come from elsewhere when not given (envvar, prompt)
    callback: Optional[V] = None   # the project function click hands the value to (callback=)
    bare: Optional[V] = None       # is_flag=False with flag_value: the value when given alone
    has_default: bool = False      # default= is written
    required: bool = False
    envvars: Tuple[str, ...] = ()  # envvar=: the variables click reads, in turn, when the line lacks it
    site: Optional[tuple] = None   # (module, path, pos) of the declaration, where those reads are reported


@dataclass
class Command:
    qn: str
    name: str
    group: bool
    params: List[Param] = field(default_factory=list)
    helps: Optional[Tuple[str, ...]] = None   # its help_option_names; None: its group's (--help)
    versions: Tuple[str, ...] = ()
    without_command: bool = False
    chain: bool = False       # a group that runs several subcommands of one line
    aliases: Tuple[str, ...] = ()   # other names click may give it (its version's name rules)
    listed: Tuple[str, ...] = ()    # functions a group's commands= holds
    readable: bool = True     # every decorator and option of it is understood
    context: bool = False     # @click.pass_context: the callback's first argument is click's Context


def _deco_parts(dexpr):
    if dexpr[0] == "call":
        return dexpr[1], dexpr[2], dict((k, v) for k, v in dexpr[3])
    return dexpr, [], {}


def _mframe(I, mod: str, line: int) -> Frame:
    return Frame(module=mod, path=I.p.summaries[mod]["path"], name="<click>", line=line)


def _ext_name(v: V) -> Optional[str]:
    """The library name ``v`` holds (``click.option``), canonical; None when it holds none."""
    names = ext_names(v)
    return min(names) if names else None


def _lit(e):
    """The Python value of a literal expression, else a sentinel."""
    return e[1] if e[0] == "lit" else _NOT_LITERAL


def _option_param(args, kw: dict, I, frame: Frame) -> Param:
    decls = [_lit(a) for a in args]
    if any(not isinstance(d, str) for d in decls):
        return Param(name="", argument=False, exposed=False, converts=True)
    name, on, off = None, [], []
    for d in decls:
        if d.isidentifier():
            name = d
            continue
        first, sep, second = d.partition("/")
        on.append(first.strip())
        if sep:
            off.extend(s.strip() for s in second.split("/") if s.strip())
    if name is None:
        longs = [o for o in on if o.startswith("--")]
        name = (longs or on or [""])[0].lstrip("-").replace("-", "_").lower()
    p = Param(name=name, argument=False, decls=tuple(on), off=tuple(off))
    _common(p, kw, I, frame)
    not_flag = "is_flag" in kw and _lit(kw["is_flag"]) is False
    p.flag = not not_flag and (bool(off) or "flag_value" in kw or "is_flag" in kw and _lit(kw["is_flag"]) is True)
    if "flag_value" in kw:
        fv = I.eval(kw["flag_value"], frame) if kw["flag_value"][0] in ("lit", "name", "attr") else UNKNOWN_V
        if not_flag:
            p.bare = fv   # --log takes a value, or stands alone for flag_value
        else:
            p.flag_value = fv
    if p.flag and "default" in kw and _lit(kw["default"]) is True and not off and "flag_value" not in kw:
        p.flag_value = UNKNOWN_V   # --cache of is_flag with default=True: False in click 8.1, True later
    p.multiple = _lit(kw["multiple"]) is True if "multiple" in kw else False
    p.count = _lit(kw["count"]) is True if "count" in kw else False
    p.outside = p.outside or "prompt" in kw
    if p.default is None and "default" not in kw:
        bool_flag = p.flag_value is None or type((values(p.flag_value) or [None])[0]) is bool
        none = of(seq_atom("tuple", (), exact=True))   # click gives () for no values
        p.default = lit(False if bool_flag else None, frame.path, frame.line, False) if p.flag else none \
            if p.multiple else lit(0, frame.path, frame.line, False) if p.count else lit(None, frame.path, frame.line, False)
    return p


def _sited(p: Param, frame: Frame, call) -> Param:
    """``p`` with the place of its declaration (the decorator's call), where click's reads of
    its ``envvar=`` variables are reported."""
    if p.envvars:
        pos = call[4] if call[0] == "call" and len(call) > 4 and call[4] and call[4][0] else None
        p.site = (frame.module, frame.path, tuple(pos) if pos else (frame.line, 0, frame.line, 0))
    return p


def _argument_param(args, kw: dict, I, frame: Frame) -> Param:
    name = _lit(args[0]) if args else None
    if not isinstance(name, str):
        return Param(name="", argument=True, exposed=False, converts=True)
    p = Param(name=name.replace("-", "_").lower(), argument=True, required=True)
    _common(p, kw, I, frame)
    if p.nargs == -1 or "default" in kw:
        p.required = False
    if "required" in kw:
        p.required = _lit(kw["required"]) is True
    if p.default is None and "default" not in kw:
        p.default = of(seq_atom("tuple", (), exact=True)) if p.nargs == -1 else lit(None, frame.path, frame.line, False)
    return p


def _common(p: Param, kw: dict, I, frame: Frame) -> None:
    if "nargs" in kw:
        n = values(I.eval(kw["nargs"], frame)) if kw["nargs"][0] in ("lit", "unary", "name", "attr") else None
        p.nargs = n[0] if n and len(n) == 1 and type(n[0]) is int else 2   # 2: read as not known
    if "expose_value" in kw:
        p.exposed = _lit(kw["expose_value"]) is not False
    if "required" in kw:
        p.required = _lit(kw["required"]) is True
    if "envvar" in kw:
        p.outside = True
        names = values(I.eval(kw["envvar"], frame)) if kw["envvar"][0] in ("lit", "seq", "name", "attr") else None
        if names and len(names) == 1:
            found = names[0] if isinstance(names[0], (list, tuple)) else [names[0]]
            p.envvars = tuple(n for n in found if isinstance(n, str) and n)
    if "callback" in kw:   # a project function click calls with (ctx, param, value): its result is the value
        cb = I.eval(kw["callback"], frame) if kw["callback"][0] in ("name", "attr") else UNKNOWN_V
        funcs = [a for a in cb.atoms if isinstance(a, tuple) and a[0] == "func"]
        if funcs and len(funcs) == len(cb.atoms):
            p.callback = cb
        else:
            p.outside = True
    if "type" in kw:
        t = kw["type"]
        callee = t[1] if t[0] == "call" else t
        p.converts = _ext_name(I.eval(callee, frame)) not in _KEEPS_TEXT if callee[0] in ("name", "attr") else True
    if "default" in kw:
        p.has_default = True
        d = kw["default"]
        if d[0] in ("lit", "name", "attr"):
            v = I.eval(d, frame)
            if d[0] == "lit" and isinstance(d[1], str):
                v = of(Origin("default-argument", expr=f"{p.name}={d[1]!r}"[:60], path=frame.path, line=frame.line,
                              inner=tuple(v.origins())))
            p.default = v
        else:
            p.default = UNKNOWN_V


def _settings(I, e, frame: Frame) -> Optional[list]:
    """A command's ``context_settings`` as (key, value) pairs: a dict literal, a ``dict(...)``
    call or a constant bound to one; ``[]`` when there are none, None when they cannot be read."""
    if e is None:
        return []
    v = I.eval(e, frame)
    (a,) = v.atoms if len(v.atoms) == 1 else (None,)
    if not (isinstance(a, tuple) and a[0] == "dict") or any(not isinstance(k, str) for k, _v in a[1]):
        return None
    return list(a[1])


def _names(v: V) -> Optional[Tuple[str, ...]]:
    """The option strings a list of literals holds (``help_option_names``), else None."""
    (a,) = v.atoms if len(v.atoms) == 1 else (None,)
    if not (isinstance(a, tuple) and a[0] == "seq"):
        return None
    out = [_literal_str(x) for x in a[2]]
    return None if None in out else tuple(out)


def _added_params(I, callee, frame: Frame) -> List[Param]:
    """The options and arguments a project decorator adds (``@output_options``,
    ``@insert_options(require_pk=True)``): the ``click.option(...)`` / ``click.argument(...)``
    calls written in its body, in the functions defined in it, in the module-level values it
    names (a list of options) and in the project decorators it names, in that order."""
    if callee[0] not in ("name", "attr"):
        return []
    cache = I.__dict__.setdefault("_click_added", {})   # one walk per decorator, however many commands use it
    out: List[Param] = []
    for a in I.eval(callee, frame).atoms:
        if isinstance(a, tuple) and a[0] == "func" and a[1] in I.p.functions:
            if a[1] not in cache:
                cache[a[1]] = _walk_decorator(I, a[1])
            out.extend(cache[a[1]])
    return out


def _walk_decorator(I, root: str) -> List[Param]:
    """The parameters the project decorator ``root`` adds (``_added_params``), at most 32
    functions deep."""
    out: List[Param] = []
    seen = set()
    todo = [root]
    while todo and len(seen) < 32:
        top = todo.pop(0)
        if top in seen:
            continue
        seen.add(top)
        inner = top + ".<locals>."
        for qn in [top] + [q for q in I.p.functions if q.startswith(inner)]:
            f, mod = I.p.functions[qn]
            trees = [f["body"]]
            names = {n[1] for n in _nodes(f["body"], "name")}
            trees += [st[2] for st in I.p.summaries[mod]["body"]
                      if st[0] == "assign" and any(t == ("name", n) for t in st[1] for n in names)]
            fr = _mframe(I, mod, f["line"])
            for n in sorted(names):
                if n not in (p[0] for p in f["params"]):
                    todo.extend(a[1] for a in I.eval(("name", n), fr).atoms
                                if isinstance(a, tuple) and a[0] == "func" and a[1] in I.p.functions and a[1] != qn)
            for call in (c for t in trees for c in _nodes(t, "call")):
                fr.line = call[4][0] if len(call) > 4 and call[4] else f["line"]
                d = _ext_name(I.eval(call[1], fr)) if call[1][0] in ("name", "attr") else None
                if d in _OPTION:
                    out.append(_sited(_option_param(call[2], dict((k, v) for k, v in call[3]), I, fr), fr, call))
                elif d in _ARGUMENT:
                    out.append(_sited(_argument_param(call[2], dict((k, v) for k, v in call[3]), I, fr), fr, call))
    return out


def _nodes(node, tag: str):
    """Every ``tag`` node ("call", "name") of an IR tree (statements and expressions are
    tuples and lists headed by their tag)."""
    if isinstance(node, tuple) and node and node[0] == tag and (tag != "call" or len(node) == 5) and (
            tag != "name" or len(node) == 2 and isinstance(node[1], str)):
        yield node
    if isinstance(node, (tuple, list)):
        for x in node:
            if isinstance(x, (tuple, list)):
                yield from _nodes(x, tag)


def command_spec(I, qn: str) -> Optional[Command]:
    """The command ``qn``'s decorators make, or None when it is no click command."""
    cache = I.__dict__.setdefault("_click_specs", {})
    if qn in cache:
        return cache[qn]
    cache[qn] = None
    entry = I.p.functions.get(qn)
    if entry is None:
        return None
    f, mod = entry
    if I.import_module(mod) is None:
        return None
    # the decorators ran at import: a patch a test installs later is not what click holds
    # (a fresh control state, as ``eval_static`` reads a class's bases)
    saved, I.ctx = I.ctx, Ctx()
    try:
        cmd = _read(I, qn, f, mod)
    finally:
        I.ctx = saved
    cache[qn] = cmd
    return cmd


def _read(I, qn: str, f: dict, mod: str) -> Optional[Command]:
    cmd = None
    params: List[Param] = []
    helps: Optional[Tuple[str, ...]] = None
    versions: List[str] = []
    readable = True
    context = False
    for dexpr, line in f["decorators"]:
        frame = _mframe(I, mod, line)
        callee, args, kw = _deco_parts(dexpr)
        d = _ext_name(I.eval(callee, frame)) if callee[0] in ("name", "attr") else None
        kind = _COMMAND.get(d or "")
        if kind is None and callee[0] == "attr" and callee[2] in ("command", "group"):   # also @cli.command
            owner = I.eval(callee[1], frame)
            if any(isinstance(a, tuple) and a[0] == "func" and command_spec(I, a[1]) is not None for a in owner.atoms):
                kind = callee[2]
        if kind is not None:
            named = args[0] if args else kw.get("name")
            name = _literal_str(I.eval(named, frame)) if named is not None and named[0] in ("lit", "name", "attr") \
                else None
            derived = qn.rsplit(".", 1)[-1].lower().replace("_", "-")
            cmd = Command(qn=qn, name=name or derived, group=kind == "group")
            if name is None:   # click 8.2 also drops a -command / -cmd / -group / -grp ending
                cmd.aliases = tuple(derived[:-len(e)] for e in ("-command", "-cmd", "-group", "-grp")
                                    if derived.endswith(e) and len(derived) > len(e))
            if "commands" in kw:   # @click.group(commands=[a, b]) or a dict of them
                cmd.listed = tuple(a[1] for a in I.eval(kw["commands"], frame).refs() if a[0] == "func")
            if kind == "group" and "chain" in kw and _lit(kw["chain"]) is not False:
                readable, cmd.chain = False, True
            if "invoke_without_command" in kw:
                cmd.without_command = _lit(kw["invoke_without_command"]) is True
            settings = _settings(I, kw.get("context_settings"), frame)
            if settings is None:
                readable = False
            for k, v in settings or ():
                if k == "help_option_names":
                    helps = _names(v)
                    readable = readable and helps is not None
                elif k in ("auto_envvar_prefix", "default_map", "ignore_unknown_options", "allow_extra_args",
                           "allow_interspersed_args", "token_normalize_func"):
                    readable = False
        elif d in _OPTION:
            params.append(_sited(_option_param(args, kw, I, frame), frame, dexpr))
        elif d in _ARGUMENT:
            params.append(_sited(_argument_param(args, kw, I, frame), frame, dexpr))
        elif kind is None and d is None:
            params.extend(_added_params(I, callee, frame))
        elif d in _VERSION:
            names = [_lit(a) for a in args if isinstance(_lit(a), str) and _lit(a).startswith("-")]
            versions.extend(names or ["--version"])
        elif d in _PASS_CONTEXT:
            context = True
    if cmd is None:
        return None
    cmd.context = context
    cmd.params = params
    cmd.helps, cmd.versions = helps, tuple(versions)
    cmd.readable = readable and all(p.name for p in params)
    return cmd


def subcommands(I, group_qn: str) -> Dict[str, str]:
    """The commands registered with the group ``group_qn`` by modules imported so far: name ->
    function (``@group.command()``, ``@group.group()``, ``group.add_command(f[, name])``)."""
    index = I.__dict__.get("_click_index")
    if index is None:
        index = I._click_index = _index(I.p)
    out: Dict[str, str] = {}
    for mod, entries in index.items():
        if mod not in I.globals:
            continue
        for kind, owner, line, what in entries:
            frame = _mframe(I, mod, line)
            if ("func", group_qn, None) not in I.eval_static(owner, mod).atoms:
                continue
            if kind == "deco":
                _register(out, I, what, None)
                continue
            args, kw = what
            for a in I.eval(args[0], frame).atoms if args else ():
                if isinstance(a, tuple) and a[0] == "func":
                    named = args[1] if len(args) > 1 else kw.get("name")
                    _register(out, I, a[1], None if named is None else _literal_str(I.eval(named, frame)) or "")
    group = command_spec(I, group_qn)
    for qn in group.listed if group is not None else ():
        _register(out, I, qn, None)
    return out


def _register(out: Dict[str, str], I, qn: str, name: Optional[str]) -> None:
    """``qn`` under ``name`` (None: its own name and aliases; "": a name not known)."""
    spec = command_spec(I, qn)
    if spec is not None and name != "":
        for n in (name,) if name else (spec.name,) + spec.aliases:
            out.setdefault(n, qn)


def _index(p) -> Dict[str, list]:
    """Per module, where a command may be registered with a group: ("deco", group expression,
    line, function) for ``@X.command(...)`` / ``@X.group(...)`` on a module-level function, and
    ("add", X, line, (args, kwargs)) for a module-level ``X.add_command(...)``."""
    out: Dict[str, list] = {}
    for qn, (f, mod) in p.functions.items():
        for dexpr, line in f["decorators"]:
            callee = dexpr[1] if dexpr[0] == "call" else dexpr
            if callee[0] == "attr" and callee[2] in ("command", "group"):
                out.setdefault(mod, []).append(("deco", callee[1], line, qn))
    for mod, s in p.summaries.items():
        for st in s["body"]:
            if st[0] == "expr" and st[1][0] == "call" and st[1][1][0] == "attr" and st[1][1][2] == "add_command":
                out.setdefault(mod, []).append(("add", st[1][1][1], st[-1], (st[1][2], dict(st[1][3]))))
    return out
