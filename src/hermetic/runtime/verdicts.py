"""The runtime's pure classification: which I/O is controlled, judged from explicit roots.

A file access is judged by the deepest of the ``Roots`` holding its path (``path_verdict``), a
network peer by whether it is loopback and whose server listens there (``address_verdict``),
an sqlite database by its file or ``:memory:`` (``sqlite_target``); each verdict is
``(CONTROLLED or UNCONTROLLED, reason)``, or None for machinery that is not recorded.
``test_code_matcher`` tells test code (tests, conftests, helpers beside them) from the code
under test, as the static analysis does. No state and no hooks: every function here is a
function of its arguments, so it is unit-testable without pytest.
"""
from __future__ import annotations

import os
from fnmatch import fnmatch
from typing import Any, Iterable, List, Optional, Sequence, Tuple


CONTROLLED = "controlled"
UNCONTROLLED = "uncontrolled"

#: reads of these are system data (certificates, time zones, name service), not the test's I/O
SYSTEM_READS = (
    "/etc/ssl/", "/etc/pki/", "/etc/ca-certificates", "/usr/share/ca-certificates/", "/usr/lib/ssl/",
    "/usr/share/zoneinfo/", "/etc/localtime", "/etc/timezone", "/etc/mime.types", "/usr/share/mime/",
    "/etc/hosts", "/etc/resolv.conf", "/etc/nsswitch.conf", "/etc/gai.conf", "/etc/host.conf",
    "/etc/services", "/etc/protocols", "/etc/passwd", "/etc/group", "/proc/", "/sys/",
)
#: neither reads nor writes of these are I/O a test should control
DEVICES = ("/dev/",)


class Roots:
    """The folders a path is judged by; the deepest one containing the path wins.

    kinds: ``tmp`` (pytest's temporary folders), ``scratch`` (made by ``tempfile`` during a
    test), ``machinery`` (the interpreter, site-packages), ``project`` (the rootdir),
    ``home`` (the home folder at session start).
    """

    def __init__(self, rootdir: str, home: str = "", tmp: Iterable[str] = (), machinery: Iterable[str] = ()):
        self.rootdir = norm_path(rootdir)
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
        forms = {norm_path(path)}
        try:
            forms.add(norm_path(os.path.realpath(path)))
        except (OSError, ValueError):
            pass
        for f in forms:
            if (f, kind) not in self._roots:
                self._roots.append((f, kind))
        self._roots.sort(key=lambda r: -len(r[0]))

    def add_scratch(self, path: str) -> None:
        self.scratch.add(norm_path(path))

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


def norm_path(path: str) -> str:
    """``path`` made absolute (against the working directory) and normalised."""
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
