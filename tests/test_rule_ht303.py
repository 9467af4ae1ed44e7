"""HT303: module-level state of a project module changed without restore (fixture ht303-module-state).

Fires at the statement in the test or fixture: ``mod.NAME = ...``, ``setattr(mod, ...)``,
``mod.REGISTRY[k] = v``, ``del mod.REGISTRY[k]``, ``.append/.extend/.update/.add/.pop/.clear/
.setdefault`` on a module container, in ``setUp`` without a tear-down, in a fixture; through a
project function the test or fixture calls (``registry.register("shout", ...)``), anchored at that
call; a ``finally`` that restores a different variable; a ``finally`` (or code after ``yield``) that
sets a new value instead of the saved one. Silent: monkeypatch ``setattr`` / ``setitem`` /
``delitem``, ``patch.object`` (context manager, decorator, ``start()`` + ``addCleanup``),
``patch.dict`` and a registration inside it, ``try/finally`` and code after ``yield`` that put back
the saved value, ``tearDown``, a local copy, an instance's own attribute, a read, conftest module
level (session configuration), the project's own import-time registration, a fixture the test
requests whose teardown puts the entry back (a snapshot of the dict, ``pop`` after ``yield``, a lambda
or module-level finalizer), a module-level finalizer the test registers itself (and that finalizer's
own ``pop``). Still reported: the fixture when the test changes another entry, the entry changed by a
test that does not request the fixture.

Fixture ht303-monkeypatch-wrapper: a project fixture wrapping monkeypatch (an instance's
``__call__`` or method, a closure, a helper handed the monkeypatch) saves what its caller names.
"""

from helpers import fixture_suite, listed_suite, FIXTURES, Expect, Silent, at, line_of

FIX = "ht303-module-state"
TL = "tests/test_leaks.py"
TR = "tests/test_restored.py"
CF = "tests/conftest.py"


