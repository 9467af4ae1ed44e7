"""Expressions: evaluating a summary expression to an abstract value (``V``): names,
operators, conditions, subscripts and attributes; calls go to ``calls``.
"""
from __future__ import annotations

import os
import re
from pathlib import PurePosixPath
from typing import List, Optional

from .decide import _arithmetic, set_algebra, values
from .regexes import regex_flag
from .controls import mock_items
from .handlers import effect_of, returned
from .consumed import from_import_clock
from .libbases import library_method
from .literals import env_name, inline_nonempty, _BUILTINS, _literal_int, _literal_str, truthiness
from .origins import _PATH_ATTRS, _SHAPES, _climb, _concat, _first_item, _has_path_origin, _head, _is_absolute, _whole_join, _with_text, joined_path
from ..summarise.ir import SLICE_LOWER, SLICE_UPPER, subscript_root
from .state import Frame
from .contents import WHOLE, is_whole
from .loops import comprehension_in_order
from .rooted import may_be_key, rooted_tails
from .tmptree import is_fresh_root, joined as tmp_joined, parents as tmp_parents, part_of
from .values import (DOUBLE, DOUBLE_V, EMPTY, MAYBE_EMPTY, NONEMPTY, PREFIX, is_prefix, UNKNOWN_V, Origin, V, is_counted, is_exact, lit, of,
                     seq_atom, surely_nonempty, union)


_STR_ATTRS = {"name", "stem", "suffix", "anchor", "root", "drive", "strpath", "dirname"}
_SENTINELS = ("unittest.mock.sentinel", "mock.sentinel")   # their attributes: unique test objects
# a URL's scheme alone ("file://", "sqlite:///", and "file://localhost", the local host named):
# what follows it is the location
_SCHEME = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.\-]*://+|file://localhost)$")


def _followed_here(expr, frame: Frame) -> bool:
    """``expr`` is a display written here or a function's local variable: a container whose
    changes the analysis follows in this function (``Statements._forget_members``)."""
    return expr[0] in ("seq", "dict") or (expr[0] == "name" and not frame.is_module and expr[1] in frame.locals)


def _sliced(base: V, lower, upper) -> V:
    """``base[lower:upper]`` (integer bounds or None): the items of a known list or tuple, the
    text of a known string; another value keeps its origins (a part of it)."""
    out = []
    for a in base.ordered():
        if isinstance(a, tuple) and a[0] == "seq":
            out.append(("seq", a[1], tuple(a[2][lower:upper])))
        elif isinstance(a, Origin) and a.kind == "literal" and not a.partial and a.expr[:1] in ("'", '"'):
            out.extend(_with_text(of(a), (a.value or "")[lower:upper]).atoms)
        else:
            out.append(a)
    return V(frozenset(out), base.is_path)


_TEXTS = 8   # an f-string over parts of a few known values: at most this many whole texts


def _whole_texts(parts, vals) -> Optional[list]:
    """An f-string's texts when each formatted part is one of a few known strings or integers
    (a fixture's params): every combination, at most ``_TEXTS``; else None."""
    out = [""]
    for part, v in zip(parts, vals):
        if part[0] == "lit" and isinstance(part[1], str):
            out = [t + part[1] for t in out]
            continue
        known = values(v)
        if not known or any(not isinstance(x, (str, int)) or isinstance(x, bool) for x in known) or \
                len(out) * len(known) > _TEXTS:
            return None
        out = [t + str(x) for t in out for x in dict.fromkeys(known)]
    return out


def _bool_valued(e) -> bool:
    """Expression ``e`` (a comparison or unary operation) gives a bool: a comparison or ``not``."""
    return e[0] == "cmp" or e[1] == "Not"


