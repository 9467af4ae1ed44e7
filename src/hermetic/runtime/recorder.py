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
Classification helpers are pure functions of explicit roots, so they are unit-testable.
"""
from __future__ import annotations

import datetime
import json
import os
import re
import sys
import threading
import time
from fnmatch import fnmatch
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

RECORD_VERSION = 1

#: contract category -> HT1xx rule code (section 4)
CATEGORY_CODE = {
    "connection": "HT101",
    "file": "HT102",
    "env": "HT103",
    "clock": "HT104",
    "network": "HT105",
    "subprocess": "HT106",
}

CONTROLLED = "controlled"
UNCONTROLLED = "uncontrolled"

PHASES = ("collect", "setup", "call", "teardown")

#: reads of these are system data (certificates, time zones, name service), not the test's I/O
SYSTEM_READS = (
    "/etc/ssl/", "/etc/pki/", "/etc/ca-certificates", "/usr/share/ca-certificates/", "/usr/lib/ssl/",
    "/usr/share/zoneinfo/", "/etc/localtime", "/etc/timezone", "/etc/mime.types", "/usr/share/mime/",
    "/etc/hosts", "/etc/resolv.conf", "/etc/nsswitch.conf", "/etc/gai.conf", "/etc/host.conf",
    "/etc/services", "/etc/protocols", "/etc/passwd", "/etc/group", "/proc/", "/sys/",
)
#: neither reads nor writes of these are I/O a test should control
DEVICES = ("/dev/",)

#: standard-library tools (debuggers, doctest, introspection, the unittest runner) whose own
#: I/O (rc and history files, source lookups) is machinery whoever calls them; I/O APIs
#: (open, pathlib, shutil, zipfile, sqlite3, socket, subprocess, ...) are not listed
TOOL_MODULES = ("pdb.py", "bdb.py", "doctest.py", "cmd.py", "code.py", "codeop.py", "rlcompleter.py",
                "pydoc.py", "linecache.py", "traceback.py", "inspect.py", "tokenize.py", "warnings.py",
                "site.py", "sysconfig.py", "trace.py", "profile.py", "cProfile.py", "pstats.py",
                "unittest/loader.py", "unittest/main.py", "unittest/runner.py")

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC

MAX_EVENTS_PER_TEST = 500
MAX_STACK = 12


class UncontrolledIO(PermissionError):
    """Raised in enforce mode (from the audit hook) to block an uncontrolled operation.

    A subclass of PermissionError, so the code under test sees what a sandbox would
    show it; swallowing it does not hide the violation: the test still fails at teardown.
    """


# --------------------------------------------------------------------------------------
# pure classification


class Roots:
    """The folders a path is judged by; the deepest one containing the path wins.

    kinds: ``tmp`` (pytest's temporary folders), ``scratch`` (made by ``tempfile`` during a
    test), ``machinery`` (the interpreter, site-packages), ``project`` (the rootdir),
    ``home`` (the home folder at session start).
    """

    def __init__(self, rootdir: str, home: str = "", tmp: Iterable[str] = (), machinery: Iterable[str] = ()):
        self.rootdir = _norm(rootdir)
        self._roots: List[Tuple[str, str]] = []
        self.scratch: set = set()
        self.add("project", rootdir)
        if home:
            self.add("home", home)
        for t in tmp:
            self.add("tmp", t)
        for m in machinery:
            self.add("machinery", m)

    def add(self, kind: str, path: str) -> None:
        if not path:
            return
        forms = {_norm(path)}
        try:
            forms.add(_norm(os.path.realpath(path)))
        except (OSError, ValueError):
            pass
        for f in forms:
            if (f, kind) not in self._roots:
                self._roots.append((f, kind))
        self._roots.sort(key=lambda r: -len(r[0]))

    def add_scratch(self, path: str) -> None:
        self.scratch.add(_norm(path))

    def where(self, path: str) -> Tuple[Optional[str], str]:
        """(kind, root) of the deepest root holding the normalised absolute ``path``."""
        best: Tuple[Optional[str], str] = (None, "")
        for root, kind in self._roots:
            if path == root or path.startswith(root.rstrip(os.sep) + os.sep):
                best = (kind, root)
                break
        if self.scratch:
            p = path
            while True:
                if p in self.scratch:
                    if len(p) > len(best[1]):
                        best = ("scratch", p)
                    break
                parent = os.path.dirname(p)
                if parent == p or len(parent) <= len(best[1]):
                    break
                p = parent
        return best

    def kinds(self) -> List[Tuple[str, str]]:
        return list(self._roots)


def _norm(path: str) -> str:
    return os.path.normpath(os.path.abspath(path))


def path_verdict(path: str, write: bool, roots: Roots, relative: Any = False,
                 test_code: bool = False) -> Optional[Tuple[str, str]]:
    """Classify a file access: (verdict, reason), or None for machinery (not recorded).

    ``path`` is absolute and normalised; ``relative`` says the code named it relative to
    the working directory (the path as written, when known); ``test_code`` that the site is
    a test, conftest or test helper.
    """
    if any(path == d.rstrip("/") or path.startswith(d) for d in DEVICES):
        return None
    kind, _root = roots.where(path)
    if kind in ("tmp", "scratch"):
        return CONTROLLED, "under the test's temporary folder"
    if kind == "machinery":
        return (UNCONTROLLED, "the Python installation (site-packages or the interpreter)") if write else None
    if kind == "project":
        if write:
            return UNCONTROLLED, "a write into the project tree"
        if relative and not test_code:
            named = f" {relative!r}" if isinstance(relative, str) else ""
            return UNCONTROLLED, (f"read by the code under test through the relative path{named}, which the "
                                  "working directory resolves (not chosen by the test)")
        return CONTROLLED, "a read of a file shipped with the project"
    if kind == "home":
        return UNCONTROLLED, "the home folder"
    if not write and any(path == s.rstrip("/") or path.startswith(s) for s in SYSTEM_READS):
        return None
    return UNCONTROLLED, "outside the project and the temporary folders"


def is_loopback(host: Any) -> bool:
    if host is None:
        return True
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    host = str(host).strip().lower().strip("[]")
    if host in ("", "localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback") or host.endswith(".localhost"):
        return True
    import ipaddress

    try:
        addr = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    if getattr(addr, "ipv4_mapped", None) is not None:
        addr = addr.ipv4_mapped
    return addr.is_loopback


def address_verdict(host: Any, port: Any, loopback_allowed: bool, own_ports: Sequence[int] = ()) -> Tuple[str, str]:
    """Classify a network peer (host, port)."""
    if is_loopback(host):
        if port in own_ports:
            return CONTROLLED, "a loopback server this test process started"
        if loopback_allowed:
            return CONTROLLED, "loopback (allowed by configuration)"
        return UNCONTROLLED, ("a loopback address with no server of this process on that port "
                              "(allow it with [tool.hermetic.controls] loopback = true or --hermetic-loopback)")
    return UNCONTROLLED, "another host"


def sqlite_target(database: Any) -> Tuple[str, Optional[str]]:
    """(shown target, file path or None when the database is in memory)."""
    if isinstance(database, bytes):
        database = os.fsdecode(database)
    db = os.fspath(database) if hasattr(database, "__fspath__") else str(database)
    if db in ("", ":memory:"):
        return db or "''", None
    if db.startswith("file:"):
        body, _, query = db[5:].partition("?")
        if body in ("", ":memory:") or "mode=memory" in query:
            return db, None
        return db, body
    return db, db


def test_code_matcher(python_files: Sequence[str], testpaths: Sequence[str]):
    """rel path -> whether it is test code (test modules, conftests, helpers beside them),
    as the static analysis decides it (project.discover's ``in_test_tree``)."""
    pats = list(python_files) or ["test_*.py", "*_test.py"]
    tps = [t.strip("/").replace(os.sep, "/") for t in testpaths if t]

    def match(rel: str) -> bool:
        name = rel.rsplit("/", 1)[-1]
        if name == "conftest.py":
            return True
        for pat in pats:
            if "/" in pat:
                if fnmatch(rel, pat) or fnmatch(rel, "*/" + pat):
                    return True
            elif fnmatch(name, pat):
                return True
        parts = rel.split("/")[:-1]
        if "tests" in parts or "test" in parts:
            return True
        return any(rel == t or rel.startswith(t + "/") for t in tps)

    return match


# --------------------------------------------------------------------------------------
# the audit hook (one per process) and the active recorder

_ACTIVE: Optional["Recorder"] = None
_HOOK_INSTALLED = False
_OWN_FILES = {os.path.abspath(__file__), os.path.join(os.path.dirname(os.path.abspath(__file__)), "plugin.py")}


def _audit(event: str, args: tuple) -> None:
    __tracebackhide__ = True
    rec = _ACTIVE
    if rec is None:
        return
    spec = _AUDIT.get(event)
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


def _fs(p: Any) -> Optional[str]:
    if isinstance(p, int) or p is None:
        return None
    try:
        return os.fsdecode(p)
    except TypeError:
        return None


# audit event -> (category, what its arguments are). File events: tuples of
# (argument index, write?, dir_fd index or None).
_FILE_EVENTS: Dict[str, Tuple[Tuple[int, bool, Optional[int]], ...]] = {
    "os.listdir": ((0, False, None),),
    "os.scandir": ((0, False, None),),
    "os.walk": ((0, False, None),),
    "os.fwalk": ((0, False, 3),),
    "glob.glob": ((0, False, None),),
    "glob.glob/2": ((0, False, 3),),
    "os.mkdir": ((0, True, 2),),
    "os.rmdir": ((0, True, 1),),
    "os.remove": ((0, True, 1),),
    "os.rename": ((0, True, 2), (1, True, 3)),
    "os.chmod": ((0, True, 2),),
    "os.chown": ((0, True, 3),),
    "os.chflags": ((0, True, None),),
    "os.truncate": ((0, True, None),),
    "os.utime": ((0, True, 3),),
    "os.link": ((0, False, 2), (1, True, 3)),
    "os.symlink": ((1, True, 2),),
    "os.setxattr": ((0, True, None),),
    "os.removexattr": ((0, True, None),),
    "os.getxattr": ((0, False, None),),
    "os.listxattr": ((0, False, None),),
    "shutil.copyfile": ((0, False, None), (1, True, None)),
    "shutil.copymode": ((0, False, None), (1, True, None)),
    "shutil.copystat": ((0, False, None), (1, True, None)),
    "shutil.copytree": ((0, False, None), (1, True, None)),
    "shutil.rmtree": ((0, True, 1),),
    "shutil.move": ((0, True, None), (1, True, None)),
    "shutil.chown": ((0, True, None),),
    "shutil.make_archive": ((0, True, None), (2, False, None)),
    "shutil.unpack_archive": ((0, False, None), (1, True, None)),
}
_PROC_EVENTS = {"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
                "os.forkpty", "os.startfile", "os.popen"}
_NET_EVENTS = {"socket.connect", "socket.sendto", "socket.getaddrinfo", "socket.gethostbyname",
               "socket.gethostbyaddr"}

_AUDIT: Dict[str, str] = {"open": "file", "sqlite3.connect": "connection", "socket.bind": "bind",
                          "os.putenv": "env-write", "os.unsetenv": "env-write",
                          "tempfile.mkstemp": "scratch", "tempfile.mkdtemp": "scratch"}
_AUDIT.update({e: "file" for e in _FILE_EVENTS})
_AUDIT.update({e: "subprocess" for e in _PROC_EVENTS})
_AUDIT.update({e: "network" for e in _NET_EVENTS})


def _module_file(mod) -> str:
    return os.path.abspath(getattr(mod, "__file__", "") or "")


class _TestLog:
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


class Recorder:
    """Records, classifies and (in enforce mode) blocks the I/O of the running tests."""

    def __init__(self, rootdir: str, mode: str = "record", block: bool = True, loopback: bool = False,
                 roots: Optional[Roots] = None, env_snapshot: Optional[Dict[Any, Any]] = None,
                 test_code=None, clock_remove: Iterable[str] = (), worker: Optional[str] = None,
                 record_path: str = ""):
        import shutil
        import tempfile
        from _collections_abc import Mapping

        self.rootdir = _norm(rootdir)
        self.mode = mode
        self.block = block and mode == "enforce"
        self.loopback = loopback
        self.roots = roots if roots is not None else Roots(rootdir)
        self.env_snapshot = dict(env_snapshot or {})
        self.is_test_code = test_code or test_code_matcher((), ())
        self.worker = worker
        self.record_path = record_path
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
        self.clocks = _clock_functions(clock_remove)
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

    # ---- the profiler: clock and environment reads -------------------------------------

    def _make_profiler(self, chained):
        clocks = self.clocks
        getitem = self._getitem
        mp_codes = self._mp_codes
        sock_close = self._sock_close
        clock_read = self.clock_read
        env_read = self.env_read
        monkeypatched = self.monkeypatched
        socket_closed = self.socket_closed

        def prof(frame, event, arg):
            if event == "c_call":
                try:
                    name = clocks.get(arg)
                except TypeError:
                    name = None
                if name is not None:
                    clock_read(frame, name)
            elif event == "call":
                code = frame.f_code
                if code is getitem:
                    env_read(frame)
                elif code in mp_codes:
                    monkeypatched(frame, mp_codes[code])
                elif code is sock_close:
                    socket_closed(frame)
            if chained is not None:
                chained(frame, event, arg)

        return prof

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

    def clock_read(self, frame, name: str) -> None:
        tid = threading.get_ident()
        self._busy.add(tid)     # what this handler itself opens (linecache) is not the test's I/O
        try:
            info = self._file_info(frame.f_code.co_filename)
            if info is None:
                self.counts["indirect"] += 1
                return
            reason = "the real clock"
            if _clock_substituted():
                reason += (" (a substitute is installed, but this call reached the real clock through a "
                           "binding captured before it)")
            ev = self._add("clock", name, "", False, UNCONTROLLED, reason, frame, None)
            if "binding" not in ev:
                ev["binding"] = self._clock_binding(frame, name)
        except Exception:
            self.counts["internal_errors"] += 1
        finally:
            self._busy.discard(tid)

    def _clock_binding(self, frame, name: str) -> str:
        """``"name"`` when the site's line calls the clock by its own name (``time.time()``,
        ``datetime.now()``, ``from time import time; time()``), else ``"captured"``: a binding
        made earlier (``clock = time.time``, ``def f(now=time.monotonic)``, ``partial(...)``),
        which the static analysis reports at the capture (HT204), not at this call."""
        import linecache

        line = linecache.getline(frame.f_code.co_filename, frame.f_lineno)
        short = name.rsplit(".", 1)[-1]
        return "name" if re.search(r"(?<![\w])" + re.escape(short) + r"\s*\(", line) else "captured"

    def env_read(self, frame) -> None:
        tid = threading.get_ident()
        self._busy.add(tid)
        try:
            key = frame.f_locals.get("key")
            f = frame.f_back
            outer = None        # the os / collections.abc function the project code called
            while f is not None and f.f_code.co_filename in self._env_files:
                outer = f.f_code.co_name
                f = f.f_back
            if f is None:
                return
            if outer is None:
                # called straight from the project frame: os.environ[k], or a C function
                # walking the whole mapping (dict(os.environ), {**os.environ})
                op = "os.environ[...]" if _subscripting(f) else None
            else:
                op = _BY_NAME.get(outer)
            if op is None:
                # a copy, comparison, clear() or iteration of the whole environment: a snapshot,
                # not a read of a variable (the static analysis agrees)
                self.counts["env_snapshots"] = self.counts.get("env_snapshots", 0) + 1
                return
            info = self._file_info(f.f_code.co_filename)
            if info is None:
                self.counts["indirect"] += 1
                return
            if isinstance(key, bytes):
                key = key.decode("utf-8", "replace")
            key = str(key)
            verdict, reason = self._env_verdict(key)
            self._add("env", op, key, False, verdict, reason, f, None)
        except Exception:
            self.counts["internal_errors"] += 1
        finally:
            self._busy.discard(tid)

    def monkeypatched(self, frame, what: str) -> None:
        """A MonkeyPatch (function, class, module or session scope, ``MonkeyPatch.context()``)
        about to set, delete or undo: remember which ones hold environment variables."""
        try:
            loc = frame.f_locals
            mp = loc.get("self")
            if what == "undo":
                self._mp_absent.pop(mp, None)
                return
            if loc.get("dic") is not os.environ:
                return
            name = str(loc.get("name"))
            self._mps.add(mp)
            if what == "delitem" and name not in os.environ:
                # deleting an absent variable unsets nothing (no audit event) and leaves no
                # trace in the MonkeyPatch: it still controls reads of that name until undone
                self._mp_absent.setdefault(mp, set()).add(name)
                if self.current is not None:
                    self.current.env_written[name] = "test"
        except Exception:
            self.counts["internal_errors"] += 1

    def _monkeypatch_holds(self, key: str) -> bool:
        for names in list(self._mp_absent.values()):
            if key in names:
                return True
        env = os.environ
        for mp in list(self._mps):
            for entry in list(getattr(mp, "_setitem", ())):
                if entry[0] is env and entry[1] == key:
                    return True
        return False

    def socket_closed(self, frame) -> None:
        try:
            self._own_ports()      # remembers the ports of the sockets still open, this one included
        except Exception:
            self.counts["internal_errors"] += 1

    def _env_verdict(self, key: str) -> Tuple[str, str]:
        log = self.current
        who = log.env_written.get(key) if log is not None else None
        if who is not None:
            return CONTROLLED, _ENV_WHO.get(who, who)
        if self._monkeypatch_holds(key):
            return CONTROLLED, ("set or deleted through monkeypatch by the test or one of its fixtures "
                                "(any scope), not undone yet")
        if log is not None and log.cleared:
            return CONTROLLED, "the test cleared the environment"
        if self._env_data is not None and self._encodekey is not None:
            try:
                ek = self._encodekey(key)
            except Exception:
                ek = None
            if ek is not None and self._env_data.get(ek) != self.env_snapshot.get(ek):
                return CONTROLLED, "not the real environment's value (set by session configuration or earlier test code)"
        return UNCONTROLLED, "the real environment"

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
                       f"in {_qualname(site)}): not the real environment's value")
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
            p = _fs(args[0])
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
        operation, target, write, verdict, reason = judged
        category = "file" if kind == "file" else kind
        if verdict == UNCONTROLLED and category in log.allow:
            verdict, reason = CONTROLLED, "an integration test allowed to reach real services ([tool.hermetic.integration])"
        ev = self._add(category, operation, target, write, verdict, reason, site, via)
        if verdict == UNCONTROLLED and self.block and self.phase != "collect" and not ev.get("suppressed"):
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
            if fn in self._tool_files:
                return None, None, True     # a debugger's or test runner's own files (pdb's ~/.pdbrc)
            via = f
            f = f.f_back
        return None, None, False

    def _file_info(self, filename: str):
        info = self._files.get(filename, _MISSING)
        if info is _MISSING:
            info = None
            if filename and not filename.startswith("<"):
                absf = _norm(filename)
                if absf not in _OWN_FILES:
                    kind, _ = self.roots.where(absf)
                    if kind == "project":
                        rel = os.path.relpath(absf, self.rootdir).replace(os.sep, "/")
                        info = (rel, bool(self.is_test_code(rel)))
            self._files[filename] = info
        return info

    def _resolve(self, raw: Any, args: tuple, dir_fd_index: Optional[int]) -> Optional[Tuple[str, bool]]:
        p = _fs(raw)
        if p is None:
            return None
        if os.path.isabs(p):
            return _norm(p), False
        base = None
        if dir_fd_index is not None and dir_fd_index < len(args):
            fd = args[dir_fd_index]
            if isinstance(fd, int) and fd >= 0:
                try:
                    base = os.readlink(f"/proc/self/fd/{fd}")
                except OSError:
                    return None
        if base is None:
            base = os.getcwd()
            return _norm(os.path.join(base, p)), True
        return _norm(os.path.join(base, p)), False

    def _judge_paths(self, items, test_code, site=None):
        worst = None
        shown = []
        any_write = False
        for path, write, relative in items:
            any_write = any_write or write
            shown.append(path)
            res = path_verdict(path, write, self.roots, relative=relative, test_code=test_code)
            if res is None:
                continue
            if write and self.roots.where(path)[0] == "project":
                # an existing folder (mkdir(exist_ok=True), chmod) is not made or filled by the
                # operation: what it holds is still shipped; a new folder or any file is written
                if not os.path.isdir(path):
                    self.project_writes.add(path)
            elif relative and res[0] == UNCONTROLLED and site is not None and self.roots.where(path)[0] == "project":
                chosen = self._test_data(path, site)
                if chosen is not None:
                    res = CONTROLLED, chosen
                elif os.path.exists(path) and self._written_this_run(path):
                    named = f" {relative!r}" if isinstance(relative, str) else ""
                    res = UNCONTROLLED, (f"read by the code under test through the relative path{named}, "
                                         "which this run wrote into the project (not data shipped with it)")
            if worst is None or (res[0] == UNCONTROLLED and worst[0] != UNCONTROLLED):
                worst = res
        if worst is None:
            return None
        return " -> ".join(shown), any_write, worst[0], worst[1]

    def _written_this_run(self, path: str) -> bool:
        """``path`` or a folder holding it was written (made) in the project during the session."""
        p = path
        while len(p) >= len(self.rootdir):
            if p in self.project_writes:
                return True
            parent = os.path.dirname(p)
            if parent == p:
                break
            p = parent
        return False

    def _test_data(self, path: str, site) -> Optional[str]:
        """Why a relative read in the project by the code under test is shipped data the test
        chose (contract V1: a literal chosen in test code naming shipped data), or None.

        The path must exist and not have been written during the session; then either it
        lies in the test tree (only the test can have pointed the code there), or a string
        literal of a test file on the stack names it or a folder holding it."""
        if not os.path.exists(path):
            return None
        if self._written_this_run(path):
            return None
        rel = os.path.relpath(path, self.rootdir).replace(os.sep, "/")
        if self.is_test_code(rel):
            return "a relative read of data shipped with the tests"
        forms = {rel}
        try:
            forms.add(os.path.relpath(path, os.getcwd()).replace(os.sep, "/"))
        except (OSError, ValueError):
            pass
        for filename, test_rel in self._test_files_on_stack(site):
            lits = self._path_literals(filename)
            for form in forms:
                parts = form.split("/")
                for n in range(len(parts), 0, -1):
                    if "/".join(parts[:n]) in lits:
                        return f"a relative read of shipped data named in test code ({test_rel})"
        return None

    def _path_literals(self, filename: str) -> set:
        lits = self._literals.get(("lit", filename))
        if lits is None:
            import ast

            lits = set()
            try:
                tree = ast.parse(self._source(filename))
            except (SyntaxError, ValueError):
                tree = None
            for node in ast.walk(tree) if tree is not None else ():
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and 0 < len(node.value) < 300:
                    v = node.value.strip()
                    if v and not os.path.isabs(v) and "\n" not in v:
                        v = os.path.normpath(v).replace(os.sep, "/")
                        if v not in (".", "..") and not v.startswith("../"):
                            lits.add(v)
            self._literals[("lit", filename)] = lits
        return lits

    def _judge_file(self, event: str, args: tuple, test_code: bool, site=None):
        if event == "open":
            raw = _fs(args[0])
            if raw is None or (raw.startswith("<") and raw.endswith(">")):
                return None     # a pseudo-file: the interpreter looking for the source of "<unknown>"
            resolved = self._resolve(raw, args, None)
            if resolved is None:
                return None
            mode, flags = (args[1] if len(args) > 1 else None), (args[2] if len(args) > 2 else 0)
            if isinstance(flags, int) and flags:
                write = bool(flags & _WRITE_FLAGS)
            else:
                write = bool(mode) and any(c in str(mode) for c in "wax+")
            judged = self._judge_paths([(resolved[0], write, raw if resolved[1] else False)], test_code, site)
        else:
            items = []
            for idx, write, fd_idx in _FILE_EVENTS[event]:
                if idx >= len(args):
                    continue
                raw = args[idx]
                if raw is None and event in ("os.listdir", "os.scandir"):
                    raw = "."
                resolved = self._resolve(raw, args, fd_idx)
                if resolved is not None:
                    items.append((resolved[0], write, (_fs(raw) or True) if resolved[1] else False))
            if not items:
                return None
            judged = self._judge_paths(items, test_code, site)
        if judged is None:
            return None
        target, write, verdict, reason = judged
        return event, target, write, verdict, reason

    def _judge_sqlite(self, args: tuple, test_code: bool):
        shown, path = sqlite_target(args[0] if args else "")
        if path is None:
            return "sqlite3.connect", shown, False, CONTROLLED, "an in-memory database"
        resolved = self._resolve(path, (), None)
        if resolved is None:
            return None
        res = path_verdict(resolved[0], True, self.roots, relative=resolved[1], test_code=test_code)
        if res is None:
            return None
        return "sqlite3.connect", resolved[0], True, res[0], res[1]

    def _judge_network(self, event: str, args: tuple, test_code: bool, site=None):
        if event in ("socket.connect", "socket.sendto"):
            address = args[1]
            if isinstance(address, (str, bytes)):      # a unix socket: judged by its path
                p = _fs(address)
                if not p or p.startswith("\0"):
                    return event, repr(address), True, UNCONTROLLED, "an abstract unix socket"
                resolved = self._resolve(p, (), None)
                res = path_verdict(resolved[0], True, self.roots, relative=resolved[1], test_code=test_code)
                if res is None:
                    return None
                return event, resolved[0], True, res[0], res[1]
            if not isinstance(address, tuple) or len(address) < 2:
                return event, repr(address), True, UNCONTROLLED, "another host"
            host, port = address[0], address[1]
        elif event == "socket.getaddrinfo":
            host, port = args[0], args[1]
        else:
            host, port = args[0], None
        if isinstance(host, bytes):
            host = host.decode("ascii", "replace")
        target = f"{host}:{port}" if port not in (None, 0) else str(host)
        if is_loopback(host):
            own = self._own_ports()
            if port not in own and port in self.bound_ports:
                return event, target, True, CONTROLLED, "a loopback server this test process started (closed since)"
            if port not in own and not self.loopback:
                if test_code:
                    return event, target, True, CONTROLLED, "a loopback target written in test code"
                named = self._loopback_chosen_in_test_code(site, host, port)
                if named is not None:
                    return event, target, True, CONTROLLED, f"a loopback target chosen in test code ({named})"
            verdict, reason = address_verdict(host, port, self.loopback, own)
        else:
            verdict, reason = address_verdict(host, port, self.loopback, ())
        return event, target, True, verdict, reason

    def _judge_process(self, event: str, args: tuple, test_code: bool):
        if event == "subprocess.Popen":
            argv = args[1] if len(args) > 1 and args[1] is not None else args[0]
        elif event in ("os.system", "os.popen"):
            argv = args[0] if args else ""
        elif event in ("os.exec", "os.posix_spawn"):
            argv = args[1] if len(args) > 1 else args[0]
        elif event == "os.spawn":
            argv = args[2] if len(args) > 2 else args[1]
        else:
            argv = ""
        if isinstance(argv, (list, tuple)):
            target = " ".join(os.fsdecode(a) if isinstance(a, (bytes, os.PathLike)) else str(a) for a in argv)
        else:
            target = os.fsdecode(argv) if isinstance(argv, (bytes, os.PathLike)) else str(argv)
        if len(target) > 200:
            target = target[:197] + "..."
        if test_code:
            return event, target, True, CONTROLLED, "a subprocess the test starts itself"
        return event, target, True, UNCONTROLLED, "a real subprocess started by the code under test"

    def _remember_listener(self, sock) -> None:
        import weakref

        if self._listeners is None:
            self._listeners = weakref.WeakSet()
        try:
            self._listeners.add(sock)
        except TypeError:
            pass

    def _own_ports(self) -> List[int]:
        """Ports bound by sockets of this process that are open now; each is also remembered
        in ``bound_ports`` (a server the test started keeps its port once it closed)."""
        ports = []
        for s in list(self._listeners or ()):
            try:
                if s.fileno() != -1:
                    name = s.getsockname()
                    if isinstance(name, tuple) and len(name) >= 2 and name[1]:
                        ports.append(name[1])
                        self.bound_ports.add(name[1])
            except OSError:
                continue
        return ports

    def _loopback_chosen_in_test_code(self, site, host: Any, port: Any) -> Optional[str]:
        """The rootdir-relative test file on the stack that names this loopback target as a
        literal (``"http://localhost:1"``, ``("127.0.0.1", 8080)``), or None."""
        try:
            port = int(port)        # getaddrinfo takes "8080", or a service name
        except (TypeError, ValueError):
            return None
        if not port:
            return None
        pat = re.compile(r"(?:localhost|127(?:\.\d{1,3}){3}|::1\]?)(?:\s*:\s*|['\"]\s*,\s*)" + str(port) + r"(?!\d)",
                         re.I)
        for filename, rel in self._test_files_on_stack(site):
            if pat.search(self._source(filename)):
                return rel
        return None

    def _test_files_on_stack(self, site):
        seen = set()
        f = site
        while f is not None:
            fn = f.f_code.co_filename
            info = self._file_info(fn)
            if info is not None and info[1] and fn not in seen:
                seen.add(fn)
                yield fn, info[0]
            f = f.f_back

    def _source(self, filename: str) -> str:
        text = self._literals.get(("src", filename))
        if text is None:
            import linecache

            text = self._literals[("src", filename)] = "".join(linecache.getlines(filename))
        return text

    # ---- events ------------------------------------------------------------------------

    def _add(self, category: str, operation: str, target: str, write: bool, verdict: str, reason: str,
             site, via) -> Dict[str, Any]:
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
            "function": _qualname(site),
            "via": _qualname(via, module=True) if via is not None else None,
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
                out.append({"path": info[0], "line": f.f_lineno, "function": _qualname(f)})
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
        from .. import __version__

        events: List[Dict[str, Any]] = []
        tests = []
        for nodeid, log in self.tests.items():
            evs = sorted(log.order, key=_event_order)
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
        data = self.to_record()
        folder = os.path.dirname(path)
        if folder:
            os.makedirs(folder, exist_ok=True)
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=1, ensure_ascii=False)
            fh.write("\n")
        os.replace(tmp, path)


