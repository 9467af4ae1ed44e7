"""hermetic.summarise.positions: the ranges read off the ast tree are the ranges libcst's code generation
gives, for every node the extractor asks about."""
import ast
from pathlib import Path

import hypothesmith
import libcst
import pytest
from hypothesis import HealthCheck, given, settings

from hermetic.summarise import positions as P
from hermetic.summarise import extract as S
from hermetic.summarise.extractor import Extractor

REPO = Path(__file__).resolve().parent.parent


def asked_nodes(tree):
    """The nodes the extractor asks the position of, in the order it asks."""
    asked = []

    class Recording(Extractor):
        def pos(self, node):
            asked.append(node)
            return super().pos(node)

    Recording("m", False, P.from_codegen(tree)[0], libcst).block(tree.body, scope="m", cls=None)
    return asked


def assert_same(source: str) -> bool:
    """True when from_ast took the module (and agreed), False when it declined."""
    tree = libcst.parse_module(source)
    try:
        fast = P.from_ast(tree, ast.parse(source), source)
    except P.Mismatch:
        return False
    slow = P.from_codegen(tree)[0]
    for node in asked_nodes(tree):
        assert fast.get(node) == slow.get(node), (type(node).__name__, fast.get(node), slow.get(node))
    return True


FILES = sorted(p for d in ("src", "tests", "fixtures") for p in (REPO / d).rglob("*.py"))


def test_every_python_file_of_this_repository():
    taken = 0
    for p in FILES:
        source = p.read_text(encoding="utf-8")
        try:
            ast.parse(source)
        except SyntaxError:
            continue
        taken += assert_same(source)
    assert taken >= len(FILES) * (0.7 if P._OLD_FSTRINGS else 0.9)   # the fast way is the usual one


@pytest.mark.parametrize("source", [
    # columns count characters, not UTF-8 bytes
    'x = "naïve" + f(y)  \n',
    'def g(a="é", b=h(1)):\n    return [z for z in k(a) if z < b]\n',
    # decorators, classes, elif chains, f-strings with format specs, boolean chains
    '@d(1)\n@e . f\nclass C(B, metaclass=M(2)):\n    @staticmethod\n    async def m(x=(1, 2), *, y=[]):\n'
    '        yield from q(x)\n',
    'if a(1):\n    pass\nelif b[2] > c(3):\n    x = f"{v(1):{w(2)}} {u!r}"\nelse:\n    y = a and (b or c) and d(4)\n',
    'with open(p) as f, g() as (h, i):\n    for j in k(l) :\n        del m[n(0)], o.p\n',
    'try:\n    x = lambda q=r(): s(q)\nexcept (E, F(1)) as e:\n    raise G(2) from e\nfinally:\n    t[1:u(2):3]\n',
    'x[a, b(1)] = y[c(2),] ; z = {**d(3), e: f(4)}\n',
])
def test_hand_written_cases(source):
    # Python 3.9's ast misplaces expressions inside f-strings: such modules take code generation
    assert assert_same(source) or (P._OLD_FSTRINGS and 'f"' in source)


def test_a_tuple_default_over_lines_is_left_to_code_generation():
    source = "def f(a=(\n    1, 2)):\n    return g(a)\n"
    assert not assert_same(source)
    summary = S.summarize(source.encode(), "m", "m.py")
    # libcst's range of the tuple: inside its parentheses and the whitespace after "(" (1-based columns)
    assert summary["functions"]["m.f"]["params"][0][3] == [2, 5, 2, 9]


def test_a_suppression_comment_is_found_through_code_generation():
    summary = S.summarize(b"open('/srv/x')  # hermetic: ignore[HT102]\n", "m", "m.py")
    assert summary["suppressions"] == {"1": ["HT102"]}


@pytest.mark.filterwarnings("ignore::SyntaxWarning")   # hypothesmith compiles what it generates: `1()` warns
@settings(deadline=None, database=None, max_examples=60,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])
@given(source=hypothesmith.from_grammar())
def test_grammar_generated_modules(source):
    try:
        tree = libcst.parse_module(source)
        amod = ast.parse(source)
    except Exception:   # libcst and ast disagree on what parses: not this module's question
        return
    try:
        fast = P.from_ast(tree, amod, source)
    except (P.Mismatch, RecursionError):
        return
    slow = P.from_codegen(tree)[0]
    for node in asked_nodes(tree):
        assert fast.get(node) == slow.get(node), (type(node).__name__, fast.get(node), slow.get(node))
