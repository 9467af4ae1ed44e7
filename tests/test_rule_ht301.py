"""HT301: importlib.reload in a test or fixture (fixture ht301-reload).

A reload re-runs a module's top level: the registry the built-in exporters filled at import is
emptied for every test that runs after. Anchored at the reload call, whatever form it takes
(``importlib.reload``, a bare ``reload`` import, in a ``finally``, in a fixture, in ``setUp``, in a
helper the test calls, its result kept). Silent: ``import_module``, ``invalidate_caches``, a
monkeypatch, a reload in project code that no test reaches, and a reload of a copy imported after the
module was taken out of sys.modules (celery's ``reset_modules``; reloaded in place it is reported).
"""
import pytest

from helpers import (fixture_suite, Expect, Silent, assert_lists, listed_params, at, describe,
                     line_of)

FIX = "ht301-reload"
TR = "tests/test_reload.py"
T = TR + "::"


EXPECTED = [
    Expect("importlib-reload", "HT301", TR, "importlib.reload(registry)"),
    Expect("bare-reload-import", "HT301", TR, "    reload(limits)"),
    Expect("reload-in-finally", "HT301", TR, "importlib.reload(limits)  # put the shipped PAGE_SIZE back"),
    Expect("reload-in-fixture", "HT301", "tests/conftest.py", "importlib.reload(limits)"),
    Expect("reload-in-setUp", "HT301", TR, "importlib.reload(limits)  # start every test"),
    Expect("reload-in-helper", "HT301", "tests/support.py", "return importlib.reload(module)"),
    Expect("reload-result-kept", "HT301", TR, "reloaded = importlib.reload(limits)"),
    # near miss of the throwaway copy: the module is reloaded in place, so the original is reset
    Expect("reload-in-place-with-sys-modules-put-back", "HT301", "tests/support.py",
           "importlib.reload(importlib.import_module(name))  # the original, in place"),
    Expect("reload-beside-another-module-taken-out", "HT301", "tests/support.py",
           'importlib.reload(importlib.import_module("plugins.registry"))  # not the module taken out'),
]

# (id, path, snippet, the exact tests the finding must list, xfail)
LISTED = [
    ("importlib-reload", TR, "importlib.reload(registry)", ["test_registry_starts_with_aliases"], ""),
    ("bare-reload-import", TR, "    reload(limits)", ["test_limits_reloaded_by_bare_name"], ""),
    ("reload-in-finally", TR, "# put the shipped PAGE_SIZE back", ["test_reload_in_finally_is_still_a_reload"], ""),
    ("reload-in-fixture", "tests/conftest.py", "importlib.reload(limits)", ["test_limits_from_reloading_fixture"], ""),
    ("reload-in-setUp", TR, "# start every test from", ["TestReloadInSetUp::test_page_count"], ""),
    ("reload-in-helper", "tests/support.py", "return importlib.reload(module)", ["test_registry_through_helper"],
     ""),
]

SILENT = [
    Silent("throwaway-copy", "tests/support.py",
           "importlib.reload(importlib.import_module(name))  # a copy: the original is out of sys.modules",
           "the module was taken out of sys.modules first: the reload resets a copy no one else holds"),
    Silent("import-module", "tests/conftest.py", 'importlib.import_module("plugins.registry")', "not a reload"),
    Silent("invalidate-caches", "tests/test_no_reload.py", "importlib.invalidate_caches()", "not a reload"),
    Silent("monkeypatch", "tests/test_no_reload.py", 'monkeypatch.setattr(limits, "PAGE_SIZE", 100)',
           "restored by monkeypatch"),
    Silent("monkeypatch-before-reload", TR, 'monkeypatch.setattr(limits, "PAGE_SIZE", 10)',
           "restored by monkeypatch; the finding is the reload"),
    Silent("helper-call-site", TR, "fresh(registry)", "HT301 is anchored at the reload call in the helper"),
    Silent("project-reload-unreached", "src/plugins/devtools.py", "importlib.reload(registry)",
           "project code no test reaches: not in a test or fixture"),
    Silent("import-time-registration", "src/plugins/builtin.py", 'registry.register("json", to_json)',
           "the project's own import-time registration"),
    Silent("registry-definition", "src/plugins/registry.py", "EXPORTERS = {}", "the registry's definition"),
]

findings, test_reported, test_silent, test_nothing_else = fixture_suite(FIX, EXPECTED, SILENT)


@pytest.mark.parametrize("path,snippet,tests", listed_params(LISTED))
def test_lists_the_affected_tests(findings, path, snippet, tests):
    assert_lists(FIX, findings, "HT301", path, snippet, [T + t for t in tests])


def test_message_names_the_registry_the_reload_empties(findings):
    """Issue 4: the message names the module-level names the reload resets."""
    [found] = at(findings, TR, line_of(FIX, TR, "importlib.reload(registry)"), "HT301")
    assert "(EXPORTERS, ALIASES)" in found.message, found.message
    # its __all__ is rebuilt the same: the module's declaration, not state (celery's message led with it)
    assert "__all__" not in found.message


def test_origin_is_null(findings):
    """Contract section 8: origin is null for HT3xx."""
    ht301 = [f for f in findings if f.code == "HT301"]
    assert ht301 and all(not f.origin for f in ht301), describe(ht301)


