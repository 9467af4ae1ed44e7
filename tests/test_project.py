"""Discovery (hermetic.discover.project): which files are analysed, under which module names, and which
are tests, conftests and test-tree helpers, as pytest's default import mode names them."""
from pathlib import Path, PurePosixPath

from hypothesis import given, settings
from hypothesis import strategies as st

from hermetic.discover import project as PJ
from hermetic.config import Config, PytestConfig


def _tree(root: Path, rels):
    for rel in rels:
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("", encoding="utf-8")
    return root


def _names(root: Path, pytest_cfg: PytestConfig = None):
    proj = PJ.discover(root, Config(), pytest_cfg or PytestConfig())
    return {sf.rel: (sf.module, sf.aliases, sf.is_test, sf.is_conftest, sf.in_test_tree) for sf in proj.files}


def test_module_names_follow_the_basedir_the_src_root_and_the_project_root(tmp_path):
    root = _tree(tmp_path / "p", [
        "src/app/__init__.py", "src/app/io.py", "src/app/sub/__init__.py", "src/app/sub/deep.py",
        "src/loose.py",
        "tests/conftest.py", "tests/test_io.py", "tests/helpers.py",
        "tests/unit/conftest.py", "tests/unit/test_io.py",
        "pkg/__init__.py", "pkg/tests/__init__.py", "pkg/tests/test_pkg.py",
        "scripts/my-tool.py", ".hidden/skip.py", "build/skip.py",
    ])
    names = _names(root)
    assert names["src/app/io.py"] == ("app.io", ["src.app.io"], False, False, False)
    assert names["src/app/sub/deep.py"][0] == "app.sub.deep"
    assert names["src/app/__init__.py"][0] == "app"
    assert names["src/loose.py"][0] == "loose"
    # a test folder without __init__.py is its files' basedir
    assert names["tests/test_io.py"] == ("test_io", ["tests.test_io"], True, False, True)
    assert names["tests/helpers.py"][4] is True   # beside the tests: test tree
    # the second test_io.py takes a name of its own; each conftest is named by its path
    assert names["tests/unit/test_io.py"][0] == "tests.unit.test_io"
    assert names["tests/conftest.py"][0] == "tests.conftest" and names["tests/conftest.py"][3] is True
    assert names["tests/unit/conftest.py"][0] == "tests.unit.conftest"
    # a package's tests are named from the first folder above without __init__.py
    assert names["pkg/tests/test_pkg.py"][0] == "pkg.tests.test_pkg"
    # not an identifier: named after its stem only where that is one
    assert "scripts/my-tool.py" not in names or names["scripts/my-tool.py"][0] != "scripts.my-tool"
    assert ".hidden/skip.py" not in names and "build/skip.py" not in names


def test_pythonpath_entries_are_import_roots_and_norecursedirs_are_no_tests(tmp_path):
    root = _tree(tmp_path / "p", ["lib/tool/__init__.py", "lib/tool/run.py", "vendor/test_vendored.py",
                                  "tests/test_run.py"])
    cfg = PytestConfig(pythonpath=["lib"], norecursedirs=["vendor"], testpaths=["tests"])
    names = _names(root, cfg)
    assert names["lib/tool/run.py"][0] == "tool.run"
    assert names["vendor/test_vendored.py"][2] is False
    assert names["tests/test_run.py"][2] is True


_PART = st.text(alphabet="abc_.-1", min_size=1, max_size=4).filter(lambda s: s not in (".", ".."))


@settings(deadline=None)
@given(st.lists(_PART, min_size=0, max_size=4), st.lists(_PART, min_size=1, max_size=4),
       st.sampled_from(["x.py", "__init__.py", "a.b.py", ".py", "test_1.py"]))
def test_path_helpers_agree_with_pathlib(base_parts, rest, name):
    # _is_under and _dotted compare path parts instead of calling relative_to: the same answers
    base = PurePosixPath("/r", *base_parts)
    inside = Path(base, *rest, name)
    elsewhere = Path("/r", *rest, name)
    sibling = Path(base.with_name(base.name + rest[0]), name)   # /r/a/x.py against /r/ab/x.py
    for p in (inside, elsewhere, sibling):
        try:
            rel = PurePosixPath(p).relative_to(base)
            under = True
        except ValueError:
            under = False
        assert PJ._is_under(p, Path(base)) is under
        if under:
            parts = list(rel.with_suffix("").parts) if rel.name != ".py" else list(rel.parts)
            if parts and parts[-1] == "__init__":
                parts = parts[:-1]
            want = ".".join(parts) if parts and all(x.isidentifier() for x in parts) else None
            assert PJ._dotted(p, Path(base)) == want


def test_a_test_module_named_like_no_identifier_is_still_a_test(tmp_path):
    # pytest collects "test_a b.py" and "test_a-b.py" (it imports them by path); a helper module
    # of that name cannot be imported by anything and stays out
    root = _tree(tmp_path / "p", ["tests/test_a b.py", "tests/test_a-b.py", "tests/my-helper.py",
                                  "tests/test_a.b.py"])
    names = _names(root)
    assert names["tests/test_a b.py"][2] is True and names["tests/test_a-b.py"][2] is True
    assert names["tests/test_a b.py"][0] != names["tests/test_a-b.py"][0]
    assert "tests/my-helper.py" not in names and "tests/test_a.b.py" not in names


def test_a_module_named_like_a_test_outside_testpaths_is_code_under_test(tmp_path):
    # pytest collects python_files under testpaths (or the targets given), so src/app/ab_test.py
    # (an A/B-testing module) is code the tests call, whose I/O is reported, not a test module
    root = _tree(tmp_path / "p", ["src/app/__init__.py", "src/app/ab_test.py", "tests/test_ab.py"])
    cfg = PytestConfig(testpaths=["tests"])
    names = _names(root, cfg)
    assert names["src/app/ab_test.py"][2] is False and names["src/app/ab_test.py"][4] is False
    assert names["tests/test_ab.py"][2] is True
    assert _names(root)["src/app/ab_test.py"][2] is True   # no testpaths: collected everywhere
    proj = PJ.discover(root, Config(), cfg, [root / "src" / "app" / "ab_test.py"])   # named as a target
    assert {sf.rel: sf.is_test for sf in proj.files}["src/app/ab_test.py"] is True
    cfg_missing = PytestConfig(testpaths=["nowhere"])   # matches nothing: everywhere, as pytest
    assert _names(root, cfg_missing)["src/app/ab_test.py"][2] is True


def test_a_file_named_as_a_target_is_a_test_module_whatever_its_name(tmp_path):
    # pytest collects a file given on its command line even where python_files does not match
    # it (aiosqlite's tests/smoke.py; a new user's trial): so does hermetic
    root = _tree(tmp_path / "p", ["pkg/__init__.py", "pkg/tests/__init__.py", "pkg/tests/smoke.py"])
    named = PJ.discover(root, Config(), PytestConfig(), [root / "pkg" / "tests" / "smoke.py"])
    assert {sf.rel: sf.is_test for sf in named.files}["pkg/tests/smoke.py"] is True
    assert _names(root)["pkg/tests/smoke.py"][2] is False   # near miss: the folder checked whole
