"""What a test's run removed from the file system decides a later existence check (fsmodel)."""
from hermetic.analyse.fsmodel import after_removal, after_write, cwd_moved, fs_key, gone
from hermetic.analyse.state import Ctx
from hermetic.analyse.values import Origin, V, of


def _lit(text):
    return of(Origin("literal", expr=repr(text), value=text))


def test_a_path_under_a_removed_folder_is_gone_until_written_again():
    ctx = Ctx()
    after_removal(ctx, fs_key(_lit("tests/test-hooks/"), False))
    assert gone(ctx, "tests/test-hooks/input/python_pre.txt")
    assert gone(ctx, "tests/test-hooks")
    assert not gone(ctx, "tests/test-hooks.lock") and not gone(ctx, "tests")
    after_write(ctx, "tests/test-hooks/input")
    assert not gone(ctx, "tests/test-hooks/input/python_pre.txt")   # inside what was made again
    assert gone(ctx, "tests/test-hooks/other.txt")
    after_removal(ctx, "tests/test-hooks")   # removed again: what was made there is gone too
    assert gone(ctx, "tests/test-hooks/input/python_pre.txt")


def test_a_write_the_analysis_cannot_place_forgets_everything():
    ctx = Ctx()
    after_removal(ctx, "build")
    after_write(ctx, None)
    assert not gone(ctx, "build/x")


def test_only_a_path_known_as_text_is_kept():
    assert fs_key(_lit("a/./b/"), False) == "a/b"
    assert fs_key(of(Origin("cwd", expr="abspath('a')", inner=(Origin("literal", expr="'a'", value="a"),))),
                  False) == "a"
    assert fs_key(_lit("a/b"), True) is None            # relative, after the test changed directory
    assert fs_key(_lit("/srv/a"), True) == "/srv/a"     # absolute: wherever the test is
    assert fs_key(of(Origin("test-value", expr="tmp_path")), False) is None
    assert fs_key(of(Origin("literal", expr="tempfile.gettempdir()", value="/tmp")), False) is None
    assert fs_key(_lit("a") | _lit("b"), False) is None
    partial = Origin("module-constant", expr="SCRATCH", partial=True, inner=(Origin("literal", expr="'scratch'",
                                                                                     value="scratch"),))
    assert fs_key(of(partial), False) is None           # SCRATCH + suffix: more than its text
    assert fs_key(V(), False) is None


def test_the_working_directory_put_back_is_the_one_the_tests_start_in():
    from hermetic.analyse.origins import START_CWD, _climb, _head
    ctx = Ctx()
    start = of(Origin("cwd", expr="getcwd()", value=START_CWD))
    assert not cwd_moved(ctx)
    ctx.cwd = start                                         # os.chdir(saved) after saved = os.getcwd()
    assert not cwd_moved(ctx)
    ctx.cwd = _head(start)                                  # os.path.join(os.getcwd(), "pkg")
    assert cwd_moved(ctx)
    ctx.cwd = of(_climb(next(iter(start.atoms)), 1))        # os.path.dirname(os.getcwd())
    assert cwd_moved(ctx)
    ctx.cwd = of(Origin("test-value", expr="tmp_path"))     # monkeypatch.chdir(tmp_path)
    assert cwd_moved(ctx)


def test_the_catalogue_says_which_writes_make_a_path_other_than_their_target():
    from hermetic.catalogue.loader import load
    cat = load()
    assert cat.path_methods["rename"].elsewhere and cat.path_methods["replace"].elsewhere   # target: the source
    assert cat.lookup("shutil.make_archive").elsewhere                                       # adds a suffix
    assert not cat.lookup("shutil.copy").elsewhere and not cat.lookup("os.rename").elsewhere  # target: dst
    assert cat.lookup("shutil.rmtree").removes and not cat.path_methods["mkdir"].removes
