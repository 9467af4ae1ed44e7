"""Per-file summaries: a pure, serializable function of the source."""
import json
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

import hermetic
from hermetic.summarise.extract import SummaryError, summarize

SRC = b'''"""Doc."""
import os
from . import settings
from .db import connect as open_db

LIMIT = int(os.environ.get("LIMIT", "3"))


class Store:
    def __init__(self, path=settings.DB):
        self.path = path

    async def load(self, *args, **kw):
        async with open_db(self.path) as conn:
            return [row async for row in conn]


def gen():
    yield f"{LIMIT}/x"
    match LIMIT:
        case 1:
            pass
'''


def test_summary_is_json_serializable_and_pure():
    a = summarize(SRC, "pkg.mod", "src/pkg/mod.py")
    b = summarize(SRC, "pkg.mod", "src/pkg/mod.py")
    assert a == b
    assert json.loads(json.dumps(a)) == json.loads(json.dumps(b))


def test_relative_imports_resolve_against_the_module():
    s = summarize(SRC, "pkg.mod", "src/pkg/mod.py")
    froms = [st for st in s["body"] if st[0] == "from"]
    assert froms[0][1] == "pkg" and froms[1][1] == "pkg.db"
    s = summarize(SRC, "pkg", "src/pkg/__init__.py", is_package=True)
    assert [st for st in s["body"] if st[0] == "from"][1][1] == "pkg.db"


def test_functions_classes_and_generators_are_recorded():
    s = summarize(SRC, "pkg.mod", "src/pkg/mod.py")
    assert set(s["functions"]) == {"pkg.mod.Store.__init__", "pkg.mod.Store.load", "pkg.mod.gen"}
    assert s["functions"]["pkg.mod.gen"]["generator"] is True
    assert s["functions"]["pkg.mod.Store.load"]["is_async"] is True
    assert s["classes"]["pkg.mod.Store"]["methods"] == {"__init__": "pkg.mod.Store.__init__",
                                                        "load": "pkg.mod.Store.load"}


def test_suppression_comments_are_collected_not_strings():
    src = b'x = 1  # hermetic: ignore[HT103, ht104]\ny = "# hermetic: ignore"\nz = 2  # hermetic: ignore\n'
    assert summarize(src, "m", "m.py")["suppressions"] == {"1": ["HT103", "HT104"], "3": ["*"]}


def test_syntax_error_is_one_line():
    try:
        summarize(b"def f(:\n", "m", "m.py")
    except SummaryError as exc:
        assert "\n" not in str(exc) and "syntax error" in str(exc)
    else:  # pragma: no cover
        raise AssertionError("no SummaryError")


@pytest.mark.parametrize("src, message", [
    (b"a = 1\nb = (1,\n  2\nc = 3\n", "syntax error at line 2, column 5: '(' was never closed"),
    (b"x = 1\n\nif x\n    y = 2\n", "syntax error at line 3, column 5: expected ':'"),
    (b"a = 1\nb = 2 +\n", "syntax error at line 2, column 8: invalid syntax"),
])
def test_a_syntax_error_gives_the_line_and_reason_cpython_gives(src, message):
    # libcst's own messages point past the mistake ("error at 3:0" for line 2) and list tokens
    with pytest.raises(SummaryError) as info:
        summarize(src, "m", "m.py")
    assert str(info.value) == message


def test_valid_code_libcst_cannot_read_is_not_called_a_syntax_error():
    src = ("x = (" + " ".join(repr(f"a{i}") for i in range(5000)) + ")\n").encode()
    with pytest.raises(SummaryError) as info:
        summarize(src, "m", "m.py")
    text = str(info.value)
    assert text.startswith("libcst cannot parse this file, which CPython accepts: ") and "\n" not in text


@settings(max_examples=60, deadline=None, database=None)
@given(st.binary(max_size=200) | st.text(max_size=200).map(lambda t: t.encode("utf-8")))
def test_arbitrary_bytes_give_a_summary_or_a_summary_error(data):
    try:
        s = summarize(data, "m", "m.py")
    except SummaryError as exc:
        assert "\n" not in str(exc)
    else:
        json.dumps(s)


def test_input_too_deep_for_the_native_parser_is_an_error_not_a_crash():
    deep = ("x = " + "(" * 3000 + "1" + ")" * 3000 + "\n").encode()
    long = ("x = " + "+".join(["1"] * 30000) + "\n").encode()
    for data in (deep, long):
        try:
            summarize(data, "m", "m.py")
        except SummaryError as exc:
            assert "too deeply nested" in str(exc)
        else:  # pragma: no cover
            raise AssertionError("no SummaryError")


TRICKY = [
    "@dec\n@other(1)\ndef f(a, *, b=2) -> int:\n    '''doc'''\n    return a  # note\n",
    "if a:\n    pass\nelif b:\n    x = 1\nelse:\n    y = (1,\n         2)\n",
    "x = f'{a!r:>{width}} {b}'\r\ny = 'é' + \"ü\"  # comment é\r\n",
    "class C(B, metaclass=M):\n    x: int = 1\n\n    async def m(self):\n        async with a as b, c:\n            await b\n",
    "try:\n    pass\nexcept (A, B) as e:\n    raise\nfinally:\n    del x\n",
    "def g():\n\tif x:\n\t\treturn [i for i in y if i]\n\treturn lambda q: q\n",
    "with (\n    open(a) as f,\n    open(b) as g,\n):\n    pass\n",
]


