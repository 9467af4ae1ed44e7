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
    """Keep the findings whose fingerprint the baseline does not hold; return how many
    baseline entries matched nothing (fixed since the baseline was written)."""
    known: Dict[str, int] = {}
    for e in baseline.get("findings", []):
        fp = e.get("fingerprint") if isinstance(e, dict) else e
        if isinstance(fp, str):
            known[fp] = known.get(fp, 0) + 1
    matched = set()
    kept = []
    for f in report.findings:
        if f.fingerprint in known:
            matched.add(f.fingerprint)
        else:
            kept.append(f)
    report.findings = kept
    return sum(1 for fp in known if fp not in matched)


def baseline_json(report: Report) -> str:
    entries = [{"fingerprint": f.fingerprint, "code": f.code, "path": f.path} for f in report.findings]
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


def findings_at_revision(rev: str, cwd: Path, check: Callable[[Path], Report]) -> Set[str]:
    """Fingerprints of the same check on git revision ``rev`` (exported with ``git archive``
    into a temporary folder, so the repository itself is not touched): ``check(folder)`` runs
    it in the export's counterpart of ``cwd`` (the caller's ``run_check``, passed in so this
    module does not import the pipeline that imports it). Raises UsageError outside a git
    repository or for an unknown revision."""
    import subprocess   # only --diff needs these: not imported by every run
    import tarfile
    import tempfile

    def git(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True)

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
            proc = subprocess.run(["git", "archive", "--format=tar", rev], cwd=root, stdout=fh)
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
            return set()
        try:
            report = check(base_cwd)
        except UsageError:
            return set()
        return {f.fingerprint for f in report.findings}
