"""Expressions: evaluating a summary expression to an abstract value (``V``): names,
operators, conditions, subscripts and attributes; calls go to ``calls``.
"""
from __future__ import annotations

from typing import Optional

from .literals import _BUILTINS, _literal_int, _literal_str, _str_affix, _str_contains, is_none, truthiness
from .origins import _PATH_ATTRS, _climb, _first_item, _has_path_origin, _head, _join_head, _with_text, scheme_only
from .state import Frame
from .values import DOUBLE, DOUBLE_V, EMPTY, UNKNOWN_V, Origin, V, lit, of, union


class Expressions:
    """``Interp`` methods that evaluate expressions."""

    # ------------------------------------------------------------------ lookup
    def lookup(self, name: str, frame: Frame) -> V:
        if name in frame.locals and not frame.is_module:
            return frame.locals[name]
        cl = self.closures.get(frame.name)
        if cl is not None and name in cl:
            return cl[name]
        key = (("mod", frame.module), name)
        if key in self.ctx.patches:
            return self.ctx.patches[key]
        # ``self._read("gattr", frame.module, name)``, inlined: this is the hot path
        gb = self._gbits.get(frame.module)
        b = gb.get(name) if gb is not None else None
        self.greads |= b if b is not None else self._gbit(frame.module, name)
        w = self.watch_g.get(frame.module)
        if w is not None and name in w:
            self.reads |= w[name]
        g = self.globals.get(frame.module)
        if g is not None and name in g:
            v = g[name]
            if not self.import_time:
                self._consume(v)
            if self.ctx.sites:
                v = self._check_miss(v, frame.module, name)
            return v
        if name in frame.locals:
            return frame.locals[name]
        if name in _BUILTINS:
            key = (("ext", "builtins"), name)
            if key in self.ctx.patches:
                return self.ctx.patches[key]
            return of(("ext", f"builtins.{name}"))
        if name == "__builtins__":   # the builtins module (its dict in an imported module)
            return of(("ext", "builtins"))
        return UNKNOWN_V

    # ------------------------------------------------------------------ expressions
    def eval(self, e, frame: Frame) -> V:  # noqa: C901 - one dispatch over expression forms
        k = e[0]
        if k == "lit":
            return lit(e[1], frame.path, frame.line, frame.in_test)
        if k == "name":
            return self.lookup(e[1], frame)
        if k == "attr":
            return self.eval_attr(self.eval(e[1], frame), e[2], frame, e)
        if k == "call":
            return self.eval_call(e, frame)
        if k == "fstr":
            parts = e[1]
            vals = [self.eval(p, frame) for p in parts]
            if not parts:
                return lit("", frame.path, frame.line, frame.in_test)
            first = parts[0]
            if first[0] == "lit" and isinstance(first[1], str) and first[1] != "":
                text = first[1]
                if len(parts) > 1 and scheme_only(text):
                    return _head(vals[1])   # f"sqlite:///{DB_FILE}": located by DB_FILE
                whole = lit(text, frame.path, frame.line, frame.in_test)
                return whole if len(parts) == 1 else _head(whole)
            return _head(vals[0])
        if k == "bin":
            left = self.eval(e[2], frame)
            right = self.eval(e[3], frame)
            op = e[1]
            if op == "Modulo" and _literal_str(left, prefix=True) is not None:
                tmpl = _literal_str(left, prefix=True)
                if tmpl.startswith("%"):
                    return _head(_first_item(right))
                return _head(left)
            if op == "Add":
                whole = _literal_str(left), _literal_str(right)
                if whole[0] is not None and whole[1] is not None:   # MODULE + ".name": a whole string
                    return _with_text(left, whole[0] + whole[1])
            if op == "Add" and scheme_only(_literal_str(left)):
                return _head(right)   # "sqlite:///" + DB_FILE: located by DB_FILE
            if op in ("Add", "Divide", "Modulo"):
                res = _head(_join_head([left, right]) if op == "Divide" else left)
                if op == "Divide":
                    res = res.with_path(left.is_path or right.is_path or _has_path_origin(left))
                return res
            return EMPTY
        if k == "bool":
            return self.eval_boolop(e, frame)
        if k == "ifx":
            cond = self.eval_cond(e[1], frame)
            if cond is True:
                return self.eval(e[2], frame)
            if cond is False:
                return self.eval(e[3], frame)
            return self.eval(e[2], frame) | self.eval(e[3], frame)
        if k == "sub":
            return self.eval_sub(e, frame)
        if k == "seq":
            items = []
            for it in e[2]:
                if it[0] == "star":
                    items.append(self._element(self.eval(it[1], frame)))
                else:
                    items.append(self.eval(it, frame))
            return of(("seq", e[1], tuple(items)))
        if k == "dict":
            items = []
            for kexpr, vexpr in e[1]:
                key = self.eval(kexpr, frame) if kexpr is not None else EMPTY
                items.append((_literal_str(key), self.eval(vexpr, frame)))
            return of(("dict", tuple(items)))
        if k == "lambda":
            # numbered in evaluation order, not by address: memo keys hash it, and a run's result
            # must not depend on where the allocator put the summary
            # (by place, not by object: a body read again after ``transient_bodies`` is a new object)
            lid = self._lambda_ids.setdefault((frame.path, e[3][0], e[3][1]), len(self._lambda_ids))
            captured = dict(frame.locals)
            self.lambdas[lid] = (e, frame.module, frame.path, captured, frame.in_test)
            self.wlog.append(("lambda", lid, None, captured))
            if frame.in_test:
                return of(DOUBLE)
            return of(("lambda", lid))
        if k == "yield":
            v = self.eval(e[1], frame)
            frame.yields = frame.yields | v
            if frame.yield_ctx is None:
                frame.yield_ctx = self.ctx.copy()
            return UNKNOWN_V
        if k == "cmp":
            return self.eval_cmp(e, frame)
        if k == "unary":
            self.eval(e[2], frame)
            return EMPTY
        if k == "comp":
            saved = dict(frame.locals)
            for tgt, it, ifs in e[1]:
                self.assign(tgt, self._element(self.eval(it, frame)), frame)
                for cond in ifs:
                    self.eval(cond, frame)
            out = union(self.eval(x, frame) for x in e[2])
            frame.locals = saved
            return of(("seq", "list", (out,))) if out.atoms else EMPTY
        if k == "walrus":
            v = self.eval(e[2], frame)
            self.assign(e[1], v, frame)
            return v
        if k == "star":
            return self.eval(e[1], frame)
        return UNKNOWN_V

    def eval_boolop(self, e, frame: Frame) -> V:
        op, operands = e[1], e[2]
        out = EMPTY
        for i, x in enumerate(operands):
            last = i == len(operands) - 1
            if x[0] in ("cmp", "unary", "bool"):
                t = self.eval_cond(x, frame)
                v = EMPTY
            else:
                v = self.eval(x, frame)
                t = truthiness(v)
            if op == "or":
                if t is True:
                    return out | v
                if t is False and not last:
                    continue
                out = out | v
            else:
                if t is False:
                    return out | v
                if t is True and not last:
                    continue
                out = out | v
        return out

    def eval_cond(self, e, frame: Frame) -> Optional[bool]:
        k = e[0]
        if k == "cmp" and len(e[1]) == 1 and e[1][0] in ("Is", "IsNot"):
            left, right = e[2]
            if right[0] == "lit" and right[1] is None:
                v = self.eval(left, frame)
                n = is_none(v)
                if n is None:
                    return None
                return n if e[1][0] == "Is" else (not n)
        if k == "cmp" and len(e[1]) == 1 and e[1][0] in ("Equal", "NotEqual"):
            a, b = (self.eval(x, frame) for x in e[2])
            sa, sb = _literal_str(a), _literal_str(b)
            if sa is not None and sb is not None and len(a.atoms) == 1 and len(b.atoms) == 1:
                return (sa == sb) == (e[1][0] == "Equal")
            return None
        if k == "cmp" and len(e[1]) == 1 and e[1][0] in ("In", "NotIn"):
            a, b = (self.eval(x, frame) for x in e[2])
            if self._environ_membership(a, b, e[3], frame):
                return None
            r = _str_contains(a, b)
            return None if r is None else r == (e[1][0] == "In")
        if (k == "call" and e[1][0] == "attr" and e[1][2] in ("startswith", "endswith") and len(e[2]) == 1
                and not e[3] and e[1][1][0] in ("name", "attr", "lit") and e[2][0][0] in ("name", "attr", "lit", "seq")):
            base = self.eval(e[1][1], frame)
            if base.atoms and all(isinstance(x, Origin) for x in base.atoms):   # str data: no method of ours
                return _str_affix(e[1][2], base, self.eval(e[2][0], frame))
        if k == "unary" and e[1] == "Not":
            r = self.eval_cond(e[2], frame)
            return None if r is None else (not r)
        if k in ("name", "attr"):
            return truthiness(self.eval(e, frame))
        if k == "bool":
            # short-circuit: operands after a deciding one are not evaluated (nor their sinks)
            unknown = False
            for x in e[2]:
                r = self.eval_cond(x, frame)
                if e[1] == "and" and r is False:
                    return False
                if e[1] == "or" and r is True:
                    return True
                if r is None:
                    unknown = True
            if unknown:
                return None
            return e[1] == "and"
        if k == "call" and e[1] == ("name", "isinstance") or (k == "call" and list(e[1]) == ["name", "isinstance"]):
            if e[2]:
                first = self.eval(e[2][0], frame)
                if is_none(first) is True:
                    return False
        v = self.eval(e, frame)
        if k == "call" and v.atoms and all((isinstance(a, tuple) and a[0] in ("inst", "modobj")) or
                                           (isinstance(a, Origin) and a.kind == "literal") for a in v.atoms):
            return truthiness(v)
        return None

    def eval_cmp(self, e, frame: Frame) -> V:
        ops, items = e[1], e[2]
        vals = [self.eval(x, frame) for x in items]
        for i, op in enumerate(ops):
            if op in ("In", "NotIn"):
                self._environ_membership(vals[i], vals[i + 1], e[3], frame)
        return EMPTY

    def _environ_membership(self, key: V, container: V, pos, frame: Frame) -> bool:
        """``key in os.environ`` reads the variable: recorded; True when ``container`` is it."""
        if not any(a == ("ext", "os.environ") for a in container.refs()):
            return False
        self.env_read(_literal_str(key, prefix=True), tuple(pos), frame, "os.environ")
        return True

    def eval_sub(self, e, frame: Frame) -> V:
        base = self.eval(e[1], frame)
        key = self.eval(e[2], frame)
        out = EMPTY
        for a in base.ordered():
            if a == ("ext", "os.environ") or a == ("ext", "os.environb"):
                out = out | self.env_read(_literal_str(key, prefix=True), tuple(e[3]), frame, "os.environ")
            elif isinstance(a, Origin):
                out = out | of(a, is_path=base.is_path)
            elif a[0] == "seq":
                idx = _literal_int(key)
                if idx is not None and -len(a[2]) <= idx < len(a[2]):
                    out = out | a[2][idx]
                else:
                    out = out | union(a[2])
            elif a[0] == "dict":
                ks = _literal_str(key)
                hit = [v for kk, v in a[1] if kk == ks or kk is None] if ks is not None else []
                out = out | (union(hit) if hit else union(v for _, v in a[1]) if ks is None else UNKNOWN_V)
            elif a == DOUBLE:
                out = out | DOUBLE_V
            elif a == ("ext", "builtins") and _literal_str(key) is not None:
                out = out | self.eval_attr(of(a), _literal_str(key), frame)   # __builtins__["open"]
            else:
                out = out | UNKNOWN_V
        return out if out.atoms else UNKNOWN_V

    def _element(self, v: V) -> V:
        out = EMPTY
        for a in v.ordered():
            if isinstance(a, Origin):
                out = out | of(a)
            elif a[0] == "seq":
                out = out | union(a[2])
            elif a[0] == "dict":
                out = out | union(lit(k, None, None, False) for k, _ in a[1] if k is not None)
            elif a == DOUBLE:
                out = out | DOUBLE_V
            else:
                out = out | UNKNOWN_V
        return out if out.atoms else UNKNOWN_V

    # ------------------------------------------------------------------ attributes
    def eval_attr(self, base: V, name: str, frame: Frame, node=None) -> V:  # noqa: C901
        out = EMPTY
        for a in base.ordered():
            if isinstance(a, Origin):
                if name in _PATH_ATTRS:
                    if name in ("parent", "parents"):
                        a = _climb(a, 1 if name == "parent" else None)
                    out = out | of(a, is_path=name in ("parent", "parents") or base.is_path)
                else:
                    out = out | of(("dmeth", of(a, is_path=base.is_path), name))
                continue
            t = a[0]
            if t == "mod":
                out = out | self.module_attr(a[1], name)
            elif t == "ext":
                key = (("ext", a[1]), name)
                if key in self.ctx.patches:
                    out = out | self.ctx.patches[key]
                elif frame.in_test and a[1] == "sys" and name == "executable":
                    # the interpreter, named by the test: a program the test chose, wherever the
                    # call that starts it is (row T1), as a literal program name from the test is
                    out = out | of(Origin("test-value", expr="sys.executable", path=frame.path, line=frame.line))
                else:
                    out = out | of(("ext", f"{a[1]}.{name}"))
            elif t == "cls":
                v = self.class_attr(a[1], name)
                if v is not None:
                    out = out | v
                else:
                    m = self.find_method(a[1], name)
                    out = out | (of(("func", m[1], ("cls", a[1]))) if m else UNKNOWN_V)
            elif t == "inst":
                out = out | self.inst_attr(a, name, frame)
            elif t == "super":
                m = self.find_method(a[2], name, after=a[1])
                out = out | (of(("func", m[1], a[3])) if m else UNKNOWN_V)
            elif a == DOUBLE:
                out = out | DOUBLE_V
            elif t == "modobj":
                out = out | (of(Origin("project-file", expr="module.__file__")) if name == "__file__" else UNKNOWN_V)
            elif t == "fixture" and a[1] == "request" and name == "param":
                out = out | self.lookup("__request_param__", frame)
            elif t in ("client", "fixture", "patcher", "handle", "mark", "partial", "ctxfactory", "clirunner"):
                out = out | of(("meth", a, name))
            elif t == "func":
                out = out | UNKNOWN_V
            else:
                out = out | UNKNOWN_V
        return out if out.atoms else UNKNOWN_V
