"""What the checkout ships decides the way (analyse/shipped.py), fixture flow-shipped.

A template folder the test names as a relative literal is in the checkout: its existence is
answered from it (the cache in the home folder is not looked at), and its ``stencil.json``,
read with ``json.load``, is what the file holds, so the nested-template branch runs only for
the templates whose file names one (near misses: ``nested``, ``listed``). A folder the checkout
does not hold is missing while the run has written nowhere else (near miss: ``absent``, whose
lookup goes on to the home folder), and what follows a fixture's yield runs after the test,
which may have written anything (near miss: ``cleanup``'s removal stays reported). The user's
own overrides, keys not known, overwrite only keys the template has (``if key not in context:
continue``): the keys stay the file's. A program run on
one way of an ``if`` (or one command line of a click test) makes nothing the other way asks
about (near miss: a template that ships hooks). A shipped file that is not JSON makes
``json.load`` raise: a body that raised on every way (in a ``with open(...)``, which swallows
nothing) goes on only through a handler that does not end (near miss: the lenient handler).
A key stored two levels down (``context["stencil"]["_template"] = t``) keeps the inner dict's
keys known (near miss: keys of the user's stored there).
"""
import shutil

from hermetic.analyse.decide import set_algebra
from hermetic.analyse.shipped import NOT_JSON, Shipped, is_data, shipped_rel
from hermetic.analyse.state import Ctx
from hermetic.analyse.values import Origin, of, seq_atom
from hermetic.api import run_check
from helpers import FIXTURES, Expect, fixture_suite

FIX = "flow-shipped"
R = "src/stencil/render.py"
T = "tests/test_render.py::"
RF = "src/stencil/refresh.py"
TF = "tests/test_refresh.py::"

EXPECTED = [
    # not test_broken_template: json.load of its stencil.json raises, the handler raises again
    Expect("nested-template-fetched", "HT106", R, 'subprocess.run(["git"',
           tests=[T + "test_broken_template_lenient", T + "test_listed_templates", T + "test_nested_template",
                  T + "test_missing_template", T + "test_plain_template_with_user_keys"]),
    # (test_missing_template and test_plain_template_with_user_keys may, on ways their values do
    # not decide: listed, and counted in the message)
    # only where the folder the test names is not in the checkout
    Expect("cache-looked-at", "HT102", R, "if not os.path.isdir(folder):", tests=[T + "test_missing_template"]),
    Expect("cache-config-looked-at", "HT102", R, 'return os.path.isfile(os.path.join(folder, "stencil.json"))',
           tests=[T + "test_missing_template"]),
    Expect("cache-config-read", "HT102", R, "with open(os.path.join(folder", tests=[T + "test_missing_template"]),
    Expect("user-overrides", "HT102", "tests/test_render.py", "as fh:   # the user's own: any keys",
           tests=[T + "test_plain_template_with_user_overrides"]),
    Expect("user-keys", "HT102", "tests/test_render.py", 'encoding="utf-8") as rc:',
           tests=[T + "test_plain_template_with_user_keys"]),
    Expect("stamping-program", "HT106", RF, 'subprocess.run(["touch", "stamp"])',
           tests=[TF + "test_cli_hooked", TF + "test_cli_plain", TF + "test_refresh_plain"]),   # the last may
    # not the plain template's tests: the program on the other way (or command line) made nothing
    # on this one (``ways.TreeWays``)
    Expect("hooks-of-a-hooked-template", "HT106", RF, 'subprocess.run(["sh", "hooks/run.sh"])',
           tests=[TF + "test_cli_hooked"]),
    # a folder made through a constant built from the home folder makes nothing in the checkout:
    # the plain template still has no hooks (not test_logged_plain)
    Expect("logged-hooks", "HT106", RF, 'subprocess.run(["sh", "hooks/logged.sh"])', tests=[TF + "test_logged_hooked"]),
    Expect("log-folder-made", "HT102", RF, "os.makedirs(LOG_DIR, exist_ok=True)",
           tests=[TF + "test_logged_hooked", TF + "test_logged_plain"]),
    Expect("log-folder-constant", "HT201", RF, 'LOG_DIR = os.path.expanduser("~/.stencil-logs")',
           tests=[TF + "test_logged_hooked", TF + "test_logged_plain"]),
    Expect("removal-after-the-test", "HT102", "tests/test_render.py", 'os.remove("tests/templates/plain/out.txt")',
           tests=[T + "test_cleaned_up_after"]),
]

