"""Where the libcst nodes the extractor reports lie in the source: (line, column, end_line,
end_column), 1-based lines and 0-based columns counted in characters, the ranges libcst's
``PositionProvider`` gives (syntactic: a node's own parentheses left out).

Two ways, one result. ``from_ast`` reads them off the ``ast`` tree CPython's parser makes of the
same source (``parse.precheck`` builds it anyway), walking both trees side by side over the
statements and expressions the extractor looks at: about a sixth of the cost of the other way.
``from_codegen`` (``hermetic.summarise.codegen``, re-exported here) computes every node's range
from libcst's own code generation (what the position provider does, without its metadata
machinery). Where the two trees do not line up
(an ``ast`` that refuses newer syntax, a tuple default split over lines, anything unforeseen)
``from_ast`` raises ``Mismatch`` and the caller takes ``from_codegen``; tests hold the two equal
on every fixture file and on generated modules (``tests/test_positions.py``), and on the
pinned real-world trees (1.7 million ranges of Django and SQLAlchemy) they were.
"""
from __future__ import annotations

import ast
import re
import sys
from typing import Any, Dict, List

import libcst as c

from .codegen import from_codegen

__all__ = ["Mismatch", "from_ast", "from_codegen"]


class Mismatch(Exception):
    """The libcst and ast trees of a module do not correspond somewhere: use ``from_codegen``."""


_NEWLINE = re.compile(r"\r\n?|\n")


# Python 3.9's ast puts the expressions inside an f-string at wrong columns (seen on pytest's tree)
_OLD_FSTRINGS = sys.version_info < (3, 10)
_DEF = re.compile(r"(?:async[ \t\f]+)?def[ \t\f]+")
_CLASS = re.compile(r"class[ \t\f]+")


