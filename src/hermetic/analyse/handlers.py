"""Which ``except`` handlers of a ``try`` can run, and what they catch: a body that only calls
test doubles given no side effect raises nothing (``Interp.try_watch`` records, per call of such
a body, whether its callee is such a double: ``controls.quiet_double``); one whose doubles raise
an exception instance the test made binds the handler's name to it (``except OSError as exc``
reads the ``errno`` the test set); any other body leaves every handler open, catching an
unknown value."""
from __future__ import annotations

import builtins
from typing import Optional, Union

from ..summarise.ir import EXPR_ASSERT
from .controls import quiet_double
from .decide import values
from .literals import is_none
from .state import SYS_MODULES
from .values import DOUBLE_V, UNKNOWN_V, Origin, V, of, union

# the built-in exception classes, and those whose two-argument form sets ``errno``
EXCEPTIONS = frozenset(f"builtins.{n}" for n in dir(builtins)
                       if isinstance(getattr(builtins, n), type) and issubclass(getattr(builtins, n), BaseException))
_OS_ERRORS = frozenset(f"builtins.{n}" for n in dir(builtins)
                       if isinstance(getattr(builtins, n), type) and issubclass(getattr(builtins, n), OSError))


def exception_instance(ip, d: str, args) -> V:
    """A built-in exception the test makes (``exc = OSError()``, then ``exc.errno = ...`` and
    ``m.side_effect = exc``): an instance that holds the attributes set on it and its class (as
    ``__class__``); an ``OSError(code, message)`` holds its code as ``errno``."""
    iid = ip.new_instance(None)
    if len(args) >= 2 and d in _OS_ERRORS:
        ip.set_attr(iid, "errno", args[0])
        code = values(args[0])   # None where the code is not known (a name of errno's)
        # OSError(errno.ESRCH, ...) is a ProcessLookupError: the class follows the code
        if code is not None and len(code) == 1 and type(code[0]) is int:
            d = "builtins." + type(getattr(builtins, d[len("builtins."):])(code[0], "")).__name__
        else:
            return of(("inst", iid))   # which subclass is not known: no class
    ip.set_attr(iid, "__class__", of(("ext", d)))
    return of(("inst", iid))


def calls_only(body) -> bool:
    """A ``try`` body made of calls (of a name or an attribute chain, with names and literals as
    arguments), each a statement, bound to names or returned: what it can raise is what the
    calls raise (``Interp.try_watch`` then records whether each callee is a quiet double)."""
    if not body or len(body) > 4:
        return False
    for st in body:
        k = st[0]
        if k == "assign" and all(t[0] == "name" for t in st[1]):
            e = st[2]
        elif k == "expr" and not (len(st) > 3 and st[EXPR_ASSERT]):
            e = st[1]
        elif k == "return" and st[1] is not None:
            e = st[1]
        else:
            return False
        if e[0] != "call" or not _plain_callee(e[1]):
            return False
        if any(a[0] not in ("lit", "name") for a in e[2]):
            return False
        if any(kw[0] == "**" or kw[1][0] not in ("lit", "name") for kw in e[3]):
            return False
    return True


def _plain_callee(f) -> bool:
    while f[0] == "attr":
        f = f[1]
    return f[0] == "name"


def effects_given(base: V, value: V, effects: tuple, exception: bool) -> tuple:
    """``Ctx.effects`` after ``base.side_effect = value``: each double of ``base`` made at a
    site raises ``value`` from now on when it is an exception instance the test made
    (``exception``: ``instance_classes`` knows its class); for any other value (a function, a
    list, a class) what it raises is not known (its entry goes)."""
    sites = {a[2] for a in base.atoms if isinstance(a, tuple) and a[0] == "double" and len(a) > 2}
    if not sites:
        return effects
    # a site already raising another instance makes several doubles (a helper called twice):
    # which of them raises what is not known, so the site keeps no instance
    shared = {e[0] for e in effects if e[0] in sites and e[1] != value}
    kept = tuple(e for e in effects if e[0] not in sites)
    if exception:
        kept += tuple((site, value) for site in sorted(sites - shared, key=repr))
    return kept


def returns_given(base: V, value: V, returns: tuple, certain: bool) -> tuple:
    """``Ctx.returns`` after ``base.return_value = value``: each double of ``base`` made at a site
    returns ``value`` from now on; where the assignment may not run (``certain`` false: a branch
    the test's values do not decide) it returns that or what it returned before."""
    doubles = [a for a in base.atoms if isinstance(a, tuple) and a[0] == "double" and len(a) > 2]
    if not doubles:
        return returns
    out = dict(returns)
    for a in doubles:
        out[a[2]] = value if certain else out.get(a[2], a[1]) | value
    return tuple(sorted(out.items(), key=lambda e: repr(e[0])))


