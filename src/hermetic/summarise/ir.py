"""The summary IR's grammar: every statement, expression and target form the extractor emits.

A form is a tuple (a list after a JSON round-trip) whose item 0 is its tag; the items after it
are its fields, in the order given here. Three contexts, each its own table:

* ``STATEMENTS``: the items of a body (module, function, class, branch), from
  ``Extractor._s_*`` and ``Extractor._m_*``. Every statement carries its 1-based ``line``
  (``stmt_line``);
* ``EXPRESSIONS``: values, from ``Extractor._x_*``. ``star`` occurs only as an item of a call's
  ``args`` or of a ``seq``; ``await x`` is ``x``; what the extractor does not model is ``unk``;
* ``TARGETS``: what is bound or deleted (assignments, ``for``, ``with ... as``, ``del``,
  comprehensions, ``:=``), from ``Extractor.target``. A target ``sub`` has no position, unlike
  the expression ``sub``; a starred target is its inner target.

Each field is ``(name, shape)``. Shapes: ``str``, ``int``, ``bool``, ``line`` (1-based int),
``pos`` (``[line, column, end_line, end_column]``, 1-based lines and columns, all 0 when
unknown), ``value`` (a literal: None, bool, int, float, str), ``expr``, ``target``, ``stmt``;
a trailing ``?`` allows None; ``[x]`` is a list of x; a name in ``ROWS`` is a fixed-length list
(``[local, module, aliased]`` of an import...). A form's trailing fields listed in ``OPTIONAL``
may be absent (``assign`` has an ``annotation`` only when written ``x: T = v``).

The functions and classes of a summary are dicts, ``FUNCTION_KEYS`` and ``CLASS_KEYS``.

Readers may use the named indices below (``CALL_FUNC``, ``FROM_MODULE``, ...) and the small
accessors (``tag``, ``is_call``, ``stmt_line``, ``dotted_name``) instead of bare positions;
``tests/test_ir.py`` holds the tables, the indices and real summaries to each other.
Changing a form changes ``extract.SUMMARY_VERSION``.
"""
from __future__ import annotations

from typing import Any, Dict, Tuple

Fields = Tuple[Tuple[str, str], ...]

STATEMENTS: Dict[str, Fields] = {
    "def": (("name", "str"), ("qualname", "str"), ("line", "line")),
    "class": (("name", "str"), ("qualname", "str"), ("line", "line")),
    "if": (("test", "expr"), ("body", "[stmt]"), ("orelse", "[stmt]"), ("line", "line")),
    "for": (("target", "target"), ("iter", "expr"), ("body", "[stmt]"), ("orelse", "[stmt]"), ("line", "line"),
            ("jumps", "bool")),   # jumps: the body holds a `break` or `continue` of this loop
    "while": (("test", "expr"), ("body", "[stmt]"), ("orelse", "[stmt]"), ("line", "line")),
    "try": (("body", "[stmt]"), ("handlers", "[handler]"), ("orelse", "[stmt]"), ("finally", "[stmt]"),
            ("line", "line")),
    "with": (("items", "[with_item]"), ("body", "[stmt]"), ("line", "line"), ("is_async", "bool")),
    "match": (("subject", "expr"), ("cases", "[[stmt]]"), ("line", "line")),
    "expr": (("value", "expr"), ("line", "line"), ("assert", "bool")),   # `assert test`: assert True
    "assign": (("targets", "[target]"), ("value", "expr"), ("line", "line"), ("annotation", "expr")),
    "ann": (("target", "target"), ("annotation", "expr"), ("line", "line")),     # `x: T` with no value
    "augassign": (("target", "target"), ("op", "str"), ("value", "expr"), ("line", "line")),
    "return": (("value", "expr?"), ("line", "line")),
    "import": (("names", "[import_name]"), ("line", "line")),
    "from": (("module", "str"), ("names", "[from_name]"), ("line", "line")),   # module resolved to absolute
    "del": (("target", "target"), ("line", "line")),
    "global": (("names", "[str]"), ("line", "line")),
    "nonlocal": (("names", "[str]"), ("line", "line")),
    "raise": (("exc", "expr?"), ("line", "line")),
    "jump": (("kind", "str"), ("line", "line")),   # kind "break" or "continue", inside a loop's body
}

