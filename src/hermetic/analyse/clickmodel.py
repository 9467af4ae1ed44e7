"""How click hands a command line to a project's commands: ``CliRunner().invoke(cli, args)``.

click is a library, so the analysis does not follow it; this model does what its parser does
with the arguments a test passes, and calls the project's callbacks with the values they get:
``@click.command()`` / ``@click.group()`` functions, their ``@click.option`` /
``@click.argument`` parameters (flags, ``--x/--no-x``, ``flag_value``, ``count``, ``multiple``,
``nargs``, defaults, ``--name=value``, ``-xVALUE``, grouped short flags, ``--``), a group's
subcommands (``@cli.command()``, ``@cli.group()``, ``cli.add_command(f, "name")`` in modules
imported so far), parameters' ``callback=`` functions (one that raises stops click), ``--help``
(or the ``help_option_names`` the command or its group sets) and ``--version`` (nothing of
that command runs), a missing command or argument, an extra argument or an unknown command
name (click stops before the callback). The runner's ``env=`` (its own and the invocation's)
sets and deletes variables for the invocation, as ``patch.dict(os.environ, ...)`` does. The
runner catches what the command raises unless ``catch_exceptions=False``. A parameter with
``envvar=`` the line lacks is read from the environment as click reads it, reported at its
declaration.

Where the model cannot read the line (an option it does not know, an argument list it cannot
see, a converting ``type=`` or ``prompt=``, ``chain=True``), the parameters
concerned are unknown (medium confidence); a subcommand is followed only where a literal word
names it. A word with several values (a parametrize list) gives one command line per value.
A value the test computes (a ``tmp_path`` string, a fixture's value) is taken as an argument,
never as an option name.
"""
from __future__ import annotations

import shlex
from typing import Dict, List, Optional, Tuple

from . import typermodel
from .clickspec import Command, Param, command_spec, subcommands
from .decide import values
from .literals import _literal_str
from .state import DELETED, Frame
from .values import EMPTY, INSTANCE, UNKNOWN_V, Origin, V, is_counted, is_exact, lit, of, seq_atom
from .ways import TreeWays

_UNKNOWN_PARSE = object()   # the model cannot tell
_STOP = object()   # click stops before the callback (help, version, a usage error)
_FROM_ENV = of(Origin("unknown"))   # not on the line: click reads the parameter's envvar= (by identity)
_COMPUTED = of(Origin("unknown", expr="a computed word"))   # the value part of f"--name={value}"
# the click.Context a callback is handed: its exit(), abort() and fail() raise (catalogue [raises])
CONTEXT = of(Origin("unknown", expr="Context()", value=INSTANCE + "click.Context"))


def _lines(v: Optional[V]) -> List[Tuple[Optional[List[V]], bool]]:
    """The argument lists the test passes, one value per word: one list per shape the value
    can have (a list, a tuple, or one string split as a shell would); None for one that is not
    known. Each with whether its words are certain: a list spliced from one the analysis knows
    only by its kind of item (a comprehension) may stand for no word or several."""
    if v is None:
        return [([], True)]
    out: List[Tuple[Optional[List[V]], bool]] = []
    for a in v.ordered():
        if isinstance(a, tuple) and a[0] == "seq":
            certain = is_counted(a)
            out.extend((line, certain) for line in _each(list(a[2])))
        elif isinstance(a, Origin) and _literal_str(of(a), prefix=True) is not None:
            out.append((_split(a), True))
        else:
            out.append((None, True))
    return out or [(None, True)]


def _split(a: Origin) -> Optional[List[V]]:
    """A string's words (a constant bound to one too); of one built from a literal
    (``f"sync {tmp_path}"``), its leading whole words, then what the test computes as one
    argument. None when a shell could not split it."""
    text = _literal_str(of(a), prefix=True)
    whole = _literal_str(of(a)) is not None
    if not whole and not text[-1:].isspace():   # its last word runs on into the computed part
        text = text[:len(text) - len(text.split()[-1])] if text.split() else ""
    try:
        words = [lit(w, a.path, a.line, a.in_test) for w in shlex.split(text)]
    except ValueError:
        return None
    return words if whole else words + [of(Origin("unknown", expr="a computed word"))]


