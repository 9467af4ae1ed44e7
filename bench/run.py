#!/usr/bin/env python3
"""Benchmark: `hermetic check` cold, warm and one-file-changed against the libcst floor, Fixit and ruff.

usage: python bench/run.py [--download WORK_DIR] [--repeat 3] [--jobs N] [--change REL_PATH] [--against PYTHON]
                           [--fixit PATH] [--ruff PATH] [--output FILE.md] [PROJECT_DIR ...]

Projects: with --download WORK_DIR, the pinned source distributions pytest 8.3.4, Django 5.1.4
and SQLAlchemy 2.0.36 are fetched from the package index (by plain HTTP, as ``pip download``
would build their metadata), checked against the sha256 pinned below, and unpacked afresh
into WORK_DIR, which must lie outside this repository (an sdist already in WORK_DIR with the
right hash is not fetched again). Any PROJECT_DIR given is benchmarked as well, as it is.

For each project, in one session, every time the median of --repeat runs (default 3), in
wall-clock seconds:
- floor 1p / floor Np: reading and libcst-parsing every ``*.py`` file, in one process and in
  N processes (N = --jobs, default the CPU count), nothing else: the floor a libcst tool
  cannot go below;
- cold: ``hermetic check --jobs N`` with its cache removed before each run, each run right
  after one of the floor Np runs (the machine's speed drifts, so ``cold / floor Np`` is the
  median of the runs' ratios to the floor run before each, not a ratio of the two medians);
- warm: the same again, nothing changed;
- one-file: after appending a function that opens a file to one source file (pinned per
  project; --change, or the first non-test file, elsewhere; undone afterwards), from a warm
  cache; its report is compared byte for byte with a cold run of the same changed tree;
- files parsed by the warm and one-file runs (from ``--timings``), and the peak resident
  memory in MiB of the largest process (the parent or any of its workers) over the cold runs;
- Fixit (``fixit lint DIR``, its default rules; pytest tree only, as it takes minutes on
  the larger ones) and ruff (``ruff check --isolated --no-cache``, ruff's default rules),
  when their executables are found (--fixit / --ruff, else beside this Python, else on PATH).
  Both are optional and not dependencies of hermetic: install them into a separate
  environment, e.g. ``python3 -m venv /root/bench-venv && /root/bench-venv/bin/pip install fixit ruff``.

With --against PYTHON, instead: the same cold, warm and one-file figures for this hermetic
and for the one installed beside PYTHON (e.g. a virtual environment holding a build of an
earlier commit), each pair of runs back to back, with the relative difference and whether
the two builds' reports are byte for byte the same: how a refactor is shown to cost no time.

Prints one Markdown table (ratios: cold / floor Np, warm / cold, one-file / cold), then the
exponent of cold time against lines fitted over the projects (log-log least squares) when
there are three or more, then the date, machine and hermetic version. --output also writes
that text, after a preamble with the command line, to a file (docs/performance.md).
Writes nothing else but WORK_DIR, the projects' .hermetic_cache folders, which it removes,
and hermetic's own bytecode (``__pycache__`` beside its sources, as a wheel install has it).
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import math
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

REPO = Path(__file__).resolve().parent.parent
INDEX = "https://pypi.org/simple"

# name on the index, sdist file name, sha256, file the one-file change goes to
PINNED = [
    ("pytest", "pytest-8.3.4.tar.gz",
     "965370d062bce11e73868e0335abac31b4d3de0e82f4007408d242b4f8610761", "src/_pytest/tmpdir.py"),
    ("django", "Django-5.1.4.tar.gz",
     "de450c09e91879fa5a307f696e57c851955c910a438a35e6b4c895e86bedc82a", "django/core/files/storage/filesystem.py"),
    ("sqlalchemy", "sqlalchemy-2.0.36.tar.gz",
     "7f2767680b6d2398aea7082e45a774b2b0767b5c8d8ffb9c8b683088ea9b29c5", "lib/sqlalchemy/util/langhelpers.py"),
]
FIXIT_ON = ("pytest",)  # project folder names starting with one of these get a Fixit run

# appended to one file; each repetition's text differs, as the cache is keyed by file content
CHANGE = "\n\ndef _bench_added_{}():\n    return open('bench.txt').read()\n"

FLOOR = """
import sys, pathlib, libcst
from concurrent.futures import ProcessPoolExecutor

def parse(p):
    try:
        libcst.parse_module(pathlib.Path(p).read_bytes())
    except Exception:
        pass

files = sorted(str(p) for p in pathlib.Path(sys.argv[1]).rglob('*.py') if '.hermetic_cache' not in p.parts)
if sys.argv[2] == '1':
    for f in files:
        parse(f)
else:
    with ProcessPoolExecutor(int(sys.argv[2])) as ex:
        list(ex.map(parse, files, chunksize=8))
