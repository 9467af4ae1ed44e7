"""The sink catalogue (``catalogue/sinks.toml``), extended and trimmed by configuration."""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Any, Dict, FrozenSet, List, Optional, Tuple

from ..config import Config
from .benign import Benign, packaged_benign

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


@dataclass(frozen=True)
class SinkSpec:
    """One catalogue entry: ``name`` is the fully qualified call, ``category`` one of the
    six sink categories; ``target`` the argument positions/keywords holding the target;
    ``write``: the entry says the operation writes (``write = true`` or ``effect = "change"``),
    which V2 reads for paths inside the project; ``effect``: ``"read"`` or ``"change"``, where an
    entry that says nothing takes its category's ``DEFAULT_EFFECT``;
    ``mode``: where an ``open``-like call's mode is, which decides per call (``mode_writes``)."""

    name: str
    category: str
    target: Tuple[Any, ...] = ()
    default: str = ""
    lib: str = ""
    write: bool = False
    mode: Tuple[Any, ...] = ()
    flags: Tuple[Any, ...] = ()   # where an ``os.open``-like call's flags are (``flags_write``)
    only_with_target: bool = False
    only_without_args: bool = False
    only_with_args: int = 0
    methods: Tuple[str, ...] = ()
    method_target: Tuple[Any, ...] = (0, "url")
    extra_methods: Tuple[Tuple[str, Tuple[Any, ...]], ...] = ()
    distinctive: bool = False
    variable: str = ""   # env sinks that read one fixed variable (shutil.which reads PATH)
    effect: str = "read"   # "read" or "change" (``effect_of``): what the severity follows
    # what a file operation returns: "" a file object or a value derived from its target (truthy);
    # "value" a plain answer (a flag, a size, a stat result) that decides no branch by itself
    returns: str = ""
    removes: bool = False   # the operation removes its target (``fsmodel``: nothing is under it after)
    elsewhere: bool = False  # the path it makes is not its target (a path's rename: the source)
    cwd_default: bool = False  # with no target argument the operation acts on the working directory
    makes: str = ""   # what a write leaves at its target: "file", "dir", "nothing" new (chmod); "": not said
    schemes: Tuple[str, ...] = ()   # a URL sink that sends only to these schemes (it raises on another)
    dest: Tuple[Any, ...] = ()   # a path method's argument it writes too (a rename's destination)
    items: bool = False   # the target may be a list or tuple of targets, each one operated on


@dataclass(frozen=True)
class Invoke:
    """A library call that calls one of its arguments (``[invokes]``): the argument at the
    first present of ``target`` (positions, keywords) is called with ``nargs`` arguments."""

    name: str
    target: Tuple[Any, ...]
    nargs: int


@dataclass(frozen=True)
class Handed:
    """A library call that calls the function it is handed (``[handed]``): the argument at the
    first present of ``func`` is called once with an item of the iterable at ``items`` (map),
    with the arguments after it (``rest``: ``submit(fn, *args, **kwargs)``), or with the items
    of the tuple at ``args`` (``Thread(target=f, args=(x,))``). ``returns``: ``results`` (a
    list of what the function returns), ``items`` (the iterable's items: filter) or ``object``."""

    name: str
    func: Tuple[Any, ...]
    items: Tuple[Any, ...] = ()
    args: Tuple[Any, ...] = ()
    rest: bool = False
    returns: str = "object"


@dataclass
class Catalogue:
    calls: Dict[str, SinkSpec] = field(default_factory=dict)
    path_methods: Dict[str, SinkSpec] = field(default_factory=dict)
    handle_methods: Dict[str, SinkSpec] = field(default_factory=dict)   # "zipfile.ZipFile.extractall" -> spec
    invokes: Dict[str, Invoke] = field(default_factory=dict)
    existing: Dict[str, str] = field(default_factory=dict)   # library call -> "file" / "dir" it names
    handed: Dict[str, Handed] = field(default_factory=dict)   # library calls calling the function handed
    records: FrozenSet[str] = frozenset()   # library calls making an object of their keywords
    parses: FrozenSet[str] = frozenset()   # library calls returning what they parse from a file (or path)
    existing_folders: FrozenSet[str] = frozenset()   # folders every POSIX machine has (whole paths)
    raises: Dict[str, str] = field(default_factory=dict)     # library call that never returns -> what it raises
    answers: Dict[str, Any] = field(default_factory=dict)    # "io.StringIO.isatty" -> what it returns
    stream_wrappers: Tuple[str, ...] = ()                    # classes answering as the stream they wrap
    lazy: Dict[str, str] = field(default_factory=dict)       # lazy proxy -> "result" / "function" (``[lazy]``)
    mappings: Dict[str, Tuple[str, ...]] = field(default_factory=dict)   # class -> the keys a new one holds
    answer_methods: frozenset = frozenset()                  # the method names of ``answers`` ("isatty")

    def lookup(self, dotted: str) -> Optional[SinkSpec]:
        return self.calls.get(dotted)


#: what an operation of a category does when its entry does not say (``effect``): a connection,
#: a request and a subprocess can change state outside the test; files are read unless the entry
#: (or the call's mode) says it writes; environment and clock sinks only read
DEFAULT_EFFECT: Dict[str, str] = {"connection": "change", "network": "change", "subprocess": "change",
                                  "file": "read", "env": "read", "clock": "read"}


def effect_of(category: str, raw: Dict[str, Any]) -> str:
    """``"change"`` or ``"read"``: the entry's ``effect`` (or ``write = true``), else the
    category's default. Raises ValueError for another ``effect``."""
    effect = raw.get("effect")
    if effect is None:
        return "change" if raw.get("write") else DEFAULT_EFFECT.get(category, "change")
    if effect not in ("read", "change"):
        raise ValueError(f"sink effect {effect!r}: expected \"read\" or \"change\"")
    return effect