def returned(a: tuple, returns: tuple) -> V:
    """What the double ``a`` returns when called: what the test set last (``Ctx.returns``), else
    the ``return_value`` it was made with."""
    if len(a) > 2 and returns:
        for site, value in returns:
            if site == a[2]:
                return value
    return a[1]


def raising_double(ip, kwargs, site: tuple) -> V:
    """``Mock(side_effect=exc)`` with an exception instance the test made: a double made at
    ``site`` that raises ``exc`` at every call (``Ctx.raising``, ``Ctx.effects``)."""
    ret = kwargs.get("return_value")
    made = of(("double", DOUBLE_V if ret is None else ret, site))
    ip.ctx.raising = ip.ctx.raising | {site}
    ip.ctx.effects = effects_given(made, kwargs["side_effect"], ip.ctx.effects, True)
    return made


def effect_of(a, effects: tuple):
    """The instance the double ``a`` raises (``Ctx.effects``), or None."""
    if isinstance(a, tuple) and a[0] == "double" and len(a) > 2:
        for site, value in effects:
            if site == a[2]:
                return value
    return None


def watch_entry(callee: V, raising: frozenset, effects: tuple) -> Union[bool, V]:
    """What one call of a watched ``try`` body can raise: True when every alternative of
    ``callee`` is a double that raises nothing, the instances they raise when each is that or
    a double raising an instance the test made, False when anything else may be raised."""
    if not callee.atoms:
        return False
    found = []
    for a in callee.atoms:
        if quiet_double(a, raising):
            continue
        value = effect_of(a, effects)
        if value is None:
            return False
        found.append(value)
    return union(found) if found else True


def caught(watched) -> V:
    """The value an ``except ... as name`` handler binds after a watched body (``watch_entry``
    per call): the instances its doubles raise, or unknown."""
    if not watched or any(w is False for w in watched):
        return UNKNOWN_V
    found = [w for w in watched if w is not True]
    return union(found) if found else UNKNOWN_V


def instance_classes(ip, value: V) -> Optional[list]:
    """The built-in exception classes of the instances ``value`` holds (``exception_instance``
    keeps each one's class as ``__class__``), or None when one is not known."""
    out = []
    for a in value.atoms:
        if not (isinstance(a, tuple) and a[0] == "inst"):
            return None
        cls = ip.heap.get(a[1], {}).get("attrs", {}).get("__class__")
        names = _builtin_classes(cls) if cls is not None else None
        if not names or len(names) != 1:
            return None
        out.append(names[0])
    return out or None


def handler_catches(ip, type_value: V, classes: list) -> Optional[bool]:
    """Whether ``except <type_value>`` catches an exception of each of ``classes`` (built-in
    exception classes): True when it catches every one, False when none, None when a class
    the handler names is not a built-in one (a library's or the project's: not known)."""
    named = _builtin_classes(type_value)
    if named is None:
        return None
    hits = [any(issubclass(getattr(builtins, c), getattr(builtins, h)) for h in named) for c in classes]
    return True if all(hits) else False if not any(hits) else None


def _builtin_classes(v: V) -> Optional[list]:
    """The built-in exception class names ``v`` holds (a class, or a tuple of classes)."""
    out = []
    for a in v.atoms:
        if isinstance(a, tuple) and a[0] == "seq":
            for item in a[2]:
                inner = _builtin_classes(item)
                if inner is None:
                    return None
                out.extend(inner)
            continue
        if not (isinstance(a, tuple) and a[0] == "ext" and isinstance(a[1], str)):
            return None
        name = a[1][len("builtins."):] if a[1].startswith("builtins.") else a[1]
        t = getattr(builtins, name, None)
        if not (isinstance(t, type) and issubclass(t, BaseException)):
            return None
        out.append(name)
    return out or None


def _set_variable_read(ip, body, frame) -> bool:
    """A ``try`` body of one statement reading ``os.environ["K"]`` (bound, returned or alone)
    whose ``K`` the test or session configuration set, not on one way only: it cannot raise
    ``KeyError``."""
    if len(body) != 1:
        return False
    st = body[0]
    e = st[2] if st[0] == "assign" else st[1] if st[0] in ("expr", "return") else None
    if e is None or e[0] != "sub" or e[2][0] != "lit" or not isinstance(e[2][1], str):
        return False
    # the subscript's base, looked up again without running anything: a name, or os.environ
    b = e[1]
    if b[0] == "attr" and b[1][0] == "name" and b[2] == "environ":
        base = ip.eval(b, frame)
    elif b[0] == "name":
        base = ip.lookup(b[1], frame)
    else:
        return False
    if not base.atoms or any(a != ("ext", "os.environ") for a in base.atoms):
        return False
    val = ip.ctx.env.get(e[2][1])
    return isinstance(val, V) and not any(isinstance(a, Origin) and a.kind == "unknown" for a in val.atoms)


