"""Hostile input: a project full of files that cannot be read, decoded or parsed, odd file
system entries and dynamic code, checked end to end. Whatever the input, a run exits 0 or 1,
prints no traceback, writes a JSON report that parses, lists every bad file under ``errors``
with a one-line message, still reports the finding of the good part of the project, ends, and
leaves the analysed tree as it was (apart from its cache folder).

The property tests are bounded for CI (``pytest --fuzz-examples``, 25 by default); a longer run
raises the bound (README, "Speed, cache and hostile input"). A command-line option, not an
environment variable: this suite's tests read nothing of the real environment.

Every run is guarded: the CLI runs in a daemon thread that must end within ``GUARD`` seconds,
and the project's ``file-timeout`` bounds one file's parse, so a hang is a failing test, never a
dead CI run.
"""
import ast
import errno
import hashlib
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import hypothesmith
import jsonschema
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings, strategies as st

import hermetic
from hermetic.cli import cli

from helpers import FIXTURES, copy_fixture

GUARD = 60.0   # seconds for one run of the CLI; a run on these small projects takes well under 1 s
# examples per property: pytest --fuzz-examples (tests/conftest.py; 25 by default, for CI)
FUZZ = settings(deadline=None, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                       HealthCheck.data_too_large, HealthCheck.filter_too_much])

# the quickstart's one finding: the good part of every hostile project
GOOD = ("HT101", "src/newsdesk/publish.py", 9)
PKG = "src/newsdesk"


# --- running the CLI -------------------------------------------------------------------------

_SCHEMA = json.loads((Path(hermetic.__file__).parent / "report" / "report.schema.json").read_text(encoding="utf-8"))
SCHEMA = jsonschema.validators.validator_for(_SCHEMA)(_SCHEMA)   # checked once, not per report


class Run:
    """One CLI run: exit code, the whole output, the JSON report (validated by the schema)."""

    def __init__(self, exit_code: int, output: str, stdout: str):
        self.exit_code = exit_code
        self.output = output
        self.report = json.loads(stdout)
        SCHEMA.validate(self.report)
        self.errors = {e["path"]: e["message"] for e in self.report["errors"]}
        self.findings = [(f["code"], f["path"], f["line"]) for f in self.report["findings"]]


def run_cli(*args: str, guard: float = GUARD) -> Run:
    """``hermetic check --format json ARGS`` in the current folder, in process, within ``guard``
    seconds; asserts what holds for every run (exit 0 or 1, no traceback, JSON report)."""
    box = []

    def target():
        box.append(CliRunner().invoke(cli, ["check", "--format", "json", *args]))

    t = threading.Thread(target=target, name="hermetic-guarded", daemon=True)
    t.start()
    t.join(guard)
    if t.is_alive():
        pytest.fail(f"{' '.join(['hermetic', 'check', *args])} did not end within {guard:g} s")
    [result] = box
    assert result.exit_code in (0, 1), (result.exit_code, result.output, result.exception)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output, result.output
    return Run(result.exit_code, result.output, result.stdout)


def assert_sane(run: Run, bad, good=(GOOD,)) -> None:
    """``bad`` (relative paths) are exactly the files listed under errors, each with a one-line
    message; the findings in ``good`` are still reported; no error is an internal one."""
    assert set(run.errors) == set(bad), run.errors
    for path, message in run.errors.items():
        assert message.strip() and "\n" not in message and "\r" not in message, (path, message)
        assert "internal error" not in message and "unexpectedly" not in message, (path, message)
    for finding in good:
        assert finding in run.findings, run.findings
    assert run.exit_code == 1   # the good part's finding (and any bad file) fails the run


# --- the hostile project -----------------------------------------------------------------------