def mode_writes(mode: Any, unknown: bool = True) -> bool:
    """Whether an ``open``-like call writes, from its mode argument's value (an analysed value,
    None when the call gives no mode: the read default). A mode whose every alternative is a
    string literal writes when one holds ``w``, ``a``, ``x`` or ``+``; a mode the analysis
    cannot read gives ``unknown``: it may write, and severity counts it as a change, while the
    verdict (a read of shipped data is controlled) keeps judging it as the read it was."""
    if mode is None:
        return False
    texts = mode_texts(mode)
    return unknown if texts is None else any(c in t for t in texts for c in "wax+")


# the os.open flags that make the call change the file system (create, truncate, write)
_WRITE_FLAGS = sum(getattr(os, n, 0) for n in ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND", "O_EXCL"))


def flags_write(values: Optional[list]) -> Optional[bool]:
    """Whether ``os.open`` with these flag values (the running Python's ``os.O_*`` numbers, as
    the analysis computed them) writes: None when a value is not a known integer."""
    if not values or any(type(v) is not int for v in values):
        return None
    return any(v & _WRITE_FLAGS for v in values)


def mode_texts(value: Any) -> Optional[List[str]]:
    """Every string an analysed value can be, when each alternative is a string literal, or a
    constant or default argument bound to one; else None. (Read through the value's ``atoms``:
    the catalogue does not import the analysis.)"""
    out = []
    for a in getattr(value, "atoms", ()):
        seen = 0
        while getattr(a, "kind", None) in ("module-constant", "default-argument") and len(a.inner) == 1 and seen < 100:
            a, seen = a.inner[0], seen + 1
        if getattr(a, "kind", None) != "literal" or a.expr[:1] not in ("'", '"') or not isinstance(a.value, str):
            return None
        out.append(a.value)
    return out or None


def _spec(name: str, category: str, raw: Dict[str, Any]) -> SinkSpec:
    return SinkSpec(
        name=name,
        category=category,
        target=tuple(raw.get("target", ())),
        default=raw.get("default", ""),
        lib=raw.get("lib", ""),
        write=bool(raw.get("write")) or raw.get("effect") == "change",
        effect=effect_of(category, raw),
        mode=tuple(raw.get("mode", ())),
        flags=tuple(raw.get("flags", ())),
        only_with_target=bool(raw.get("only_with_target", False)),
        only_without_args=bool(raw.get("only_without_args", False)),
        only_with_args=int(raw.get("only_with_args", 0)),
        methods=tuple(raw.get("methods", ())),
        method_target=tuple(raw.get("method_target", (0, "url"))),
        extra_methods=tuple((k, tuple(v)) for k, v in sorted(raw.get("extra_methods", {}).items())),
        distinctive=bool(raw.get("distinctive", False)),
        variable=str(raw.get("variable", "")),
        returns=str(raw.get("returns", "")),
        removes=bool(raw.get("removes", False)),
        elsewhere=bool(raw.get("elsewhere", False)),
        cwd_default=bool(raw.get("cwd_default", False)),
        items=bool(raw.get("items", False)),
        makes=str(raw.get("makes", "")),
        schemes=tuple(str(x).lower() for x in raw.get("schemes", ())),
        dest=tuple(raw.get("dest", ())),
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
        if category == "existing":
            cat.existing = {n: str(kind) for n, kind in entries.items()}
            continue
        if category == "handed":
            cat.handed = {n: Handed(n, tuple(r["func"]), tuple(r.get("items", ())), tuple(r.get("args", ())),
                                    bool(r.get("rest", False)), str(r.get("returns", "object")))
                          for n, r in entries.items()}
            continue
        if category == "records":
            cat.records = frozenset(n for n, on in entries.items() if on)
            continue
        if category == "parses":
            cat.parses = frozenset(n for n, on in entries.items() if on)
            continue
        if category == "existing-folders":
            cat.existing_folders = frozenset(n for n, on in entries.items() if on)
            continue
        if category == "raises":
            cat.raises = {n: str(exc) for n, exc in entries.items()}
            continue
        if category == "answers":
            cat.answers = dict(entries)
            cat.answer_methods = frozenset(k.rsplit(".", 1)[-1] for k in entries)
            continue
        if category == "stream-wrappers":
            cat.stream_wrappers = tuple(n for n, on in entries.items() if on)
            continue
        if category == "lazy":
            cat.lazy = {n: str(kind) for n, kind in entries.items()}
            continue
        if category == "mappings":
            cat.mappings = {n: tuple(str(k) for k in keys) for n, keys in entries.items()}
            continue
        for name, raw in entries.items():
            if name == "path_methods":
                for meth, mraw in raw.items():
                    cat.path_methods[meth] = _spec(meth, "file", mraw)
                continue
            if name == "handle_methods":
                for meth, mraw in raw.items():
                    cat.handle_methods[meth] = _spec(meth, "file", mraw)
                continue
            cat.calls[name] = _spec(name, category, raw)
    if config is not None:
        for category, names in config.sinks_add.items():
            for name in names:
                cat.calls[name] = SinkSpec(name=name, category=category, target=(0,) if category != "clock" else (),
                                           effect=DEFAULT_EFFECT[category])
        for name in config.sinks_remove:
            cat.calls.pop(name, None)
    return cat


def load_benign(config: Optional[Config] = None) -> Benign:
    """The packaged benign list (``catalogue.benign``) plus ``[tool.hermetic.benign] env``,
    minus its ``remove``."""
    packaged = packaged_benign()
    if config is None:
        return packaged
    names = (set(packaged.env) | set(config.benign_env)) - set(config.benign_remove)
    return Benign(frozenset(names), packaged.durations)
