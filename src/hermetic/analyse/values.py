"""Abstract values and origins: what the interpreter knows about a value.

A value (``V``) is a set of atoms. Data atoms are ``Origin`` objects: where the value came
from (a literal, a module constant, the environment, ``tmp_path`` ...). Reference atoms are
tuples naming a project module, function, class or instance, an external (library) name,
a client built by a catalogue constructor, a test double or a patcher.

Whether an origin is *controlled* depends on the operation that uses it (contract
section 2): ``classify`` decides that for one origin and one sink.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, fields
from typing import Dict, FrozenSet, Iterable, Optional, Tuple
from urllib.parse import urlsplit

CONTROLLED, UNCONTROLLED, UNKNOWN = "controlled", "uncontrolled", "unknown"


@dataclass(frozen=True)
class Origin:
    """Where a data value came from.

    kind: one of the contract's origin kinds (``literal``, ``module-constant``,
    ``environment``, ``home``, ``cwd``, ``clock``, ``default-argument``,
    ``library-default``, ``singleton``, ``test-value``, ``unknown``) or the internal
    ``project-file`` (a path built from ``__file__``, contract row V2).
    expr: short source text of the binding (a constant's name, a variable, a literal).
    value: a literal's text (for literals; the leading part of an f-string or join).
    in_test: the literal was written in test code (contract rows T1/V1).
    partial: the value is a string built from this origin and other parts (``"report" + kind``,
    ``f"/srv/{name}"``): ``value`` is its leading part only.
    inner: for ``module-constant`` / ``default-argument``, the origins the binding was
    computed from.
    """

    kind: str
    expr: str = ""
    path: Optional[str] = None
    line: Optional[int] = None
    value: Optional[str] = None
    in_test: bool = False
    inner: Tuple["Origin", ...] = ()
    module: Optional[str] = None   # module-constant: the module that binds it
    room: Optional[int] = None     # project-file: `.parent` steps left before the path leaves the
    #                                project root (negative: it has left); None: not known
    partial: bool = False          # literal / module-constant: a string built from it and other parts,
    #                                so ``value`` is only its leading part (decides no equality)

    def __hash__(self) -> int:
        # cached: a constant derived from a chain of constants nests its origins as deep as the
        # chain, and hashing the whole chain again at every level made a long chain cubic (a
        # module of 5,000 `P{i+1} = P{i} + "/d"` lines ran for minutes)
        h = self.__dict__.get("_hash")
        if h is None:
            h = hash(tuple([getattr(self, f) for f in _ORIGIN_FIELDS]))
            object.__setattr__(self, "_hash", h)   # not a field: equality ignores it
        return h

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_hash", None)   # it follows string hashing, which differs per process
        return state


_ORIGIN_FIELDS = tuple(f.name for f in fields(Origin))


class V:
    """An abstract value: a set of atoms; ``is_path`` when it is known to be a path object.

    Immutable by convention; a plain slotted class rather than a frozen dataclass because the
    interpreter makes hundreds of thousands of them per run (the frozen ``__init__`` and an
    uncached ``__hash__`` were a tenth of the analysis time).
    """

    __slots__ = ("atoms", "is_path", "_hash", "_order", "_skey", "_insts", "_cm", "_lams", "_shape")

    def __init__(self, atoms: FrozenSet = frozenset(), is_path: bool = False) -> None:
        self.atoms = atoms
        self.is_path = is_path
        self._hash: Optional[int] = None
        self._order: Optional[tuple] = None
        self._skey: Optional[tuple] = None
        self._insts: Optional[tuple] = None
        self._cm = False
        self._lams: tuple = ()
        self._shape: Optional[int] = None

    def __reduce__(self):
        # the cached hashes follow string hashing, which differs per process: not pickled
        return (V, (self.atoms, self.is_path))

    def __eq__(self, other) -> bool:
        return isinstance(other, V) and self.is_path == other.is_path and self.atoms == other.atoms

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = self._hash = hash((self.atoms, self.is_path))
        return h

    def __repr__(self) -> str:
        return f"V(atoms={self.atoms!r}, is_path={self.is_path!r})"

    def __or__(self, other: "V") -> "V":
        if not other.atoms:
            return self if self.is_path == (self.is_path or other.is_path) else V(self.atoms, True)
        if not self.atoms:
            return other if (other.is_path or not self.is_path) else V(other.atoms, True)
        return V(self.atoms | other.atoms, self.is_path or other.is_path)

    def without(self, atom) -> "V":
        """This value less one atom (itself when it does not hold it)."""
        return V(self.atoms - {atom}, self.is_path) if atom in self.atoms else self

    def ordered(self) -> tuple:
        """The atoms in one order that every process agrees on (``stable_key``).

        The interpreter evaluates alternatives in this order: a frozenset's own order follows
        string hashing, which varies per process, and where a test reaches its step budget the
        order decides what was evaluated before the cut.
        """
        o = self._order
        if o is None:
            atoms = self.atoms
            o = self._order = tuple(atoms) if len(atoms) < 2 else tuple(sorted(atoms, key=stable_key))
        return o

    def origins(self) -> Iterable[Origin]:
        return (a for a in self.ordered() if isinstance(a, Origin))

    def refs(self) -> Iterable[tuple]:
        return (a for a in self.ordered() if isinstance(a, tuple))

    def instances(self) -> tuple:
        """Ids of the instances this value holds, anywhere inside its atoms (lists, dicts, bound
        methods, partials ...), in the order of ``ordered()`` (cached)."""
        out = self._insts
        if out is None:
            found: list = []
            more = [False, ()]
            for a in self.ordered():
                if type(a) is tuple:
                    _atom_ids(a, found, more)
            out = self._insts = tuple(found)
            self._cm, self._lams = more
        return out

    def cms(self) -> bool:
        """Whether a context manager's state number (a ``ctxfactory`` atom) is inside (cached)."""
        if self._insts is None:
            self.instances()
        return self._cm

    def lambdas(self) -> tuple:
        """Numbers of the lambdas inside (``lambda`` atoms, also in lists and bound values)."""
        if self._insts is None:
            self.instances()
        return self._lams

    def shape(self) -> int:
        """A hash of the value with instance ids left out (cached): two values with equal shapes
        and equal ``instances()`` are equal (hash collisions aside, as for the memo's other keys)."""
        sh = self._shape
        if sh is None:
            if not self.instances():
                sh = hash(self)
            else:
                sh = hash((tuple(_blank(a) for a in self.ordered()), self.is_path))
            self._shape = sh
        return sh

    def with_path(self, flag: bool = True) -> "V":
        return V(self.atoms, flag)


EMPTY = V()


def _atom_ids(a: tuple, found: list, more: list) -> None:
    """Instance ids (``inst`` and ``testcase`` atoms) inside the atom ``a``, into ``found``;
    ``more[0]`` set when a ``ctxfactory`` atom is inside, lambda numbers added to ``more[1]``."""
    if not a:
        return
    head = a[0]
    if (head == "inst" or head == "testcase") and len(a) == 2 and type(a[1]) is int:
        found.append(a[1])
        return
    if head == "ctxfactory":
        more[0] = True
    elif head == "lambda" and len(a) == 2:
        more[1] = more[1] + (a[1],)
    for x in a:
        t = type(x)
        if t is V:
            found.extend(x.instances())
            if x._cm:
                more[0] = True
            if x._lams:
                more[1] = more[1] + x._lams
        elif t is tuple:
            _atom_ids(x, found, more)


def _blank(a):
    """An atom (or a part of one) with instance ids left out, values replaced by their shapes."""
    t = type(a)
    if t is tuple:
        if a and (a[0] == "inst" or a[0] == "testcase") and len(a) == 2 and type(a[1]) is int:
            return (a[0],)
        return tuple(_blank(x) for x in a)
    if t is V:
        return ("V", a.shape())
    return a


# the keys of tuple atoms (a dict known by its entries holds many): a tuple cannot carry its own,
# and a dict filled in a loop is sorted again with every entry added (rq's workers: 14 s a test)
_TUPLE_KEYS: Dict[tuple, tuple] = {}
_TUPLE_KEYS_LIMIT = 100_000


def stable_key(x) -> tuple:
    """A sort key for atoms and what they hold, the same in every process: no hash, no id.

    Shape: a tuple whose first item is a type tag, so keys of different types compare by the
    tag alone. Keys of values and origins are cached on the object.
    """
    if isinstance(x, str):
        return (1, x)
    if x is None:
        return (0,)
    if isinstance(x, V):
        k = x._skey
        if k is None:
            k = x._skey = (5, x.is_path, tuple(stable_key(a) for a in x.ordered()))
        return k
    if isinstance(x, tuple):
        k = _TUPLE_KEYS.get(x)
        if k is None:
            if len(_TUPLE_KEYS) > _TUPLE_KEYS_LIMIT:
                _TUPLE_KEYS.clear()   # bounded: recomputed rather than grown
            k = _TUPLE_KEYS[x] = (4, tuple(stable_key(i) for i in x))
        return k
    if isinstance(x, Origin):
        k = x.__dict__.get("_skey")
        if k is None:
            k = (6,) + tuple(stable_key(getattr(x, f)) for f in _ORIGIN_FIELDS)
            object.__setattr__(x, "_skey", k)   # not a field: equality and hash ignore it
        return k
    if isinstance(x, bool):
        return (2, x)
    if isinstance(x, (int, float)):
        return (3, x)
    if isinstance(x, (frozenset, set)):
        return (7, tuple(sorted(stable_key(i) for i in x)))
    if isinstance(x, dict):
        return (8, tuple(sorted((stable_key(k), stable_key(v)) for k, v in x.items())))
    return (9, type(x).__name__, repr(x))


def of(*atoms, is_path: bool = False) -> V:
    return V(frozenset(atoms), is_path)


def union(values: Iterable[V]) -> V:
    out = EMPTY
    for v in values:
        out = out | v
    return out


UNKNOWN_V = of(Origin("unknown"))
DOUBLE = ("double",)
DOUBLE_V = of(DOUBLE)
# ("seq", kind, items) holds the items a list, tuple or set may have (a comprehension's is one
# item for all of them). A tuple may carry a mark loops trust: ("seq", "tuple", items, NONEMPTY)
# holds at least one item for certain (a display with an item of its own), ("seq", "tuple",
# items, EXACT) exactly these items, none too (a display with no part spread from a value known
# less well, click's values). A list or set can be emptied or filled in place: a list display
# carries COUNTED (exactly these items when it was made) until the function that holds it
# changes it in place (``Statements._forget_members``); a loop over it and a comprehension of it
# run then as over a tuple's, as a truth test already takes it (a change made through another
# name, an attribute or a function it was handed to is not seen: docs/limits.md). A list a
# comprehension made is MAYBE_EMPTY where its filter or its iterable may leave it with no item:
# its truth is not known (``[p for p in paths if p.exists()]``).
WHOLE = "whole"   # the dict mark: every key is known (``contents``: json.loads of a literal)
NONEMPTY, EXACT, COUNTED, MAYBE_EMPTY = "nonempty", "exact", "counted", "maybe-empty"
# ("seq", "tuple", items, PREFIX): the items but the last are its first items, in order; the last
# stands for any number of further ones (``p.parents`` of a path in tmp_path: its folders there,
# then those above tmp_path, a number not known)
PREFIX = "prefix"


def seq_atom(kind: str, items, nonempty: bool = False, exact: bool = False) -> tuple:
    """A sequence atom with its mark (see above)."""
    items = tuple(items)
    if exact:
        return ("seq", kind, items, EXACT if kind == "tuple" else COUNTED)
    return ("seq", kind, items, NONEMPTY) if kind == "tuple" and nonempty and items else ("seq", kind, items)


def holds_item(a) -> bool:
    """Atom ``a`` is a tuple, or a list display as made, known to hold an item."""
    return isinstance(a, tuple) and a[0] == "seq" and len(a) > 3 and (
        a[3] in (NONEMPTY, EXACT, COUNTED) and bool(a[2]) or a[3] == PREFIX and len(a[2]) > 1)


def is_prefix(a) -> bool:
    """Atom ``a`` is a tuple known by its first items (``PREFIX``)."""
    return isinstance(a, tuple) and a[0] == "seq" and len(a) > 3 and a[3] == PREFIX


def surely_nonempty(v: V) -> bool:
    """Every alternative of ``v`` is a tuple known to hold an item (a loop over it runs)."""
    return bool(v.atoms) and all(holds_item(a) for a in v.atoms)


def surely_empty(v: V) -> bool:
    """Every alternative of ``v`` is a tuple known to be empty (a loop over it never runs)."""
    return bool(v.atoms) and all(is_exact(a) and not a[2] for a in v.atoms)


def is_exact(a) -> bool:
    return isinstance(a, tuple) and a[0] == "seq" and len(a) > 3 and a[3] == EXACT


def is_counted(a) -> bool:
    """Atom ``a`` is a sequence of exactly its items as made (a tuple, or a list as written)."""
    return isinstance(a, tuple) and a[0] == "seq" and len(a) > 3 and a[3] in (EXACT, COUNTED)


# what a call returns when every way through the function the test's values take raises: the
# calling statement raises too (``Calls.apply`` turns it into ``Interp.call_raised``)
RAISED = ("raised",)
RAISED_V = of(RAISED)


# the ``value`` of an unknown origin that is an instance of a library class, then the class's
# dotted name ("instance io.StringIO")
INSTANCE = "instance "
# the ``value`` of an unknown origin that names a file or folder a library ships ("existing file",
# "existing dir"): which one is unknown, that it exists is not (catalogue ``[existing]``)
EXISTING = "existing "
# the ``value`` of an unknown origin that is data a library parsed from a file the machine holds
# (the user's configuration in the home folder, a file an environment variable names: catalogue
# ``[parses]``): what it holds is the machine's, never one of the test's own strings (docs/limits.md)
MACHINE_DATA = "machine data"
MACHINE_DATA_V = of(Origin("unknown", expr="parsed data", value=MACHINE_DATA))
EXISTS_QUESTIONS = {"exists": None, "lexists": None, "isfile": "file", "is_file": "file", "isdir": "dir",
                     "is_dir": "dir"}


def instance_class(a) -> Optional[str]:
    """The dotted class of atom ``a`` when it is an instance of a library class, else None."""
    return _marked(a, INSTANCE)


def machine_data(a) -> bool:
    """Atom ``a`` is data parsed from a file of the machine's (``MACHINE_DATA``)."""
    return isinstance(a, Origin) and a.kind == "unknown" and a.value == MACHINE_DATA


_MACHINE_KINDS = ("home", "environment")


def from_machine(v: V, handles: bool = False) -> bool:
    """Every alternative of path ``v`` is the machine's: from the home folder or an environment
    variable, directly or through module constants and default arguments computed from them
    (``USER_CONFIG = os.path.expanduser("~/.toolrc")``); with ``handles``, also a handle ``open``
    gave for such a path (``sinks``: what a parser of catalogue ``[parses]`` is handed)."""
    return bool(v.atoms) and all(_machine_origin(a) if isinstance(a, Origin)
                                 else handles and a[:1] == ("handle",) and a[2:] == ("machine",) for a in v.atoms)


def _machine_origin(o: Origin) -> bool:
    if o.kind in _MACHINE_KINDS:
        return True
    return o.kind in ("module-constant", "default-argument") and bool(o.inner) and all(
        _machine_origin(i) for i in o.inner)


def shipped(a) -> Optional[str]:
    """``"file"`` / ``"dir"`` when atom ``a`` names a file or folder a library ships, else None."""
    return _marked(a, EXISTING)


def _marked(a, mark: str) -> Optional[str]:
    if isinstance(a, Origin) and a.kind == "unknown" and a.value and a.value.startswith(mark):
        return a.value[len(mark):]
    return None


def exists_question(call: str) -> bool:
    """Whether ``call`` (a dotted name) asks whether a path exists (``os.path.exists``,
    ``Path.is_file`` ...)."""
    return call.rsplit(".", 1)[-1] in EXISTS_QUESTIONS


def exists_answer(call: str, target: Optional[V]) -> Optional[bool]:
    """The answer of an existence question (``os.path.exists``, ``Path.is_file`` ...: ``call``
    is its dotted name) about ``target`` when every atom names a shipped file or folder; else None."""
    question = call.rsplit(".", 1)[-1]
    if question not in EXISTS_QUESTIONS or target is None or not target.atoms:
        return None
    wanted = EXISTS_QUESTIONS[question]
    answers = set()
    for a in target.atoms:
        kind = shipped(a)
        if kind is None:
            return None
        answers.add(wanted is None or kind == wanted)
    return answers.pop() if len(answers) == 1 else None


_LITERALS: Dict[tuple, V] = {}
LITERALS_LIMIT = 20_000   # each entry costs about 700 bytes; Django's run made 155,000 (100 MiB)


def lit(value, path: Optional[str], line: Optional[int], in_test: bool) -> V:
    """A literal's value (interned: the same literal at the same place is one object)."""
    key = (type(value), value, path, line, in_test)
    try:
        v = _LITERALS.get(key)
    except TypeError:   # an unhashable constant: not interned
        key, v = None, None
    if v is None:
        if len(_LITERALS) > LITERALS_LIMIT:
            _LITERALS.clear()
        text = value if isinstance(value, str) else repr(value)
        v = of(Origin("literal", expr=_short(repr(value)), path=path, line=line, value=text, in_test=in_test))
        if key is not None:
            _LITERALS[key] = v
    return v


def _short(text: str, n: int = 60) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."


# -- classification ---------------------------------------------------------------------

# (SQLAlchemy's pysqlite dialect opens ":memory:" for a URL with no database: "sqlite:///" too)
_MEMORY = {":memory:", "sqlite://", "sqlite:///", "sqlite:///:memory:", "sqlite+pysqlite://", "sqlite+pysqlite:///",
           "sqlite+pysqlite:///:memory:", "sqlite+aiosqlite://", "sqlite+aiosqlite:///", "sqlite+aiosqlite:///:memory:",
           "duckdb:///:memory:", "memory://", "mem://"}
_LOOPBACK_HOSTS = {"localhost", "127.0.0.1", "::1", "[::1]", "0.0.0.0", "ip6-localhost"}


def from_call(o: Origin) -> bool:
    """A literal a library call gives (``tempfile.gettempdir()`` -> '/tmp'): named by the call."""
    return o.kind == "literal" and o.expr.endswith("()")


def is_memory(text: str) -> bool:
    t = text.strip()
    return t in _MEMORY or t.startswith("file::memory:") or "mode=memory" in t or t.endswith(":///:memory:")


def host_of(text: str) -> Optional[str]:
    t = text.strip()
    if "://" in t:
        try:
            return (urlsplit(t).hostname or "").lower() or None
        except ValueError:
            return None
    m = re.match(r"^([A-Za-z0-9_.\-\[\]:]+?)(?::\d+)?(?:/|$)", t)
    if m and "." in m.group(1) or (m and m.group(1).lower() in _LOOPBACK_HOSTS):
        return m.group(1).lower()
    return None


def is_loopback(text: str) -> bool:
    h = host_of(text)
    if h is None:
        h = text.strip().lower()
    h = h.strip("[]")
    return h in _LOOPBACK_HOSTS or h.startswith("127.") or h == "::1"


def classify(o: Origin, category: str, write: bool, ctl: "SinkContext") -> str:
    """Decide one origin for one sink (contract section 2). ``ctl`` carries what the
    test controls at that moment (chdir, fakes) and the configuration."""
    k = o.kind
    if k == "test-value":
        return CONTROLLED
    if k == "literal" and o.expr in ("None", "True", "False"):
        return UNKNOWN  # not a target a call would accept: that path is not taken
    if k == "unknown":
        return UNKNOWN
    if k == "project-file":
        if category == "file" and ctl.fs_fake:
            return CONTROLLED
        if o.room is not None and o.room < 0:
            return UNCONTROLLED   # above the project root: not shipped with the code (row X)
        # V2: a database connection to a file in the tree writes it
        return UNCONTROLLED if write or category == "connection" else CONTROLLED
    if k in ("module-constant", "default-argument"):
        if not o.inner:
            return UNKNOWN
        verdicts = {classify(i, category, write, ctl) for i in o.inner}
        if UNCONTROLLED in verdicts:
            return UNCONTROLLED
        if UNKNOWN in verdicts:
            return UNKNOWN
        return CONTROLLED
    if k == "cwd":
        if o.inner:   # abspath("data/x"): as the relative path it was made from
            return classify(o.inner[0], category, write, ctl)
        return CONTROLLED if ctl.cwd_controlled else UNCONTROLLED
    if k == "literal":
        return _classify_literal(o, category, write, ctl)
    if k == "home" and category == "file" and ctl.fs_fake:
        return CONTROLLED
    return UNCONTROLLED


def _classify_literal(o: Origin, category: str, write: bool, ctl: "SinkContext") -> str:
    text = o.value or ""
    if category == "subprocess":
        return CONTROLLED if o.in_test else UNCONTROLLED
    if category in ("connection", "network"):
        if is_memory(text):
            return CONTROLLED
        if is_loopback(text):
            return CONTROLLED if (o.in_test or ctl.loopback) else UNCONTROLLED
        if category == "connection" and not ("://" in text or "=" in text):
            return _classify_path_literal(text, o, True, ctl)
        return UNCONTROLLED
    if category == "file":
        if ctl.fs_fake:
            return CONTROLLED
        # a device named whole, or as the head of a longer value: ``Path("/dev/null")`` keeps only
        # the head, and nothing longer that starts so is a path a program writes
        if text in _STATELESS_DEVICES or text.startswith("/dev/fd/"):
            return CONTROLLED
        return _classify_path_literal(text, o, write, ctl)
    return UNCONTROLLED


# devices that keep no state between opens and share none between tests: what a test writes
# there is gone, what it reads does not depend on another test (docs/limits.md)
_STATELESS_DEVICES = frozenset({"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
                                "/dev/stdin", "/dev/stdout", "/dev/stderr"})


def anchored_path(text: str) -> bool:
    """A path text that does not hang off the working directory: absolute (POSIX, a Windows
    drive or UNC share) or under the home folder (``~``)."""
    return text.startswith(("/", "~", "\\\\")) or re.match(r"^[A-Za-z]:[\\/]", text) is not None


def _classify_path_literal(text: str, o: Origin, write: bool, ctl: "SinkContext") -> str:
    if anchored_path(text):
        return UNCONTROLLED
    # a working-directory-relative path
    if ctl.cwd_controlled:
        return CONTROLLED
    if ctl.cwd_origins:
        # relative to a folder the code changed into: as controlled as that folder
        inner = SinkContext(fs_fake=ctl.fs_fake, loopback=ctl.loopback)
        verdicts = {classify(c, "file", write, inner) for c in ctl.cwd_origins}
        if verdicts == {CONTROLLED}:
            return CONTROLLED
        if UNCONTROLLED not in verdicts:
            return UNKNOWN   # relative to a folder whose origin the analysis cannot see (row U)
    if o.in_test and not write:
        return CONTROLLED  # a read of data shipped with the tests (T1)
    return UNCONTROLLED


@dataclass
class SinkContext:
    """What decides literals and working-directory paths at one sink."""

    cwd_controlled: bool = False
    fs_fake: bool = False
    loopback: bool = False
    cwd_origins: Optional[Tuple[Origin, ...]] = None   # where the code chdir'ed to, if it did


def opened(v: V, depth: int = 0) -> V:
    """``v`` with an unknown entry added to each dict and list in it, to a few levels down."""
    if depth > 4 or not any(isinstance(a, tuple) and a[0] in ("seq", "dict") for a in v.atoms):
        return v
    atoms = []
    for a in v.atoms:
        if isinstance(a, tuple) and a[0] == "seq":
            a = ("seq", a[1], tuple(opened(x, depth + 1) for x in a[2]) + (UNKNOWN_V,))
        elif isinstance(a, tuple) and a[0] == "dict":
            a = ("dict", tuple((k, opened(x, depth + 1)) for k, x in a[1]) + ((None, UNKNOWN_V),))
        atoms.append(a)
    return V(frozenset(atoms), v.is_path)
