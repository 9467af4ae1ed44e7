"""A MagicMock the test set nothing on keeps its defaults (fixture flow-doubles).

A patched function's result is a MagicMock: iterating it gives no item, so ``set(m.keys())`` is
empty, a loop or comprehension over it runs no body, and ``x in m`` is False
(``controls.mock_items``). Near misses: a mock the test configured
(``m.return_value.keys.return_value = [...]``, ``configure_mock(...)``), and a context given as
``return_value``, or set on the double after the patch (``patch(...).return_value = {...}``:
``Ctx.returns``). Setting one patched function's ``return_value`` configures no other double:
the context stays MagicMock's defaults (cookiecutter's replay tests set ``generate_context``'s).
A side effect ``OSError(ENOSYS, ...)`` whose code the analysis does not know is
an OSError of no known subclass (it once crashed the analysis: a new user's trial on filelock).
"""
from hermetic.analyse.controls import mock_items
from hermetic.analyse.state import Ctx
from hermetic.analyse.values import DOUBLE, Origin, of
from helpers import Expect, Silent, fixture_suite

FIX = "flow-doubles"
G = "src/app/gen.py"
T = "tests/test_gen.py::"
BOTH = [T + "test_generate_with_a_configured_mock", T + "test_generate_with_a_given_context",
        T + "test_generate_with_a_mock_configured_by_a_call"]
GIVEN = [T + "test_generate_with_a_given_context"]
SET_AFTER = [T + "test_generate_with_a_context_set_after_the_patch", T + "test_generate_with_a_remote_set_after_the_patch"]
# another double's return_value set (not test_generate_with_settings_set_after_the_patch) leaves the
# context MagicMock's defaults; an attribute set on a double's result does not (near miss)
NEAR = [T + "test_generate_with_settings_configured_on_their_result"]
# the doubles configured in ways the analysis does not follow may reach the remote and post steps
MAYBE = [T + "test_generate_with_a_configured_mock", T + "test_generate_with_a_mock_configured_by_a_call"] + NEAR

EXPECTED = [
    # not test_generate_with_a_plain_mock: set() of its keys is empty, nothing is in it, no item
    # a context set after the patch (``m.return_value = {...}``) is what the double returns:
    # ``{"_private": 1}`` names no remote and no post step
    # (the configured mocks' keys are not followed: they may reach these, listed and counted)
    Expect("remote", "HT106", G, 'subprocess.run(["git", "clone"', tests=GIVEN + SET_AFTER[1:] + MAYBE),
    Expect("post", "HT106", G, 'subprocess.run(["sh", "post.sh"])', tests=GIVEN + MAYBE),
    Expect("per-key", "HT106", G, 'subprocess.run(["echo", "rendering"])', tests=BOTH + SET_AFTER + NEAR),
    # the comprehension's filter on a key's text is not decided: both are listed
    Expect("listed", "HT106", G, 'subprocess.run(["echo", "listed"])', tests=BOTH + SET_AFTER + NEAR),
    # an attribute the test set on a double's result (run.return_value.stdout = "") may be falsy:
    # `if status.stdout:` is undecided; a plain MagicMock's is truthy: it stops first (near miss)
    Expect("configured-attribute-not-truthy", "HT102", G, 'with open("CHANGELOG.md", encoding="utf-8")',
           tests=[T + "test_publish_with_a_clean_tree"], origin="literal"),
]
# a substitute whose side_effect is a function gives what the function gives: an identity
# (`lambda path: path`, invoke's fake_user_home) hands the path on to open (near miss: a
# return_value in tmp_path)
EXPECTED += [
    Expect("identity-side-effect-system", "HT102", "src/app/conf.py", 'with open(expanduser("/etc/app.yaml")',
           tests=["tests/test_conf.py::test_system_conf_under_identity"], origin="literal"),
    Expect("identity-side-effect-home", "HT102", "src/app/conf.py", 'with open(expanduser("~/.app.yaml"))',
           tests=["tests/test_conf.py::test_user_conf_under_identity"], origin="literal"),
]
SILENT = [Silent("context-read", G, "with open(path", "load_context is patched in every test")]

findings, test_reported, test_silent, test_nothing_else = fixture_suite(FIX, EXPECTED, SILENT)


def test_a_plain_double_iterates_nothing():
    ctx = Ctx()
    (empty,) = mock_items(of(DOUBLE), ctx).atoms
    assert empty[0] == "seq" and empty[2] == ()
    assert mock_items(of(DOUBLE) | of(Origin("unknown")), ctx) is None   # not only a double
    ctx.doubles_set = True
    assert mock_items(of(DOUBLE), ctx) is None   # the test set an attribute on a double
