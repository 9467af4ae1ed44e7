"""The audit hook's events and their verdicts: files, sqlite connections, network, subprocesses.

``AUDIT_EVENTS`` names the PEP 578 audit events the recorder listens to and the kind of each
(``file``, ``connection``, ``network``, ``subprocess``, and ``env-write``, ``scratch``, ``bind``,
which only update the recorder's state). ``AuditJudge`` is the half of ``Recorder``
(``hermetic.runtime.recorder``) that judges one event from its arguments: the ``_judge_*``
methods return a ``Judged`` (operation, target, write, verdict, reason), or None for an event that is
not the test's I/O. They resolve relative paths against the working directory or a
``dir_fd``, and look for the literal in test code that chose a relative path or a loopback
target (contract V1), reading the test files on the stack.
"""
from __future__ import annotations

import os
import re
from typing import Any, Dict, List, Optional, Tuple

from .events import Judged
from .verdicts import CONTROLLED, UNCONTROLLED, address_verdict, is_loopback, norm_path, path_verdict, sqlite_target

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC


def fs_path(p: Any) -> Optional[str]:
    """A path argument of an audit event as text; None for a file descriptor or None."""
    if isinstance(p, int) or p is None:
        return None
    try:
        return os.fsdecode(p)
    except TypeError:
        return None


# file audit event -> what its path arguments are: tuples of (argument index, write?, dir_fd index or None)
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

#: audit event -> the kind ``Recorder._on_audit`` handles it as
AUDIT_EVENTS: Dict[str, str] = {"open": "file", "sqlite3.connect": "connection", "socket.bind": "bind",
                          "os.putenv": "env-write", "os.unsetenv": "env-write",
                          "tempfile.mkstemp": "scratch", "tempfile.mkdtemp": "scratch"}
AUDIT_EVENTS.update({e: "file" for e in _FILE_EVENTS})
AUDIT_EVENTS.update({e: "subprocess" for e in _PROC_EVENTS})
AUDIT_EVENTS.update({e: "network" for e in _NET_EVENTS})


class AuditJudge:
    """The audit events' verdicts, a base of ``Recorder`` (the attributes they use are its)."""

    def _resolve(self, raw: Any, args: tuple, dir_fd_index: Optional[int]) -> Optional[Tuple[str, bool]]:
        p = fs_path(raw)
        if p is None:
            return None
        if os.path.isabs(p):
            return norm_path(p), False
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
            return norm_path(os.path.join(base, p)), True
        return norm_path(os.path.join(base, p)), False

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
            raw = fs_path(args[0])
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
                    items.append((resolved[0], write, (fs_path(raw) or True) if resolved[1] else False))
            if not items:
                return None
            judged = self._judge_paths(items, test_code, site)
        if judged is None:
            return None
        target, write, verdict, reason = judged
        return Judged(event, target, write, verdict, reason)

    def _judge_sqlite(self, args: tuple, test_code: bool):
        shown, path = sqlite_target(args[0] if args else "")
        if path is None:
            return Judged("sqlite3.connect", shown, False, CONTROLLED, "an in-memory database")
        resolved = self._resolve(path, (), None)
        if resolved is None:
            return None
        res = path_verdict(resolved[0], True, self.roots, relative=resolved[1], test_code=test_code)
        if res is None:
            return None
        return Judged("sqlite3.connect", resolved[0], True, res[0], res[1])

    def _judge_network(self, event: str, args: tuple, test_code: bool, site=None):
        if event in ("socket.connect", "socket.sendto"):
            address = args[1]
            if isinstance(address, (str, bytes)):      # a unix socket: judged by its path
                p = fs_path(address)
                if not p or p.startswith("\0"):
                    return Judged(event, repr(address), True, UNCONTROLLED, "an abstract unix socket")
                resolved = self._resolve(p, (), None)
                res = path_verdict(resolved[0], True, self.roots, relative=resolved[1], test_code=test_code)
                if res is None:
                    return None
                return Judged(event, resolved[0], True, res[0], res[1])
            if not isinstance(address, tuple) or len(address) < 2:
                return Judged(event, repr(address), True, UNCONTROLLED, "another host")
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
                return Judged(event, target, True, CONTROLLED,
                              "a loopback server this test process started (closed since)")
            if port not in own and not self.loopback:
                if test_code:
                    return Judged(event, target, True, CONTROLLED, "a loopback target written in test code")
                named = self._loopback_chosen_in_test_code(site, host, port)
                if named is not None:
                    return Judged(event, target, True, CONTROLLED, f"a loopback target chosen in test code ({named})")
            verdict, reason = address_verdict(host, port, self.loopback, own)
        else:
            verdict, reason = address_verdict(host, port, self.loopback, ())
        return Judged(event, target, True, verdict, reason)

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
            return Judged(event, target, True, CONTROLLED, "a subprocess the test starts itself")
        return Judged(event, target, True, UNCONTROLLED, "a real subprocess started by the code under test")

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
