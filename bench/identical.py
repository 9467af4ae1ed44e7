#!/usr/bin/env python3
"""Reports byte for byte: run ``hermetic check`` on many projects, keep every output, compare.

usage: python bench/identical.py --out DIR [--against REF_DIR] [--rule-help-may-differ] [--hermetic CMD]
                                 [--jobs N] [--no-fixtures] [--no-cases] [PROJECT_DIR ...]

For each project (every folder of ``fixtures/``, every case of ``../shared/cases/`` when it is
there, and each PROJECT_DIR given, e.g. the unpacked suites of ``../shared/real-world.md``), one
``hermetic check --no-cache`` run in the project's folder writes the report in every format
(text, json, sarif, github, markdown, junit) into ``DIR/<project>/``, with the exit status;
for the fixture projects and the cases, ``hermetic inventory --format json`` and the
``--show-unresolved --show-unknown`` text report are kept too.

With --against REF_DIR (the DIR of an earlier run, e.g. made with ``--hermetic`` naming the
executable of another checkout), every file is compared byte for byte, each difference is
listed (file and first differing line) and the exit status is 1 when any differ;
--rule-help-may-differ lets a SARIF report differ in its rules' help text only (a change to
the rules' documentation, which SARIF carries), and counts those apart. A refactor
that must not change one byte of any report is checked this way: record with the old
checkout's executable, then compare with the new one.

CMD defaults to ``hermetic`` beside this Python. Writes nothing but DIR (the runs use
``--no-cache``).
"""
from __future__ import annotations

import argparse
import filecmp
import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List, Tuple

HERE = Path(__file__).resolve().parent.parent
FORMATS = ("json", "sarif", "github", "markdown", "junit")


def projects(args) -> List[Tuple[str, Path]]:
    """``(name, folder)`` of every project to run, in a stable order."""
    out: List[Tuple[str, Path]] = []
    if not args.no_fixtures:
        out += [(f"fixtures-{p.name}", p) for p in sorted((HERE / "fixtures").iterdir()) if p.is_dir()]
    cases = HERE.parent / "shared" / "cases"
    if not args.no_cases and cases.is_dir():
        out += [(f"case-{p.name}", p) for p in sorted(cases.iterdir()) if p.is_dir()]
    out += [(f"project-{Path(p).resolve().name}", Path(p).resolve()) for p in args.projects]
    return out


def run(cmd: List[str], cwd: Path, dest: Path, stem: str) -> None:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=1800)
    (dest / f"{stem}.stdout").write_text(proc.stdout, encoding="utf-8")
    (dest / f"{stem}.exit").write_text(f"{proc.returncode}\n", encoding="utf-8")


def record(args) -> None:
    base = shlex.split(args.hermetic)
    out = Path(args.out).resolve()
    shutil.rmtree(out, ignore_errors=True)
    for name, folder in projects(args):
        dest = out / name
        dest.mkdir(parents=True)
        extra = [a for fmt in FORMATS for a in ("--output-file", f"{fmt}={dest / ('report.' + fmt)}")]
        run(base + ["check", "--no-cache", "--jobs", str(args.jobs), "--exit-zero"] + extra, folder, dest, "check")
        if not name.startswith("project-"):
            run(base + ["check", "--no-cache", "--jobs", "1", "--show-unresolved", "--show-unknown"],
                folder, dest, "check-show")
            run(base + ["inventory", "--format", "json"], folder, dest, "inventory")
        print(f"{name}: recorded", file=sys.stderr)


def first_difference(a: Path, b: Path) -> str:
    la = a.read_text(encoding="utf-8", errors="replace").splitlines()
    lb = b.read_text(encoding="utf-8", errors="replace").splitlines()
    for i, (x, y) in enumerate(zip(la, lb), 1):
        if x != y:
            return f"line {i}: {x[:120]!r} != {y[:120]!r}"
    return f"{len(la)} lines != {len(lb)} lines"


def _without_rule_help(path: Path):
    """A SARIF report with each rule's ``help`` (the rule's documentation, examples included) left out."""
    data = json.loads(path.read_text(encoding="utf-8"))
    for run in data.get("runs", []):
        for rule in run.get("tool", {}).get("driver", {}).get("rules", []):
            rule.pop("help", None)
    return data


def compare(out: Path, ref: Path, rule_help_may_differ: bool = False) -> int:
    differ = help_only = 0
    names = sorted({p.relative_to(out) for p in out.rglob("*") if p.is_file()}
                   | {p.relative_to(ref) for p in ref.rglob("*") if p.is_file()})
    for rel in names:
        a, b = ref / rel, out / rel
        if not a.exists() or not b.exists():
            print(f"{rel}: only in {'the new run' if b.exists() else 'the reference'}")
            differ += 1
        elif not filecmp.cmp(a, b, shallow=False):
            if rule_help_may_differ and rel.suffix == ".sarif" and _without_rule_help(a) == _without_rule_help(b):
                help_only += 1
                continue
            print(f"{rel}: differs, {first_difference(a, b)}")
            differ += 1
    print(f"{len(names)} files compared, {differ} differ"
          + (f", {help_only} SARIF reports differ only in the rules' help text" if rule_help_may_differ else ""))
    return 1 if differ else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("projects", nargs="*")
    ap.add_argument("--out", required=True)
    ap.add_argument("--against")
    ap.add_argument("--hermetic", default=shlex.quote(str(Path(sys.executable).parent / "hermetic")))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--no-fixtures", action="store_true")
    ap.add_argument("--no-cases", action="store_true")
    ap.add_argument("--rule-help-may-differ", action="store_true",
                    help="a SARIF report that differs only in its rules' help text (their documentation) counts as the same")
    args = ap.parse_args(argv)
    record(args)
    if not args.against:
        return 0
    return compare(Path(args.out).resolve(), Path(args.against).resolve(), args.rule_help_may_differ)


if __name__ == "__main__":
    sys.exit(main())