EXPRESSIONS: Dict[str, Fields] = {
    "lit": (("value", "value"),),
    "name": (("id", "str"),),
    "unk": (),
    "fstr": (("parts", "[expr]"),),
    "attr": (("value", "expr"), ("attr", "str")),
    "call": (("func", "expr"), ("args", "[expr]"), ("kwargs", "[kwarg]"), ("pos", "pos")),
    "bin": (("op", "str"), ("left", "expr"), ("right", "expr"), ("pos", "pos")),      # op: libcst's class name
    "bool": (("op", "str"), ("operands", "[expr]")),      # op: "and" or "or"
    "ifx": (("test", "expr"), ("body", "expr"), ("orelse", "expr")),
    "sub": (("value", "expr"), ("index", "expr"), ("pos", "pos")),    # index: slice, or unk for other slices and tuples
    "slice": (("lower", "value"), ("upper", "value")),    # x[lower:upper], bounds integer literals or None
    "seq": (("kind", "str"), ("items", "[expr]")),        # kind: "list", "tuple" or "set"
    "star": (("value", "expr"),),
    "dict": (("items", "[dict_item]"),),
    "lambda": (("params", "[param]"), ("body", "expr"), ("pos", "pos")),
    "yield": (("value", "expr"), ("pos", "pos")),         # also `yield from`; a bare yield yields lit None
    "cmp": (("ops", "[str]"), ("operands", "[expr]"), ("pos", "pos")),
    "unary": (("op", "str"), ("operand", "expr")),
    "comp": (("generators", "[generator]"), ("elements", "[expr]")),     # elements: [key, value] of a dict
    "walrus": (("target", "target"), ("value", "expr")),
}

TARGETS: Dict[str, Fields] = {
    "name": (("id", "str"),),
    "attr": (("value", "expr"), ("attr", "str")),
    "sub": (("value", "expr"), ("index", "expr")),
    "tuple": (("items", "[target]"),),
    "none": (),
}

#: fixed-length lists inside forms and records
ROWS: Dict[str, Fields] = {
    "handler": (("name", "str?"), ("body", "[stmt]"), ("type", "expr?")),   # `except E as name`
    "with_item": (("context", "expr"), ("target", "target?")),
    "import_name": (("local", "str"), ("module", "str"), ("aliased", "bool")),
    "from_name": (("local", "str"), ("attr", "str")),          # ["*", "*"] for a star import
    "kwarg": (("name", "str"), ("value", "expr")),             # name "**" for `**mapping`
    "dict_item": (("key", "expr?"), ("value", "expr")),        # key None for `**mapping`
    "generator": (("target", "target"), ("iter", "expr"), ("ifs", "[expr]")),
    "param": (("name", "str"), ("kind", "str"), ("default", "expr?"), ("default_pos", "pos?")),
    "decorator": (("expr", "expr"), ("line", "line")),
}

#: form or row -> how many trailing fields may be absent
OPTIONAL: Dict[str, int] = {
    "assign": 1,
    "expr": 1,      # the assert flag only on `assert test`
    "param": 1,     # kind "var" (*args) and "varkw" (**kwargs): [name, kind, None]
    "for": 1,       # the jumps flag only on a loop whose body breaks or continues
}

#: a summary's ``functions`` values (dicts)
FUNCTION_KEYS: Dict[str, str] = {
    "qualname": "str", "name": "str", "class": "str?", "params": "[param]", "decorators": "[decorator]",
    "body": "[stmt]", "is_async": "bool", "generator": "bool", "line": "line", "def_pos": "pos",
    "def_line": "line", "end_line": "line", "body_digest": "str",
}

#: a summary's ``classes`` values (dicts); ``methods`` maps a name to its function's qualname
CLASS_KEYS: Dict[str, str] = {
    "qualname": "str", "name": "str", "bases": "[expr]", "decorators": "[decorator]", "body": "[stmt]",
    "methods": "{str: str}", "line": "line",
}

# ---- named indices (item 0 is the tag) -------------------------------------------------

TAG = 0

# statements
DEF_NAME, DEF_QUALNAME, DEF_LINE = 1, 2, 3
CLASS_NAME, CLASS_QUALNAME, CLASS_LINE = 1, 2, 3
IF_TEST, IF_BODY, IF_ORELSE, IF_LINE = 1, 2, 3, 4
FOR_TARGET, FOR_ITER, FOR_BODY, FOR_ORELSE, FOR_LINE, FOR_JUMPS = 1, 2, 3, 4, 5, 6
WHILE_TEST, WHILE_BODY, WHILE_ORELSE, WHILE_LINE = 1, 2, 3, 4
TRY_BODY, TRY_HANDLERS, TRY_ORELSE, TRY_FINALLY, TRY_LINE = 1, 2, 3, 4, 5
WITH_ITEMS, WITH_BODY, WITH_LINE, WITH_IS_ASYNC = 1, 2, 3, 4
MATCH_SUBJECT, MATCH_CASES, MATCH_LINE = 1, 2, 3
EXPR_VALUE, EXPR_LINE, EXPR_ASSERT = 1, 2, 3
ASSIGN_TARGETS, ASSIGN_VALUE, ASSIGN_LINE, ASSIGN_ANNOTATION = 1, 2, 3, 4
ANN_TARGET, ANN_ANNOTATION, ANN_LINE = 1, 2, 3
AUGASSIGN_TARGET, AUGASSIGN_OP, AUGASSIGN_VALUE, AUGASSIGN_LINE = 1, 2, 3, 4
RETURN_VALUE, RETURN_LINE = 1, 2
IMPORT_NAMES, IMPORT_LINE = 1, 2
FROM_MODULE, FROM_NAMES, FROM_LINE = 1, 2, 3
DEL_TARGET, DEL_LINE = 1, 2
GLOBAL_NAMES, GLOBAL_LINE = 1, 2
NONLOCAL_NAMES, NONLOCAL_LINE = 1, 2
RAISE_EXC, RAISE_LINE = 1, 2
JUMP_KIND, JUMP_LINE = 1, 2

