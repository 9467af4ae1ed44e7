"""Value flow through expressions and calls (contract section 3), fixture flow-values.

Each writer in values.py moves its folder through one form before writing. For each form one
test passes tmp_path (controlled: never listed) and one passes settings.OUT_DIR (listed).
A ``@contextmanager`` block runs in the shared state its generator left at the yield (hooks.py).
"""
import pytest

from helpers import Expect, Silent, assert_nothing_else, assert_reported, assert_silent, params

FIX = "flow-values"
V = "src/flows/values.py"
T = "tests/test_values.py::"

FORMS = [
    # (form, snippet of the sink line, test name stem)
    ("assignment", "target.write_text(text)", "assigned"),
    ("default-argument", '(folder / "default.txt").write_text', "default"),
    ("return-value", "_returned_path(folder).write_text", "returned"),
    ("or", '"or.txt").write_text', "or"),
    ("conditional-expression", '(base / "conditional.txt").write_text', "conditional"),
    ("f-string", 'open(f"{folder}/fstring.txt"', "fstring"),
    ("str-and-os-path-join", 'open(os.path.join(str(folder), "joined.txt")', "str_join"),
    ("fspath-Path-joinpath", 'Path(os.fspath(folder)).joinpath("fspath.txt")', "fspath"),
    ("with_name", 'path.with_name("sibling.txt")', "sibling"),
    ("parent-and-slash", '(path.parent / "parent.txt")', "parent"),
    ("str-format", '"{}/format.txt".format(folder)', "format"),
    ("percent-format", '"%s/percent.txt" % folder', "percent"),
    ("functools-partial", "(Path(folder) / name).write_text(text)", "partial"),
    ("decorator-returning-function", '(Path(folder) / "decorated.txt").write_text', "decorated"),
    ("os-path-split-head", 'with open(os.path.join(head, "split.txt"), "w")', "split"),
    ("attribute-of-a-library-object", '(Path(holder.folder) / "held.txt").write_text', "held"),
]

# test_assigned_twice reaches the assignment writer once with tmp_path and once with the constant:
# controlled only if every way it reaches the sink is (section 2), so it is listed too.
EXTRA = {"assigned": [T + "test_assigned_twice"]}

EXPECTED = [Expect(form, "HT102", V, snippet, tests=[T + f"test_{stem}_server"] + EXTRA.get(stem, []),
                   origin="module-constant")
            for form, snippet, stem in FORMS]

# conditions over strings (docs/limits.md): a string built from parts decides no equality; whole
# literals decide ==, in, startswith and endswith, and the branch not taken is not followed
B = "src/flows/branches.py"
EXPECTED += [
    Expect("built-name-equality", "HT102", B, '"built-name.txt").write_text', tests=[T + "test_built_name"],
           origin="module-constant"),
    Expect("fstring-name-inequality", "HT102", B, '"fstring-name.txt").write_text',
           tests=[T + "test_fstring_name"], origin="module-constant"),
    Expect("endswith-not-taken", "HT102", B, 'with open(target, "w")', tests=[T + "test_unpack_tar"],
           origin="module-constant"),
]

# a @contextmanager's block runs in the shared state of its yield: a reader installed before
# the yield and put back in a finally holds in the block, one set after the yield does not
H = "src/flows/hooks.py"
EXPECTED += [
    Expect("context-manager-block-sees-the-yield-state", "HT102", H, 'with open("/etc/flows.conf") as fh:',
           tests=[T.replace("test_values", "test_hooks") + "test_announced_reader",
                  T.replace("test_values", "test_hooks") + "test_reader_after_the_block"], origin="literal"),
]

SILENT = [
    Silent("resolve-with_suffix-on-tmp", V, 'path.resolve().with_suffix(".bak")', "only reached with tmp_path"),
    Silent("default-argument-line", V, "def save_default(text, folder=settings.OUT_DIR)",
           "a default naming a constant is a flow step, not a sink"),
    Silent("returned-path-line", V, 'return Path(folder) / "returned.txt"', "building a path is value flow"),
    Silent("partial-binding", V, "save = functools.partial(_write_into, folder)", "binding a partial is value flow"),
    Silent("settings-literal", "src/flows/settings.py", "OUT_DIR = Path(", "literal path constant: not HT201"),
    Silent("in-tuple-decided", B, 'open(settings.OUT_DIR / "other.log"', "'daily' is in the tuple: not reached"),
    Silent("startswith-known-prefix", B, 'open(settings.OUT_DIR / "insecure.log"',
           "a URL built on 'https://' does not start with 'http://'"),
]


@pytest.fixture(scope="module")
def findings(checked):
    return checked(FIX)


@pytest.mark.parametrize("exp", params(EXPECTED))
def test_server_value_reported(findings, exp):
    assert_reported(FIX, findings, exp)


@pytest.mark.parametrize("form, snippet, stem", FORMS, ids=[f[0] for f in FORMS])
def test_tmp_path_value_not_listed(findings, form, snippet, stem):
    from helpers import listed_at
    assert T + f"test_{stem}_scratch" not in listed_at(FIX, findings, "HT102", V, snippet)


