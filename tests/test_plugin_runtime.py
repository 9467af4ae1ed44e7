"""The runtime check's pure parts: classification by folder, network peers, databases,
test-code paths, suppressions, record files and their merge."""
import json
import sys

import pytest

from hermetic.runtime import recorder as runtime
from hermetic.runtime.recorder import CONTROLLED, UNCONTROLLED, Roots, path_verdict


@pytest.fixture
def roots(tmp_path):
    """A project inside the home folder, pytest's tmp root, an interpreter with a venv in the project."""
    home = tmp_path / "home"
    project = home / "proj"
    r = Roots(str(project), home=str(home), tmp=[str(tmp_path / "pytest-of-me")],
              machinery=[str(project / ".venv"), str(tmp_path / "python")])
    return r


def verdict(roots, tmp_path, rel, write=False, **kw):
    res = path_verdict(str(tmp_path / rel), write, roots, **kw)
    return res and res[0]


@pytest.mark.parametrize("rel, write, expected", [
    ("pytest-of-me/pytest-3/test_x0/out.json", True, CONTROLLED),
    ("home/proj/tests/data/sample.csv", False, CONTROLLED),           # shipped with the tests (V2)
    ("home/proj/src/app/data/template.txt", True, UNCONTROLLED),      # a write into the repository
    ("home/.config/app.toml", False, UNCONTROLLED),                   # the home folder
    ("home/.config/app.toml", True, UNCONTROLLED),
    ("home/proj/.venv/lib/site-packages/x.py", False, None),          # machinery: not recorded
    ("home/proj/.venv/lib/site-packages/x.py", True, UNCONTROLLED),
    ("python/lib/python3.11/os.py", False, None),
    ("srv/exports/report.json", True, UNCONTROLLED),                  # outside the project and tmp
], ids=["tmp", "project-read", "project-write", "home-read", "home-write", "venv-read", "venv-write",
        "stdlib-read", "elsewhere"])
def test_the_deepest_folder_decides(roots, tmp_path, rel, write, expected):
    assert verdict(roots, tmp_path, rel, write) == expected


def test_a_relative_read_in_the_project_depends_on_who_reads(roots, tmp_path):
    assert verdict(roots, tmp_path, "home/proj/config.ini", relative=True, test_code=True) == CONTROLLED
    assert verdict(roots, tmp_path, "home/proj/config.ini", relative=True, test_code=False) == UNCONTROLLED
    assert verdict(roots, tmp_path, "home/proj/config.ini", relative=False, test_code=False) == CONTROLLED


def test_a_folder_made_by_tempfile_is_scratch(roots, tmp_path):
    made = tmp_path / "var" / "tmpab12cd"
    assert verdict(roots, tmp_path, "var/tmpab12cd/x.txt", True) == UNCONTROLLED
    roots.add_scratch(str(made))
    assert verdict(roots, tmp_path, "var/tmpab12cd/sub/x.txt", True) == CONTROLLED
    assert verdict(roots, tmp_path, "var/tmpab12cd2/x.txt", True) == UNCONTROLLED   # a sibling is not


def test_a_home_folder_inside_the_project_wins_over_the_project(tmp_path):
    # pytester's layout: the inner rootdir holds the scratch HOME
    r = Roots(str(tmp_path / "p"), home=str(tmp_path / "p" / "home"), tmp=[str(tmp_path)])
    assert path_verdict(str(tmp_path / "p" / "home" / ".app" / "x"), True, r) == (UNCONTROLLED, "the home folder")
    assert path_verdict(str(tmp_path / "p" / "x"), True, r) == (UNCONTROLLED, "a write into the project tree")
    assert path_verdict(str(tmp_path / "q" / "x"), True, r) == (CONTROLLED, "under the test's temporary folder")


@pytest.mark.parametrize("path, write", [("/dev/null", True), ("/dev/urandom", False),
                                         ("/etc/ssl/certs/ca-certificates.crt", False),
                                         ("/usr/share/zoneinfo/Europe/Paris", False)])
def test_devices_and_system_data_are_not_the_tests_io(roots, path, write):
    assert path_verdict(path, write, roots) is None


def test_a_write_to_system_data_is_uncontrolled(roots):
    assert path_verdict("/etc/hosts", True, roots)[0] == UNCONTROLLED


