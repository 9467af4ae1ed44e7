#!/usr/bin/env python3
"""Benchmark: cold, warm and one-file-changed runs of `hermetic check` on real projects.

usage: python bench/run.py PROJECT_DIR [PROJECT_DIR ...]

Prints a table: wall time of a cold run (cache removed), a warm run (nothing changed), a run
after appending a function that opens a file to one source file (the change is undone
afterwards), and the peak resident memory of the cold run. Also the time of a bare libcst
parse of every file (the floor the analysis is compared with). Writes nothing but the
projects' own .hermetic_cache folders, which it removes again.
"""
from __future__ import annotations

import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

CHANGE = "\n\ndef _bench_added():\n    return open('bench.txt').read()\n"


def run(project: Path) -> tuple:
    t = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    subprocess.run([sys.executable, "-m", "hermetic", "check", "--format", "json", "--exit-zero"], cwd=project,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return time.perf_counter() - t, max(before, after) // 1024


def parse_floor(project: Path) -> float:
    code = ("import sys, libcst, pathlib\n"
            "for p in sorted(pathlib.Path(sys.argv[1]).rglob('*.py')):\n"
            "    try: libcst.parse_module(p.read_bytes())\n"
            "    except Exception: pass\n")
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", code, str(project)], check=False)
    return time.perf_counter() - t


def main(argv) -> int:
    if not argv:
        print(__doc__)
        return 2
    print(f"| project | parse floor | cold | warm | one changed | peak MiB (cold) |")
    print("|---|---|---|---|---|---|")
    for arg in argv:
        project = Path(arg).resolve()
        shutil.rmtree(project / ".hermetic_cache", ignore_errors=True)
        floor = parse_floor(project)
        cold, mem = run(project)
        warm, _ = run(project)
        target = next((p for p in sorted(project.rglob("*.py")) if "test" not in p.as_posix()), None)
        changed = float("nan")
        if target is not None:
            original = target.read_bytes()
            try:
                target.write_bytes(original + CHANGE.encode())
                changed, _ = run(project)
            finally:
                target.write_bytes(original)
        shutil.rmtree(project / ".hermetic_cache", ignore_errors=True)
        print(f"| {project.name} | {floor:.2f} s | {cold:.2f} s | {warm:.2f} s ({warm / cold:.0%}) | "
              f"{changed:.2f} s ({changed / cold:.0%}) | {mem} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