_MISSING = object()

#: the os / collections.abc function project code called -> the read of one variable by name
_BY_NAME = {"getenv": "os.getenv", "get": "os.environ.get", "__contains__": "in os.environ",
            "setdefault": "os.environ.setdefault", "pop": "os.environ.pop"}
#: opcodes by which C code walks a whole mapping (dict(m), {**m}, f(**m))
_WHOLE_MAPPING_OPS = ("CALL", "PRECALL", "DICT_UPDATE", "DICT_MERGE", "BUILD_MAP_UNPACK")

_ENV_WHO = {
    "test": "set or deleted by the test or its fixtures (monkeypatch, patch.dict, os.environ)",
    "plugin": "set or deleted during this test by pytest or a plugin (no project code on the stack)",
}


def _subscripting(frame) -> bool:
    """Whether ``frame`` is executing a subscript (``os.environ[k]``) rather than handing the
    whole mapping to a C function."""
    import dis

    try:
        name = dis.opname[frame.f_code.co_code[frame.f_lasti]]
    except (IndexError, AttributeError):
        return True
    return not name.startswith(_WHOLE_MAPPING_OPS)


_SUPPRESS = re.compile(r"#\s*hermetic:\s*ignore(?:\[([A-Za-z0-9_,\s]+)\])?", re.I)


