"""HT201: module-level path constants computed at import (fixture ht201-path-constants).

Reported: computed from another constant / the home folder / the environment / the working
directory / __file__ and written through; from the home folder and only read. Silent: a literal
path, a read-only data folder built from __file__, a path derived from a literal constant that is
only read (its read is HT102, the binding is no HT201).
"""

from helpers import (fixture_suite, Expect, Silent, at, line_of)

FIX = "ht201-path-constants"
L = "src/vault/locations.py"
S = "src/vault/store.py"
TF = "tests/test_store.py"
T = TF + "::"


EXPECTED = [
    # from another constant (ARCHIVE_ROOT), written; the test that redirects BACKUP_DIR itself
    # reaches the same write with its own tmp_path, so it is not listed
    Expect("from-constant-written", "HT201", L, 'BACKUP_DIR = ARCHIVE_ROOT / "backups"',
           tests=[T + "test_backup"]),
    Expect("home-written", "HT201", L, 'USER_DIR = Path.home() / ".vault"', tests=[T + "test_remember_user"]),
    Expect("home-read-only", "HT201", L, 'RC_FILE = Path.home() / ".vaultrc"', tests=[T + "test_rc_has_lines"]),
    Expect("environment-written", "HT201", L, 'CACHE_DIR = Path(os.environ.get("VAULT_CACHE"',
           tests=[T + "test_cache_put"]),
    # the same line is also an import-time environment read
    Expect("environment-read-at-import", "HT203", L, 'CACHE_DIR = Path(os.environ.get("VAULT_CACHE"'),
    # the variable, or the home folder where it is not set: computed from both
    Expect("environment-or-home-written", "HT201", L, 'SPOOL_DIR = Path(os.environ.get("VAULT_SPOOL"',
           tests=[T + "test_spool_put"]),
    Expect("environment-or-home-read-at-import", "HT203", L, 'SPOOL_DIR = Path(os.environ.get("VAULT_SPOOL"'),
    Expect("spool-write", "HT102", S, "(locations.SPOOL_DIR / key).write_text", tests=[T + "test_spool_put"]),
    Expect("cwd-written", "HT201", L, 'EXPORT_DIR = Path.cwd() / "exports"', tests=[T + "test_export_rows"]),
    # __file__ and written: a write into the project tree (V2), no read-only data folder
    Expect("dunder-file-written", "HT201", L, 'LOCK_FILE = Path(__file__).resolve().parent',
           tests=[T + "test_take_lock"]),
    # the operations through them (control is lost at a module constant: origin module-constant)
    Expect("backup-write", "HT102", S, "(locations.BACKUP_DIR / name).write_bytes",
           tests=[T + "test_backup"], origin="module-constant"),
    Expect("index-read", "HT102", S, "locations.INDEX_FILE.read_text",
           tests=[T + "test_index_lists_backups"], origin="module-constant"),
    Expect("user-write", "HT102", S, '(locations.USER_DIR / "user.json").write_text',
           tests=[T + "test_remember_user"], origin="module-constant"),
    Expect("rc-read", "HT102", S, "(path or locations.RC_FILE).read_text",
           tests=[T + "test_rc_has_lines"], origin="module-constant"),
    Expect("cache-write", "HT102", S, "(locations.CACHE_DIR / key).write_text",
           tests=[T + "test_cache_put"], origin="module-constant"),
    Expect("export-write", "HT102", S, '(locations.EXPORT_DIR / "rows.json").write_text',
           tests=[T + "test_export_rows"], origin="module-constant"),
    Expect("lock-write", "HT102", S, "locations.LOCK_FILE.write_text",
           tests=[T + "test_take_lock"], origin="module-constant"),
    # test code's own write through a computed constant: the test's finding, at the write
    Expect("test-helper-write", "HT102", "tests/reports.py", '(locations.REPORTS_DIR / "last.txt").write_text',
           tests=[T + "test_report_written_by_test_code"], origin="module-constant"),
]

SILENT = [
    Silent("read-only-data-folder", L, 'TEMPLATES_DIR = Path(__file__).parent / "templates"',
           "a read-only data folder built from __file__ alone (HT201 row, V2)"),
    Silent("read-of-shipped-template", S, "(locations.TEMPLATES_DIR / name).read_text", "V2: a read of shipped data"),
    Silent("literal-path-constant", L, 'ARCHIVE_ROOT = Path("/srv/vault/archive")', "a literal path is not HT201"),
    Silent("from-constant-read-only", L, 'INDEX_FILE = ARCHIVE_ROOT / "index.json"',
           "derived from a literal constant and only read: HT201 needs a write, or a home/env/cwd origin"),
    Silent("setattr-restored", TF, 'monkeypatch.setattr(locations, "BACKUP_DIR", tmp_path)',
           "restored by monkeypatch (not HT303); BACKUP_DIR has no derived constant (not HT202)"),
    Silent("test-reads-tmp", TF, '(tmp_path / "2031-01-02.tar").read_bytes()', "T1: a tmp_path file"),
    Silent("test-call-site", TF, "store.cache_put(", "anchored in the code under test"),
    Silent("read-only-data-file-str-replace", L, 'NOTICE_FILE = Path(__file__).parent / "templates"',
           "read-only data built from __file__ (the .replace is str.replace)"),
    Silent("written-by-test-code-only", L, 'REPORTS_DIR = ARCHIVE_ROOT / "reports"',
           "only test code writes through it (tests/reports.py): HT201 is about the code under test's writers; "
           "the test's own write is its HT102"),
    Silent("str-replace-is-no-file-operation", S, 'read_text(encoding="utf-8").replace("{name}", name)',
           "V2 read of shipped data; str.replace is no file operation"),
]

findings, test_reported, test_silent, test_nothing_else = fixture_suite(FIX, EXPECTED, SILENT)


def test_redirecting_test_not_listed_at_the_write(findings):
    """The test that setattr's BACKUP_DIR to tmp_path controls the write, though HT201 still lists it."""
    from helpers import listed_at
    assert T + "test_backup_into_scratch" not in listed_at(
        FIX, findings, "HT102", S, "(locations.BACKUP_DIR / name).write_bytes")


def test_one_ht201_per_binding(findings):
    ht201 = [f for f in findings if f.code == "HT201"]
    lines = [(f.path, f.line) for f in ht201]
    assert len(lines) == len(set(lines)), lines
    assert all(f.path == L for f in ht201)
    assert {f.line for f in ht201} >= {line_of(FIX, L, "USER_DIR ="), line_of(FIX, L, "CACHE_DIR =")}




def test_a_variable_with_a_default_names_both_places(findings):
    """os.environ.get("VAULT_SPOOL", Path.home() / ...): where the variable is not set (most
    machines) the write goes into the home folder, and the messages say so."""
    [computed] = at(findings, L, line_of(FIX, L, "SPOOL_DIR = Path("), "HT201")
    assert "the environment variable VAULT_SPOOL, the home folder" in computed.message
    [write] = at(findings, S, line_of(FIX, S, "(locations.SPOOL_DIR / key).write_text"), "HT102")
    assert "names where it is set, else the home folder of whoever runs the tests" in write.message