@pytest.fixture
def project(tmp_path, monkeypatch):
    """The quickstart (one HT101 finding), entered, with a file-timeout, no outside cache and a
    scratch HOME (as the ``checked`` fixture has)."""
    root = copy_fixture("quickstart", tmp_path)
    with (root / "pyproject.toml").open("a", encoding="utf-8") as fh:
        fh.write("\n[tool.hermetic]\nfile-timeout = 20\n")
    monkeypatch.delenv("HERMETIC_CACHE_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(root)
    return root


def write(root: Path, rel: str, data) -> str:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        p.write_text(data, encoding="utf-8")
    else:
        p.write_bytes(data)
    return rel


# Each case adds its hostile part to the project and returns the files that must be listed
# under errors.

def latin1_undeclared(root):
    return [write(root, f"{PKG}/latin.py", b'# caf\xe9 without a coding line\nNAME = "r\xe9sum\xe9"\n')]


def utf8_bom(root):
    write(root, f"{PKG}/bom.py", "\ufeff# caf\u00e9\nNAME = 'caf\u00e9'\n".encode("utf-8"))
    return []


def crlf(root):
    write(root, f"{PKG}/crlf.py", b"import os\r\n\r\n\r\ndef home():\r\n    return os.getcwd()\r\n")
    return []


def mixed_endings(root):
    write(root, f"{PKG}/mixed.py", b"A = 1\r\nB = 2\nC = 3\rdef f():\r    return (A,\n            B)\r\n")
    return []


def nul_byte(root):
    return [write(root, f"{PKG}/nul.py", b"A = 1\nB = '\x00'\n")]


def symlink_loop(root):
    pkg = root / PKG
    (pkg / "loop_a.py").symlink_to("loop_b.py")
    (pkg / "loop_b.py").symlink_to("loop_a.py")
    return [f"{PKG}/loop_a.py", f"{PKG}/loop_b.py"]


def symlink_to_parent(root):
    (root / PKG / "up").symlink_to("..")
    (root / "tests" / "again").symlink_to("..", target_is_directory=True)
    (root / "self").symlink_to(".", target_is_directory=True)
    return []


def directory_named_py(root):
    (root / PKG / "x.py").mkdir()
    (root / "tests" / "test_dir.py").mkdir()
    write(root, f"{PKG}/x.py/inner.py", "A = 1\n")
    return []


def fifo_and_device(root):
    """Opening a FIFO for reading waits for a writer; a device can be endless (/dev/zero)."""
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this platform")
    os.mkfifo(root / PKG / "pipe.py")
    os.mkfifo(root / "tests" / "test_pipe.py")
    (root / PKG / "device.py").symlink_to("/dev/null")
    return [f"{PKG}/pipe.py", "tests/test_pipe.py", f"{PKG}/device.py"]


def circular_imports(root):
    write(root, f"{PKG}/ring_a.py", "from newsdesk import ring_b\n\nA = 1\n\n\ndef fa(n):\n    return ring_b.fb(n)\n")
    write(root, f"{PKG}/ring_b.py", "from newsdesk import ring_a\nfrom newsdesk.ring_a import A\n\n\n"
                                    "def fb(n):\n    return ring_a.fa(n - 1) if n else A\n")
    write(root, "tests/test_ring.py", "from newsdesk.ring_a import fa\n\n\ndef test_ring():\n    assert fa(3) == 1\n")
    return []


def star_imports(root):
    write(root, f"{PKG}/star_a.py", "from newsdesk.star_b import *\nfrom .star_a import *\nA = 1\n")
    write(root, f"{PKG}/star_b.py", "from newsdesk.star_a import *\nfrom newsdesk.star_c import *\nB = 2\n")
    write(root, f"{PKG}/star_c.py", "from .star_b import *\nfrom . import *\nfrom os import *\n"
                                    "__all__ = ['C', 'getcwd']\nC = 3\n")
    write(root, "tests/test_star.py", "from newsdesk.star_a import *\n\n\ndef test_star():\n    assert getcwd()\n")
    return []


def dynamics(root):
    write(root, f"{PKG}/dyn.py", '''import os
import sqlite3

exec("import os")
exec(compile("x = 1", "<s>", "exec"), globals())
connect = getattr(sqlite3, "con" + "nect")
globals()["G"] = connect
globals().update({"H": os.environ})
setattr(os, "getcwd", connect)


def go():
    f = getattr(__import__("sqlite3"), "connect")
    return f(":memory:"), G(":memory:"), eval("1 + 1"), getattr(globals()["go"], "__name__")


def forever(n):
    return forever(n + 1) + getattr(globals()[__name__], "forever")(n)
''')
    write(root, "tests/test_dyn.py", '''from newsdesk import dyn


def test_dyn():
    dyn.go()
    exec("dyn.go()")
    getattr(dyn, "go")()
    dyn.forever(0)
''')
    return []


def module_and_package(root):
    write(root, f"{PKG}/thing.py", "X = 1\n")
    write(root, f"{PKG}/thing/__init__.py", "Y = 2\n")
    write(root, f"{PKG}/thing/part.py", "from . import Y\nfrom newsdesk.thing import X\n")
    write(root, "tests/test_thing.py", "from newsdesk.thing import *\nfrom newsdesk import thing\n\n\n"
                                       "def test_thing():\n    assert thing\n")
    return []


def outside_any_package(root):
    write(root, "loose/helper_loose.py", "import os\n\n\ndef flag():\n    return os.environ.get('LOOSE_FLAG')\n")
    write(root, "loose/test_loose.py", "from helper_loose import flag\n\n\ndef test_flag():\n    assert flag() is None\n")
    write(root, "tests/deeper/test_deeper.py", "def test_deeper():\n    assert True\n")
    return []


CASES = [latin1_undeclared, utf8_bom, crlf, mixed_endings, nul_byte, symlink_loop, symlink_to_parent,
         directory_named_py, fifo_and_device, circular_imports, star_imports, dynamics, module_and_package,
         outside_any_package]


@pytest.mark.parametrize("case", CASES, ids=[c.__name__ for c in CASES])
def test_a_hostile_part_is_listed_and_the_rest_is_analysed(project, case):
    bad = case(project)
    assert_sane(run_cli("--jobs", "1", "--no-cache"), bad)


def test_an_unreadable_file_is_listed_and_the_rest_is_analysed(project, monkeypatch):
    """CI runs as root, where ``chmod 000`` reads fine: the refusal is injected where the tool reads."""
    secret = project / PKG / "secret.py"
    secret.write_text("TOKEN = 1\n", encoding="utf-8")
    real = Path.read_bytes

    def read_bytes(self):
        if self == secret:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(self))
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    run = run_cli("--jobs", "1", "--no-cache")
    assert_sane(run, [f"{PKG}/secret.py"])
    assert "Permission denied" in run.errors[f"{PKG}/secret.py"]