def suppressed_at(filename: str, line: int, code: str) -> bool:
    """Whether the source line carries an inline ``# hermetic: ignore[CODE]`` (the static
    check's syntax) that covers ``code``: the runtime honours what the static check does."""
    import linecache

    m = _SUPPRESS.search(linecache.getline(filename, line))
    if m is None:
        return False
    if not m.group(1):
        return True
    codes = [c.strip().upper() for c in m.group(1).split(",") if c.strip()]
    return any(code.startswith(c) for c in codes)


def _event_order(ev: Dict[str, Any]):
    return (PHASES.index(ev["phase"]) if ev["phase"] in PHASES else 9, ev["path"], ev["line"], ev["code"],
            ev["operation"], ev["target"], ev["verdict"])


def _qualname(frame, module: bool = False) -> str:
    code = frame.f_code
    name = getattr(code, "co_qualname", code.co_name)
    if module:
        mod = frame.f_globals.get("__name__") or ""
        return f"{mod}.{name}" if mod else name
    return name


_REAL_CLOCKS: Dict[str, Any] = {}


def _clock_functions(remove: Iterable[str] = ()) -> Dict[Any, str]:
    table = {
        "time.time": time.time,
        "time.time_ns": time.time_ns,
        "time.monotonic": time.monotonic,
        "time.monotonic_ns": time.monotonic_ns,
        "time.perf_counter": time.perf_counter,
        "time.perf_counter_ns": time.perf_counter_ns,
        "time.clock_gettime": getattr(time, "clock_gettime", None),
        "time.clock_gettime_ns": getattr(time, "clock_gettime_ns", None),
        "datetime.datetime.now": datetime.datetime.now,
        "datetime.datetime.utcnow": datetime.datetime.utcnow,
        "datetime.datetime.today": datetime.datetime.today,
        "datetime.date.today": datetime.date.today,
    }
    if not _REAL_CLOCKS:
        _REAL_CLOCKS.update({"time": time.time, "datetime": datetime.datetime})
    removed = set(remove)
    return {fn: name for name, fn in table.items() if fn is not None and name not in removed}


