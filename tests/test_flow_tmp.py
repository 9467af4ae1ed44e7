"""A test's own tmp_path holds what the test made there and nothing else (analyse/tmptree.py),
fixture flow-tmp.

Every finding lists the tests that reach it; the near misses are the tests left out because
what they made (or did not make) in tmp_path decides the branch: a folder made, a file written,
a folder never made or removed again. A program run over tmp_path, or a way the test's values
do not decide, leaves what is there unknown, so those tests stay listed.

A lookup up the folders of a path (``for base in (arg, *arg.parents)``) takes them in order,
nearest first, then the folders above tmp_path, which the test did not make: setup.py in
tmp_path ends it (near miss: none there, so the starting folder is listed). What a config file
reads into with ``dict(...)`` is never None, and ``os.path.commonpath`` of two paths in
tmp_path is the folder they share. What the test wrote there as a literal is read back
(``contents``): a report file holding ``{}`` is refused before the listing (near misses: one with
findings, and one whose text ``json.dumps`` made). ``lower()`` of
such a path's text ends as the path does, so its suffix decides ``endswith`` (near miss: an
archive's upper-case suffix). The text of a
path in tmp_path is in no dict of other keys and splits on no colon, and a relative path
inside a block that runs in such a folder is a path there (near miss: a template with hooks). An ini file
the test wrote (or touched) is what ``iniconfig.IniConfig`` reads, a toml text what
``tomllib.loads`` reads, and two paths in tmp_path compare by their parts (near misses: an
empty ini file, another tool's table, a sibling folder). The parent of tmp_path is pytest's base
temporary folder for the run; the folder above it is none of the test's (near misses: tmp_path's
parent, two folders above a folder in tmp_path).
"""
import dataclasses

from hermetic.analyse.tmptree import (UNKNOWN_TREE, answer, child, made, maybe, parents, removed, root_atom, same,
                                      str_answer)
from hermetic.analyse.values import PREFIX, V
from helpers import Expect, fixture_suite

FIX = "flow-tmp"
C = "src/scratch/config.py"
T = "tests/test_config.py::"
R = "src/scratch/rootdir.py"
TR = "tests/test_rootdir.py::"
RP = "src/scratch/report.py"
TP = "tests/test_report.py::"
AR = "src/scratch/archive.py"
HK = "src/scratch/hooks.py"
OP = "src/scratch/options.py"
TO = "tests/test_options.py::"

EXPECTED = [
    # the working directory: only where the named folder was never made (or a program made what is there)
    Expect("cwd-fallback", "HT102", C, "if ini.is_file():",
           tests=[T + "test_settings_folder_from_a_tool", T + "test_settings_folder_missing"]),
    Expect("cwd-read", "HT102", C, "return ini.read_text()",
           tests=[T + "test_settings_folder_from_a_tool", T + "test_settings_folder_missing"]),
    # not test_settings_file_given: the app.ini it wrote is there
    Expect("variable-without-file", "HT103", C, 'return os.environ.get("APP_SETTINGS", "")',
           tests=[T + "test_settings_given", T + "test_settings_folder_from_a_tool",
                  T + "test_settings_folder_missing"]),   # the folder's two tests may (listed, counted)
    # not test_cache_made; test_cache_removed removed the folder it made; test_cache_maybe's row without it
    Expect("folder-not-made", "HT103", C, 'return os.environ.get("APP_CACHE_HOME")',
           tests=[T + "test_cache_maybe", T + "test_cache_missing", T + "test_cache_removed"]),
    # not test_setup_root_found (setup.py in tmp_path), test_config_root_found (a dict is not
    # None), test_shared_root_of_two_paths (tmp_path exists)
    # above pytest's base temporary folder (tmp_path's parent, the run's) is the machine's (a new
    # user's trial on pydantic-settings: a pyproject.toml looked up above tmp_path); near misses:
    # tmp_path's parent, two folders above a folder in tmp_path
    Expect("above-tmp-path", "HT102", R, 'return (folder.parent.parent / "shared.cfg").is_file()',
           tests=[TR + "test_two_folders_above_tmp_path"], origin="literal"),
    Expect("starting-folder-after-the-parents", "HT102", R, "no folder holds setup.py",
           tests=[TR + "test_setup_root_not_made"]),
    # not test_folder_template: the lower-cased text of its path ends as the path does
    # not test_fetch_folder: no repository pattern matches a text that starts with the separator
    Expect("repository-cloned", "HT106", AR, 'subprocess.run(["git", "clone", template])',
           tests=["tests/test_archive.py::test_fetch_repository"]),
    Expect("suffix-of-a-lowered-path", "HT102", AR, 'os.listdir(".")',
           tests=["tests/test_archive.py::test_archive_template"]),
    # not test_cached_archive_reused: shutil.copy to a path with no folder there makes a file at
    # it, and making the cache folder again (exist_ok, in a try) keeps what is in it
    Expect("archive-fetched-when-not-cached", "HT105", "src/scratch/downloads.py",
           "return requests.get(url, timeout=10).content",
           tests=["tests/test_downloads.py::test_archive_fetched",
                  "tests/test_downloads.py::test_archive_copied_into_the_cache"]),   # the copied cache's may
    # not test_template_without_hooks: the text of its tmp_path folder is no abbreviation (``in``,
    # ``partition``), and "hooks" inside it is a path in tmp_path the test never made
    Expect("hooks-of-a-template-in-tmp-path", "HT106", HK, 'subprocess.run(["sh", "hooks/pre.sh"])',
           tests=["tests/test_hooks.py::test_template_with_hooks"]),
    # an ini / toml file the test wrote is read back as data (an empty one it touched too)
    Expect("ini-without-the-section", "HT103", OP, 'return os.environ.get("APP_INI_OPTIONS")',
           tests=[TO + "test_ini_empty"]),
    Expect("toml-without-the-table", "HT103", OP, 'return os.environ.get("APP_TOML_OPTIONS")',
           tests=[TO + "test_toml_without_table"]),
    # paths in tmp_path compared: equal, or one among another's parents, only where their parts say so
    Expect("outside-the-top-folder", "HT102", OP, 'return os.listdir(".")', tests=[TO + "test_outside"]),
    Expect("lists-of-paths-compared", "HT103", OP, 'return os.environ.get("APP_SEVERAL")',
           tests=[TO + "test_several_folders"]),
    Expect("read-back-what-the-test-wrote", "HT102", RP, 'return os.listdir(".")',
           tests=[TP + "test_report_with_findings", TP + "test_report_written_by_json_dumps"]),   # the second may
    # not test_save_in_tmp: `path.strip()` of the tmp_path folder it set is not blank
    Expect("blank-variable-home-folder-made", "HT102", "src/scratch/datadirs.py", "os.makedirs(folder, exist_ok=True)",
           tests=["tests/test_datadirs.py::test_save_with_a_blank_variable"]),
    Expect("blank-variable-home-folder-written", "HT102", "src/scratch/datadirs.py", "with open(os.path.join(folder, name)",
           tests=["tests/test_datadirs.py::test_save_with_a_blank_variable"]),
]

