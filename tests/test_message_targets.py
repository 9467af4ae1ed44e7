"""A finding's message names every target its tests reach the operation with: the others with
the first test that reaches it so, and those only the named tests reach it with as well."""
from hermetic.analyse.state import SinkEvent
from hermetic.rules.uncontrolled import _others


def _env(name):
    return SinkEvent("env", "src/dirs.py", (5, 0, 5, 9), "os.environ.get", "uncontrolled", None, (), target=name)


def test_targets_the_same_tests_reach_are_named_too():
    docs, music, video = _env("DOCS_DIR"), _env("MUSIC_DIR"), _env("VIDEO_DIR")
    both = {"t::a", "t::b"}
    what = {"DOCS_DIR": (docs, set(both)), "MUSIC_DIR": (music, set(both)), "VIDEO_DIR": (video, {"t::c"})}
    tail = _others(docs, what)
    assert "; the same tests also reach it with the environment variable MUSIC_DIR" in tail
    assert "t::c reaches it with the environment variable VIDEO_DIR" in tail


def test_one_target_says_nothing_more():
    docs = _env("DOCS_DIR")
    assert _others(docs, {"DOCS_DIR": (docs, {"t::a"})}) == ""


def test_a_literal_a_library_call_gives_is_shown_by_the_call():
    from hermetic.analyse.values import Origin
    from hermetic.report.origin import origin_json

    tmp = origin_json(Origin("literal", expr="tempfile.gettempdir()", path="t.py", line=3, value="/tmp"))
    assert tmp["expression"] == "tempfile.gettempdir()"
    written = origin_json(Origin("literal", expr="'/var/x'", path="t.py", line=4, value="/var/x"))
    assert written["expression"] == "'/var/x'"   # near miss: a literal in the code, by its value


def test_one_more_target_is_singular():
    shown = _env("A_DIR")
    what = {"A_DIR": (shown, {"t::a"})}
    for i, name in enumerate(("B_DIR", "C_DIR", "D_DIR")):
        what[name] = (_env(name), {f"t::{i}"})
    assert _others(shown, what).endswith("; 1 more target")
    what["E_DIR"] = (_env("E_DIR"), {"t::9"})
    assert _others(shown, what).endswith("; 2 more targets")


def test_a_path_an_environment_variable_gives_is_named_as_a_path():
    from hermetic.analyse.values import Origin
    from hermetic.report.origin import describe_origin

    xdg = Origin("environment", expr="XDG_CONFIG_HOME", path="src/dirs.py", line=4)
    assert describe_origin(xdg, "path") == "a path from the environment variable XDG_CONFIG_HOME"
    assert describe_origin(xdg, "target") == "a target from the environment variable XDG_CONFIG_HOME"