@pytest.mark.parametrize("host, loop", [("127.0.0.1", True), ("127.8.0.1", True), ("::1", True),
                                        ("localhost", True), ("api.localhost", True), ("[::1]", True),
                                        ("::ffff:127.0.0.1", True), (None, True), ("", True),
                                        ("10.0.0.5", False), ("192.0.2.1", False), ("example.com", False),
                                        (b"127.0.0.1", True)])
def test_loopback(host, loop):
    assert runtime.is_loopback(host) is loop


def test_address_verdicts():
    assert runtime.address_verdict("192.0.2.1", 443, loopback_allowed=True)[0] == UNCONTROLLED
    assert runtime.address_verdict("127.0.0.1", 5432, loopback_allowed=False)[0] == UNCONTROLLED
    assert runtime.address_verdict("127.0.0.1", 5432, loopback_allowed=True)[0] == CONTROLLED
    assert runtime.address_verdict("127.0.0.1", 5432, False, own_ports=[5432]) == (
        CONTROLLED, "a loopback server this test process started")


@pytest.mark.parametrize("database, shown, path", [
    (":memory:", ":memory:", None), ("", "''", None), ("file::memory:?cache=shared", "file::memory:?cache=shared", None),
    ("file:db?mode=memory", "file:db?mode=memory", None), ("file:data.db?mode=ro", "file:data.db?mode=ro", "data.db"),
    (b"ledger.db", "ledger.db", "ledger.db")])
def test_sqlite_targets(database, shown, path):
    assert runtime.sqlite_target(database) == (shown, path)


def test_test_code_is_what_the_static_analysis_calls_test_code():
    match = runtime.test_code_matcher(["test_*.py", "check_*.py"], ["spec"])
    assert match("tests/helpers.py") and match("pkg/test/support.py") and match("src/app/conftest.py")
    assert match("test_top.py") and match("lib/check_things.py") and match("spec/support/util.py")
    assert not match("src/app/tests_util.py") and not match("src/app/store.py")