class _Walk:
    """The side-by-side walk of ``from_ast``: ``out`` maps libcst nodes to their ranges."""

    def __init__(self, lines: List[str]):
        self.lines = lines
        self.out: Dict[Any, tuple] = {}

    def col(self, line: int, col: int) -> int:
        """ast counts a column in UTF-8 bytes, libcst in characters."""
        text = self.lines[line - 1]
        if text.isascii():
            return col
        return len(text.encode("utf-8")[:col].decode("utf-8", "replace"))

    def rng(self, a) -> tuple:
        return (a.lineno, self.col(a.lineno, a.col_offset), a.end_lineno, self.col(a.end_lineno, a.end_col_offset))

    def put(self, node, a) -> None:
        self.out[node] = self.rng(a)

    def put_expr(self, node, a) -> None:
        """Any expression's range: libcst's leaves out the node's own parentheses, as ast's
        does for all but a tuple's."""
        r = self.rng(a)
        if type(node) is c.Tuple and node.lpar:
            if len(node.lpar) != 1 or len(node.rpar) != 1:
                raise Mismatch("tuple parens")
            after, before = node.lpar[0].whitespace_after, node.rpar[0].whitespace_before
            if type(after) is not c.SimpleWhitespace or type(before) is not c.SimpleWhitespace or r[0] != r[2]:
                raise Mismatch("tuple paren whitespace")
            r = (r[0], r[1] + 1 + len(after.value), r[2], r[3] - 1 - len(before.value))
        self.out[node] = r

    # ---- statements
    def block(self, stmts, astmts) -> None:
        i = 0
        for s in stmts:
            if isinstance(s, c.SimpleStatementLine):
                n = len(s.body)
                part = astmts[i:i + n]
                if len(part) != n or n == 0:
                    raise Mismatch("simple line")
                i += n
                for sm, a in zip(s.body, part):
                    self.small(sm, a)
                first, last = self.out[s.body[0]], self.out[s.body[-1]]
                self.out[s] = first[:2] + last[2:]
            elif isinstance(s, c.BaseSmallStatement):
                if i >= len(astmts):
                    raise Mismatch("small")
                self.small(s, astmts[i])
                i += 1
            else:
                if i >= len(astmts):
                    raise Mismatch("compound")
                self.compound(s, astmts[i])
                i += 1
        if i != len(astmts):
            raise Mismatch("block length")

    def suite(self, node, astmts) -> None:
        body = node.body
        self.block(body if isinstance(body, (list, tuple)) else [body], astmts)

    def small(self, s, a) -> None:
        self.put(s, a)
        t = type(s)
        if t is c.Expr and type(a) is ast.Expr:
            self.expr(s.value, a.value)
        elif t is c.Assign and type(a) is ast.Assign and len(s.targets) == len(a.targets):
            for tg, at in zip(s.targets, a.targets):
                self.expr(tg.target, at)
            self.expr(s.value, a.value)
        elif t is c.AnnAssign and type(a) is ast.AnnAssign:
            self.expr(s.target, a.target)
            self.expr(s.annotation.annotation, a.annotation)
            if (s.value is None) != (a.value is None):
                raise Mismatch("annassign")
            if s.value is not None:
                self.expr(s.value, a.value)
        elif t is c.AugAssign and type(a) is ast.AugAssign:
            self.expr(s.target, a.target)
            self.expr(s.value, a.value)
        elif t is c.Return and type(a) is ast.Return:
            self.opt(s.value, a.value)
        elif t is c.Raise and type(a) is ast.Raise:
            self.opt(s.exc, a.exc)
            self.opt(s.cause.item if s.cause is not None else None, a.cause)
        elif t is c.Assert and type(a) is ast.Assert:
            self.expr(s.test, a.test)
            self.opt(s.msg, a.msg)
        elif t is c.Del and type(a) is ast.Delete:
            tg = s.target
            if len(a.targets) == 1:
                self.expr(tg, a.targets[0])
            elif isinstance(tg, (c.Tuple, c.List)) and len(tg.elements) == len(a.targets) and not tg.lpar:
                for el, at in zip(tg.elements, a.targets):
                    self.expr(el.value, at)
            else:
                raise Mismatch("del")
        elif (t, type(a)) in _NO_CHILDREN:
            pass
        else:
            raise Mismatch(f"small {t.__name__} {type(a).__name__}")

    def opt(self, e, a) -> None:
        if (e is None) != (a is None):
            raise Mismatch("optional")
        if e is not None:
            self.expr(e, a)

    def decorators(self, decs, adecs) -> None:
        if len(decs) != len(adecs):
            raise Mismatch("decorators")
        for d, a in zip(decs, adecs):
            line = a.lineno
            # the `@` of a decorator is on its expression's line (else: ask codegen)
            text = self.lines[line - 1]
            at = text.rfind("@", 0, len(text.encode("utf-8")[:a.col_offset].decode("utf-8", "replace")))
            if at < 0 or text[at + 1:self.col(line, a.col_offset)].strip():
                raise Mismatch("decorator @")
            self.out[d] = (line, at, a.end_lineno, self.col(a.end_lineno, a.end_col_offset))
            self.expr(d.decorator, a)

    def name_after(self, node, a, pattern) -> None:
        text = self.lines[a.lineno - 1]
        col = self.col(a.lineno, a.col_offset)
        m = pattern.match(text, col)
        if m is None or not text.startswith(node.name.value, m.end()):
            raise Mismatch("def name")
        start = m.end()
        self.out[node.name] = (a.lineno, start, a.lineno, start + len(node.name.value))

    def compound(self, s, a) -> None:
        t = type(s)
        if t is c.FunctionDef and type(a) in (ast.FunctionDef, ast.AsyncFunctionDef):
            self.decorators(s.decorators, a.decorator_list)
            self.name_after(s, a, _DEF)
            self.params(s.params, a.args)
            self.out[s] = self.rng(a)
            self.suite(s.body, a.body)
            return
        if t is c.ClassDef and type(a) is ast.ClassDef:
            self.decorators(s.decorators, a.decorator_list)
            self.name_after(s, a, _CLASS)
            self.args(list(s.bases) + list(s.keywords), a.bases, a.keywords)
            self.out[s] = self.rng(a)
            self.suite(s.body, a.body)
            return
        self.out[s] = self.rng(a)
        if t is c.If and type(a) is ast.If:
            self.expr(s.test, a.test)
            self.suite(s.body, a.body)
            orelse = s.orelse
            if orelse is None:
                if a.orelse:
                    raise Mismatch("if else")
            elif isinstance(orelse, c.If):
                if len(a.orelse) != 1 or type(a.orelse[0]) is not ast.If:
                    raise Mismatch("elif")
                self.compound(orelse, a.orelse[0])
            else:
                self.suite(orelse.body, a.orelse)
            return
        if t is c.For and type(a) in (ast.For, ast.AsyncFor):
            self.expr(s.target, a.target)
            self.expr(s.iter, a.iter)
            self.suite(s.body, a.body)
            self.orelse(s.orelse, a.orelse)
            return
        if t is c.While and type(a) is ast.While:
            self.expr(s.test, a.test)
            self.suite(s.body, a.body)
            self.orelse(s.orelse, a.orelse)
            return
        if (t is c.Try and type(a) is ast.Try) or (t is getattr(c, "TryStar", None) and
                                                   type(a) is getattr(ast, "TryStar", None)):
            self.suite(s.body, a.body)
            if len(s.handlers) != len(a.handlers):
                raise Mismatch("handlers")
            for h, ah in zip(s.handlers, a.handlers):
                self.opt(h.type, ah.type)
                self.suite(h.body, ah.body)
            self.orelse(s.orelse, a.orelse)
            self.orelse(s.finalbody, a.finalbody)
            return
        if t is c.With and type(a) in (ast.With, ast.AsyncWith):
            if len(s.items) != len(a.items):
                raise Mismatch("with items")
            for it, ai in zip(s.items, a.items):
                self.expr(it.item, ai.context_expr)
                self.opt(it.asname.name if it.asname is not None else None, ai.optional_vars)
            self.suite(s.body, a.body)
            return
        if t is getattr(c, "Match", None) and type(a) is getattr(ast, "Match", None):
            self.expr(s.subject, a.subject)
            if len(s.cases) != len(a.cases):
                raise Mismatch("cases")
            for case, ac in zip(s.cases, a.cases):
                self.suite(case.body, ac.body)
            return
        raise Mismatch(f"compound {t.__name__} {type(a).__name__}")

    def orelse(self, node, astmts) -> None:
        if node is None:
            if astmts:
                raise Mismatch("else")
            return
        self.suite(node.body, astmts)

    def params(self, p, a) -> None:
        positional = list(p.posonly_params) + list(p.params)
        with_default = [prm for prm in positional if prm.default is not None]
        if len(with_default) != len(a.defaults):
            raise Mismatch("defaults")
        for prm, ad in zip(with_default, a.defaults):
            self.put_expr(prm.default, ad)
            self.expr(prm.default, ad)
        if len(p.kwonly_params) != len(a.kwonlyargs):
            raise Mismatch("kwonly")
        for prm, ad in zip(p.kwonly_params, a.kw_defaults):
            if (prm.default is None) != (ad is None):
                raise Mismatch("kw default")
            if prm.default is not None:
                self.put_expr(prm.default, ad)
                self.expr(prm.default, ad)

    def args(self, cargs, aargs, akws) -> None:
        pos = [x for x in cargs if x.keyword is None and x.star != "**"]
        kws = [x for x in cargs if x.keyword is not None or x.star == "**"]
        if len(pos) != len(aargs) or len(kws) != len(akws):
            raise Mismatch("args")
        for x, ax in zip(pos, aargs):
            if x.star == "*":
                if type(ax) is not ast.Starred:
                    raise Mismatch("star arg")
                ax = ax.value
            self.expr(x.value, ax)
        for x, ak in zip(kws, akws):
            self.expr(x.value, ak.value)

    # ---- expressions: one ``_x_`` method per libcst expression type, found by ``_EXPR`` (exact
    # types; the chain of type checks it replaced read as one 187-line method)
    def expr(self, e, a) -> None:
        fn = _EXPR.get(type(e))
        if fn is None:
            raise Mismatch(f"expr {type(e).__name__} {type(a).__name__}")
        fn(self, e, a)

    def _x_name(self, e, a) -> None:
        at = type(a)
        if at not in (ast.Name, ast.Constant):
            raise Mismatch("name")

    def _x_attribute(self, e, a) -> None:
        at = type(a)
        if at is not ast.Attribute:
            raise Mismatch("attr")
        self.expr(e.value, a.value)

    def _x_call(self, e, a) -> None:
        at = type(a)
        if at is not ast.Call:
            raise Mismatch("call")
        self.put(e, a)
        self.expr(e.func, a.func)
        self.args(e.args, a.args, a.keywords)

    def _x_constant(self, e, a) -> None:
        at = type(a)
        if at is not ast.Constant:
            raise Mismatch("constant")

    def _x_fstring(self, e, a) -> None:
        at = type(a)
        parts = []
        _fparts(e, parts)
        if at is ast.Constant:
            if parts:
                raise Mismatch("fstring constant")
            return
        if at is not ast.JoinedStr:
            raise Mismatch("fstring")
        if _OLD_FSTRINGS:
            raise Mismatch("f-string positions before Python 3.10")
        vals = []
        _avalues(a, vals)
        if len(vals) != len(parts):
            raise Mismatch("fstring parts")
        for part, av in zip(parts, vals):
            self.expr(part.expression, av.value)

    def _x_binary(self, e, a) -> None:
        at = type(a)
        if at is not ast.BinOp:
            raise Mismatch("bin")
        self.put(e, a)
        self.expr(e.left, a.left)
        self.expr(e.right, a.right)

    def _x_boolean(self, e, a) -> None:
        at = type(a)
        if at is not ast.BoolOp:
            raise Mismatch("bool")
        operands = _bool_operands(e, type(e.operator))
        if len(operands) != len(a.values):
            raise Mismatch("bool operands")
        for x, ax in zip(operands, a.values):
            self.expr(x, ax)

    def _x_unary(self, e, a) -> None:
        at = type(a)
        if at is not ast.UnaryOp:
            raise Mismatch("unary")
        self.expr(e.expression, a.operand)

    def _x_comparison(self, e, a) -> None:
        at = type(a)
        if at is not ast.Compare or len(e.comparisons) != len(a.comparators):
            raise Mismatch("cmp")
        self.put(e, a)
        self.expr(e.left, a.left)
        for ct, ac in zip(e.comparisons, a.comparators):
            self.expr(ct.comparator, ac)

    def _x_ifexp(self, e, a) -> None:
        at = type(a)
        if at is not ast.IfExp:
            raise Mismatch("ifexp")
        self.expr(e.body, a.body)
        self.expr(e.test, a.test)
        self.expr(e.orelse, a.orelse)

    def _x_subscript(self, e, a) -> None:
        at = type(a)
        if at is not ast.Subscript:
            raise Mismatch("sub")
        self.put(e, a)
        self.expr(e.value, a.value)
        els = e.slice
        sl = a.slice
        if len(els) == 1 and els[0].comma is c.MaybeSentinel.DEFAULT:
            asl = [sl]
        elif type(sl) is ast.Tuple:
            asl = sl.elts
        else:
            raise Mismatch("slice tuple")
        if len(els) != len(asl):
            raise Mismatch("slice len")
        for el, ax in zip(els, asl):
            s = el.slice
            if type(s) is c.Index:
                if s.star is not None:
                    if type(ax) is not ast.Starred:
                        raise Mismatch("star index")
                    ax = ax.value
                self.expr(s.value, ax)
            else:
                if type(ax) is not ast.Slice:
                    raise Mismatch("slice")
                self.opt(s.lower, ax.lower)
                self.opt(s.upper, ax.upper)
                self.opt(s.step, ax.step)

    def _x_sequence(self, e, a) -> None:
        at = type(a)
        if at not in (ast.List, ast.Tuple, ast.Set) or len(e.elements) != len(a.elts):
            raise Mismatch("seq")
        for el, ax in zip(e.elements, a.elts):
            if type(el) is c.StarredElement:
                if type(ax) is not ast.Starred:
                    raise Mismatch("starred")
                ax = ax.value
            self.expr(el.value, ax)

    def _x_dict(self, e, a) -> None:
        at = type(a)
        if at is not ast.Dict or len(e.elements) != len(a.values):
            raise Mismatch("dict")
        for el, ak, av in zip(e.elements, a.keys, a.values):
            if type(el) is c.DictElement:
                if ak is None:
                    raise Mismatch("dict key")
                self.expr(el.key, ak)
            elif ak is not None:
                raise Mismatch("dict star")
            self.expr(el.value, av)

    def _x_lambda(self, e, a) -> None:
        at = type(a)
        if at is not ast.Lambda:
            raise Mismatch("lambda")
        self.put(e, a)
        self.params(e.params, a.args)
        self.expr(e.body, a.body)

    def _x_await(self, e, a) -> None:
        at = type(a)
        if at is not ast.Await:
            raise Mismatch("await")
        self.expr(e.expression, a.value)

    def _x_yield(self, e, a) -> None:
        at = type(a)
        if at not in (ast.Yield, ast.YieldFrom):
            raise Mismatch("yield")
        self.put(e, a)
        v = e.value
        if isinstance(v, c.From):
            if at is not ast.YieldFrom:
                raise Mismatch("yield from")
            self.expr(v.item, a.value)
        else:
            self.opt(v, a.value)

    def _x_comprehension(self, e, a) -> None:
        t = type(e)
        at = type(a)
        if at not in (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp):
            raise Mismatch("comp")
        if t is c.DictComp:
            self.expr(e.key, a.key)
            self.expr(e.value, a.value)
        else:
            self.expr(e.elt, a.elt)
        f = e.for_in
        for g in a.generators:
            if f is None:
                raise Mismatch("for_in")
            self.expr(f.target, g.target)
            self.expr(f.iter, g.iter)
            if len(f.ifs) != len(g.ifs):
                raise Mismatch("ifs")
            for i, ai in zip(f.ifs, g.ifs):
                self.expr(i.test, ai)
            f = f.inner_for_in
        if f is not None:
            raise Mismatch("for_in left")

    def _x_walrus(self, e, a) -> None:
        at = type(a)
        if at is not ast.NamedExpr:
            raise Mismatch("walrus")
        self.expr(e.target, a.target)
        self.expr(e.value, a.value)

    def _x_starred(self, e, a) -> None:
        at = type(a)
        if at is not ast.Starred:
            raise Mismatch("starred el")
        self.expr(e.value, a.value)


