"""Listing a shipped folder, a parametrized fixture's runs, ``os.path.splitext`` (fixture flow-listing).

``os.listdir`` of a folder the checkout ships gives the names discovery found there
(``Shipped.listing``), so a loop that looks for a hook by name finds none in a template that
ships none (near miss: a template with the hook; a folder holding one discovery did not walk,
whose listing is not known), also named by its absolute path (``Path("tests/t").resolve()``,
joined with more parts, or the working directory inside it), whose text ends with the folder's
name (``.lower().endswith(".zip")``; near miss: an archive). ``name in os.listdir(folder)`` is
decided on the new list the call made. A fixture with ``params`` runs the test once per param, so each
run's template decides its own way (``fixtures.fixture_runs``). ``a and b and not c`` of bools
known is known. ``os.path.splitext`` of a literal splits it, so a replay file named by the test
is read back (near miss: a replay that names a remote).
"""
from hermetic.analyse.expressions import _whole_texts
from hermetic.analyse.origins import _whole_join, made_absolute, split_path
from hermetic.analyse.rooted import ends_with, known_ends
from hermetic.analyse.shipped import LEFT_OUT, Shipped
from hermetic.analyse.values import Origin, of
from helpers import Expect, Silent, fixture_suite

FIX = "flow-listing"
H = "src/scaffold/hooks.py"
T = "tests/test_hooks.py::"

EXPECTED = [
    # not test_hooks_but_a_windows_only_row (its pre_gen row's skipif skips it here) nor
    # test_hooks_of_skipped_rows_only (every row skipped: the test never runs);
    # not test_pre_hooks_of_templates_without_one (nor test_one_hook_of_templates_without_it, whose
    # one parametrize row joins each of the fixture's runs): neither "plain" nor "post" ships pre_gen; not
    # test_pre_hooks_of_a_template_made_absolute: "post" by its absolute path; the archive's
    # unpacking may have made anything
    Expect("hook-run", "HT106", H, 'subprocess.run(["sh", script])',
           tests=[T + "test_each_hook_of_each_template", T + "test_hooks_of_an_archive_made_absolute",
                  T + "test_pre_hooks_of_a_folder_not_walked_whole",
                  T + "test_pre_hooks_of_a_template_with_one",
                  T + "test_pre_hooks_of_a_template_with_one_made_absolute"]),
    # only the archive: a folder made absolute ends with its own name
    Expect("archive-unpacked", "HT106", H, 'subprocess.run(["unzip", template])',
           tests=[T + "test_hooks_of_an_archive_made_absolute"]),
    # not test_prompt_of_a_template_made_absolute: asked from inside "post" (``work_in`` of its
    # absolute path), whose hooks hold no pre_prompt.sh (`in os.listdir(...)`)
    Expect("prompt-run", "HT106", H, 'subprocess.run(["sh", os.path.join(template, "hooks", "pre_prompt.sh")])',
           tests=[T + "test_prompt_of_a_template_that_asks"]),
    # not test_nothing_generated: a name the checkout does not hold at its root (not hidden) is
    # missing while the run made nothing there
    Expect("generated-removed", "HT102", "tests/test_hooks.py", 'shutil.rmtree("generated-project")',
           tests=[T + "test_project_generated"]),
    Expect("generated-made", "HT102", "tests/test_hooks.py", 'os.makedirs("generated-project/src")',
           tests=[T + "test_project_generated"]),
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
    # at the root: a name discovery did not see is missing while the run made nothing there;
    # a hidden one (tools leave .pytest_cache, .coverage) or one it left out is not known
    shipped = Shipped(tmp_path, {"t": "dir", "build": LEFT_OUT})
    assert shipped.answer("isdir", "generated", missing=True) is False
    assert shipped.answer("isdir", "generated", missing=False) is None
    assert shipped.answer("exists", ".coverage", missing=True) is None
    assert shipped.answer("isdir", "build", missing=True) is None


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


def _resolved(text):
    inner = Origin("literal", expr=repr(text), path="tests/test_x.py", line=1, value=text, in_test=True)
    return of(Origin("cwd", expr=f"resolve({inner.expr})", path="tests/test_x.py", line=1, inner=(inner,)))


def test_a_path_made_absolute_keeps_what_is_joined_to_it():
    joined = _whole_join([_resolved("tests/t/"), _lit("hooks"), _lit("a.sh")], False)
    (a,) = joined.atoms
    assert a.kind == "cwd" and a.inner[0].value == "tests/t/hooks/a.sh" and a.expr == "resolve('tests/t/hooks/a.sh')"
    assert made_absolute(joined) is not None
    assert _whole_join([_resolved("tests/t"), _lit("../../../x")], False) is None   # climbs out
    assert _whole_join([_resolved("tests/t"), _lit("/etc")], False) is None      # an absolute part
    assert made_absolute(of(Origin("cwd", expr="getcwd()", value="."))) is None   # the directory itself


def test_a_path_made_absolute_ends_with_its_literal():
    ends = known_ends(_resolved("tests/t.zip"))
    assert ends == ["/tests/t.zip"]
    assert ends_with(ends, ".zip") is True and ends_with(ends, ".tar") is False
    assert ends_with(ends, "/tests/t.zip") is True
    assert ends_with(ends, "x/tests/t.zip") is None   # longer than what is known: the folder above decides
    assert ends_with(ends, "x/other.zip") is False
    assert known_ends(_lit("tests/t")) is None
