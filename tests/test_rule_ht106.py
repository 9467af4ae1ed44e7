"""HT106: subprocesses (fixture ht106-subprocess)."""
from helpers import Expect, Silent, fixture_suite

FIX = "ht106-subprocess"
G = "src/deploy/git.py"
T = "tests/test_git.py::"

EXPECTED = [
    # test_branch_with_fake_process reaches the same call with fp active (S5): not listed
    Expect("literal-argv", "HT106", G, 'subprocess.run(["git", "rev-parse"',
           tests=[T + "test_branch_live"], origin="literal"),
    # the program is this interpreter (sys.executable), started by the code under test: row X
    Expect("interpreter-argv", "HT106", G, 'subprocess.run([sys.executable, "-m"',
           tests=[T + "test_migrations_run"], origin="literal"),
]

SILENT = [
    Silent("only-under-fp", G, 'subprocess.run(["git", "tag"', "reached only with the fp fixture (S5)"),
    Silent("test-spawns-on-tmp", "tests/test_git.py", 'subprocess.run(["git", "init"', "T1: the test's own subprocess"),
    Silent("test-checks-tmp", "tests/test_git.py", '(tmp_path / ".git").is_dir()', "a tmp_path path"),
    Silent("test-spawns-interpreter", "tests/test_git.py", 'subprocess.run([sys.executable, "-c"',
           "T1: the test starts its own interpreter"),
    Silent("fp-register", "tests/test_git.py", 'fp.register(["git", "rev-parse"', "registers a fake process"),
]

findings, test_reported, test_silent, test_nothing_else = fixture_suite(FIX, EXPECTED, SILENT)