def _each(words: List[V], limit: int = 16) -> List[Optional[List[V]]]:
    """The argument lists a test passes: a word with several values (a parametrize list, a
    variable set on two ways) gives one list per value; more than ``limit`` lists: not known
    ([None])."""
    out: List[List[V]] = [[]]
    for w in words:
        alts = [of(a, is_path=w.is_path) for a in w.ordered()] if len(w.atoms) > 1 else [w]
        out = [line + [x] for line in out for x in alts]
        if len(out) > limit:
            return [None]
    return out


def _word(v: V):
    """A word's text when it is one literal; None for a value the test computes (an argument:
    a path, a string built from a literal that is no option, a value not known);
    ``_UNKNOWN_PARSE`` for several literals or a string built from ``-...``."""
    s = _literal_str(v)
    if s is not None:
        return s
    if len(v.atoms) == 1:
        (a,) = v.atoms
        if isinstance(a, Origin) and a.kind == "literal" and a.partial and a.value and not a.value.startswith("-"):
            return None   # "select * from {}".format(t): built from a literal that is no option
    if any(isinstance(a, Origin) and a.kind == "literal" for a in v.atoms) or not v.atoms:
        return _UNKNOWN_PARSE
    return None   # computed by the test, even where the analysis cannot follow how: an argument


def parse(cmd: Command, words: List[V], helps: Tuple[str, ...] = ("--help",), certain: bool = True):
    """What click's parser makes of ``words`` for ``cmd``: (values by parameter name, the words
    left for a subcommand), ``_STOP`` when click stops before the callback, or
    ``_UNKNOWN_PARSE``. ``certain``: each word is one word (a tuple of values is then exact)."""
    if not cmd.readable:
        return _UNKNOWN_PARSE
    stops = cmd.helps or helps   # a subcommand has its group's help_option_names unless it sets its own
    by_opt: Dict[str, Tuple[Param, bool]] = {}
    for p in cmd.params:
        if not p.argument:
            for o in p.decls:
                by_opt[o] = (p, True)
            for o in p.off:
                by_opt[o] = (p, False)
    given: Dict[str, V] = {}
    positional: List[V] = []
    i = 0
    while i < len(words):
        w = words[i]
        if _is_none(w):
            return _STOP   # click's parser fails on None where it looks for an option (not as a value, not after --)
        hit = by_opt.get(_computed_option(w) or "")
        if hit is not None and not (hit[0].flag or hit[0].count):
            _give(given, hit[0], _COMPUTED)   # f"--config={path}": the option, with a value the test computed
            i += 1
            continue
        s = _word(w)
        if s is _UNKNOWN_PARSE:
            return _UNKNOWN_PARSE
        if s is None or s == "-" or not s.startswith("-"):
            if cmd.group:   # options after the subcommand's name are the subcommand's
                positional.extend(words[i:])
                break
            positional.append(w)
            i += 1
            continue
        if s == "--":
            positional.extend(words[i + 1:])
            break
        if s in stops or s in cmd.versions:
            return _STOP
        if s.startswith("--"):
            opt, eq, val = s.partition("=")
            hit = by_opt.get(opt)
            if hit is None:
                return _UNKNOWN_PARSE
            p, on = hit
            if p.flag or p.count:
                if eq:
                    return _UNKNOWN_PARSE
                _flag(given, p, on, w)
                i += 1
                continue
            if eq:
                _give(given, p, _part(w, val))
                i += 1
                continue
            if p.bare is not None and (i + 1 >= len(words) or _opt_like(words[i + 1])):
                _give(given, p, p.bare)
                i += 1
                continue
            if p.nargs != 1 or i + 1 >= len(words):
                return _UNKNOWN_PARSE
            _give(given, p, words[i + 1])
            i += 2
            continue
        # short options: grouped flags (-vf), or one that takes the rest or the next word (-cVAL)
        j = 1
        while j < len(s):
            hit = by_opt.get("-" + s[j])
            if hit is None:
                return _UNKNOWN_PARSE
            p, on = hit
            if p.flag or p.count:
                _flag(given, p, on, w)
                j += 1
                continue
            if p.nargs != 1:
                return _UNKNOWN_PARSE
            if j + 1 < len(s):
                _give(given, p, _part(w, s[j + 1:]))
            elif i + 1 < len(words):
                i += 1
                _give(given, p, words[i])
            else:
                return _UNKNOWN_PARSE
            break
        i += 1
    values: Dict[str, V] = {}
    for p in cmd.params:
        if p.argument:
            continue
        if p.name in given:
            values[p.name] = given[p.name]
        elif p.required and not p.has_default and not p.outside:
            return _STOP
        else:
            values[p.name] = _absent(p)
    rest = list(positional)
    arguments = [p for p in cmd.params if p.argument]
    for n, p in enumerate(arguments):
        if p.nargs == -1:   # the arguments after it take their words from the end
            cut = max(len(rest) - sum(max(q.nargs, 0) for q in arguments[n + 1:]), 0)
            taken, rest = rest[:cut], rest[cut:]
            if not taken and p.required and not p.outside:
                return _STOP
            values[p.name] = of(seq_atom("tuple", taken, exact=certain and _literal_words(taken)))
        elif len(rest) >= p.nargs:
            taken, rest = rest[:p.nargs], rest[p.nargs:]
            exact = certain and _literal_words(taken)
            values[p.name] = taken[0] if p.nargs == 1 else of(seq_atom("tuple", taken, exact=exact))
        elif p.required and not p.has_default and not p.outside:
            return _STOP
        else:
            values[p.name] = _absent(p)
    if rest and not cmd.group:
        return _STOP   # "Got unexpected extra argument"
    for p in cmd.params:
        if p.converts and p.name in values and values[p.name] is not _FROM_ENV:
            values[p.name] = UNKNOWN_V
        elif not certain and p.name in given and any(is_exact(a) for a in values[p.name].atoms):
            # how many values, not known
            values[p.name] = V(frozenset(a[:3] if is_exact(a) else a for a in values[p.name].atoms))
    # also the parameters click does not hand to the command (expose_value=False): their
    # envvar= reads and callbacks still run (``_call``)
    return {n: v for n, v in values.items() if n}, rest


