"""Listing a shipped folder, a parametrized fixture's runs, ``os.path.splitext`` (fixture flow-listing).

``os.listdir`` of a folder the checkout ships gives the names discovery found there
(``Shipped.listing``), so a loop that looks for a hook by name finds none in a template that
ships none (near miss: a template with the hook; a folder holding one discovery did not walk,
whose listing is not known). A fixture with ``params`` runs the test once per param, so each
run's template decides its own way (``fixtures.fixture_runs``). ``a and b and not c`` of bools
known is known. ``os.path.splitext`` of a literal splits it, so a replay file named by the test
is read back (near miss: a replay that names a remote).
"""
from hermetic.analyse.expressions import _whole_texts
from hermetic.analyse.origins import split_path
from hermetic.analyse.shipped import LEFT_OUT, Shipped
from hermetic.analyse.values import Origin, of
from helpers import Expect, Silent, fixture_suite

FIX = "flow-listing"
H = "src/scaffold/hooks.py"
T = "tests/test_hooks.py::"

EXPECTED = [
    # not test_pre_hooks_of_templates_without_one: neither "plain" nor "post" ships pre_gen
    Expect("hook-run", "HT106", H, 'subprocess.run(["sh", script])',
           tests=[T + "test_pre_hooks_of_a_folder_not_walked_whole", T + "test_pre_hooks_of_a_template_with_one"]),
    # not test_local_replay: its file names no remote
    Expect("remote-cloned", "HT106", H, 'subprocess.run(["git", "clone"', tests=[T + "test_remote_replay"]),
]

SILENT = [
    # reads of what the checkout ships (contract row T1)
    Silent("hooks-folder-asked", H, "if not os.path.isdir(folder):"),
    Silent("hooks-folder-listed", H, "for name in os.listdir(folder):"),
    Silent("replay-read", H, 'with open(os.path.join(folder, name + ".json")'),
]

findings, test_reported, test_silent, test_nothing_else = fixture_suite(FIX, EXPECTED, SILENT)


def _lit(x, in_test=True):
    # not values.lit(), which interns into a module cache (HT303 on our own suite)
    return of(Origin("literal", expr=repr(x), path="tests/test_x.py", line=1, value=x, in_test=in_test))


def test_a_shipped_folder_lists_what_discovery_found(tmp_path):
    shipped = Shipped(tmp_path, {"t": "dir", "t/hooks": "dir", "t/hooks/b.sh": "file", "t/hooks/a.sh": "file",
                                 "u": "dir", "u/.cache": LEFT_OUT, "u/x.sh": "file", "top.txt": "file"})
    assert shipped.listing("t/hooks") == ["a.sh", "b.sh"]
    assert shipped.listing("t") == ["hooks"]
    assert shipped.listing("u") is None              # holds a folder not walked: not known whole
    assert shipped.listing("") is None               # the root gathers what runs leave
    assert shipped.listing("t/hooks/a.sh") is None   # a file
    assert shipped.listing("missing") is None
    # a folder left out is not answered as anything
    assert shipped.kind("u/.cache") is None and shipped.answer("isdir", "u/.cache") is None


def test_splitext_of_a_literal_splits_it():
    (pair,) = split_path("os.path.splitext", [_lit("tests/replays/local.json")]).atoms
    root, ext = (next(iter(x.atoms)).value for x in pair[2])
    assert (root, ext) == ("tests/replays/local", ".json")
    (pair,) = split_path("os.path.split", [_lit("tests/replays/local")]).atoms
    assert [next(iter(x.atoms)).value for x in pair[2]] == ["tests/replays", "local"]
    # a value not known as one literal: the root keeps its origins, the extension is not known
    (pair,) = split_path("os.path.splitext", [of(Origin("unknown"))]).atoms
    assert next(iter(pair[2][1].atoms)).kind == "unknown"


def test_an_fstring_over_a_few_known_values_is_each_text():
    parts = [("lit", "tests/"), ("name", "p")]
    assert _whole_texts(parts, [None, _lit("a") | _lit("b")]) == ["tests/a", "tests/b"]
    assert _whole_texts(parts, [None, of(Origin("unknown"))]) is None
    many = _lit(0)
    for i in range(1, 9):
        many = many | _lit(i)
    assert _whole_texts(parts, [None, many]) is None   # more than 8 texts: not each