EXPECTED = [
    Expect("attribute-assignment", "HT303", TL, "settings.RETRIES = 0"),
    Expect("cache-left-filled", "HT303", TL, 'optional._loaders = {"stub": "stub"}'),
    Expect("setattr-builtin", "HT303", TL, 'setattr(settings, "RETRIES", 1)'),
    Expect("item-assignment", "HT303", TL, 'registry.RUNNERS["shout"] = shout'),
    # a module container imported by name is the same object (a new user's trial on structlog)
    Expect("item-assignment-through-an-imported-name", "HT303", "tests/test_imported_by_name.py",
           'RUNNERS["by-name"] = str.upper'),
    Expect("append", "HT303", TL, "registry.HOOKS.append(print)"),
    # a project function assigning another project module's global (keyring's backend._limit)
    Expect("another-module-global-through-project-function", "HT303", TL, "dispatch.tune(1)"),
    Expect("extend", "HT303", TL, 'settings.QUEUES.extend(["bulk"])'),
    Expect("add", "HT303", TL, 'settings.FEATURES.add("beta")'),
    Expect("update", "HT303", TL, 'registry.RUNNERS.update({"loud": shout})'),
    Expect("setdefault", "HT303", TL, 'registry.RUNNERS.setdefault("quiet", str.lower)'),
    Expect("pop", "HT303", TL, 'registry.RUNNERS.pop("upper")'),
    Expect("clear", "HT303", TL, "registry.HOOKS.clear()  # empties the hooks import registered"),
    Expect("del-item", "HT303", TL, 'del registry.RUNNERS["echo"]'),
    Expect("project-function-in-test", "HT303", TL, 'registry.register("shout", shout)'),
    # a project function that changes the registry only on a way the test's values take
    Expect("project-function-on-the-way-taken", "HT303", TL, 'registry.lookup("hum", remember=True)'),
    Expect("project-function-statement-over-lines", "HT303", TL, 'registry.install("whirr")'),
    Expect("project-function-in-fixture", "HT303", CF, "registry.add_hook(seen.append)"),
    Expect("fixture-puts-back-new-value", "HT303", CF, "settings.RETRIES = 0"),
    Expect("finally-restores-other-variable", "HT303", TL, "settings.TIMEOUT = 5"),
    Expect("finally-sets-new-value", "HT303", TL, "settings.RETRIES = 7"),
    Expect("setUp-without-teardown", "HT303", TL, 'settings.QUEUES.append("priority")'),
    # a project function that sets a global and does not put it back
    Expect("project-function-sets-flag", "HT303", TL, "dispatch.mark_busy()"),
    Expect("new-module-attribute", "HT303", TL, "settings.DEBUG_HOOK = print"),
    # a requested fixture's teardown covers the entries it puts back, for its own tests only
    Expect("requested-fixture-restores-other-entry", "HT303", TL, 'registry.RUNNERS["tweet"] = shout',
           tests=[TL + "::test_fixture_removes_another_runner"]),
    Expect("restoring-fixture-not-requested", "HT303", TL, 'registry.RUNNERS["chirp"] = shout',
           tests=[TL + "::test_chirp_without_the_cleanup_fixture"]),
    Expect("lambda-finalizer-restores-other-entry", "HT303", TL, 'registry.RUNNERS["drone"] = shout'),
    # near miss of the per-test reset: a plain TestCase, whose base empties nothing per test
    Expect("outbox-outside-the-resetting-base", "HT303", TL, 'mailbox.outbox = ["sent"]',
           tests=[TL + "::TestOutboxOutsideTheBase::test_outbox_left_with_a_message"]),
    # near miss of the context decorator's reset: the same write with no override around it
    Expect("translations-without-the-override", "HT303", TL, "translation.active = translation.Translations()",
           tests=[TL + "::test_translations_without_an_override"]),
    # a module imported in the test's own body is the module: changing it is module state
    Expect("function-level-import", "HT303", TL, "direct.RETRIES = 11",
           tests=[TL + "::test_function_level_import_changed"]),
    # a project function changing a container through its method bound as a default argument
    Expect("bound-container-method", "HT303", TL, 'registry.register_fast("fast", shout)',
           tests=[TL + "::test_registered_through_a_bound_method"]),
    # the test fills HOOKS through a project function and empties it later: the filling is the change
    Expect("filled-then-emptied", "HT303", TL, "registry.add_hook(print)",
           tests=[TL + "::test_hooks_filled_then_emptied_later"]),
    # near misses of a project function that only takes entries out (Silent "take-one-entry-out",
    # "clear-through-a-project-function"): what the test put in, one entry of one defined full
    Expect("put-in-before-taken-out", "HT303", TL, "registry.checkout(conn)  # reported", tests=[TL + "::test_checked_out_then_in"]),
    # filled, then emptied outside a finally: the filling is the change (near miss: emptied only)
    # a project class whose __init__ appends to its module's list (near miss: a weak set)
    # in a `with pytest.raises(...)` block, the statements before the last one run through
    Expect("before-the-expected-raise", "HT303", "tests/test_imported_by_name.py", 'registry.register("dup", str)',
           tests=["tests/test_imported_by_name.py::test_strict_registration_refused"]),
    # ... and what the expected-to-raise call changes before anything in it could raise
    # (Django's run_with_reloader sets its signal handler first)
    Expect("changed-before-the-raise", "HT303", "tests/test_imported_by_name.py",
           'registry.add_hook_then_check("missing", print)'),
    Expect("constructor-fills-a-module-list", "HT303", "tests/test_imported_by_name.py", "registry.CountedRunner()"),
    Expect("filled-then-cleared-outside-a-finally", "HT303", "tests/test_imported_by_name.py",
           'registry.CHECKED_OUT["c1"] = object()', tests=["tests/test_imported_by_name.py::test_checked_out_filled_then_emptied"]),
    Expect("entry-taken-from-a-filled-container", "HT303", TL, 'registry.drop_default("echo")',
           tests=[TL + "::test_default_dropped"]),
    Expect("put-back-outside-a-finally", "HT303", TL, "settings.RETRIES = 9  # put back below",
           tests=[TL + "::test_retries_put_back_at_the_end"]),
    Expect("taken-out-outside-a-finally", "HT303", TL, "registry.checkout(conn)  # put back at the end",
           tests=[TL + "::test_checked_out_then_in_at_the_end"]),
    Expect("added-then-deleted-outside-a-finally", "HT303", TL, "settings.EXTRA_HOOK = print  # deleted below",
           tests=[TL + "::test_hook_added_then_deleted_at_the_end"]),
]
OPTIONAL = [
    # the writes that put a new literal back (not the import-time value) leave a state of their own
    Expect("finally-new-value-write", "HT303", TL, "settings.RETRIES = 4"),
    Expect("fixture-new-value-write", "HT303", CF, "settings.RETRIES = 4"),
]