def _absent(p: Param) -> V:
    """The value of a parameter the line does not give: its envvar= reads (``_FROM_ENV``, done
    when the callbacks run), else unknown where it may come from elsewhere, else its default."""
    if p.envvars and p.site:
        return _FROM_ENV
    return UNKNOWN_V if p.outside or p.default is None else p.default


def _from_env(I, cmd: Command, p: Param, frame: Frame, pos):
    """A parameter the line does not give: click reads its ``envvar=`` variables in turn (a
    read reported at the declaration, as the command's) and takes the first one set and not
    empty, else the default; ``_STOP`` when none is set and the parameter is required with no
    default (click's "Missing option"). The value is the variable's where click keeps the text
    (the real environment's, or the default when it is not set: a default function is called),
    else unknown."""
    mod, path, site = p.site
    keeps_text = not (p.flag or p.count or p.multiple or p.converts or p.nargs != 1)
    needed = p.required and not p.has_default
    real = None   # what a variable of the real environment read gives
    I.stack.append(Frame(module=mod, path=path, name=cmd.qn, line=site[0]))
    try:
        for name in p.envvars:
            # one finding per place: the first variable of the real environment read is reported
            got = I.env_read(name, site, I.stack[-1], "click envvar")
            if name not in I.ctx.env:
                if I.ctx.env_all:
                    continue   # the test cleared the environment: not set
                real = got
                break
            val = I.ctx.env[name]
            if val is DELETED or values(val) == [""]:
                continue
            return val if keeps_text else UNKNOWN_V
    finally:
        I.stack.pop()
    if real is None:   # no variable is set
        if needed:
            return _STOP
        return UNKNOWN_V if p.default is None or p.converts else p.default
    if not keeps_text or (p.default is None and not needed):
        return UNKNOWN_V
    if needed:
        return real
    if _callable(p.default):   # unset: click calls the default
        default = I.apply(p.default, [], {}, frame, pos)
        I.call_raised = False
        return real | default
    return real | p.default


def _callable(v: Optional[V]) -> bool:
    """``v`` is a function or lambda (a ``default=`` click calls)."""
    return v is not None and bool(v.atoms) and all(isinstance(a, tuple) and a[0] in ("func", "lambda") for a in v.atoms)


def _is_none(w: V) -> bool:
    return values(w) == [None]


def _literal_words(words: List[V]) -> bool:
    """Each word is one literal string: the test wrote it, so it is one value (a word the test
    computes may stand for a spliced list: none or several)."""
    return all(isinstance(_word(w), str) for w in words)


