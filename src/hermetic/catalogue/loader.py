"""The sink catalogue (``catalogue/sinks.toml``), extended and trimmed by configuration."""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Tuple

from ..config import Config

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


@dataclass(frozen=True)
class SinkSpec:
    """One catalogue entry: ``name`` is the fully qualified call, ``category`` one of the
    six sink categories; ``target`` the argument positions/keywords holding the target."""

    name: str
    category: str
    target: Tuple[Any, ...] = ()
    default: str = ""
    lib: str = ""
    write: bool = False
    mode: Tuple[Any, ...] = ()
    only_with_target: bool = False
    only_without_args: bool = False
    only_with_args: int = 0
    methods: Tuple[str, ...] = ()
    method_target: Tuple[Any, ...] = (0, "url")
    extra_methods: Tuple[Tuple[str, Tuple[Any, ...]], ...] = ()
    distinctive: bool = False
    variable: str = ""   # env sinks that read one fixed variable (shutil.which reads PATH)


@dataclass(frozen=True)
class Invoke:
    """A library call that calls one of its arguments (``[invokes]``): the argument at the
    first present of ``target`` (positions, keywords) is called with ``nargs`` arguments."""

    name: str
    target: Tuple[Any, ...]
    nargs: int


@dataclass
class Catalogue:
    calls: Dict[str, SinkSpec] = field(default_factory=dict)
    path_methods: Dict[str, SinkSpec] = field(default_factory=dict)
    invokes: Dict[str, Invoke] = field(default_factory=dict)

    def lookup(self, dotted: str) -> Optional[SinkSpec]:
        return self.calls.get(dotted)


def _spec(name: str, category: str, raw: Dict[str, Any]) -> SinkSpec:
    return SinkSpec(
        name=name,
        category=category,
        target=tuple(raw.get("target", ())),
        default=raw.get("default", ""),
        lib=raw.get("lib", ""),
        write=bool(raw.get("write", False)),
        mode=tuple(raw.get("mode", ())),
        only_with_target=bool(raw.get("only_with_target", False)),
        only_without_args=bool(raw.get("only_without_args", False)),
        only_with_args=int(raw.get("only_with_args", 0)),
        methods=tuple(raw.get("methods", ())),
        method_target=tuple(raw.get("method_target", (0, "url"))),
        extra_methods=tuple((k, tuple(v)) for k, v in sorted(raw.get("extra_methods", {}).items())),
        distinctive=bool(raw.get("distinctive", False)),
        variable=str(raw.get("variable", "")),
    )


def load(config: Optional[Config] = None) -> Catalogue:
    """The packaged catalogue plus ``[tool.hermetic.sinks]`` additions, minus ``remove``.
    A configured sink's target is its first argument (contract section 6)."""
    from importlib import resources

    text = resources.files("hermetic").joinpath("catalogue/sinks.toml").read_text(encoding="utf-8")
    data = tomllib.loads(text)
    cat = Catalogue()
    for category, entries in data.items():
        if category == "invokes":
            cat.invokes = {n: Invoke(n, tuple(r["target"]), int(r["nargs"])) for n, r in entries.items()}
            continue
        for name, raw in entries.items():
            if name == "path_methods":
                for meth, mraw in raw.items():
                    cat.path_methods[meth] = _spec(meth, "file", mraw)
                continue
            cat.calls[name] = _spec(name, category, raw)
    if config is not None:
        for category, names in config.sinks_add.items():
            for name in names:
                cat.calls[name] = SinkSpec(name=name, category=category, target=(0,) if category != "clock" else ())
        for name in config.sinks_remove:
            cat.calls.pop(name, None)
    return cat