def test_positions_are_the_same_as_libcsts_position_provider():
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

    from hermetic.summarise.extract import positions

    sources = TRICKY + [p.read_text(encoding="utf-8") for p in sorted(Path(hermetic.__file__).parent.glob("*.py"))]
    compared = 0
    for src in sources:
        tree = cst.parse_module(src)
        mine, _comments = positions(tree)
        ref = MetadataWrapper(tree, unsafe_skip_copy=True).resolve(PositionProvider)
        for node, r in ref.items():
            if node is tree:
                continue
            assert mine[node] == (r.start.line, r.start.column, r.end.line, r.end.column), type(node).__name__
            compared += 1
    assert compared > 10_000


def test_comments_come_with_their_lines():
    import libcst as cst

    from hermetic.summarise.extract import positions

    _pos, comments = positions(cst.parse_module("x = (1,  # one\n     2)\n# two\ndef f(): pass  # three\n"))
    assert comments == [(1, "# one"), (3, "# two"), (4, "# three")]


def test_deep_but_compilable_code_is_an_error_in_process_and_never_a_traceback():
    chain = ("x = " + "+".join(["1"] * 600) + "\n").encode()
    try:
        s = summarize(chain, "m", "m.py")
    except SummaryError as exc:
        assert "too deeply nested" in str(exc)
    else:
        assert s["body"]


def test_generator_flag_belongs_to_the_function_whose_body_yields():
    src = (
        b"def gen():\n    yield 1\n\n\n"
        b"def outer():\n    def inner():\n        yield 2\n    return inner\n\n\n"
        b"def with_lambda():\n    return lambda: (yield)\n\n\n"
        b"def with_class():\n    class K:\n        x = 1\n    return K\n\n\n"
        b"def default_yields():\n    def inner(x=(yield)):\n        return x\n    return inner\n"
    )
    fs = summarize(src, "m", "m.py")["functions"]
    flags = {qn: fs[qn]["generator"] for qn in fs}
    assert flags == {"m.gen": True, "m.outer": False, "m.outer.<locals>.inner": True, "m.with_lambda": False,
                     "m.with_class": False, "m.default_yields": True, "m.default_yields.<locals>.inner": False}


def test_string_literals_are_their_values():
    src = ("A = 'plain'\nB = \"\"\"tri'ple\"\"\"\nC = 'esc\\\\n'\nD = r'raw\\\\d'\nE = b'by'\nF = ''\n"
           "G = '''x\"y'''\n").encode()
    body = summarize(src, "m", "m.py")["body"]
    values = [st[2] for st in body if st[0] == "assign"]
    assert [v for v in values] == [("lit", "plain"), ("lit", "tri'ple"), ("lit", "esc\\n"), ("lit", "raw\\\\d"),
                                   ("lit", "by"), ("lit", ""), ("lit", 'x"y')]


def test_may_name_looks_up_the_sorted_names_and_answers_yes_without_them():
    from hermetic.summarise.extract import may_name, summarize

    s = summarize(b"import functools\n\n@functools.lru_cache()\ndef f():\n    return 1\n", "m", "m.py")
    assert may_name(s, ("cache", "lru_cache"))
    assert not may_name(s, ("addCleanup", "addfinalizer"))
    assert may_name({}, ("anything",))   # nothing recorded: the caller walks the file


def test_parse_without_node_checks_builds_the_same_tree_and_restores_the_check():
    import libcst as cst

    from hermetic.summarise.parse import parse_module as _parse_module

    src = SRC.decode()
    assert _parse_module(cst, SRC).deep_equals(cst.parse_module(SRC))
    assert _parse_module(cst, SRC).code == src
    with pytest.raises(cst.ParserSyntaxError):
        _parse_module(cst, b"def f(:\n")
    with pytest.raises(cst.CSTValidationError):   # the check is back, after a failed parse too
        cst.Name("1 not a name")


def test_parse_keeps_a_post_init_that_does_more_than_the_check(monkeypatch):
    import libcst as cst

    from hermetic.summarise.parse import parse_module as _parse_module

    built = []

    def counting(self):
        built.append(type(self).__name__)
        self._validate()

    monkeypatch.setattr(cst.CSTNode, "__post_init__", counting)
    _parse_module(cst, b"x = 1\n")
    assert "Name" in built and "Assign" in built


def test_identifiers_are_read_as_python_folds_them():
    # PEP 3131: identifiers are NFKC-normalized, so fullwidth "ｏｓ" is the module os; strings keep
    # their spelling, and positions stay those of the source text
    src = 'import os\n\n\ndef ｔest_a():\n    ｏｓ.getenv("ｏｓ")\n\n\ndef test_é():\n    pass\n'.encode()
    s = summarize(src, "m", "m.py")
    assert sorted(f["name"] for f in s["functions"].values()) == ["test_a", "test_é"]
    body = s["functions"]["m.test_a"]["body"]
    text = repr(body)
    assert "'os'" in text and "ｏｓ" in text and "ｔ" not in text   # the name folded, the string kept


def test_changed_names_are_the_constants_a_file_may_change_in_place():
    from hermetic.summarise.extract import summarize
    src = b'''
import registry
LOCALES = {"en": 1}
PLUGINS = {}
HOOKS = []
CACHE = {}
ALIASED = {}
GIVEN = []
READ_ONLY = {"a": 1}
lower = {}

def f(name):
    PLUGINS[name] = name
    HOOKS.append(name)
    registry.CACHE.update({})
    alias = ALIASED
    register(GIVEN)
    lower["x"] = 1
    return len(READ_ONLY), sorted(LOCALES), READ_ONLY.get(name), name in LOCALES
'''
    s = summarize(src, "m", "m.py")
    assert s["changed"] == ["ALIASED", "CACHE", "GIVEN", "HOOKS", "PLUGINS"]