#: libcst expression type -> the ``_Walk`` method walking it beside its ast node
_EXPR = {
    c.Name: _Walk._x_name, c.Attribute: _Walk._x_attribute, c.Call: _Walk._x_call,
    c.SimpleString: _Walk._x_constant, c.Integer: _Walk._x_constant, c.Float: _Walk._x_constant,
    c.Imaginary: _Walk._x_constant, c.Ellipsis: _Walk._x_constant, c.ConcatenatedString: _Walk._x_fstring,
    c.FormattedString: _Walk._x_fstring, c.BinaryOperation: _Walk._x_binary,
    c.BooleanOperation: _Walk._x_boolean, c.UnaryOperation: _Walk._x_unary, c.Comparison: _Walk._x_comparison,
    c.IfExp: _Walk._x_ifexp, c.Subscript: _Walk._x_subscript, c.List: _Walk._x_sequence,
    c.Tuple: _Walk._x_sequence, c.Set: _Walk._x_sequence, c.Dict: _Walk._x_dict, c.Lambda: _Walk._x_lambda,
    c.Await: _Walk._x_await, c.Yield: _Walk._x_yield, c.ListComp: _Walk._x_comprehension,
    c.SetComp: _Walk._x_comprehension, c.GeneratorExp: _Walk._x_comprehension,
    c.DictComp: _Walk._x_comprehension, c.NamedExpr: _Walk._x_walrus, c.StarredElement: _Walk._x_starred,
}

