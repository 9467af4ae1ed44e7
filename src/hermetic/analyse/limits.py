"""Budgets and number ranges of the abstract interpreter.

Step budgets count interpretation steps (one statement or expression evaluated); depths count
frames. Instance ids are ints: below ``LAZY_HEAP_BASE`` made at import, in blocks of
``1 << LAZY_BLOCK_BITS`` per module imported after collection, from ``TEST_HEAP_BASE`` made by
the running test. ``MAX_DEPTH`` and ``STEP_BUDGET`` are read by ``interp.Interp.call_function``
through ``analyse.interp``, where tests may set them.
"""
from __future__ import annotations


MAX_DEPTH = 40
NO_CUT = 1 << 30   # Interp.cut_at when nothing was cut
TEST_HEAP_BASE = 1 << 45   # ids of the instances a run makes; below: instances made at import
LAZY_HEAP_BASE = 1 << 32   # instances made by modules imported after collection: a block per module
LAZY_BLOCK_BITS = 20
STEP_BUDGET = 10_000      # interpretation steps per call, its callees' included (in the sweep: SWEEP_BUDGET)
RUN_STEPS = 200_000       # a run (a test, a module's import) stops after this many steps (in the sweep: SWEEP_RUN_STEPS)
MEMO_LIMIT = 8_000         # memo entries kept before a reset (alternatives count): Django's largest worker 353-388 MiB (at 15k 380-445 since more branches stay open), about 6% slower
_GROUP_MASK = 1023          # ``Interp.greads``: 1,024 bits
_GROUP_BITS = [1 << i for i in range(_GROUP_MASK + 1)]   # shared: a cached bit is a pointer, not a 1,024-bit int
# a bit of ``greads`` past the groups: the run read an attribute of an object made at import (a
# registry, a settings object), which set-up the analysis does not see may have changed
# (``django.setup()`` populating the app registry): a raise decided on it is not passed on
IMPORT_STATE_READ = 1 << (_GROUP_MASK + 1)
_TOUCH = "<touch>"   # the name of a module's touch cell (``Interp._touch``)
MEMO_ALTERNATIVES = 2      # entries kept per memo key (the same call on other shared state); 4 reused no more on Django
MAX_COUNTS = 16            # known integers a counter may hold (joined over ways, or added to); beyond, the last write
SWEEP_BUDGET = 3_000
# the note a call cut at a budget carries in the unresolved calls (``budget_cut`` counts them)
BUDGET_NOTE = " (analysis budget reached)"
SWEEP_RUN_STEPS = 24_000
SWEEP_DEPTH = 6          # frames followed below each function in the HT201 sweep
UNROLL_ITEMS = 8         # a loop over at most this many items known in order runs once per item (loops.py)
UNROLL_RUNS = 48         # ... while the body runs at most this many times in its frame (nested loops multiply)


def budget_cut(call_text: str) -> bool:
    """An unresolved call's text is one the analysis cut at its step budget (``BUDGET_NOTE``)."""
    return call_text.endswith(BUDGET_NOTE)
