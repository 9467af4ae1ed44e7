"""Test classes a pytest plugin collects through its own hook (contract section 1, "test").

A *collecting plugin* makes every subclass of its base classes a test class, whatever the class
is called (SQLAlchemy's testing plugin, through ``pytest_pycollect_makeitem``), and runs set-up
and tear-down methods of its own around each test. Two sources:

* the plugins hermetic knows (``KNOWN``), active for the test modules under a conftest that
  loads one (imports it, star-imports it, or names it in ``pytest_plugins``);
* ``test-base-classes`` in the configuration: the project's own base classes, active for every
  test module, collected as SQLAlchemy's plugin collects (pytest's own collection stays).
"""
from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Tuple

from ..config import setup_cfg_value
from .decide import values
from .literals import _literal_str
from .requirements import excludes, returns_of, spec_of
from ..summarise.ir import ASSIGN_TARGETS, ASSIGN_VALUE, FROM_MODULE, IF_BODY, IF_ORELSE, IMPORT_NAMES, \
    LIT_VALUE, NAME_ID, SEQ_ITEMS, TAG, TRY_BODY, TRY_FINALLY, TRY_HANDLERS, TRY_ORELSE, WITH_BODY, dotted_name


@dataclass(frozen=True)
class CollectingPlugin:
    """How one plugin collects and runs test classes.

    ``loaded_by``: module names whose import (or ``pytest_plugins`` entry) in a conftest loads
    the plugin; ``bases``: qualified names of the base classes (a re-exported name is resolved
    through the module that exports it); ``method_prefix``: the methods collected as tests
    (``None``: pytest's ``python_functions``); ``exclusive``: the plugin's hook answers for every
    name, so only its classes are tests (SQLAlchemy's returns ``[]`` for everything else);
    ``setup_class`` .. ``teardown_class``: the methods it calls, per class and per test, in
    that order around the test (each where the class has it)."""

    name: str
    loaded_by: Tuple[str, ...]
    bases: Tuple[str, ...]
    method_prefix: Optional[str] = "test_"
    exclusive: bool = False
    setup_class: Tuple[str, ...] = ("setup_test_class",)
    setup: Tuple[str, ...] = ("setup_test",)
    teardown: Tuple[str, ...] = ("teardown_test",)
    teardown_class: Tuple[str, ...] = ("teardown_test_class",)
    # the database a run without options tests against, and the class attributes that name
    # the backends a class runs only on / never on (``skipped_on_default``)
    default_backend: Optional[str] = None
    only_on: str = "__only_on__"
    unsupported_on: str = "__unsupported_on__"
    # where the project names its requirements class (a section and key of setup.cfg, its
    # value ``module:Class``), the class attribute listing a class's requirements, and the
    # attribute a requirement decorator is read from (``@testing.requires.NAME``)
    requirements_setting: Optional[Tuple[str, str]] = None
    requires: str = "__requires__"
    requires_attr: Tuple[str, ...] = ("requires", "requirements")
    # the class attributes that make the plugin collect a class once per backend, under a name
    # with the backend's suffix (``Cls_sqlite+pysqlite_3_40_1``), and that suffix on the default
    # backend (``class_name``)
    per_backend: Tuple[str, ...] = ()
    backend_suffix: Optional[str] = None


# sqlalchemy/testing/plugin/pytestplugin.py: want_class (a TestBase subclass, name not "_*"),
# want_method ("test_*"), setup_class_methods / setup_test_methods (the set-up order). Its
# bootstrap.py loads the plugin as ``sqla_pytestplugin``, which SQLAlchemy's and alembic's
# conftests star-import.
SQLALCHEMY = CollectingPlugin(
    name="sqlalchemy",
    loaded_by=("sqlalchemy.testing.plugin.pytestplugin", "sqla_pytestplugin"),
    bases=("sqlalchemy.testing.fixtures.TestBase", "sqlalchemy.testing.fixtures.base.TestBase"),
    exclusive=True,
    setup=("setup_test", "setUp"),          # alembic's suite uses setUp / tearDown
    teardown=("tearDown", "teardown_test"),
    default_backend="sqlite",               # plugin_base.py: --dburi absent, the default db is sqlite
    requirements_setting=("sqla_testing", "requirement_cls"),
    # pytestplugin.py / plugin_base.generate_sub_tests: a __backend__ (or __only_on__) class is collected as
    # "<name>_<config name>", the config name "sqlite+pysqlite_[<server version>]" with brackets
    # and dots as "_": the sqlite library of the running Python
    per_backend=("__backend__", "__only_on__", "__sparse_backend__"),
    backend_suffix="sqlite+pysqlite_" + sqlite3.sqlite_version.replace(".", "_"),
)


def class_name(ip, plugin: Optional[CollectingPlugin], qn: str, name: str) -> str:
    """The name a plugin collects the test class ``qn`` (named ``name``) under: with the default
    backend's suffix where a class attribute of ``per_backend`` is true (``__backend__ = True``,
    ``__only_on__ = "sqlite"``)."""
    if plugin is None or not plugin.backend_suffix:
        return name
    for attr in plugin.per_backend:
        v = ip.class_attr(qn, attr)
        known = values(v) if v is not None else None
        if known and all(known):   # true on every way (`__only_on__ = "sqlite"` too)
            return f"{name}_{plugin.backend_suffix}"
    return name

KNOWN: Tuple[CollectingPlugin, ...] = (SQLALCHEMY,)

BY_NAME: Dict[str, CollectingPlugin] = {p.name: p for p in KNOWN}