def test_an_unreadable_folder_is_listed_and_the_rest_is_analysed(project, monkeypatch):
    """The folder's files cannot be named, so the folder is listed (not its files, silently
    missing). Injected where the walk lists folders, as for an unreadable file."""
    write(project, f"{PKG}/vault/__init__.py", "")
    write(project, f"{PKG}/vault/keys.py", "KEY = 1\n")
    vault = str(project / PKG / "vault")
    real = os.scandir

    def scandir(path="."):
        if os.fspath(path) == vault:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    run = run_cli("--jobs", "1", "--no-cache")
    assert_sane(run, [f"{PKG}/vault"])
    assert "Permission denied" in run.errors[f"{PKG}/vault"]


def test_tests_outside_any_package_and_any_configuration(tmp_path, monkeypatch):
    """No pyproject, no ini, no __init__.py: the rootdir is the folder checked, the test's helper
    is imported from beside it, and its environment read is found."""
    root = tmp_path / "bare"
    write(root, "helper_bare.py", "import os\n\n\ndef flag():\n    return os.environ.get('BARE_FLAG')\n")
    write(root, "test_bare.py", "from helper_bare import flag\n\n\ndef test_flag():\n    assert flag() is None\n")
    write(root, "sub/test_sub.py", "import helper_sub\n\n\ndef test_sub():\n    assert helper_sub.flag()\n")
    write(root, "sub/helper_sub.py", "import os\n\n\ndef flag():\n    return os.environ['SUB_FLAG']\n")
    monkeypatch.delenv("HERMETIC_CACHE_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(root)
    run = run_cli("--jobs", "1", "--no-cache")
    assert run.errors == {}
    assert ("HT103", "helper_bare.py", 5) in run.findings and ("HT103", "sub/helper_sub.py", 5) in run.findings


def everything(root):
    """Every case above in one project; the files that must be listed."""
    bad = []
    for case in CASES:
        if case is fifo_and_device and not hasattr(os, "mkfifo"):
            continue
        bad += case(root)
    return bad


def test_every_hostile_part_at_once_through_the_real_command(project, tmp_path):
    """The command as a user runs it, in a process of its own (so worker processes share its real
    standard error, where a traceback from anywhere would show), killed if it outlives GUARD."""
    bad = everything(project)
    env = {"PYTHONPATH": str(Path(hermetic.__file__).resolve().parent.parent), "HOME": str(tmp_path),
           "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run([sys.executable, "-m", "hermetic", "check", "--format", "json"], cwd=project, env=env,
                          capture_output=True, timeout=GUARD, check=False)
    out, err = proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 1, (proc.returncode, err)
    assert "Traceback" not in out + err, err
    assert_sane(Run(proc.returncode, out + err, out), bad, good=[GOOD, ("HT103", "loose/helper_loose.py", 5)])


# --- the analysed tree is left as it was -------------------------------------------------------

def tree_digest(root: Path, skip: str = ".hermetic_cache") -> dict:
    """Every entry under ``root`` (not following links, ``skip`` left out): regular files by
    their bytes and mode, links by their target, other entries by their kind."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not (Path(dirpath) == root and d == skip))
        for name in sorted(dirnames + filenames):
            p = Path(dirpath) / name
            rel = p.relative_to(root).as_posix()
            st_ = p.lstat()
            if p.is_symlink():
                out[rel] = ("link", os.readlink(p))
            elif p.is_dir():
                out[rel] = ("dir", st_.st_mode)
            elif p.is_file():
                out[rel] = ("file", st_.st_mode, hashlib.sha256(p.read_bytes()).hexdigest())
            else:
                out[rel] = ("other", st_.st_mode)
    return out


def test_the_analysed_tree_is_byte_identical_after_a_run(project):
    everything(project)
    before = tree_digest(project)
    assert len(before) > 30
    for args in ([], [], ["--jobs", "1"], ["--no-cache"]):   # cold, warm (whole-run hit), one worker, no cache
        run_cli(*args)
        assert tree_digest(project) == before
    assert (project / ".hermetic_cache" / ".gitignore").is_file()


# --- property tests ----------------------------------------------------------------------------

def cpython_parses(data: bytes) -> bool:
    """Whether CPython parses ``data`` as a plain ``python`` importing it would: at the default
    recursion limit (Hypothesis raises it while a test runs) and on a shallow stack (how deep an
    expression CPython's ast builds depends on the depth it starts at)."""
    box = []

    def parse():
        try:
            ast.parse(data)
        except (SyntaxError, ValueError, RecursionError, MemoryError, LookupError, UnicodeError):
            box.append(False)
        else:
            box.append(True)

    old = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        t = threading.Thread(target=parse)
        t.start()
        t.join()
    finally:
        sys.setrecursionlimit(old)
    return box[0]


def libcst_parses(data: bytes) -> bool:
    import libcst

    try:
        libcst.parse_module(data)
    except Exception:
        return False
    return True


def assert_fuzzed(run: Run, files: dict) -> None:
    """``files`` (relative path -> bytes) were generated: the ones CPython parses are analysed,
    unless libcst cannot parse them (listed as that, docs/limits.md); one CPython refuses is
    listed, unless libcst parses it (newer syntax than this interpreter's: such a file is
    analysed as libcst reads it); no other file is listed; the good finding stays."""
    for rel, data in files.items():
        if cpython_parses(data):
            if rel in run.errors:
                assert run.errors[rel].startswith(LIBCST_REFUSES) and not libcst_parses(data), (rel, run.errors[rel])
        elif rel not in run.errors:
            assert libcst_parses(data), rel
    assert set(run.errors) <= set(files), run.errors
    assert_sane(run, set(run.errors))


LIBCST_REFUSES = "libcst cannot parse this file, which CPython accepts: "


def test_valid_code_libcst_refuses_is_listed_as_that():
    # found by the grammar fuzzer: a line continuation right before the end of the file
    from hermetic.summarise.extract import SummaryError, summarize

    data = b"\n\\\r\n"
    assert cpython_parses(data) and not libcst_parses(data)
    with pytest.raises(SummaryError) as info:
        summarize(data, "m", "m.py")
    assert str(info.value).startswith(LIBCST_REFUSES)


# built once: each call of from_grammar() compiles the grammar again (seconds)
GRAMMAR = hypothesmith.from_grammar()
NODES = hypothesmith.from_node()
# hypothesmith keeps what compile() accepts, and compiling `1()` warns: noise from the generator
QUIET_COMPILE = pytest.mark.filterwarnings("ignore::SyntaxWarning")


@QUIET_COMPILE
@FUZZ
@given(source=GRAMMAR, test=GRAMMAR)
def test_grammar_generated_modules_as_source_and_test(project, source, test):
    """hypothesmith's grammar-generated modules (valid Python: it keeps what compiles) as a module
    of the package and as a test module, parsed in a worker process."""
    source, test = source.encode("utf-8"), test.encode("utf-8")
    files = {write(project, f"{PKG}/fuzzed.py", source): source,
             write(project, "tests/test_fuzzed.py", test): test}
    assert_fuzzed(run_cli("--jobs", "1", "--no-cache"), files)


@QUIET_COMPILE
@settings(FUZZ, max_examples=max(5, FUZZ.max_examples // 5))
@given(source=NODES, as_test=st.booleans())
def test_node_generated_modules(project, source, as_test):
    """hypothesmith's libcst-node-generated modules (one an example: the strategy records
    Hypothesis targets, which a second draw would overwrite), parsed by two workers. Slower to
    generate than the grammar's, so a fifth of the examples."""
    source = source.encode("utf-8")
    rel = "tests/test_fuzzed.py" if as_test else f"{PKG}/fuzzed.py"
    assert_fuzzed(run_cli("--jobs", "2", "--no-cache"), {write(project, rel, source): source})


def cycle(pattern: list, n: int) -> list:
    """``pattern`` repeated to ``n`` items (a drawn list of thousands costs Hypothesis seconds)."""
    return (pattern * (n // len(pattern) + 1))[:n]


OPEN = {"(": ")", "[": "]", "{": "}"}


@st.composite
def nested(draw):
    """An expression nested in up to 400 brackets of mixed kinds (CPython's limit is 200)."""
    depth = draw(st.integers(1, 400))
    kinds = cycle(draw(st.lists(st.sampled_from("([{"), min_size=1, max_size=8)), depth)
    inner = draw(st.sampled_from(["1", "x", "'s'", "f(1)", "", "*a"]))
    return ("x = " + "".join(kinds) + inner + "".join(OPEN[k] for k in reversed(kinds)) + "\n").encode()


@st.composite
def operator_chain(draw):
    """A chain of binary or boolean operators, either side of where CPython's ast gives up on a
    binary one (about 3,000 terms at the default limit, a few less the deeper the stack it starts
    on: no exact boundary to test); libcst's parse time grows faster than the chain up there."""
    n = draw(st.integers(1, 1000) | st.integers(3100, 6000))
    op = draw(st.sampled_from(["+", "-", "*", "/", "%", "|", "&", "^", "<<", "**", " and ", " or ", "@"]))
    return ("import os\n\n\ndef f(a):\n    return " + op.join(["a"] * n) + "\n").encode()


@st.composite
def implicit_concatenation(draw):
    """Up to 3,000 adjacent string literals, of assorted quotes and prefixes."""
    n = draw(st.integers(1, 3000))
    pieces = cycle(draw(st.lists(st.sampled_from(["'a'", '"b"', "r'c'", "'''d'''", "u'e'", "f'{n}'", "'\\n'"]),
                           min_size=1, max_size=8)), n)
    wrap = draw(st.booleans())
    body = "\n    ".join(pieces) if wrap else " ".join(pieces)
    return (f"n = 1\nS = ({body})\n" if wrap else f"n = 1\nS = {body}\n").encode()


CODECS = ["utf-8", "latin-1", "ascii", "cp1252", "utf-16", "utf-32", "shift_jis", "euc-jp", "koi8-r", "utf-8-sig",
          "unicode_escape", "raw_unicode_escape", "idna", "rot13", "hex", "base64", "zlib", "uu", "undefined",
          "no-such-codec", ""]


@st.composite
def byte_soup(draw):
    """A coding cookie (real, non-text or unknown codec) followed by random bytes."""
    codec = draw(st.sampled_from(CODECS))
    style = draw(st.sampled_from(["# -*- coding: {} -*-\n", "# coding={}\n", "#!/usr/bin/python\n# vim: set fileencoding={} :\n"]))
    bom = draw(st.sampled_from([b"", b"\xef\xbb\xbf"]))
    body = draw(st.binary(max_size=300) | st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass")))
    return bom + style.format(codec).encode("ascii") + body


@FUZZ
@given(data=st.one_of(nested(), operator_chain(), implicit_concatenation(), byte_soup()))
def test_hand_written_hostile_modules(project, data):
    files = {write(project, f"{PKG}/fuzzed.py", data): data}
    assert_fuzzed(run_cli("--jobs", "1", "--no-cache"), files)


ENDINGS = ["\n", "\r\n", "\r"]


@FUZZ
@given(endings=st.lists(st.sampled_from(ENDINGS), min_size=40, max_size=40), tail=st.booleans())
def test_mixed_line_endings_keep_the_finding_where_cpython_puts_it(project, endings, tail):
    """The sink's module rewritten with a random ending per line: the finding is at the line
    and column CPython gives the call (an empty line's ``\\r`` before a ``\\n`` is one ``\\r\\n``)."""
    publish = project / PKG / "publish.py"
    lines = (FIXTURES / "quickstart" / PKG / "publish.py").read_text(encoding="utf-8").splitlines()
    assert len(lines) < len(endings)
    text = "".join(line + end for line, end in zip(lines, endings))
    data = (text if tail else text.rstrip("\r\n")).encode("utf-8")
    publish.write_bytes(data)
    [call] = [n for n in ast.walk(ast.parse(data)) if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "connect"]
    run = run_cli("--jobs", "1", "--no-cache")
    assert_sane(run, [], good=[])
    [f] = run.report["findings"]
    assert (f["path"], f["line"], f["column"]) == (GOOD[1], call.lineno, call.col_offset + 1)


def test_an_origin_hashes_its_chain_once_and_pickles_without_the_hash(monkeypatch):
    # a module constant built from a chain of constants nests its origins as deep as the chain;
    # hashing the chain again at every level made a 5,000-line chain run for minutes
    import pickle

    from hermetic.analyse.values import Origin

    chain = Origin("literal", "P0", value="/etc")
    for i in range(200):
        chain = Origin("module-constant", f"P{i + 1}", inner=(chain,))
        hash(chain)   # as putting it in a set does, level by level
    calls = []
    plain = Origin.__hash__

    def counting(self):
        calls.append(self.expr)
        return plain(self)

    monkeypatch.setattr(Origin, "__hash__", counting)
    top = Origin("module-constant", "P", inner=(chain,))
    hash(top)
    assert len(calls) <= 3, len(calls)   # the new level and the one below it, not all 200
    monkeypatch.undo()
    back = pickle.loads(pickle.dumps(top))
    assert back == top and hash(back) == hash(top)
    assert "_hash" not in pickle.loads(pickle.dumps(top)).__dict__   # string hashing differs per process


def test_a_long_chain_of_module_constants_is_analysed(tmp_path, monkeypatch):
    write(tmp_path, "src/app/__init__.py", "")
    n = 1500
    write(tmp_path, "src/app/core.py", 'P0 = "/etc"\n' + "".join(f'P{i + 1} = P{i} + "/d"\n' for i in range(n))
          + f"def load():\n    return open(P{n})\n")
    write(tmp_path, "tests/test_x.py", "from app.core import load\n\n\ndef test_load():\n    load()\n")
    (tmp_path / ".git").mkdir()   # the repository root: discovery stops here
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(cli, ["check", "--no-cache", "--format", "json", "--fail-on", "warning"])
    assert res.exit_code == 1, res.output
    assert [f["code"] for f in json.loads(res.output)["findings"]] == ["HT102"]


def test_a_deep_chain_of_modules_imported_by_a_test_keeps_each_note_once(tmp_path, monkeypatch):
    """A test importing the head of a chain of modules (each importing the next and calling a
    function its helper module does not define) notes each unresolved call once per module: the notes of an
    import inside were once noted again at each level, doubling per level (a Django test file
    alone passed 24 GiB)."""
    from hermetic.analyse.modules import Modules

    n = 18
    write(tmp_path, "src/app/__init__.py", "")
    write(tmp_path, "src/app/helpers.py", "")
    for i in range(n):
        nxt = f"from app import m{i + 1}\n" if i + 1 < n else ""
        write(tmp_path, f"src/app/m{i}.py", f"from app import helpers\n{nxt}helpers.missing_{i}()\n")
    write(tmp_path, "tests/test_x.py", "def test_import_late():\n    from app import m0\n")
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    longest = []
    real = Modules._lazy_import

    def spy(self, name):
        g = real(self, name)
        longest.append(max((len(v) for v in self.lazy_unresolved.values()), default=0))
        return g

    monkeypatch.setattr(Modules, "_lazy_import", spy)
    res = CliRunner().invoke(cli, ["check", "--no-cache", "-j", "1", "--format", "json", "--show-unresolved"])
    assert res.exit_code == 0, res.output
    assert longest and max(longest) <= n


# --- the process: interrupted, standard output gone ----------------------------------------------

def _cli_process(project: Path, tmp_path: Path, mark: str, **kwargs):
    env = {"PYTHONPATH": str(Path(hermetic.__file__).resolve().parent.parent), "HOME": str(tmp_path),
           "PYTHONDONTWRITEBYTECODE": "1", "HERMETIC_TEST_MARK": mark}
    return subprocess.Popen([sys.executable, "-m", "hermetic", "check", "--no-cache", "--exit-zero"],
                            cwd=project, env=env, stderr=subprocess.PIPE, **kwargs)


def _marked(mark: str) -> list:
    """The processes whose environment holds ``mark`` (Linux /proc). Reading other processes'
    state is the point here: what is left of a run once it is gone."""
    found = []
    for d in Path("/proc").iterdir():  # hermetic: ignore[HT102]
        if d.name.isdigit():
            try:
                if f"HERMETIC_TEST_MARK={mark}".encode() in (d / "environ").read_bytes():  # hermetic: ignore[HT102]
                    found.append(int(d.name))
            except OSError:
                pass
    return found


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux /proc")  # hermetic: ignore[HT102]
def test_ctrl_c_ends_with_130_one_line_and_no_process_left(project, tmp_path):
    import signal
    import uuid

    for i in range(400):   # enough files that the parse is still running when the signal comes
        write(project, f"src/newsdesk/gen_{i}.py", "".join(f"def f{j}(x):\n    return [x] * {j}\n" for j in range(60)))
    mark = uuid.uuid4().hex
    proc = _cli_process(project, tmp_path, mark, stdout=subprocess.DEVNULL,
                        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    threading.Event().wait(1.0)
    proc.send_signal(signal.SIGINT)
    err = proc.communicate(timeout=GUARD)[1].decode("utf-8", "replace")
    assert proc.returncode == 130 and err.strip() == "hermetic: interrupted", (proc.returncode, err)
    for _ in range(100):   # the workers finish the file in hand, see their pipe closed and end
        if not _marked(mark):
            break
        threading.Event().wait(0.1)
    assert _marked(mark) == []


def test_a_worker_ends_when_its_parent_end_closes_without_a_stop(tmp_path):
    """A worker process holds no copy of this process's end of its pipe (nor its siblings'), so
    it sees the pipe close when this process goes away, however it goes."""
    import multiprocessing

    from hermetic.engine.workers import release, start_worker

    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("fork only: elsewhere nothing is inherited")
    ctx = multiprocessing.get_context("fork")
    first, first_end = start_worker(ctx, _read_until_eof, ())
    try:
        second, second_end = start_worker(ctx, _read_until_eof, ())   # forked while first_end is open
        try:
            release(first_end)
            first.join(timeout=20)
            assert not first.is_alive() and first.exitcode == 0
        finally:
            release(second_end)   # the module's list of ends is as before, however the test ends
        second.join(timeout=20)
        assert not second.is_alive() and second.exitcode == 0
    finally:
        release(first_end)


def _read_until_eof(conn) -> None:
    try:
        conn.recv()
    except EOFError:
        return


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_full_standard_output_is_one_line_and_exit_2(project, tmp_path):
    with open("/dev/full", "w") as full:
        proc = _cli_process(project, tmp_path, "full", stdout=full)
        err = proc.communicate(timeout=GUARD)[1].decode("utf-8", "replace")
    assert proc.returncode == 2 and err.strip() == "hermetic: cannot write to standard output: No space left on device"
