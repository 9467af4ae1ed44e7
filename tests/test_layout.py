"""The package's layout: no import cycles, the analysis never imports the engine, the rules use
no private name of the analysis, and no module is over MAX_LINES lines.

The import graph is read from the source with ``ast``: every ``import`` and ``from ... import``
statement of a module, at module level and inside functions alike (a function-local import
still makes a cycle, it only hides it until the function runs).
"""
import ast
import re
from pathlib import Path
from typing import Dict, List, Set

import hermetic

PACKAGE = Path(hermetic.__file__).resolve().parent

MAX_LINES = 600   # docs/architecture.md: one responsibility a module

# packages whose modules make up the analysis, and the package they must not import
ANALYSIS_PACKAGES = ("hermetic.analyse", "hermetic.rules", "hermetic.summarise")
ENGINE = "hermetic.engine"


def _modules() -> Dict[str, Path]:
    """Dotted module name -> its file, for every module of the package (a package by its
    ``__init__.py``)."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _resolve(module: str, is_package: bool, level: int, name: str) -> str:
    """The absolute name ``from <level dots><name>`` means in ``module``."""
    if level == 0:
        return name
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[:len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def _imported(module: str, path: Path, known: Dict[str, Path]) -> Set[str]:
    """The package's modules that ``module`` imports anywhere in its file. ``from a import b``
    counts as importing ``a.b`` where that is a module, else ``a``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    out: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(module, is_package, node.level, node.module or "")
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for t in targets:
            # ``import a.b.c`` imports the longest of its prefixes that is one of ours
            while t and t not in known:
                t = t.rpartition(".")[0]
            if t and t != module:
                out.add(t)
    return out


def import_graph() -> Dict[str, Set[str]]:
    """Module -> the package's modules it imports (module-level and function-level imports)."""
    known = _modules()
    return {m: _imported(m, p, known) for m, p in known.items()}


def cycles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    out: List[List[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_graph_sees_module_level_and_function_level_imports():
    graph = import_graph()
    assert "hermetic.discover.patterns" in graph["hermetic.config"]          # module level
    assert "hermetic.engine.cache" in graph["hermetic.engine.workers"]       # inside a function
    assert "hermetic.analyse.interp" in graph["hermetic.analyse.runner"]     # from . import interp as I


def test_cycles_are_found():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    found = cycles(import_graph())
    assert not found, "import cycles: " + "; ".join(" <-> ".join(c) for c in found)


def test_the_analysis_never_imports_the_engine():
    offenders = sorted(
        f"{m} imports {t}"
        for m, targets in import_graph().items()
        if any(m == p or m.startswith(p + ".") for p in ANALYSIS_PACKAGES)
        for t in targets
        if t == ENGINE or t.startswith(ENGINE + ".")
    )
    assert not offenders, "; ".join(offenders)


# ``I._name`` / ``ip._name`` / ``runner._name``: a private name of the interpreter or the pytest model
_PRIVATE_USE = re.compile(r"\b(?:I|ip|interp|runner|R)\._[a-z]\w*")


def test_the_rules_and_the_report_use_no_private_name_of_the_analysis():
    offenders = []
    for m, path in _modules().items():
        if m.startswith(("hermetic.rules", "hermetic.report")):
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                offenders += [f"{path.name}:{n}: {x}" for x in _PRIVATE_USE.findall(line)]
    assert not offenders, "; ".join(offenders)


def test_no_module_is_over_the_line_limit():
    over = sorted(f"{m}: {n} lines" for m, p in _modules().items()
                  if (n := p.read_text(encoding="utf-8").count("\n")) > MAX_LINES)
    assert not over, "; ".join(over)
