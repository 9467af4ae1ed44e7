"""How typer hands a command line to a project's commands: ``CliRunner().invoke(app, args)``.

typer is a library built on click, so the analysis does not follow it; this model does what its
dispatch does. ``app = typer.Typer()`` is an application (``("typerapp", site)``, one per
place it is made); ``@app.command()`` / ``@app.command("name")`` and ``@app.callback()``
register a function on it (kept as shared state of the application, so a memo replay of a
module's import registers it again) and bind the function itself. ``runner.invoke(app, args)``
(typer's ``CliRunner`` is click's) runs:

- nothing of the application for a line holding ``--help`` (typer prints the help);
- an application of one command and no callback: that command (typer runs it directly);
- otherwise the callback, then the command a literal word of the line names (the function's
  name with ``_`` as ``-``, or the name given); a line the analysis cannot read runs each
  command as a way that may not run (medium confidence).

The parameters are not parsed: with no words, each takes its default as the function declares
it; with words, each is unknown. A sub-application (``add_typer``) is not followed.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from .literals import _literal_str
from .values import UNKNOWN_V, V, of

APP = "typer.Typer"
_OWNER = "typer.Typer"   # the shared-state owner of every application's registrations


def app(frame) -> V:
    """``typer.Typer(...)`` made at this place."""
    return of(("typerapp", f"{frame.path}:{frame.line}"))


def registrar(atom: tuple, name: str, args: List[V], kwargs: Dict[str, V]) -> Optional[V]:
    """``app.command(...)`` / ``app.callback(...)``: a decorator registering what it decorates;
    None for another method."""
    if name not in ("command", "callback"):
        return None
    given = _literal_str(args[0]) if args and name == "command" else None
    if given is None and "name" in kwargs:
        given = _literal_str(kwargs["name"])
    return of(("typerreg", atom[1], name, given))


def register(ip, reg: tuple, qn: str) -> None:
    """Apply the registration ``reg`` (``registrar``) to the project function ``qn``."""
    _site, kind, given = reg[1], reg[2], reg[3]
    short = qn.rsplit(".", 1)[-1]
    key = f"{reg[1]}|callback" if kind == "callback" else f"{reg[1]}|cmd|{given or short.replace('_', '-')}"
    ip.write_state("cattr", _OWNER, key, of(("func", qn, None)))


def _registered(ip, site: str) -> Tuple[Dict[str, V], Optional[V]]:
    """The commands (name -> function) and the callback registered on the application made at
    ``site``."""
    store = ip._state_store("cattr", _OWNER, write=False)
    cmds: Dict[str, V] = {}
    for key, v in store.items():
        if key.startswith(f"{site}|cmd|"):
            ip._read("cattr", _OWNER, key)
            cmds[key[len(site) + 5:]] = v
    callback = store.get(f"{site}|callback")
    if callback is not None:
        ip._read("cattr", _OWNER, f"{site}|callback")
    return cmds, callback


def run(ip, site: str, line: Optional[List[V]], frame, pos) -> None:
    """One command line through the application made at ``site`` (module docstring)."""
    cmds, callback = _registered(ip, site)
    words = None if line is None else [_literal_str(w) for w in line]
    if words is not None and "--help" in words:
        return
    if len(cmds) == 1 and callback is None:
        _call(ip, next(iter(cmds.values())), line, frame, pos)
        return
    if callback is not None:
        _call(ip, callback, line, frame, pos)
        ip.call_raised = False
    named = [cmds[w] for w in words or () if w in cmds]
    if words is not None and all(w is not None for w in words):
        for f in named[:1]:   # the first word naming a command is the command
            _call(ip, f, line, frame, pos)
        return
    ip.undecided += 1   # which command the line names is not known
    try:
        for f in named or cmds.values():
            _call(ip, f, line, frame, pos)
            ip.call_raised = False
    finally:
        ip.undecided -= 1


def _call(ip, fn: V, line: Optional[List[V]], frame, pos) -> None:
    """Call a command: with no words its parameters keep their defaults, else each is unknown."""
    kwargs: Dict[str, V] = {}
    if line is None or line:
        for a in fn.refs():
            if a[0] == "func" and a[1] in ip.p.functions:
                kwargs = {p[0]: UNKNOWN_V for p in ip.p.functions[a[1]][0]["params"] if p[1] not in ("var", "varkw")}
    ip.apply(fn, [], kwargs, frame, pos)
