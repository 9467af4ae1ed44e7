"""Alternative ways and the test's instances (contract section 1, "what a test reaches"),
fixture flow-ways.

A pool blocks, and reads the clock, only once every connection it may open is out:
``wait = use_overflow and self._overflow >= self._max_overflow`` is a known bool when the
comparison is decided, so a default pool's two connects never wait (the near miss). The
counter is written on alternative ways (``+= 1`` on one, ``-= 1`` in an ``except``): after
them it holds every value a way left, not the last one written, so the small pool's second
connect may wait; arithmetic on such a counter is done for each count (`{-2, -1} + 1` is
`{-1, 0}`), so a roomy pool's third connect does not wait (near miss). A project descriptor class whose ``__get__`` sits under
``if not TYPE_CHECKING`` / ``else`` makes the method an attribute: ``not conn.info`` is
``not {}``, the check passes and the test goes on to the waiting connect. A method the body
defines under a version check no running Python takes is not the class's (its base's is).

A loop over items known to be there (a tuple or list display as made) runs its body: a check
that raises for the test's one pair ends the call before the clock read, and "the first
candidate wins" never falls back to the working directory. Over a few items known in order it
runs once per item, with its ``break`` and ``continue``: a loop that continues past None
returns the candidate after it, and a folder lookup takes the folder the test made on its
first item. A comprehension may be empty, a list emptied in place before the call holds no
item for certain, and a loop that continues past every item falls back: those stay reached
(near misses). ``if shared is not None:`` narrows ``shared`` on each way. A list made empty
and never filled since holds no item: a loop over it never runs, and nothing is ``in`` it (or
in an empty tuple); one handed to a function, or bound to another name, may have been filled
there, and one a loop's body fills and reads holds, on a later pass, what an earlier one put in
(near misses: a name the test marks, a list a function gathers into, duplicates looked for).

A parametrized test runs once per row where its ``parametrize`` marks list a few rows
(``parametrize.MAX_ROWS`` in all): two parameters that decide a way together are taken row by
row (a row with its own time never reads the clock), and a row that sets one variable leaves
the other one read. Past the limit the rows are joined, each parameter any of its values.

A finding lists the tests whose own values reach it: where some reach it through branches their
values decide, a test that reaches it only on a way its values do not decide is counted in the
message, not listed (``rules.uncontrolled._listed``); where none does, every test is listed.

``pytest.raises(E, f, *args)`` and unittest's ``assertRaises(E, f, *args)`` (``assertRaisesRegex(E,
regex, f, *args)``) call ``f(*args)``, as their ``with`` forms run the block.
"""
from helpers import Expect, Silent, fixture_suite

FIX = "flow-ways"
Q = "src/pooling/queue.py"
C = "src/pooling/config.py"
T = "tests/test_pool.py::"
TC = "tests/test_config.py::"

U = "src/pooling/units.py"
TU = "tests/test_units.py::"

MO = "src/pooling/modes.py"
TMO = "tests/test_modes.py::"

