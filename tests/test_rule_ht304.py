"""HT304: other process-wide state changed without restore (fixture ht304-process-state).

Fires at the statement: ``sys.path.insert`` in a test and ``sys.path.append`` in a fixture,
``sys.modules[...] = ...``, ``del sys.modules[...]``, ``os.chdir`` in a fixture, ``os.umask``,
``patch(...).start()`` with no stop (in a test, in ``setUp``), a project function the test calls
that inserts into ``sys.path`` (anchored at the test's call), a filled ``lru_cache`` of an I/O
function never cleared (at the test's call), a test module's module-level ``sys.path.insert``, a
``finally`` that restores a different thing, a ``finally`` that changes to a new directory, a
library module's attribute replaced (``datetime.datetime = FrozenNow``) and never written back.
Silent: monkeypatch ``syspath_prepend`` / ``chdir`` / ``setitem``, ``patch.dict(sys.modules)``,
``try/finally`` putting back the entry or the saved directory, a fixture that puts the old umask
back after ``yield``, ``cache_clear()`` in a fixture or a ``finally``, an ``lru_cache`` of a pure
function, ``patch.stopall()`` after ``yield`` or in ``tearDown``, ``start()`` + ``addCleanup(stop)``,
``tearDown`` removing the entry, ``catch_warnings``, a copy of ``sys.path``. A conftest's module-level
``sys.path.insert`` is reported, listing every test below it.
"""

from helpers import (fixture_suite, listed_suite, Expect, Silent, at, line_of)

FIX = "ht304-process-state"
TL = "tests/test_leaks.py"
TR = "tests/test_restored.py"
CF = "tests/conftest.py"


EXPECTED = [
    # a library module's attribute the test replaces and never writes back (round 29)
    Expect("library-attribute-replaced", "HT304", TL, "datetime.datetime = FrozenNow   # never written back"),
    Expect("per-thread-state-in-the-test", "HT304", TL, "    asyncio.set_event_loop(asyncio.new_event_loop())"),
    Expect("sys-path-insert-in-test", "HT304", TL, 'sys.path.insert(0, str(tmp_path / "plugins"))'),
    Expect("sys-path-append-in-fixture", "HT304", CF, "sys.path.append(str(tmp_path))"),
    Expect("sys-modules-set", "HT304", TL, 'sys.modules["toolkit_fake"] = types.ModuleType'),
    Expect("sys-modules-del", "HT304", TL, 'del sys.modules["toolkit.loader"]'),
    Expect("sys-modules-del-under-other-patch-dict", "HT304", TL, 'del sys.modules["toolkit.catalog"]   # os.environ'),
    # of two entries popped, the finally puts back only one
    Expect("sys-modules-pop-not-put-back", "HT304", TL, 'other = sys.modules.pop("toolkit.loader", None)'),
    Expect("chdir-in-fixture", "HT304", CF, "os.chdir(tmp_path)"),
    Expect("umask", "HT304", TL, "os.umask(0o027)"),
    Expect("patch-start-no-stop", "HT304", TL, 'mock.patch("toolkit.loader.plugin_dirs", return_value=["x/plugins"]).start()'),
    Expect("patch-start-in-setUp", "HT304", TL, "self.patcher.start()"),
    # a conftest's top level, as a test module's (contract section 4): every test below it
    Expect("conftest-module-level", "HT304", CF, 'sys.path.insert(0, str(Path(__file__).parent / "plugins"))'),
    Expect("test-module-level-sys-path", "HT304", TL, 'sys.path.insert(0, str(Path(__file__).parent / "plugins"))'),
    Expect("finally-restores-other-thing", "HT304", TL, "os.chdir(tmp_path)  # work in the scratch folder"),
    Expect("finally-changes-to-new-directory", "HT304", TL, 'os.chdir(tmp_path / "..")'),
    Expect("project-function", "HT304", TL, 'loader.add_plugin_dir(tmp_path / "plugins")'),
    Expect("lru-cache-filled", "HT304", TL, "catalog.load_catalog(str(path))"),
]
OPTIONAL = [
    Expect("finally-new-directory-write", "HT304", TL, "os.chdir(tmp_path)  # not where the test started"),
]

LISTED = [
    ("sys-path-insert-in-test", TL, 'sys.path.insert(0, str(tmp_path / "plugins"))', [TL + "::test_plugin_dir_inserted"], ""),
    ("chdir-in-fixture", CF, "os.chdir(tmp_path)", [TL + "::test_cwd_from_leaking_fixture"], ""),
    ("patch-start-in-setUp", TL, "self.patcher.start()", [TL + "::TestPatcherWithoutStop::test_installed"],
     ""),
]