LISTED = [
    ("attribute-assignment", TL, "settings.RETRIES = 0", [TL + "::test_no_retries"], ""),
    ("project-function-in-test", TL, 'registry.register("shout", shout)',
     [TL + "::test_register_through_project_function"], ""),
    ("project-function-in-fixture", CF, "registry.add_hook(seen.append)", [TL + "::test_hook_from_leaking_fixture"], ""),
    ("fixture-puts-back-new-value", CF, "settings.RETRIES = 0", [TL + "::test_fixture_puts_back_a_new_value"], ""),
    ("setUp-without-teardown", TL, 'settings.QUEUES.append("priority")', [TL + "::TestSetUpLeaks::test_priority_queue"],
     ""),
]

SILENT = [
    Silent("project-function-way-not-taken", TL, 'registry.lookup("buzz")',
           "remember=False: the statement filling RUNNERS never runs for this test"),
    Silent("another-module-global-put-back-in-finally", TL, "assert dispatch.patient_for(90) == 4",
           "the project function writes settings.TIMEOUT back in its finally"),
    Silent("parameter-shadowing-a-module", TL, "assert dispatch.tune_object(Options()).TIMEOUT",
           "tune_object's `settings` is its parameter, the test's own object"),
    Silent("the-call-expected-to-raise", "tests/test_imported_by_name.py", 'registry.register_strict("dup", str)',
           "the block's last statement raises what the test expects: what it would change after does not happen"),
    Silent("constructor-adds-to-a-weak-set", "tests/test_imported_by_name.py", "assert registry.LiveRunner() in",
           "LIVE is a WeakSet: the entry goes with the object the test made"),
    # clear() of a container the module defines and leaves empty puts it back as imported (a reset)
    Silent("clear-through-a-project-function", TL, "registry.check_all_in()", "CHECKED_OUT starts empty"),
    Silent("clear-in-the-test", "tests/test_imported_by_name.py", "registry.CHECKED_OUT.clear()   # the module starts",
           "CHECKED_OUT starts empty"),
    Silent("local-list-of-the-same-name", "tests/test_imported_by_name.py", "HOOKS.append(print)",
           "the test rebound HOOKS to a list of its own"),
    Silent("finally-resets-an-import-time-switch", TR, "optional.yaml_available = False",
           "the finally sets one of the values the module binds at import"),
    Silent("teardown-empties-the-cache", TR, 'optional._loaders = {"stub": "stub"}',
           "tearDown puts back the empty cache the module starts with"),
    Silent("reset-by-the-base-entry-point", TR, 'mailbox.outbox = ["queued"]',
           "the TestCase base's __call__ empties the outbox before every test of its subclasses"),
    Silent("reset-when-the-override-ends", TR, "translation.active = translation.Translations()",
           "leaving @override_settings sends setting_changed, whose receiver sets it anew"),
    Silent("fresh-module-copy", TR, "fresh.RETRIES = 3",
           "imported inside a block that puts sys.modules back: a copy the block's end discards"),
    Silent("project-function-after-monkeypatch", TR, "dispatch.mark_busy()  # saved by the setattr on the module",
           "monkeypatch saved the global first: its teardown puts it back"),
    Silent("project-function-after-dotted-monkeypatch", TR, "dispatch.mark_busy()  # saved by the dotted setattr",
           "monkeypatch saved the global first: its teardown puts it back"),
    Silent("take-one-entry-out", TL, "registry.checkin(conn)  # takes one entry out of",
           "a project function taking one entry out of a container its module defines empty changes nothing"),
    Silent("put-in-then-taken-out-in-finally", TL, "registry.checkout(conn)  # put back by the checkin",
           "the same function in a finally is the test's cleanup"),
    Silent("emptied-after-filling", TL, "registry.HOOKS.clear()  # the test's own cleanup",
           "the test empties what it filled itself: its cleanup, not a change of its own"),
    Silent("monkeypatch-setattr", TR, 'monkeypatch.setattr(settings, "RETRIES", 0)', "restored by monkeypatch"),
    Silent("monkeypatch-dotted", TR, 'monkeypatch.setattr("jobs.settings.RETRIES", 4)', "restored by monkeypatch"),
    Silent("monkeypatch-setitem", TR, 'monkeypatch.setitem(registry.RUNNERS, "shout", shout)', "restored"),
    Silent("monkeypatch-delitem", TR, 'monkeypatch.delitem(registry.RUNNERS, "upper")', "restored"),
    Silent("patch-object-context", TR, 'mock.patch.object(settings, "RETRIES", 2)', "undone on exit"),
    Silent("patch-object-decorator", TR, '@mock.patch.object(settings, "RETRIES", 5)', "undone after the test"),
    Silent("patch-dict", TR, 'mock.patch.dict(registry.RUNNERS, {"shout": shout})', "undone on exit"),
    Silent("register-inside-patch-dict", TR, 'registry.register("loud", shout)',
           "patch.dict(registry.RUNNERS) restores the whole mapping on exit"),
    Silent("try-finally-write", TR, "settings.RETRIES = 9", "the finally puts back the saved value"),
    Silent("finally-import-value-write", TR, "settings.TIMEOUT = 1",
           "the finally resets the literal jobs.settings binds at import"),
    Silent("finally-import-value-reset", TR, "settings.TIMEOUT = 30", "the reset itself"),
    Silent("project-function-own-finally", TR, "dispatch.guarded()", "the function puts its global back in a finally"),
    Silent("try-finally-restore", TR, "settings.RETRIES = saved", "the restore itself"),
    Silent("yield-fixture-write", CF, "settings.TIMEOUT = 1", "put back after yield"),
    Silent("yield-fixture-restore", CF, "settings.TIMEOUT = old", "the restore itself"),
    Silent("yield-fixture-project-function", CF, 'registry.register("reverse", _reverse)',
           "the saved runner is put back (or the new one unregistered) after yield"),
    Silent("patcher-start-addCleanup", TR, "patcher.start()", "stopped through addCleanup"),
    Silent("tearDown-container", TR, 'settings.QUEUES.append("nightly")', "tearDown puts the saved list back",),
    Silent("tearDown-attribute", TR, "settings.TIMEOUT = 2", "tearDown puts the saved value back",),
    Silent("local-copy", TR, 'queues.append("bulk")', "a local copy, not the module's list"),
    Silent("instance-method", TR, 'mine.add("shout", shout)', "an instance's own attribute, not module state"),
    Silent("instance-item", TR, 'mine.items["loud"] = shout', "an instance's own attribute"),
    Silent("read-only", TR, 'registry.RUNNERS.get("echo")', "a read"),
    Silent("conftest-module-level", CF, 'registry.register("noop", lambda payload: None)',
           "conftest module level is session configuration"),
    Silent("import-time-registration", "src/jobs/builtin.py", 'registry.register("echo", echo)',
           "the project's own import-time registration"),
    Silent("project-function-body", "src/jobs/registry.py", "RUNNERS[name] = runner",
           "anchored at the test's call, not inside the project function"),
    Silent("project-hook-body", "src/jobs/registry.py", "HOOKS.append(hook)", "anchored at the fixture's call"),
    Silent("save-before-other-variable", TL, "saved = settings.RETRIES", "a read"),
    Silent("new-attribute-deleted-after-yield", CF, "settings.TRACE_HOOK = print", "del after yield removes it"),
    Silent("del-after-yield", CF, "del settings.TRACE_HOOK", "the restore itself"),
    Silent("local-shadows-module", TR, "settings.RETRIES = 3", "a local named like the module, not the module"),
    Silent("restore-of-other-variable", TL, "settings.RETRIES = saved", "puts back a value it never changed"),
    Silent("requested-snapshot-fixture", TR, 'registry.RUNNERS["snap"] = shout',
           "a requested fixture snapshots registry.RUNNERS and puts it back after its yield"),
    Silent("requested-snapshot-restore", CF, "registry.RUNNERS.update(saved_runners)", "the restore itself"),
    Silent("requested-fixture-pop", TR, 'registry.RUNNERS["chirp"] = shout',
           "the requested fixture pops the entry after its yield"),
    Silent("lambda-finalizer", TR, 'registry.RUNNERS["hum"] = shout',
           "the requested fixture's lambda finalizer pops the entry"),
    Silent("lambda-finalizer-body", CF, 'lambda: registry.RUNNERS.pop("hum", None)', "the restore itself"),
    Silent("module-level-finalizer", TR, 'registry.RUNNERS["whistle"] = shout',
           "the requested fixture registers a module-level function that pops the entry"),
    Silent("module-level-finalizer-body", CF, 'registry.RUNNERS.pop("whistle", None)',
           "a function used as a finalizer restores, it is not a mutation"),
    Silent("own-module-level-finalizer", TR, 'registry.RUNNERS["buzz"] = shout',
           "the test registers a module-level function that pops the entry"),
    Silent("own-module-level-finalizer-body", TR, 'registry.RUNNERS.pop("buzz", None)',
           "a function used as a finalizer restores, it is not a mutation"),
    Silent("method-finalizer", TR, 'registry.RUNNERS["purr"] = shout',
           "addCleanup(self._drop_purr) registers a method that pops the entry"),
    Silent("method-finalizer-body", TR, 'registry.RUNNERS.pop("purr", None)', "the restore itself"),
]

