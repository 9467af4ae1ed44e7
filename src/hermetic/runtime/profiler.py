"""What the recorder's profile function sees: clock reads and environment reads.

``ProfileReads`` is the half of ``Recorder`` (``hermetic.runtime.recorder``) behind
``sys.setprofile``: ``_make_profiler`` builds the profile function, which hands ``c_call``
events of the real clock functions to ``clock_read``, ``call`` events of
``os._Environ.__getitem__`` to ``env_read``, of ``MonkeyPatch`` setitem, delitem and undo to
``monkeypatched``, of ``socket.close`` to ``socket_closed``, and existence checks and stats
(``os.path.exists``, ``Path.is_file``, ``os.stat``, ``os.access``: no audit event) to
``stat_read``. It works on the state
``Recorder.__init__`` sets (``current``, ``counts``, ``env_snapshot``, the MonkeyPatch sets)
and the recorder's ``_add`` and ``_file_info``; the environment read's verdict is here
(``_env_verdict``), every other verdict is the audit hook's (``hermetic.runtime.audit``).
"""
from __future__ import annotations

import datetime
import os
import re
import threading
import time
from typing import Any, Dict, Iterable, Tuple

from .events import Judged
from .verdicts import CONTROLLED, UNCONTROLLED

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


_REAL_CLOCKS: Dict[str, Any] = {}


def clock_functions(remove: Iterable[str] = ()) -> Dict[Any, str]:
    """The real clock functions the profiler watches -> their dotted names, less those named in
    ``remove`` (``[tool.hermetic] sinks remove``); remembers the real ``time.time`` and
    ``datetime.datetime`` on first use, to tell a substitute installed later."""
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


def stat_functions() -> Tuple[Dict[Any, str], Dict[Any, str]]:
    """The existence checks and stats the profiler watches, which raise no audit event:
    ``(code object of a Python function -> its name, C function -> its name)``. The Python
    ones (``os.path.exists``, ``Path.exists``, ...) give their path argument to the profiler;
    the C ones (``os.stat``, ``os.lstat``, ``os.access``) are recorded only when project code
    calls them itself (their argument is then read off the call's source line)."""
    import genericpath
    import pathlib
    import posixpath

    codes: Dict[Any, str] = {}
    for mod, name, names in ((genericpath, "os.path", ("exists", "isfile", "isdir", "getsize", "getmtime",
                                                       "getatime", "getctime")),
                             (posixpath, "os.path", ("lexists", "islink")),
                             (pathlib.Path, "pathlib.Path", ("exists", "is_file", "is_dir", "is_symlink", "stat",
                                                             "lstat"))):
        for fn in names:
            code = getattr(getattr(mod, fn, None), "__code__", None)
            if code is not None:
                codes.setdefault(code, f"{name}.{fn}")
    cfuncs = {getattr(os, fn): f"os.{fn}" for fn in ("stat", "lstat", "access") if hasattr(os, fn)}
    return codes, cfuncs


#: ``os.stat(p``, ``os.access(self.path`` ...: the argument of a C stat call read off its line
_STAT_ARG = re.compile(r"\b(?:stat|lstat|access)\(\s*([A-Za-z_][\w.]*)\s*[,)]")


def _clock_substituted() -> bool:
    # a freezer (freezegun, time-machine) replaced the module attributes
    return time.time is not _REAL_CLOCKS.get("time") or datetime.datetime is not _REAL_CLOCKS.get("datetime")