def exec_try(ip, st, frame) -> bool:
    """Run a ``try`` statement ``st`` (``Statements.exec_stmt``): its body, then the handlers
    that can run (a body that only calls doubles raising nothing runs none; one whose doubles
    raise an instance the test made runs the handlers that catch its class, the name bound to
    it), its ``else`` and ``finally``. What the body removes from the file system is not
    certain (``Interp.guarded``: an exception may come first). True when it always ends in a
    return or raise."""
    frame.line = st[5]
    if ip.ctx.patches and (at := blocked_import(ip, st[1])) is not None:
        return _exec_blocked(ip, st, at, frame)
    watched = None
    ip.guarded += 1
    try:
        if calls_only(st[1]):
            outer, ip.try_watch = ip.try_watch, []
            try:
                ended = ip.exec_block(st[1], frame)
            finally:
                watched, ip.try_watch = ip.try_watch, outer
        else:
            ended = ip.exec_block(st[1], frame)
    finally:
        ip.guarded -= 1
    jumped, ip.jumping = ip.jumping, False   # a break / continue ended the body (its way went to the loop)
    if ip.expect_hit:   # what the test expects goes on out: only the finally runs
        ip.expect_hit = False
        ip.exec_block(st[4], frame)
        ip.expect_hit = ip.raising = True
        return True
    cut = ip.way_cut   # the body's own undecided returns hold for what follows the try
    # a body that only calls test doubles with no side effect raises nothing: no handler runs;
    # nor does one that reads os.environ["K"] where the test set K
    quiet = bool(watched) and all(w is True for w in watched) or _set_variable_read(ip, st[1], frame)
    value = caught(watched)
    classes = instance_classes(ip, value) if value is not UNKNOWN_V else None
    # a body that raised on every way: one of the handlers that may catch runs, or the exception
    # goes on; what follows the try runs only after a handler that does not end
    body_raised = ended and ip.raising and not jumped
    runs = []
    for name, body, etype in ([] if quiet else st[2]):
        catches = True if etype is None else None if classes is None else \
            handler_catches(ip, ip.eval(etype, frame), classes)
        if catches is False:
            continue   # not what the test's double raises
        if name:
            ip._bind(frame, name, value)
        if body_raised:
            runs.append(body)
        else:
            ip._branches([body, []], frame)
        if catches:
            break   # caught here: the handlers after it do not run
    handled_end = ip._branches(runs, frame)[0] if runs else True
    if not ended:
        ended = ip.exec_block(st[3], frame)
        cut = cut or ip.way_cut
    if ip.exec_block(st[4], frame):
        return True
    ip.way_cut = cut or ip.way_cut
    ip.jumping = jumped and not st[2]   # with handlers, what follows the try runs (ended is False)
    return ended and (not st[2] or body_raised and handled_end)


def blocked_import(ip, body) -> Optional[int]:
    """The index of the first statement of ``body`` that imports a module the test set to None in
    ``sys.modules`` (``monkeypatch.setitem(sys.modules, "dotenv", None)``, ``patch.dict``), or
    of a package above it: that import raises ModuleNotFoundError. None when there is none."""
    for i, st in enumerate(body):
        if st[0] == "import":
            modules = [n[1] for n in st[1]]
        elif st[0] == "from":
            modules = [st[1]]
        else:
            continue
        for m in modules:
            parts = m.split(".")
            for j in range(1, len(parts) + 1):
                v = ip.ctx.patches.get((SYS_MODULES, ".".join(parts[:j])))
                if v is not None and is_none(v):
                    return i
    return None


def _exec_blocked(ip, st, at: int, frame) -> bool:
    """A ``try`` whose body reaches an import the test blocked (``blocked_import``): the body up
    to it, then the first handler that catches ModuleNotFoundError runs on every way (a handler
    naming a class that is not built in may or may not); with none, the exception goes on."""
    ended = ip.exec_block(st[1][:at], frame)
    if not ended:
        maybe = False
        for name, body, etype in st[2]:
            catches = True if etype is None else handler_catches(ip, ip.eval(etype, frame), ["ModuleNotFoundError"])
            if catches is False:
                continue
            if name:
                ip._bind(frame, name, UNKNOWN_V)
            if catches is None:
                ip._branches([body, []], frame)
                maybe = True
                continue
            ended = ip.exec_block(body, frame)
            break
        else:
            ended = not maybe   # uncaught: the import's exception goes on
            ip.raising = ended
    jumped, ip.jumping = ip.jumping, False
    if ip.exec_block(st[4], frame):
        return True
    ip.jumping = jumped
    return ended