findings, test_reported, test_silent, test_nothing_else = fixture_suite(FIX, EXPECTED, [])


def _lit(x, in_test=True):
    # not values.lit(), which interns into a module cache (HT303 on our own suite)
    return of(Origin("literal", expr=repr(x), path="tests/test_x.py", line=1, value=x, in_test=in_test))


def test_the_checkout_answers_what_it_holds(tmp_path):
    shipped = Shipped(tmp_path, {"tests": "dir", "tests/data": "dir", "tests/data/a.json": "file"})
    assert shipped.answer("isdir", "tests/data") is True and shipped.answer("isfile", "tests/data") is False
    assert shipped.answer("is_file", "tests/data/a.json") is True and shipped.answer("exists", "") is True
    # not in the checkout: missing only while the run made nothing, and only under a shipped folder
    assert shipped.answer("exists", "tests/data/b.json") is None
    assert shipped.answer("exists", "tests/data/b.json", missing=True) is False
    assert shipped.answer("exists", "other/b.json", missing=True) is None
    assert shipped.answer("stat", "tests/data") is None   # not an existence question


def test_the_checkout_reads_json_it_ships(tmp_path):
    (tmp_path / "a.json").write_text('{"k": [1, 2]}')
    (tmp_path / "b.json").write_text("not json")
    shipped = Shipped(tmp_path, {"a.json": "file", "b.json": "file", "c.json": "file"})
    assert shipped.data("a.json") == {"k": [1, 2]}
    assert shipped.data("b.json") is NOT_JSON   # reading it as JSON raises
    assert not is_data(shipped.data("b.json")) and not is_data(shipped.data("c.json"))
    assert shipped.data("c.json") is not NOT_JSON   # not there: not known
    (tmp_path / "d.json").write_bytes(b"\xff\xfe")
    assert Shipped(tmp_path, {"d.json": "file"}).data("d.json") is not NOT_JSON   # not UTF-8: not known


def test_a_path_in_the_checkout_is_a_test_literal_or_relative_to_a_folder_of_one():
    start = Ctx()
    assert shipped_rel(_lit("tests/data/"), start) == "tests/data"
    assert shipped_rel(_lit("tests/data", in_test=False), start) is None   # the code's: the starting folder's
    assert shipped_rel(_lit("/etc/x"), start) is None and shipped_rel(_lit("../x"), start) is None
    moved = Ctx(cwd=_lit("tests/data"))
    assert shipped_rel(_lit("hooks", in_test=False), moved) == "tests/data/hooks"
    assert shipped_rel(_lit("hooks", in_test=False), Ctx(cwd=_lit("/srv"))) is None


def test_set_algebra_of_known_items():
    a = of(seq_atom("set", [_lit("template"), _lit("templates")], exact=True))
    b = of(seq_atom("set", [_lit("name"), _lit("template")], exact=True))
    (both,) = set_algebra("BitAnd", a, b).atoms
    assert [next(iter(x.atoms)).value for x in both[2]] == ["template"]
    (either,) = set_algebra("BitOr", a, b).atoms
    assert len(either[2]) == 3
    loose = of(seq_atom("set", [_lit("name")]))   # not known to hold exactly these items
    assert set_algebra("BitAnd", a, loose) is None and set_algebra("Add", a, b) is None


def test_an_edited_data_file_analyses_again(tmp_path, monkeypatch):
    root = shutil.copytree(FIXTURES / FIX, tmp_path / FIX)
    monkeypatch.setenv("HOME", str(tmp_path))
    cache = tmp_path / "cache"

    def plain_fetches() -> bool:
        report, _ = run_check(["."], root, cache_dir=cache, jobs=1)
        return any(f.code == "HT106" and T + "test_plain_template" in f.tests for f in report.findings)

    assert not plain_fetches()
    (root / "tests/templates/plain/stencil.json").write_text('{"name": "plain", "template": "inner"}')
    assert plain_fetches()
