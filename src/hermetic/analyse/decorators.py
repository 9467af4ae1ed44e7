"""Decorators applied where a function or method is defined: a project decorator is called
with the function and what it returns is bound (a wrapper's own body runs when the name is
called); typer's ``app.command()`` registers the function (``typermodel``); a project
descriptor named as a property makes a method an attribute."""
from __future__ import annotations

from typing import List

from . import typermodel
from .state import Frame
from .values import V, of


class Decorators:
    def decorated(self, qn: str, decos: List[V], frame: Frame) -> V:
        """What a module-level ``def qn`` binds once its decorators (their values, top to bottom)
        are applied: a project decorator is called with the function, and what it returns (a
        wrapper, an instance of a project class) is bound, so the wrapper's own body runs when
        the name is called, and an instance's methods when they are (a click-like `@group()`);
        a library decorator, or one whose result is not known, keeps the function itself (as
        before: markers, patchers, caches)."""
        v = of(("func", qn, None))
        pos = (frame.line, 0, frame.line, 0)
        for d in reversed(decos):
            for a in d.atoms:
                if isinstance(a, tuple) and a[0] == "typerreg":   # @app.command(): registered, bound as is
                    typermodel.register(self, a, qn)
            deco = V(frozenset(a for a in d.atoms if isinstance(a, tuple) and a and a[0] in ("func", "lambda")
                               and (a[0] == "lambda" or a[1] in self.p.functions)))
            if not deco.atoms:
                continue
            got = self.apply(deco, [v], {}, frame, pos)
            # a wrapper, or an instance of a project class (a click-like `@group()` returns a
            # Group whose methods the tests call: `main.invoke(...)`)
            known = frozenset(a for a in got.atoms if isinstance(a, tuple) and a and (
                a[0] in ("func", "lambda", "partial", "inst")))
            if known:
                v = V(known)
        return v

    def wrap_method(self, qn: str, decos: List[V], frame: Frame) -> None:
        """A method's project decorators, applied when its class is defined: what they return
        (a wrapper taking ``self`` first) is what ``obj.method`` calls (``Objects.inst_attr``).
        A decorator that is a project descriptor class named as a property (one with ``__get__``:
        ``memoized_property``, ``classproperty``) makes the method an attribute: ``obj.name``
        runs it. Other descriptors may hand back a callable (a ``hybridmethod``): left as before."""
        if any(isinstance(a, tuple) and a[0] == "cls" and a[1].lower().endswith("property")
               and self.find_method(a[1], "__get__") is not None for d in decos for a in d.atoms):
            self.property_methods.add(qn)
            return
        v = self.decorated(qn, decos, frame)
        if v != of(("func", qn, None)):
            self.method_wrappers[qn] = v