EXPECTED = [
    # set on one way of an undecided branch only: the read is not controlled on the other (section 2)
    Expect("variable-set-on-one-way", "HT103", "src/pooling/region.py", 'return os.environ.get("POOL_REGION", "us")',
           tests=["tests/test_region.py::test_region_on_one_way"]),
    # a library exit under a branch scalars decide ends the test's way; under a list's emptiness
    # (a value the analysis may misread) it does not
    Expect("skip-ruled-out-by-the-constant", "HT103", "tests/test_offline.py", 'os.environ.get("POOL_OFFLINE_TOKEN")'),
    Expect("fail-under-a-list-goes-on", "HT103", "tests/test_offline.py", 'os.environ.get("POOL_RESULTS_TOKEN")'),
    # six.iteritems(d) is d.items(): over a dict known empty it runs nothing (APScheduler's
    # job stores; a new user's trial); with a store added, the read after it runs
    Expect("six-iteritems-of-an-empty-dict", "HT104", "src/pooling/stores.py", "return time.time() + 1",
           tests=["tests/test_stores.py::test_one_store"], origin="clock"),
    # every reaching test is in `tests` (contract section 4), one reaching it only on a way its
    # values do not decide too (it is counted in the message and named in maybe_tests); a test
    # whose values rule the way out is not
    Expect("listed-where-the-values-decide", "HT102", MO, 'with open("/var/log/pooling/full.log", "a")',
           tests=[TMO + "test_drawn_mode", TMO + "test_full_log"]),
    Expect("listed-where-no-test-decides", "HT102", MO, 'with open("/var/log/pooling/brief.log", "a")',
           tests=[TMO + "test_drawn_mode"]),
    # pytest.raises(E, f, *args) and self.assertRaises(E, f, *args) call f(*args): a known unit
    # reaches the clock read, an unknown one raises before it (near misses)
    Expect("the-call-form-of-raises", "HT104", U, "return time.time() + every",
           tests=[TU + "UnitsTest::test_a_known_unit_with_a_message", TU + "test_a_known_unit_through_the_call_form"],
           origin="clock"),
    # `for _ in range(3):` runs its body (a new user's trial on typer); `range(0)` never does
    Expect("one-of-several-callables", "HT104", U, "return time.time() - 3.0",
           tests=[TU + "test_stamp_of_either_binding"], origin="clock"),
    Expect("a-counted-range-runs", "HT104", U, "return time.monotonic() - 1.0",
           tests=[TU + "test_retried_three_times"], origin="clock"),
    Expect("waits-when-every-connection-is-out", "HT104", Q, "deadline = time.time() + timeout",
           tests=[T + "test_info_then_wait", T + "test_label_then_wait", T + "test_small_pool_no_overflow"],
           origin="clock"),
    Expect("a-loop-over-known-items-runs", "HT104", C, 'pairs["applied"] = time.time()',
           tests=[TC + "test_pairs_are_applied"], origin="clock"),
    # *args holds exactly what the call wrote; a spread comprehension may be empty
    Expect("args-written-at-the-call", "HT104", C, "return time.time()   # only once every pair",
           tests=[TC + "test_stamp_spread_pairs"], origin="clock"),
    # try: os.environ["K"] except KeyError: the handler runs only where the test did not set K
    # (set on one way of the test only: the handler may run)
    Expect("environ-key-set-by-the-test", "HT102", C, "with open(settings_file()) as fh:",
           tests=[TC + "test_settings_of_whoever_runs_the_tests", TC + "test_settings_named_on_one_way"]),
    # a library decorator may call the function with arguments of its own: *args not known
    Expect("args-behind-a-library-decorator", "HT102", C, 'with open("/var/spool/pooling/drained", "w") as fh:',
           tests=[TC + "test_drain_through_a_library_decorator"], origin="literal"),
    # (the parametrized test's row that does not set it reads it from whoever runs the tests)
    Expect("environ-key-read", "HT103", C, 'path = os.environ["POOL_SETTINGS"]',
           tests=[TC + "test_settings_of_whoever_runs_the_tests", TC + "test_settings_named_on_one_way"]),
    Expect("a-list-written-in-the-loop-runs", "HT102", C, "with open(first_known()) as fh:",
           tests=[TC + "test_read_the_known_candidate"], origin="literal"),
    # near misses: a list display as made holds its item; a loop that continues past None
    # returns the candidate after it (the loop runs per item, in order)
    Expect("a-fallback-after-an-empty-or-continued-loop", "HT102", C, 'with open(path, "w") as fh:',
           tests=[TC + "test_config_from_a_filtered_list", TC + "test_config_every_candidate_missing",
                  TC + "test_config_candidates_emptied_first"],
           origin="cwd"),
]

