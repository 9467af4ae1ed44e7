"""Sinks: the I/O operations a run reaches (catalogue calls, environment reads, clock
reads), their verdict under the control state of that moment (``judge``), and the patch
misses (HT205) and escapes (HT202) found there.
"""
from __future__ import annotations

import dataclasses
from typing import Optional, Tuple

from ..catalogue.loader import SinkSpec, flags_write, mode_writes
from .decide import values
from .consumed import import_reads
from .fsmodel import after_removal, after_write, cwd_moved, fs_key, gone, known_answer
from .shipped import made_in_tree, may_be_missing, shipped_rel
from .literals import env_name, _canonical, _literal_str, _pick, sendable
from .origins import FD, origin_bases, _control_reason, _head, _origin_sort, _origin_text
from .state import ANY_VARIABLE, DELETED, SPREAD, Frame, SinkEvent, set_on_some_ways
from .contents import forget as forget_text, ini_value, kept
from .stdtypes import std_object
from .tmptree import UNKNOWN_TREE, answer as tmp_answer, relative_parts as tmp_relative, made as tmp_made, marked_only, maybe as tmp_maybe, \
    removed as tmp_removed, under_tmp
from .values import (CONTROLLED, DOUBLE, EMPTY, UNCONTROLLED, UNKNOWN, UNKNOWN_V, Origin, SinkContext, V,
                     classify, exists_answer, exists_question, from_machine, lit, of, seq_atom, union)