def _clock_substituted() -> bool:
    return time.time is not _REAL_CLOCKS.get("time") or datetime.datetime is not _REAL_CLOCKS.get("datetime")


def describe_event(ev: Dict[str, Any]) -> str:
    """One line: 'HT102 file write /x (the home folder) at src/m.py:12 in f'."""
    what = {"file": f"file {ev['access']}", "connection": "database connection", "env": "environment read",
            "clock": "clock read", "network": "network access", "subprocess": "subprocess"}[ev["category"]]
    target = f" {ev['target']!r}" if ev["category"] == "env" else (f" {ev['target']}" if ev["target"] else "")
    via = f" via {ev['via']}" if ev.get("via") else ""
    return (f"{ev['code']} uncontrolled {what}{target} ({ev['reason']}): {ev['operation']}{via} "
            f"at {ev['path']}:{ev['line']} in {ev['function']}")


def format_violations(nodeid: str, events: Sequence[Dict[str, Any]]) -> str:
    """The enforce-mode failure text: each operation with its project stack."""
    lines = [f"hermetic: {nodeid} performed uncontrolled I/O ({len(events)} operation"
             f"{'' if len(events) == 1 else 's'}):"]
    for ev in events:
        times = f" [{ev['count']} times]" if ev.get("count", 1) > 1 else ""
        lines.append(f"  {describe_event(ev)} [{ev['phase']}]{times}")
        for step in ev.get("stack", [])[1:]:
            lines.append(f"      called from {step['path']}:{step['line']} in {step['function']}")
    lines.append("  (recorded when it happened; the test fails even if the code swallowed the error. "
                 "Control it with tmp_path, monkeypatch or a freeze, or see `hermetic explain <code>`.)")
    return "\n".join(lines)


