"""What the recorder's profile function sees: clock reads and environment reads.

``ProfileReads`` is the half of ``Recorder`` (``hermetic.runtime.recorder``) behind
``sys.setprofile``: ``_make_profiler`` builds the profile function, which hands ``c_call``
events of the real clock functions to ``clock_read``, ``call`` events of
``os._Environ.__getitem__`` to ``env_read``, of ``MonkeyPatch`` setitem, delitem and undo to
``monkeypatched``, and of ``socket.close`` to ``socket_closed``. It works on the state
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
