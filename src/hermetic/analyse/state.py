"""The interpreter's records: a call's ``Frame``, a reached ``SinkEvent``, the control
state ``Ctx`` (the substitutes a test installed), and a memo entry (``_MemoEntry`` with its
``_Effects``). Plain data: no interpretation happens here.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, NamedTuple, Optional, Tuple

from .values import EMPTY, Origin, V


DELETED = ("deleted",)
SPREAD = "**"   # the keyword of a call's **mapping whose keys are not known


# the statements that hold no others (their line is the interpreter's frame line once they ran)
SIMPLE_STATEMENTS = frozenset({"assign", "expr", "return", "augassign", "raise"})
# the statements whose run the interpreter records (``Interp.fx_hits``): a `del` changes state too
FX_STATEMENTS = SIMPLE_STATEMENTS | {"del"}

@dataclass
class Frame:
    module: str
    path: str
    name: str
    line: int = 0
    locals: Dict[str, V] = field(default_factory=dict)
    in_test: bool = False
    cls: Optional[str] = None          # the class a method was defined in (for super())
    returns: V = EMPTY
    yields: V = EMPTY
    is_module: bool = False
    globals_decl: Tuple[str, ...] = ()
    yield_ctx: Optional["Ctx"] = None   # fixtures: the control state at the yield
    undo0: int = -1                     # a generator: the shared-state log's length at its call,
    yield_undo: int = -1                # ... and at its first yield,
    yield_writes: tuple = ()            # ... and the cells it had written by then, as they were
    fx_lines: Optional[dict] = None   # a project function's: line -> the process states its statement there changes
    step0: int = 0                      # the run's step count when the frame was entered (its budget)
    returned: bool = False              # a `return` ran on some way (so not every way raises)
    decided: int = 0                    # > 0 inside a branch the values (not the platform) decided
    holds: bool = False                 # locals hold "name.attr" entries (``Statements.assign``)
    loops: list = field(default_factory=list)   # the running loops' ``loops.LoopExits``, innermost last
    stmt: int = 0                       # a module's: the first line of the statement running


@dataclass
class SinkEvent:
    """One I/O operation reached, with its verdict under the control state of that moment."""

    category: str
    path: str
    pos: Tuple[int, int, int, int]
    call: str                  # display name of the operation (e.g. "sqlite3.connect")
    verdict: str               # controlled / uncontrolled / unknown
    origin: Optional[Origin]   # the first uncontrolled (or unknown) origin
    trace: Tuple[Tuple[str, int, str], ...]
    import_time: bool = False
    module: str = ""           # for import-time events: the module whose import runs it
    target: str = ""           # short text of the target (a literal or the origin's expression)
    write: bool = False
    targets: Tuple[Origin, ...] = ()   # file operations: every origin of the target (HT201)
    missed: bool = False       # reached through a binding a patch misses: reported as HT205
    reason: str = ""           # what controls it (for the inventory)
    via_fixture: bool = False  # reached in a fixture: the trace's first step is the requesting test
    undecided: bool = False    # reached through a branch the values do not decide (confidence medium)
    several: bool = False      # the target is one of several alternatives (confidence medium)
    may_write: bool = False    # writes, or an open whose mode the analysis cannot read (severity: a change)
    # import time: (path, line) of the module-level statement running (its first line: a read
    # in a value spanning lines is still that binding's)
    binding: Tuple[str, int] = ()


# the ``Ctx.env`` key meaning "variables the analysis cannot name were set" (a write with a
# computed key, ``os.environ.update(mapping)``, ``dotenv.load_dotenv``): a later read of a
# variable the test did not name may read one of them, so its origin is unknown (row U)
ANY_VARIABLE = "*"


def unset_way(name: str) -> "Origin":
    """The origin a variable the test set on some ways only has on the others: the machine's
    own value (``Ctx.env``; a read of it is uncontrolled there)."""
    return Origin("environment", expr=name, value="unset-way")


def set_on_some_ways(val: V, name: str) -> Optional[V]:
    """``val`` (``Ctx.env[name]``) less its ``unset_way`` mark, when it has one; else None."""
    if not any(isinstance(a, Origin) and a.value == "unset-way" and a.expr == name for a in val.atoms):
        return None
    return V(frozenset(a for a in val.atoms if not (isinstance(a, Origin) and a.value == "unset-way")), val.is_path)
SYS_MODULES = ("ext", "sys.modules")   # patches of its entries: (SYS_MODULES, module name) -> value


@dataclass
class Ctx:
    """The substitutes active at a point of a test: patched bindings (S1), environment
    (S2), a frozen clock (S3), network mocks (S4), a fake subprocess (S5) or file
    system (S6), and the working directory."""

    patches: Dict[Tuple[Any, str], V] = field(default_factory=dict)
    sites: Dict[Any, tuple] = field(default_factory=dict)   # where each substitute was installed
    env: Dict[str, Any] = field(default_factory=dict)
    env_all: bool = False
    frozen: bool = False
    net: frozenset = frozenset()
    subprocess_fake: bool = False
    fs_fake: bool = False
    cwd: Optional[V] = None
    # what each monkeypatch change replaced, oldest first: (store, key, had, old) with store one
    # of "patches", "sites", "env", "cwd"; ``monkeypatch.undo()`` puts them back
    mp_log: tuple = ()
    mp_key: int = 0   # ``_log_key(mp_log)``, kept with it: ``key`` runs at every call
    # the sites of test doubles given a side effect after they were made (``m.side_effect = E``);
    # ANY_VARIABLE: one without a site was, so any double may raise from then on
    raising: frozenset = frozenset()
    # what those doubles raise where the test gave an instance (``m.side_effect = exc``):
    # ((site, value), ...), one per site, read by the handler that catches it (``exc.errno``)
    effects: tuple = ()
    # paths the run removed for certain, and those it wrote since (``fsmodel``)
    fs_gone: tuple = ()
    fs_made: tuple = ()
    tmp_tree: tuple = ()   # what the run made in its own tmp_path (``tmptree``)
    tmp_text: tuple = ()   # ... and the texts the test wrote there (``contents``)
    # the run wrote where the analysis cannot name, or ran a program: a path the checkout does
    # not hold may be there now (``shipped``); and the paths it named in writes outside tmp_path
    tree_changed: bool = False
    tree_made: tuple = ()
    # the test set an attribute on a double (``m.return_value = ...``, ``m.keys.return_value``):
    # what a double iterates or holds is no longer MagicMock's default (``controls.mock_items``)
    doubles_set: bool = False
    # what doubles made at a site return since the test set it (``m.return_value = v``):
    # ((site, value), ...), one per site (``handlers.returns_given``)
    returns: tuple = ()

    def copy(self) -> "Ctx":
        return Ctx(dict(self.patches), dict(self.sites), dict(self.env), self.env_all, self.frozen, self.net,
                   self.subprocess_fake, self.fs_fake, self.cwd, self.mp_log, self.mp_key, self.raising,
                   self.effects, self.fs_gone, self.fs_made, self.tmp_tree, self.tmp_text, self.tree_changed,
                   self.tree_made, self.doubles_set, self.returns)

    def keep_lasting(self, now: "Ctx") -> None:
        """Take from ``now`` (the state a block ended in) what outlives the block: doubles' side
        effects and the file system as the run left it; patches end with the block."""
        self.raising, self.effects, self.doubles_set = now.raising, now.effects, now.doubles_set
        self.returns = now.returns
        self.fs_gone, self.fs_made, self.tmp_tree, self.tmp_text = now.fs_gone, now.fs_made, now.tmp_tree, now.tmp_text
        self.tree_changed, self.tree_made = now.tree_changed, now.tree_made

    def set_log(self, log: tuple) -> None:
        self.mp_log, self.mp_key = log, _log_key(log) if log else 0

    def key(self) -> tuple:
        # sites (where a substitute was installed) are not part of the key: replayed HT202/HT205
        # candidates are re-anchored at the current test's sites
        p, e = self.patches, self.env
        return (tuple(sorted(((repr(k), hash(v)) for k, v in p.items()))) if p else (),
                tuple(sorted((k, repr(v) if v is DELETED else hash(v)) for k, v in e.items())) if e else (),
                self.env_all, self.frozen, self.net, self.subprocess_fake, self.fs_fake,
                hash(self.cwd) if self.cwd is not None else None, self.mp_key, self.raising,
                hash(self.effects) if self.effects else 0, self.fs_gone, self.fs_made, self.tmp_tree, self.tmp_text,
                self.tree_changed, self.tree_made, self.doubles_set, hash(self.returns) if self.returns else 0)


def _log_key(log: tuple) -> int:
    """A hash of a monkeypatch log (``Ctx.mp_log``) for memo keys."""
    return hash(tuple((st, repr(k), had, hash(o) if isinstance(o, V) else repr(o)) for st, k, had, o in log))


class _Effects(NamedTuple):
    """What a memoized call did besides returning and emitting events: replayed on reuse."""

    writes: tuple          # heap, class and module writes, definitions (the write log's slice)
    ctx_after: Optional["Ctx"]   # the control state it left, when it changed it
    escapes: tuple         # HT202 candidates, by patched key
    misses: tuple          # HT205 candidates, by patched key
    consumed: tuple        # import-time reads it used
    marks: tuple           # HT4xx guard calls and side effects
    direct_env: tuple      # variables test code set (contract S2)
    rel_cut: int           # lowest frame a cut inside depended on, relative to the call's frame
    steps: int             # steps its run took (a reuse costs them)
    cms: tuple             # control states of the context managers it made (``Interp.cm_ctx``)
    cm_start: int          # the index the first of them had
    budget_hit: bool       # a call inside it was not followed for the budget
    fx_hits: tuple = ()    # the states of the process-changing statements it ran (``Interp.fx_hits``)


class _MemoEntry:
    """A call's stored result. Ids are those of its first run: ``ids`` the instances found in
    its inputs (in ``_canon_inputs`` order), ``first_id`` .. ``first_id + fresh`` the ones it made."""

    __slots__ = ("ret", "events", "n_prefix", "effects", "ids", "first_id", "fresh", "at_depth", "movable",
                 "reach", "calls", "above", "files", "unresolved", "ran", "reads", "greads", "cells", "dmask", "dver",
                 "alt")

    def __init__(self, ret: V, events: tuple, n_prefix: int, effects: _Effects, ids: tuple, first_id: int,
                 fresh: int, at_depth: Optional[int], reach: int = 0, calls: int = 0,
                 above: Optional[Dict[str, int]] = None, files: int = 0, unresolved: tuple = (),
                 ran: tuple = ()) -> None:
        self.ret = ret
        self.events = events          # as recorded: the first ``n_prefix`` steps of their traces are the caller's
        self.n_prefix = n_prefix
        self.effects = effects
        self.ids = ids
        self.first_id = first_id
        self.fresh = fresh
        self.at_depth = at_depth      # reusable at this depth only (a depth cut inside), or at any
        self.movable: Optional[bool] = None   # holds only ids it can move (found when first moved)
        self.reach = reach            # frames below the call its run went (a reuse deeper would be cut)
        self.calls = calls            # the functions its run called, as bits (``_call_bit``)
        self.above = above or {}      # of those, the ones on the stack above it then: how many times
        self.files = files            # the modules whose code its run ran, as bits (``Interp.file_bits``)
        self.unresolved = unresolved  # the (site, text) notes its run made
        self.ran = ran                # during collection: the functions its run called
        # the shared state it depends on (``Interp.watch``): the written cells its run read, the
        # number of cells there were when it began (a cell written later was not watched for), of
        # the cells read those written in its run's test when it began, and their versions then
        self.reads = 0
        self.greads = 0               # all the shared state its run read, hashed (``Interp.greads``)
        self.cells = 0
        self.dmask = 0
        self.dver: tuple = ()
        self.alt: Optional["_MemoEntry"] = None   # an entry for the same key on other shared state


class _Return(Exception):
    pass


class WrittenArgs(list):
    """A call's positional arguments as its call site writes them (no part spread from a value
    the analysis knows less well): a ``*args`` parameter then holds exactly these."""
