"""Which findings a report keeps: rule code selection (``select`` / ``ignore``),
``per-file-ignores`` and inline suppressions (``# hermetic: ignore[HT102]``), and HT900 for the
suppressions that cannot or do not suppress anything."""
from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import TYPE_CHECKING, Dict, List, Optional, Set, Tuple

from ..config import Config
from ..rules.registry import RULES, severity
from .model import Finding

if TYPE_CHECKING:   # for the annotations only: the interpreter is not imported for them
    from ..analyse import interp as I


def wants(config: Config, codes) -> bool:
    return any(is_selected(c, config.select, config.ignore) for c in codes)


def is_selected(code: str, select: List[str], ignore: List[str]) -> bool:
    """The most specific matching prefix decides; between a select and an ignore of the same
    length the ignore wins (``--select HT1 --ignore HT1`` reports nothing, as in ruff)."""
    sel = max((len(p) for p in select if code.startswith(p)), default=-1)
    ign = max((len(p) for p in ignore if code.startswith(p)), default=-1)
    return sel >= 0 and sel > ign


def filter_findings(findings: List[Finding], config: Config, ip: I.Interp, root: Path, cwd: Path,
            report_unused: bool = False, def_lines: Optional[Dict[str, Tuple[str, int]]] = None) -> List[Finding]:
    """Apply select/ignore, per-file-ignores and inline suppressions; add HT900 for inline
    suppressions of HT4xx (always) and, with ``report_unused``, for suppressions that
    suppress nothing."""
    rank(findings, config)
    out = []
    supp_by_path: Dict[str, Dict[str, List[str]]] = {}
    for s in ip.p.summaries.values():
        supp_by_path[s["path"]] = s.get("suppressions", {})
    used: Set[Tuple[str, str]] = set()
    for f in findings:
        if not is_selected(f.code, config.select, config.ignore):
            continue
        rel = _rel_to(root, cwd, f.path)
        if any(fnmatch.fnmatch(rel, pat) and is_selected(f.code, pfx, []) for pat, pfx in config.per_file_ignores.items()):
            continue
        supp = supp_by_path.get(f.path, {})
        hit = None
        for ln in range(f.line, f.end_line + 1):
            codes = supp.get(str(ln), [])
            if codes and not f.code.startswith("HT4") and ("*" in codes or any(f.code.startswith(c) for c in codes)):
                hit = str(ln)
                break
        if hit is not None:
            used.add((f.path, hit))
            continue
        if f.tests and def_lines and not f.code.startswith("HT4"):
            # a suppression on a test's def line suppresses the finding for that test
            kept = []
            for t in f.tests:
                path, line = def_lines.get(t, ("", 0))
                codes = supp_by_path.get(path, {}).get(str(line), [])
                if codes and ("*" in codes or any(f.code.startswith(c) for c in codes)):
                    used.add((path, str(line)))
                else:
                    kept.append(t)
            if not kept:
                continue
            if len(kept) != len(f.tests):
                f.tests = kept
                f.maybe_tests = [t for t in f.maybe_tests if t in kept]
        out.append(f)
    for path, supp in sorted(supp_by_path.items()):
        for ln, codes in sorted(supp.items(), key=lambda kv: int(kv[0])):
            line = int(ln)
            ht4 = [c for c in codes if c.startswith("HT4")]
            unknown = [c for c in codes if c != "*" and not any(r.startswith(c) for r in RULES)]
            if ht4:   # reported whatever the flags (contract section 4)
                out.append(Finding("HT900", severity("HT900"), path, line, 1, line, 1,
                                   f"inline suppression of {', '.join(ht4)}: production-guard findings cannot be "
                                   f"suppressed inline", fix="list the test under [tool.hermetic.guard] exempt",
                                   anchor=f"ignore[{','.join(codes)}]"))
            elif unknown and report_unused:   # suppresses nothing: a misspelt code
                out.append(Finding("HT900", severity("HT900"), path, line, 1, line, 1,
                                   f"inline suppression of {', '.join(unknown)}: no rule has that code",
                                   fix="use a code `hermetic rules` lists", anchor=f"ignore[{','.join(codes)}]"))
            elif report_unused and (path, ln) not in used:
                out.append(Finding("HT900", severity("HT900"), path, line, 1, line, 1,
                                   f"inline suppression of {', '.join(codes)} suppresses nothing",
                                   fix="remove the comment", anchor=f"ignore[{','.join(codes)}]"))
    return [f for f in out if f.code != "HT900" or is_selected("HT900", config.select, config.ignore)]


def rank(findings: List[Finding], config: Config) -> None:
    """Make the benign reads notes (contract section 4): a finding whose ``benign`` names a
    variable of the benign list (``catalogue/benign.toml`` with ``[tool.hermetic.benign]``),
    or a duration while the catalogue counts durations benign. In place."""
    from ..catalogue.loader import load_benign

    benign = load_benign(config)
    for f in findings:
        if f.benign == "duration" and benign.durations:
            f.severity = "note"
        elif f.benign.startswith("env:") and f.benign[4:] in benign.env:
            f.severity = "note"


def at_confidence(findings: List[Finding], minimum: str) -> List[Finding]:
    """The findings at ``minimum`` confidence or above (``--min-confidence``): ``"high"``
    keeps the high ones, ``"medium"`` all."""
    return [f for f in findings if minimum != "high" or f.confidence == "high"]


def _rel_to(root: Path, cwd: Path, path: str) -> str:
    try:
        return (cwd / path).resolve().relative_to(root).as_posix()
    except ValueError:
        return path
