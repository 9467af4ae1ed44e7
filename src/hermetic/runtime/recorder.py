"""The runtime half of hermetic: what each test really did.

``hermetic.runtime.plugin`` creates one ``Recorder`` when pytest runs with ``--hermetic``. It sees
I/O through two channels, both active only inside a test phase (setup, call, teardown) or
collection:

* one audit hook (PEP 578), installed once per process and never removable: outside a
  window it is a single global check. It sees files (``open``, ``os.*``, ``shutil.*``),
  ``sqlite3.connect``, sockets, subprocesses and environment writes;
* a profile function (``sys.setprofile``, and ``threading.setprofile`` for threads started
  in the window), installed for the duration of one test phase only. It sees the clock
  functions (``c_call`` of ``time.time``, ``datetime.now``, ...) and environment reads
  (``call`` of ``os._Environ.__getitem__``, behind ``os.environ[...]``, ``.get``, ``in``,
  ``os.getenv``) through any binding, and changes no value the test sees.

Each event is attributed to the running test and phase, and to its *site*: the innermost
frame in the project's own code (rootdir-relative path and line), which is where the
static analysis anchors its HT1xx finding. Events with no project frame are machinery
(pytest, plugins, imports) and are not recorded. Each event is classified per the
contract's decision table: ``controlled`` or ``uncontrolled``, with a reason.

The record (``hermetic-record.json``) is plain JSON; ``merge`` combines per-worker records.

This module holds the recorder itself (its windows, the audit hook and the events it keeps)
and assembles the pieces beside it, whose names it re-exports:

* ``verdicts``: the pure classification (roots, path, address and sqlite verdicts, test code);
* ``profiler``: the profile function's handlers (clock and environment reads), a base of ``Recorder``;
* ``audit``: the audit events and their verdicts (files, connections, network, subprocesses),
  a base of ``Recorder``;
* ``events``: describing, ordering, counting and suppressing recorded events;
* ``records``: record files on disk (reading, merging).
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import threading
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from .. import __version__
from .audit import AUDIT_EVENTS, AuditJudge, fs_path
from .events import PHASES, Judged, describe_event, event_order, format_violations, is_violation, qualname, summarize, \
    suppressed_at
from .profiler import ProfileReads, clock_functions, stat_functions
from .records import RECORD_VERSION, RecordError, load_record, merge, worker_record_path
from ..rules.registry import CATEGORY_CODE
from .verdicts import (CONTROLLED, DEVICES, SYSTEM_READS, UNCONTROLLED, Roots, address_verdict,
                       is_loopback, norm_path, path_verdict, sqlite_target, test_code_matcher)

#: the names this module assembles from the pieces beside it (the runtime's public surface)
__all__ = [
    "CATEGORY_CODE", "CONTROLLED", "DEVICES", "PHASES", "RECORD_VERSION", "SYSTEM_READS", "TOOL_MODULES",
    "UNCONTROLLED", "RecordError", "Recorder", "RecorderOptions", "Roots", "UncontrolledIO", "address_verdict", "describe_event",
    "format_violations", "install_audit_hook", "is_loopback", "is_violation", "load_record", "merge",
    "path_verdict", "sqlite_target", "summarize", "suppressed_at", "test_code_matcher", "worker_record_path",
]

#: standard-library tools (debuggers, doctest, introspection, the unittest runner, the search
#: for installed distributions and entry points) whose own I/O (rc and history files, source
#: lookups, sys.path listings) is machinery whoever calls them; I/O APIs
#: (open, pathlib, shutil, zipfile, sqlite3, socket, subprocess, ...) are not listed
TOOL_MODULES = ("pdb.py", "bdb.py", "doctest.py", "cmd.py", "code.py", "codeop.py", "rlcompleter.py",
                "pydoc.py", "linecache.py", "traceback.py", "inspect.py", "tokenize.py", "warnings.py",
                "site.py", "sysconfig.py", "trace.py", "profile.py", "cProfile.py", "pstats.py",
                "unittest/loader.py", "unittest/main.py", "unittest/runner.py",
                "importlib/metadata/__init__.py", "importlib/metadata/_adapters.py")

#: import machinery outside the standard library's folder: the importlib.metadata backport and
#: pkg_resources, which list every sys.path folder to find distributions and entry points
_MACHINERY = re.compile(r"[\\/](?:importlib_metadata[\\/]|pkg_resources[\\/]__init__\.py$)")

MAX_EVENTS_PER_TEST = 500
MAX_STACK = 12


class UncontrolledIO(PermissionError):
    """Raised in enforce mode (from the audit hook) to block an uncontrolled operation.

    A subclass of PermissionError, so the code under test sees what a sandbox would
    show it; swallowing it does not hide the violation: the test still fails at teardown.
    """


# --------------------------------------------------------------------------------------
# the audit hook (one per process) and the active recorder

_ACTIVE: Optional["Recorder"] = None
_HOOK_INSTALLED = False
#: the runtime's own modules: their frames are never the project's, even in hermetic's own tree
_OWN_FILES = {os.path.join(os.path.dirname(os.path.abspath(__file__)), name)
              for name in ("recorder.py", "plugin.py", "verdicts.py", "profiler.py", "audit.py", "events.py",
                           "records.py")}


def _audit(event: str, args: tuple) -> None:
    __tracebackhide__ = True
    rec = _ACTIVE
    if rec is None:
        return
    spec = AUDIT_EVENTS.get(event)
    if spec is None:
        return
    rec.on_audit(event, spec, args)


def install_audit_hook() -> None:
    global _HOOK_INSTALLED
    if not _HOOK_INSTALLED:
        sys.addaudithook(_audit)
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=_after_fork_in_child)
        _HOOK_INSTALLED = True


def _after_fork_in_child() -> None:
    """A process forked inside a window (a worker pool, multiprocessing) records nothing:
    its record would never be written. Put back the profilers it inherited."""
    global _ACTIVE
    rec = _ACTIVE
    _ACTIVE = None
    if rec is None:
        return
    for _active, _current, _phase, prof in rec._saved[:1]:
        if prof is not None:
            sys.setprofile(prof[0])
            threading.setprofile(prof[1])


def _module_file(mod) -> str:
    return os.path.abspath(getattr(mod, "__file__", "") or "")


_MISSING = object()


class _TestLog:
    """What one test (node id; ``""`` for collection) did: its events by key and in order, and
    the environment variables set or deleted in it (whose later reads are controlled)."""

    __slots__ = ("nodeid", "events", "order", "reported", "env_written", "unset_real", "cleared",
                 "allow", "dropped", "outcome")

    def __init__(self, nodeid: str, allow: frozenset = frozenset()):
        self.nodeid = nodeid
        self.events: Dict[tuple, Dict[str, Any]] = {}
        self.order: List[Dict[str, Any]] = []
        self.reported: set = set()
        self.env_written: Dict[str, str] = {}     # name -> who set or deleted it ("test", ...)
        self.unset_real: set = set()
        self.cleared = False
        self.allow = allow
        self.dropped = 0
        self.outcome = ""


@dataclass
class RecorderOptions:
    """How one pytest process records: what the plugin reads off pytest's configuration."""

    rootdir: str
    mode: str = "record"                  # "record" or "enforce"
    block: bool = True                    # in enforce mode, raise UncontrolledIO (else fail the test after)
    loopback: bool = False                # loopback peers are controlled (configuration or option)
    roots: Optional[Roots] = None         # default: the rootdir alone
    env_snapshot: Optional[Dict[Any, Any]] = None    # os.environ's data before conftests and plugins ran
    test_code: Optional[Callable[[str], bool]] = None    # rel path -> test code? (test_code_matcher)
    clock_remove: Iterable[str] = ()      # clock functions not watched ([tool.hermetic] sinks remove)
    worker: Optional[str] = None          # the xdist worker id
    record_path: str = ""


