"""HT204: clock read or clock function captured at import (fixture ht204-import-clock).

Reported: `STARTED = datetime.now()`, `partial(datetime.now, timezone.utc)`, `def stamp(at=time.time())`
and a class body `created = time.time()`. Silent: a fixed `datetime(...)`, a partial of a non-clock
function, a module no test imports, the call of the captured partial (one finding per problem),
a freeze around a call-time datetime.now() (no HT205), and a read inside a module-level
`with freeze_time(...)` (near miss: the read after the block). The call-time read is HT104.
"""
import pytest

from helpers import (fixture_suite, Expect, Silent, at, line_of, listed_at)

FIX = "ht204-import-clock"
M = "src/batch/timing.py"
TF = "tests/test_timing.py"
T = TF + "::"

EXPECTED = [
    Expect("module-level-read", "HT204", M, "STARTED = datetime.now()", origin="clock"),
    Expect("partial-capture", "HT204", M, "utc_now = partial(datetime.now, timezone.utc)", origin="clock"),
    Expect("default-argument", "HT204", M, "def stamp(at=time.time()):", origin="clock"),
    Expect("class-body", "HT204", M, "created = time.time()", origin="clock"),
    Expect("captured-for-durations", "HT204", M, "elapsed_clock = time.perf_counter", origin="clock"),
    # a parametrize list's call, evaluated while the module imports (the decorator's line is
    # the binding: requests-cache's trial showed it as line 0)
    Expect("read-by-a-parametrize-list", "HT204", M, "return time.time() + 0.5", origin="clock"),
    Expect("captured-for-a-date", "HT204", M, "date_clock = time.time", origin="clock"),
    Expect("captured-clock-default", "HT204", M, "def run_task(task, on_accept=None, clock=time.monotonic):",
           origin="clock"),
    Expect("call-time-is-ht104", "HT104", M, "return (datetime.now() - STARTED)",
           tests=[T + "test_uptime_unfrozen"], origin="clock"),
    # a module-level `with freeze_time(...)` holds the reads inside it, not the one after it
    Expect("read-after-a-module-freeze", "HT204", "tests/test_frozen_module.py", "LATER = dt.datetime.now()",
           origin="clock"),
]

SILENT = [
    Silent("read-in-a-module-freeze", "tests/test_frozen_module.py", "FROZEN_NOW = dt.datetime.now()",
           "the freeze the module's own code started holds it"),
    Silent("fixed-datetime", M, "EPOCH = datetime(2030, 1, 1", "constructing a fixed datetime is no clock read"),
    Silent("partial-of-non-clock", M, "round2 = partial(round, ndigits=2)", "not a clock function"),
    Silent("module-no-test-imports", "src/batch/legacy.py", "BOOTED = time.time()", "not reached by any test"),
    Silent("captured-partial-called", M, 'return "run-" + utc_now().strftime',
           "the capture is reported once, at the partial (HT204), not again as a call-time HT104"),
    Silent("freeze-reaches-call-time-read", TF, 'with freeze_time("2031-01-01 00:00:00") as frozen:',
           "the freeze reaches uptime()'s call-time datetime.now(): not HT205; STARTED is HT204; "
           "the context manager undoes the freeze (not HT304)"),
    Silent("tick", TF, "frozen.tick(30)", "advances the frozen clock: no clock read"),
    Silent("test-fixed-datetime", TF, "datetime(2030, 1, 2, tzinfo=timezone.utc)", "not a clock read"),
    Silent("use-of-class-attribute", M, 'return f"job@{int(self.created)}"', "the read was at import"),
]

# one read in a helper, three bindings: one finding each (test_each_binding_of_one_read_lists_the_tests_using_it)
OPTIONAL = [Expect("one-read-several-bindings", "HT204", "src/batch/clocks.py", "return datetime.now(timezone.utc)",
                   origin="clock")]

findings, test_reported, test_silent, test_nothing_else = fixture_suite(FIX, EXPECTED, SILENT, OPTIONAL)

# section 8: HT204 lists "the tests that reach a consumer" of the value bound at import
CONSUMERS = [
    ("module-level-read", "STARTED = datetime.now()", ["test_uptime_under_freeze", "test_uptime_unfrozen"]),
    ("partial-capture", "utc_now = partial(", ["test_run_label"]),
    ("default-argument", "def stamp(at=time.time()):", ["test_stamp_default"]),
    ("class-body", "created = time.time()", ["test_job_label"]),
    # a clock function as a default is used where it is called, not where it is bound
    ("captured-clock-default", "def run_task(task, on_accept=None, clock=time.monotonic):",
     ["test_task_run_with_accept_callback"]),
]


def test_frozen_test_not_listed_at_the_call_time_read(findings):
    assert T + "test_uptime_under_freeze" not in listed_at(FIX, findings, "HT104", M, "return (datetime.now() - STARTED)")


@pytest.mark.parametrize("snippet", ["STARTED = datetime.now()", "def stamp(at=time.time()):", "created = time.time()"])
def test_import_time_read_is_not_ht104(findings, snippet):
    assert not at(findings, M, line_of(FIX, M, snippet), "HT104")


@pytest.mark.parametrize("form, snippet, tests", CONSUMERS, ids=[c[0] for c in CONSUMERS])
def test_lists_the_tests_that_reach_a_consumer(findings, form, snippet, tests):
    assert listed_at(FIX, findings, "HT204", M, snippet) == {T + t for t in tests}




def test_a_clock_function_captured_only_for_durations_is_a_note(findings):
    """Every call of ``elapsed_clock`` is a duration: its capture is a note; ``date_clock`` is
    turned into a date, so its capture stays a warning."""
    def sev(snippet):
        (f,) = at(findings, M, line_of(FIX, M, snippet), "HT204")
        return f.severity
    assert sev("elapsed_clock = time.perf_counter") == "note"
    assert sev("date_clock = time.time") == "warning"


def test_the_binding_of_a_parametrize_list_is_its_decorator_line(findings):
    (f,) = at(findings, M, line_of(FIX, M, "return time.time() + 0.5"), "HT204")
    assert "for the binding at tests/test_params_clock.py:6;" in f.message


@pytest.mark.parametrize("binding, tests", [("START = utcnow()", ["test_started", "test_expired", "test_spanning"]),
                                            ("EXPIRED = utcnow() - timedelta(days=1)", ["test_expired"]),
                                            ("UNUSED = utcnow() - timedelta(days=2)", []),
                                            ("SPANNING = (", ["test_spanning"]),
                                            ('@pytest.mark.parametrize("when", [utcnow()])', ["test_param"])])
def test_each_binding_of_one_read_lists_the_tests_using_it(findings, binding, tests):
    # requests-cache's trial: the three bindings of utcnow()'s read listed the same tests
    where = "tests/test_bindings.py"
    read = line_of(FIX, "src/batch/clocks.py", "return datetime.now(timezone.utc)")
    mine = [f for f in at(findings, "src/batch/clocks.py", read, "HT204")
            if f"for the binding at {where}:{line_of(FIX, where, binding)};" in f.message]
    assert len(mine) == 1
    assert sorted(mine[0].tests) == sorted(f"{where}::{t}" for t in tests)
