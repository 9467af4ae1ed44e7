"""Objects and classes: method resolution order, class and instance attributes, making
instances (dataclasses, ``unittest.TestCase``), and methods called on them or on path objects.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from . import clickmodel
from .limits import IMPORT_STATE_READ, TEST_HEAP_BASE
from .sinks import writes_of
from ..summarise.ir import dotted_name
from .dictwrites import _with_entry
from .libbases import catalogued_bases, library_method
from .literals import _canonical, _literal_str, _pick, _str_affix
from .decide import values
from .origins import _PATH_CLASSES, _PATH_VALUE_METHODS, _head, _with_text, from_cwd, scheme_only
from .rooted import ends_with, known_ends, partition_front
from .state import SPREAD, Ctx, Frame
from .contents import kept as kept_text, remember as remember_text
from .tmptree import UNKNOWN_TREE, answer as tmp_answer, joined as tmp_joined, marked_only, \
    str_answer as tmp_str_answer, under_tmp
from .values import EMPTY, INSTANCE, MAYBE_EMPTY, RAISED, RAISED_V, UNKNOWN_V, Origin, V, instance_class, lit, \
    machine_data, of, seq_atom

_STR_ONLY_ARITY = {"replace"}   # names str and Path share, told apart by arity (Path.replace takes one)
# methods whose result is the path they are called on (tmptree keeps its part under tmp_path)
_SAME_PATH_METHODS = {"resolve", "absolute", "as_posix", "__fspath__", "expanduser"}

# the library classes whose project subclasses are enumerations: calling one looks a member up
_ENUM_BASES = {"enum.Enum", "enum.IntEnum", "enum.StrEnum", "enum.Flag", "enum.IntFlag"}


class Objects:
    """``Interp`` methods for classes, instances and their attributes."""

    def mro(self, qn: str, seen=None) -> List[str]:
        if seen is None:
            hit = self._mro_cache.get(qn)
            if hit is not None:
                return hit
            out = self._mro(qn, set())
            self._mro_cache[qn] = out
            return out
        return self._mro(qn, seen)

    def _mro(self, qn: str, seen) -> List[str]:
        """Python's C3 order over the project classes (``class A(B, C)`` with both deriving from
        ``Base``: A, B, C, Base); ``seen`` guards against a cycle the static lookup may make."""
        if qn in seen or qn not in self.p.classes:
            return []
        seen = set(seen) | {qn}
        c, mod = self.p.classes[qn]
        bases = [bq for b in c["bases"] for bq in self.static_class(b, mod)]
        seqs = [s for s in [self._mro(bq, seen) for bq in bases] + [bases] if s]
        out = [qn]
        while seqs:
            # the first head in no other sequence's tail (an inconsistent order: the first head)
            head = next((s[0] for s in seqs if not any(s[0] in t[1:] for t in seqs)), seqs[0][0])
            out.append(head)
            seqs = [t for t in ([x for x in s if x != head] for s in seqs) if t]
        return out

    def static_class(self, expr, mod: str) -> List[str]:
        val = self.eval_static(expr, mod)
        return [a[1] for a in val.refs() if a[0] == "cls"]

    def eval_static(self, expr, mod: str) -> V:
        self.import_module(mod)
        frame = Frame(module=mod, path=self.p.summaries[mod]["path"], name="<static>", is_module=False,
                      in_test=self.p.in_test.get(mod, False))
        frame.locals = {}   # lookup falls through to the module globals
        saved = self.ctx
        self.ctx = Ctx()
        try:
            return self.eval(expr, frame)
        finally:
            self.ctx = saved

    def is_enum(self, qn: str) -> bool:
        """A project class deriving from an ``enum`` class (its members are one object each)."""
        return any(_canonical(b) in _ENUM_BASES for b in self.external_bases(qn))

    def external_bases(self, qn: str) -> List[str]:
        if qn in self._ext_bases:
            return self._ext_bases[qn]
        out = self._ext_bases[qn] = []
        for c in self.mro(qn):
            cd, mod = self.p.classes[c]
            for b in cd["bases"]:
                for a in self.eval_static(b, mod).refs():
                    if a[0] == "ext":
                        out.append(a[1])
        return out

    def find_method(self, cls_qn: str, name: str, after: Optional[str] = None) -> Optional[Tuple[str, str]]:
        chain = self.mro(cls_qn)
        if after is not None and after in chain:
            chain = chain[chain.index(after) + 1:]
        for c in chain:
            cd, _ = self.p.classes[c]
            if name in cd["methods"]:
                return c, cd["methods"][name]
            qn = self._body_method(c, name)
            if qn is not None:
                return c, qn
        return None

    def _body_method(self, c: str, name: str) -> Optional[str]:
        """A method the class body defines under an ``if`` or ``try`` whose way it took (``if not
        TYPE_CHECKING: def __get__``, a version check): bound in the class's attributes when the
        body ran, as a function of that class."""
        attrs = self.class_attrs.get(c)
        v = attrs.get(name) if attrs else None
        if v is None or len(v.atoms) != 1:
            return None
        a = next(iter(v.atoms))
        if not (isinstance(a, tuple) and a[0] == "func" and a[2] is None):
            return None
        f = self.p.functions.get(a[1], (None, None))[0]
        if f is None or f.get("class") != c:
            return None
        self._read("cattr", c, name)
        return a[1]

    def class_bound(self, qn: str, cls_atom: tuple):
        """What a method read from its class binds first: the class for a ``classmethod``;
        nothing for a plain function (``Base.__init__(self, x)`` passes the instance itself)
        or a ``staticmethod``."""
        return cls_atom if _decorated(self.p.functions.get(qn, (None, None))[0], "classmethod") else None

    def class_attr(self, cls_qn: str, name: str) -> Optional[V]:
        for c in self.mro(cls_qn):
            key = (("cls", c), name)
            if key in self.ctx.patches:
                return self.ctx.patches[key]
            self._read("cattr", c, name)
            attrs = self.class_attrs.get(c)
            if attrs is None:
                _, mod = self.p.classes[c]
                self.import_module(mod)
                attrs = self.class_attrs.get(c, {})
            if name in attrs:
                if not self.import_time:
                    self._consume(attrs[name])
                return attrs[name]
        return None

    def inst_attr(self, a, name: str, frame: Frame) -> V:
        key = (("inst", a[1]), name)
        if key in self.ctx.patches:
            return self.ctx.patches[key]
        if a[1] < TEST_HEAP_BASE:   # an instance made at import: shared state
            self._read("attr", a[1], name)
            self.greads |= IMPORT_STATE_READ
        h = self.heap.get(a[1])
        if h is None:
            return UNKNOWN_V
        if name in h["attrs"]:
            return h["attrs"][name]
        if name == "__dict__":   # its own attributes (`c.__dict__ = self.__dict__.copy()` copies them)
            return of(("dictof", a))
        if name == "__class__" and h["cls"] in self.p.classes:
            return of(("cls", h["cls"]))
        cls = h["cls"]
        if cls is None:   # a record made of keywords alone has them all: its copies are known
            return of(("meth", ("record", a[1]), name)) if name in ("_asdict", "_replace") and h.get("whole") \
                else UNKNOWN_V
        if self.ctx.patches:
            for c in self.mro(cls):
                if (("cls", c), name) in self.ctx.patches:
                    return self.ctx.patches[(("cls", c), name)]
        m = self.find_method(cls, name)
        if m is not None:
            f = self.p.functions.get(m[1], (None, None))[0]
            if _decorated(f, "property", "cached_property", "functools.cached_property") or m[1] in self.property_methods:
                return self.settled(self.call_function(m[1], [], {}, frame, self_atom=a))
            if _decorated(f, "staticmethod"):
                return of(("func", m[1], None))
            if _decorated(f, "classmethod"):
                return of(("func", m[1], ("cls", cls)))
            wrapper = self.method_wrappers.get(m[1])
            if wrapper is not None:   # a decorated method: its wrapper, with the instance first
                return of(("partial", wrapper, (of(a),), (), None))
            return of(("func", m[1], a))
        v = self.class_attr(cls, name)
        if v is not None:
            return self._bound(v, a)
        if name == "_replace" and "typing.NamedTuple" in self.external_bases(cls):
            return of(("meth", ("record", a[1]), name))   # a copy with some fields replaced (controls)
        for ext in self.external_bases(cls):
            if ext.endswith("TestCase"):
                return of(("meth", ("testcase", a[1]), name))
            if ext in ("click.testing.CliRunner", "typer.testing.CliRunner"):
                # a project subclass of click's runner (black's BlackRunner): its invoke is click's
                return of(("meth", clickmodel.runner({}), name))
        client = library_method(self, cls, name)
        if client is not None:
            return client
        # a proxy the test's run made: what its __getattr__ gives for the name (structlog's
        # BoundLogger); not one made while modules import, a process-wide singleton whose deferred
        # work runs once per process, as the run configures it (Django's settings, translation's _trans)
        hook = self.find_method(cls, "__getattr__") if not name.startswith("__") and a[1] >= TEST_HEAP_BASE else None
        if hook is not None:
            return self.settled(self.call_function(hook[1], [lit(name, None, None, False)], {}, frame, self_atom=a))
        return UNKNOWN_V

    def _bound(self, v: V, a) -> V:
        """Class attribute ``v`` read through instance ``a``: a function stored there is a method."""
        fns = self.p.functions
        return v if not any(x[0] == "func" and x[2] is None for x in v.refs()) else V(frozenset(
            ("func", x[1], a) if isinstance(x, tuple) and x[0] == "func" and x[2] is None and x[1] in fns
            and not _decorated(fns[x[1]][0], "staticmethod") else x for x in v.atoms), v.is_path)

    def match_value(self, found: bool, frame: Frame) -> V:
        """A regex match's result: a (truthy) match object, or None."""
        return lit(True if found else None, frame.path, frame.line, frame.in_test)

    def platform_value(self, fact, frame: Frame) -> V:
        """A platform fact (``sys.platform``, ``sys.version_info`` ...) as the literal it is."""
        self.platform_read = True
        if isinstance(fact, tuple):
            return of(("seq", "tuple", tuple(lit(x, None, None, False) for x in fact)))
        return lit(fact, None, None, False)

    def make_record(self, args, kwargs) -> V:
        """A record a library makes from keywords (``SimpleNamespace(a=1)``, ``argparse.Namespace``,
        a namedtuple class made at run time, called): an object whose attributes are those
        keywords; any other attribute, its type and its truth stay unknown. Made of keywords
        alone, it is whole: ``_asdict()`` and ``_replace()`` know every field."""
        iid = self.new_instance(None)
        for name, val in kwargs.items():
            if name != SPREAD:
                self.set_attr(iid, name, val)
        if not args and SPREAD not in kwargs and iid >= TEST_HEAP_BASE:   # (one made at import is shared
            self.heap[iid]["whole"] = True                                 # state: its fields live elsewhere)
        return of(("inst", iid))

    def call_handed(self, spec, args, kwargs, frame: Frame, pos) -> V:
        """A library call that calls the function it is handed (catalogue ``[handed]``,
        ``loader.Handed``): the function runs here, with an item of the iterable, the arguments
        after it, or the items of the ``args`` tuple; the call's value as ``spec.returns`` says."""
        fn = _pick(spec.func, args, kwargs)
        callee = V(frozenset(fn.refs())) if fn is not None else EMPTY
        items = _pick(spec.items, args, kwargs) if spec.items else None
        call_kwargs = {}
        if items is not None:
            call_args = [self._element(items)]
        elif spec.rest:
            first = next((t for t in spec.func if isinstance(t, int)), 0)
            call_args = list(args[first + 1:])
            call_kwargs = {k: v for k, v in kwargs.items() if k not in spec.func}
        else:
            tup = _pick(spec.args, args, kwargs) if spec.args else None
            seqs = [a for a in tup.refs() if a[0] == "seq"] if tup is not None else []
            call_args = list(seqs[0][2]) if len(seqs) == 1 else [] if tup is None else [UNKNOWN_V]
        before = self.call_raised
        result = self.apply(callee, call_args, call_kwargs, frame, pos) if callee.atoms else UNKNOWN_V
        self.call_raised = before   # what it raises stays in the thread, or waits for the results
        result = result.without(RAISED)
        if spec.returns == "results":
            return of(("seq", "list", (result if result.atoms else UNKNOWN_V,), MAYBE_EMPTY))
        if spec.returns == "items":
            return items if items is not None else UNKNOWN_V
        return of(Origin("unknown", expr=spec.name.rsplit(".", 1)[-1] + "()", value=INSTANCE + spec.name))

    def new_instance(self, cls: Optional[str]) -> int:
        iid = self.next_id
        self.next_id += 1
        self.heap[iid] = {"cls": cls, "attrs": {}}
        self.wlog.append(("new", iid, cls))
        return iid

    def set_attr(self, iid: int, name: str, val: V) -> None:
        if name == "__dict__":   # another instance's attributes (a clone's copied __dict__)
            for d in val.refs():
                if d[0] == "dictof" and d[1][1] != iid:
                    for k, v in list(self.heap.get(d[1][1], {}).get("attrs", {}).items()):
                        self.set_attr(iid, k, v)
            return
        if iid < TEST_HEAP_BASE:   # an instance made at import: shared by every test
            self.write_state("attr", iid, name, val)
            return
        h = self.heap.setdefault(iid, {"cls": None, "attrs": {}})
        if self.attr_undo is not None:   # inside alternative ways (``ways.WayWrites``)
            self.attr_undo.append((iid, name, h["attrs"].get(name)))
        h["attrs"][name] = val
        h.pop("sig", None)
        self.wlog.append(("attr", iid, name, val))

    def instantiate(self, qn: str, args: List[V], kwargs: Dict[str, V], frame: Frame) -> V:
        if qn not in self.p.classes:
            return UNKNOWN_V
        c, mod = self.p.classes[qn]
        if len(args) == 1 and not kwargs and self.is_enum(qn):
            # Mode("importlib") is the member of that value, and a member stands for its value
            # here (Mode.importlib reads the class body's literal): the same value
            return args[0]
        atom = ("inst", self.new_instance(qn))
        init = self.find_method(qn, "__init__")
        catalogued_bases(self, qn, init is None, args, kwargs, frame)
        if init is not None:
            if RAISED in self.call_function(init[1], args, kwargs, frame, self_atom=atom).atoms:
                return RAISED_V   # __init__ raises on every way: so does making the object
        else:
            self._dataclass_init(qn, args, kwargs, atom)
        return of(atom)

    def _dataclass_init(self, qn: str, args: List[V], kwargs: Dict[str, V], atom) -> None:
        fields: List[str] = []
        for c in reversed(self.mro(qn)):
            cd, _ = self.p.classes[c]
            for st in cd["body"]:
                if st[0] in ("assign", "ann") and (st[0] == "ann" or len(st) > 4):
                    t = st[1][0] if st[0] == "assign" else st[1]
                    if t[0] == "name" and t[1] not in fields:
                        fields.append(t[1])
        for i, name in enumerate(fields):
            if i < len(args):
                self.set_attr(atom[1], name, args[i])
            elif name in kwargs:
                self.set_attr(atom[1], name, kwargs[name])

    def store_item(self, name: str, table: V, key: V, val: V, frame: Frame) -> None:
        """``name[key] = val`` on a dict bound to ``name``: a local table, or a module's table
        filled at import (a registry: ``HANDLERS[kind] = fn``, also from a decorator), holds the
        entry from then on, so ``name[k](...)`` reaches it. A key that is not one string literal
        is kept as an entry any key may find. Test-time writes to module tables are left to the
        HT303 analysis (pollution), not modelled here."""
        if self.sweep or not table.atoms or any(not (isinstance(a, tuple) and a[0] == "dict") for a in table.atoms):
            return
        new = _with_entry(table, key, val)
        if frame.is_module or name in frame.locals:
            self._bind(frame, name, new)
        elif self.import_time and name not in frame.globals_decl and name in self.globals.get(frame.module, {}):
            self.write_state("gattr", frame.module, name, new)

    def store_attr_item(self, target, table: V, key: V, val: V, frame: Frame) -> None:
        """``obj.name[key] = val`` where ``obj`` is one known instance whose ``name`` holds a dict:
        the instance's dict holds the entry from then on (requests' ``self.adapters[prefix] =
        adapter``, later found again by ``self.adapters.items()``). ``target``: the ``attr`` node."""
        if self.sweep or not table.atoms or any(not (isinstance(a, tuple) and a[0] == "dict") for a in table.atoms):
            return
        owner = self.eval(target[1], frame)
        if len(owner.atoms) != 1:
            return   # one of several objects: no entry is certain to be there
        (a,) = owner.atoms
        if not (isinstance(a, tuple) and a[0] == "inst"):
            return
        self.set_attr(a[1], target[2], _with_entry(table, key, val))

    def is_testcase(self, qn: str) -> bool:
        return any(b.endswith("TestCase") for b in self.external_bases(qn))

    def callable_instance(self, atom) -> bool:
        """The instance's class (or a base in the project) defines ``__call__``."""
        h = self.heap.get(atom[1])
        return bool(h and h["cls"] and self.find_method(h["cls"], "__call__") is not None)

    def call_method_of(self, atom, name: str, args, kwargs, frame: Frame) -> Optional[V]:
        if atom[0] != "inst":
            return None
        h = self.heap.get(atom[1])
        if not h or not h["cls"]:
            return None
        m = self.find_method(h["cls"], name)
        if m is None:
            return None
        return self.settled(self.call_function(m[1], args, kwargs, frame, self_atom=atom))

    def _tmp_text(self, name: str, parts: Optional[List[str]], args, frame: Frame, fresh: bool) -> Optional[V]:
        """``write_text(literal)`` into the test's tmp_path (at ``parts``), on a way every branch
        took, keeps the text there, as ``touch()`` of a path the run had not made (``fresh``)
        keeps an empty one; ``read_text()`` reads back what is kept (``contents``)."""
        if parts is None or len(parts) != 1:
            return None
        if name in ("write_text", "touch") and not (self.undecided or self.guarded or self.missed_depth):
            text = "" if name == "touch" and fresh else _literal_str(args[0]) if name == "write_text" and args else None
            if text is not None:
                self.ctx.tmp_text = remember_text(self.ctx.tmp_text, parts[0], text)
            return None
        if name == "read_text" and (text := kept_text(self.ctx, parts)) is not None:
            return lit(text, frame.path, frame.line, True)   # test data (contract row T1)
        return None

    def settled(self, v: V) -> V:
        """A call's result where no ``apply`` reads it: a raise on every way sets ``call_raised``."""
        if RAISED in v.atoms:
            self.call_raised = True
            return EMPTY
        return v

    def _str_join(self, sep: Optional[str], items: V, frame: Frame) -> V:
        """``sep.join(items)``: the whole string when ``sep`` and every item are known strings,
        else a string built from the first item."""
        seqs = [a for a in items.refs() if a[0] == "seq"]
        if len(seqs) == 1 and len(items.atoms) == 1:
            texts = [values(x) for x in seqs[0][2]]
            if sep is not None and all(t is not None and len(t) == 1 and isinstance(t[0], str) for t in texts):
                whole = sep.join(t[0] for t in texts)
                if seqs[0][2]:
                    return _with_text(seqs[0][2][0], whole).with_path(False)
                return lit(whole, frame.path, frame.line, frame.in_test)
            if seqs[0][2]:
                return _head(seqs[0][2][0]).with_path(False)
        return _head(self._element(items)).with_path(False)

    def call_data_method(self, base: V, name: str, args, kwargs, frame: Frame, pos) -> V:
        classes = {instance_class(a) for a in base.atoms}
        method = f"{next(iter(classes))}.{name}" if len(classes) == 1 else None
        if method in self.p.catalogue.raises:
            return RAISED_V   # ctx.exit(1) on click's Context never returns (catalogue [raises])
        if method in self.p.catalogue.handed:   # executor.map(fn, items): fn runs (catalogue [handed])
            return self.call_handed(self.p.catalogue.handed[method], args, kwargs, frame, pos)
        answer = self._class_answer(base, name)
        if answer is not None:
            return answer
        if name == "as_cwd" and not args and base.is_path:
            return of(("patcher", "cwd", (base,)))   # py.path's: the with block runs in that folder
        if name in ("ensure", "ensure_dir") and base.is_path:
            if under_tmp(base):
                self.ctx.tmp_tree = UNKNOWN_TREE
            return base   # py.path's: makes the file or folder, and is that path
        if name in ("items", "keys", "values") and base.atoms and all(machine_data(a) for a in base.atoms):
            return base   # the entries of the user's data are theirs too
        if name == "join" and len(args) == 1 and _is_str_data(base):
            # str.join: a string built from the items (the separator is no origin of it)
            return self._str_join(_literal_str(base), args[0], frame)
        if name in _STR_ONLY_ARITY and len(args) + len(kwargs) != 1:
            name = "str." + name   # str.replace(old, new): Path.replace takes one target
        spec = self.p.catalogue.path_methods.get(name)
        if spec is not None and (base.is_path or spec.distinctive):
            # S1 on the sink itself: patch("pathlib.Path.write_text") / patch.object(Path, ...)
            for owner in _PATH_CLASSES:
                key = (("ext", owner), name)
                if key in self.ctx.patches:
                    return self.apply(self.ctx.patches[key], args, kwargs, frame, pos)
            write, may_write = writes_of(spec, args, kwargs)
            parts = marked_only(base) if self.ctx.tmp_tree != UNKNOWN_TREE else None
            # touch() of a path the run has not made makes an empty file: asked before the sink makes it
            fresh = name == "touch" and parts is not None and tmp_answer(self.ctx.tmp_tree, "exists", parts) is False
            out = self.record_sink(spec, f"Path.{name}", base, frame, pos, write=write, path_method=True,
                                   may_write=may_write)
            if spec.dest and (dest := _pick(spec.dest, args, kwargs)) is not None:   # src.rename(dst) writes dst
                self.record_sink(spec, f"Path.{name}", dest, frame, pos, write=True, path_method=True)
            return self._tmp_text(name, parts, args, frame, fresh) or out
        if name in _SAME_PATH_METHODS and marked_only(base):
            return base.with_path(name not in ("as_posix", "__fspath__"))   # the same path under tmp_path
        if name == "joinpath" and (t := tmp_joined([base] + list(args), True)) is not None:
            return t
        if name in ("resolve", "absolute") and base.is_path and self.ctx.cwd is None:
            return from_cwd(base, name).with_path(True)   # Path("data").resolve(): from the working directory
        if name in _PATH_VALUE_METHODS:
            return _head(base).with_path(True)
        if name == "expanduser":
            return base.with_path(True)
        if name == "format" and (whole := _formatted(base, args, kwargs)) is not None:
            return lit(whole, frame.path, frame.line, frame.in_test)   # "_load_{}".format("json"): the name
        if name in ("format", "format_map") and _literal_str(base, prefix=True) is not None:
            tmpl = _literal_str(base, prefix=True)
            if (tmpl.startswith("{") or scheme_only(tmpl.split("{", 1)[0]) and "{" in tmpl) and args:
                return _head(args[0])   # "{}/x".format(BASE), "sqlite:///{}".format(DB_FILE)
            return _head(base)
        if name in ("startswith", "endswith", "find", "split", "rsplit", "partition", "rpartition") and \
                len(args) == 1 and not kwargs and not base.is_path and (parts := marked_only(base)) is not None \
                and (arg := _literal_str(args[0])) is not None:
            r = tmp_str_answer(name, parts, arg)   # str(tmp_path / "a").startswith("-"): False
            if r == "same" and name.endswith("partition"):
                empty = lit("", frame.path, frame.line, frame.in_test)
                return of(seq_atom("tuple", (base, empty, empty) if name == "partition" else (empty, empty, base),
                                   exact=True))
            if r == "same":
                return of(seq_atom("list", (base,), exact=True))
            if r is not None:
                return lit(r, frame.path, frame.line, frame.in_test)
        if name == "partition" and len(args) == 1 and not kwargs and partition_front(base, _literal_str(args[0])):
            # os.path.abspath(t).partition(":"): its front starts at the root as the text does
            return of(seq_atom("tuple", (base, UNKNOWN_V, UNKNOWN_V), exact=True))
        if name in ("lower", "casefold", "strip", "rstrip", "lstrip") and not args and not kwargs and \
                not base.is_path and (parts := marked_only(base)) is not None and \
                all(p == (p.lower() if name in ("lower", "casefold") else p.strip()) for p in parts):
            return base   # str(tmp_path / "t").lower(): the part reads the same (its suffix decides endswith)
        if name in ("lower", "casefold", "endswith") and not kwargs and (ends := known_ends(base)) is not None:
            if name != "endswith" and not args and all(e == e.lower() for e in ends):
                return base   # str(Path("tests/t").resolve()).lower(): its known end reads the same
            if name == "endswith" and len(args) == 1 and (arg := _literal_str(args[0])) is not None and \
                    (r := ends_with(ends, arg)) is not None:
                return lit(r, frame.path, frame.line, frame.in_test)   # ... .endswith(".zip"): its end decides
        if name in ("startswith", "endswith") and len(args) == 1 and not kwargs:
            r = _str_affix(name, base, args[0])   # WINDOWS = sys.platform.startswith("win")
            return EMPTY if r is None else lit(r, frame.path, frame.line, frame.in_test)
        known = _str_method_result(base, name, args, kwargs)
        if known is not None:
            return known
        if name in ("strip", "rstrip", "lstrip", "lower", "upper", "str.replace", "encode", "decode", "rsplit",
                    "split", "removesuffix", "removeprefix", "casefold", "title", "expandtabs", "ljust", "rjust",
                    "__str__"):
            return _head(base).with_path(False)   # a string method's result is a string
        if name in ("replace", "copy", "get", "mktemp", "getbasetemp"):
            return _head(base)
        if under_tmp(base):
            self.ctx.tmp_tree = UNKNOWN_TREE   # a method the catalogue does not know may write there
        return UNKNOWN_V

    def _class_answer(self, base: V, name: str) -> Optional[V]:
        """What ``name()`` answers on instances of library classes whose class fixes it (the
        catalogue's ``[answers]``), when every atom of ``base`` is one with the same answer."""
        answers = self.p.catalogue.answers
        if name not in self.p.catalogue.answer_methods or not base.atoms:
            return None
        found = set()
        for a in base.atoms:
            key = f"{instance_class(a)}.{name}"
            if key not in answers:   # also "None.isatty": not a library instance
                return None
            found.add(answers[key])
        return lit(found.pop(), None, None, False) if len(found) == 1 else None

    def _is_test_class_inst(self, a) -> bool:
        h = self.heap.get(a[1])
        if not h or not h["cls"]:
            return False
        return self.p.in_test.get(self.p.classes[h["cls"]][1], False)