def _dict_entry(d: tuple, key: V) -> V:
    """``d[key]`` for dict atom ``d``, per alternative of ``key``: a string literal picks its
    entry (unknown when ``d`` lacks it), a string's known leading part the entries whose keys
    start so, a text known to start at the root (``rooted``: the test's tmp_path) those whose
    keys may be it; a key the analysis cannot follow (contract row U) picks an entry it cannot
    name either, not every entry, unless the entries are functions or classes (a handler table,
    each of which the call may reach); any other key (an environment variable's value, a
    number) may pick every entry."""
    out = EMPTY
    for k in key.ordered():
        one = of(k)
        whole, head, tails = _literal_str(one), _literal_str(one, prefix=True), rooted_tails(one)
        if whole is None and head is None and tails is None:
            if not _unfollowed(k) or _dispatch_table(d):
                return union(v for _, v in d[1])   # (a handler table: each handler may be the one called)
            out = out | UNKNOWN_V
            continue
        if whole is not None:
            hit = []
            for kk, v in d[1]:   # later entries win: an entry of the key hides the unknown ones before it
                if kk == whole:
                    hit = [v]
                elif kk is None:
                    hit.append(v)
        elif head is not None:
            hit = [v for kk, v in d[1] if kk is None or kk.startswith(head)]
        else:
            hit = [v for kk, v in d[1] if kk is None or may_be_key(kk, tails)]
        out = out | (union(hit) if hit else UNKNOWN_V)
    return out if out.atoms else UNKNOWN_V


def _dispatch_table(d: tuple) -> bool:
    """Dict atom ``d`` maps to functions or classes: a key not known may call any of them."""
    return any(isinstance(a, tuple) and a[0] in ("func", "cls", "lambda", "partial") for _k, v in d[1] for a in v.atoms)


