"""HT202: patch escapes (fixture ht202-patch-escape).

A test redirects a base (a constant, HOME) while an operation it reaches uses a value derived from
that base at import: the patch statement is HT202, the operation HT102, the derived bindings HT201.
A base patched where the test reaches only call-time uses, or patched together with every derived
binding, is silent. The finding's fix holds `monkeypatch.setattr("module.NAME", value)` lines that,
pasted after the patch, make the escape (and the HT102 behind it) go away.
"""
import ast
import builtins
import re

import pytest

from helpers import (fixture_suite, Expect, Silent, at, copy_fixture, describe, line_of)
from hermetic.api import run_check

FIX = "ht202-patch-escape"
TF = "tests/test_relay.py"
T = TF + "::"
SP = "src/relay/spool.py"
AR = "src/relay/archive.py"
PR = "src/relay/profile.py"

# (id, snippet of the patch line, test name, derived bindings the test's code uses, sink path, sink snippet)
ESCAPES = [
    ("two-levels-across-modules", 'monkeypatch.setattr(settings, "DATA_ROOT", tmp_path)',
     "test_enqueue_moves_only_the_data_root", ["relay.spool.OUTGOING_DIR"],
     SP, '(OUTGOING_DIR / f"{name}.msg").write_text'),
    ("dotted-string", 'monkeypatch.setattr("relay.archive.ARCHIVE_DIR", tmp_path)',
     "test_log_sent_moves_only_the_archive", ["relay.archive.SENT_LOG"],
     AR, 'with SENT_LOG.open("a"'),
    ("setenv-home", 'monkeypatch.setenv("HOME", str(tmp_path))',
     "test_profile_with_home_moved", ["relay.profile.PROFILE_DIR"],
     PR, '(PROFILE_DIR / "profile.json").write_text'),
]

EXPECTED = [Expect("HT202-" + e[0], "HT202", TF, e[1], tests=[T + e[2]]) for e in ESCAPES] + [
    Expect("HT102-" + e[0], "HT102", e[4], e[5], tests=[T + e[2]], origin="module-constant") for e in ESCAPES
] + [
    # B and C of DATA_ROOT -> SPOOL_DIR -> OUTGOING_DIR; SENT_LOG; the home-derived PROFILE_DIR
    Expect("spool-dir", "HT201", SP, 'SPOOL_DIR = settings.DATA_ROOT / "spool"'),
    Expect("outgoing-dir", "HT201", SP, 'OUTGOING_DIR = SPOOL_DIR / "outgoing"'),
    Expect("sent-log", "HT201", AR, 'SENT_LOG = ARCHIVE_DIR / "sent.log"'),
    Expect("profile-dir", "HT201", PR, 'PROFILE_DIR = Path.home() / ".relay"'),
]

SILENT = [
    Silent("base-patched-only-call-time-uses", TF, 'monkeypatch.setattr(settings, "DATA_ROOT", root)',
           "the test reaches only status_file(), computed at call time: no operation on a derived value"),
    Silent("dotted-base-only-call-time-uses", TF, 'monkeypatch.setattr("relay.archive.ARCHIVE_DIR", scratch)',
           "store() builds its path from ARCHIVE_DIR at call time"),
    Silent("home-only-call-time-uses", TF, 'monkeypatch.setenv("HOME", str(home))',
           "save_cache() calls Path.home() at call time: follows the setenv (V3); restored (not HT302)"),
    Silent("fixture-moves-base", TF, 'monkeypatch.setattr(archive, "ARCHIVE_DIR", tmp_path)',
           "the fixture also moves SENT_LOG: no escape"),
    Silent("fixture-moves-derived", TF, 'monkeypatch.setattr(archive, "SENT_LOG", tmp_path / "sent.log")',
           "restored by monkeypatch (not HT303)"),
    Silent("status-write", SP, 'status_file().write_text(text', "under the patched DATA_ROOT (tmp_path)"),
    Silent("archive-store-write", AR, "archive_path(name).write_text", "under the patched ARCHIVE_DIR in both tests"),
    Silent("cache-write", PR, '(cache_dir() / "last.json").write_text', "Path.home() after setenv HOME=tmp (V3)"),
    Silent("literal-base", "src/relay/settings.py", 'DATA_ROOT = Path("/srv/relay")', "a literal is not HT201"),
    Silent("literal-archive", AR, 'ARCHIVE_DIR = Path("/srv/relay-archive")', "a literal is not HT201"),
    Silent("call-site", TF, 'spool.enqueue("hello", "hi")', "HT102 is anchored at the write"),
]

