"""Summaries for many files, built in worker processes.

The per-file step (``summary.summarize``) is pure, so it runs in a small pool of processes and
only its result crosses back: the summary as ``cache.serialize`` bytes, which is also what the
cache stores.
The pool is ours rather than ``concurrent.futures`` because one file must not cost the run:

- a worker that dies (libcst's native parser can overflow its stack and segfault; the kernel
  can kill a worker for memory) turns into an error for the one file it held, and a fresh
  worker takes its place;
- a file that takes longer than the time budget is reported as an error, its worker killed
  and replaced; nothing is skipped silently;
- one file is in flight per worker, so a worker blocked sending a large summary can never
  deadlock against the parent sending it the next file.

Workers walk trees in a thread with a 512 MiB stack and a raised recursion limit: libcst's
code generation and our extractor recurse once per nesting level, and a few hundred chained
``+`` exceed Python's default limit of 1,000 frames.
"""
from __future__ import annotations

import gc
import os
import signal
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Deque, Iterator, List, Optional, Tuple

STACK_BYTES = 512 * 1024 * 1024
DEEP_RECURSION = 60_000
DEFAULT_TIMEOUT = 60.0   # seconds per file; a 1 MB literal takes about 5 s
GC_EVERY = 64            # files a worker summarises between two cyclic collections


@dataclass
class ParseJob:
    """One file to summarise: its bytes and what ``summarize`` needs besides."""

    key: str
    data: bytes
    module: str
    path: str
    is_package: bool


@dataclass
class ParseResult:
    """``data`` is the summary as ``cache.serialize`` bytes, or None with a one-line ``error``;
    ``transient`` when the error was the worker's (a crash or the time budget), not the file's."""

    job: ParseJob
    data: Optional[bytes]
    error: Optional[str]
    transient: bool = False


def default_jobs() -> int:
    """Processes to use: the CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _summarize_bytes(data: bytes, module: str, path: str, is_package: bool) -> bytes:
    # imported when the first file is summarised, not with this module: the console script
    # imports it first thing to fork the early parse worker (``__main__``), before anything else
    from .cache import serialize
    from ..summarise.extract import summarize

    return serialize(summarize(data, module, path, is_package))


def _one(fn: Callable[..., str], job: Tuple[bytes, str, str, bool]) -> Tuple[str, str]:
    from ..summarise.extract import SummaryError   # lazily, as in ``_summarize_bytes``

    try:
        return "ok", fn(*job)
    except SummaryError as exc:
        return "error", str(exc)
    except RecursionError:
        return "error", "too deeply nested to analyse"
    except MemoryError:
        return "error", "ran out of memory while parsing"
    except Exception as exc:  # a bug of ours: one line for the report, the run goes on
        text = str(exc).splitlines()[0] if str(exc) else ""
        return "error", f"internal error while summarising: {type(exc).__name__}: {text}"


def _serve(conn, fn: Callable[..., str]) -> None:
    """Worker process: summarise jobs from ``conn`` until it closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C is the parent's to handle
    import faulthandler

    faulthandler.disable()   # a crash is reported as one line by the parent, not a dump inherited from it
    gc.freeze()   # what the parent had at fork time is never garbage here
    # a parse tree is hundreds of thousands of objects without cycles, freed by reference
    # counting; the cyclic collector rescanning them as they grow cost a sixth of the parse
    gc.disable()
    import libcst  # noqa: F401  inherited from the parent, or (a worker started early) imported now

    def loop() -> None:
        n = 0
        while True:
            try:
                msg = conn.recv()
            except (EOFError, OSError):
                return
            if msg is None:
                return
            try:
                conn.send(_one(fn, msg))
            except (OSError, ValueError):   # the parent is gone (Ctrl-C, killed)
                return
            n += 1
            if n % GC_EVERY == 0:
                gc.collect()   # whatever cycles there were, now and then

    run_deep(loop)