def test_inline_suppressions_follow_the_static_syntax(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("a = 1  # hermetic: ignore[HT103, HT104]\nb = 2  # hermetic: ignore\nc = 3\n"
                   "d = 4  # HERMETIC: IGNORE[ht1]\n", encoding="utf-8")
    name = str(src)
    assert runtime.suppressed_at(name, 1, "HT104") and not runtime.suppressed_at(name, 1, "HT102")
    assert runtime.suppressed_at(name, 2, "HT106")
    assert not runtime.suppressed_at(name, 3, "HT104")
    assert runtime.suppressed_at(name, 4, "HT102")          # a prefix, case-insensitive


def test_noqa_with_hermetic_codes_is_honoured_at_runtime(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("a = 1  # noqa: E501, HT103\nb = 2  # noqa\nc = 3  # noqa: E501\n", encoding="utf-8")
    name = str(src)
    assert runtime.suppressed_at(name, 1, "HT103") and not runtime.suppressed_at(name, 1, "HT104")
    assert not runtime.suppressed_at(name, 2, "HT103") and not runtime.suppressed_at(name, 3, "HT103")


def _event(test, code="HT104", verdict=UNCONTROLLED, line=3, phase="call", **extra):
    cat = {v: k for k, v in runtime.CATEGORY_CODE.items()}[code]
    ev = {"test": test, "phase": phase, "category": cat, "code": code, "operation": "time.time", "target": "",
          "access": "read", "verdict": verdict, "reason": "the real clock", "path": "src/m.py", "line": line,
          "function": "f", "via": None, "stack": [{"path": "src/m.py", "line": line, "function": "f"}], "count": 1}
    ev.update(extra)
    return ev


def _record(root, events, tests, worker=None):
    return {"version": runtime.RECORD_VERSION, "kind": "hermetic-record", "tool": {"name": "hermetic"},
            "rootdir": str(root), "mode": "record", "worker": worker, "python": "3.11.7",
            "tests": [{"nodeid": t, "outcome": "passed", "events": 1, "uncontrolled": 1, "dropped": 0} for t in tests],
            "events": events, "summary": runtime.summarize(events, len(tests), {"ignored": 2})}


def test_worker_records_are_named_by_worker_and_merged(tmp_path):
    assert runtime.worker_record_path("out/hermetic-record.json", "gw3") == "out/hermetic-record-gw3.json"
    assert runtime.worker_record_path("out/hermetic-record.json", None) == "out/hermetic-record.json"
    a = _record(tmp_path, [_event("t.py::a")], ["t.py::a"], "gw0")
    b = _record(tmp_path, [_event("t.py::b", verdict=CONTROLLED), _event("t.py::b", line=9)], ["t.py::b"], "gw1")
    merged = runtime.merge([b, a])
    assert [t["nodeid"] for t in merged["tests"]] == ["t.py::a", "t.py::b"]
    assert [(e["test"], e["line"], e["verdict"]) for e in merged["events"]] == [
        ("t.py::a", 3, UNCONTROLLED), ("t.py::b", 3, CONTROLLED), ("t.py::b", 9, UNCONTROLLED)]
    assert merged["workers"] == ["gw0", "gw1"]
    assert (merged["summary"]["events"], merged["summary"]["uncontrolled"], merged["summary"]["ignored"]) == (3, 2, 4)


def test_records_of_different_projects_do_not_merge(tmp_path):
    with pytest.raises(runtime.RecordError, match="different rootdirs"):
        runtime.merge([_record(tmp_path / "a", [], []), _record(tmp_path / "b", [], [])])


def test_bad_record_files_are_one_line_errors(tmp_path):
    missing, garbage, other = tmp_path / "missing.json", tmp_path / "garbage.json", tmp_path / "other.json"
    garbage.write_text("{not json", encoding="utf-8")
    other.write_text(json.dumps({"version": 1, "findings": []}), encoding="utf-8")
    for path, msg in ((missing, "cannot read"), (garbage, "not a JSON record"), (other, "not a hermetic record")):
        with pytest.raises(runtime.RecordError, match=msg) as exc:
            runtime.load_record(str(path))
        assert "\n" not in str(exc.value)
    good = tmp_path / "good.json"
    good.write_text(json.dumps(_record(tmp_path, [_event("t.py::a")], ["t.py::a"])), encoding="utf-8")
    assert runtime.load_record(str(good))["events"][0]["test"] == "t.py::a"


def test_the_failure_text_names_operation_target_reason_and_stack():
    ev = _event("t.py::test_x", code="HT102", operation="open", target="/home/u/.app/x", access="write",
                reason="the home folder", via="pathlib.Path.write_text", count=2,
                stack=[{"path": "src/m.py", "line": 3, "function": "save"},
                       {"path": "t.py", "line": 7, "function": "test_x"}])
    text = runtime.format_violations("t.py::test_x", [ev])
    assert text.splitlines()[:3] == [
        "hermetic: t.py::test_x performed uncontrolled I/O (1 operation):",
        "  HT102 uncontrolled file write /home/u/.app/x (the home folder): open via pathlib.Path.write_text "
        "at src/m.py:3 in f [call] [2 times]",
        "      called from t.py:7 in test_x"]


def test_a_relative_read_names_the_path_as_written(roots, tmp_path):
    path = str(tmp_path / "home/proj/settings.ini")
    assert path_verdict(path, False, roots, relative="settings.ini") == (
        UNCONTROLLED, "read by the code under test through the relative path 'settings.ini', which the "
                      "working directory resolves (not chosen by the test)")


def test_an_installed_copy_of_the_checkouts_package_is_named(tmp_path, monkeypatch):
    """The recorder watches the checkout: a package of it imported from an installed copy is said."""
    import types

    from hermetic.runtime.plugin import installed_copies

    (tmp_path / "src" / "ownpkg").mkdir(parents=True)
    (tmp_path / "src" / "ownpkg" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "localpkg").mkdir()
    (tmp_path / "localpkg" / "__init__.py").write_text("", encoding="utf-8")
    elsewhere = types.ModuleType("ownpkg")
    elsewhere.__file__ = str(tmp_path.parent / "site-packages" / "ownpkg" / "__init__.py")
    here = types.ModuleType("localpkg")
    here.__file__ = str(tmp_path / "localpkg" / "__init__.py")
    monkeypatch.setitem(sys.modules, "ownpkg", elsewhere)
    monkeypatch.setitem(sys.modules, "localpkg", here)
    assert installed_copies(str(tmp_path)) == [("ownpkg", elsewhere.__file__)]