def _unfollowed(a) -> bool:
    return isinstance(a, Origin) and a.kind == "unknown"


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
            base = self.eval(e[1], frame)
            if frame.holds and e[1][0] == "name":
                held = frame.locals.get(f"{e[1][1]}.{e[2]}#of")
                if held is base:   # stored on a library object by this frame (Statements.assign)
                    return frame.locals[f"{e[1][1]}.{e[2]}"]
            return self.eval_attr(base, e[2], frame, e)
        if k == "call":
            return self.eval_call(e, frame)
        if k == "fstr":
            parts = e[1]
            vals = [self.eval(p, frame) for p in parts]
            if not parts:
                return lit("", frame.path, frame.line, frame.in_test)
            texts = _whole_texts(parts, vals)
            if texts is not None:   # every part known: the whole strings (a name built at run time)
                if parts[0][0] == "lit":
                    return union(lit(t, frame.path, frame.line, frame.in_test) for t in texts)
                if len(texts) == 1:
                    return _with_text(vals[0], texts[0]).with_path(False)
            first = parts[0]
            if len(parts) > 1 and first[0] == "lit" and isinstance(first[1], str) and _SCHEME.match(first[1]):
                return _head(vals[1]).with_path(False)   # f"sqlite:///{path}": the path is the origin
            if first[0] == "lit" and isinstance(first[1], str) and first[1] != "":
                text = first[1]
                whole = lit(text, frame.path, frame.line, frame.in_test)
                return whole if len(parts) == 1 else _head(whole)
            return _head(vals[0]).with_path(False)   # an f-string is a string, whatever it formats
        if k == "bin":
            return self.binop(e[1], self.eval(e[2], frame), self.eval(e[3], frame), frame)
        if k == "bool":
            return self.eval_boolop(e, frame)
        if k == "ifx":
            cond = self.eval_cond(e[1], frame)
            if cond is True:
                return self.eval(e[2], frame)
            if cond is False:
                return self.eval(e[3], frame)
            before = self.call_raised   # either way may run: it raises only if both do
            self.call_raised = False
            body = self.eval(e[2], frame)
            raised, self.call_raised = self.call_raised, False
            orelse = self.eval(e[3], frame)
            self.call_raised = before or (raised and self.call_raised)
            return body | orelse
        if k == "sub":
            return self.eval_sub(e, frame)
        if k == "seq":
            # ["check", *args]: with the args known, each in its place; with a few known lists
            # for args (a loop over them), one list for each; else their elements folded in one
            shapes: List[list] = [[]]
            nonempty = False   # an item of its own, or a starred list known to hold one
            exact = True       # every starred part a tuple known by its items
            prefix = False     # the last part spreads a tuple known by its first items, the rest exact
            for i, it in enumerate(e[2]):
                if it[0] != "star":
                    v = self.eval(it, frame)
                    shapes = [sh + [v] for sh in shapes]
                    nonempty = True
                    continue
                v = self.eval(it[1], frame)
                prefix = exact and i == len(e[2]) - 1 and len(v.atoms) == 1 and is_prefix(next(iter(v.atoms)))
                nonempty = nonempty or surely_nonempty(v)
                # a tuple is exact only from tuples (a list spliced in may have changed since it
                # was written); a list display keeps COUNTED for the click model
                exact = exact and bool(v.atoms) and all((is_exact if e[1] == "tuple" else is_counted)(a)
                                                        for a in v.atoms)
                alts = [a[2] for a in v.ordered() if isinstance(a, tuple) and a[0] == "seq"]
                if alts and len(alts) == len(v.atoms) and len(shapes) * len(alts) <= _SHAPES:
                    shapes = [sh + list(alt) for sh in shapes for alt in alts]
                else:
                    exact = False
                    shapes = [sh + [self._element(v)] for sh in shapes]
            if prefix and e[1] == "tuple" and len(shapes) == 1:   # (p, *p.parents): known first items, then more
                return of(("seq", "tuple", tuple(shapes[0]), PREFIX))
            return V(frozenset(seq_atom(e[1], sh, nonempty, exact) for sh in shapes))
        if k == "dict":
            items = []
            seen = set()   # the string keys so far: a key written again replaces its entry

            def put(key, val) -> None:
                nonlocal items
                if key is not None and key in seen:
                    items = [(k2, v2) for k2, v2 in items if k2 != key]
                seen.add(key)
                items.append((key, val))

            for kexpr, vexpr in e[1]:
                if kexpr is None:   # {**d}: a dict known by its entries adds them, later keys win
                    spread = self.eval(vexpr, frame)
                    known = next(iter(spread.atoms)) if len(spread.atoms) == 1 else None
                    if isinstance(known, tuple) and known[0] == "dict":
                        if WHOLE not in known[2:]:
                            items.append((None, UNKNOWN_V))   # it may hold other keys (not these)
                        for sk, sv in known[1]:
                            put(sk, sv)
                        continue
                    items.append((None, spread))
                    continue
                put(_literal_str(self.eval(kexpr, frame)), self.eval(vexpr, frame))
            # a display of string keys is known whole as made (``contents.WHOLE``), as a list display is counted
            whole = (WHOLE,) if all(k is not None for k, _ in items) else ()
            return of(("dict", tuple(items)) + whole)
        if k == "lambda":
            # numbered in evaluation order, not by address: memo keys hash it, and a run's result
            # must not depend on where the allocator put the summary
            # (by place, not by object: a body read again after ``transient_bodies`` is a new object)
            lid = self._lambda_ids.setdefault((frame.path, e[3][0], e[3][1]), len(self._lambda_ids))
            captured = dict(frame.locals)
            self.lambdas[lid] = (e, frame.module, frame.path, captured, frame.in_test)
            self.wlog.append(("lambda", lid, None, captured))
            if frame.in_test and not _identity(e):
                return of(DOUBLE)   # (an identity, `lambda p: p`, hands on what it is given: followed)
            return of(("lambda", lid))
        if k == "yield":
            v = self.eval(e[1], frame)
            frame.yields = frame.yields | v
            if frame.yield_ctx is None:
                frame.yield_ctx = self.ctx.copy()
                if frame.undo0 >= 0:
                    frame.yield_writes = self.written_since(frame.undo0)
                    frame.yield_undo = len(self.undo)
            self.ctx.tree_changed = True   # what follows a yield runs after the block or test (``shipped``)
            return UNKNOWN_V
        if k == "cmp":
            return self.eval_cmp(e, frame)
        if k == "unary":
            if e[1] == "Not":
                r = self.eval_cond(e[2], frame)
                return EMPTY if r is None else lit(not r, frame.path, frame.line, frame.in_test)
            v = self.eval(e[2], frame)
            if e[1] == "Minus" and e[2][0] == "lit" and isinstance(e[2][1], (int, float)):
                return lit(-e[2][1], frame.path, frame.line, frame.in_test)
            return EMPTY
        if k == "comp":
            first = self.eval(e[1][0][1], frame)   # evaluated once: a comprehension item by item reads it too
            first = mock_items(first, self.ctx) or first   # a MagicMock the test set nothing on: no item
            if (per_item := comprehension_in_order(self, e, first, frame)) is not None:
                return per_item
            saved = dict(frame.locals)
            before = self.call_raised
            surely = True   # an item for certain: every iterable holds one and every filter is true
            for i, (tgt, it, ifs) in enumerate(e[1]):
                iterable = first if i == 0 else self.eval(it, frame)
                surely = surely and (surely_nonempty(iterable) or inline_nonempty(it))
                self.assign(tgt, self._element(iterable), frame)
                if i == 0:
                    before = self.call_raised   # the first iterable is evaluated; the rest may never be
                for cond in ifs:
                    surely = self.eval_cond(cond, frame) is True and surely
            out = union(self.eval(x, frame) for x in e[2])
            self.call_raised = before
            frame.locals = saved
            if not out.atoms:
                return EMPTY
            # one item for all of them: at least one for certain, or maybe none
            return of(("seq", "list", (out,), NONEMPTY if surely else MAYBE_EMPTY))
        if k == "walrus":
            v = self.eval(e[2], frame)
            self.assign(e[1], v, frame)
            return v
        if k == "star":
            return self.eval(e[1], frame)
        return UNKNOWN_V

    def binop(self, op: str, left: V, right: V, frame: Frame) -> V:
        """``left OP right`` (``op``: libcst's operator class name, ``Add``, ``Divide`` ...): a
        number when both are known numbers, a string or path built from ``left`` (``right`` for
        ``"file://" + folder``), a whole string or path when both are whole literals; else empty."""
        numbers = _arithmetic(op, left, right)
        if (found := set_algebra(op, left, right)) is not None:   # {"a", "b"} & set(d.keys())
            return found
        if numbers is not None:   # re.I | re.X, 60 * 60, a count + 1
            return union(lit(n, frame.path, frame.line, frame.in_test) for n in numbers)
        if op == "Modulo" and _literal_str(left, prefix=True) is not None:
            tmpl = _literal_str(left, prefix=True)
            if tmpl.startswith("%") or _SCHEME.match(tmpl.split("%", 1)[0]):
                # "%s/x" % folder, "sqlite:///%s" % db_path: the value put first is the origin
                return _head(_first_item(right)).with_path(False)
            return _head(left)
        if op == "Add":
            joined = _concat(left, right)
            if joined is not None:   # ["insert", db, "-"] + options: one list per pair of shapes
                return joined
        if op == "Add" and _SCHEME.match(_literal_str(left) or "") and right.atoms and _literal_str(right) is None:
            return _head(right).with_path(False)   # "file://" + folder: the folder is the origin
        if op == "Add":
            whole = _literal_str(left), _literal_str(right)
            if whole[0] is not None and whole[1] is not None:   # MODULE + ".name": a whole string
                return _with_text(left, whole[0] + whole[1])
        if op == "Divide" and left.is_path:
            whole = tmp_joined([left, right], True) or _whole_join([left, right], True)
            if whole is not None:   # Path("tests") / "repo": a whole path
                return whole.with_path(True)
        if op in ("Add", "Divide", "Modulo"):
            res = joined_path([left, right]) if op == "Divide" else _head(left)
            if op == "Add" and not left.is_path:
                res = res.with_path(False)   # str + str is a string
            if op == "Divide":
                res = res.with_path(left.is_path or right.is_path or _has_path_origin(left))
            return res
        # a time computed from a clock read at import (`utcnow() - timedelta(1)`) is that read's:
        # its users use the read (HT204 lists them)
        timed = [o for o in (left | right).origins() if from_import_clock(o)]
        return V(frozenset(timed), False) if timed else EMPTY

    def eval_boolop(self, e, frame: Frame) -> V:
        """``a and b`` / ``a or b``: the operands the test's values leave to run. A call that
        raises on every way raises the expression only in an operand that surely runs (the ones
        before it decided to go on)."""
        op, operands = e[1], e[2]
        out = EMPTY
        surely = True
        for i, x in enumerate(operands):
            last = i == len(operands) - 1
            before = self.call_raised
            self.undecided += not surely   # an operand after an undecided one may not run: medium confidence
            try:
                if x[0] == "bool":   # `(a and b) and not c`: the inner operation's value
                    v = self.eval_boolop(x, frame)
                    t = truthiness(v, self.inst_truth)
                elif x[0] in ("cmp", "unary"):
                    t = self.eval_cond(x, frame)
                    # a comparison or `not` is a bool: `wait = use and n >= limit` is known when decided
                    v = lit(t, frame.path, frame.line, frame.in_test) if t is not None and _bool_valued(x) else EMPTY
                else:
                    v = self.eval(x, frame)
                    t = truthiness(v, self.inst_truth)
            finally:
                self.undecided -= not surely
            if not surely:
                self.call_raised = before   # this operand may not run
            if op == "or":
                if t is True:
                    return out | v
                if t is False and not last:
                    continue
            else:
                if t is False:
                    return out | v
                if t is True and not last:
                    continue
            out = out | v
            surely = False
        return out

    def eval_sub(self, e, frame: Frame) -> V:
        base = self.eval(e[1], frame)
        if e[2][0] == "slice":
            return _sliced(base, e[2][SLICE_LOWER], e[2][SLICE_UPPER])
        key = self.eval(e[2], frame)
        if not frame.in_test and self._missing_key(e[1], base, key, frame):
            self.call_raised = True   # KeyError on every way: nothing after it runs
            return EMPTY
        out = EMPTY
        for a in base.ordered():
            if a == ("ext", "os.environ") or a == ("ext", "os.environb"):
                out = out | self.env_read(env_name(key), tuple(e[3]), frame, "os.environ")
            elif isinstance(a, Origin):
                out = out | of(a, is_path=base.is_path)
            elif a[0] == "cls" and not self.is_enum(a[1]) and self.find_method(a[1], "__class_getitem__") is None:
                out = out | of(a)   # Store[str]: a generic class's alias, made and called as the class
                # (not an enum's member by name, Color["RED"], nor a class's own __class_getitem__)
            elif a[0] == "seq":
                idx = _literal_int(key)
                if idx is not None and -len(a[2]) <= idx < len(a[2]):
                    out = out | a[2][idx]
                else:
                    out = out | union(a[2])
            elif a[0] == "dict":
                out = out | _dict_entry(a, key)
            elif a == DOUBLE or a[0] == "double":
                out = out | DOUBLE_V
            elif a == ("ext", "builtins") and _literal_str(key) is not None:
                out = out | self.eval_attr(of(a), _literal_str(key), frame)   # __builtins__["open"]
            else:   # in a test, an instance of a project class with __getitem__: cache[key]
                out = out | ((self.call_method_of(a, "__getitem__", [key], {}, frame) if frame.in_test else None)
                             or UNKNOWN_V)
        return out if out.atoms else UNKNOWN_V

    def _missing_key(self, expr, base: V, key: V, frame: Frame) -> bool:
        """``base[key]`` raises KeyError: ``key`` is one string, and every alternative of ``base`` is
        a dict whose keys are all known and lack it, reached from a local variable (a parameter,
        a dict built here) through subscripts only: a dict reached through a global or an
        attribute may have been filled elsewhere."""
        ks = _literal_str(key)
        if ks is None or not base.atoms or frame.is_module or not _followed_here(subscript_root(expr), frame):
            return False
        return all(isinstance(a, tuple) and a[0] == "dict" and all(k is not None and k != ks for k, _v in a[1])
                   for a in base.atoms)

    def _element(self, v: V) -> V:
        out = EMPTY
        for a in v.ordered():
            if isinstance(a, Origin):
                out = out | of(a)
            elif a[0] == "seq":
                out = out | union(a[2])
            elif a[0] == "dict":
                out = out | union(lit(k, None, None, False) for k, _ in a[1] if k is not None)
            elif a == DOUBLE or a[0] == "double":
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
                    if name == "parents" and (folders := tmp_parents(a)) is not None:
                        out = out | of(folders)   # in order, to the folders above tmp_path
                        continue
                    if name in ("parent", "parents", "dirname"):
                        a = _climb(a, None if name == "parents" else 1)
                    elif name in ("name", "stem", "suffix"):
                        # a part of the path, not a path in its folder (tmp_path / p.name stays there)
                        text = _literal_str(of(a))
                        part = part_of(a)
                        if part and not is_fresh_root(part):   # a path made in tmp_path: its last part is known
                            text = part
                            a = next(iter(lit(part, frame.path, frame.line, frame.in_test).atoms))
                        if text is not None:
                            a = next(iter(_with_text(of(a), getattr(PurePosixPath(text), name)).atoms))
                        elif _is_absolute(of(a)):
                            a = Origin("unknown", expr=f"{a.expr}.{name}"[:60])
                    # .name / .stem / .suffix are strings; .parent(s) and py.path's attributes paths
                    out = out | of(a, is_path=name in ("parent", "parents") or (base.is_path and name not in _STR_ATTRS))
                else:
                    out = out | of(("dmeth", of(a, is_path=base.is_path), name))
                continue
            t = a[0]
            if t == "missed-obj":   # a standard object a patch misses, used: the patch's HT205
                self.used_missed(of(a))
                out = out | self.eval_attr(of(a[1]), name, frame)
            elif t == "mod":
                out = out | self.module_attr(a[1], name)
            elif t == "ext":
                key = (("ext", a[1]), name)
                if key in self.ctx.patches:
                    out = out | self.ctx.patches[key]
                elif frame.in_test and a[1] == "sys" and name == "executable":
                    # the interpreter, named by the test: a program the test chose, wherever the
                    # call that starts it is (row T1), as a literal program name from the test is
                    out = out | of(Origin("test-value", expr="sys.executable", path=frame.path, line=frame.line))
                elif name == "TYPE_CHECKING" and a[1] in ("typing", "typing_extensions"):
                    out = out | lit(False, None, None, False)   # the imports only type checkers read
                elif a[1] == "re" and regex_flag(name) is not None:
                    out = out | lit(regex_flag(name), None, None, False)
                elif a[1] == "os" and name.startswith("O_") and type(getattr(os, name, None)) is int:
                    out = out | lit(getattr(os, name), None, None, False)   # the running Python's open flag
                elif a[1] in _SENTINELS:
                    out = out | DOUBLE_V   # sentinel.name: a unique object made for the test, never None
                else:
                    full = f"{a[1]}.{name}"
                    fact = self.p.platform.get(full)
                    out = out | (of(("ext", full)) if fact is None else self.platform_value(fact, frame))
            elif t == "cls":
                v = self.class_attr(a[1], name)
                if v is not None:
                    out = out | v
                else:
                    m = self.find_method(a[1], name)
                    if m is None and name in ("enterClassContext", "addClassCleanup") and self.is_testcase(a[1]):
                        out = out | of(("meth", ("testcase", a[1]), name))   # unittest's, on the class
                    elif m is None and name == "__new__":   # object's: an instance, no __init__ run
                        out = out | of(("meth", a, name))
                    else:
                        out = out | (of(("func", m[1], self.class_bound(m[1], a))) if m else UNKNOWN_V)
            elif t == "inst":
                out = out | self.inst_attr(a, name, frame)
            elif t == "super":
                m = self.find_method(a[2], name, after=a[1])
                out = out | (of(("func", m[1], a[3])) if m else library_method(self, a[2], name) or UNKNOWN_V)
            elif a == DOUBLE or a[0] == "double":
                # m.side_effect.errno = ...: the instance the test gave it
                # (once the test set attributes on doubles, one read may be what it set: m.stdout = "")
                out = out | ((name == "side_effect" and effect_of(a, self.ctx.effects))
                             or (name == "return_value" and len(a) > 2 and returned(a, self.ctx.returns))
                             or (DOUBLE_V | UNKNOWN_V if self.ctx.doubles_set and name != "return_value" else DOUBLE_V))
            elif t == "modobj":
                out = out | (of(Origin("project-file", expr="module.__file__")) if name == "__file__" else UNKNOWN_V)
            elif t == "fixture" and a[1] == "request" and name == "param":
                out = out | self.lookup("__request_param__", frame)
            elif t == "fixture" and a[1] == "request" and name == "cls" and self.in_own_body():
                # the test's class, whose attributes a class-scoped fixture sets (arrow's
                # request.cls.factory); None for a test function
                inst = self.test_instance
                cls = self.heap.get(inst[1], {}).get("cls") if inst is not None and inst[0] == "inst" else None
                out = out | (of(("cls", cls)) if cls else lit(None, frame.path, frame.line, frame.in_test))
            elif t == "fixture" and a[1] == "request" and name == "instance" and self.in_own_body():
                # the test method's instance, whose attributes the fixture may set (celery's
                # request.instance.app)
                inst = self.test_instance
                out = out | (of(inst) if inst is not None else lit(None, frame.path, frame.line, frame.in_test))
            elif t in ("client", "fixture", "patcher", "handle", "mark", "partial", "ctxfactory", "clirunner",
                       "typerapp", "modglobals"):
                out = out | of(("meth", a, name))
            elif t == "regex":
                out = out | of(("meth", a, name))   # a compiled pattern's match / search
            elif t == "dictof" and name == "copy":
                out = out | of(("meth", a, name))   # x.__dict__.copy(): the same attributes
            elif name == "sections" and is_whole(a):
                out = out | of(a)   # an ini file read whole (``contents.ini_value``): its sections
            elif t == "dict" and name in ("items", "keys", "values", "get", "pop"):
                out = out | of(("meth", a, name))   # a view of a known dict (a loop over its entries)
            elif t == "meth" and a[1] == ("fixture", "mocker") and a[2] == "patch":
                out = out | of(("meth", ("fixture", "mocker.patch"), name))   # mocker.patch.dict / .object
            elif t == "func":
                attrs = self.class_attrs.get(a[1]) if a[2] is None else None
                if a[2] is None:
                    self._read("cattr", a[1], name)
                if name == "__name__" and not (attrs and name in attrs) and a[1] in self.p.functions:
                    # its def's name: the key a registry files it under (`commands[func.__name__]`)
                    out = out | lit(self.p.functions[a[1]][0]["name"], frame.path, frame.line, frame.in_test)
                    continue
                out = out | (attrs[name] if attrs and name in attrs else UNKNOWN_V)   # one its code set
            else:
                out = out | UNKNOWN_V
        return out if out.atoms else UNKNOWN_V


def _identity(e) -> bool:
    """Lambda expression ``e`` is ``lambda x: x``: it gives back its one parameter."""
    params, body = e[1], e[2]
    return len(params) == 1 and body[0] == "name" and body[1] == params[0][0]