def configured(names: Iterable[str]) -> Optional[CollectingPlugin]:
    """The pseudo-plugin of ``test-base-classes`` (None when the list is empty)."""
    names = tuple(names)
    if not names:
        return None
    return CollectingPlugin(name="test-base-classes", loaded_by=(), bases=names, method_prefix=None)


def loaded_modules(body: list) -> List[str]:
    """The module names a conftest's statements import or list in ``pytest_plugins``, also
    inside ``if``/``try``/``with`` blocks (SQLAlchemy's conftest star-imports its plugin
    inside a ``with``)."""
    out: List[str] = []
    for st in body:
        t = st[TAG]
        if t == "import":
            out.extend(full for _local, full, _as in st[IMPORT_NAMES])
        elif t == "from":
            out.append(st[FROM_MODULE])
        elif t == "assign" and any(tg[TAG] == "name" and tg[NAME_ID] == "pytest_plugins"
                                   for tg in st[ASSIGN_TARGETS]):
            v = st[ASSIGN_VALUE]
            items = v[SEQ_ITEMS] if v[TAG] == "seq" else [v]
            out.extend(x[LIT_VALUE] for x in items if x[TAG] == "lit" and isinstance(x[LIT_VALUE], str))
        elif t == "if":
            out.extend(loaded_modules(st[IF_BODY]) + loaded_modules(st[IF_ORELSE]))
        elif t == "with":
            out.extend(loaded_modules(st[WITH_BODY]))
        elif t == "try":
            out.extend(loaded_modules(st[TRY_BODY]) + loaded_modules(st[TRY_ORELSE])
                       + loaded_modules(st[TRY_FINALLY]))
            for _n, hbody, _t in st[TRY_HANDLERS]:
                out.extend(loaded_modules(hbody))
    return out


def plugins_loaded(body: list) -> List[CollectingPlugin]:
    """The known collecting plugins a conftest (its summary's ``body``) loads."""
    mods = loaded_modules(body)
    return [p for p in KNOWN if any(m == lb or m.startswith(lb + ".") for m in mods for lb in p.loaded_by)]


def requirements_class(plugin: Optional[CollectingPlugin], rootdir, cache: dict) -> Optional[str]:
    """The qualname of the requirements class the project names for ``plugin`` in ``setup.cfg``
    under ``rootdir`` (``test.requirements:DefaultRequirements``), or None; kept in ``cache``."""
    if plugin is None or plugin.requirements_setting is None:
        return None
    if plugin.name not in cache:
        spec = setup_cfg_value(rootdir, *plugin.requirements_setting)
        cache[plugin.name] = spec.replace(":", ".") if spec else None
    return cache[plugin.name]


def plugin_skips(ip, cls: Optional[str], plugin: Optional[CollectingPlugin], test_fn: dict, requirements) -> bool:
    """The collecting ``plugin`` skips a test (``test_fn``, a method of class ``cls``) on its
    default backend: by the class's backends (``skipped_on_default``: SQLAlchemy's
    ``__only_on__ = "postgresql"``), or by a requirement its decorators (the class's too) or
    the class's ``__requires__`` name, read in the ``requirements`` class (its qualname, or
    None; module ``requirements``). ``ip``: the interpreter."""
    if cls is None or plugin is None or plugin.default_backend is None:
        return False
    if skipped_on_default(plugin, *(_specs(ip.class_attr(cls, attr)) for attr in (plugin.only_on, plugin.unsupported_on))):
        return True
    if requirements is None or requirements not in ip.p.classes:
        return False
    names = [n for n in (_specs(ip.class_attr(cls, plugin.requires)) or []) if n]
    decorators = [d for cq in ip.mro(cls) for d, _l in ip.p.classes[cq][0]["decorators"]]
    for d in decorators + [d for d, _l in test_fn["decorators"]]:
        parts = dotted_name(d).split(".") if d[TAG] in ("name", "attr") else []
        if len(parts) >= 2 and parts[-2] in plugin.requires_attr:
            names.append(parts[-1])

    def follow(name: str):
        m = ip.find_method(requirements, name)
        f = ip.p.functions.get(m[1], (None, None))[0] if m else None
        return returns_of(f["body"]) if f else None

    for name in names:
        returns = follow(name)
        if returns and all(excludes(r, plugin.default_backend, follow) is True for r in returns):
            return True
    return False


def _specs(v) -> Optional[list]:
    """A class attribute's strings (one, or a tuple/list of them; None in place of one the
    analysis cannot read), or None when the class does not set it."""
    if v is None:
        return None
    one = _literal_str(v)
    if one is not None:
        return [one]
    seqs = [a for a in v.refs() if a[0] == "seq"]
    return [_literal_str(x) for x in seqs[0][2]] if len(seqs) == 1 and len(v.atoms) == 1 else [None]


def skipped_on_default(plugin: CollectingPlugin, only_on: Optional[list], unsupported_on: Optional[list]) -> bool:
    """Whether the plugin skips a class on its default backend (a run with no database option):
    ``__only_on__`` names backends, none of them the default one, or ``__unsupported_on__``
    names it (SQLAlchemy's ``_possible_configs_for_cls``: ``"postgresql"``, ``"mysql+pymysql"``,
    ``"sqlite >= 3.30"``). The lists are the attributes' known strings, None where the class
    does not set the attribute; a spec the analysis cannot read (not a string) skips nothing."""
    if plugin.default_backend is None:
        return False

    def names(specs):   # (backend, exact) per spec (``requirements.spec_of``), None if one is unread
        out = [spec_of(spec) for spec in specs or ()]
        return None if None in out else out

    backend = plugin.default_backend
    only = names(only_on)
    if only and all(name != backend for name, _exact in only):
        return True
    never = names(unsupported_on)
    return bool(never) and any(name == backend and exact for name, exact in never)
