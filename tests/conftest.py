import pytest

from helpers import run_fixture


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