L = "src/pooling/lookup.py"
TL = "tests/test_lookup.py::"
EXPECTED += [
    # a loop runs per item in order: the made folder is taken on the first item (near miss: a
    # missing one is continued past, to the working directory); the comprehension of the
    # test's list display holds an item (the exists() question raises nothing in tmp_path)
    # a comprehension over the test's list display is taken item by item: an option is left out
    # (near miss: only an option, no folder)
    Expect("a-loop-continues-past-a-missing-folder", "HT102", L, "names = os.listdir(folder)",
           tests=[TL + "test_settings_in_a_missing_folder", TL + "test_settings_with_only_an_option"], origin="cwd"),
    # `if shared is not None:` narrows `shared` on its way: the folder is never None after it
    # (near miss: no first path to fall back on)
    Expect("narrowed-on-an-is-none-test", "HT102", L, "return os.listdir(folder)",
           tests=[TL + "test_common_folder_of_no_path"], origin="cwd"),
]

R = "src/pooling/rows.py"
TR = "tests/test_rows.py::"
EXPECTED += [
    # a parametrized test runs once per row (up to parametrize.MAX_ROWS): the row that brings its
    # own time and the one that raises never read the clock; the "now" row without a time does
    Expect("each-parametrize-row-decides-its-way", "HT104", R, "return time.time()   # only a",
           tests=[TR + "test_stamp_now_row"], origin="clock"),
    # past MAX_ROWS the rows are joined: any kind meets any time, the clock may be read
    Expect("rows-past-the-limit-are-joined", "HT104", R, "return time.time()   # rows past",
           tests=[TR + "test_late_stamp_many_rows"], origin="clock"),
    # each row sets one variable; joined, either name might be set and neither read was reported
    Expect("a-row-sets-one-variable-the-other-is-read", "HT103", R, 'os.environ.get("POOL_HTTP_PROXY")',
           tests=[TR + "test_proxy_from_the_environment"]),
    Expect("a-row-sets-one-variable-the-other-is-read-too", "HT103", R, 'os.environ.get("POOL_HTTPS_PROXY")',
           tests=[TR + "test_proxy_from_the_environment"]),
]

M = "src/pooling/marked.py"
TM = "tests/test_marked.py::"
EXPECTED += [
    # not test_nothing_marked: no name is in (), so the list made empty is never filled
    Expect("copied-folder-replaced", "HT102", M, 'shutil.rmtree(os.path.join("build", "copied"))',
           tests=[TM + "test_docs_marked"]),
    Expect("gathered-folder-removed", "HT102", M, 'shutil.rmtree(os.path.join("build", "gathered"))',
           tests=[TM + "test_gathered"]),
    Expect("duplicate-removed", "HT102", M, 'shutil.rmtree(os.path.join("build", "duplicate"))',
           tests=[TM + "test_duplicates"]),
]

SILENT = [
    Silent("skip-under-a-true-constant", "tests/test_offline.py", 'os.environ.get("POOL_API_TOKEN")',
           "OFFLINE = True decides the skip: nothing after it runs"),
    Silent("skip-under-constants-compared", "tests/test_offline.py", 'os.environ.get("POOL_RECORD_TOKEN")',
           "MODE == 'replay' and OFFLINE: the skip always runs"),
]

findings, test_reported, test_silent, test_nothing_else = fixture_suite(FIX, EXPECTED, SILENT)


class _Heap:
    """The part of the interpreter ``WayWrites`` uses: one instance's attributes."""

    def __init__(self, **attrs):
        self.heap = {1: {"cls": None, "attrs": dict(attrs)}}
        self.attr_undo = None

    def set_attr(self, iid, name, val):
        if self.attr_undo is not None:
            self.attr_undo.append((iid, name, self.heap[iid]["attrs"].get(name)))
        self.heap[iid]["attrs"][name] = val


def test_a_counter_holds_every_ways_count_and_anything_else_the_last_write():
    from hermetic.analyse.values import lit, of
    from hermetic.analyse.ways import WayWrites

    one, two = lit(1, None, None, False), lit(2, None, None, False)
    empty, filled = of(("dict", ())), of(("dict", (("k", one),)))
    interp = _Heap(n=one, d=empty)
    ways = WayWrites(interp)
    interp.set_attr(1, "n", two)      # the first way writes both
    interp.set_attr(1, "d", filled)
    ways.end_way()
    # the next way starts from the count before; the dict keeps the write, as the ways run in turn
    assert interp.heap[1]["attrs"] == {"n": one, "d": filled}
    ways.end_way()                    # the second writes nothing
    ways.finish()
    assert interp.heap[1]["attrs"]["n"] == one | two
    assert interp.heap[1]["attrs"]["d"] == filled
    assert interp.attr_undo is None


