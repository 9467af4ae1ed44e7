"""Source text from summaries, for fix hints: an unparser of the summary's expression IR
and look-ups of calls and module-level bindings by position."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from .ir import (SLICE_LOWER, SLICE_UPPER, ASSIGN_TARGETS, ASSIGN_VALUE, ATTR_ATTR, ATTR_VALUE, BIN_LEFT, BIN_OP, BIN_RIGHT, BOOL_OP,
                 BOOL_OPERANDS, CALL_ARGS, CALL_FUNC, CALL_KWARGS, CALL_POS, FSTR_PARTS, IFX_BODY, IFX_ORELSE,
                 IFX_TEST, LIT_VALUE, NAME_ID, SEQ_ITEMS, SEQ_KIND, STAR_VALUE, SUB_INDEX, SUB_VALUE, TAG,
                 dotted_name, flat, FROM_MODULE, FROM_NAMES, IF_BODY, IF_ORELSE, IMPORT_NAMES, TRY_BODY, TRY_HANDLERS)

_BINOPS = {"Add": "+", "Subtract": "-", "Multiply": "*", "Divide": "/", "FloorDivide": "//", "Modulo": "%",
           "Power": "**", "MatrixMultiply": "@", "BitOr": "|", "BitAnd": "&", "BitXor": "^",
           "LeftShift": "<<", "RightShift": ">>"}


def unparse(e, subst: Optional[Dict[Any, str]] = None) -> str:
    """Python text for an expression IR; ``subst`` maps a name (or an env variable as
    ``("env", NAME)``) to replacement text."""
    subst = subst or {}
    k = e[TAG]
    if k == "name":
        return subst.get(e[NAME_ID], e[NAME_ID])
    if k == "lit":
        return repr(e[LIT_VALUE])
    if k == "attr":
        if e[ATTR_ATTR] in subst and e[ATTR_VALUE][TAG] in ("name", "attr"):
            return subst[e[ATTR_ATTR]]
        return f"{unparse(e[ATTR_VALUE], subst)}.{e[ATTR_ATTR]}"
    if k == "call":
        env = _env_key(e)
        if env is not None and ("env", env) in subst:
            return subst[("env", env)]
        args = [unparse(a[STAR_VALUE], subst) if a[TAG] == "star" else unparse(a, subst) for a in e[CALL_ARGS]]
        args = [("*" + a) if x[TAG] == "star" else a for a, x in zip(args, e[CALL_ARGS])]
        kws = [(f"**{unparse(v, subst)}" if n == "**" else f"{n}={unparse(v, subst)}") for n, v in e[CALL_KWARGS]]
        return f"{unparse(e[CALL_FUNC], subst)}({', '.join(args + kws)})"
    if k == "sub":
        env = _env_key(e)
        if env is not None and ("env", env) in subst:
            return subst[("env", env)]
        return f"{unparse(e[SUB_VALUE], subst)}[{unparse(e[SUB_INDEX], subst)}]"
    if k == "bin":
        return f"{unparse(e[BIN_LEFT], subst)} {_BINOPS.get(e[BIN_OP], '?')} {unparse(e[BIN_RIGHT], subst)}"
    if k == "bool":
        return f" {e[BOOL_OP]} ".join(unparse(x, subst) for x in e[BOOL_OPERANDS])
    if k == "ifx":
        return f"{unparse(e[IFX_BODY], subst)} if {unparse(e[IFX_TEST], subst)} else {unparse(e[IFX_ORELSE], subst)}"
    if k == "fstr":
        out = []
        for p in e[FSTR_PARTS]:
            if p[TAG] == "lit" and isinstance(p[LIT_VALUE], str):
                out.append(p[LIT_VALUE].replace("{", "{{").replace("}", "}}"))
            else:
                out.append("{" + unparse(p, subst) + "}")
        return 'f"' + "".join(out).replace('"', '\\"') + '"'
    if k == "seq":
        items = e[SEQ_ITEMS]
        inner = ", ".join(unparse(x, subst) for x in items)
        return {"list": f"[{inner}]", "tuple": f"({inner},)" if len(items) == 1 else f"({inner})",
                "set": f"{{{inner}}}"}.get(e[SEQ_KIND], inner)
    if k == "star":
        return unparse(e[STAR_VALUE], subst)
    if k == "slice":
        lower, upper = e[SLICE_LOWER], e[SLICE_UPPER]
        return f"{'' if lower is None else lower}:{'' if upper is None else upper}"
    return "..."


def _env_key(e) -> Optional[str]:
    """The variable name of ``os.getenv("K")``, ``os.environ.get("K")``, ``os.environ["K"]``."""
    if e[TAG] == "call":
        name = _dotted(e[CALL_FUNC])
        args = e[CALL_ARGS]
        if name in ("os.getenv", "os.environ.get", "getenv", "environ.get") and args and args[0][TAG] == "lit":
            return args[0][LIT_VALUE]
    if e[TAG] == "sub" and _dotted(e[SUB_VALUE]) in ("os.environ", "environ") and e[SUB_INDEX][TAG] == "lit":
        return e[SUB_INDEX][LIT_VALUE]
    return None


def _dotted(e) -> str:
    return dotted_name(e) if e[TAG] in ("name", "attr") else ""


def calls_in(node):
    """Every call expression in a summary fragment (statements or expressions), in order."""
    if isinstance(node, (list, tuple)):
        if node and node[0] == "call" and len(node) == 5:   # ir.is_call, inline: this walks every node
            yield node
        for x in node:
            if isinstance(x, (list, tuple)):
                yield from calls_in(x)


def find_call(node, pos) -> Optional[Any]:
    """The call expression at ``pos`` ([line, col, end_line, end_col]) anywhere in a summary."""
    if isinstance(node, dict):
        for v in node.values():
            r = find_call(v, pos)
            if r is not None:
                return r
        return None
    if isinstance(node, (list, tuple)):
        if node and node[0] == "call" and len(node) == 5 and list(node[CALL_POS]) == list(pos):
            return node
        for x in node:
            if isinstance(x, (list, tuple, dict)):
                r = find_call(x, pos)
                if r is not None:
                    return r
    return None


def module_binding(summary: dict, name: str) -> Optional[Any]:
    """The expression last assigned to ``name`` at the module's top level."""
    found = None
    for st in summary["body"]:
        if st[TAG] == "assign":
            for t in st[ASSIGN_TARGETS]:
                if t[TAG] == "name" and t[NAME_ID] == name:
                    found = st[ASSIGN_VALUE]
    return found


