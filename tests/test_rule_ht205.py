"""HT205: patches that miss (fixture ht205-patch-misses).

Reported, at the patch statement: `mock.patch("shop.rates.fetch")` (decorator) missing the
`from shop.rates import fetch` bindings of quote and invoice (one finding naming both);
`monkeypatch.setattr(rates, "fetch", ...)` missing invoice's binding; `patch.object(clock, "utcnow")`
missing receipt's binding; `monkeypatch.setattr(transport, "deliver", ...)` missing a default
argument that captured the function; a freeze_time missing a default argument (the default itself is
HT204); `patch("time.sleep")` missing a project module's `from time import sleep`. A missed
binding reached only past a branch the test's values do not decide is reported with medium
confidence (contract section 4), one reached on a decided way with high (near miss). A standard
library object bound by name (`from sys import stdout`) misses the patch where the code uses it
(`stdout.write`, an argument), not where it only compares it (near miss).
Silent: a patch where the name is looked up; a patch of m.f while another module's `from m import f`
is never reached by the test; `patch("time.sleep")` reaching `import time; time.sleep()`; a
freeze_time reaching a call-time datetime.now(); and (contract S1) the sink behind a missed binding,
which is covered by the HT205 and "not reported again".
"""

from helpers import (fixture_suite, Expect, Silent, at, line_of, listed_at)

FIX = "ht205-patch-misses"
TF = "tests/test_shop.py"
T = TF + "::"
RC = "src/shop/receipt.py"


EXPECTED = [
    # patch("pkg.sub") replaces the package's attribute; `from pkg import sub` keeps the module
    Expect("submodule-binding", "HT205", "tests/test_hooks.py", 'with patch("shop.sorter", MagicMock()):'),
    Expect("mock-patch-string-decorator", "HT205", TF, '@mock.patch("shop.rates.fetch", return_value={"USD": 1.25})',
           tests=[T + "test_quote_and_invoice_patching_the_source"]),
    Expect("monkeypatch-setattr", "HT205", TF, 'monkeypatch.setattr(rates, "fetch", lambda: {"GBP": 0.8})',
           tests=[T + "test_invoice_with_setattr_on_the_source"]),
    Expect("patch-object", "HT205", TF, 'with mock.patch.object(clock, "utcnow", return_value=NOON):',
           tests=[T + "test_header_patching_the_clock_module"]),
    Expect("setattr-misses-default-argument", "HT205", TF,
           'monkeypatch.setattr(transport, "deliver", lambda to, text: sent.append(to))',
           tests=[T + "test_send_receipt_with_fake_transport"]),
    Expect("freeze-misses-default-argument", "HT205", TF, '@freeze_time("2030-06-01 12:00:00")',
           tests=[T + "test_stamp_under_freeze"]),
    Expect("default-argument-clock", "HT204", RC, "def stamp(sale_id, at=datetime.now()):", origin="clock"),
    Expect("patch-time-sleep-from-import", "HT205", TF, '@mock.patch("time.sleep")',
           tests=[T + "test_backoff_without_waiting"]),
    # a standard object bound by name and used (stdout.write) misses the patch; one only compared
    # (`self._file is not stdout`, structlog's PrintLogger) does not (near miss)
    Expect("standard-object-used", "HT205", TF, 'monkeypatch.setattr(sys, "stdout", io.StringIO())   # shout',
           tests=[T + "test_shout_with_a_patched_stdout"]),
    Expect("missed-on-an-undecided-way", "HT205", TF, '@mock.patch("shop.rates.fetch", return_value={"EUR": 0.5})',
           tests=[T + "test_convert_on_odd_days_patching_the_source"]),
]

