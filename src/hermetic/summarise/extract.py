"""Per-file extraction: source bytes -> a small serializable summary.

This is the only module that touches libcst trees. ``summarize`` is a pure function of
its arguments; everything downstream (linking, the interpreter, the rules) works on the
summary it returns, so summaries can be cached and built in worker processes.

Shape of a summary (plain dicts, lists, strings, ints; JSON-serializable):

``{"module": str, "path": str, "is_package": bool, "body": [stmt],
   "functions": {qualname: function}, "classes": {qualname: class},
   "suppressions": {line: [codes] or ["*"]}, "lines": int}``

Expressions and statements are tuples (lists after a JSON round-trip) whose first item
names the form; the ``_Extractor`` methods named in ``_EXPR``, ``_STMT`` and ``_SMALL`` make
the complete set. Positions are
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

    amod, refused = _precheck(data)
    try:
        # unchecked nodes only where CPython accepted the source: else libcst's checks judge it
        tree = _parse_module(cst, data) if amod is not None else cst.parse_module(data)
    except cst.ParserSyntaxError as exc:
        raise SummaryError(_syntax_message(exc, refused)) from None
    except (UnicodeDecodeError, LookupError) as exc:
        raise SummaryError(f"cannot decode source: {exc}") from None
    except Exception as exc:  # libcst raises assorted errors on exotic input
        raise SummaryError(f"cannot parse: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from None
    try:
        pos, comments = _positions(tree, amod, data)   # from the source's own spelling
        suppressions = _suppressions(comments)
        ex = _Extractor(module, is_package, pos, cst)
        if data.isascii() or not _needs_folding(tree, data):
            body = ex.block(tree.body, scope=module, cls=None)
        else:
            with _folded_names(cst):
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


_NON_ASCII_WORD = re.compile(r"\w*[^\x00-\x7f]\w*")


def _needs_folding(tree, data: bytes) -> bool:
    """Whether some identifier of the source may change under NFKC (PEP 3131): some non-ASCII
    word of the text (strings and comments included, which errs on the safe side) does. Most
    non-ASCII files are NFKC already, which one C-level check tells."""
    import unicodedata

    try:
        text = data.decode(tree.encoding)
    except (UnicodeDecodeError, LookupError):
        return False
    if unicodedata.is_normalized("NFKC", text):
        return False
    return any(w.isidentifier() and unicodedata.normalize("NFKC", w) != w for w in _NON_ASCII_WORD.findall(text))


@contextlib.contextmanager
def _folded_names(cst):
    """While it lasts, every libcst ``Name`` reads as Python spells the identifier: NFKC-normalized
    (``ｏｓ`` is ``os``). libcst keeps the source spelling. The slot that stores the value stays
    the storage; only reading goes through the fold. Parse workers run one file at a time."""
    import unicodedata

    slot = cst.Name.__dict__["value"]

    def read(node):
        v = slot.__get__(node, cst.Name)
        return v if v.isascii() else unicodedata.normalize("NFKC", v)

    cst.Name.value = property(read, slot.__set__)
    try:
        yield
    finally:
        cst.Name.value = slot


def _parse_module(cst, data: bytes):
    """``libcst.parse_module(data)`` without each node re-validating itself as it is built.

    Every libcst node checks its own fields in ``__post_init__``. For a tree the native parser
    built from source that CPython's own parser accepted, that is a fifth of the parse
    (measured on a sixth of Django's files: 4.7 -> 3.8 s), and libcst's own comment there says
    as much. The check is left out only while this parse runs, and only where
    ``__post_init__`` does nothing but that check, so a libcst that puts more there keeps its
    own behaviour. Nodes built by other threads in that window skip it too."""
    base = cst.CSTNode
    post = base.__dict__.get("__post_init__")
    if post is None or getattr(post, "__code__", None) is None or post.__code__.co_names != ("_validate",):
        return cst.parse_module(data)
    base.__post_init__ = _no_check
    try:
        return cst.parse_module(data)
    finally:
        base.__post_init__ = post


def _no_check(self) -> None:
    return None


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
    cache (``hermetic.engine.reuse``) keys the state collection leaves by it."""
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
    code generation (``hermetic.summarise.positions``)."""
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


def _syntax_message(exc, refused: Optional[SyntaxError]) -> str:
    """One line for a file libcst does not parse. Where CPython refused it too, CPython's
    message and line, which name the mistake ("'(' was never closed" where libcst says what it
    expected at the line after); where CPython accepted it, libcst's, saying so: the code is
    valid, libcst cannot read it (a 5,000-literal implicit concatenation)."""
    if refused is not None and refused.lineno:
        col = f", column {refused.offset}" if refused.offset else ""
        return f"syntax error at line {refused.lineno}{col}: {' '.join(str(refused.msg).split())}"
    text = " ".join(str(exc.message).split())
    if refused is None:
        return f"libcst cannot parse this file, which CPython accepts: {text}"
    return f"syntax error: {text}"


def _precheck(data: bytes) -> Tuple[Optional[Any], Optional[SyntaxError]]:
    """Refuse input the native parser cannot take safely, before it sees it.

    libcst's native parser overflows its stack (a segfault, not an exception) on ~1,500 nested
    brackets or a ~10,000-term operator chain. CPython's own parser is the judge: at the default
    recursion limit it refuses more than 200 nested brackets, 100 indentation levels and
    expression trees too deep to build, so a file refused here could not be imported by the
    tests either. So is a NUL byte, which no Python version accepts and libcst reads inside a
    string or a comment. Other syntax errors are left to libcst, which knows newer syntax than an
    older interpreter's ``ast``. Costs about a tenth of the libcst parse. Returns ``(the ast
    module, None)`` (the positions are read off it), or ``(None, the SyntaxError)`` where ``ast``
    refuses the source (libcst may still read it), or ``(None, None)``.
    """
    import ast
    import sys

    limit = sys.getrecursionlimit()
    if limit != _DEFAULT_RECURSION_LIMIT:   # parse workers raise it for libcst's recursive walks
        sys.setrecursionlimit(_DEFAULT_RECURSION_LIMIT)
    try:
        return ast.parse(data), None
    except SyntaxError as exc:
        if exc.msg and exc.msg.startswith("too many"):
            raise SummaryError(f"too deeply nested to analyse (line {exc.lineno}): {exc.msg}; "
                               "CPython cannot compile it either") from None
        if exc.msg and "null bytes" in exc.msg:
            raise SummaryError(f"cannot parse: {exc.msg}; CPython cannot compile it either") from None
        return None, exc
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
    return None, None


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
        return _STMT[type(s)](self, s, scope, cls)

    def _s_line(self, s, scope, cls) -> List[Any]:
        out = []
        line = self.line(s)
        if s.body:   # statement IR keeps the line only; the span is here for anchors on a whole statement
            first, last = self.pos(s.body[0]), self.pos(s.body[-1])
            self.spans[str(line)] = [first[1], last[2], last[3]]
        for small in s.body:
            out.extend(self.small(small, scope, cls, line))
        return out

    def _s_small(self, s, scope, cls) -> List[Any]:
        return self.small(s, scope, cls, self.line(s))

    def _s_def(self, s, scope, cls) -> List[Any]:
        qn = self.function(s, scope, cls)
        return [("def", s.name.value, qn, self.line(s.name))]

    def _s_class(self, s, scope, cls) -> List[Any]:
        qn = self.klass(s, scope)
        return [("class", s.name.value, qn, self.line(s.name))]

    def _s_if(self, s, scope, cls) -> List[Any]:
        orelse = s.orelse
        if isinstance(orelse, self.cst.If):
            other = self.stmt(orelse, scope, cls)
        else:
            other = self.suite(orelse.body, scope, cls) if orelse is not None else []
        return [("if", self.expr(s.test), self.suite(s.body, scope, cls), other, self.line(s))]

    def _s_for(self, s, scope, cls) -> List[Any]:
        orelse = self.suite(s.orelse.body, scope, cls) if s.orelse else []
        return [("for", self.target(s.target), self.expr(s.iter), self.suite(s.body, scope, cls), orelse, self.line(s))]

    def _s_while(self, s, scope, cls) -> List[Any]:
        orelse = self.suite(s.orelse.body, scope, cls) if s.orelse else []
        return [("while", self.expr(s.test), self.suite(s.body, scope, cls), orelse, self.line(s))]

    def _s_try(self, s, scope, cls) -> List[Any]:
        name_cls = self.cst.Name
        handlers = []
        for h in s.handlers:
            name = h.name.name.value if h.name is not None and isinstance(h.name.name, name_cls) else None
            handlers.append([name, self.suite(h.body, scope, cls)])
        orelse = self.suite(s.orelse.body, scope, cls) if s.orelse else []
        final = self.suite(s.finalbody.body, scope, cls) if s.finalbody else []
        return [("try", self.suite(s.body, scope, cls), handlers, orelse, final, self.line(s))]

    def _s_with(self, s, scope, cls) -> List[Any]:
        items = []
        for it in s.items:
            tgt = self.target(it.asname.name) if it.asname is not None else None
            items.append([self.expr(it.item), tgt])
        return [("with", items, self.suite(s.body, scope, cls), self.line(s), bool(s.asynchronous))]

    def _s_match(self, s, scope, cls) -> List[Any]:
        cases = [self.suite(case.body, scope, cls) for case in s.cases]
        return [("match", self.expr(s.subject), cases, self.line(s))]

    def _s_other(self, s, scope, cls) -> List[Any]:
        return []

    def small(self, s, scope, cls, line) -> List[Any]:
        return _SMALL[type(s)](self, s, line)

    def _m_expr(self, s, line) -> List[Any]:
        return [("expr", self.expr(s.value), line)]

    def _m_assign(self, s, line) -> List[Any]:
        return [("assign", [self.target(t.target) for t in s.targets], self.expr(s.value), line)]

    def _m_annassign(self, s, line) -> List[Any]:
        if s.value is None:
            return [("ann", self.target(s.target), self.expr(s.annotation), line)]
        return [("assign", [self.target(s.target)], self.expr(s.value), line, self.expr(s.annotation))]

    def _m_augassign(self, s, line) -> List[Any]:
        op = type(s.operator).__name__
        return [("augassign", self.target(s.target), op, self.expr(s.value), line)]

    def _m_return(self, s, line) -> List[Any]:
        return [("return", self.expr(s.value) if s.value is not None else None, line)]

    def _m_import(self, s, line) -> List[Any]:
        names = []
        for alias in s.names:
            full = _dotted(alias.name)
            if alias.asname is not None:
                names.append([alias.asname.name.value, full, True])
            else:
                names.append([full.split(".")[0], full, False])
            self.names.update(full.split("."))
        return [("import", names, line)]

    def _m_import_from(self, s, line) -> List[Any]:
        level = len(s.relative)
        base = _dotted(s.module) if s.module is not None else ""
        mod = self.resolve_relative(base, level)
        if isinstance(s.names, self.cst.ImportStar):
            return [("from", mod, [["*", "*"]], line)]
        names = []
        for alias in s.names:
            attr = _dotted(alias.name)
            local = alias.asname.name.value if alias.asname is not None else attr
            names.append([local, attr])
            self.names.add(attr)
        return [("from", mod, names, line)]

    def _m_del(self, s, line) -> List[Any]:
        return [("del", self.target(s.target), line)]

    def _m_global(self, s, line) -> List[Any]:
        return [("global", [n.name.value for n in s.names], line)]

    def _m_raise(self, s, line) -> List[Any]:
        return [("raise", self.expr(s.exc) if s.exc is not None else None, line)]

    def _m_assert(self, s, line) -> List[Any]:
        return [("expr", self.expr(s.test), line)]

    def _m_other(self, s, line) -> List[Any]:
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

    def expr(self, e) -> Any:
        if e is None:
            return ("lit", None)
        return _EXPR[type(e)](self, e)

    # one method per kind of libcst expression node, found by ``_EXPR`` (the chain of isinstance
    # checks it replaced was 40% of the summary walk)
    def _x_name(self, e) -> Any:
        v = e.value
        if v in _CONSTANTS:
            return ("lit", _CONSTANTS[v])
        self.names.add(v)
        return ("name", v)

    def _x_simple_string(self, e) -> Any:
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

    def _x_concatenated_string(self, e) -> Any:
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

    def _x_formatted_string(self, e) -> Any:
        text = self.cst.FormattedStringText
        parts = []
        for part in e.parts:
            if isinstance(part, text):
                parts.append(("lit", part.value))
                if len(part.value) <= _NAME_STRING:
                    self._string_names(part.value)
            else:
                parts.append(self.expr(part.expression))
        return ("fstr", parts)

    def _x_integer(self, e) -> Any:
        try:
            return ("lit", int(e.value.replace("_", ""), 0))
        except ValueError:
            return ("lit", 0)

    def _x_float(self, e) -> Any:
        return ("lit", 0.0)

    def _x_attribute(self, e) -> Any:
        attr = e.attr.value
        self.names.add(attr)
        return ("attr", self.expr(e.value), attr)

    def _x_call(self, e) -> Any:
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

    def _x_binary(self, e) -> Any:
        return ("bin", type(e.operator).__name__, self.expr(e.left), self.expr(e.right), self.pos(e))

    def _x_boolean(self, e) -> Any:
        op = "or" if isinstance(e.operator, self.cst.Or) else "and"
        return ("bool", op, [self.expr(e.left), self.expr(e.right)])

    def _x_ifexp(self, e) -> Any:
        return ("ifx", self.expr(e.test), self.expr(e.body), self.expr(e.orelse))

    def _x_subscript(self, e) -> Any:
        return ("sub", self.expr(e.value), self.slice(e), self.pos(e))

    def _x_sequence(self, e) -> Any:
        starred = self.cst.StarredElement
        items = []
        for el in e.elements:
            if isinstance(el, starred):
                items.append(("star", self.expr(el.value)))
            else:
                items.append(self.expr(el.value))
        return ("seq", type(e).__name__.lower(), items)

    def _x_dict(self, e) -> Any:
        element = self.cst.DictElement
        items = []
        for el in e.elements:
            if isinstance(el, element):
                items.append([self.expr(el.key), self.expr(el.value)])
            else:
                items.append([None, self.expr(el.value)])
        return ("dict", items)

    def _x_lambda(self, e) -> Any:
        params = self.params(e.params)
        with self._own_yields():   # `lambda: (yield)` makes the lambda a generator, not its function
            body = self.expr(e.body)
        return ("lambda", params, body, self.pos(e))

    def _x_await(self, e) -> Any:
        return self.expr(e.expression)

    def _x_yield(self, e) -> Any:
        if self.yields:
            self.yields[-1][0] = True
        val = e.value
        if val is not None and isinstance(val, self.cst.From):
            return ("yield", self.expr(val.item), self.pos(e))
        return ("yield", self.expr(val) if val is not None else ("lit", None), self.pos(e))

    def _x_comparison(self, e) -> Any:
        items = [self.expr(e.left)] + [self.expr(t.comparator) for t in e.comparisons]
        ops = [type(t.operator).__name__ for t in e.comparisons]
        return ("cmp", ops, items, self.pos(e))

    def _x_unary(self, e) -> Any:
        return ("unary", type(e.operator).__name__, self.expr(e.expression))

    def _x_comprehension(self, e) -> Any:
        gens = []
        f = e.for_in
        while f is not None:
            gens.append([self.target(f.target), self.expr(f.iter), [self.expr(i.test) for i in f.ifs]])
            f = f.inner_for_in
        if isinstance(e, self.cst.DictComp):
            elts = [self.expr(e.key), self.expr(e.value)]
        else:
            elts = [self.expr(e.elt)]
        return ("comp", gens, elts)

    def _x_walrus(self, e) -> Any:
        return ("walrus", self.target(e.target), self.expr(e.value))

    def _x_ellipsis(self, e) -> Any:
        return ("lit", "...")

    def _x_unknown(self, e) -> Any:
        return ("unk",)


_CONSTANTS = {"None": None, "True": True, "False": False}

class _Dispatch(dict):
    """libcst node type -> the ``_Extractor`` method converting its nodes, found on first use:
    the one named (in ``by_name``) for the nearest libcst class in the type's MRO, else
    ``default``."""

    def __init__(self, by_name: Dict[str, Any], default: Any) -> None:
        super().__init__()
        self.by_name = by_name
        self.default = default

    def __missing__(self, cls: type) -> Any:
        fn = self.default
        for base in cls.__mro__:
            if base.__module__.startswith("libcst") and base.__name__ in self.by_name:
                fn = self.by_name[base.__name__]
                break
        self[cls] = fn
        return fn


_EXPR = _Dispatch({
    "Name": _Extractor._x_name, "SimpleString": _Extractor._x_simple_string,
    "ConcatenatedString": _Extractor._x_concatenated_string,
    "FormattedString": _Extractor._x_formatted_string, "Integer": _Extractor._x_integer,
    "Float": _Extractor._x_float, "Imaginary": _Extractor._x_float,
    "Attribute": _Extractor._x_attribute, "Call": _Extractor._x_call,
    "BinaryOperation": _Extractor._x_binary, "BooleanOperation": _Extractor._x_boolean,
    "IfExp": _Extractor._x_ifexp, "Subscript": _Extractor._x_subscript,
    "List": _Extractor._x_sequence, "Tuple": _Extractor._x_sequence, "Set": _Extractor._x_sequence,
    "Dict": _Extractor._x_dict, "Lambda": _Extractor._x_lambda, "Await": _Extractor._x_await,
    "Yield": _Extractor._x_yield, "Comparison": _Extractor._x_comparison,
    "UnaryOperation": _Extractor._x_unary, "ListComp": _Extractor._x_comprehension,
    "SetComp": _Extractor._x_comprehension, "GeneratorExp": _Extractor._x_comprehension,
    "DictComp": _Extractor._x_comprehension, "NamedExpr": _Extractor._x_walrus,
    "Ellipsis": _Extractor._x_ellipsis,
}, _Extractor._x_unknown)
_STMT = _Dispatch({
    "SimpleStatementLine": _Extractor._s_line, "BaseSmallStatement": _Extractor._s_small,
    "FunctionDef": _Extractor._s_def, "ClassDef": _Extractor._s_class, "If": _Extractor._s_if,
    "For": _Extractor._s_for, "While": _Extractor._s_while, "Try": _Extractor._s_try,
    "TryStar": _Extractor._s_try, "With": _Extractor._s_with, "Match": _Extractor._s_match,
}, _Extractor._s_other)
_SMALL = _Dispatch({
    "Expr": _Extractor._m_expr, "Assign": _Extractor._m_assign, "AnnAssign": _Extractor._m_annassign,
    "AugAssign": _Extractor._m_augassign, "Return": _Extractor._m_return, "Import": _Extractor._m_import,
    "ImportFrom": _Extractor._m_import_from, "Del": _Extractor._m_del, "Global": _Extractor._m_global,
    "Raise": _Extractor._m_raise, "Assert": _Extractor._m_assert,
}, _Extractor._m_other)


def _dotted(node) -> str:
    import libcst as cst

    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""