def _loops(source: str) -> list:
    from hermetic.summarise.extract import summarize

    body = summarize(source.encode(), "m", "m.py")["functions"]["m.f"]["body"]
    out = []

    def walk(stmts):
        for st in stmts:
            if st[0] == "for":
                out.append(len(st) > 6)
                walk(st[3])
                walk(st[4])

    walk(body)
    return out


def test_a_loop_knows_its_own_break_or_continue_only():
    assert _loops("def f(xs):\n    for x in xs:\n        if x:\n            break\n") == [True]
    assert _loops("def f(xs):\n    for x in xs:\n        try:\n            continue\n        finally:\n            pass\n") == [True]
    # the inner loop's break is its own; a nested function's is not the loop's
    assert _loops("def f(xs):\n    for x in xs:\n        for y in x:\n            break\n") == [False, True]
    assert _loops("def f(xs):\n    for x in xs:\n        def g():\n            for y in x: continue\n") == [False]
    # a nested loop's else belongs to the outer loop
    assert _loops("def f(xs):\n    for x in xs:\n        for y in x:\n            pass\n        else:\n            break\n") \
        == [True, False]
    assert _loops("def f(xs):\n    for x in xs: return x\n") == [False]


def test_a_test_whose_values_do_not_decide_is_counted(findings):
    import helpers

    (full,) = helpers.at(findings, MO, helpers.line_of(FIX, MO, '"/var/log/pooling/full.log"'), "HT102")
    assert full.confidence == "high"
    assert full.message.endswith("; 1 more test may reach it on ways its values do not decide")
    assert full.maybe_tests == [TMO + "test_drawn_mode"]   # named in the JSON report, and as "maybe:"
    assert full.to_json()["maybe_tests"] == [TMO + "test_drawn_mode"]
    (brief,) = helpers.at(findings, MO, helpers.line_of(FIX, MO, '"/var/log/pooling/brief.log"'), "HT102")
    assert brief.confidence == "medium" and "may reach" not in brief.message


def test_a_loop_over_range_zero_runs_nothing(findings):
    import helpers

    assert helpers.at(findings, U, helpers.line_of(FIX, U, "return time.time() - 2.0"), "HT104") == []
    (counted,) = helpers.at(findings, U, helpers.line_of(FIX, U, "return time.monotonic() - 1.0"), "HT104")
    assert counted.confidence == "high"   # the loop's body runs: nothing undecided on the way


def test_a_call_of_one_of_several_callables_is_medium(findings):
    """A name bound on the two ways of an undecided ``if`` (a library's function or a fallback
    ``def``, a new user's trial on alembic): the fallback's clock read is reached on a way the
    values do not decide."""
    import helpers

    (either,) = helpers.at(findings, U, helpers.line_of(FIX, U, "return time.time() - 3.0"), "HT104")
    assert either.confidence == "medium"


def test_dict_alternatives_after_many_branches_are_merged_into_one():
    # a dict filled by a run of undecided ifs doubled with each (rq's Job.to_dict: 2048 after 11)
    from hermetic.analyse.values import WHOLE, lit, of
    from hermetic.analyse.ways import union_locals, widened

    def d(*keys):
        return of(("dict", tuple((k, lit(k.upper(), "m.py", 1, False)) for k in keys), WHOLE))

    ways = [{"obj": d("a", *(f"k{i}" for i in range(n)))} for n in range(20)]
    merged = union_locals(ways)["obj"]
    [one] = merged.atoms
    assert one[0] == "dict" and {k for k, _v in one[1]} == {"a"} | {f"k{i}" for i in range(19)}
    assert WHOLE not in one[2:]   # the keys differ between the alternatives
    few = union_locals(ways[:3])["obj"]
    assert len(few.atoms) == 3 and widened(few) == few   # a few alternatives stay apart