def _opt_like(w: V) -> bool:
    s = _word(w)
    return s is _UNKNOWN_PARSE or isinstance(s, str) and s.startswith("-") and s != "-"


def _computed_option(w: V) -> Optional[str]:
    """The long option a word built from ``--name=`` and a value the test computes names
    (``f"--config={EMPTY_CONFIG}"``), else None."""
    if len(w.atoms) != 1:
        return None
    (a,) = w.atoms
    if isinstance(a, Origin) and a.kind == "literal" and a.partial and (a.value or "").startswith("--") \
            and "=" in a.value:
        return a.value.split("=", 1)[0]
    return None


def _part(w: V, text: str) -> V:
    o = next(iter(w.origins()))
    return lit(text, o.path, o.line, o.in_test)


def _flag(given: Dict[str, V], p: Param, on: bool, w: V) -> None:
    o = next(iter(w.origins()))
    if p.count:   # two options may share a name: what the other left may be no count
        n = values(given[p.name]) if p.name in given else [0]
        given[p.name] = lit(n[0] + 1, o.path, o.line, o.in_test) if n and type(n[0]) is int else UNKNOWN_V
        return
    value = (p.flag_value if p.flag_value is not None else lit(True, o.path, o.line, o.in_test)) if on \
        else lit(False, o.path, o.line, o.in_test)
    _give(given, p, value)


def _give(given: Dict[str, V], p: Param, v: V) -> None:
    if p.multiple:
        before = given.get(p.name)
        (a,) = before.atoms if before is not None and len(before.atoms) == 1 else (None,)
        items = a[2] if isinstance(a, tuple) and a[0] == "seq" else ()
        exact = (before is None or all(is_exact(a) for a in before.atoms)) and _literal_words([v])
        given[p.name] = of(seq_atom("tuple", items + (v,), exact=exact)) if before is None or items else UNKNOWN_V
    else:
        given[p.name] = v


def runner(kwargs: Dict[str, V]) -> tuple:
    """The atom of a ``CliRunner(env=...)``: the variables it sets for every invocation."""
    return ("clirunner", _env(kwargs.get("env")))


def _env(v: Optional[V]) -> tuple:
    """``env=`` as (name, value or None to delete) pairs; names not known are left out."""
    if v is None or len(v.atoms) != 1:
        return ()
    (a,) = v.atoms
    if not (isinstance(a, tuple) and a[0] == "dict"):
        return ()
    out = []
    for k, val in a[1]:
        if isinstance(k, str):
            out.append((k, None if values(val) == [None] else val))
    return tuple(out)


def invoke(I, atom: tuple, args: List[V], kwargs: Dict[str, V], frame: Frame, pos) -> V:
    """``runner.invoke(cli, args=None, input=None, env=None, catch_exceptions=True, ...)``: run
    what click runs."""
    kwargs = dict(zip(("cli", "args", "input", "env", "catch_exceptions"), args), **kwargs)
    cli = kwargs.get("cli", EMPTY)
    cmds = [c for c in (command_spec(I, a[1]) for a in cli.atoms if isinstance(a, tuple) and a[0] == "func")
            if c is not None]
    apps = [a[1] for a in cli.atoms if isinstance(a, tuple) and a[0] == "typerapp"]   # typer's (typermodel)
    if not cmds and not apps:
        return UNKNOWN_V
    lines = _lines(kwargs.get("args"))
    env = (atom[1] if len(atom) > 1 else ()) + _env(kwargs.get("env"))
    catches = values(kwargs["catch_exceptions"]) != [False] if "catch_exceptions" in kwargs else True
    before = {k: I.ctx.env.get(k) for k, _v in env}
    for k, v in env:
        I.ctx.env[k] = DELETED if v is None else v
    expecting = I.expecting, I.expecting_many
    if catches:   # the runner keeps what the command raises in its result
        I.expecting, I.expecting_many = frozenset(), frozenset()
    try:
        tree_ways = TreeWays(I)   # each line is an alternative: none ran before it (``ways``)
        for cmd in cmds + apps:
            for line, certain in lines:
                tree_ways.start()
                if isinstance(cmd, str):
                    typermodel.run(I, cmd, line, frame, pos)
                else:
                    _run(I, cmd, line, frame, pos, 0, certain=certain)
                tree_ways.end_way()
                # the runner always keeps SystemExit (a click error is one); what else the
                # command raises is not told apart: the test goes on
                I.call_raised = False
        tree_ways.finish()
    finally:
        if catches:
            I.expecting, I.expecting_many = expecting
        for k, old in before.items():
            if old is None:
                I.ctx.env.pop(k, None)
            else:
                I.ctx.env[k] = old
    return UNKNOWN_V