"""

RUN_HERMETIC = "from hermetic.__main__ import main\nmain()\n"   # what the console script runs


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fetch(work: Path) -> List[Tuple[Path, str]]:
    """The pinned sdists, fetched if need be, verified and unpacked afresh: (tree, file to change)."""
    work = work.resolve()
    if work == REPO or REPO in work.parents:
        sys.exit(f"bench: the work folder {work} must lie outside the repository")
    work.mkdir(parents=True, exist_ok=True)
    trees = []
    for name, filename, sha, change in PINNED:
        sdist = work / filename
        if not sdist.is_file() or _sha256(sdist) != sha:
            page = urllib.request.urlopen(f"{INDEX}/{name}/", timeout=60).read().decode()
            url = next(u for u in re.findall(r'href="([^"]+)"', page) if u.split("#")[0].endswith("/" + filename))
            print(f"bench: fetching {filename}", file=sys.stderr)
            with urllib.request.urlopen(url.split("#")[0], timeout=300) as r:
                sdist.write_bytes(r.read())
        if _sha256(sdist) != sha:
            sys.exit(f"bench: {filename} does not have the pinned sha256 {sha}")
        tree = work / filename[: -len(".tar.gz")]
        shutil.rmtree(tree, ignore_errors=True)
        with tarfile.open(sdist) as tar:
            if hasattr(tarfile, "data_filter"):
                tar.extractall(work, filter="data")
            else:
                tar.extractall(work)
        if not tree.is_dir():
            sys.exit(f"bench: {filename} did not unpack into {tree}")
        trees.append((tree, change))
    return trees


def _median(n: int, run: Callable[[], float]) -> float:
    return statistics.median(run() for _ in range(n))


def _timed(cmd: List[str], cwd: Optional[Path] = None) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - t


def _check(project: Path, jobs: int, out: Path, python: str = sys.executable) -> Tuple[float, int, Dict[str, int]]:
    """One hermetic run: wall seconds, peak RSS (KiB) of its largest process, its statistics.
    ``python`` is the interpreter whose installed hermetic runs."""
    cmd = [python, "-c", RUN_HERMETIC,
           "check", "--format", "json", "--exit-zero", "--timings", "--jobs", str(jobs), "-o", str(out)]
    with tempfile.TemporaryFile(mode="w+") as err:
        t = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=project, stdout=subprocess.DEVNULL, stderr=err, text=True)
        # the largest of the process and the descendants it waited for (Linux's wait4 reports both)
        _pid, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read()
    stats = {}
    m = re.search(r"files (\d+), parsed (\d+) in \d+ process(?:es)?, cache hits (\d+)", stderr)
    if m:
        stats = {"files": int(m.group(1)), "parsed": int(m.group(2)), "hits": int(m.group(3))}
    if proc.returncode not in (0, 1) or not m:
        sys.stderr.write(stderr[-2000:])
    return wall, usage.ru_maxrss, stats


def _compile_hermetic() -> None:
    """Write hermetic's bytecode beside its sources, as installing a wheel does (an editable
    install under PYTHONDONTWRITEBYTECODE would otherwise compile every module on every run)."""
    import compileall

    import hermetic

    compileall.compile_dir(str(Path(hermetic.__file__).parent), quiet=1)


def _lines(project: Path) -> int:
    return sum(p.read_bytes().count(b"\n") for p in project.rglob("*.py") if ".hermetic_cache" not in p.parts)


def _target(project: Path, rel: Optional[str]) -> Optional[Path]:
    if rel and (project / rel).is_file():
        return project / rel
    return next((p for p in sorted(project.rglob("*.py")) if "test" not in p.relative_to(project).as_posix()), None)


def _tool(given: Optional[str], name: str) -> Optional[str]:
    if given:
        return given
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.is_file() else shutil.which(name)


def bench(project: Path, change: Optional[str], args: argparse.Namespace, scratch: Path) -> Tuple[str, int, float]:
    """One table row, the project's lines and its cold time."""
    n, jobs, cache = args.repeat, args.jobs, project / ".hermetic_cache"
    shutil.rmtree(cache, ignore_errors=True)
    lines = _lines(project)
    floor1 = _median(n, lambda: _timed([sys.executable, "-c", FLOOR, str(project), "1"]))
    floorns, colds = [], []
    for _ in range(n):   # in pairs: the machine's speed drifts, and the ratio compares the two
        floorns.append(_timed([sys.executable, "-c", FLOOR, str(project), str(jobs)]))
        shutil.rmtree(cache, ignore_errors=True)
        colds.append(_check(project, jobs, scratch / "cold.json"))
    floorn = statistics.median(floorns)
    cold, peak, s_cold = statistics.median(c[0] for c in colds), max(c[1] for c in colds), colds[-1][2]
    ratio = statistics.median(c[0] / f for c, f in zip(colds, floorns))   # pair by pair, as measured
    warms = [_check(project, jobs, scratch / "warm.json") for _ in range(n)]
    warm, s_warm = statistics.median(w[0] for w in warms), warms[-1][2]
    target = _target(project, change)
    one, same, s_one = float("nan"), "n/a", {}
    if target is not None:
        original = target.read_bytes()
        try:
            ones = []
            for i in range(n):
                target.write_bytes(original + CHANGE.format(i).encode())
                ones.append(_check(project, jobs, scratch / "one.json"))
                target.write_bytes(original)
                _check(project, jobs, scratch / "rewarm.json")
            one, s_one = statistics.median(o[0] for o in ones), ones[-1][2]
            target.write_bytes(original + CHANGE.format(n - 1).encode())
            shutil.rmtree(cache, ignore_errors=True)
            _check(project, jobs, scratch / "one-cold.json")
            same = "yes" if (scratch / "one.json").read_bytes() == (scratch / "one-cold.json").read_bytes() else "NO"
        finally:
            target.write_bytes(original)
    shutil.rmtree(cache, ignore_errors=True)
    fixit, ruff = "n/a", "n/a"
    if not project.name.lower().startswith(FIXIT_ON):
        fixit = "not run"
    elif args.fixit:
        fixit = f"{_median(n, lambda: _timed([args.fixit, 'lint', str(project)], cwd=project)):.1f}"
    if args.ruff:
        ruff = f"{_median(n, lambda: _timed([args.ruff, 'check', '--isolated', '--no-cache', '--exit-zero', str(project)], cwd=project)):.2f}"
    row = (f"| {project.name} | {lines:,} | {s_cold.get('files', '?')} | {floor1:.1f} | {floorn:.1f} | "
           f"{cold:.1f} | {warm:.2f} | {one:.2f} | {ratio:.1f}x | {warm / cold:.0%} | {one / cold:.0%} | "
           f"{s_warm.get('parsed', '?')} / {s_one.get('parsed', '?')} | {same} | {peak // 1024} | {fixit} | {ruff} |")
    return row, lines, cold


