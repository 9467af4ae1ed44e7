"""The analysis of a suite's tests (and of the HT201 sweep) in several processes.

A test's result is a function of the test alone (``docs/limits.md``: each test starts from
the state collection left; a module first imported during a test is imported as at
collection), so the tests can be shared out among processes forked after collection and the
report is the one a single process gives, byte for byte, whatever ``--jobs`` is. What crosses
back is plain data: each test's ``TestRun``, the sweep's file events, and per process the
unresolved call sites, import-time events and the modules it imported
after collection (which the parent imports too, in a fixed order, before the rules that read
module state).

Tests go out in chunks of neighbours (a chunk keeps a module's tests together where it can:
they share fixtures, so the memo of the process that runs them answers more), one chunk in
flight per process. A process that dies, or a chunk that fails, is analysed again in the parent
process, so an analysis bug surfaces as it would in a single process.
"""
from __future__ import annotations

import gc
import sys
import traceback
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Set

from ..analyse import interp as I
from ..analyse.runner import Runner
from ..analyse.runs import SweepRun, TestItem, TestRun, start_run
from .reuse import Reused
from .workers import release, start_worker

MIN_TESTS = 64   # fewer tests than this are analysed in this process: forking costs more
TESTS_PER_PROCESS = 16   # at least this many tests for each process started
CHUNKS_PER_PROCESS = 4   # each chunk is this share of what is left per process
MIN_CHUNK = 4
MAX_CHUNK = 16   # a module with more tests than four chunks' worth is shared out
TESTS_PER_COLLECT = 5_000   # a worker's full collection (0.4-0.8 s on Django) after this many tests


@dataclass
class Analysis:
    """What the test phase and the sweep found, in the order one process would give it."""

    runs: List[TestRun]
    sweep_events: List[I.SinkEvent] = field(default_factory=list)
    processes: int = 1
    sweep_runs: List[SweepRun] = field(default_factory=list)   # root by root (the result cache)