findings, test_reported, test_silent, test_nothing_else = fixture_suite(FIX, EXPECTED, SILENT)


def test_sent_log_write_not_listed_for_the_fixture_that_moves_everything(findings):
    from helpers import listed_at
    assert listed_at(FIX, findings, "HT102", AR, 'with SENT_LOG.open("a"') == {T + "test_log_sent_moves_only_the_archive"}


@pytest.mark.parametrize("esc", ESCAPES, ids=[e[0] for e in ESCAPES])
def test_message_names_the_missed_binding(findings, esc):
    line = line_of(FIX, TF, esc[1])
    [found] = at(findings, TF, line, "HT202")
    for dotted in esc[3]:
        assert dotted.rsplit(".", 1)[1] in found.message, found.message


# --- the fix lines, pasted -------------------------------------------------------------------

SETATTR_LINE = re.compile(r'^\s*(monkeypatch\.setattr\("([\w.]+)", .+\))\s*$')


def fix_lines(finding) -> list:
    return [m.group(1) for m in map(SETATTR_LINE.match, (finding.fix or "").splitlines()) if m]


def names_available(test_module: str, test_name: str) -> set:
    tree = ast.parse(test_module)
    names = set(dir(builtins))
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    [func] = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == test_name]
    names |= {a.arg for a in func.args.args}
    return names


def check_in(project, monkeypatch):
    monkeypatch.setenv("HOME", str(project.parent))
    monkeypatch.chdir(project.parent)
    report, _cfg = run_check([], project)
    assert not report.errors, [(e.path, e.message) for e in report.errors]
    return report.findings


@pytest.mark.parametrize("esc", ESCAPES, ids=[e[0] for e in ESCAPES])
def test_pasting_the_fix_lines_removes_the_escape(tmp_path, monkeypatch, esc):
    _id, patch_snippet, test_name, derived, sink_path, sink_snippet = esc
    project = copy_fixture(FIX, tmp_path)
    patch_line = line_of(FIX, TF, patch_snippet)
    sink_line = line_of(FIX, sink_path, sink_snippet)

    before = check_in(project, monkeypatch)
    [escape] = at(before, TF, patch_line, "HT202")
    assert T + test_name in listed_at_line(before, "HT102", sink_path, sink_line)

    lines = fix_lines(escape)
    assert lines, f"no ready-to-paste monkeypatch.setattr lines in the fix: {escape.fix!r}"
    targets = {SETATTR_LINE.match(line).group(2) for line in lines}
    assert set(derived) <= targets, (derived, lines)

    test_file = project / TF
    source = test_file.read_text(encoding="utf-8").splitlines(keepends=True)
    original = source[patch_line - 1]
    indent = original[: len(original) - len(original.lstrip())]
    source[patch_line:patch_line] = [indent + line + "\n" for line in lines]
    pasted = "".join(source)
    available = names_available(pasted, test_name)
    for line in lines:
        used = {n.id for n in ast.walk(ast.parse(line)) if isinstance(n, ast.Name)}
        assert used <= available, f"{line!r} uses names the test does not have: {used - available}"
    test_file.write_text(pasted, encoding="utf-8")

    after = check_in(project, monkeypatch)
    assert not at(after, TF, patch_line, "HT202"), describe(after)
    assert not [f for f in after if f.code == "HT202" and T + test_name in f.tests], describe(after)
    assert T + test_name not in listed_at_line(after, "HT102", sink_path, sink_line), describe(after)


def listed_at_line(findings, code, path, line) -> set:
    return {t for f in at(findings, path, line, code) for t in f.tests}
