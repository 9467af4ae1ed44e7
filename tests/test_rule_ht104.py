"""HT104: clock reads at call time (fixture ht104-clock).

A library's attribute the test assigns (``datetime.datetime = Fake`` in a hand-written context
manager's ``__enter__``, or before a ``try`` whose ``finally`` writes the saved one back) is the
test's value until the original is written back, as ``monkeypatch.setattr`` makes it."""
import pytest

from helpers import (at, fixture_suite, Expect, Silent, line_of, listed_at)

FIX = "ht104-clock"
C = "src/stamps/clock.py"
T = "tests/test_clock.py::"


EXPECTED = [
    Expect("datetime-now", "HT104", C, "return datetime.now(timezone.utc)",
           tests=[T + "test_stamp_is_iso"], origin="clock"),
    Expect("time-time", "HT104", C, "return time.time() - start",
           tests=[T + "test_elapsed_is_positive"], origin="clock"),
    # `now or time.time()`: not for a test giving a float literal, nor through renew(), which
    # gives a clock reading (a float literal was once summarised as 0.0, falsy)
    Expect("clock-when-no-time-given", "HT104", C, "return (now or time.time()) + ttl",
           tests=[T + "test_expiry_from_the_clock"], origin="clock"),
    Expect("clock-read-to-give", "HT104", C, "now = time.monotonic()", tests=[T + "test_expiry_renewed"]),
    Expect("clock-in-an-operand-that-may-not-run", "HT104", C, "return expire_at is not None and expire_at < time.time()",
           tests=[T + "test_expired_row_read_back"]),
    # datetime.datetime replaced by the test's own class (a hand-written context manager, or an
    # assignment put back in a finally) is looked up at call time: the real clock only after
    Expect("after-a-hand-written-substitute", "HT104", "src/stamps/wall.py", "return datetime.datetime.now()",
           tests=["tests/test_wall.py::test_wall_stamp_after_the_block"], origin="clock"),
]

SILENT = [
    Silent("freezer-and-class-decorator", C, 'return datetime.now().strftime',
           "reached only with the freezer fixture or under a freeze_time class decorator (S3)"),
    Silent("autouse-freeze", C, "return datetime.now().year",
           "reached only under an autouse fixture that starts freeze_time (S3)"),
    Silent("freeze-context-manager", "tests/test_clock.py", 'with freeze_time("2031-01-02"):',
           "undone on exit: not HT304"),
]

findings, test_reported, test_silent, test_nothing_else = fixture_suite(FIX, EXPECTED, SILENT)

# Frozen tests reaching stamp(): never listed at its clock read.
FROZEN = ["test_stamp_frozen_by_decorator", "test_stamp_frozen_by_context_manager", "test_stamp_with_freezer"]


@pytest.mark.parametrize("test", FROZEN)
def test_frozen_test_not_listed(findings, test):
    assert T + test not in listed_at(FIX, findings, "HT104", C, "return datetime.now(timezone.utc)")




def test_a_read_in_an_operand_an_undecided_one_guards_is_medium_confidence(findings):
    # `expire_at is not None and expire_at < time.time()`: the row's value is not known, so the
    # clock is read on one way only (a new user saw diskcache's at high confidence)
    [f] = at(findings, C, line_of(FIX, C, "return expire_at is not None and expire_at < time.time()"), "HT104")
    assert f.confidence == "medium"
    [g] = at(findings, C, line_of(FIX, C, "return datetime.now(timezone.utc)"), "HT104")
    assert g.confidence == "high"   # near miss: no condition on the way