SILENT = [
    Silent("submodule-binding-patched", "tests/test_hooks.py", 'with patch("shop.hooks.sorter", MagicMock()):',
           "the binding hooks looks up is the one patched"),
    Silent("submodule-write-not-reported-again", "src/shop/sorter.py", 'tmp.write_text("")',
           "what runs through the missed binding is the HT205's, not an HT102 of its own"),
    Silent("standard-object-only-compared", TF, 'monkeypatch.setattr(sys, "stdout", io.StringIO())   # the printer',
           "console.Printer only compares its stdout binding; print() looks sys.stdout up"),
    Silent("patched-where-looked-up", TF, '@mock.patch("shop.quote.fetch"', "quote looks fetch up as shop.quote.fetch"),
    Silent("from-import-never-reached", TF, 'with mock.patch("shop.rates.fetch", return_value={"CHF": 0.5}):',
           "quote/invoice bind fetch with from-imports, but this test reaches only catalog (rates.fetch at call time)"),
    Silent("patch-object-where-looked-up", TF, 'with mock.patch.object(receipt, "utcnow"', "receipt's own binding"),
    Silent("setattr-call-time-lookup", TF, 'monkeypatch.setattr(transport, "deliver", fake_deliver)',
           "notify looks transport.deliver up at call time"),
    Silent("time-sleep-call-time-lookup", TF, 'with mock.patch("time.sleep") as fake_sleep:',
           "retry calls time.sleep() through `import time`"),
    Silent("freeze-reaches-call-time-read", TF, '@freeze_time("2030-06-01 18:30:00")',
           "printed_on reads datetime.now() at call time: controlled (S3), not HT205"),
    Silent("frozen-call-time-read", RC, "printed {datetime.now():%Y-%m-%d}", "S3: under freeze_time"),
    Silent("from-import-line", "src/shop/quote.py", "from shop.rates import fetch", "HT205 is anchored at the patch"),
    Silent("from-import-sleep", "src/shop/backoff.py", "from time import sleep", "HT205 is anchored at the patch"),
    Silent("receipt-binding-call", RC, 'return f"{shop_name} {utcnow():', "the call through the binding"),
    Silent("call-site", TF, 'assert invoice.total([10], "GBP") == 8.0', "HT205 is at the patch"),
    # sinks reached only through a binding the patch misses (contract S1: not reported again)
    Silent("not-again-from-import-network", "src/shop/rates.py", "with urlopen(RATES_URL, timeout=10)",
           "reached only through quote/invoice's missed from-import bindings"),
    Silent("not-again-from-import-clock", "src/shop/clock.py", "return datetime.now(timezone.utc)",
           "reached only through receipt's missed from-import binding"),
    Silent("not-again-default-argument", "src/shop/transport.py", 'smtplib.SMTP("relay.office.example")',
           "reached only through send_receipt's default argument bound before the patch"),
]

findings, test_reported, test_silent, test_nothing_else = fixture_suite(FIX, EXPECTED, SILENT)


def test_one_finding_names_every_missed_binding(findings):
    line = line_of(FIX, TF, '@mock.patch("shop.rates.fetch", return_value={"USD": 1.25})')
    [found] = at(findings, TF, line, "HT205")
    assert "shop.quote.fetch" in found.message and "shop.invoice.fetch" in found.message, found.message


def test_fix_names_where_to_patch(findings):
    line = line_of(FIX, TF, 'with mock.patch.object(clock, "utcnow", return_value=NOON):')
    [found] = at(findings, TF, line, "HT205")
    assert "shop.receipt.utcnow" in (found.fix or ""), found.fix


def test_freeze_default_is_ht204_not_ht104(findings):
    assert not at(findings, RC, line_of(FIX, RC, "def stamp(sale_id, at=datetime.now()):"), "HT104")
    assert not [f for f in findings if f.code == "HT104" and T + "test_printed_on_under_freeze" in f.tests]


def test_ht204_lists_the_tests_that_reach_the_default(findings):
    assert listed_at(FIX, findings, "HT204", RC, "def stamp(sale_id, at=datetime.now()):") == {
        T + "test_stamp_under_freeze"}




def test_confidence_is_medium_where_the_miss_is_reached_only_on_undecided_ways(findings):
    odd = line_of(FIX, TF, '@mock.patch("shop.rates.fetch", return_value={"EUR": 0.5})')
    [found] = at(findings, TF, odd, "HT205")
    assert found.confidence == "medium"
    both = line_of(FIX, TF, '@mock.patch("shop.rates.fetch", return_value={"USD": 1.25})')
    [found] = at(findings, TF, both, "HT205")
    assert found.confidence == "high"   # quote.convert's lookup has no condition before it