def against(project: Path, change: Optional[str], args: argparse.Namespace, scratch: Path) -> str:
    """One row of the before/after table: cold, warm and one-file times of this hermetic
    against the one installed for ``args.against``, the two runs of each figure taken one
    right after the other (the machine's speed drifts), medians of --repeat pairs, and whether
    the two builds' reports are byte-identical."""
    n, jobs, cache = args.repeat, args.jobs, project / ".hermetic_cache"
    builds = {"new": sys.executable, "old": args.against}
    times: Dict[Tuple[str, str], List[float]] = {(b, k): [] for b in builds for k in ("cold", "warm", "one")}
    same = True
    target = _target(project, change)
    original = target.read_bytes() if target is not None else b""
    try:
        for i in range(n):
            # each figure's pair back to back, new first in even rounds and old first in odd ones
            # (whichever runs second after the cache is cleared finds the file system warmer)
            for b, python in (list(builds.items()) if i % 2 == 0 else list(builds.items())[::-1]):
                shutil.rmtree(cache, ignore_errors=True)
                times[b, "cold"].append(_check(project, jobs, scratch / f"cold-{b}.json", python)[0])
                times[b, "warm"].append(_check(project, jobs, scratch / f"warm-{b}.json", python)[0])
                if target is not None:
                    target.write_bytes(original + CHANGE.format(i).encode())
                    times[b, "one"].append(_check(project, jobs, scratch / f"one-{b}.json", python)[0])
                    target.write_bytes(original)
            same = same and all((scratch / f"{k}-new.json").read_bytes() == (scratch / f"{k}-old.json").read_bytes()
                                for k in ("cold", "warm") + (("one",) if target is not None else ()))
    finally:
        if target is not None:
            target.write_bytes(original)
        shutil.rmtree(cache, ignore_errors=True)

    def cell(kind: str) -> str:
        new, old = times["new", kind], times["old", kind]
        if not new:
            return "n/a"
        mn, mo = statistics.median(new), statistics.median(old)
        return f"{mn:.2f} / {mo:.2f} ({mn / mo - 1:+.1%})"
    return f"| {project.name} | {cell('cold')} | {cell('warm')} | {cell('one')} | {'yes' if same else 'NO'} |"


def _version(tool: Optional[str]) -> str:
    if not tool:
        return "n/a"
    done = subprocess.run([tool, "--version"], capture_output=True, text=True, check=False)
    return done.stdout.strip().split()[-1] if done.stdout.strip() else "?"