class ProfileReads:
    """The profiler's handlers, a base of ``Recorder`` (the attributes they use are its)."""

    def _make_profiler(self, chained):
        clocks = self.clocks
        getitem = self._getitem
        mp_codes = self._mp_codes
        sock_close = self._sock_close
        clock_read = self.clock_read
        env_read = self.env_read
        monkeypatched = self.monkeypatched
        socket_closed = self.socket_closed
        stat_codes, stat_cfuncs = self._stat_codes, self._stat_cfuncs
        stat_read = self.stat_read

        def prof(frame, event, arg):
            if event == "c_call":
                try:
                    name = clocks.get(arg)
                    sname = stat_cfuncs.get(arg) if name is None else None
                except TypeError:
                    name = sname = None
                if name is not None:
                    clock_read(frame, name)
                elif sname is not None:
                    stat_read(frame, sname, None)
            elif event == "call":
                code = frame.f_code
                if code is getitem:
                    env_read(frame)
                elif code in stat_codes:
                    stat_read(frame.f_back, stat_codes[code], frame)
                elif code in mp_codes:
                    monkeypatched(frame, mp_codes[code])
                elif code is sock_close:
                    socket_closed(frame)
            if chained is not None:
                chained(frame, event, arg)

        return prof

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
            ev = self._add("clock", Judged(name, "", False, UNCONTROLLED, reason), frame, None)
            if "binding" not in ev:
                ev["binding"] = self._clock_binding(frame, name)
        except Exception:
            self.counts["internal_errors"] += 1
        finally:
            self._busy.discard(tid)

    def stat_read(self, site, name: str, callee) -> None:
        """An existence check or stat called by project code at ``site``: ``callee`` is the
        frame of the Python function called (its first argument is the path), None for a C
        function (the argument is read off the source line: a name or attribute chain, never
        evaluated beyond lookups; anything else is counted ``indirect``)."""
        tid = threading.get_ident()
        if site is None or tid in self._busy or self.current is None:
            return
        self._busy.add(tid)
        try:
            info = self._file_info(site.f_code.co_filename)
            if info is None:
                return      # a library's own check (importlib, linecache, shutil ...): not a project sink
            if callee is not None:
                varnames = callee.f_code.co_varnames
                raw = callee.f_locals.get(varnames[0]) if varnames else None
            else:
                raw = self._stat_argument(site)
            try:
                raw = os.fspath(raw) if raw is not None else None
            except TypeError:
                raw = None
            resolved = self._resolve(raw, (), None) if raw is not None else None
            if resolved is None:
                self.counts["indirect"] += 1
                return
            judged = self._judge_paths([(resolved[0], False, raw if resolved[1] else False)], info[1], site)
            if judged is None:
                return
            target, _write, verdict, reason = judged
            if verdict == UNCONTROLLED and "file" in self.current.allow:
                verdict, reason = CONTROLLED, "an integration test allowed to reach real services ([tool.hermetic.integration])"
            self._add("file", Judged(name, target, False, verdict, reason), site, callee)
        except Exception:
            self.counts["internal_errors"] += 1
        finally:
            self._busy.discard(tid)

    def _stat_argument(self, site):
        """The path a C stat call on ``site``'s line names: ``os.stat(p)``, ``os.access(self.path,
        ...)``, looked up in the frame; None when the line says something else."""
        import builtins
        import linecache

        m = _STAT_ARG.search(linecache.getline(site.f_code.co_filename, site.f_lineno))
        if m is None:
            return None
        head, *rest = m.group(1).split(".")
        scopes = (site.f_locals, site.f_globals, vars(builtins))
        value = next((sc[head] for sc in scopes if head in sc), None)
        for attr in rest:
            if value is None:
                break
            value = getattr(value, attr, None)   # attribute lookups only: no call is made
        return value if isinstance(value, (str, bytes, os.PathLike)) else None

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
            if op == "os.environ.pop" and self.phase == "teardown":
                # os.environ.pop(K, None) after the test: putting the environment back (a write,
                # a restore), whatever value it hands back
                self.counts["env_restores"] = self.counts.get("env_restores", 0) + 1
                return
            if isinstance(key, bytes):
                key = key.decode("utf-8", "replace")
            key = str(key)
            verdict, reason = self._env_verdict(key)
            self._add("env", Judged(op, key, False, verdict, reason), f, None)
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