findings, test_reported, test_silent, test_nothing_else = fixture_suite(FIX, EXPECTED, SILENT, OPTIONAL)
test_lists_the_affected_tests = listed_suite(FIX, "HT303", LISTED)


def test_project_function_message_names_the_container(findings):
    [found] = at(findings, TL, line_of(FIX, TL, 'registry.register("shout", shout)'), "HT303")
    assert "RUNNERS" in found.message, found.message


def test_statement_anchors_span_the_statement_text(findings):
    line = line_of(FIX, TL, "settings.RETRIES = 0")
    (found,) = at(findings, TL, line, "HT303")
    text = (FIXTURES / FIX / TL).read_text(encoding="utf-8").splitlines()[line - 1]
    assert (found.column, found.end_column) == (len(text) - len(text.lstrip()) + 1, len(text.rstrip()) + 1)


def test_a_helper_module_no_test_reaches_is_not_imported(tmp_path):
    """HT3xx imports a test-folder helper module only when a selected test reaches one of its
    functions: an unreached one adds neither findings nor unresolved calls (which then do not
    depend on whether HT3xx is selected)."""
    import textwrap

    from hermetic.api import run_check

    helper = """
        import app

        def make(cb):
            return cb()

        VALUE = make(app.{missing})


        def {name}():
            app.REGISTRY["x"] = 1
    """
    files = {
        "app/__init__.py": "REGISTRY = {}\n",
        "tests/__init__.py": "",
        "tests/unused_helpers.py": helper.format(missing="nothing_here", name="leak"),
        "tests/used_helpers.py": helper.format(missing="nothing_there", name="register"),
        "tests/test_a.py": "def test_one():\n    from tests import used_helpers\n    used_helpers.register()\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(textwrap.dedent(text), encoding="utf-8")
    report, _ = run_check(["."], tmp_path, use_cache=False)
    assert [(f.code, f.path) for f in report.findings] == [("HT303", "tests/used_helpers.py")]
    assert [u["path"] for u in report.unresolved_calls] == ["tests/used_helpers.py"]


# A project's own fixture wrapping monkeypatch (celery's ``patching``): a call of it with a known
# target saves that target like monkeypatch itself, so a later change there is restored.
WRAP = "ht303-monkeypatch-wrapper"
TW = "tests/test_wrapped.py"

WRAP_EXPECTED = [
    Expect("wrapper-patches-another-attribute", "HT303", TW, "# another attribute than the one patched",
           tests=[TW + "::test_wrapper_patches_another_attribute"]),
    Expect("wrapper-with-plain-setattr", "HT303", TW, "# the wrapper's plain setattr saves nothing"),
    Expect("wrapper-never-called", "HT303", TW, "# requested, never called"),
    Expect("environment-wrapper-other-variable", "HT302", TW, "# another variable than the one saved"),
]

WRAP_SILENT = [
    Silent("fixture-instance-call", TW, "# saved by the instance's __call__",
           "patching(path, ...) is monkeypatch.setattr(path, ...) through the instance's __call__"),
    Silent("fixture-instance-method", TW, "# saved through setattr -> __call__",
           "the instance's setattr calls self(...), whose body calls monkeypatch.setattr"),
    Silent("direct-write-after-wrapper", TW, "# saved by the wrapper, written directly", "restored at teardown"),
    Silent("closure-fixture", TW, "# saved by the closure",
           "the closure calls monkeypatch.setattr(obj, name, ...)"),
    Silent("helper-given-the-monkeypatch", TW, "# saved by the helper",
           "the helper calls monkeypatch.setattr(path, ...)"),
    Silent("dotted-path-string-value", TW, "# saved by the dotted setattr with a string value",
           "setattr(path, value) with two arguments is the dotted form, whatever the value"),
    Silent("environment-item-through-closure", TW, "# saved by setitem(os.environ, ...)",
           "monkeypatch.setitem(os.environ, name, ...) saves the variable"),
    Silent("environment-through-wrapper", TW, "# saved by the wrapper's setenv",
           "the wrapper calls monkeypatch.setenv"),
]


(wrapper_findings, test_monkeypatch_wrapper_near_misses_reported, test_monkeypatch_wrapper_restores,
 test_monkeypatch_wrapper_nothing_else) = fixture_suite(WRAP, WRAP_EXPECTED, WRAP_SILENT, name="wrapper_findings")


def test_a_change_put_back_outside_a_finally_says_where(findings):
    """The message names the line that puts the value back and why that is not enough."""
    from helpers import line_of
    line = line_of(FIX, TL, "settings.RETRIES = 9  # put back below")
    (f,) = [f for f in findings if f.path == TL and f.line == line]
    back = line_of(FIX, TL, "settings.RETRIES = retries  # the put-back")
    assert f"put back at line {back}, but not in a finally or a teardown" in f.message
    assert "never restored" not in f.message and "finally" in f.fix
    # also where a project function only takes the entry out again (registry.checkin)
    line = line_of(FIX, TL, "registry.checkout(conn)  # put back at the end")
    (f,) = [f for f in findings if f.path == TL and f.line == line]
    assert f"put back at line {line + 2}, but not in a finally" in f.message
    # an attribute the test adds to a module and deletes again later in its body
    line = line_of(FIX, TL, "settings.EXTRA_HOOK = print  # deleted below")
    (f,) = [f for f in findings if f.path == TL and f.line == line]
    assert f"put back at line {line + 2}, but not in a finally" in f.message