def analyse(runner: Runner, items: List[TestItem], jobs: int, sweep: bool,
            progress: Optional[Callable[[str], None]] = None, reused: Optional[Reused] = None) -> Analysis:
    """Run every test of ``items`` (and the HT201 sweep when ``sweep``) in up to ``jobs``
    processes, except those ``reused`` gives; merge what they found into ``runner`` and its
    interpreter. Falls back to this process where processes cannot be forked (no ``fork``
    start method) or are not worth it."""
    ip = runner.ip
    reused = reused or Reused()
    todo = [i for i in range(len(items)) if i not in reused.runs]
    runs: Dict[int, TestRun] = dict(reused.runs)
    pool: Optional[_Pool] = None
    lazy_seen: Set[str] = set()
    try:
        if jobs > 1 and len(todo) >= MIN_TESTS and _fork_context() is not None:
            pool = _Pool(runner, items, min(jobs, max(1, len(todo) // TESTS_PER_PROCESS)), progress)
            runs.update(pool.tests(todo))
            lazy_seen |= pool.merge_states()
        else:
            for n, i in enumerate(todo, 1):
                if progress and n % 25 == 1:
                    progress(f"test {n}/{len(todo)}: {items[i].node_id}")
                runs[i] = runner.run(items[i])
        _take_in(ip, [reused.runs[i] for i in sorted(reused.runs)])
        lazy = sorted(lazy_seen | set(ip.lazy) | {m for r in runs.values() for m in r.touched})
        sweep_runs: List[SweepRun] = []
        if sweep:
            if pool is None and not reused.runs and not reused.sweep:
                sweep_runs = runner.sweep_each()   # one process from the start: as the tests left it
            else:
                import_after_collection(ip, lazy)   # the modules every test imported: the sweep's scope
                roots = runner.sweep_roots()
                todo_roots = [r for r in roots if r not in reused.sweep]
                if pool is not None and todo_roots:
                    fresh = pool.sweep(todo_roots, lazy)
                    pool.merge_states()
                else:
                    ip.clear_memo()
                    fresh = {r.root: r for r in runner.sweep_each(todo_roots)}
                sweep_runs = [reused.sweep[r] if r in reused.sweep else fresh[r] for r in roots]
                _take_in(ip, [reused.sweep[r] for r in roots if r in reused.sweep])
                # modules only the sweep imported: imported as the sweep does in one process
                only = {m for r in sweep_runs for m in r.touched} - set(lazy)
                import_after_collection(ip, sorted(only - set(ip.lazy)), sweep=True)
        import_after_collection(ip, lazy)
    finally:
        if pool is not None:
            pool.close()
    ordered = [runs[i] for i in range(len(items))]
    for run in ordered:
        runner.record(run)
    return Analysis(ordered, [e for r in sweep_runs for e in r.events], pool.n if pool is not None else 1,
                    sweep_runs)


def _take_in(ip: I.Interp, runs) -> None:
    """What reused runs added to the suite's lists: unresolved notes, import-time events."""
    if not runs:
        return
    seen = {_event_key(e) for e in ip.import_events}
    for r in runs:
        for site, text in r.unresolved.items():
            ip.note_unresolved(site, text)
        for e in getattr(r, "import_events", ()):
            k = _event_key(e)
            if k not in seen:
                seen.add(k)
                ip.import_events.append(e)


def import_after_collection(ip: I.Interp, modules: List[str], sweep: bool = False) -> None:
    """Import ``modules`` (each as a test importing it would, then undone): the state of
    modules imported after collection, as the rules after the tests expect it. With ``sweep``
    as the HT201 sweep imports them (their calls are not counted as the tests' calls)."""
    was, ip.sweep = ip.sweep, sweep
    try:
        for mod in modules:
            start_run(ip)
            ip.import_module(mod)
        start_run(ip)
    finally:
        ip.sweep = was


def _fork_context():
    import multiprocessing

    if "fork" not in multiprocessing.get_all_start_methods() or sys.platform == "darwin":
        return None   # macOS frameworks are not fork-safe; elsewhere there is no fork at all
    return multiprocessing.get_context("fork")


def _chunks(n: int, processes: int, cut_after=None) -> List[List[int]]:
    """``range(n)`` in chunks that get smaller towards the end (guided scheduling: each is a
    share of what is left, so the last ones even out the processes' loads), of at most
    ``MAX_CHUNK``. Where ``cut_after(j)`` says a module's tests end, a chunk is stretched to
    that end when it comes within ``MAX_CHUNK`` more: a module's tests stay together (they
    share fixtures, so one process's memo answers more), unless it has many (a class of deep
    tests is shared out)."""
    out: List[List[int]] = []
    i = 0
    while i < n:
        size = max(MIN_CHUNK, min(MAX_CHUNK, (n - i) // (processes * CHUNKS_PER_PROCESS)))
        end = min(n, i + size)
        if cut_after is not None and end < n and not cut_after(end):
            for j in range(end + 1, min(n, i + MAX_CHUNK * 4)):
                if cut_after(j):
                    end = j
                    break
        out.append(list(range(i, end)))
        i = end
    return out


def _state(ip: I.Interp, events_from: int) -> tuple:
    """What a process found besides its runs: unresolved sites, import-time events
    after ``events_from`` and the modules it imported after collection."""
    return dict(ip.unresolved), ip.import_events[events_from:], sorted(ip.lazy)


def _run_tests(runner: Runner, items: List[TestItem], indices: List[int]) -> list:
    out = []
    for i in indices:
        run = runner.run(items[i])
        run.item = None   # the parent has it
        out.append((i, run, items[i].markers))
    return out


def _serve(conn, runner: Runner, items: List[TestItem]) -> None:
    """A worker: analyse what ``conn`` sends until it says stop."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C is the parent's to handle
    gc.freeze()   # everything inherited from the parent lives as long as this process
    # the interpreter makes next to no cyclic garbage (measured: 28 objects over Django's first
    # 2,000 tests, 8 over each 2,000 after), but the collector rescanning its heap (the memo,
    # the instances, the bodies read) took a quarter of the tests' analysis: collect by hand,
    # once every TESTS_PER_COLLECT tests
    gc.disable()
    since_collect = 0
    ip = runner.ip
    events_from = len(ip.import_events)
    swept = False
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        kind = msg[0]
        try:
            if kind == "tests":
                conn.send(("tests", msg[1], _run_tests(runner, items, msg[2])))
                since_collect += len(msg[2])
                if since_collect >= TESTS_PER_COLLECT:
                    since_collect = 0
                    gc.collect()
            elif kind == "sweep":
                if not swept:   # the sweep starts from the modules every test imported, as in one process
                    ip.clear_memo()
                    import_after_collection(ip, msg[3])
                    swept = True
                conn.send(("sweep", msg[1], runner.sweep_each(msg[2], keep_memo=True)))
            elif kind == "state":
                conn.send(("state", None, _state(ip, events_from)))
                events_from = len(ip.import_events)
            else:
                return
        except (BrokenPipeError, ConnectionResetError):   # the parent is gone (Ctrl-C, killed)
            return
        except Exception:   # a bug of ours: the parent analyses the chunk again itself, and fails there
            try:
                conn.send(("error", msg[1] if len(msg) > 1 else None, traceback.format_exc()))
            except OSError:
                return


class _Pool:
    """Worker processes forked from this one (after collection), until ``close``."""

    def __init__(self, runner: Runner, items: List[TestItem], processes: int,
                 progress: Optional[Callable[[str], None]]) -> None:
        self.runner, self.items, self.n, self.progress = runner, items, processes, progress
        ctx = _fork_context()
        self.workers = [start_worker(ctx, _serve, (runner, items)) for _ in range(self.n)]

    def tests(self, todo: List[int]) -> Dict[int, TestRun]:
        items, runs = self.items, {}
        chunks = _chunks(len(todo), self.n, lambda j: items[todo[j]].module != items[todo[j - 1]].module)
        done = 0
        for _cid, out in self._share(self.workers, [("tests", cid, [todo[k] for k in c])
                                                    for cid, c in enumerate(chunks)]):
            for i, run, markers in out:
                items[i].markers = markers
                run.item = items[i]
                runs[i] = run
            done += len(out)
            if self.progress:
                self.progress(f"tests {done}/{len(todo)}")
        return runs

    def sweep(self, roots: List[str], lazy: List[str]) -> Dict[str, SweepRun]:
        parts = [[roots[k] for k in c] for c in _chunks(len(roots), self.n)]
        out: Dict[str, SweepRun] = {}
        for _cid, done in self._share(self.workers, [("sweep", cid, r, lazy) for cid, r in enumerate(parts)]):
            for r in done:
                out[r.root] = r
        return out

    def merge_states(self) -> Set[str]:
        """Take in what the workers found besides their runs; the modules they imported."""
        states = self._states(self.workers)
        self._merge(states)
        return set().union(*(s[2] for s in states)) if states else set()

    def close(self) -> None:
        for p, conn in self.workers:
            try:
                conn.send(("stop",))
            except (OSError, ValueError):
                pass
            release(conn)
            p.join(timeout=5)
            if p.is_alive():
                p.kill()
                p.join()

    def _share(self, workers, jobs: List[tuple]):
        """Send ``jobs`` out, one in flight per worker; yield ``(chunk id, result)``. A job whose
        worker died or failed is done here, in this process."""
        from multiprocessing.connection import wait

        pending = list(reversed(jobs))
        busy: Dict[int, tuple] = {}   # worker index -> job
        alive = list(range(len(workers)))
        while pending or busy:
            for w in alive:
                if w not in busy and pending:
                    job = pending.pop()
                    try:
                        workers[w][1].send(job)
                        busy[w] = job
                    except (OSError, ValueError):
                        pending.append(job)
                        alive.remove(w)
                        break
            if not busy:
                if pending:   # every worker is gone: the rest here
                    yield from ((job[1], self._here(job)) for job in reversed(pending))
                return
            ready = wait([workers[w][1] for w in busy])
            for w in list(busy):
                conn = workers[w][1]
                if conn not in ready:
                    continue
                job = busy.pop(w)
                try:
                    kind, cid, payload = conn.recv()
                except (EOFError, OSError):
                    alive.remove(w)
                    yield job[1], self._here(job)
                    continue
                yield (cid, self._here(job)) if kind == "error" else (cid, payload)

    def _here(self, job: tuple):
        """A job done in this process (its worker failed): the same result, or the same error."""
        runner = self.runner
        if job[0] == "tests":
            return _run_tests(runner, self.items, job[2])
        import_after_collection(runner.ip, job[3])
        return runner.sweep_each(job[2], keep_memo=True)

    def _states(self, workers) -> List[tuple]:
        out = []
        for _p, conn in workers:
            try:
                conn.send(("state",))
                kind, _cid, payload = conn.recv()
            except (EOFError, OSError, ValueError):
                continue
            if kind == "state":
                out.append(payload)
        return out

    def _merge(self, states: List[tuple]) -> None:
        ip = self.runner.ip
        seen = {_event_key(e) for e in ip.import_events}
        for unresolved, import_events, _lazy in states:
            for site, text in unresolved.items():
                ip.note_unresolved(site, text)
            for e in import_events:   # a module imported in several processes: its events once
                k = _event_key(e)
                if k not in seen:
                    seen.add(k)
                    ip.import_events.append(e)


def _event_key(e: I.SinkEvent) -> tuple:
    return (e.category, e.path, e.pos, e.call, e.verdict, e.origin, e.trace, e.import_time, e.module, e.target,
            e.write, e.targets, e.missed, e.reason, e.via_fixture)
