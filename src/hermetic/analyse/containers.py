"""What a statement does to a container bound to a local name: a slice replaced, a dict merged
or stored into down a path of string keys, members forgotten after an in-place change, and an
empty list handed away (to a call, another name) that may be filled where the analysis does not
see. ``Interp`` methods (a mixin, as ``statements.py``)."""
from __future__ import annotations

from ..summarise.ir import SLICE_LOWER, SLICE_UPPER
from .literals import _literal_str
from .dictwrites import set_in
from .state import Frame
from .values import EMPTY, MAYBE_EMPTY, UNKNOWN_V, V, opened


class Containers:
    """``Interp`` methods that change containers bound to local names."""

    def _replace_slice(self, name: str, sl, val: V, frame: Frame) -> bool:
        """``name[lower:upper] = [items]`` on a local list whose items are known: True when done."""
        cur = frame.locals.get(name) if not frame.is_module else None
        new = [a for a in val.atoms if isinstance(a, tuple) and a[0] == "seq"]
        if cur is None or len(new) != 1 or len(val.atoms) != 1:
            return False
        atoms = []
        for a in cur.ordered():
            if not (isinstance(a, tuple) and a[0] == "seq"):
                return False
            items = list(a[2])
            items[sl[SLICE_LOWER]:sl[SLICE_UPPER]] = list(new[0][2])
            atoms.append(("seq", a[1], tuple(items)))
        frame.locals[name] = V(frozenset(atoms), cur.is_path)
        return True

    def _merge_dict(self, name: str, call, frame: Frame) -> bool:
        """``name.update(other)`` on a local dict, where ``other`` is one dict (or several) whose
        entries are known: ``name`` holds the merged entries (requests' ``send_kwargs.update(
        settings)`` then ``**send_kwargs``). False when it cannot be done (the caller forgets)."""
        if frame.is_module or name not in frame.locals or len(call[2]) != 1 or call[3]:
            return False
        cur = frame.locals[name]
        other = self.eval(call[2][0], frame)
        if not cur.atoms or not other.atoms or len(cur.atoms) * len(other.atoms) > 16 or not all(
                isinstance(a, tuple) and a[0] == "dict" for a in cur.atoms | other.atoms):
            return False
        atoms = []
        for a in cur.ordered():
            for b in other.ordered():
                keys = {k for k, _v in b[1] if k is not None}
                atoms.append(("dict", tuple((k, v) for k, v in a[1] if k is None or k not in keys) + tuple(b[1])))
        frame.locals[name] = V(frozenset(atoms), cur.is_path)
        return True

    def _store_nested(self, t, key: V, val: V, frame: Frame) -> bool:
        """``name["a"]["b"] = val`` (target ``t``) on a local whose dicts down that path of string
        literal keys are known: ``name`` holds the inner dict with the entry set, in each
        alternative. False when a key on the path is not a literal or a dict lacks it (the caller
        forgets)."""
        path = []
        node = t[1]
        while node[0] == "sub":
            if node[2][0] != "lit" or (k := _literal_str(self.eval(node[2], frame))) is None:
                return False
            path.append(k)
            node = node[1]
        if node[0] != "name" or frame.is_module or node[1] not in frame.locals:
            return False
        new = set_in(frame.locals[node[1]], path[::-1], key, val)
        if new is None:
            return False
        frame.locals[node[1]] = new
        return True

    def _forget_nested(self, name: str, frame: Frame) -> None:
        """A dict or list inside local ``name`` changed in place (``name["a"]["b"] = v``): every
        container in it may hold entries the analysis does not know."""
        if frame.is_module or name not in frame.locals:
            return
        frame.locals[name] = opened(frame.locals[name])

    def _put_in(self, added, name: str) -> V:
        """The items a ``name.append(x)`` / ``add(x)`` / ``insert(i, x)`` / ``extend(xs)`` the
        statement made puts in (``Interp.added``), else nothing."""
        if added is None or added[0] != name or not added[2]:
            return EMPTY
        _n, method, args = added
        if method == "insert":
            return args[1] if len(args) > 1 else EMPTY
        return self._element(args[0]) if method == "extend" else args[0]

    def _drop_key(self, name: str, key: V, frame: Frame) -> None:
        """``name.pop(key)`` on a local dict, at a literal key: the dict no longer holds it (a
        ``**changes`` emptied by its pops is falsy when it was known whole)."""
        k = _literal_str(key)
        v = frame.locals.get(name)
        if k is None or v is None or frame.is_module or not any(
                isinstance(a, tuple) and a[0] == "dict" for a in v.atoms):
            return
        frame.locals[name] = V(frozenset(
            (a[0], tuple(e for e in a[1] if e[0] != k)) + tuple(a[2:]) if isinstance(a, tuple) and a[0] == "dict" else a
            for a in v.atoms), v.is_path)

    def _forget_members(self, name: str, frame: Frame, kinds=("seq", "dict"), put: V = EMPTY) -> None:
        """A local list, set or dict (of ``kinds``) changed in place: its members are no longer
        all known (membership tests on it are then undecided); a list or set may hold ``put``
        (what an ``append`` put in: a loop over it reaches it)."""
        shared = False
        if frame.is_module or name not in frame.locals:
            # at import, a module's own list or dict filled by a function it runs then (a registry:
            # add_hook(h) appends to HOOKS): what every test starts from is no longer empty
            if not self.import_time or frame.is_module or name not in self.globals.get(frame.module, {}):
                return
            v, shared = self.globals[frame.module][name], True
        else:
            v = frame.locals[name]
        if not any(isinstance(a, tuple) and a[0] in kinds for a in v.atoms):
            return
        atoms = [_opened_up(a, put) if isinstance(a, tuple) and a[0] in kinds else a for a in v.ordered()]
        if shared:
            self.write_state("gattr", frame.module, name, V(frozenset(atoms), v.is_path))
        else:
            frame.locals[name] = V(frozenset(atoms), v.is_path)

    def maybe_filled(self, name: str, frame: Frame) -> None:
        """An empty local list (``items = []``) handed to a call or bound to another name may be
        filled there, which the analysis does not see: it is no longer known to be empty."""
        v = frame.locals.get(name)
        if v is None or not any(isinstance(a, tuple) and a[0] == "seq" and a[1] == "list" and not a[2] for a in v.atoms):
            return
        frame.locals[name] = V(frozenset(("seq", "list", (UNKNOWN_V,), MAYBE_EMPTY)
                                         if isinstance(a, tuple) and a[0] == "seq" and a[1] == "list" and not a[2]
                                         else a for a in v.atoms), v.is_path)

    def _forget_attr_members(self, target, frame: Frame, added) -> None:
        """``obj.name.update(...)`` (a mutator) where ``obj`` is one known instance whose ``name``
        holds a dict: its keys are no longer all known (``contents.WHOLE`` no longer holds); one
        holding a list or set may hold more, and what an ``append`` / ``add`` / ``insert`` /
        ``extend`` put in (``Interp.added``): a loop over ``self.jobs`` reaches the job a test added,
        as ``_forget_members`` does for a local."""
        owner = self.eval(target[1], frame)
        if len(owner.atoms) != 1 or not (isinstance(a := next(iter(owner.atoms)), tuple) and a[0] == "inst"):
            return
        table = self.eval(target, frame)
        if table.atoms and all(isinstance(d, tuple) and d[0] == "dict" for d in table.atoms):
            self.set_attr(a[1], target[2], V(frozenset(_opened_up(d, EMPTY) for d in table.atoms)))
        elif table.atoms and all(isinstance(s, tuple) and s[0] == "seq" and s[1] in ("list", "set") for s in table.atoms):
            put = self._put_in(added, ("attr", target[1][1], target[2]))
            self.set_attr(a[1], target[2], V(frozenset(_opened_up(s, put) for s in table.atoms)))


def _opened_up(a: tuple, put: V) -> tuple:
    """A list, set or dict atom changed in place: a list or set may hold ``put`` and more, a dict
    entries the analysis cannot name (its keys are no longer all known)."""
    if a[0] == "seq":
        return ("seq", a[1], tuple(a[2]) + ((put,) if put.atoms else ()) + (UNKNOWN_V,))
    return ("dict", tuple(a[1]) + ((None, UNKNOWN_V),))
