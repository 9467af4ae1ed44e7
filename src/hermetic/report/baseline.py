"""Findings across time: fingerprints (``hermetic/v1:`` + 32 hex digits, stable across runs
and edits elsewhere), baselines (``--baseline`` / ``--write-baseline``), the findings touching
changed files (``--touching``) and the fingerprints at a git revision (``--diff``)."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Callable, Dict, List, Optional, Set

from ..discover.targets import UsageError, display_path
from .model import Finding, Report


def baseline_problem(data) -> Optional[str]:
    """Why ``data`` (a parsed JSON file) is not a baseline ``baseline_json`` writes, or None:
    ``{"version": 1, "findings": [{"fingerprint": "hermetic/v1:..."}, ...]}``, each entry a
    fingerprint or an object holding one."""
    if not isinstance(data, dict) or not isinstance(data.get("findings"), list):
        return "not a hermetic baseline (an object with a \"findings\" list)"
    if data.get("version") != 1:
        return f"baseline version {data.get('version')!r}; this hermetic reads version 1"
    for e in data["findings"]:
        fp = e.get("fingerprint") if isinstance(e, dict) else e
        if not isinstance(fp, str) or not fp.startswith("hermetic/v1:"):
            return f"an entry without a hermetic fingerprint: {json.dumps(e)[:80]}"
    return None


def apply_baseline(report: Report, baseline: dict) -> int:
    """Keep the new findings (``is_new``) against the baseline's entries; return how many
    baseline entries matched nothing (fixed since the baseline was written)."""
    known: Dict[str, Optional[Set[str]]] = {}
    for e in baseline.get("findings", []):
        fp = e.get("fingerprint") if isinstance(e, dict) else e
        if isinstance(fp, str):
            tests = e.get("tests") if isinstance(e, dict) else None
            _know(known, fp, tests if isinstance(tests, list) else None)
    matched = set()
    kept = []
    for f in report.findings:
        if f.fingerprint in known:
            matched.add(f.fingerprint)
        if is_new(f, known):
            kept.append(f)
    report.findings = kept
    return sum(1 for fp in known if fp not in matched)


def _know(known: Dict[str, Optional[Set[str]]], fp: str, tests: Optional[List[str]]) -> None:
    """Add an entry: ``tests`` None (an entry that does not say) covers every test."""
    if fp in known and known[fp] is None:
        return
    known[fp] = None if tests is None else (known.get(fp) or set()) | set(tests)


def is_new(f: Finding, known: Dict[str, Optional[Set[str]]]) -> bool:
    """Contract section 8: a finding is new when its fingerprint is not ``known``, or when it
    lists a test the known finding did not (a deleted ``monkeypatch.setenv`` exposes a sink
    another test already reached). ``known``: fingerprint -> its tests (None: any)."""
    if f.fingerprint not in known:
        return True
    tests = known[f.fingerprint]
    return tests is not None and any(t not in tests for t in f.tests)


def known_findings(findings: List[Finding]) -> Dict[str, Optional[Set[str]]]:
    """``is_new``'s ``known`` for the findings of a run (``--diff``'s revision)."""
    known: Dict[str, Optional[Set[str]]] = {}
    for f in findings:
        _know(known, f.fingerprint, list(f.tests))
    return known


def baseline_json(report: Report) -> str:
    entries = [{"fingerprint": f.fingerprint, "code": f.code, "path": f.path, "tests": list(f.tests)}
               for f in report.findings]
    return json.dumps({"version": 1, "tool": "hermetic", "findings": entries}, indent=2) + "\n"


def set_fingerprints(findings: List[Finding]) -> None:
    counts: Dict[str, int] = {}
    for f in findings:
        o = f.origin or {}
        basis = "\x1f".join([f.code, f.path, f.function, " ".join(f.anchor.split()), str(o.get("kind", "")),
                             str(o.get("expression", ""))])
        n = counts.get(basis, 0)
        counts[basis] = n + 1
        f.fingerprint = "hermetic/v1:" + hashlib.sha256(f"{basis}\x1f{n}".encode()).hexdigest()[:32]


def touching_files(findings: List[Finding], changed: List[str], cwd: Path) -> List[Finding]:
    """The findings whose anchor, trace or origin lies in one of the changed files."""
    rel = {display_path(Path(c), cwd.resolve()) for c in changed}

    def touches(f: Finding) -> bool:
        paths = {f.path} | {s.path for s in f.trace} | {t.split("::", 1)[0] for t in f.tests}
        if f.origin and f.origin.get("path"):
            paths.add(f.origin["path"])
        return bool(paths & rel)

    return [f for f in findings if touches(f)]


def findings_at_revision(rev: str, cwd: Path, check: Callable[[Path], Report]) -> Dict[str, Optional[Set[str]]]:
    """The findings (``known_findings``: fingerprint -> tests) of the same check on git revision ``rev`` (exported with ``git archive``
    into a temporary folder, so the repository itself is not touched): ``check(folder)`` runs
    it in the export's counterpart of ``cwd`` (the caller's ``run_check``, passed in so this
    module does not import the pipeline that imports it). Raises UsageError outside a git
    repository or for an unknown revision."""
    import subprocess   # only --diff needs these: not imported by every run
    import tarfile
    import tempfile

    # running git is what --diff is for; its tests run it on repositories they make in tmp_path
    def git(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True)  # hermetic: ignore[HT106]

    top = git("rev-parse", "--show-toplevel")
    if top.returncode != 0:
        raise UsageError("--diff needs a git repository: " + (top.stderr.decode(errors="replace").strip().splitlines()
                                                              or ["not a git repository"])[-1])
    if git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}").returncode != 0:
        raise UsageError(f"--diff: unknown revision {rev!r}")
    root = Path(top.stdout.decode().strip())
    sub = cwd.resolve().relative_to(root.resolve())
    with tempfile.TemporaryDirectory(prefix="hermetic-diff-") as tmp:
        archive = Path(tmp) / "rev.tar"
        with archive.open("wb") as fh:
            proc = subprocess.run(["git", "archive", "--format=tar", rev], cwd=root, stdout=fh)  # hermetic: ignore[HT106]
        if proc.returncode != 0:
            raise UsageError(f"--diff: cannot export revision {rev!r}")
        tree = Path(tmp) / "tree"
        with tarfile.open(archive) as tar:
            if hasattr(tarfile, "data_filter"):
                tar.extractall(tree, filter="data")
            else:  # pragma: no cover - Python < 3.12 without the filter backport
                tar.extractall(tree)
        base_cwd = tree / sub
        if not base_cwd.is_dir():
            return {}
        try:
            report = check(base_cwd)
        except UsageError:
            return {}
        return known_findings(report.findings)