SILENT = [
    Silent("library-attribute-put-back", TR, "    datetime.datetime = FrozenNow",
           "the finally writes the saved class back"),
    Silent("with-target-named-like-a-module", TR, "mock.return_value = (1, 0)",
           "`with ... as mock` binds a double in the test: not the mock module's attribute"),
    Silent("sys-path-put-back-whole", TR, 'sys.path.insert(0, "/opt/toolkit/plugins")',
           "sys.path = saved in the finally is the snapshot's restore, not a library attribute replaced"),
    Silent("finalizer-partial", TR, "partial_logger.addHandler(handler)",
           "request.addfinalizer(partial(logger.removeHandler, handler)) removes it at teardown"),
    Silent("per-thread-state-in-a-thread", TR, "        asyncio.set_event_loop(asyncio.new_event_loop())",
           "a thread's target sets that thread's own current event loop"),
    Silent("project-context-manager-own-finally", TR, 'with loader.plugins_importable(tmp_path / "plugins"):',
           "the context manager removes what it inserted in its own finally"),
    Silent("sys-modules-del-under-patch-dict", TR, 'del sys.modules["toolkit.catalog"]   # the whole',
           "patch.dict(sys.modules) puts every entry back on exit"),
    Silent("syspath-prepend", TR, "monkeypatch.syspath_prepend(", "restored by monkeypatch"),
    Silent("umask-read-back", TR, "current = os.umask(0o022)", "put back by the next statement"),
    Silent("add-class-cleanup", TR, 'sys.path.insert(0, "/opt/toolkit-ext")', "undone by addClassCleanup"),
    Silent("monkeypatch-chdir", TR, "monkeypatch.chdir(tmp_path)", "restored by monkeypatch"),
    Silent("monkeypatch-setitem-sys-modules", TR, "monkeypatch.setitem(sys.modules,", "restored by monkeypatch"),
    Silent("patch-dict-sys-modules", TR, "mock.patch.dict(sys.modules,", "undone on exit"),
    Silent("sys-modules-pop-put-back", TR, 'saved = sys.modules.pop("toolkit.catalog", None)',
           "the finally puts the popped entry back"),
    Silent("sys-modules-pop-put-back-other", TL, 'saved = sys.modules.pop("toolkit.catalog", None)',
           "this one is put back"),
    Silent("try-finally-sys-path", TR, "sys.path.insert(0, entry)", "the finally removes the entry"),
    Silent("try-finally-sys-path-restore", TR, "sys.path.remove(entry)", "the restore itself"),
    Silent("try-finally-chdir", TR, "os.chdir(tmp_path)", "the finally changes back to the saved directory"),
    Silent("try-finally-chdir-restore", TR, "os.chdir(previous)", "the restore itself"),
    Silent("getcwd", TR, "previous = os.getcwd()", "a read"),
    Silent("umask-fixture", CF, "old = os.umask(0o077)", "the old umask is put back after yield"),
    Silent("umask-fixture-restore", CF, "os.umask(old)", "the restore itself"),
    Silent("lru-cache-cleared-by-fixture", TR, 'fresh_catalog(str(path)) == ["gamma"]', "the fixture clears the cache"),
    Silent("lru-cache-cleared-in-finally", TR, 'catalog.load_catalog(str(path)) == ["delta"]', "cleared in finally"),
    Silent("lru-cache-pure-function", TR, 'catalog.parse_version("1.2.3")', "a cache of a pure function"),
    Silent("lru-cache-of-a-shipped-file", TR, "catalog.builtin_catalog()",
           "a cache of a file the package ships beside its code (Path(__file__).parent / ...)"),
    Silent("patch-stopall-after-yield", CF, 'mock.patch("toolkit.loader.plugin_dirs", return_value=[]).start()',
           "stopped by patch.stopall() after yield"),
    Silent("patch-stopall-in-tearDown", TR, 'mock.patch("toolkit.loader.plugin_dirs", return_value=["y/plugins"]).start()',
           "stopped by patch.stopall() in tearDown"),
    Silent("patcher-start-addCleanup", TR, "patcher.start()", "stopped through addCleanup"),
    Silent("tearDown-removes-entry", TR, "sys.path.append(self.entry)", "tearDown removes it"),
    Silent("catch-warnings", TR, 'warnings.simplefilter("ignore")', "inside catch_warnings"),
    Silent("copy-of-sys-path", TR, 'paths.insert(0, "elsewhere/plugins")', "a copy, not sys.path"),
    Silent("project-function-body", "src/toolkit/loader.py", "sys.path.insert(0, str(path))",
           "anchored at the test's call, not in the project function"),
    Silent("sys-path-read", "src/toolkit/loader.py", "for entry in sys.path", "a read"),
    Silent("catalog-read-on-tmp", "src/toolkit/catalog.py", "Path(path).read_text", "the tests pass tmp_path files"),
    Silent("restore-of-other-thing", TL, "sys.path[:] = saved_path", "puts back what it never changed"),
]

findings, test_reported, test_silent, test_nothing_else = fixture_suite(FIX, EXPECTED, SILENT, OPTIONAL)
test_lists_the_affected_tests = listed_suite(FIX, "HT304", LISTED)


def test_module_level_insert_lists_the_module_tests(findings):
    """A test module's module level runs at collection: the module's own tests are affected."""
    snippet = 'sys.path.insert(0, str(Path(__file__).parent / "plugins"))'
    [found] = at(findings, TL, line_of(FIX, TL, snippet), "HT304")
    assert TL + "::test_umask_tightened" in found.tests, found.tests




def test_a_filled_cache_is_fixed_by_clearing_it(findings):
    """The fix of a filled lru_cache names the function's cache_clear(), not the generic restores."""
    [found] = at(findings, TL, line_of(FIX, TL, "catalog.load_catalog(str(path))"), "HT304")
    assert "load_catalog.cache_clear()" in found.fix and "syspath_prepend" not in found.fix, found.fix


def test_a_state_with_its_own_fix_names_it(findings):
    """The catalogue's fix for the working directory (``[fixes]``), not the general list."""
    [found] = at(findings, TL, line_of(FIX, TL, 'os.chdir(tmp_path / "..")'), "HT304")
    assert found.fix.startswith("use monkeypatch.chdir(...)") and "syspath_prepend" not in found.fix, found.fix
