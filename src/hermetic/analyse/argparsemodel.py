"""How argparse hands a command line to the function a parser names.

argparse is a library, so the analysis does not follow it; this model does what its common
dispatch does: ``parser.set_defaults(func=handler)`` (on the parser or on a subparser) puts
``handler`` in the namespace ``parse_args`` returns, and ``args.func(args)`` calls it. Which
subparser the line picks is not read: every handler a ``set_defaults`` named so far may be the
one, or none of them (medium confidence). The handlers are kept as shared state of the
namespace class (``Interp.write_state``), so a memo replay of the function that built the parser
sets them again and each test starts from what import left.
"""
from __future__ import annotations

from typing import Dict, Optional

from .values import INSTANCE, UNKNOWN_V, Origin, V, instance_class, of

NAMESPACE = "argparse.Namespace"
PARSER = "argparse.ArgumentParser"
_CALLABLE = ("func", "cls", "lambda", "partial")


def record_defaults(ip, kwargs: Dict[str, V]) -> None:
    """``x.set_defaults(name=callable, ...)``: each callable may be the namespace's ``name``."""
    for k, v in kwargs.items():
        if any(isinstance(a, tuple) and a[0] in _CALLABLE for a in v.atoms):
            before = ip._state_store("cattr", NAMESPACE, write=False).get(k)
            ip.write_state("cattr", NAMESPACE, k, v if before is None else before | v)


def parsed(callee: V) -> Optional[V]:
    """The namespace ``parser.parse_args(...)`` returns, where ``callee`` is that method of an
    ``argparse.ArgumentParser``; None otherwise."""
    if callee.atoms and all(isinstance(a, tuple) and a[0] == "dmeth" and a[2] == "parse_args"
                            and all(instance_class(b) == PARSER for b in a[1].atoms) for a in callee.atoms):
        return of(Origin("unknown", expr="Namespace()", value=INSTANCE + NAMESPACE))
    return None


def handler(ip, atom: tuple) -> Optional[V]:
    """What calling ``args.<name>`` (``atom``: the ``dmeth`` of a namespace) calls: the
    callables ``set_defaults`` gave that name, or something else; None where it named none."""
    base, name = atom[1], atom[2]
    if not base.atoms or not all(instance_class(b) == NAMESPACE for b in base.atoms):
        return None
    ip._read("cattr", NAMESPACE, name)
    found = ip._state_store("cattr", NAMESPACE, write=False).get(name)
    return None if found is None else found | UNKNOWN_V
