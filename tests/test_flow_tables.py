"""Entries of a module's settings dict replaced by monkeypatch.setitem (contract S1, V3), and
blocks a literal condition switches off (section 1), fixture flow-tables.

``monkeypatch.setitem(config.DEFAULTS, "store_dir", str(tmp_path))`` changes the dict the code
reads at call time, through the module or a name imported from it: the write lands in tmp_path.
Setting another entry leaves the store folder where it was (the near miss). A second entry set
through a name another module imported (which still shows the dict as import left it) lands in
the same dict, so both hold. ``if False:`` never runs; ``if 1:`` always does.

A settings dict with a folder computed from the home folder at import is HT201 (the sweep finds
the write through it), but a test that put its own value in it (an entry set by an autouse
fixture) is not listed, even where its target there is not known (merged with data the test
loads), and a test that reaches only a literal entry of the dict (a file name, or a URL of a
dict of URLs it holds) does not take the computed path there.
"""
from helpers import Expect, Silent, fixture_suite

FIX = "flow-tables"
C = "src/stash/config.py"
SW = "src/stash/switches.py"
K = "src/stash/cache.py"
T = "tests/test_tables.py::"

EXPECTED = [
    # ... and after the module bound a new dict, a setitem on the old one (imported before) leaves
    # the new one as it is
    Expect("setitem-other-entry", "HT102", C, 'with open(folder + "/" + name, "w")',
           tests=[T + "test_save_other_entry_set", T + "test_save_plain",
                  T + "test_save_after_the_module_bound_a_new_dict"]),
    Expect("module-binds-a-new-dict", "HT303", "tests/test_tables.py", "    config.reset()",
           tests=[T + "test_save_after_the_module_bound_a_new_dict"]),
    Expect("literal-true-condition", "HT102", SW, 'open("/var/log/stash-audit.log", "a")',
           tests=[T + "test_trace"], origin="literal"),
    Expect("dict-constant-redirected-by-every-test", "HT201", K, "SETTINGS = {", tests=[]),
    Expect("literal-entry-of-the-dict", "HT102", K, 'return os.path.exists(SETTINGS["index"])',
           tests=["tests/test_cache.py::test_index"], origin="module-constant"),
    # a URL template of a dict the settings hold: read as a path here, but not a path HT201 is about
    Expect("url-entry-of-the-dict", "HT102", K, "return os.path.isdir(target)",
           tests=["tests/test_cache.py::test_mirror"], origin="module-constant"),
]

SILENT = [
    Silent("literal-false-condition", SW, 'open("/var/log/stash-trace.log", "a")', "under `if False:`"),
]

findings, test_reported, test_silent, test_nothing_else = fixture_suite(FIX, EXPECTED, SILENT)