def _run(I, cmd: Command, words: Optional[List[V]], frame: Frame, pos, depth: int,
         helps: Tuple[str, ...] = ("--help",), certain: bool = True) -> None:
    parsed = parse(cmd, words, helps, certain) if words is not None else _UNKNOWN_PARSE
    helps = cmd.helps or helps
    if parsed is _STOP or depth > 8:
        return
    if parsed is _UNKNOWN_PARSE:
        # which way click takes is not known (medium confidence): the command's callback with
        # unknown values, then, for a group, each subcommand a literal word of the line names
        # (a chain runs several), with the words after it; no other subcommand is followed
        I.undecided += 1
        try:
            _call(I, cmd, {p.name: UNKNOWN_V for p in cmd.params if p.exposed}, frame, pos)
            for sub, after in (_named(I, cmd, words) if cmd.group and not I.call_raised else ()):
                _run(I, sub, after, frame, pos, depth + 1, helps, certain)
                I.call_raised = False
        finally:
            I.undecided -= 1
        return
    given, rest = parsed
    if not cmd.group:
        _call(I, cmd, given, frame, pos)
        return
    if not rest:
        if cmd.without_command:
            _call(I, cmd, given, frame, pos)
        return   # else click shows the usage: "Missing command"
    name = _word(rest[0])
    subs = subcommands(I, cmd.qn)
    if not isinstance(name, str) or name not in subs:
        # "No such command": click stops before the group's callback; a name the test
        # computes is not followed (a custom group class may also read it otherwise)
        return
    _call(I, cmd, given, frame, pos)
    if not I.call_raised:
        _run(I, command_spec(I, subs[name]), rest[1:], frame, pos, depth + 1, helps, certain)


def _named(I, cmd: Command, words: Optional[List[V]]) -> list:
    """For a group whose own line cannot be read: (subcommand, the words after it) for each
    literal word of the line that names one of its subcommands."""
    subs = subcommands(I, cmd.qn)
    at = [i for i, w in enumerate(words or ()) if isinstance(_word(w), str) and _word(w) in subs]
    # a chain's subcommand takes the words up to the next one's name
    return [(command_spec(I, subs[_word(words[i])]), words[i + 1:(at[n + 1] if cmd.chain and n + 1 < len(at) else None)])
            for n, i in enumerate(at)]


def _call(I, cmd: Command, given: Dict[str, V], frame: Frame, pos) -> None:
    """The parameters' ``envvar=`` reads, their callbacks (``callback=``: a raise on every way
    is click's usage error, and nothing more runs; what one returns is the value), then the
    command's callback."""
    for p in cmd.params:   # in click's order: each one's value, then its callback
        if given.get(p.name) is _FROM_ENV:
            # (a parameter of the same name declared twice, one with envvar= and one without:
            # rq's shared options; the one without reads nothing)
            given[p.name] = _from_env(I, cmd, p, frame, pos) if p.site else \
                UNKNOWN_V if p.default is None else p.default
            if given[p.name] is _STOP:
                return   # a required parameter no variable gives: click's usage error
        if p.name in given and given[p.name] is p.default and _callable(p.default):
            given[p.name] = I.apply(p.default, [], {}, frame, pos)   # default=a function: its result
            I.call_raised = False
        if p.callback is not None and p.name in given:
            value = I.apply(p.callback, [CONTEXT, UNKNOWN_V, given[p.name]], {}, frame, pos)
            if I.call_raised:
                return
            if p.exposed and not p.converts:
                given[p.name] = value
    given = {k: v for k, v in given.items() if any(p.name == k and p.exposed for p in cmd.params)}
    f = I.p.functions[cmd.qn][0]
    names = {prm[0] for prm in f["params"]}
    if not any(prm[1] == "varkw" for prm in f["params"]):
        given = {k: v for k, v in given.items() if k in names}
    I.apply(of(("func", cmd.qn, None)), [CONTEXT] if cmd.context else [], given, frame, pos)