findings, test_reported, test_silent, test_nothing_else = fixture_suite(FIX, EXPECTED, [])


def _part(a):
    return a.value[len("tmp "):]


def test_a_join_with_literals_names_the_part_and_climbs_no_higher():
    root = root_atom("tmp_path")
    assert _part(child(root, ["a", "b.ini"])) == "a/b.ini"
    assert _part(child(child(root, ["a"]), ["..", "c"])) == "c"
    assert child(root, [".."]) is None and child(root, ["/etc"]) is None
    assert root_atom("tmpdir").value is None   # only tmp_path is followed


def test_the_tree_answers_what_was_made_and_nothing_else():
    tree = made((), "a/b.ini", "file")
    assert answer(tree, "is_dir", ["a"]) is True and answer(tree, "is_file", ["a/b.ini"]) is True
    assert answer(tree, "exists", ["a/c"]) is False and answer(tree, "exists", ["a/b.ini/x"]) is False
    assert answer(tree, "exists", ["a", "x"]) is None   # the values answer differently
    assert answer(removed(tree, "a"), "exists", ["a/b.ini"]) is False
    assert answer(maybe(tree, "a"), "exists", ["a/b.ini"]) is None
    assert answer(made(maybe((), "a"), "a/x", "file"), "exists", ["a/x"]) is None
    assert answer(UNKNOWN_TREE, "exists", ["a"]) is None
    assert answer(tree, "stat", ["a"]) is None   # not an existence question


def test_the_text_of_a_path_in_tmp_path():
    assert str_answer("startswith", ["a"], "-") is False
    assert str_answer("startswith", ["a"], "/") is None   # the folder's own text is not known
    assert str_answer("split", ["a"], "::") == "same" and str_answer("find", ["a"], "::") == -1
    assert str_answer("split", ["a::b"], "::") is None and str_answer("split", ["a"], "-") is None
    assert str_answer("endswith", ["a/b.ini"], ".ini") is True


def test_the_folders_above_a_path_in_order():
    root = root_atom("tmp_path")
    seq = parents(child(root, ["a", "b"]))
    assert seq[3] == PREFIX and [_part(next(iter(v.atoms))) if next(iter(v.atoms)).value else None
                                 for v in seq[2]] == ["a", "", None]   # then the folders above
    assert [v.is_path for v in seq[2]] == [True, True, True]
    assert parents(root)[2][0].atoms == frozenset([dataclasses.replace(root, value=None)])


def test_the_folder_two_paths_share():
    root = root_atom("tmp_path")
    both = V(frozenset([("seq", "list", (V(frozenset([child(root, ["a", "x"])])),
                                         V(frozenset([child(root, ["a", "y", "z"])]))))]))
    assert _part(next(iter(same("os.path.commonpath", [both]).atoms))) == "a"
    assert same("os.path.commonpath", [V(frozenset([("seq", "list", ())]))]) is None


def test_the_texts_a_test_wrote():
    """What is kept and forgotten (json.loads of a kept text: the report.py fixture above)."""
    from hermetic.analyse.contents import forget, remember
    from hermetic.analyse.state import Ctx
    from hermetic.analyse.tmptree import LOOKUPS, handed

    texts = remember(remember((), "a/r.json", "{}"), "b.txt", "x")
    assert forget(texts, ["a"]) == (("b.txt", "x"),) and forget(texts, None) == ()
    assert forget(texts, [""]) == ()   # a change at the folder itself
    assert remember((), "big.txt", "x" * 5000) == ()   # too long to keep
    ctx = Ctx()
    ctx.tmp_tree = (("a", "dir"),)
    handed(ctx, [V(frozenset([child(root_atom("tmp_path"), ["a"])]))], {}, ".get")
    assert ctx.tmp_tree == (("a", "dir"),) and ".get" in LOOKUPS   # a lookup writes nothing
    handed(ctx, [V(frozenset([child(root_atom("tmp_path"), ["a"])]))], {}, ".save")
    assert ctx.tmp_tree == UNKNOWN_TREE