# expressions (and the targets of the same tag: name, attr, sub without its pos)
LIT_VALUE = 1
NAME_ID = 1
FSTR_PARTS = 1
ATTR_VALUE, ATTR_ATTR = 1, 2
CALL_FUNC, CALL_ARGS, CALL_KWARGS, CALL_POS = 1, 2, 3, 4
BIN_OP, BIN_LEFT, BIN_RIGHT, BIN_POS = 1, 2, 3, 4
BOOL_OP, BOOL_OPERANDS = 1, 2
IFX_TEST, IFX_BODY, IFX_ORELSE = 1, 2, 3
SUB_VALUE, SUB_INDEX, SUB_POS = 1, 2, 3
SLICE_LOWER, SLICE_UPPER = 1, 2
SEQ_KIND, SEQ_ITEMS = 1, 2
STAR_VALUE = 1
DICT_ITEMS = 1
LAMBDA_PARAMS, LAMBDA_BODY, LAMBDA_POS = 1, 2, 3
YIELD_VALUE, YIELD_POS = 1, 2
CMP_OPS, CMP_OPERANDS, CMP_POS = 1, 2, 3
UNARY_OP, UNARY_OPERAND = 1, 2
COMP_GENERATORS, COMP_ELEMENTS = 1, 2
WALRUS_TARGET, WALRUS_VALUE = 1, 2
TUPLE_ITEMS = 1

# rows (no tag: index 0 is their first field)
PARAM_NAME, PARAM_KIND, PARAM_DEFAULT, PARAM_DEFAULT_POS = 0, 1, 2, 3
KWARG_NAME, KWARG_VALUE = 0, 1
FROM_NAME_LOCAL, FROM_NAME_ATTR = 0, 1
IMPORT_NAME_LOCAL, IMPORT_NAME_MODULE, IMPORT_NAME_ALIASED = 0, 1, 2

#: statement tag -> the index of its line
LINE_INDEX: Dict[str, int] = {t: 1 + [n for n, _ in f].index("line") for t, f in STATEMENTS.items()}


# ---- accessors ---------------------------------------------------------------------------

def tag(node: Any) -> str:
    """The tag of a statement, expression or target."""
    return node[0]


def is_call(node: Any) -> bool:
    """Whether ``node`` (any list or tuple found in a summary) is a call expression. Its length
    tells it from a row that merely starts with the text "call" (``from m import call``)."""
    return len(node) == 5 and node[0] == "call"


def stmt_line(st: Any) -> int:
    """The 1-based line of a statement."""
    return st[LINE_INDEX[st[0]]]


def subscript_root(e):
    """The expression ``e`` subscripts at its bottom (``d`` of ``d["a"]["b"]``); ``e`` itself
    when it is no subscript."""
    while e[TAG] == "sub":
        e = e[1]
    return e


def dotted_name(e: Any) -> str:
    """``"a.b.c"`` for the expression ``a.b.c`` and for a call of it (a decorator ``@a.b.c(...)``);
    the attribute names only when the chain does not start at a name (``f().x`` -> ``"x"``)."""
    if e[0] == "call":
        e = e[1]
    parts = []
    while e[0] == "attr":
        parts.append(e[2])
        e = e[1]
    if e[0] == "name":
        parts.append(e[1])
    return ".".join(reversed(parts))


def flat(stmts):
    """Every statement of ``stmts`` (summary IR), nested blocks' too, outer before inner."""
    for st in stmts:
        yield st
        k = st[TAG]
        if k == "if":
            yield from flat(st[IF_BODY])
            yield from flat(st[IF_ORELSE])
        elif k in ("for", "while"):
            yield from flat(st[FOR_BODY] if k == "for" else st[WHILE_BODY])
        elif k == "try":
            yield from flat(st[TRY_BODY])
            for _n, b, _t in st[TRY_HANDLERS]:
                yield from flat(b)
            yield from flat(st[TRY_ORELSE])
            yield from flat(st[TRY_FINALLY])
        elif k == "with":
            yield from flat(st[WITH_BODY])
