"""hermetic.summarise.ir: the grammar describes every form real summaries hold, field by field,
and the named indices agree with it."""
from pathlib import Path

import pytest

from hermetic.summarise import ir
from hermetic.summarise.extract import SummaryError, summarize

REPO = Path(__file__).resolve().parent.parent
FILES = sorted(p for d in ("src/hermetic", "fixtures") for p in (REPO / d).rglob("*.py"))
#: forms the repository's own files do not use
EXTRA = b"match x:\n    case [1, *rest]:\n        pass\nif (y := f()):\n    pass\n"


class Checker:
    """Walks a summary by the grammar; ``seen`` collects (context, tag) of every form met."""

    def __init__(self):
        self.seen = set()

    def form(self, node, table, context, where):
        assert isinstance(node, (list, tuple)) and node, (where, node)
        tag = node[0]
        assert tag in table, f"{where}: {context} tag {tag!r} is not described in ir: {node!r}"
        self.seen.add((context, tag))
        self.fields(node[1:], table[tag], tag, f"{where} > {tag}")

    def fields(self, items, fields, name, where):
        least = len(fields) - ir.OPTIONAL.get(name, 0)
        assert least <= len(items) <= len(fields), f"{where}: {len(items)} fields, grammar has {len(fields)}: {items!r}"
        for (field, shape), value in zip(fields, items):
            self.value(value, shape, f"{where}.{field}")

    def value(self, v, shape, where):
        if shape.endswith("?"):
            if v is None:
                return
            shape = shape[:-1]
        if shape.startswith("["):
            assert isinstance(v, (list, tuple)), (where, v)
            for x in v:
                self.value(x, shape[1:-1], where)
        elif shape == "stmt":
            self.form(v, ir.STATEMENTS, "stmt", where)
        elif shape == "expr":
            self.form(v, ir.EXPRESSIONS, "expr", where)
        elif shape == "target":
            self.form(v, ir.TARGETS, "target", where)
        elif shape in ir.ROWS:
            assert isinstance(v, (list, tuple)), (where, v)
            self.fields(v, ir.ROWS[shape], shape, f"{where} ({shape})")
        elif shape == "str":
            assert isinstance(v, str), (where, v)
        elif shape in ("int", "line"):
            assert isinstance(v, int) and not isinstance(v, bool), (where, v)
        elif shape == "bool":
            assert isinstance(v, bool), (where, v)
        elif shape == "pos":
            assert isinstance(v, (list, tuple)) and len(v) == 4 and all(isinstance(x, int) for x in v), (where, v)
        elif shape == "value":
            assert v is None or isinstance(v, (bool, int, float, str)), (where, v)
        elif shape == "{str: str}":
            assert isinstance(v, dict) and all(isinstance(k, str) and isinstance(x, str) for k, x in v.items())
        else:
            raise AssertionError(f"{where}: unknown shape {shape!r} in the grammar")

    def record(self, rec, keys, where):
        assert set(rec) == set(keys), (where, sorted(set(rec) ^ set(keys)))
        for key, shape in keys.items():
            self.value(rec[key], shape, f"{where}.{key}")

    def summary(self, s, where):
        self.value(s["body"], "[stmt]", where)
        for qn, f in s["functions"].items():
            self.record(f, ir.FUNCTION_KEYS, f"{where}:{qn}")
        for qn, c in s["classes"].items():
            self.record(c, ir.CLASS_KEYS, f"{where}:{qn}")


@pytest.fixture(scope="module")
def checked():
    checker = Checker()
    taken = 0
    for p in FILES:
        rel = p.relative_to(REPO)
        module = ".".join(rel.with_suffix("").parts)
        try:
            s = summarize(p.read_bytes(), module, rel.as_posix(), p.name == "__init__.py")
        except SummaryError:   # fixtures that do not parse on purpose
            continue
        checker.summary(s, rel.as_posix())
        taken += 1
    assert taken > len(FILES) * 0.9
    checker.summary(summarize(EXTRA, "extra", "extra.py"), "extra.py")
    return checker


def test_every_form_of_every_summary_is_described_with_its_fields(checked):
    assert checked.seen


def test_the_grammar_is_what_the_extractor_emits(checked):
    # every described form occurs in this repository (or a grammar entry would be a guess);
    # an unknown target is the one the repository has no example of
    described = {("stmt", t) for t in ir.STATEMENTS} | {("expr", t) for t in ir.EXPRESSIONS} \
        | {("target", t) for t in ir.TARGETS}
    assert described - checked.seen <= {("target", "none")}


def test_a_json_round_trip_keeps_the_grammar():
    import json

    s = json.loads(json.dumps(summarize(b"from m import call\nx: int = call(*a, k=1, **b)[0]\n", "p", "p.py")))
    Checker().summary(s, "p.py")
    assert [ir.tag(st) for st in s["body"]] == ["from", "assign"]
    assert not ir.is_call(s["body"][0][ir.FROM_NAMES][0])    # ["call", "call"]: a row, not a call
    value = s["body"][1][ir.ASSIGN_VALUE]
    assert ir.tag(value) == "sub" and ir.is_call(value[ir.SUB_VALUE])
    assert ir.dotted_name(value[ir.SUB_VALUE]) == "call"
    assert [ir.stmt_line(st) for st in s["body"]] == [1, 2]


@pytest.mark.parametrize("table", ["STATEMENTS", "EXPRESSIONS", "TARGETS"])
def test_the_named_indices_follow_the_grammar(table):
    for tag, fields in getattr(ir, table).items():
        for i, (field, _shape) in enumerate(fields, 1):
            assert getattr(ir, f"{tag}_{field}".upper()) == i, (tag, field)


def test_the_row_indices_follow_the_grammar():
    for row, fields in ir.ROWS.items():
        for i, (field, _shape) in enumerate(fields):
            assert getattr(ir, f"{row}_{field}".upper(), i) == i, (row, field)


def test_every_named_index_names_a_field():
    names = {f"{tag}_{field}".upper() for table in (ir.STATEMENTS, ir.EXPRESSIONS, ir.TARGETS, ir.ROWS)
             for tag, fields in table.items() for field, _shape in fields}
    indices = {k for k, v in vars(ir).items() if k.isupper() and isinstance(v, int) and k != "TAG"}
    assert indices <= names, sorted(indices - names)

