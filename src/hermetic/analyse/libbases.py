"""What a project class inherits from the catalogued library classes it derives from: the I/O
of the base's constructor (``class Settings(BaseSettings)`` reads the environment when made) and
the base's client methods (``class CachedSession(CacheMixin, requests.Session)``: its ``get`` and
``super().request(...)`` are the library's, which send the request)."""
from __future__ import annotations

from typing import Dict, List, Optional

from .literals import _canonical
from .state import Frame
from .values import V, of


def catalogued_bases(ip, qn: str, own_args: bool, args: List[V], kwargs: Dict[str, V], frame: Frame) -> None:
    """Project class ``qn`` made: each catalogued library base does its I/O. The call's arguments
    are the base's only when no project ``__init__`` stands between (``own_args``); else only an
    entry that needs no target applies."""
    for ext in ip.external_bases(qn):
        spec = ip.p.catalogue.lookup(_canonical(ext))
        if spec is not None and (own_args or spec.variable):
            site = ip._site
            pos = site[1] if site and site[0] == frame.path else (frame.line, 0, frame.line, 0)
            ip.sink_call(spec, _canonical(ext), args if own_args else [], kwargs if own_args else {}, frame, pos)


def library_method(ip, cls: str, name: str) -> Optional[V]:
    """Method ``name`` of a catalogued client class that project class ``cls`` derives from, as
    the method of a client built without a target (the call that names the URL is the sink);
    None when no such base has it."""
    for ext in ip.external_bases(cls):
        spec = ip.p.catalogue.lookup(_canonical(ext))
        if spec is not None and (name in spec.methods or any(k == name for k, _t in spec.extra_methods)):
            return of(("meth", ("client", _canonical(ext), spec), name))
    return None