def _top_imports(stmts):
    """The ``import`` / ``from`` statements of a module's top level, also under an ``if`` (both
    ways) or a ``try`` (its body and handlers), in order."""
    for st in stmts:
        if st[TAG] in ("import", "from"):
            yield st
        elif st[TAG] == "if":
            yield from _top_imports(st[IF_BODY])
            yield from _top_imports(st[IF_ORELSE])
        elif st[TAG] == "try":
            yield from _top_imports(st[TRY_BODY])
            for _n, body, _t in st[TRY_HANDLERS]:
                yield from _top_imports(body)


def dotted_imports(summary: Optional[dict]) -> List[str]:
    """The dotted modules a module's top level imports whole (``import a.b.c`` imports ``a.b.c``,
    though it binds only ``a``), also under an ``if`` or ``try``."""
    return [full for st in _top_imports((summary or {}).get("body", ())) if st[TAG] == "import"
            for _local, full, _as in st[IMPORT_NAMES] if "." in full]


def imported_modules(stmts) -> List[str]:
    """The modules statements import, at any depth (``import a.b``: ``a.b``; ``from a import b``:
    ``a`` and ``a.b``, which may be a module)."""
    out: List[str] = []
    for st in flat(stmts):
        if st[TAG] == "import":
            out.extend(full for _local, full, _as in st[IMPORT_NAMES])
        elif st[TAG] == "from":
            out.append(st[FROM_MODULE])
            out.extend(f"{st[FROM_MODULE]}.{attr}" for _local, attr in st[FROM_NAMES] if attr != "*")
    return out


def module_imports(summary: Optional[dict]) -> Dict[str, str]:
    """The names a module's top level binds by ``import`` / ``from ... import`` (also under an
    ``if`` or ``try``): local name -> the dotted name it stands for (``import a.b`` binds ``a``,
    ``from m import f as g`` binds ``g`` to ``m.f``)."""
    out: Dict[str, str] = {}
    for st in _top_imports((summary or {}).get("body", ())):
        if st[TAG] == "import":
            for local, full, has_as in st[IMPORT_NAMES]:
                out[local] = full if has_as else full.split(".")[0]
        else:
            for local, attr in st[FROM_NAMES]:
                if local != "*":
                    out[local] = f"{st[FROM_MODULE]}.{attr}"
    return out