_NO_CHILDREN = {(c.Import, ast.Import), (c.ImportFrom, ast.ImportFrom), (c.Global, ast.Global),
                (c.Nonlocal, ast.Nonlocal), (c.Pass, ast.Pass), (c.Break, ast.Break), (c.Continue, ast.Continue)}


def _fparts(e, out) -> None:
    """The formatted expressions ({...}) of an f-string or concatenation, in order, each
    followed by those of its format spec ({x:{width}})."""
    if type(e) is c.ConcatenatedString:
        _fparts(e.left, out)
        _fparts(e.right, out)
    elif type(e) is c.FormattedString:
        _fspec(e.parts, out)


def _fspec(parts, out) -> None:
    for p in parts:
        if type(p) is c.FormattedStringExpression:
            out.append(p)
            if p.format_spec:
                _fspec(p.format_spec, out)


def _avalues(a, out) -> None:
    for v in a.values:
        if type(v) is ast.FormattedValue:
            out.append(v)
            if v.format_spec is not None:
                _avalues(v.format_spec, out)


def _bool_operands(e, op) -> list:
    out = []
    left = e.left
    if type(left) is c.BooleanOperation and type(left.operator) is op and not left.lpar:
        out.extend(_bool_operands(left, op))
    else:
        out.append(left)
    right = e.right
    if type(right) is c.BooleanOperation and type(right.operator) is op and not right.lpar:
        out.extend(_bool_operands(right, op))
    else:
        out.append(right)
    return out


def from_ast(tree, amod: ast.Module, text: str) -> Dict[Any, tuple]:
    """Ranges of the nodes the extractor asks about (statements, def/class names, decorators,
    default values, calls, binary operations, subscripts, lambdas, yields, comparisons) of the
    libcst ``tree``, from ``amod``, the ``ast`` tree of the same ``text`` (the decoded source).
    Raises ``Mismatch`` where the trees differ in shape."""
    walk = _Walk(_NEWLINE.split(text))
    walk.block(tree.body, amod.body)
    return walk.out
