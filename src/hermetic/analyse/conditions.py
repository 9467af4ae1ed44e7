"""Conditions: whether a condition holds for the test's values (``eval_cond``), comparisons
(``decide_cmp``: ``is None``, equality and order of known values, ``in`` a container whose
members are known here, ``in os.environ`` as a read), part of the interpreter (``interp``).
"""
from __future__ import annotations

from typing import Optional

from ..summarise.changed import is_constant_name
from ..summarise.ir import BOOL_OPERANDS, CMP_OPERANDS, UNARY_OP, UNARY_OPERAND

from .controls import mock_items
from .decide import compare, identical, values
from .expressions import _followed_here
from .literals import env_name, _literal_str, _str_affix, _str_contains, is_none, truthiness
from .state import DELETED, Frame
from .tmptree import part_of, under_tmp
from .values import EMPTY, Origin, V, is_counted, lit

# str methods whose result is a new list or tuple of the string's parts
_SPLITS = ("split", "rsplit", "splitlines", "partition", "rpartition")


class Conditions:
    """The mixin deciding conditions and comparisons."""

    def eval_cond(self, e, frame: Frame) -> Optional[bool]:
        """Whether a condition holds for every alternative of the test's values (None: not known)."""
        k = e[0]
        if k == "cmp":
            return self.decide_cmp(e, frame)
        if (k == "call" and e[1][0] == "attr" and e[1][2] in ("startswith", "endswith") and len(e[2]) == 1
                and not e[3] and e[1][1][0] in ("name", "attr", "lit") and e[2][0][0] in ("name", "attr", "lit", "seq")):
            base = self.eval(e[1][1], frame)
            if base.atoms and all(isinstance(x, Origin) for x in base.atoms):   # str data: no method of ours
                r = _str_affix(e[1][2], base, self.eval(e[2][0], frame))
                if r is not None or not under_tmp(base):
                    return r
                # the text of a path in tmp_path: its known start (``call_data_method``)
        if k == "unary" and e[1] == "Not":
            r = self.eval_cond(e[2], frame)
            return None if r is None else (not r)
        if k in ("name", "attr", "lit"):   # `if DEBUG:`, `if 0:`, `while True:`
            return truthiness(self.eval(e, frame), self.inst_truth)
        if k == "bool":
            # short-circuit: operands after a deciding one are not evaluated (nor their sinks)
            unknown = False
            for i, x in enumerate(e[2]):
                before = self.call_raised
                self.undecided += unknown   # an operand after an undecided one may not run: medium confidence
                try:
                    r = self.eval_cond(x, frame)
                finally:
                    self.undecided -= unknown
                if i and unknown:
                    self.call_raised = before   # an operand that may not run raises nothing for sure
                if e[1] == "and" and r is False:
                    return False
                if e[1] == "or" and r is True:
                    return True
                if r is None:
                    unknown = True
            if unknown:
                return None
            return e[1] == "and"
        v = self.eval(e, frame)
        # a call's result or an entry of a known container (`if morsel["max-age"]:`)
        if k in ("call", "sub") and v.atoms and all((isinstance(a, tuple) and a[0] in ("inst", "modobj")) or
                                           (isinstance(a, Origin) and a.kind == "literal") or
                                           part_of(a) is not None for a in v.atoms):
            # (a path in tmp_path known whole: `path.strip()` of the folder the test set it to)
            return truthiness(v, self.inst_truth)
        if k in ("bin", "comp") and v.atoms and all(is_counted(a) for a in v.atoms):
            return truthiness(v, self.inst_truth)   # {"a", "b"} & set(keys), [n for n in names]: known by its items
        return None

    def scalar_condition(self, e, frame: Frame) -> bool:
        """Whether condition ``e`` reads only literals and names bound to known scalars (a bool, a
        number, a string, None: ``if OFFLINE:``, ``if mode == "fast":``), through comparisons,
        ``not``, ``and`` / ``or``: a decision on it rests on nothing the analysis may misread (a
        list a thread pool filled), so a library exit under it ends the test's way."""
        todo = [e]
        while todo:
            x = todo.pop()
            t = x[0]
            if t in ("lit", "none"):
                continue
            if t == "name":
                v = self.eval(x, frame)
                if not v.atoms or any(not isinstance(a, Origin) for a in v.atoms):
                    return False   # an object, a container, a function: not a scalar
                known = values(v)
                if known is None or not all(x is None or isinstance(x, (bool, int, float, str, bytes)) for x in known):
                    return False
            elif t == "cmp":
                todo.extend(x[CMP_OPERANDS])
            elif t == "bool":
                todo.extend(x[BOOL_OPERANDS])
            elif t == "unary" and x[UNARY_OP] == "Not":
                todo.append(x[UNARY_OPERAND])
            else:
                return False
        return True

    def eval_cmp(self, e, frame: Frame) -> V:
        r = self.decide_cmp(e, frame)
        return EMPTY if r is None else lit(r, frame.path, frame.line, frame.in_test)

    def decide_cmp(self, e, frame: Frame) -> Optional[bool]:
        """A (chained) comparison when the operands' values decide it: ``is None``, equality and
        order of literals, constants, enum members and the platform, ``in`` a known container
        (section 1); every operand is evaluated once, and ``in os.environ`` is a read."""
        ops, items = e[1], e[2]
        vals = [self.eval(x, frame) for x in items]
        result: Optional[bool] = True
        for i, op in enumerate(ops):
            a, b = vals[i], vals[i + 1]
            if op in ("In", "NotIn") and frame.in_test:   # key in cache, in a test: the class's __contains__
                for inst in (x for x in b.refs() if x[0] == "inst"):
                    self.call_method_of(inst, "__contains__", [a], {}, frame)
            if op in ("In", "NotIn") and self._environ_membership(a, b, e[3], frame):
                present = self._env_present(a)   # set or deleted by the test: known (S2)
                if present is None:
                    result = None
                elif present != (op == "In"):
                    return False
                continue
            r = None
            if op in ("Is", "IsNot", "Equal", "NotEqual") and items[i + 1][0] == "lit" and items[i + 1][1] is None:
                n = is_none(a)
                r = None if n is None else n == (op in ("Is", "Equal"))
            elif op in ("In", "NotIn") and mock_items(b, self.ctx) is not None:
                r = op == "NotIn"   # in a MagicMock the test set nothing on: its __contains__ says no
            elif op in ("In", "NotIn"):
                if not self._settled_container(items[i + 1], b, frame):
                    result = None
                    continue
                r = _str_contains(a, b)
                r = None if r is None else r == (op == "In")
            if r is None:
                r = compare(op, a, b)
            if r is None and op in ("Is", "IsNot") and (self._enum_member(items[i], frame)
                                                       or self._enum_member(items[i + 1], frame)):
                r = compare("Equal" if op == "Is" else "NotEqual", a, b)   # members are one object per value
            if r is None and op in ("Is", "IsNot"):
                same = identical(a, b)   # config_file is not USER_CONFIG_PATH, a tmp_path passed
                r = None if same is None else same == (op == "Is")
            if r is False:
                return False
            if r is None:
                result = None
        return result

    def _enum_member(self, expr, frame: Frame) -> bool:
        """``expr`` is ``Cls.NAME`` of a project enumeration (a member: its value stands for it)."""
        if expr[0] != "attr" or expr[1][0] not in ("name", "attr"):
            return False
        return any(a[0] == "cls" and self.is_enum(a[1]) for a in self.eval(expr[1], frame).refs())

    def _settled_container(self, expr, v: V, frame: Frame) -> bool:
        """Whether the members of container ``v`` (the value of ``expr``) are known at this point:
        a display written here, a local variable (its changes in this function are followed,
        ``_forget_members``), or an immutable tuple or string; a list, set or dict reached
        through a global or an attribute may have been changed elsewhere."""
        if _followed_here(expr, frame) or expr[0] == "attr" and expr[1][0] == "name" and _followed_here(expr[1], frame) \
                and frame.locals[expr[1][1]].atoms == v.atoms:
            return True   # (an attribute that is the local itself: an ini file's ``sections``)
        if expr[0] == "call" and expr[1][0] in ("name", "attr") and all(
                isinstance(a, tuple) and a[0] == "ext" for a in self.eval(expr[1], frame).atoms) and \
                all(is_counted(a) for a in v.atoms):
            return True   # a list a library call just made (`name in os.listdir(folder)`)
        if expr[0] == "call" and expr[1][0] == "attr" and expr[1][2] in _SPLITS and v.atoms and \
                all(is_counted(a) for a in v.atoms):
            return True   # the parts a known string's split just gave (`"--debug" in argv.split()`)
        if expr[0] in ("name", "attr") and v.atoms and all(isinstance(a, tuple) and a[0] in ("seq", "dict")
                                                           for a in v.atoms):
            name = expr[1] if expr[0] == "name" else expr[2]
            if is_constant_name(name) and name not in self.p.changed_constants and \
                    (expr[0] == "attr" or name not in frame.locals):
                return True   # a module's constant no file changes in place (``LOCALES = {...}``)
        return all((isinstance(a, tuple) and a[0] == "seq" and a[1] == "tuple") or
                   (isinstance(a, Origin) and a.kind in ("literal", "module-constant")) for a in v.atoms)

    def _env_present(self, key: V) -> Optional[bool]:
        """Whether variable ``key`` is in the environment the test made (None: not known)."""
        name = _literal_str(key)
        if name is not None and name in self.ctx.env:
            return self.ctx.env[name] is not DELETED
        if self.ctx.env_all:
            return False
        return None

    def _environ_membership(self, key: V, container: V, pos, frame: Frame) -> bool:
        """``key in os.environ`` reads the variable: recorded; True when ``container`` is it."""
        if not any(a == ("ext", "os.environ") for a in container.refs()):
            return False
        self.env_read(env_name(key), tuple(pos), frame, "os.environ")
        return True
