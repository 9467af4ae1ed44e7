"""HT106: subprocesses (fixture ht106-subprocess)."""
from helpers import Expect, Silent, fixture_suite

FIX = "ht106-subprocess"
G = "src/deploy/git.py"
T = "tests/test_git.py::"

EXPECTED = [
    # processes of this interpreter (io-catalogue, subprocess section)
    Expect("multiprocessing-pool", "HT106", "src/deploy/workers.py", "with multiprocessing.Pool(2) as pool:",
           tests=["tests/test_workers.py::test_squares_in_processes"]),
    Expect("process-pool-executor", "HT106", "src/deploy/workers.py", "with ProcessPoolExecutor(max_workers=2) as ex:"),
    # test_branch_with_fake_process reaches the same call with fp active (S5): not listed
    Expect("literal-argv", "HT106", G, 'subprocess.run(["git", "rev-parse"',
           tests=[T + "test_branch_live"], origin="literal"),
    # the program is this interpreter (sys.executable), started by the code under test: row X
    Expect("interpreter-argv", "HT106", G, 'subprocess.run([sys.executable, "-m"',
           tests=[T + "test_migrations_run"], origin="literal"),
    # ctypes.util.find_library runs ldconfig / gcc / ld on Linux (a new user's trial on keyring)
    # a module a test imports in its body runs its top level for that test (only it is listed;
    # a new user's trial on keyring)
    Expect("imported-in-the-test-body", "HT106", "src/deploy/native.py", 'LDCONFIG = subprocess.run(',
           tests=[T + "test_native_imported_in_the_test"], origin="literal"),
    Expect("find-library-runs-programs", "HT106", G, 'return find_library("git2")',
           tests=[T + "test_native_library_found"], origin="literal"),
]

SILENT = [
    Silent("process-in-the-test", "tests/test_workers.py", "p = multiprocessing.Process(target=workers.square",
           "a process the test starts itself (T1)"),
    Silent("thread-pool", "src/deploy/workers.py", "with ThreadPoolExecutor(max_workers=2) as ex:", "threads start no process"),
    Silent("find-library-patched", G, 'return ctypes.util.find_library("git2")', "the test replaces it (S1)"),
    Silent("only-under-fp", G, 'subprocess.run(["git", "tag"', "reached only with the fp fixture (S5)"),
    Silent("test-spawns-on-tmp", "tests/test_git.py", 'subprocess.run(["git", "init"', "T1: the test's own subprocess"),
    Silent("test-checks-tmp", "tests/test_git.py", '(tmp_path / ".git").is_dir()', "a tmp_path path"),
    Silent("test-spawns-interpreter", "tests/test_git.py", 'subprocess.run([sys.executable, "-c"',
           "T1: the test starts its own interpreter"),
    Silent("fp-register", "tests/test_git.py", 'fp.register(["git", "rev-parse"', "registers a fake process"),
]

findings, test_reported, test_silent, test_nothing_else = fixture_suite(FIX, EXPECTED, SILENT)


def test_sys_executable_chosen_by_the_test_is_controlled_wherever_it_is_spawned(tmp_path, monkeypatch):
    """The test names the program (this interpreter) as it names a literal one: controlled in
    the code it calls (row T1), as ["echo", ...] from the test is. Project code that picks
    sys.executable itself is still HT106."""
    from hermetic.api import run_check

    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\npythonpath = ["src"]\n', encoding="utf-8")
    (tmp_path / "src" / "app").mkdir(parents=True)
    (tmp_path / "src" / "app" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "src" / "app" / "m.py").write_text(
        "import subprocess\nimport sys\n\n\ndef run(args):\n    return subprocess.run(args)\n\n\n"
        "def run_self():\n    return subprocess.run([sys.executable, '-c', 'pass'])\n", encoding="utf-8")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_sp.py").write_text(
        "import sys\nfrom app import m\n\n\ndef test_echo():\n    m.run(['echo', 'hi'])\n\n\n"
        "def test_exe():\n    m.run([sys.executable, '-c', 'pass'])\n\n\ndef test_self():\n    m.run_self()\n",
        encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    report, _ = run_check([], tmp_path)
    assert [(f.code, f.path, f.line, f.tests) for f in report.findings] == [
        ("HT106", "src/app/m.py", 10, ["tests/test_sp.py::test_self"])]
