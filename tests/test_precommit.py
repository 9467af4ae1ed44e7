"""The pre-commit hook, round trip: the README's ``.pre-commit-config.yaml`` snippet, exactly
as written but for the repository URL (this project, committed and tagged with the README's
``rev``, in a scratch repository), run by ``pre-commit run`` on a scratch project whose change
touches only a test file.

The uncontrolled sink lives in ``src/app/store.py``, which the change does not touch; the
hook is handed only ``tests/test_store.py``. Only a whole-program analysis that keeps the
findings whose trace touches the changed file fails it. After the fix (the test controls
HOME) the same run passes.

The hook repository is a fresh commit of this project's files as they are in the working
tree, tracked or not, less what git ignores (virtualenvs, caches): the code the rest of the
suite tests through the editable install, tagged with the README's ``rev``. pre-commit never
clones the developer's repository (its tags and committed state need not be this tree's).

pre-commit keeps its store, and so the hook's virtualenv, in PRE_COMMIT_HOME (inside
``tmp_path``): the first run builds the environment and pip-installs this project and its
dependencies (from PyPI, or whatever index pip is configured with), some 10 s; the second
reuses it. When that install cannot reach an index, the test is skipped, saying why.
HOME, the XDG folders, TMPDIR, PRE_COMMIT_HOME, pip's
cache and git's configuration and identity all point inside ``tmp_path``.
"""
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import have_git

ROOT = Path(__file__).resolve().parent.parent
HOOK = "hermetic"


def readme_hook_config() -> dict:
    """The README's ``.pre-commit-config.yaml`` snippet, parsed (the YAML block that starts
    with that file name)."""
    import yaml   # pre-commit's own dependency

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(# \.pre-commit-config\.yaml.*?)```", readme, re.S)
    assert len(blocks) == 1, "the README holds one .pre-commit-config.yaml snippet"
    return yaml.safe_load(blocks[0])

STORE = '''\
import json
from pathlib import Path


def save_state(state):
    path = Path.home() / ".app-state.json"
    path.write_text(json.dumps(state))
    return path
'''

TEST_STORE = '''\
from app.store import save_state


def test_save_state():
    assert save_state({"n": 1}).name == ".app-state.json"
'''

# the change under review: a second test of the same function, nothing else
SECOND_TEST = '''

def test_save_state_again():
    assert save_state({"n": 2}).suffix == ".json"
'''

# the fix: the tests own HOME, so Path.home() is their scratch folder
FIXED = "import pytest\n" + TEST_STORE + SECOND_TEST + '''

@pytest.fixture(autouse=True)
def scratch_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
'''

PYPROJECT = '''\
[project]
name = "app"
version = "0.0.1"

[tool.pytest.ini_options]
pythonpath = ["src"]
'''

# what pip says when it cannot reach an index (connection errors while retrying, or, with
# retries off, an index that offers not even setuptools): the hook environment could not be
# built, which says nothing about the hook
NO_INDEX = re.compile(r".*(NewConnectionError|Failed to establish a new connection|Name or service not known|"
                      r"Temporary failure in name resolution|Network is unreachable|No route to host|ProxyError|"
                      r"ConnectTimeoutError|Read timed out|\(from versions: none\)).*")


def skip_reason():
    if importlib.util.find_spec("pre_commit") is None:
        return "pre-commit is not installed (it is in the test extra: pip install '.[test]')"
    if not have_git():
        return "git is not on PATH"
    return None


SKIP = skip_reason()
pytestmark = pytest.mark.skipif(SKIP is not None, reason=str(SKIP))


def git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, env=dict(os.environ), capture_output=True, text=True,
                          check=True).stdout


