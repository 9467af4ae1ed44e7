"""The analysis of a suite's tests (and of the HT201 sweep) in several processes.

A test's result is a function of the test alone (``docs/limits.md``: each test starts from
the state collection left; a module first imported during a test is imported as at
collection), so the tests can be shared out among processes forked after collection and the
report is the one a single process gives, byte for byte, whatever ``--jobs`` is. What crosses
back is plain data: each test's ``TestRun``, the sweep's file events, and per process the
unresolved call sites, the call sites seen, import-time events and the modules it imported
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
from typing import Callable, Dict, List, Optional, Set, Tuple

from . import interp as I
from .runner import Runner, TestItem, TestRun, start_run

MIN_TESTS = 64   # fewer tests than this are analysed in this process: forking costs more
TESTS_PER_PROCESS = 16   # at least this many tests for each process started
CHUNKS_PER_PROCESS = 4   # each chunk is this share of what is left per process
MIN_CHUNK = 4
MAX_CHUNK = 16   # a module with more tests than four chunks' worth is shared out


@dataclass
class Analysis:
    """What the test phase and the sweep found, in the order one process would give it."""

    runs: List[TestRun]
    sweep_events: List[I.SinkEvent] = field(default_factory=list)
    processes: int = 1


def analyse(runner: Runner, items: List[TestItem], jobs: int, sweep: bool,
            progress: Optional[Callable[[str], None]] = None) -> Analysis:
    """Run every test of ``items`` (and the HT201 sweep when ``sweep``) in up to ``jobs``
    processes; merge what they found into ``runner`` and its interpreter. Falls back to this
    process where processes cannot be forked (no ``fork`` start method) or are not worth it."""
    ip = runner.ip
    if jobs > 1 and len(items) >= MIN_TESTS and _fork_context() is not None:
        return _Pool(runner, items, min(jobs, max(1, len(items) // TESTS_PER_PROCESS)), progress).run(sweep)
    runs = []
    for n, it in enumerate(items, 1):
        if progress and n % 25 == 1:
            progress(f"test {n}/{len(items)}: {it.node_id}")
        run = runner.run(it)
        runner.record(run)
        runs.append(run)
    events = runner.sweep() if sweep else []
    import_after_collection(ip, sorted(ip.lazy))
    return Analysis(runs, events)


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
    """What a process found besides its runs: unresolved sites, call sites, import-time events
    after ``events_from`` and the modules it imported after collection."""
    return dict(ip.unresolved), set(ip.call_sites), ip.import_events[events_from:], sorted(ip.lazy)


def _serve(conn, runner: Runner, items: List[TestItem]) -> None:
    """A worker: analyse what ``conn`` sends until it says stop."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C is the parent's to handle
    gc.freeze()   # everything inherited from the parent lives as long as this process
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
                out = []
                for i in msg[2]:
                    run = runner.run(items[i])
                    out.append((i, run.events, run.escapes, run.misses, run.consumed, run.marks, run.fixtures,
                                items[i].markers))
                conn.send(("tests", msg[1], out))
            elif kind == "sweep":
                if not swept:   # the sweep starts from the modules every test imported, as in one process
                    ip.memo.clear()
                    import_after_collection(ip, msg[3])
                    swept = True
                conn.send(("sweep", msg[1], runner.sweep(msg[2], keep_memo=True)))
            elif kind == "state":
                conn.send(("state", None, _state(ip, events_from)))
                events_from = len(ip.import_events)
            else:
                return
        except Exception:   # a bug of ours: the parent analyses the chunk again itself, and fails there
            conn.send(("error", msg[1] if len(msg) > 1 else None, traceback.format_exc()))


class _Pool:
    def __init__(self, runner: Runner, items: List[TestItem], processes: int,
                 progress: Optional[Callable[[str], None]]) -> None:
        self.runner, self.items, self.n, self.progress = runner, items, processes, progress

    def run(self, sweep: bool) -> Analysis:
        runner, ip, items = self.runner, self.runner.ip, self.items
        ctx = _fork_context()
        workers = []
        for _ in range(self.n):
            parent, child = ctx.Pipe()
            p = ctx.Process(target=_serve, args=(child, runner, items), daemon=True)
            p.start()
            child.close()
            workers.append((p, parent))
        runs: Dict[int, TestRun] = {}
        try:
            chunks = _chunks(len(items), self.n, lambda j: items[j].module != items[j - 1].module)
            done = 0
            for _cid, out in self._share(workers, [("tests", cid, c) for cid, c in enumerate(chunks)]):
                for i, events, escapes, misses, consumed, marks, fixtures, markers in out:
                    items[i].markers = markers
                    runs[i] = TestRun(items[i], events, escapes, misses, consumed, marks, fixtures)
                done += len(out)
                if self.progress:
                    self.progress(f"tests {done}/{len(items)}")
            states = self._states(workers)
            lazy = sorted(set().union(*(s[3] for s in states)))
            self._merge(states)
            events: List[I.SinkEvent] = []
            if sweep:
                import_after_collection(ip, lazy)   # the modules every test imported: the sweep's scope
                roots = runner.sweep_roots()
                parts = [[roots[k] for k in c] for c in _chunks(len(roots), self.n)]
                by_chunk = dict(self._share(workers, [("sweep", cid, r, lazy) for cid, r in enumerate(parts)]))
                for cid in range(len(parts)):
                    events.extend(by_chunk[cid])
                states = self._states(workers)
                self._merge(states)
                # modules only the sweep imported: imported as the sweep does in one process
                import_after_collection(ip, sorted(set().union(*(s[3] for s in states)) - set(lazy)), sweep=True)
            import_after_collection(ip, lazy)
        finally:
            for p, conn in workers:
                try:
                    conn.send(("stop",))
                except (OSError, ValueError):
                    pass
                conn.close()
                p.join(timeout=5)
                if p.is_alive():
                    p.kill()
                    p.join()
        ordered = [runs[i] for i in range(len(items))]
        for run in ordered:
            runner.record(run)
        return Analysis(ordered, events, self.n)

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
            out = []
            for i in job[2]:
                run = runner.run(self.items[i])
                out.append((i, run.events, run.escapes, run.misses, run.consumed, run.marks, run.fixtures,
                            self.items[i].markers))
            return out
        import_after_collection(runner.ip, job[3])
        return runner.sweep(job[2], keep_memo=True)

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
        for unresolved, sites, import_events, _lazy in states:
            for site, text in unresolved.items():
                ip.note_unresolved(site, text)
            ip.call_sites |= sites
            for e in import_events:   # a module imported in several processes: its events once
                k = _event_key(e)
                if k not in seen:
                    seen.add(k)
                    ip.import_events.append(e)


def _event_key(e: I.SinkEvent) -> tuple:
    return (e.category, e.path, e.pos, e.call, e.verdict, e.origin, e.trace, e.import_time, e.module, e.target,
            e.write, e.targets, e.missed, e.reason, e.via_fixture)