class Sinks:
    """``Interp`` methods that record and judge sink events."""

    # ------------------------------------------------------------------ sinks
    def sink_call(self, spec: SinkSpec, d: str, args, kwargs, frame: Frame, pos) -> V:
        cat = spec.category
        if cat == "clock":
            if spec.only_without_args and args:
                return EMPTY
            if spec.only_with_args and len(args) < spec.only_with_args + 1:
                pass
            self.record_clock(d, frame, pos)
            return of(Origin("clock", expr=f"{d}()", path=frame.path, line=pos[0],
                             value="import" if self.import_time else None))
        if cat == "env":
            if spec.variable:
                read = self.env_read(spec.variable, pos, frame, d)
                # the program's path, found on the variable's folders: not known, but computed from
                # the read (a test using `HAS_BLACK = shutil.which("black")` uses an import-time read)
                return of(Origin("unknown", expr=f"{d.rsplit('.', 1)[-1]}()", inner=tuple(read.origins())))
            if d == "os.environ.copy":
                return of(("environ-copy",))   # a snapshot (usually to restore or pass on): no read of a variable
            if d == "os.path.expandvars":
                return self.expandvars(args[0] if args else None, pos, frame)
            key = _pick(spec.target, args, kwargs)
            default = args[1] if len(args) > 1 else kwargs.get("default")
            return self.env_read(env_name(key) if key is not None else None, pos, frame, d, default)
        target = _pick(spec.target, args, kwargs)
        if target is None and SPREAD in kwargs and any(isinstance(t, str) for t in spec.target):
            target = kwargs[SPREAD]   # **options the analysis cannot read: a target keyword may be among them
        if target is None and spec.only_with_target:
            if spec.methods:
                return of(("client", d, spec))
            return EMPTY
        if cat == "file" and target is not None and _is_descriptor(target):
            return of(("handle", d))   # open(1, "w", closefd=False): a file descriptor, not a path
        if cat == "file" and spec.returns == "value" and not spec.methods:
            # the answer for a path it is the same for on every machine is no read that depends on it
            same, target = known_answer(d, target, self.p.catalogue.existing_folders,
                                        self.p.platform["os.name"] == "posix")
            if same is not None:
                return lit(same, frame.path, frame.line, frame.in_test)
        if spec.schemes and target is not None:
            target = sendable(target, spec.schemes)
            if target is None:   # no alternative is a URL it sends to: it raises before sending
                self.call_raised = True
                return EMPTY
        write, may_write = writes_of(spec, args, kwargs)
        if spec.methods and target is None:
            return of(("client", d, spec))
        self.record_sink(spec, d, target, frame, pos, write=write, lib=spec.lib, may_write=may_write)
        if spec.methods:
            return of(("client", d, spec, "targeted"))
        if cat == "file":
            # os.path.exists(p) answers a question about the machine: no branch is decided by it,
            # unless p is a library's shipped file
            if spec.returns == "value":
                return self._answer(d, target, frame)
            if d in _LISTINGS and not write and (names := self._listing(target, frame)) is not None:
                return names   # os.listdir of a folder the checkout ships: its names
            if d in _INI_READERS and (ini := self._ini_kept(target, frame)) is not None:
                return ini   # IniConfig(path) of an ini file the test wrote into its tmp_path
            if target is not None and target.atoms and all(
                    isinstance(a, Origin) and a.kind == "test-value" for a in target.atoms):
                return of(("handle", d, "regular"))   # a file in the test's own folder: no terminal
            if target is not None and from_machine(target):
                return of(("handle", d, "machine"))   # the user's own file: what it holds is theirs
            if not (write or may_write) and (rel := self._in_checkout(target)) is not None and \
                    self.p.shipped.kind(rel) == "file":
                return of(("handle", d, "shipped", rel))   # a file the checkout ships, read: what it holds is known
            return of(("handle", d))
        return of(("client", d, spec))

    def _in_checkout(self, target: Optional[V]) -> Optional[str]:
        """The checkout-relative path ``target`` names (``shipped_rel``) where the run has not
        removed it, or None (also without a checkout)."""
        if self.p.shipped is None or (rel := shipped_rel(target, self.ctx)) is None or \
                gone(self.ctx, fs_key(target, False)):
            return None
        return rel

    def _listing(self, target: Optional[V], frame: Frame) -> Optional[V]:
        """The names ``os.listdir`` gives for a folder the checkout ships (``Shipped.listing``)
        while the run has changed nothing in it (``may_be_missing``), as a list known by its
        items; None otherwise."""
        rel = self._in_checkout(target)
        if rel is None or not may_be_missing(self.ctx, rel, self.p.shipped.root) or \
                (names := self.p.shipped.listing(rel)) is None:
            return None
        return of(seq_atom("list", (lit(n, frame.path, frame.line, frame.in_test) for n in names), exact=True))

    def _ini_kept(self, target: Optional[V], frame: Frame) -> Optional[V]:
        """An ini file the test wrote at ``target`` in its tmp_path, as its reader reads it."""
        text = kept(self.ctx, marked_only(target))
        return None if text is None else ini_value(text, frame)

    def _answer(self, call: str, target: Optional[V], frame: Frame) -> V:
        """What an answer about the file system (``returns = "value"``) is: unknown, but for an
        existence question about a library's shipped file (``exists_answer``), or about a path
        the run removed (``fsmodel``). (A path whose answer is the same on every machine,
        ``fsmodel.known_answer``, is answered before: no read is recorded.)"""
        known = exists_answer(call, target)
        parts = marked_only(target) if known is None and self.ctx.tmp_tree != UNKNOWN_TREE else None
        if parts is None and known is None and self.ctx.tmp_tree != UNKNOWN_TREE:
            parts = tmp_relative(self.ctx.cwd, target)   # a relative path while the block runs in tmp_path
        if parts is not None:   # a path in the test's own tmp_path (tmptree)
            known = tmp_answer(self.ctx.tmp_tree, call.rsplit(".", 1)[-1], parts)
            if known is not None and self.try_watch:
                self.try_watch[-1] = True   # a question about it raises nothing (`except OSError` runs not)
        if known is None and self.ctx.fs_gone and exists_question(call) and \
                gone(self.ctx, fs_key(target, cwd_moved(self.ctx))):
            known = False
        if known is None and (rel := self._in_checkout(target)) is not None:
            # a path in the checkout (shipped); one it does not hold is missing while the run wrote nowhere
            # else, and the test expects no exception (which may say the path is there: ``pytest.raises``)
            missing = self.p.shipped.kind(rel) is None and not (self.expecting or self.expecting_many) and \
                may_be_missing(self.ctx, rel, self.p.shipped.root)
            known = self.p.shipped.answer(call.rsplit(".", 1)[-1], rel, missing=missing)
        return UNKNOWN_V if known is None else lit(known, frame.path, frame.line, frame.in_test)

    def _fs_change(self, spec: SinkSpec, target: Optional[V]) -> None:
        """A write, removal or subprocess the run reaches, for ``fsmodel``: a removal on a way
        every branch before it took, of a path known as text, is remembered."""
        if spec.removes:
            if not (self.undecided or self.guarded or self.missed_depth):
                key = fs_key(target, cwd_moved(self.ctx))
                if key is not None:
                    after_removal(self.ctx, key)
        elif self.ctx.fs_gone:   # a write matters only once something was removed
            # a subprocess, or a write whose target is not what it makes (catalogue ``elsewhere``)
            elsewhere = spec.category != "file" or spec.elsewhere
            after_write(self.ctx, None if elsewhere else fs_key(target, cwd_moved(self.ctx)))

    def _tmp_change(self, spec: SinkSpec, target: Optional[V], write: bool) -> None:
        """What a write, removal or subprocess the run reaches does to its tmp_path (``tmptree``):
        a path made or removed for certain (on a way every branch before it took, outside a
        ``try`` body) is known; on other ways, or by an operation the catalogue does not say what
        it makes (``makes``), what is at it is not; a subprocess, or a write whose target may be
        in the folder without the analysis naming where, leaves nothing known."""
        if spec.category == "subprocess":
            if not self.ctx.subprocess_fake:
                self.ctx.tmp_tree, self.ctx.tmp_text = UNKNOWN_TREE, ()
            return
        parts = marked_only(target)
        self.ctx.tmp_text = forget_text(self.ctx.tmp_text, None if spec.elsewhere else parts)
        if parts is None or spec.elsewhere:
            if target is None or spec.elsewhere or any(self._maybe_in_tmp(a) for a in target.atoms):
                self.ctx.tmp_tree = UNKNOWN_TREE
            return
        tree = self.ctx.tmp_tree
        certain = len(parts) == 1 and not (self.undecided or self.guarded or self.missed_depth)
        for part in parts:
            if spec.makes == "dir" and tmp_answer(tree, "isdir", [part]) is True:
                continue   # mkdir of a folder that is there: made again (exist_ok) or raises, nothing in it changes
            if not certain:
                tree = tmp_maybe(tree, part)
            elif spec.removes:
                tree = tmp_removed(tree, part)
            elif write and spec.makes in ("file", "dir"):
                tree = tmp_made(tree, part, spec.makes)
            elif write and spec.makes == "file-unless-dir" and tmp_answer(tree, "isdir", [part]) is False:
                tree = tmp_made(tree, part, "file")   # shutil.copy(src, dst): dst is no folder, so the copy is dst
            elif spec.makes != "nothing":
                tree = tmp_maybe(tree, part)
        self.ctx.tmp_tree = tree

    def _maybe_in_tmp(self, a) -> bool:
        """A write target atom that may be a path in tmp_path the analysis cannot name."""
        if not isinstance(a, Origin):
            return False
        if a.kind in ("unknown", "home") or under_tmp(of(a)):
            return True
        # a relative path while the working directory is in tmp_path
        return a.kind in ("cwd", "literal") and not (a.value or "").startswith("/") and under_tmp(self.ctx.cwd)

    def _import_marks(self, names) -> None:
        closure = self.p.import_closure
        if closure is None:
            return
        if any(self.p.canonical.get(n, n) in self.p.bootstrap_modules or
               (self.p.canonical.get(n, n) in closure and closure[self.p.canonical.get(n, n)] & self.p.bootstrap_modules)
               for n in names):
            self._mark("side")

    def _mark(self, kind: str) -> None:
        if self.import_time or self.sweep or not self.p.guard_function:
            return
        fr = self.stack[0] if self.stack else None
        self.marks.append((kind, (fr.path, fr.line) if fr is not None else ("", 0)))

    def _consume(self, v: V, functions: bool = True) -> None:
        """A test uses a value computed at import from the environment or the clock: it
        reaches a consumer of that import-time read (HT203/HT204 ``tests``; ``import_reads``)."""
        reads = import_reads(v, functions)
        if reads:
            self.consumed.extend(reads)

    def _add_miss(self, key, rest: tuple) -> bool:
        """Record an HT205 candidate at the site that installed ``key`` (resolved now, and again
        when a memoized call is replayed under another test's sites)."""
        site = self.ctx.sites.get(key)
        if site is None:
            return False
        if len(rest) == 3:   # reached on a way the test's values do not decide: medium confidence
            rest = rest + (self.undecided > 0,)
        self.misses.append((site,) + rest)
        self.miss_keys.append((key, rest))
        return True

    def _add_escape(self, key, rest: tuple) -> None:
        site = self.ctx.sites.get(key)
        if site is None:
            return
        self.escapes.append((site,) + rest)
        self.escape_keys.append((key, rest))

    def _check_miss(self, v: V, mod: str, name: str, what: Optional[str] = None) -> V:
        """HT205: ``mod.name`` holds a function (or library object) whose defining binding
        the test patched; this lookup goes through ``mod``'s own binding and misses it.
        Returns the value with the missed atoms marked: what runs through them is reported
        once, as the HT205 at the patch (contract S1), not again as HT1xx."""
        if self.import_time:
            return v
        out = []
        for a in v.ordered():
            out.append(a)
            if not isinstance(a, tuple):
                continue
            key = None
            if a[0] == "func" and a[2] is None:
                entry = self.p.functions.get(a[1])
                if entry is None or entry[0].get("class"):
                    continue
                owner_mod = entry[1]
                key = (("mod", owner_mod), entry[0]["name"])
            elif a[0] in ("ext", "mod") and "." in a[1]:
                # (a submodule `from pkg import api` bound: patch("pkg.api") replaces pkg's attribute)
                owner, attr = a[1].rsplit(".", 1)
                key = ((a[0], owner), attr)
            if key is None or key == (("mod", mod), name) or key not in self.ctx.patches:
                continue
            rest = (f"{key[0][1]}.{key[1]}", what or f"{mod}.{name}", "default" if what else "binding")
            if a[0] == "ext" and std_object(a[1]) and key in self.ctx.sites:
                # a standard library object (sys.stdout): missed where the code uses it (reads an
                # attribute, hands it to a call), not where it only compares it (`f is not stdout`)
                out[-1] = ("missed-obj", a, key, rest)
            elif self._add_miss(key, rest):
                out[-1] = ("missed", a)
        return V(frozenset(out), v.is_path) if len(out) == len(v.atoms) else v

    def used_missed(self, v: V) -> None:
        """``v`` is used (an attribute read, an argument): each standard object in it that a patch
        misses is the HT205 of that patch."""
        for a in v.atoms:
            if isinstance(a, tuple) and a[0] == "missed-obj":
                self._add_miss(a[2], a[3])

    def _escapes(self, target: V, frame: Frame, pos) -> None:
        """HT202: the operation uses a constant derived at import from a base this test
        redirects (a patched constant, a set environment variable, HOME)."""
        if not self.ctx.sites:
            return
        for o in target.origins():
            if o.kind != "module-constant":
                continue
            for base in origin_bases(o):
                key = None
                if base.kind == "module-constant" and base.module:
                    key = (("mod", base.module), base.expr)
                elif base.kind == "environment":
                    key = ("env", base.expr)
                elif base.kind == "home":
                    key = ("env", "HOME")
                if key is not None and key in self.ctx.sites and (key[0] == "env" or key in self.ctx.patches):
                    self._add_escape(key, (base, o, frame.path, tuple(pos)))

    def _sink_ctx(self) -> SinkContext:
        cwd_ok = False
        cwd_origins = None
        if self.ctx.cwd is not None:
            cwd_origins = tuple(self.ctx.cwd.origins())
            cwd_ok = bool(cwd_origins) and all(o.kind == "test-value" for o in cwd_origins)
        return SinkContext(cwd_controlled=cwd_ok, fs_fake=self.ctx.fs_fake, loopback=bool(self.p.config.loopback),
                           cwd_origins=cwd_origins)

    def record_sink(self, spec: SinkSpec, call: str, target: Optional[V], frame: Frame, pos, write=False,
                    lib: str = "", path_method=False, may_write=False) -> V:
        cat = spec.category
        if spec.items and target is not None and any(isinstance(a, tuple) and a[0] == "seq" for a in target.atoms):
            # read([path, ...]): each item is a target
            target = union([V(frozenset(a for a in target.atoms if not (isinstance(a, tuple) and a[0] == "seq")))]
                           + [item for a in target.atoms if isinstance(a, tuple) and a[0] == "seq" for item in a[2]])
        verdict, origin, ttext = self.judge(spec, target, cat, write, frame)
        if target is not None and not self.import_time:
            self._escapes(target, frame, pos)
        reason = _control_reason(target) if verdict == CONTROLLED else ""
        if cat == "network" and verdict != CONTROLLED and (
                "*" in self.ctx.net or (lib and lib in self.ctx.net)):
            verdict, reason = CONTROLLED, "a network mock (S4)"
        if cat == "subprocess" and self.ctx.subprocess_fake:
            verdict, reason = CONTROLLED, "the fp fixture (S5)"
        if cat == "file" and self.ctx.fs_fake and verdict != CONTROLLED and not self.import_time:
            verdict, reason = CONTROLLED, "pyfakefs (S6)"
        ev = SinkEvent(cat, frame.path, tuple(pos), call, verdict, origin, (), self.import_time,
                       self._import_module_name(), ttext, write)
        ev.reason = reason
        ev.several = target is not None and len(target.atoms) > 1   # the target is one of alternatives
        ev.may_write = write or may_write
        if cat in ("file", "connection") and target is not None:
            ev.targets = tuple(target.origins())
        if cat == "connection" and verdict == UNCONTROLLED:
            self._mark("side")
        self._record(ev)
        if cat == "connection" and spec.makes == "file" and target is not None and not self.import_time and \
                marked_only(target) is None and not _own_folder(target):
            made_in_tree(self.ctx, fs_key(target, cwd_moved(self.ctx)))   # sqlite3.connect(path) makes the file
        if cat == "subprocess" or (cat == "file" and (write or may_write) and not self.import_time):
            self._fs_change(spec, target)
            if cat == "subprocess" or marked_only(target) is None and not _own_folder(target):
                made_in_tree(self.ctx, None if cat == "subprocess" else fs_key(target, cwd_moved(self.ctx)))
            if self.ctx.tmp_tree != UNKNOWN_TREE:
                self._tmp_change(spec, target, write)
        if path_method:
            if call.rsplit(".", 1)[-1] in ("iterdir", "glob", "rglob", "readlink"):
                return _head(target).with_path(True) if target is not None else EMPTY
            if call.rsplit(".", 1)[-1] in ("read_text", "read_bytes"):
                return UNKNOWN_V   # the file's contents, not a path
            if call.rsplit(".", 1)[-1] == "open":
                return of(("handle", call))
            if spec.returns == "value":
                # an answer about the machine: unknown, and kept unknown where it meets other
                # values (safe_exists() returning p.exists() or False decides nothing)
                return self._answer(call, target, frame)
            return EMPTY
        return EMPTY

    def judge(self, spec: SinkSpec, target: Optional[V], cat: str, write: bool, frame: Frame):
        if target is None and spec.default == "home":   # a file the library keeps in the home folder
            target = of(Origin("home", expr=f"{spec.name}()", path=frame.path, line=frame.line))
        if target is None:
            if spec.default == "memory" or (cat == "subprocess" and frame.in_test):
                return CONTROLLED, None, ""   # (a process test code starts itself: T1, as its literals)
            if spec.default == "library-default" or cat in ("connection", "network"):
                return UNCONTROLLED, Origin("library-default", expr=f"{spec.name}()", path=frame.path,
                                            line=frame.line), ""
            return UNKNOWN, Origin("unknown"), ""
        if cat == "subprocess":
            target = self._program(target, frame)
        sctx = self._sink_ctx()
        origins = sorted(target.origins(), key=_origin_sort)
        refs = [a for a in target.refs()]
        verdicts = []
        for o in origins:
            verdicts.append((classify(o, cat, write, sctx), o))
        for a in refs:
            if a == DOUBLE or a[0] in ("fixture", "double"):
                verdicts.append((CONTROLLED, None))
            elif a[0] == "inst" and self._is_test_class_inst(a):
                verdicts.append((CONTROLLED, None))
            elif a[0] == "client":
                verdicts.append((CONTROLLED, None))
            else:
                verdicts.append((UNKNOWN, Origin("unknown", expr=a[0])))
        if not verdicts:
            return UNKNOWN, Origin("unknown"), ""
        for v, o in verdicts:
            if v == UNCONTROLLED:
                return UNCONTROLLED, o, _origin_text(o)
        for v, o in verdicts:
            if v == UNKNOWN:
                return UNKNOWN, o, ""
        return CONTROLLED, None, ""

    def _program(self, target: V, frame: Frame) -> V:
        """The program a subprocess call starts (argv[0] of a list); ``sys.executable`` is a
        known program (this interpreter), written where the call is (rows T1 / X)."""
        out = EMPTY
        for a in target.ordered():
            if not isinstance(a, Origin) and a[0] == "seq":
                out = out | (a[2][0] if a[2] else UNKNOWN_V)
            else:
                out = out | of(a)
        if any(a == ("ext", "sys.executable") for a in out.refs()):
            interpreter = Origin("literal", expr="sys.executable", path=frame.path, line=frame.line,
                                 value="sys.executable", in_test=frame.in_test)
            out = V(frozenset(interpreter if a == ("ext", "sys.executable") else a for a in out.atoms), out.is_path)
        return out

    def _is_clock_fn(self, v: V) -> bool:
        return bool(self._clock_name(v))

    def _clock_name(self, v: V) -> str:
        for a in v.refs():
            if a[0] == "ext":
                spec = self.p.catalogue.lookup(_canonical(a[1]))
                if spec is not None and spec.category == "clock":
                    return a[1]
        return ""

    def record_clock(self, d: str, frame: Frame, pos, capture: bool = False) -> None:
        # at import, only a freeze the importing module's own code started (a module-level
        # `with freeze_time(...):`) holds the read: a test's freeze ends before a later import
        frozen = self.ctx.frozen and (not self.import_time or
                                      (self.ctx.sites.get(("freeze",)) or (None,))[0] == frame.path)
        verdict = CONTROLLED if frozen else UNCONTROLLED
        reason = "a frozen clock (S3)" if verdict == CONTROLLED else ""
        key = None
        for k in self.ctx.patches:
            if k[0] == ("ext", d.rsplit(".", 1)[0]) and k[1] == d.rsplit(".", 1)[1]:
                key = k
        if key is not None:
            verdict = CONTROLLED
        origin = Origin("clock", expr=f"{d}()", path=frame.path, line=pos[0])
        ev = SinkEvent("clock", frame.path, tuple(pos), d, verdict, origin, (), self.import_time,
                       self._import_module_name(), "capture" if capture else "", False)
        ev.reason = reason or ("a patched clock function (S1)" if verdict == CONTROLLED else "")
        self._record(ev)

    def env_read(self, key: Optional[str], pos, frame: Frame, call: str, default: Optional[V] = None) -> V:
        pos = tuple(pos)
        if key is None:
            self._record(SinkEvent("env", frame.path, pos, call, UNKNOWN, Origin("unknown"), (),
                                   self.import_time, self._import_module_name(), "", False))
            return UNKNOWN_V
        if key == "*":
            verdict = CONTROLLED if self.ctx.env_all else UNCONTROLLED
            self._record(SinkEvent("env", frame.path, pos, call, verdict,
                                   Origin("environment", expr="os.environ", path=frame.path, line=pos[0]), (),
                                   self.import_time, self._import_module_name(), "os.environ", False))
            return of(Origin("environment", expr="os.environ", path=frame.path, line=pos[0]))
        if key in self.ctx.env:
            val = self.ctx.env[key]
            if val is not DELETED and (rest := set_on_some_ways(val, key)) is not None:
                # set on some of the ways here only: on the others the machine's own value
                origin = Origin("environment", expr=key, path=frame.path, line=pos[0], value="some-ways")
                self._record(ev := SinkEvent("env", frame.path, pos, call, UNCONTROLLED, origin, (), self.import_time,
                                             self._import_module_name(), key, False))
                ev.undecided = True
                return rest | of(origin)
            ev = SinkEvent("env", frame.path, pos, call, CONTROLLED, None, (), self.import_time,
                           self._import_module_name(), key, False)
            ev.reason = f"{key} set by the test or session configuration (S2)"
            self._record(ev)
            if val is DELETED:
                return default if default is not None else EMPTY
            return val
        if self.ctx.env_all:
            self._record(SinkEvent("env", frame.path, pos, call, CONTROLLED, None, (), self.import_time,
                                   self._import_module_name(), key, False))
            return default if default is not None else EMPTY
        if ANY_VARIABLE in self.ctx.env:
            self._record(SinkEvent("env", frame.path, pos, call, UNKNOWN, Origin("unknown", expr=key), (),
                                   self.import_time, self._import_module_name(), key, False))
            return UNKNOWN_V
        origin = Origin("environment", expr=key, path=frame.path, line=pos[0],
                        value="import" if self.import_time else None)
        self._record(SinkEvent("env", frame.path, pos, call, UNCONTROLLED, origin, (), self.import_time,
                               self._import_module_name(), key, False))
        # the variable's value where it is set, the default where it is not (on most machines)
        return of(origin) | default if default is not None and default.atoms else of(origin)

    def expandvars(self, arg: Optional[V], pos, frame: Frame) -> V:
        """``os.path.expandvars(p)`` reads the variables named in ``p`` (none when ``p`` has no $)."""
        import re as _re

        if arg is None:
            return EMPTY
        text = _literal_str(arg, prefix=True)
        if text is None:
            if any(o.kind == "unknown" for o in arg.origins()) or not any(True for _ in arg.origins()):
                self.env_read(None, pos, frame, "os.path.expandvars")
            return arg
        names = _re.findall(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))", text)
        out = arg
        for a, b in names:
            out = out | self.env_read(a or b, pos, frame, "os.path.expandvars")
        return out

    def _record(self, ev: SinkEvent) -> None:
        if self.missed_depth:
            ev.missed = True
        ev.undecided = self.undecided > 0
        trace = tuple((fr.path, fr.line, fr.name) for fr in self.stack)
        if trace:
            last = trace[-1]
            trace = trace[:-1] + ((last[0], ev.pos[0], last[2]),)
        ev.trace = trace
        if ev.import_time:
            ev.binding = self.module_statement()
        self.events.append(ev)

    def module_statement(self) -> Tuple[str, int]:
        """(path, first line) of the statement the innermost module frame is running, or ()."""
        return next(((fr.path, fr.stmt) for fr in reversed(self.stack) if fr.is_module and fr.stmt), ())

    def saved_for_restore(self, key: str, val: V) -> None:
        """``os.environ[key] = saved`` where ``saved`` was read from ``key``: that read saved the
        value to put it back (contract section 4, "Restores"), it is not an environment read."""
        for o in val.origins():
            if o.kind != "environment" or o.expr != key:
                continue
            for i in range(len(self.events) - 1, -1, -1):
                ev = self.events[i]
                if (ev.category == "env" and ev.target == key and ev.verdict == UNCONTROLLED and
                        ev.path == o.path and ev.pos[0] == o.line):
                    # a copy: the memo shares event objects between calls
                    self.events[i] = dataclasses.replace(ev, verdict=CONTROLLED,
                                                         reason=f"{key} saved to be put back (a restore)")
                    break

    def _emit(self, rel: SinkEvent, prefix) -> None:
        self.events.append(dataclasses.replace(rel, trace=tuple(prefix) + rel.trace))