class Recorder(ProfileReads, AuditJudge):
    """Records, classifies and (in enforce mode) blocks the I/O of the running tests."""

    def __init__(self, options: RecorderOptions):
        import shutil
        import tempfile
        from _collections_abc import Mapping

        rootdir, mode = options.rootdir, options.mode
        self.rootdir = norm_path(rootdir)
        self.mode = mode
        self.block = options.block and mode == "enforce"
        self.loopback = options.loopback
        self.roots = options.roots if options.roots is not None else Roots(rootdir)
        self.env_snapshot = dict(options.env_snapshot or {})
        self.is_test_code = options.test_code or test_code_matcher((), ())
        self.worker = options.worker
        self.record_path = options.record_path
        self.tests: Dict[str, _TestLog] = {}
        self.current: Optional[_TestLog] = None
        self.phase: Optional[str] = None
        self.counts = {"ignored": 0, "indirect": 0, "internal_errors": 0, "profiler_conflicts": 0, "env_snapshots": 0}
        self._files: Dict[str, Any] = {}
        self._busy: set = set()
        self._saved: List[Any] = []
        self._listeners: Any = None
        self._shutil_file = _module_file(shutil)
        stdlib = os.path.dirname(_module_file(os))
        self._tool_files = {os.path.join(stdlib, *m.split("/")) for m in TOOL_MODULES}
        self._tempfile_file = _module_file(tempfile)
        self._env_files = {os.getenv.__code__.co_filename, Mapping.get.__code__.co_filename}
        self._getitem = type(os.environ).__getitem__.__code__
        try:
            from _pytest.monkeypatch import MonkeyPatch

            self._mp_codes = {MonkeyPatch.delitem.__code__: "delitem", MonkeyPatch.setitem.__code__: "setitem",
                              MonkeyPatch.undo.__code__: "undo"}
        except Exception:  # pragma: no cover - pytest always has it
            self._mp_codes = {}
        import socket as _socket
        import weakref

        self._sock_close = _socket.socket.close.__code__
        #: MonkeyPatch objects (any scope) that set or deleted an environment variable
        self._mps: Any = weakref.WeakSet()
        #: MonkeyPatch -> names it deleted while they were absent (monkeypatch keeps no trace of those)
        self._mp_absent: Any = weakref.WeakKeyDictionary()
        #: loopback ports a socket of this process was bound to (servers the tests started, open or closed)
        self.bound_ports: set = set()
        #: project paths written during the session: not shipped data
        self.project_writes: set = set()
        self._literals: Dict[str, Any] = {}
        self.clocks = clock_functions(options.clock_remove)
        self._stat_codes, self._stat_cfuncs = stat_functions()
        self._encodekey = getattr(os.environ, "encodekey", None)
        self._env_data = getattr(os.environ, "_data", None)
        # set by the plugin
        self.integration: Tuple[Sequence[str], Sequence[str], Sequence[str]] = ((), (), ())
        self.known_basetemps: set = set()
        self.controller = False
        self.write_error: Optional[str] = None

    # ---- windows -----------------------------------------------------------------------

    def test_log(self, nodeid: str, allow: frozenset = frozenset()) -> _TestLog:
        log = self.tests.get(nodeid)
        if log is None:
            log = self.tests[nodeid] = _TestLog(nodeid, allow)
        return log

    def enter(self, log: _TestLog, phase: str) -> None:
        """Open a window: events are recorded for ``log`` in ``phase`` until ``leave``."""
        global _ACTIVE
        self._saved.append((_ACTIVE, self.current, self.phase, self._start_profile() if phase != "collect" else None))
        self.current = log
        self.phase = phase
        _ACTIVE = self

    def leave(self) -> None:
        global _ACTIVE
        active, current, phase, prof = self._saved.pop()
        if prof is not None:
            self._stop_profile(prof)
        _ACTIVE = active
        self.current = current
        self.phase = phase

    # ---- the profiler: installed for one test phase -----------------------------------

    def _start_profile(self):
        prev = sys.getprofile()
        if prev is not None and not callable(prev):
            self.counts["profiler_conflicts"] += 1
            return None
        prof = self._make_profiler(prev)
        tprev = threading.getprofile() if hasattr(threading, "getprofile") else getattr(threading, "_profile_hook", None)
        me = self

        def thread_prof(frame, event, arg):
            # a thread started in the window: it uninstalls itself once the window is closed
            if _ACTIVE is not me:
                sys.setprofile(tprev)
                return
            prof(frame, event, arg)

        sys.setprofile(prof)
        threading.setprofile(thread_prof)
        return prev, tprev

    def _stop_profile(self, saved) -> None:
        prev, tprev = saved
        sys.setprofile(prev)
        threading.setprofile(tprev)

    # ---- the audit hook: files, connections, network, subprocesses, env writes ----------

    def on_audit(self, event: str, kind: str, args: tuple) -> None:
        __tracebackhide__ = True
        tid = threading.get_ident()
        if tid in self._busy:
            return
        self._busy.add(tid)
        try:
            self._on_audit(event, kind, args)
        except UncontrolledIO:
            raise
        except Exception:
            self.counts["internal_errors"] += 1
        finally:
            self._busy.discard(tid)

    def _on_audit(self, event: str, kind: str, args: tuple) -> None:
        __tracebackhide__ = True
        log = self.current
        if log is None:
            return
        if kind == "env-write":
            key = args[0]
            if isinstance(key, bytes):
                key = key.decode("utf-8", "replace")
            site, _via, _skip = self._site(sys._getframe(3), event)
            if site is None:
                who = "plugin"
            elif self._files[site.f_code.co_filename][1]:
                who = "test"
            else:
                rel = self._files[site.f_code.co_filename][0]
                who = (f"set or deleted earlier in this test by the code under test ({rel}:{site.f_lineno}, "
                       f"in {qualname(site)}): not the real environment's value")
            log.env_written[key] = who      # the latest writer is the one whose value is read
            if event == "os.unsetenv" and self._encodekey is not None:
                try:
                    ek = self._encodekey(key)
                except Exception:
                    return
                if ek in self.env_snapshot:
                    log.unset_real.add(ek)
                    if len(log.unset_real) == len(self.env_snapshot):
                        log.cleared = True
            return
        if kind == "scratch":
            p = fs_path(args[0])
            if p:
                self.roots.add_scratch(p)
            return
        if kind == "bind":
            self._remember_listener(args[0])
            return
        # frames: 0 this method, 1 on_audit, 2 the hook, 3 the code that performs the operation
        site, via, skip = self._site(sys._getframe(3), event)
        if skip or site is None:
            self.counts["ignored"] += 1
            return
        rel, test_code = self._files[site.f_code.co_filename]
        if kind == "file":
            judged = self._judge_file(event, args, test_code, site)
        elif kind == "connection":
            judged = self._judge_sqlite(args, test_code)
        elif kind == "network":
            judged = self._judge_network(event, args, test_code, site)
        else:
            judged = self._judge_process(event, args, test_code)
        if judged is None:
            self.counts["ignored"] += 1
            return
        category = "file" if kind == "file" else kind
        if judged.verdict == UNCONTROLLED and category in log.allow:
            judged = judged._replace(verdict=CONTROLLED, reason="an integration test allowed to reach real services "
                                                                "([tool.hermetic.integration])")
        ev = self._add(category, judged, site, via)
        if judged.verdict == UNCONTROLLED and self.block and self.phase != "collect" and not ev.get("suppressed"):
            raise UncontrolledIO(f"hermetic: blocked {describe_event(ev)}")

    def _site(self, frame, event: str):
        """(site frame, library frame it called, skip?): walk out to the first project frame."""
        via = None
        f = frame
        while f is not None:
            fn = f.f_code.co_filename
            info = self._file_info(fn)
            if info is not None:
                return f, via, False
            if fn.startswith("<frozen importlib") or fn.startswith("<frozen zipimport"):
                return None, None, True
            if fn == self._shutil_file and not event.startswith("shutil."):
                return None, None, True     # shutil reports its own event for the whole operation
            if fn == self._tempfile_file:
                return None, None, True     # tempfile's unique names (its own events make them scratch)
            if fn in self._tool_files or _MACHINERY.search(fn):
                # a debugger's or test runner's own files (pdb's ~/.pdbrc); the import system
                # scanning sys.path for distributions and entry points
                return None, None, True
            via = f
            f = f.f_back
        return None, None, False

    def _file_info(self, filename: str):
        info = self._files.get(filename, _MISSING)
        if info is _MISSING:
            info = None
            if filename and not filename.startswith("<"):
                absf = norm_path(filename)
                # code compiled in memory under a made-up name (a Mako template's "memory:0x7f..",
                # exec'd strings) is no file of the project, whatever the name resolves to
                if absf not in _OWN_FILES and os.path.isfile(absf):
                    kind, _ = self.roots.where(absf)
                    if kind == "project":
                        rel = os.path.relpath(absf, self.rootdir).replace(os.sep, "/")
                        info = (rel, bool(self.is_test_code(rel)))
            self._files[filename] = info
        return info

    # ---- events ------------------------------------------------------------------------

    def _add(self, category: str, judged: Judged, site, via) -> Dict[str, Any]:
        """Record one operation of the current test at ``site`` (its project frame; ``via`` the
        library frame it called, or None): a new event, or one more ``count`` of the same one."""
        operation, target, write, verdict, reason = judged
        log = self.current
        rel, _test_code = self._files[site.f_code.co_filename]
        line = site.f_lineno
        key = (self.phase, category, operation, target, write, rel, line, verdict)
        ev = log.events.get(key)
        if ev is not None:
            ev["count"] += 1
            return ev
        ev = {
            "test": log.nodeid,
            "phase": self.phase,
            "category": category,
            "code": CATEGORY_CODE[category],
            "operation": operation,
            "target": target,
            "access": "write" if write else "read",
            "verdict": verdict,
            "reason": reason,
            "path": rel,
            "line": line,
            "function": qualname(site),
            "via": qualname(via, module=True) if via is not None else None,
            "stack": self._stack(site),
            "count": 1,
        }
        if verdict == UNCONTROLLED and suppressed_at(site.f_code.co_filename, line, ev["code"]):
            ev["suppressed"] = True
        if len(log.order) >= MAX_EVENTS_PER_TEST and verdict != UNCONTROLLED:
            log.dropped += 1    # a cap on what is kept of the controlled ones; every violation is kept
            return ev
        log.events[key] = ev
        log.order.append(ev)
        return ev

    def _stack(self, site) -> List[Dict[str, Any]]:
        out = []
        f = site
        while f is not None and len(out) < MAX_STACK:
            info = self._file_info(f.f_code.co_filename)
            if info is not None:
                out.append({"path": info[0], "line": f.f_lineno, "function": qualname(f)})
            f = f.f_back
        return out

    # ---- enforce -----------------------------------------------------------------------

    def pending_violations(self, log: _TestLog) -> List[Dict[str, Any]]:
        """Uncontrolled events of ``log`` not yet reported; marks them reported."""
        out = []
        for i, ev in enumerate(log.order):
            if ev["verdict"] == UNCONTROLLED and not ev.get("suppressed") and i not in log.reported:
                log.reported.add(i)
                out.append(ev)
        return out

    # ---- the record ----------------------------------------------------------------------

    def to_record(self) -> Dict[str, Any]:
        events: List[Dict[str, Any]] = []
        tests = []
        for nodeid, log in self.tests.items():
            evs = sorted(log.order, key=event_order)
            events.extend(evs)
            if nodeid:
                tests.append({"nodeid": nodeid, "outcome": log.outcome, "events": sum(e["count"] for e in evs),
                              "uncontrolled": sum(e["count"] for e in evs if is_violation(e)),
                              "dropped": log.dropped})
        return {
            "version": RECORD_VERSION,
            "tool": {"name": "hermetic", "version": __version__},
            "kind": "hermetic-record",
            "rootdir": self.rootdir,
            "mode": self.mode,
            "worker": self.worker,
            "python": ".".join(str(v) for v in sys.version_info[:3]),
            "tests": tests,
            "events": events,
            "summary": summarize(events, len(tests), self.counts),
        }

    def write(self, path: str) -> None:
        """The record, as UTF-8 JSON, to ``path`` (through ``path.tmp``, removed if the write
        fails). A string no UTF-8 can hold (a file name with a lone surrogate, ``"\\udcff"``,
        as undecodable bytes in a name become) is written with that character escaped:
        ``\\udcff``, six characters."""
        text = json.dumps(self.to_record(), indent=1, ensure_ascii=False) + "\n"
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:
            data = json.dumps(_escaped(self.to_record()), indent=1, ensure_ascii=False).encode("utf-8") + b"\n"
        folder = os.path.dirname(path)
        if folder:
            os.makedirs(folder, exist_ok=True)
        tmp = path + ".tmp"
        try:
            with open(tmp, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.remove(tmp)
            raise


def _escaped(value: Any) -> Any:
    """``value`` with every string UTF-8 cannot encode written with backslash escapes."""
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {_escaped(k): _escaped(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_escaped(v) for v in value]
    return value