def is_violation(ev: Dict[str, Any]) -> bool:
    """Uncontrolled and not suppressed inline."""
    return ev.get("verdict") == UNCONTROLLED and not ev.get("suppressed")


def summarize(events: Sequence[Dict[str, Any]], tests: int, counts: Optional[Dict[str, int]] = None) -> Dict[str, Any]:
    by_cat: Dict[str, Dict[str, int]] = {}
    for ev in events:
        c = by_cat.setdefault(ev["category"], {"events": 0, "uncontrolled": 0})
        c["events"] += ev["count"]
        if is_violation(ev):
            c["uncontrolled"] += ev["count"]
    out: Dict[str, Any] = {
        "tests": tests,
        "events": sum(e["count"] for e in events),
        "distinct_events": len(events),
        "uncontrolled": sum(e["count"] for e in events if is_violation(e)),
        "suppressed": sum(e["count"] for e in events if e.get("suppressed")),
        "by_category": {k: by_cat[k] for k in sorted(by_cat)},
    }
    for k, v in sorted((counts or {}).items()):
        out[k] = v
    return out


# --------------------------------------------------------------------------------------
# records on disk


class RecordError(Exception):
    """A record file that cannot be read; the message is one line."""


def worker_record_path(path: str, worker: Optional[str]) -> str:
    """``hermetic-record.json`` -> ``hermetic-record-gw0.json`` for xdist worker ``gw0``."""
    if not worker:
        return path
    stem, ext = os.path.splitext(path)
    return f"{stem}-{worker}{ext or '.json'}"