def writes_of(spec: SinkSpec, args, kwargs) -> Tuple[bool, bool]:
    """``(write, may_write)`` of one call of ``spec``: an ``open``-like call by its mode, which,
    when the analysis cannot read it, is judged as a read and ranked as a change."""
    if spec.flags:   # os.open: its flags decide; flags the analysis cannot read may write
        f = _pick(spec.flags, args, kwargs)
        w = flags_write(values(f)) if f is not None else False
        return bool(w), w is not False
    if not spec.mode:
        return spec.write, spec.write
    m = _pick(spec.mode, args, kwargs)
    return mode_writes(m, unknown=False), mode_writes(m)


# readers whose result is an ini file's sections (``contents.ini_value``)
_INI_READERS = frozenset({"iniconfig.IniConfig"})
_LISTINGS = frozenset({"os.listdir"})   # a folder's names, as a list of strings


def _own_folder(target: Optional[V]) -> bool:
    """Every value of ``target`` is a folder of the test's own (``tmp_path``, ``mkdtemp()``) or the
    home folder: a write there makes nothing in the checkout (``shipped``)."""
    return target is not None and bool(target.atoms) and all(_outside_checkout(a) for a in target.atoms)


def _outside_checkout(a) -> bool:
    """Atom ``a`` is a path in a folder of the test's or the home folder, also through the
    constant or default argument bound to one (``DEFAULT_CONFIG["replay_dir"]``, from
    ``expanduser("~/...")``)."""
    if not isinstance(a, Origin):
        return False
    if a.kind in ("module-constant", "default-argument"):
        return bool(a.inner) and all(_outside_checkout(i) for i in a.inner)
    return a.kind in ("test-value", "home")


def _is_descriptor(v: V) -> bool:
    """Whether every alternative of a file target is an integer (a file descriptor)."""
    if v.atoms and all(a == FD for a in v.atoms):
        return True   # os.dup(stream.fileno())
    vals = values(v)
    return bool(vals) and all(isinstance(x, int) and not isinstance(x, bool) for x in vals)