def roomy(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)``, called from a frame that leaves its callees megabytes of frame stack.

    CPython 3.11+ keeps frames in 16 KiB chunks, each mapped when a call needs it and unmapped
    as soon as the frame at its base returns, so a recursion going up and down across a
    boundary pays an ``mmap``, an ``munmap`` and fresh zeroed pages every time (measured: about
    800,000 pairs in each analysis worker on Django, 4 s of system time). This frame is declared
    large enough to be given a chunk of its own with about 4 MiB to spare, which its callees
    fill before they need another. Elsewhere it is an ordinary call."""
    return fn(*args)


# 2**19 slots of 8 bytes: with the frame's own overhead the chunk is rounded up to 8 MiB;
# pages are only touched as callees use them
roomy.__code__ = roomy.__code__.replace(co_stacksize=1 << 19)


def run_deep(target: Callable[[], Any]) -> Any:
    """``target()`` run in a thread with a large stack and a raised recursion limit; its
    result, or its exception re-raised here."""
    old_stack = threading.stack_size()
    old_limit = sys.getrecursionlimit()
    try:
        threading.stack_size(STACK_BYTES)
    except (ValueError, RuntimeError):   # a platform without settable stacks: the default one
        return target()
    sys.setrecursionlimit(DEEP_RECURSION)
    result: List[Any] = []
    failure: List[BaseException] = []

    def wrapped() -> None:
        try:
            result.append(roomy(target))
        except BaseException as exc:  # re-raised in the caller's thread
            failure.append(exc)

    try:
        t = threading.Thread(target=wrapped, name="hermetic-deep")
        t.start()
        t.join()
    finally:
        threading.stack_size(old_stack)
        sys.setrecursionlimit(old_limit)
    if failure:
        raise failure[0]
    return result[0]


# this process's ends of the pipes to its worker processes: a worker forked from here closes its
# copies first, else it would hold its own pipe open (and its siblings'), and a worker whose
# parent was killed would wait on its pipe for ever instead of reading its end
_PARENT_ENDS: set = set()


def start_worker(ctx, target: Callable[..., Any], args: tuple):
    """Start ``target(conn, *args)`` in a daemon process of ``ctx``; return ``(process, this
    process's end of conn)``. End it with ``release`` once the process is stopped."""
    parent, child = ctx.Pipe()
    inherited = list(_PARENT_ENDS) + [parent] if ctx.get_start_method() == "fork" else []
    process = ctx.Process(target=_in_child, args=(inherited, target, (child,) + args), daemon=True)
    process.start()
    child.close()
    _PARENT_ENDS.add(parent)
    return process, parent


def release(conn) -> None:
    _PARENT_ENDS.discard(conn)
    conn.close()


def _in_child(inherited: list, target: Callable[..., Any], args: tuple) -> None:
    for end in inherited:
        try:
            end.close()
        except OSError:
            pass
    _PARENT_ENDS.clear()
    target(*args)


class _Worker:
    def __init__(self, ctx, fn: Callable[..., str]) -> None:
        self.process, self.conn = start_worker(ctx, _serve, (fn,))
        self.index: Optional[int] = None
        self.started = 0.0

    def stop(self, kill: bool = False) -> None:
        try:
            if kill:
                self.process.kill()
            else:
                self.conn.send(None)
        except (OSError, ValueError):
            pass
        self.process.join(timeout=5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        release(self.conn)


def _context(preload: bool = True):
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    # fork shares the parent's imports (no start-up cost); macOS frameworks are not fork-safe
    if "fork" in methods and sys.platform != "darwin":
        if preload:
            import libcst  # noqa: F401  imported once here, every forked worker has it for free
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


class EarlyWorker:
    """A parse worker started before the caller knows what to parse (``summarize_all(early=)``):
    it imports libcst while the caller reads the files and the cache, so a run that parses one
    file does not wait for that import. ``close`` ends it when nothing needed parsing."""

    def __init__(self, fn: Optional[Callable[..., str]] = None) -> None:
        self.fn = fn or _summarize_bytes
        self.worker: Optional[_Worker] = None
        try:
            ctx = _context(preload=False)
            if ctx.get_start_method() == "fork":
                self.worker = _Worker(ctx, self.fn)
        except (OSError, ValueError):
            self.worker = None

    def take(self) -> Optional["_Worker"]:
        w, self.worker = self.worker, None
        return w

    def close(self) -> None:
        w = self.take()
        if w is not None:
            w.stop(kill=True)   # still importing, maybe: nothing of its is needed


def _death(exitcode: Optional[int]) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"the parser crashed on this file ({name}); not analysed"
    return f"the parse worker exited unexpectedly (status {exitcode}); not analysed"


def last_words(message: str, code: int) -> None:
    """End this process at once with ``code`` after one line on standard error, which may itself
    be closed or full (the console script's Ctrl-C and full-output exits)."""
    try:
        sys.stderr.write(message + "\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass
    os._exit(code)


_EARLY: Optional[EarlyWorker] = None
ONE_SHOT = False   # set by the console script: this process runs one command and ends


def start_early() -> None:
    """Start this process's ``EarlyWorker`` now (the CLI's first step): ``take_early`` hands it
    to the run that needs it."""
    global _EARLY
    if _EARLY is None:
        _EARLY = EarlyWorker()


def take_early() -> Optional[EarlyWorker]:
    global _EARLY
    w, _EARLY = _EARLY, None
    return w


def summarize_all(jobs: List[ParseJob], processes: int, timeout: float = DEFAULT_TIMEOUT,
                  fn: Optional[Callable[..., str]] = None,
                  clock: Optional[Callable[[], float]] = None,
                  early: Optional[EarlyWorker] = None,
                  idle: Optional[Callable[[], None]] = None) -> Iterator[ParseResult]:
    """Summarise ``jobs`` in up to ``processes`` worker processes; yields results as they end.

    ``fn(data, module, path, is_package)`` returns the summary's bytes (a parameter so tests
    can hand in a worker that crashes). ``timeout`` is the budget per file in seconds, measured
    with ``clock`` (default ``time.monotonic``; tests pass their own). Where
    worker processes cannot be started, the jobs run in this process (without crash isolation).
    ``idle()``, if given, is called once the workers have their first files, before the first
    wait for a result (not at all when there is nothing to parse or no worker could start).
    """
    first = early.take() if early is not None and (fn is None or fn is early.fn) else None
    if not jobs:
        if first is not None:
            first.stop(kill=True)
        return
    fn = fn or _summarize_bytes
    clock = clock or time.monotonic
    try:
        n = max(1, min(processes, len(jobs)))
        # a long-lived caller imports libcst once for all its forks; a one-shot command lets
        # each worker import it alongside the early one
        ctx = _context(preload=first is None or (n > 1 and not ONE_SHOT))
        workers = ([first] if first is not None else []) + [_Worker(ctx, fn) for _ in range(n - (first is not None))]
    except OSError:
        if first is not None:
            first.stop(kill=True)
        yield from _in_process(jobs, fn)
        return
    from multiprocessing.connection import wait

    # largest first: the last files to finish are small ones, so no worker idles long at the end
    pending: Deque[int] = deque(sorted(range(len(jobs)), key=lambda i: -len(jobs[i].data)))
    try:
        _feed(workers, pending, jobs, clock)
        if idle is not None:
            idle()
        while True:
            busy = [w for w in workers if w.index is not None]
            if not busy:
                return
            now = clock()
            wait_for = max(0.0, min(w.started + timeout for w in busy) - now)
            ready = wait([w.conn for w in busy], timeout=wait_for)
            done: List[ParseResult] = []
            for w in list(busy):
                if w.conn in ready:
                    try:
                        status, payload = w.conn.recv()
                    except (EOFError, OSError):
                        w.process.join(timeout=5)
                        done.append(ParseResult(jobs[w.index], None, _death(w.process.exitcode), True))
                        _replace(workers, w, ctx, fn)
                        continue
                    job, w.index = jobs[w.index], None   # one file in flight: the reply is for it
                    done.append(_result(job, status, payload))
                elif clock() - w.started >= timeout:
                    done.append(ParseResult(jobs[w.index], None,
                                            f"not analysed: parsing took longer than {timeout:g} s (file-timeout)",
                                            True))
                    _replace(workers, w, ctx, fn, kill=True)
            # the idle workers (also those that replace a dead one) get their next file before
            # the caller handles these results
            _feed(workers, pending, jobs, clock)
            yield from done
    finally:
        for w in workers:
            w.stop(kill=w.index is not None)


def _feed(workers: List[_Worker], pending: Deque[int], jobs: List[ParseJob], clock) -> None:
    """Send each idle worker its next file."""
    for w in workers:
        if w.index is None and pending:
            w.index = pending.popleft()
            j = jobs[w.index]
            w.started = clock()
            w.conn.send((j.data, j.module, j.path, j.is_package))


def _replace(workers: List[_Worker], w: _Worker, ctx, fn, kill: bool = False) -> None:
    w.index = None
    w.stop(kill=kill)
    workers[workers.index(w)] = _Worker(ctx, fn)


def _in_process(jobs: List[ParseJob], fn: Callable[..., str]) -> Iterator[ParseResult]:
    results = run_deep(lambda: [_one(fn, (j.data, j.module, j.path, j.is_package)) for j in jobs])
    for j, (status, payload) in zip(jobs, results):
        yield _result(j, status, payload)


def _result(job: ParseJob, status: str, payload: str) -> ParseResult:
    """A worker's ``("ok", summary bytes)`` or ``("error", one_line)`` for ``job``."""
    return ParseResult(job, payload, None) if status == "ok" else ParseResult(job, None, payload)
