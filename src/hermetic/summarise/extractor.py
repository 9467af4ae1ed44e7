"""The extractor: a libcst module tree -> the statements, functions and classes of its summary.

``Extractor`` converts one module; its ``_s_*``, ``_m_*`` and ``_x_*`` methods each convert one
kind of libcst statement, small statement or expression node, found through the ``_STMT``,
``_SMALL`` and ``_EXPR`` dispatch tables. What each emits is the summary IR, whose grammar
(every tag, its fields in order and their shapes) is ``hermetic.summarise.ir``. The extractor
also collects what the summary keeps beside the IR: functions and classes by qualname,
statement spans, the call count and the identifiers the file uses.
"""
from __future__ import annotations

import contextlib
import math
from typing import Any, Dict, List, Optional

from .ir import DEF_NAME, DEF_QUALNAME, FSTR_PARTS, LIT_VALUE, TAG


_NAME_STRING = 200   # longer strings are prose, not attribute names or patch targets


class Extractor:
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
        self.jumps: List[bool] = []   # per loop whose body is being built: a break or continue of its own seen

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
        orelse = self.suite(s.orelse.body, scope, cls) if s.orelse else []   # its break is the outer loop's
        body, jumps = self._loop_body(s, scope, cls)
        out = ("for", self.target(s.target), self.expr(s.iter), body, orelse, self.line(s))
        return [out + (True,) if jumps else out]

    def _loop_body(self, s, scope, cls):
        """A loop's body, and whether a ``break`` or ``continue`` of its own is in it (not one of
        a loop nested in it, whose body has its own entry on ``jumps``)."""
        self.jumps.append(False)
        try:
            return self.suite(s.body, scope, cls), self.jumps[-1]
        finally:
            self.jumps.pop()

    def _s_while(self, s, scope, cls) -> List[Any]:
        orelse = self.suite(s.orelse.body, scope, cls) if s.orelse else []
        body, _jumps = self._loop_body(s, scope, cls)
        return [("while", self.expr(s.test), body, orelse, self.line(s))]

    def _s_try(self, s, scope, cls) -> List[Any]:
        name_cls = self.cst.Name
        handlers = []
        for h in s.handlers:
            name = h.name.name.value if h.name is not None and isinstance(h.name.name, name_cls) else None
            handlers.append([name, self.suite(h.body, scope, cls), self.expr(h.type) if h.type is not None else None])
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

    def _m_nonlocal(self, s, line) -> List[Any]:
        return [("nonlocal", [n.name.value for n in s.names], line)]

    def _m_raise(self, s, line) -> List[Any]:
        return [("raise", self.expr(s.exc) if s.exc is not None else None, line)]

    def _m_assert(self, s, line) -> List[Any]:
        return [("expr", self.expr(s.test), line, True)]

    def _m_other(self, s, line) -> List[Any]:
        return []

    def _m_jump(self, s, line) -> List[Any]:
        if not self.jumps:   # outside a loop (a syntax error Python reports): nothing
            return []
        self.jumps[-1] = True   # the loop it belongs to may end early or skip
        return [("jump", "break" if type(s).__name__ == "Break" else "continue", line)]

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
        if qn in self.classes:   # defined again (each arm of a platform `if`): keep both
            qn = f"{qn}@{self.line(node.name)}"
        with self._own_yields():   # a class body is no generator's
            body = self.suite(node.body, qn, qn)
        methods = {}
        for st in body:
            if st[TAG] == "def":
                methods[st[DEF_NAME]] = st[DEF_QUALNAME]
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
        if len(node.slice) == 1 and isinstance(node.slice[0].slice, c.Slice) and node.slice[0].slice.step is None:
            sl = node.slice[0].slice
            bounds = [_slice_bound(c, b) for b in (sl.lower, sl.upper)]
            if all(b is not _NOT_A_BOUND for b in bounds):
                return ("slice", bounds[0], bounds[1])   # args[0:1], url[7:]
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
            if sub[TAG] == "fstr":
                parts.extend(sub[FSTR_PARTS])
            else:
                parts.append(sub)
        if all(p[TAG] == "lit" and isinstance(p[LIT_VALUE], str) for p in parts):
            return ("lit", "".join(p[LIT_VALUE] for p in parts))
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
        # its value, which decides `now or time.time()`; an imaginary literal by its size, an
        # infinite one as 1.0 (summaries are JSON)
        text = e.value.replace("_", "").rstrip("jJ")
        try:
            value = float(text)
        except ValueError:
            return ("lit", 0.0)
        return ("lit", value if math.isfinite(value) else 1.0)

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
    """libcst node type -> the ``Extractor`` method converting its nodes, found on first use:
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
    "Name": Extractor._x_name, "SimpleString": Extractor._x_simple_string,
    "ConcatenatedString": Extractor._x_concatenated_string,
    "FormattedString": Extractor._x_formatted_string, "Integer": Extractor._x_integer,
    "Float": Extractor._x_float, "Imaginary": Extractor._x_float,
    "Attribute": Extractor._x_attribute, "Call": Extractor._x_call,
    "BinaryOperation": Extractor._x_binary, "BooleanOperation": Extractor._x_boolean,
    "IfExp": Extractor._x_ifexp, "Subscript": Extractor._x_subscript,
    "List": Extractor._x_sequence, "Tuple": Extractor._x_sequence, "Set": Extractor._x_sequence,
    "Dict": Extractor._x_dict, "Lambda": Extractor._x_lambda, "Await": Extractor._x_await,
    "Yield": Extractor._x_yield, "Comparison": Extractor._x_comparison,
    "UnaryOperation": Extractor._x_unary, "ListComp": Extractor._x_comprehension,
    "SetComp": Extractor._x_comprehension, "GeneratorExp": Extractor._x_comprehension,
    "DictComp": Extractor._x_comprehension, "NamedExpr": Extractor._x_walrus,
    "Ellipsis": Extractor._x_ellipsis,
}, Extractor._x_unknown)
_STMT = _Dispatch({
    "SimpleStatementLine": Extractor._s_line, "BaseSmallStatement": Extractor._s_small,
    "FunctionDef": Extractor._s_def, "ClassDef": Extractor._s_class, "If": Extractor._s_if,
    "For": Extractor._s_for, "While": Extractor._s_while, "Try": Extractor._s_try,
    "TryStar": Extractor._s_try, "With": Extractor._s_with, "Match": Extractor._s_match,
}, Extractor._s_other)
_SMALL = _Dispatch({
    "Expr": Extractor._m_expr, "Assign": Extractor._m_assign, "AnnAssign": Extractor._m_annassign,
    "AugAssign": Extractor._m_augassign, "Return": Extractor._m_return, "Import": Extractor._m_import,
    "ImportFrom": Extractor._m_import_from, "Del": Extractor._m_del, "Global": Extractor._m_global, "Nonlocal": Extractor._m_nonlocal,
    "Raise": Extractor._m_raise, "Assert": Extractor._m_assert, "Break": Extractor._m_jump,
    "Continue": Extractor._m_jump,
}, Extractor._m_other)


def _dotted(node) -> str:
    import libcst as cst

    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""


_NOT_A_BOUND = object()


def _slice_bound(c, node):
    """A slice bound the analysis can use: None (omitted) or an integer literal, maybe negative."""
    if node is None:
        return None
    sign = 1
    if isinstance(node, c.UnaryOperation) and isinstance(node.operator, c.Minus):
        sign, node = -1, node.expression
    if isinstance(node, c.Integer):
        try:
            return sign * int(node.value.replace("_", ""), 0)
        except ValueError:
            return _NOT_A_BOUND
    return _NOT_A_BOUND