def _decorated(f: Optional[dict], *names: str) -> bool:
    """Whether function summary ``f`` has one of the decorators ``names`` (dotted as written)."""
    return f is not None and any(dotted_name(d) in names for d, _l in f["decorators"])


def _is_str_data(v: V) -> bool:
    """Whether ``v`` is a string (a literal or one built from literals), not a path object."""
    return (not v.is_path and bool(v.atoms) and
            all(isinstance(a, Origin) and a.kind == "literal" and a.expr[:1] in ("'", '"') for a in v.atoms))


# str methods without side effects, computed when the string and the arguments are known
_PURE_STR_METHODS = {"upper", "lower", "strip", "lstrip", "rstrip", "split", "rsplit", "partition", "rpartition",
                     "replace", "removeprefix", "removesuffix", "casefold", "title", "capitalize", "splitlines",
                     "isdigit", "isalpha", "isalnum", "isidentifier", "count", "find", "rfind", "zfill"}


def _str_method_result(base: V, name: str, args, kwargs) -> Optional[V]:
    """``"cat".split()``, ``"a-b".replace("-", "_")``: the result, keeping where the string was
    bound (a test's literal stays the test's); None when not every value is known."""
    name = name[4:] if name.startswith("str.") else name
    text = _literal_str(base)
    if name not in _PURE_STR_METHODS or text is None or base.is_path or kwargs or len(args) > 3:
        return None
    vals = []
    for a in args:
        v = values(a)
        if v is None or len(v) != 1 or not isinstance(v[0], (str, int)) and v[0] is not None:
            return None
        vals.append(v[0])
    try:
        out = getattr(text, name)(*vals)
    except (TypeError, ValueError):
        return None
    if isinstance(out, str):
        return _with_text(base, out).with_path(False)
    if isinstance(out, (list, tuple)) and len(out) <= 64:
        return of(seq_atom("list" if isinstance(out, list) else "tuple",   # exactly these items
                           (_with_text(base, part).with_path(False) for part in out), exact=True))
    if isinstance(out, (bool, int)):
        origin = next(iter(base.origins()), None)
        return lit(out, origin.path if origin else None, origin.line if origin else None,
                   bool(origin and origin.in_test))
    return None


def _formatted(base: V, args, kwargs) -> Optional[str]:
    """``template.format(...)`` where the template (a name, not a path or URL) and every argument
    are one known string or number: the text it makes; None otherwise."""
    tmpl = _literal_str(base)
    if tmpl is None or any(c in tmpl for c in "/\\:"):
        return None   # a path or URL keeps its constant's origin ("sqlite:///{}".format(DB_FILE))
    given = []
    for a in list(args) + list(kwargs.values()):
        vals = values(a)
        if not vals or len(vals) != 1 or type(vals[0]) not in (str, int, float):
            return None
        given.append(vals[0])
    try:
        return tmpl.format(*given[:len(args)], **dict(zip(kwargs, given[len(args):])))
    except (IndexError, KeyError, ValueError, AttributeError, TypeError):
        return None
