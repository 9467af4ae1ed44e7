"""Draw the seeded samples of findings that fresh readers judge (docs/real-world.md).

    python bench/sample.py REPORT.json PROJECT OUT.md

writes three sets of one project's JSON report (``hermetic check --format json``) as one
Markdown file, each finding under a heading ``PROJECT-A<n>``, ``PROJECT-B<n>`` or ``PROJECT-N<n>``:

- A, the precision sample: ``random.Random(3)``, stratified by rule code (each code's findings
  shuffled, then taken one per code in code order, round after round), 20 findings or all;
- B, the errors of a default run: the same drawing over the errors, ``random.Random(4)``;
- N, every note.

A finding in several sets is written once, under its first heading; the later headings name it
(``PROJECT-B3 = PROJECT-A7``), so each finding is judged once and counted in every set.
"""
from __future__ import annotations

import json
import random
import sys
from collections import defaultdict
from typing import Dict, List


def stratified(findings: List[dict], seed: int, size: int = 20) -> List[dict]:
    """``size`` findings (or all), drawn with ``random.Random(seed)``, stratified by code."""
    rng = random.Random(seed)
    groups: Dict[str, List[dict]] = defaultdict(list)
    for f in findings:
        groups[f["code"]].append(f)
    for code in sorted(groups):
        rng.shuffle(groups[code])
    picked: List[dict] = []
    while len(picked) < min(size, len(findings)):
        for code in sorted(groups):
            if groups[code] and len(picked) < size:
                picked.append(groups[code].pop())
    return picked


def _key(f: dict) -> tuple:
    return (f["code"], f["path"], f["line"], f["column"], f["message"])


def _entry(name: str, f: dict) -> str:
    trace = " -> ".join(f"{t['path']}:{t['line']} {t['function']}" for t in f["trace"])
    tests = f["tests"]
    shown = ", ".join(tests[:40]) + (" ..." if len(tests) > 40 else "")
    return (f"## {name}\n\n- code: {f['code']} ({f['severity']}, confidence {f['confidence']})\n"
            f"- at: {f['path']}:{f['line']}\n- message: {f['message']}\n"
            f"- origin: {json.dumps(f.get('origin'))}\n- fix: {f.get('fix')}\n"
            f"- trace: {trace}\n- tests ({len(tests)}): {shown}\n\n")


def main(argv: List[str]) -> int:
    report, project, out = argv
    with open(report, encoding="utf-8") as fh:
        findings = json.load(fh)["findings"]
    sets = [("A", stratified(findings, 3)),
            ("B", stratified([f for f in findings if f["severity"] == "error"], 4)),
            ("N", [f for f in findings if f["severity"] == "note"])]
    first: Dict[tuple, str] = {}
    parts = []
    for label, chosen in sets:
        for i, f in enumerate(chosen, 1):
            name = f"{project}-{label}{i}"
            if _key(f) in first:
                parts.append(f"## {name} = {first[_key(f)]}\n\n")
            else:
                first[_key(f)] = name
                parts.append(_entry(name, f))
    with open(out, "w", encoding="utf-8") as fh:
        fh.write("".join(parts))
    print(f"{project}: {sum(len(c) for _, c in sets)} drawn, {len(first)} to judge")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