def load_record(path: str) -> Dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except OSError as exc:
        raise RecordError(f"{path}: cannot read the record: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise RecordError(f"{path}: not a JSON record: {exc}") from None
    if not isinstance(data, dict) or data.get("kind") != "hermetic-record" or not isinstance(data.get("events"), list):
        raise RecordError(f"{path}: not a hermetic record (write one with pytest --hermetic=record)")
    if data.get("version") != RECORD_VERSION:
        raise RecordError(f"{path}: record version {data.get('version')!r}, expected {RECORD_VERSION}")
    return data


def merge(records: Sequence[Dict[str, Any]]) -> Dict[str, Any]:
    """One record from several (xdist workers, split runs of one project).

    Events of a test that ran in several records are kept side by side (their counts are
    not added: they are different runs). All records must share a rootdir.
    """
    if not records:
        raise RecordError("no records to merge")
    roots = {r.get("rootdir") for r in records}
    if len(roots) > 1:
        raise RecordError(f"records from different rootdirs cannot be merged: {', '.join(sorted(map(str, roots)))}")
    first = records[0]
    if len(records) == 1:
        return first
    tests: Dict[str, Dict[str, Any]] = {}
    events: List[Dict[str, Any]] = []
    counts: Dict[str, int] = {}
    for r in records:
        for t in r.get("tests", []):
            tests.setdefault(t["nodeid"], t)
        events.extend(r.get("events", []))
        for k, v in (r.get("summary") or {}).items():
            if k in ("ignored", "indirect", "internal_errors", "profiler_conflicts", "env_snapshots") and isinstance(v, int):
                counts[k] = counts.get(k, 0) + v
    events.sort(key=lambda e: (e.get("test", ""),) + _event_order(e))
    modes = sorted({str(r.get("mode")) for r in records})
    return {
        "version": RECORD_VERSION,
        "tool": first.get("tool"),
        "kind": "hermetic-record",
        "rootdir": first.get("rootdir"),
        "mode": modes[0] if len(modes) == 1 else "mixed",
        "worker": None,
        "workers": sorted(str(r.get("worker")) for r in records if r.get("worker")),
        "python": first.get("python"),
        "tests": [tests[k] for k in sorted(tests)],
        "events": events,
        "summary": summarize(events, len(tests), counts),
    }
