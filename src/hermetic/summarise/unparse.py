"""Source text from summaries, for fix hints: an unparser of the summary's expression IR
and look-ups of calls and module-level bindings by position."""
from __future__ import annotations

from typing import Any, Dict, Optional

_BINOPS = {"Add": "+", "Subtract": "-", "Multiply": "*", "Divide": "/", "FloorDivide": "//", "Modulo": "%",
           "Power": "**", "MatrixMultiply": "@", "BitOr": "|", "BitAnd": "&", "BitXor": "^",
           "LeftShift": "<<", "RightShift": ">>"}


def unparse(e, subst: Optional[Dict[Any, str]] = None) -> str:
    """Python text for an expression IR; ``subst`` maps a name (or an env variable as
    ``("env", NAME)``) to replacement text."""
    subst = subst or {}
    k = e[0]
    if k == "name":
        return subst.get(e[1], e[1])
    if k == "lit":
        return repr(e[1])
    if k == "attr":
        if e[2] in subst and e[1][0] in ("name", "attr"):
            return subst[e[2]]
        return f"{unparse(e[1], subst)}.{e[2]}"
    if k == "call":
        env = _env_key(e)
        if env is not None and ("env", env) in subst:
            return subst[("env", env)]
        args = [unparse(a[1], subst) if a[0] == "star" else unparse(a, subst) for a in e[2]]
        args = [("*" + a) if x[0] == "star" else a for a, x in zip(args, e[2])]
        kws = [(f"**{unparse(v, subst)}" if n == "**" else f"{n}={unparse(v, subst)}") for n, v in e[3]]
        return f"{unparse(e[1], subst)}({', '.join(args + kws)})"
    if k == "sub":
        env = _env_key(e)
        if env is not None and ("env", env) in subst:
            return subst[("env", env)]
        return f"{unparse(e[1], subst)}[{unparse(e[2], subst)}]"
    if k == "bin":
        return f"{unparse(e[2], subst)} {_BINOPS.get(e[1], '?')} {unparse(e[3], subst)}"
    if k == "bool":
        return f" {e[1]} ".join(unparse(x, subst) for x in e[2])
    if k == "ifx":
        return f"{unparse(e[2], subst)} if {unparse(e[1], subst)} else {unparse(e[3], subst)}"
    if k == "fstr":
        out = []
        for p in e[1]:
            if p[0] == "lit" and isinstance(p[1], str):
                out.append(p[1].replace("{", "{{").replace("}", "}}"))
            else:
                out.append("{" + unparse(p, subst) + "}")
        return 'f"' + "".join(out).replace('"', '\\"') + '"'
    if k == "seq":
        inner = ", ".join(unparse(x, subst) for x in e[2])
        return {"list": f"[{inner}]", "tuple": f"({inner},)" if len(e[2]) == 1 else f"({inner})",
                "set": f"{{{inner}}}"}.get(e[1], inner)
    if k == "star":
        return unparse(e[1], subst)
    return "..."


def _env_key(e) -> Optional[str]:
    """The variable name of ``os.getenv("K")``, ``os.environ.get("K")``, ``os.environ["K"]``."""
    if e[0] == "call":
        f = e[1]
        name = _dotted(f)
        if name in ("os.getenv", "os.environ.get", "getenv", "environ.get") and e[2] and e[2][0][0] == "lit":
            return e[2][0][1]
    if e[0] == "sub" and _dotted(e[1]) in ("os.environ", "environ") and e[2][0] == "lit":
        return e[2][1]
    return None


def _dotted(e) -> str:
    from ..analyse.interp import _decorator_name

    return _decorator_name(e) if e[0] in ("name", "attr") else ""


def calls_in(node):
    """Every call expression in a summary fragment (statements or expressions), in order."""
    if isinstance(node, (list, tuple)):
        if node and node[0] == "call" and len(node) == 5:
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
        if node and node[0] == "call" and len(node) == 5 and list(node[4]) == list(pos):
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
        if st[0] == "assign":
            for t in st[1]:
                if t[0] == "name" and t[1] == name:
                    found = st[2]
    return found