@pytest.fixture
def sandbox(tmp_path, monkeypatch):
    """Every place pre-commit, pip, virtualenv and git read or write, inside tmp_path."""
    for name in ("home", "cache", "data", "config", "tmp", "pre-commit-home", "pip-cache"):
        (tmp_path / name).mkdir()
    gitconfig = tmp_path / "gitconfig"
    gitconfig.write_text("[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n", encoding="utf-8")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    monkeypatch.setenv("PRE_COMMIT_HOME", str(tmp_path / "pre-commit-home"))
    monkeypatch.setenv("PIP_CACHE_DIR", str(tmp_path / "pip-cache"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "hermetic tests")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "tests@example.invalid")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "hermetic tests")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "tests@example.invalid")
    # set when the suite itself runs inside a git hook: they would point our git calls elsewhere
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
                 "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "PRE_COMMIT_COLOR"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def hook_repository(dest: Path, rev: str) -> Path:
    """This project's working tree (tracked files and new ones, not the ignored), committed in
    a fresh repository and tagged ``rev`` (annotated, as a release is)."""
    listed = subprocess.run(["git", "-c", f"safe.directory={ROOT}", "ls-files", "-z", "--cached", "--others",
                             "--exclude-standard"], cwd=ROOT,
                            env=dict(os.environ), capture_output=True)
    if listed.returncode != 0:
        pytest.skip(f"{ROOT} is not a git checkout, so it cannot serve as a pre-commit hook repository: "
                    + listed.stderr.decode(errors="replace").strip())
    for name in listed.stdout.decode().split("\0"):
        source = ROOT / name
        if name and source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, dest / name)
    git(dest, "init", "-q")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "hook repository")
    git(dest, "tag", "-a", rev, "-m", f"release {rev}")
    return dest


def run_hook(project: Path, *files: str) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "pre_commit", "run", HOOK, "--color", "never", "--files", *files],
                          cwd=project, env=dict(os.environ), capture_output=True, text=True, timeout=900)
    out = done.stdout + done.stderr
    unreachable = NO_INDEX.search(out)
    if done.returncode != 0 and "'-mpip', 'install'" in out and unreachable:
        pytest.skip("pre-commit could not install the hook environment, no package index reachable: "
                    + unreachable.group(0).strip())
    return done


def test_the_readme_snippet_names_this_release_and_this_hook():
    config = readme_hook_config()
    [repo] = config["repos"]
    version = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(encoding="utf-8"), re.M)
    assert repo["rev"] == f"v{version.group(1)}"   # the release tag of this version
    assert repo["hooks"] == [{"id": HOOK}]
    import yaml

    assert [h["id"] for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))] == [HOOK]


def test_the_hook_fails_a_test_only_change_on_a_sink_in_src_and_passes_after_the_fix(sandbox):
    import yaml

    config = readme_hook_config()
    hook_repo = hook_repository(sandbox / "hook", config["repos"][0]["rev"])
    config["repos"][0]["repo"] = str(hook_repo)   # the one change: the URL, for this checkout
    project = sandbox / "project"
    (project / "src" / "app").mkdir(parents=True)
    (project / "tests").mkdir()
    (project / "src" / "app" / "__init__.py").write_text("", encoding="utf-8")
    (project / "src" / "app" / "store.py").write_text(STORE, encoding="utf-8")
    (project / "tests" / "test_store.py").write_text(TEST_STORE, encoding="utf-8")
    (project / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    (project / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "store")

    test_file = project / "tests" / "test_store.py"
    test_file.write_text(TEST_STORE + SECOND_TEST, encoding="utf-8")
    assert git(project, "diff", "--name-only", "HEAD").split() == ["tests/test_store.py"]

    failed = run_hook(project, "tests/test_store.py")
    out = failed.stdout + failed.stderr
    assert failed.returncode == 1, out
    assert re.search(r"^hermetic \(test isolation audit\)\.+Failed$", out, re.M), out
    # the one finding: anchored in the unchanged src/app/store.py, reached by both tests
    assert re.search(r"^src/app/store\.py\n +7:\d+ HT102 save_state\(\) writes ", out, re.M), out
    assert "tests/test_store.py::test_save_state_again" in out, out
    assert re.search(r"^1 finding \(1 errors?, 0 warnings(, 0 notes)?\)", out, re.M), out

    test_file.write_text(FIXED, encoding="utf-8")
    assert git(project, "diff", "--name-only", "HEAD").split() == ["tests/test_store.py"]
    passed = run_hook(project, "tests/test_store.py")
    out = passed.stdout + passed.stderr
    assert passed.returncode == 0, out
    # it ran on the file and found nothing (not "(no files to check)Skipped")
    assert re.search(r"^hermetic \(test isolation audit\)\.+Passed$", out, re.M), out
