"""Entries of a module's settings dict replaced by monkeypatch.setitem (contract S1, V3), and
blocks a literal condition switches off (section 1), fixture flow-tables.

``monkeypatch.setitem(config.DEFAULTS, "store_dir", str(tmp_path))`` changes the dict the code
reads at call time, through the module or a name imported from it: the write lands in tmp_path.
Setting another entry leaves the store folder where it was (the near miss). ``if False:`` never
runs; ``if 1:`` always does.
"""
from helpers import Expect, Silent, fixture_suite

FIX = "flow-tables"
C = "src/stash/config.py"
SW = "src/stash/switches.py"
T = "tests/test_tables.py::"

EXPECTED = [
    Expect("setitem-other-entry", "HT102", C, 'with open(folder + "/" + name, "w")',
           tests=[T + "test_save_other_entry_set", T + "test_save_plain"], origin="module-constant"),
    Expect("literal-true-condition", "HT102", SW, 'open("/var/log/stash-audit.log", "a")',
           tests=[T + "test_trace"], origin="literal"),
]

SILENT = [
    Silent("literal-false-condition", SW, 'open("/var/log/stash-trace.log", "a")', "under `if False:`"),
]

findings, test_reported, test_silent, test_nothing_else = fixture_suite(FIX, EXPECTED, SILENT)
