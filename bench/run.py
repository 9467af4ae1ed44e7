#!/usr/bin/env python3
"""Benchmark: cold, warm and one-file-changed runs of `hermetic check` against the libcst floor.

usage: python bench/run.py [--jobs N] [--change REL_PATH] PROJECT_DIR [PROJECT_DIR ...]

For each project, in one session:
- floor: reading and libcst-parsing every ``*.py`` file in N processes (N = --jobs, default
  the CPU count), nothing else: the floor a libcst tool cannot go below;
- cold: ``hermetic check`` with its cache removed; warm: the same again, nothing changed;
- one changed: after appending a function that opens a file to one source file (``--change``,
  default the first non-test file; the change is undone afterwards), compared byte for byte
  with a cold run of the same changed tree;
- files parsed and cache hits of each run (from ``--statistics``), and the peak resident
  memory of the largest process of the cold run (parent or parse worker).

Prints a Markdown table, then the exponent of time against lines fitted over the projects
(log-log least squares) when there are three or more. Writes nothing but the projects' own
.hermetic_cache folders, which it removes again.
"""
from __future__ import annotations

import argparse
import math
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import List, Optional, Tuple

CHANGE = "\n\ndef _bench_added():\n    return open('bench.txt').read()\n"

FLOOR = """
import sys, pathlib, libcst
from concurrent.futures import ProcessPoolExecutor

def parse(p):
    try:
        libcst.parse_module(pathlib.Path(p).read_bytes())
    except Exception:
        pass

files = sorted(str(p) for p in pathlib.Path(sys.argv[1]).rglob('*.py') if '.hermetic_cache' not in p.parts)
with ProcessPoolExecutor(int(sys.argv[2])) as ex:
    list(ex.map(parse, files, chunksize=8))
"""


def _check(project: Path, jobs: int, out: Path) -> Tuple[float, int, dict]:
    """One run: wall seconds, peak RSS (KiB) of its largest process, parsed statistics."""
    cmd = [sys.executable, "-c",
           "import resource, sys\nfrom hermetic.cli import main\ntry:\n    main()\nfinally:\n"
           "    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
           "    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
           "    sys.stderr.write(f'PEAK {max(own, kids)}\\n')\n",
           "check", "--format", "json", "--exit-zero", "--statistics", "--jobs", str(jobs), "-o", str(out)]
    t = time.perf_counter()
    done = subprocess.run(cmd, cwd=project, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t
    stats = {}
    m = re.search(r"files (\d+), parsed (\d+) in \d+ processes, cache hits (\d+)", done.stderr)
    if m:
        stats = {"files": int(m.group(1)), "parsed": int(m.group(2)), "hits": int(m.group(3))}
    peak = re.search(r"PEAK (\d+)", done.stderr)
    if done.returncode not in (0, 1) or not m:
        sys.stderr.write(done.stderr[-2000:])
    return wall, int(peak.group(1)) if peak else 0, stats


def _floor(project: Path, jobs: int) -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", FLOOR, str(project), str(jobs)], check=False)
    return time.perf_counter() - t


def _lines(project: Path) -> int:
    return sum(p.read_bytes().count(b"\n") for p in project.rglob("*.py") if ".hermetic_cache" not in p.parts)


def _target(project: Path, rel: Optional[str]) -> Optional[Path]:
    if rel and (project / rel).is_file():
        return project / rel
    return next((p for p in sorted(project.rglob("*.py")) if "test" not in p.relative_to(project).as_posix()), None)


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("projects", nargs="+", type=Path)
    ap.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                    else (os.cpu_count() or 1))
    ap.add_argument("--change", default=None, help="file to append a function to, relative to each project (where it exists)")
    args = ap.parse_args(argv)
    print(f"jobs {args.jobs}; times in seconds (ratio to the floor); memory in MiB")
    print()
    print("| project | files | lines | floor | cold | warm | one changed | identical | parsed cold/warm/changed | peak MiB |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    points = []
    scratch = Path(tempfile.mkdtemp(prefix="hermetic-bench-"))
    try:
        for project in args.projects:
            project = project.resolve()
            shutil.rmtree(project / ".hermetic_cache", ignore_errors=True)
            lines = _lines(project)
            floor = _floor(project, args.jobs)
            cold, peak, s_cold = _check(project, args.jobs, scratch / "cold.json")
            warm, _, s_warm = _check(project, args.jobs, scratch / "warm.json")
            target = _target(project, args.change)
            changed, same, s_changed = float("nan"), "n/a", {}
            if target is not None and target.is_file():
                original = target.read_bytes()
                try:
                    target.write_bytes(original + CHANGE.encode())
                    changed, _, s_changed = _check(project, args.jobs, scratch / "changed.json")
                    shutil.rmtree(project / ".hermetic_cache", ignore_errors=True)
                    _check(project, args.jobs, scratch / "changed-cold.json")
                    same = "yes" if ((scratch / "changed.json").read_bytes()
                                     == (scratch / "changed-cold.json").read_bytes()) else "NO"
                finally:
                    target.write_bytes(original)
            shutil.rmtree(project / ".hermetic_cache", ignore_errors=True)
            points.append((lines, cold))
            print(f"| {project.name} | {s_cold.get('files', '?')} | {lines:,} | {floor:.1f} | "
                  f"{cold:.1f} ({cold / floor:.1f}x) | {warm:.2f} ({warm / cold:.0%} of cold) | "
                  f"{changed:.1f} ({changed / cold:.0%} of cold) | {same} | "
                  f"{s_cold.get('parsed', '?')}/{s_warm.get('parsed', '?')}/{s_changed.get('parsed', '?')} | "
                  f"{peak // 1024} |", flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if len(points) >= 3:
        xs = [math.log(p[0]) for p in points]
        ys = [math.log(p[1]) for p in points]
        mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
        slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
        print(f"\ncold time ~ lines^{slope:.2f} (log-log least squares over {len(points)} projects)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