def _about(args: argparse.Namespace) -> str:
    """Date, machine, the hermetic that ran (version, git commit of its source), Fixit and ruff versions."""
    where = subprocess.run([sys.executable, "-c", "import hermetic, importlib.metadata as m;"
                            "print(m.version('hermetic')); print(hermetic.__file__)"],
                           capture_output=True, text=True, check=False).stdout.split()
    version, src = (where + ["?", "."])[:2]
    git = ["git", "-C", str(Path(src).parent)]
    commit = subprocess.run(git + ["rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(git + ["status", "--porcelain", "--", "."], capture_output=True, text=True).stdout.strip()
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%a %b %d %H:%M:%S UTC %Y")
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (f"{date}; {cpus} CPUs, {platform.platform()}, Python {platform.python_version()}; "
            f"hermetic {version} at {commit or 'unknown commit'}{' (modified)' if dirty else ''}; "
            f"Fixit {_version(args.fixit)}, ruff {_version(args.ruff)}")


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("projects", nargs="*", type=Path)
    ap.add_argument("--download", type=Path, metavar="WORK_DIR", help="fetch and bench the pinned sdists here")
    ap.add_argument("--repeat", type=int, default=3, help="runs per timed figure; the median is shown")
    ap.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                    else (os.cpu_count() or 1))
    ap.add_argument("--change", default=None, help="file to append a function to, relative to each PROJECT_DIR")
    ap.add_argument("--fixit", help="Fixit executable (default: beside this Python, else on PATH)")
    ap.add_argument("--ruff", help="ruff executable (default: beside this Python, else on PATH)")
    ap.add_argument("--output", type=Path, help="also write the results, with a preamble, to this Markdown file")
    ap.add_argument("--against", metavar="PYTHON",
                    help="instead of the table above: this hermetic against the one PYTHON has installed "
                         "(cold, warm, one-file, each pair back to back; reports compared byte for byte)")
    args = ap.parse_args(argv)
    if not args.projects and not args.download:
        ap.error("give PROJECT_DIR or --download WORK_DIR")
    args.fixit, args.ruff = _tool(args.fixit, "fixit"), _tool(args.ruff, "ruff")
    projects = (fetch(args.download) if args.download else []) + [(p.resolve(), args.change) for p in args.projects]

    _compile_hermetic()
    if args.against:
        subprocess.run([args.against, "-c", "import compileall, hermetic, pathlib;"
                        "compileall.compile_dir(str(pathlib.Path(hermetic.__file__).parent), quiet=1)"], check=True)
        print(f"Wall-clock seconds, median of {args.repeat} pairs; N = {args.jobs} processes; "
              f"new = {sys.executable}, old = {args.against}.\n", flush=True)
        print("| project | cold new / old | warm new / old | one-file new / old | reports identical |\n"
              + "|---" * 5 + "|", flush=True)
        scratch = Path(tempfile.mkdtemp(prefix="hermetic-bench-"))
        try:
            for project, change in projects:
                print(against(project, change, args, scratch), flush=True)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        print("\n" + _about(args))
        return 0
    out: List[str] = []

    def say(line: str = "") -> None:
        out.append(line)
        print(line, flush=True)

    say(f"Wall-clock seconds, median of {args.repeat}; N = {args.jobs} processes; memory in MiB.")
    say()
    say("| project | lines | files | floor 1p | floor Np | cold | warm | one-file | cold / floor Np | warm / cold "
        "| one-file / cold | parsed warm / one-file | identical | peak MiB | Fixit | ruff |")
    say("|---" * 16 + "|")
    points = []
    scratch = Path(tempfile.mkdtemp(prefix="hermetic-bench-"))
    try:
        for project, change in projects:
            row, lines, cold = bench(project, change, args, scratch)
            say(row)
            points.append((lines, cold))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    say()
    say("floor: reading and libcst-parsing every *.py file and nothing else. cold: cache removed before each run; "
        "cold / floor Np: the median of each cold run's ratio to the floor run just before it; "
        "warm: nothing changed; one-file: a function that opens a file appended to one source file, from a warm "
        "cache; identical: its report is byte for byte that of a cold run of the changed tree. "
        "Fixit: `fixit lint`, its default rules (pytest tree only); "
        "ruff: `ruff check --isolated --no-cache`, ruff's default rules; n/a where not installed.")
    if len(points) >= 3:
        xs = [math.log(p[0]) for p in points]
        ys = [math.log(p[1]) for p in points]
        mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
        slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
        say()
        say(f"cold time ~ lines^{slope:.2f} (log-log least squares over {len(points)} projects)")
    say()
    say(_about(args))
    if args.output:
        command = " ".join(shlex.quote(a) for a in ["python", "bench/run.py", *argv])
        args.output.write_text("# Performance\n\nProduced by one run of `" + command + "` from the repository root "
                               "(see the docstring of bench/run.py for what each figure is).\n\n"
                               + "\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