@pytest.mark.parametrize("near", params(SILENT))
def test_silent(findings, near):
    assert_silent(FIX, findings, near)


def test_nothing_else(findings):
    assert_nothing_else(FIX, findings, EXPECTED)


def test_builtins_reached_through_dunder_builtins(tmp_path, monkeypatch):
    """``getattr(__builtins__, "open")`` and ``__builtins__["open"]`` are the builtin ``open``:
    reported like a plain ``open``, controlled like it by a patch of ``builtins.open``."""
    from hermetic.api import run_check

    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_b.py").write_text('''import builtins


def test_getattr():
    getattr(__builtins__, "open")("/srv/a", "w")


def test_subscript():
    __builtins__["open"]("/srv/b", "w")


def test_patched(monkeypatch):
    monkeypatch.setattr(builtins, "open", lambda *a: None)
    __builtins__["open"]("/srv/c", "w")
    getattr(__builtins__, "open")("/srv/d", "w")


def test_shadowed():
    __builtins__ = {"open": lambda *a: None}
    __builtins__["open"]("/srv/e", "w")
''', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    report, _ = run_check([], tmp_path)
    assert sorted((f.code, f.line) for f in report.findings) == [("HT102", 5), ("HT102", 9)]


def test_an_import_of_a_project_module_that_does_not_exist_is_counted_unresolved(tmp_path, monkeypatch):
    """``import app.gone`` names a module of the project that is not there: what it binds is
    not followed, and the run says so (it used to be taken for a library module)."""
    from hermetic.api import run_check

    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "app" / "real.py").write_text("def f():\n    pass\n", encoding="utf-8")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_u.py").write_text(
        "import app.gone\nimport app.real\nimport os.path\n\n\ndef test_b():\n    app.gone.f()\n    app.real.f()\n",
        encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    report, _ = run_check([], tmp_path)
    assert [(u["line"], u["call"]) for u in report.unresolved_calls] == [
        (1, "import app.gone (no such module in the project)")]


def test_split_of_a_literal_path_is_computed(tmp_path, monkeypatch):
    """``os.path.split`` of a whole literal gives the literal head and tail: a probe climbing a
    test's absolute path reads each folder above it (requests' ``extract_zipped_paths``); the
    tmp_path twin reads nothing outside the sandbox."""
    from hermetic.api import run_check

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "pkg" / "zp.py").write_text('''import os
import zipfile


def extract(path):
    if os.path.exists(path):
        return path
    archive, member = os.path.split(path)
    while archive and not os.path.exists(archive):
        archive, prefix = os.path.split(archive)
        if not prefix:
            break
    if not zipfile.is_zipfile(archive):
        return path
    return archive
''', encoding="utf-8")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_zp.py").write_text('''from pkg.zp import extract


def test_unchanged():
    assert extract("/etc/invalid/location") == "/etc/invalid/location"


def test_tmp(tmp_path):
    extract(str(tmp_path / "a" / "b"))
''', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    report, _ = run_check([], tmp_path)
    found = {f.line: f for f in report.findings}
    assert sorted(found) == [6, 9, 13]
    # /etc exists on every POSIX machine and is no archive (catalogue [existing-folders]): of
    # the two heads the loop may leave, /etc/invalid is the one whose answer is the machine's
    assert "'/etc/invalid'" in found[9].message and "'/etc/invalid'" in found[13].message
    assert "'/etc'" not in found[9].message + found[13].message
    assert all(f.tests == ["tests/test_zp.py::test_unchanged"] for f in report.findings)


def test_the_name_of_an_absolute_path_is_no_path_in_its_folder(tmp_path, monkeypatch):
    """``p.name`` / ``.stem`` / ``.suffix`` of a path in the project, the test's folder or the
    home folder is a part of that path, not a path in it: ``tmp_path / p.name`` stays in
    tmp_path (a suite copying its fixture projects by name, sorted); of a whole literal it is
    the literal's part (``Path("/srv/data/report.txt").name`` opens ``report.txt`` in the
    working directory)."""
    from hermetic.api import run_check

    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\npythonpath = ["src"]\n', encoding="utf-8")
    for name in ("a", "b"):
        (tmp_path / "fixtures" / name).mkdir(parents=True)
        (tmp_path / "fixtures" / name / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "src" / "pkg" / "m.py").write_text('''from pathlib import Path


def save():
    with open(Path("/srv/data/report.txt").name, "w") as fh:
        fh.write("x")
''', encoding="utf-8")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text('''import shutil
from pathlib import Path

import pytest

from pkg.m import save

FIXTURES = Path(__file__).parent.parent / "fixtures"
PROJECTS = sorted(p.name for p in FIXTURES.iterdir() if (p / "pyproject.toml").is_file())


@pytest.mark.parametrize("name", PROJECTS)
def test_copy(name, tmp_path):
    shutil.copytree(FIXTURES / name, tmp_path / name)


def test_save():
    save()
''', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    report, _ = run_check([], tmp_path)
    assert [(f.path, f.line) for f in report.findings] == [("src/pkg/m.py", 5)]
    assert "'report.txt'" in report.findings[0].message
