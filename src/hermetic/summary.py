"""Per-file extraction: source bytes -> a small serializable summary.

This is the only module that touches libcst trees. ``summarize`` is a pure function of
its arguments; everything downstream (linking, the interpreter, the rules) works on the
summary it returns, so summaries can be cached and built in worker processes.

Shape of a summary (plain dicts, lists, strings, ints; JSON-serializable):

``{"module": str, "path": str, "is_package": bool, "body": [stmt],
   "functions": {qualname: function}, "classes": {qualname: class},
   "suppressions": {line: [codes] or ["*"]}, "lines": int}``

Expressions and statements are tuples (lists after a JSON round-trip) whose first item
names the form; see ``_expr`` and ``_stmt`` for the complete set. Positions are
``[line, column, end_line, end_column]``, 1-based lines and 1-based columns.
"""
from __future__ import annotations

import bisect
import contextlib
import re
from typing import Any, Dict, List, Optional, Tuple

SUMMARY_VERSION = 7

_SUPPRESS = re.compile(r"#\s*hermetic:\s*ignore(?:\[([A-Za-z0-9_,\s]+)\])?", re.I)


class SummaryError(Exception):
    """The file could not be parsed; the message is one line for the report."""


def summarize(data: bytes, module: str, path: str, is_package: bool = False) -> Dict[str, Any]:
    """Parse ``data`` (raw file bytes; BOM, CRLF and PEP 263 encodings are honoured).

    ``module`` is the dotted module name the file is imported as (used to resolve
    relative imports and to qualify names); ``path`` is carried through for reports.
    Raises ``SummaryError`` with a one-line reason when the source does not parse.
    """
    import libcst as cst

    amod = _precheck(data)
    try:
        tree = cst.parse_module(data)
    except cst.ParserSyntaxError as exc:
        raise SummaryError(f"syntax error at line {exc.raw_line}: {exc.message}") from None
    except (UnicodeDecodeError, LookupError) as exc:
        raise SummaryError(f"cannot decode source: {exc}") from None
    except Exception as exc:  # libcst raises assorted errors on exotic input
        raise SummaryError(f"cannot parse: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from None
    try:
        pos, comments = _positions(tree, amod, data)
        suppressions = _suppressions(comments)
        ex = _Extractor(module, is_package, pos, cst)
        body = ex.block(tree.body, scope=module, cls=None)
    except RecursionError:   # parse workers run with a deep stack; a plain caller may not
        raise SummaryError("too deeply nested to analyse at this recursion limit") from None
    out = {
        "version": SUMMARY_VERSION,
        "module": module,
        "path": path,
        "is_package": is_package,
        "body": body,
        "functions": ex.functions,
        "classes": ex.classes,
        "suppressions": suppressions,
        "spans": ex.spans,
        "lines": data.count(b"\n") + 1,
        "calls": ex.calls,
        "import_digest": import_digest(module, path, is_package, body, ex.functions, ex.classes),
        "plain_defs": sorted(_plain_defs(body, ex.functions)),
        "names": sorted(ex.names),
    }
    for f in ex.functions.values():   # after the import digest, which leaves them out
        f["body_digest"] = _body_digest(f)
    return out


_NAME_STRING = 200   # longer strings are prose, not attribute names or patch targets


def may_name(summary: Dict[str, Any], names) -> bool:
    """Whether the file a summary is of may use one of the identifiers ``names`` (as a name, an
    attribute, an import or in a short string): its sorted ``names`` hold one, or it has none
    recorded. A cheap exact pre-filter before a walk that looks for those identifiers."""
    have = summary.get("names")
    if have is None:
        return True
    for name in names:
        i = bisect.bisect_left(have, name)
        if i < len(have) and have[i] == name:
            return True
    return False


def _body_digest(f: Dict[str, Any]) -> str:
    """A hash of what running a function does: its def line, parameters and body (the per-test
    result cache compares the functions that ran during collection by it)."""
    import hashlib
    import marshal

    try:
        data = marshal.dumps((f["line"], f["params"], f["body"]), 2)
    except ValueError:
        data = repr((f["line"], f["params"], f["body"])).encode()
    return hashlib.sha256(data).hexdigest()[:16]


def _plain_defs(body, functions: Dict[str, Any]) -> Dict[str, str]:
    """The module's top-level functions whose definition does nothing but bind the name: no
    decorator, literal defaults only, defined once. name -> qualname."""
    out = {}
    for st in body:
        if st[0] != "def":
            continue
        f = functions.get(st[2])
        if f is None or f["decorators"] or "@" in st[2]:
            continue
        if all(p[2] is None or p[2][0] == "lit" for p in f["params"]):
            out[st[1]] = st[2]
    return out


def import_digest(module: str, path: str, is_package: bool, body, functions: Dict[str, Any],
                  classes: Dict[str, Any]) -> str:
    """A hash of what importing the file does: the summary without the bodies of its functions
    (and without what is defined inside them), and without its plain top-level functions
    (``_plain_defs``: defining one only binds its name). Two versions of a file with the same
    digest differ only in what runs when called, not when imported, and in which plain
    functions they define; positions are part of it, so a body that grows or shrinks a line
    changes it for what follows (unless only plain functions follow). The per-test result
    cache (``hermetic.reuse``) keys the state collection leaves by it."""
    import hashlib
    import marshal

    plain = _plain_defs(body, functions)
    body = [st for st in body if not (st[0] == "def" and st[1] in plain)]
    omit = set(plain.values())
    heads = {qn: {k: v for k, v in f.items() if k not in ("body", "generator", "end_line")}
             for qn, f in functions.items() if ".<locals>." not in qn and qn not in omit
             and not any(qn.startswith(p + ".") for p in omit)}
    local = {qn: c for qn, c in classes.items() if ".<locals>." not in qn}
    try:   # marshal version 2 writes no back-references, so equal data gives equal bytes
        data = marshal.dumps((module, path, is_package, body, heads, local), 2)
    except ValueError:   # nested deeper than marshal goes
        data = repr((module, path, is_package, body, heads, local)).encode()
    return hashlib.sha256(data).hexdigest()[:32]


def _positions(tree, amod, data: bytes) -> Tuple[Dict[Any, tuple], List[tuple]]:
    """The extractor's node ranges and the module's comments: read off the ``ast`` tree where
    it lines up with libcst's (and no suppression comment needs finding), else from libcst's
    code generation (``hermetic.positions``)."""
    from . import positions as P

    if amod is not None:
        try:
            text = data.decode(tree.encoding)
        except (UnicodeDecodeError, LookupError):
            text = None
        if text is not None and not _SUPPRESS.search(text):   # comments come from code generation
            if text.startswith("\ufeff"):
                text = text[1:]
            try:
                return P.from_ast(tree, amod, text), []
            except (P.Mismatch, RecursionError):
                pass
    return P.from_codegen(tree)


def positions(tree) -> Tuple[Dict[Any, tuple], List[tuple]]:
    """Every node's range and the comments of a libcst ``Module`` (``positions.from_codegen``)."""
    from .positions import from_codegen

    return from_codegen(tree)


def _precheck(data: bytes) -> Optional[Any]:
    """Refuse input the native parser cannot take safely, before it sees it.

    libcst's native parser overflows its stack (a segfault, not an exception) on ~1,500 nested
    brackets or a ~10,000-term operator chain. CPython's own parser is the judge: at the default
    recursion limit it refuses more than 200 nested brackets, 100 indentation levels and
    expression trees too deep to build, so a file refused here could not be imported by the
    tests either. So is a NUL byte, which no Python version accepts and libcst reads inside a
    string or a comment. Other syntax errors are left to libcst, which knows newer syntax than an
    older interpreter's ``ast``. Costs about a tenth of the libcst parse; returns the ``ast``
    module (the positions are read off it), or None where ``ast`` refuses what libcst reads.
    """
    import ast
    import sys

    limit = sys.getrecursionlimit()
    if limit != _DEFAULT_RECURSION_LIMIT:   # parse workers raise it for libcst's recursive walks
        sys.setrecursionlimit(_DEFAULT_RECURSION_LIMIT)
    try:
        return ast.parse(data)
    except SyntaxError as exc:
        if exc.msg and exc.msg.startswith("too many"):
            raise SummaryError(f"too deeply nested to analyse (line {exc.lineno}): {exc.msg}; "
                               "CPython cannot compile it either") from None
        if exc.msg and "null bytes" in exc.msg:
            raise SummaryError(f"cannot parse: {exc.msg}; CPython cannot compile it either") from None
    except (RecursionError, MemoryError):
        raise SummaryError("too deeply nested or too long an expression to analyse; "
                           "CPython cannot compile it either") from None
    except ValueError as exc:   # null bytes, on Pythons older than the SyntaxError for them
        text = str(exc).splitlines()[0] if str(exc) else "ValueError"
        raise SummaryError(f"cannot parse: {text}; CPython cannot compile it either") from None
    except TypeError:
        pass
    finally:
        if limit != _DEFAULT_RECURSION_LIMIT:
            sys.setrecursionlimit(limit)


_DEFAULT_RECURSION_LIMIT = 1000


def _suppressions(comments: List[tuple]) -> Dict[str, List[str]]:
    """Inline suppressions by line, from ``(line, comment text)`` pairs."""
    out: Dict[str, List[str]] = {}
    for line, text in comments:
        m = _SUPPRESS.search(text)
        if not m:
            continue
        codes = ["*"] if not m.group(1) else [c.strip().upper() for c in m.group(1).split(",") if c.strip()]
        out.setdefault(str(line), []).extend(codes)
    return out


class _Extractor:
    def __init__(self, module: str, is_package: bool, positions, cst) -> None:
        self.module = module
        self.is_package = is_package
        self.positions = positions
        self.cst = cst
        self.functions: Dict[str, Any] = {}
        self.classes: Dict[str, Any] = {}
        self.spans: Dict[str, List[int]] = {}   # line -> [column, end_line, end_column] of its simple statements
        self.calls = 0   # call expressions in the file
        self.names: set = set()   # identifiers the file uses: names, attributes, imports, in short strings
        self.yields: List[List[bool]] = []   # per function, class body and lambda being built: a yield seen in it

    @contextlib.contextmanager
    def _own_yields(self):
        """A scope a ``yield`` inside belongs to (a function, a class body, a lambda): yields
        ``[seen]``, set when one was converted while it was the innermost."""
        mine = [False]
        self.yields.append(mine)
        try:
            yield mine
        finally:
            self.yields.pop()

    def _string_names(self, text: str) -> None:
        # a string that names something: "attr", "pkg.mod.attr", "pkg.mod:attr"
        for part in text.replace(":", ".").split("."):
            if part.isidentifier():
                self.names.add(part)

    # -- positions ---------------------------------------------------------------
    def pos(self, node) -> List[int]:
        rng = self.positions.get(node)
        if rng is None:
            return [0, 0, 0, 0]
        return [rng[0], rng[1] + 1, rng[2], rng[3] + 1]

    def line(self, node) -> int:
        return self.pos(node)[0]

    # -- statements --------------------------------------------------------------
    def block(self, stmts, scope: str, cls: Optional[str]) -> List[Any]:
        out: List[Any] = []
        for s in stmts:
            out.extend(self.stmt(s, scope, cls))
        return out

    def suite(self, node, scope, cls) -> List[Any]:
        if node is None:
            return []
        body = getattr(node, "body", [])
        if isinstance(body, (list, tuple)):
            return self.block(body, scope, cls)
        return self.block([body], scope, cls)

    def stmt(self, s, scope: str, cls: Optional[str]) -> List[Any]:
        c = self.cst
        if isinstance(s, c.SimpleStatementLine):
            out = []
            line = self.line(s)
            if s.body:   # statement IR keeps the line only; the span is here for anchors on a whole statement
                first, last = self.pos(s.body[0]), self.pos(s.body[-1])
                self.spans[str(line)] = [first[1], last[2], last[3]]
            for small in s.body:
                out.extend(self.small(small, scope, cls, line))
            return out
        if isinstance(s, (c.BaseSmallStatement,)):
            return self.small(s, scope, cls, self.line(s))
        if isinstance(s, c.FunctionDef):
            qn = self.function(s, scope, cls)
            return [("def", s.name.value, qn, self.line(s.name))]
        if isinstance(s, c.ClassDef):
            qn = self.klass(s, scope)
            return [("class", s.name.value, qn, self.line(s.name))]
        if isinstance(s, c.If):
            orelse = s.orelse
            if isinstance(orelse, c.If):
                other = self.stmt(orelse, scope, cls)
            else:
                other = self.suite(orelse.body if orelse is not None else None, scope, cls) if orelse is not None else []
            return [("if", self.expr(s.test), self.suite(s.body, scope, cls), other, self.line(s))]
        if isinstance(s, c.For):
            orelse = self.suite(s.orelse.body, scope, cls) if s.orelse else []
            return [("for", self.target(s.target), self.expr(s.iter), self.suite(s.body, scope, cls), orelse, self.line(s))]
        if isinstance(s, c.While):
            orelse = self.suite(s.orelse.body, scope, cls) if s.orelse else []
            return [("while", self.expr(s.test), self.suite(s.body, scope, cls), orelse, self.line(s))]
        if isinstance(s, (c.Try, getattr(c, "TryStar", c.Try))):
            handlers = []
            for h in s.handlers:
                name = h.name.name.value if h.name is not None and isinstance(h.name.name, c.Name) else None
                handlers.append([name, self.suite(h.body, scope, cls)])
            orelse = self.suite(s.orelse.body, scope, cls) if s.orelse else []
            final = self.suite(s.finalbody.body, scope, cls) if s.finalbody else []
            return [("try", self.suite(s.body, scope, cls), handlers, orelse, final, self.line(s))]
        if isinstance(s, c.With):
            items = []
            for it in s.items:
                tgt = self.target(it.asname.name) if it.asname is not None else None
                items.append([self.expr(it.item), tgt])
            return [("with", items, self.suite(s.body, scope, cls), self.line(s), bool(s.asynchronous))]
        match_cls = getattr(c, "Match", None)
        if match_cls is not None and isinstance(s, match_cls):
            cases = [self.suite(case.body, scope, cls) for case in s.cases]
            return [("match", self.expr(s.subject), cases, self.line(s))]
        return []

    def small(self, s, scope, cls, line) -> List[Any]:
        c = self.cst
        if isinstance(s, c.Expr):
            return [("expr", self.expr(s.value), line)]
        if isinstance(s, c.Assign):
            return [("assign", [self.target(t.target) for t in s.targets], self.expr(s.value), line)]
        if isinstance(s, c.AnnAssign):
            if s.value is None:
                return [("ann", self.target(s.target), self.expr(s.annotation), line)]
            return [("assign", [self.target(s.target)], self.expr(s.value), line, self.expr(s.annotation))]
        if isinstance(s, c.AugAssign):
            op = type(s.operator).__name__
            return [("augassign", self.target(s.target), op, self.expr(s.value), line)]
        if isinstance(s, c.Return):
            return [("return", self.expr(s.value) if s.value is not None else None, line)]
        if isinstance(s, c.Import):
            names = []
            for alias in s.names:
                full = _dotted(alias.name)
                if alias.asname is not None:
                    names.append([alias.asname.name.value, full, True])
                else:
                    names.append([full.split(".")[0], full, False])
                self.names.update(full.split("."))
            return [("import", names, line)]
        if isinstance(s, c.ImportFrom):
            level = len(s.relative)
            base = _dotted(s.module) if s.module is not None else ""
            mod = self.resolve_relative(base, level)
            if isinstance(s.names, c.ImportStar):
                return [("from", mod, [["*", "*"]], line)]
            names = []
            for alias in s.names:
                attr = _dotted(alias.name)
                local = alias.asname.name.value if alias.asname is not None else attr
                names.append([local, attr])
                self.names.add(attr)
            return [("from", mod, names, line)]
        if isinstance(s, c.Del):
            return [("del", self.target(s.target), line)]
        if isinstance(s, c.Global):
            return [("global", [n.name.value for n in s.names], line)]
        if isinstance(s, c.Raise):
            return [("raise", self.expr(s.exc) if s.exc is not None else None, line)]
        if isinstance(s, c.Assert):
            return [("expr", self.expr(s.test), line)]
        return []

    def resolve_relative(self, base: str, level: int) -> str:
        if level == 0:
            return base
        parts = self.module.split(".")
        if not self.is_package:
            parts = parts[:-1]
        if level > 1:
            parts = parts[: len(parts) - (level - 1)] if level - 1 <= len(parts) else []
        pkg = ".".join(parts)
        if base:
            return f"{pkg}.{base}" if pkg else base
        return pkg

    # -- definitions -------------------------------------------------------------
    def params(self, p) -> List[Any]:
        c = self.cst
        out = []
        for prm in list(p.posonly_params) + list(p.params):
            out.append([prm.name.value, "pos", self.expr(prm.default) if prm.default is not None else None,
                        self.pos(prm.default) if prm.default is not None else None])
        if isinstance(p.star_arg, c.Param):
            out.append([p.star_arg.name.value, "var", None])
        for prm in p.kwonly_params:
            out.append([prm.name.value, "kw", self.expr(prm.default) if prm.default is not None else None,
                        self.pos(prm.default) if prm.default is not None else None])
        if p.star_kwarg is not None:
            out.append([p.star_kwarg.name.value, "varkw", None])
        return out

    def function(self, node, scope: str, cls: Optional[str]) -> str:
        name = node.name.value
        qn = f"{scope}.{name}"
        if qn in self.functions:  # redefinition (e.g. a property setter): keep both
            qn = f"{qn}@{self.line(node.name)}"
        inner_scope = f"{qn}.<locals>"
        with self._own_yields() as mine:
            body = self.suite(node.body, inner_scope, None)
        generator = mine[0]
        self.functions[qn] = {
            "qualname": qn,
            "name": name,
            "class": cls,
            "params": self.params(node.params),
            "decorators": [[self.expr(d.decorator), self.line(d)] for d in node.decorators],
            "body": body,
            "is_async": node.asynchronous is not None,
            "generator": generator,
            "line": self.line(node.name),
            "def_pos": self.pos(node.name),
            "def_line": self._def_line(node),
            "end_line": self.pos(node)[2],
        }
        return qn

    def _def_line(self, node) -> int:
        # The line holding the `def` keyword (decorators come before it).
        return self.line(node.name)

    def klass(self, node, scope: str) -> str:
        qn = f"{scope}.{node.name.value}"
        with self._own_yields():   # a class body is no generator's
            body = self.suite(node.body, qn, qn)
        methods = {}
        for st in body:
            if st[0] == "def":
                methods[st[1]] = st[2]
        self.classes[qn] = {
            "qualname": qn,
            "name": node.name.value,
            "bases": [self.expr(a.value) for a in node.bases if not a.keyword],
            "decorators": [[self.expr(d.decorator), self.line(d)] for d in node.decorators],
            "body": body,
            "methods": methods,
            "line": self.line(node.name),
        }
        return qn

    # -- targets and expressions -------------------------------------------------
    def target(self, t) -> Any:
        c = self.cst
        if isinstance(t, c.Name):
            return ("name", t.value)
        if isinstance(t, c.Attribute):
            return ("attr", self.expr(t.value), t.attr.value)
        if isinstance(t, c.Subscript):
            return ("sub", self.expr(t.value), self.slice(t))
        if isinstance(t, (c.Tuple, c.List)):
            return ("tuple", [self.target(e.value) for e in t.elements])
        if isinstance(t, c.StarredElement):
            return self.target(t.value)
        return ("none",)

    def slice(self, node) -> Any:
        c = self.cst
        if len(node.slice) == 1 and isinstance(node.slice[0].slice, c.Index):
            return self.expr(node.slice[0].slice.value)
        return ("unk",)

    def expr(self, e) -> Any:  # noqa: C901 - one dispatch over libcst's expression nodes
        c = self.cst
        if e is None:
            return ("lit", None)
        if isinstance(e, c.Name):
            if e.value in ("None", "True", "False"):
                return ("lit", {"None": None, "True": True, "False": False}[e.value])
            self.names.add(e.value)
            return ("name", e.value)
        if isinstance(e, c.SimpleString):
            raw = e.value
            if raw[0] in "'\"" and "\\" not in raw and "\r" not in raw:   # no prefix, no escapes: the text itself
                q = 3 if raw[:3] in ('"""', "'''") and len(raw) >= 6 else 1
                v = raw[q:-q]
            else:
                try:
                    v = e.evaluated_value   # literal_eval: a parse of its own per string
                except Exception:
                    return ("unk",)
            if isinstance(v, bytes):
                v = v.decode("latin-1")
            if len(v) <= _NAME_STRING:
                self._string_names(v)
            return ("lit", v)
        if isinstance(e, c.ConcatenatedString):
            parts = []
            for side in (e.left, e.right):
                sub = self.expr(side)
                if sub[0] == "fstr":
                    parts.extend(sub[1])
                else:
                    parts.append(sub)
            if all(p[0] == "lit" and isinstance(p[1], str) for p in parts):
                return ("lit", "".join(p[1] for p in parts))
            return ("fstr", parts)
        if isinstance(e, c.FormattedString):
            parts = []
            for part in e.parts:
                if isinstance(part, c.FormattedStringText):
                    parts.append(("lit", part.value))
                    if len(part.value) <= _NAME_STRING:
                        self._string_names(part.value)
                else:
                    parts.append(self.expr(part.expression))
            return ("fstr", parts)
        if isinstance(e, c.Integer):
            try:
                return ("lit", int(e.value.replace("_", ""), 0))
            except ValueError:
                return ("lit", 0)
        if isinstance(e, (c.Float, c.Imaginary)):
            return ("lit", 0.0)
        if isinstance(e, c.Attribute):
            self.names.add(e.attr.value)
            return ("attr", self.expr(e.value), e.attr.value)
        if isinstance(e, c.Call):
            args, kwargs = [], []
            for a in e.args:
                v = self.expr(a.value)
                if a.keyword is not None:
                    kwargs.append([a.keyword.value, v])
                elif a.star == "*":
                    args.append(("star", v))
                elif a.star == "**":
                    kwargs.append(["**", v])
                else:
                    args.append(v)
            self.calls += 1
            return ("call", self.expr(e.func), args, kwargs, self.pos(e))
        if isinstance(e, c.BinaryOperation):
            return ("bin", type(e.operator).__name__, self.expr(e.left), self.expr(e.right), self.pos(e))
        if isinstance(e, c.BooleanOperation):
            op = "or" if isinstance(e.operator, c.Or) else "and"
            return ("bool", op, [self.expr(e.left), self.expr(e.right)])
        if isinstance(e, c.IfExp):
            return ("ifx", self.expr(e.test), self.expr(e.body), self.expr(e.orelse))
        if isinstance(e, c.Subscript):
            return ("sub", self.expr(e.value), self.slice(e), self.pos(e))
        if isinstance(e, (c.List, c.Tuple, c.Set)):
            items = []
            for el in e.elements:
                if isinstance(el, c.StarredElement):
                    items.append(("star", self.expr(el.value)))
                else:
                    items.append(self.expr(el.value))
            return ("seq", type(e).__name__.lower(), items)
        if isinstance(e, c.Dict):
            items = []
            for el in e.elements:
                if isinstance(el, c.DictElement):
                    items.append([self.expr(el.key), self.expr(el.value)])
                else:
                    items.append([None, self.expr(el.value)])
            return ("dict", items)
        if isinstance(e, c.Lambda):
            params = self.params(e.params)
            with self._own_yields():   # `lambda: (yield)` makes the lambda a generator, not its function
                body = self.expr(e.body)
            return ("lambda", params, body, self.pos(e))
        if isinstance(e, c.Await):
            return self.expr(e.expression)
        if isinstance(e, c.Yield):
            if self.yields:
                self.yields[-1][0] = True
            val = e.value
            if val is not None and isinstance(val, c.From):
                return ("yield", self.expr(val.item), self.pos(e))
            return ("yield", self.expr(val) if val is not None else ("lit", None), self.pos(e))
        if isinstance(e, c.Comparison):
            items = [self.expr(e.left)] + [self.expr(t.comparator) for t in e.comparisons]
            ops = [type(t.operator).__name__ for t in e.comparisons]
            return ("cmp", ops, items, self.pos(e))
        if isinstance(e, c.UnaryOperation):
            return ("unary", type(e.operator).__name__, self.expr(e.expression))
        if isinstance(e, (c.ListComp, c.SetComp, c.GeneratorExp, c.DictComp)):
            gens = []
            f = e.for_in
            while f is not None:
                gens.append([self.target(f.target), self.expr(f.iter), [self.expr(i.test) for i in f.ifs]])
                f = f.inner_for_in
            if isinstance(e, c.DictComp):
                elts = [self.expr(e.key), self.expr(e.value)]
            else:
                elts = [self.expr(e.elt)]
            return ("comp", gens, elts)
        if isinstance(e, c.NamedExpr):
            return ("walrus", self.target(e.target), self.expr(e.value))
        if isinstance(e, c.Ellipsis):
            return ("lit", "...")
        return ("unk",)


def _dotted(node) -> str:
    import libcst as cst

    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""
