"""What an ``except`` handler catches when the test's double raises an instance it made."""
from hermetic.analyse.handlers import caught, effects_given, handler_catches, watch_entry
from hermetic.analyse.values import UNKNOWN_V, V, of


def _double(site):
    return ("double", UNKNOWN_V, site)


def _classes(*names):
    return of(("seq", "tuple", tuple(of(("ext", f"builtins.{n}")) for n in names)))


def test_a_handler_catches_by_the_builtin_class_hierarchy():
    assert handler_catches(None, of(("ext", "builtins.OSError")), ["FileNotFoundError"]) is True
    assert handler_catches(None, of(("ext", "builtins.SystemError")), ["OSError"]) is False
    assert handler_catches(None, _classes("ValueError", "OSError"), ["OSError"]) is True
    # one instance caught, the other not: either way
    assert handler_catches(None, of(("ext", "builtins.OSError")), ["OSError", "KeyError"]) is None


def test_a_library_or_project_class_leaves_the_handler_open():
    assert handler_catches(None, of(("ext", "socket.timeout")), ["OSError"]) is None
    assert handler_catches(None, of(("cls", "app.errors.Failed")), ["OSError"]) is None


def test_a_side_effect_is_kept_per_site_and_replaced_by_an_unknown_one():
    exc = of(("inst", 1_000_001))
    effects = effects_given(of(_double(("t.py", (3,)))), exc, (), True)
    assert effects == ((("t.py", (3,)), exc),)
    # the same double given a class (or anything not made by the test): what it raises is unknown
    assert effects_given(of(_double(("t.py", (3,)))), of(("ext", "builtins.OSError")), effects, False) == ()


def test_a_watched_body_catches_what_its_doubles_raise():
    exc = of(("inst", 1_000_001))
    site = ("t.py", (3,))
    effects = ((site, exc),)
    raising = frozenset({site})
    entry = watch_entry(of(_double(site)), raising, effects)
    assert entry == exc
    assert caught([True, entry]) == exc
    # a call of anything else may raise anything
    assert caught([entry, watch_entry(of(("func", "app.f", None)), raising, effects)]) is UNKNOWN_V
    assert isinstance(caught([]), V)
