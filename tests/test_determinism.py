"""The report does not depend on the process: set iteration order (string hashing varies per
process) and allocation addresses must not pick the origin or trace a finding shows."""
import subprocess
import sys

from helpers import copy_fixture


def test_same_report_under_every_hash_seed(tmp_path, monkeypatch):
    # fixtures/determinism: one sink reached three ways from one test, through a set of
    # functions, so the interpreter meets the ways in a seed-dependent order
    project = copy_fixture("determinism", tmp_path)
    outputs = set()
    for seed in ("0", "1", "3", "4"):
        monkeypatch.setenv("PYTHONHASHSEED", seed)
        done = subprocess.run([sys.executable, "-m", "hermetic", "check", "--no-cache", "--format", "json"],
                              cwd=project, capture_output=True, text=True, check=False)
        assert done.returncode == 1, done.stderr
        outputs.add(done.stdout)
    assert len(outputs) == 1
    assert '"kind": "cwd"' in outputs.pop()
