"""One run of `hermetic check` as data: what the caller asks for (``RunOptions``), what the
stages pass on (``Run``), the phase clock (``phase_done``), and the state a one-shot run leaves
for the process end (``LEFT_FOR_EXIT``, ``release_state``).

The analysis' types are named for annotations only: ``api`` reads a stored whole-run result
with this module and imports the analysis (``pipeline``) only when it must run it.
"""
from __future__ import annotations

import gc
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Tuple

from .config import Config, PytestConfig
from .discover.project import Project, SourceFile
from .engine.cache import SummaryCache
from .report.model import Report

if TYPE_CHECKING:
    from .analyse import interp as I
    from .analyse.runner import Runner, TestItem
    from .rules.outcome import Outcome


@dataclass
class RunOptions:
    """What the caller of ``run_check`` asks for: its parameters, as given (``cwd`` not yet
    resolved, ``targets`` possibly empty: the current folder)."""
    targets: Sequence[str]
    cwd: Path
    progress: Optional[Callable[[str], None]] = None
    config: Optional[Config] = None
    report_unused_suppressions: bool = False
    use_cache: bool = True
    jobs: int = 0   # parse and analysis processes; 0: one per CPU
    cache_dir: Optional[Path] = None   # replaces ROOT/.hermetic_cache


@dataclass
class Run:
    """One run's state, filled in stage by stage (the fields below each stage's comment are
    what it sets). ``stats`` is ``report.statistics``: seconds per phase, parse and cache counts.
    """
    options: RunOptions
    cwd: Path   # resolved
    stats: Dict[str, Any]
    # discover
    node_ids: List[Tuple[Path, Optional[str], str]]   # ``split_targets``'s picks
    pytest_cfg: PytestConfig
    root: Path   # the rootdir
    config: Config
    project: Project
    report: Report
    cache: SummaryCache
    early: Any   # the parse worker started early (``workers.EarlyWorker``), or None
    phase_start: float   # when the phase under way began (``time.perf_counter``)
    # read
    run_key: str = ""   # the key of the whole run's inputs (the whole-run result cache)
    files_read: int = 0
    # summarise
    summaries: Dict[str, dict] = field(default_factory=dict)   # module -> summary (aliases too)
    files_by_module: Dict[str, SourceFile] = field(default_factory=dict)
    module_keys: Dict[str, str] = field(default_factory=dict)   # module -> its file's content hash
    scope: str = ""   # ``reuse.scope_key``: the analysis cache's key
    ready: Dict[str, Any] = field(default_factory=dict)   # the catalogue, the last analysis entry
    transient: bool = False   # a timeout or a crash may not recur: such a run's result is not reused
    # link
    program: Optional[I.Program] = None
    runner: Optional[Runner] = None
    ip: Optional[I.Interp] = None
    digest: str = ""   # ``reuse.collection_digest``
    wants_ht3: bool = False
    # collect
    items: List[TestItem] = field(default_factory=list)
    # analyse, rules: what the report takes (``_rules``) and the analysis cache's new entry
    outcome: Optional[Outcome] = None
    new_entry: dict = field(default_factory=dict)


def phase_done(run: Run, name: str) -> None:
    """Record the seconds of phase ``name`` (``--statistics``) and start the next one."""
    now = time.perf_counter()
    run.stats["phases"][name] = now - run.phase_start
    run.phase_start = now


LEFT_FOR_EXIT: List[dict] = []


def release_state() -> None:
    """Free what one-shot runs kept for the process end (``cli`` before a second run in the
    same process, ``--diff``'s, so two runs' states are never held at once); the collector back
    on, as it is when the console script starts."""
    LEFT_FOR_EXIT.clear()
    gc.unfreeze()
    gc.enable()
