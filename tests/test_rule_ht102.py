"""HT102: file-system access (fixture ht102-file)."""

from helpers import check_files, fixture_suite, Expect, Silent

FIX = "ht102-file"
R = "src/exporter/report.py"
L = "src/exporter/layout.py"
T = "tests/test_report.py::"

EXPECTED = [
    # a file a sqlite connection made may be there when the teardown asks (huey's trial: the
    # remove was taken as unreachable, the checkout not shipping the file)
    Expect("remove-of-a-file-a-connection-made", "HT102", "tests/test_scratchdb.py",
           'os.remove("exporter-scratch.db")', tests=["tests/test_scratchdb.py::ScratchDbTest::test_rows"]),
    Expect("the-connection-that-made-it", "HT101", "tests/test_scratchdb.py", 'conn = sqlite3.connect("exporter-scratch.db")',
           tests=["tests/test_scratchdb.py::ScratchDbTest::test_rows"]),
    # `import exporter.bootcache` imports that module, though it binds `exporter` (black's trial)
    Expect("import-time-write-through-a-dotted-import", "HT102", "src/exporter/bootcache.py",
           'with open("exporter-boot.cache", "w") as _fh:', tests=["tests/test_boot.py::test_boot"]),
    # ConfigParser.read([...]): each path of the list is read (alembic's util/compat.py)
    Expect("config-read-from-a-list", "HT102", L, "parser.read(list(names))",
           tests=["tests/test_options.py::test_options_read_from_a_list"]),
    # xunit tear-downs of the class and the module run for each of their tests (a new user's
    # trial on alembic and requests-cache: teardown_class, tearDownClass, teardown_module)
    Expect("class-and-module-teardowns", "HT102", L, 'shutil.rmtree("export_cache"',
           tests=["tests/test_teardowns.py::" + t for t in (
               "CachedCase::test_case", "TestCached::test_in_class", "test_module_level")], origin="literal"),
    # a default argument a call computes at definition (directory=tempfile.gettempdir()) is a
    # default argument: the contract's origin kind (a new user's trial on portalocker)
    Expect("default-computed-by-a-call", "HT102", R, 'with open(os.path.join(directory, name + ".lock"), "w")',
           tests=[T + "test_lock_in_the_shared_temporary_folder"], origin="default-argument"),
    # a temporary file made in the folder dir= names is a write there; the near miss spools into tmp_path
    Expect("temporary-file-in-a-folder", "HT102", R, "with tempfile.NamedTemporaryFile(dir=folder or settings.EXPORT_DIR",
           tests=[T + "test_spool_into_the_export_folder"]),
    Expect("path-constant-write", "HT102", R, "target.write_text(json.dumps(rows)",
           tests=[T + "test_export_default"], origin="module-constant"),
    # `with p.open() as fh`: anchored at the open, which spans three lines here
    Expect("path-open-method", "HT102", R, '(settings.EXPORT_DIR / "summary.txt").open(',
           tests=[T + "test_export_summary"], origin="module-constant"),
    Expect("home-folder", "HT102", R, "last.write_text(json.dumps(rows)",
           tests=[T + "test_export_last_to_home"], origin="home"),
    # open(path, "w"): the tmp_path caller is controlled, the literal "audit.log" is not
    Expect("open-w-literal", "HT102", R, 'with open(path, "w"',
           tests=[T + "test_audit_log"], origin="literal"),
    # V2: a WRITE into data shipped with the code changes the repository
    Expect("write-into-shipped-data", "HT102", R, "(data_dir / name).write_text",
           tests=[T + "test_save_template"]),
    # T1: a test writing to a working-directory-relative path
    Expect("test-writes-cwd", "HT102", "tests/test_report.py", 'Path("copy-of-report.json").write_text',
           tests=[T + "test_copy_into_working_directory"]),
    # a path from __file__ that climbs above the project root is not data shipped with the code
    Expect("file-path-above-root", "HT102", L, '(HERE.parent.parent.parent / "shared"',
           tests=[T + "test_layout_outside_the_project"], origin="module-constant"),
    # shutil.copymode / copystat write the mode and times of dst (the tmp_path caller is not listed)
    Expect("copymode-home", "HT102", L, "shutil.copymode(script, target)",
           tests=[T + "test_install_script_into_home"], origin="home"),
    Expect("copystat-home", "HT102", L, "shutil.copystat(script, target)",
           tests=[T + "test_install_script_into_home"], origin="home"),
    # a rename writes its destination: a tmp_path draft moved into the package's data (V2)
    Expect("rename-destination", "HT102", L, 'draft.rename(HERE / "data" / name)',
           tests=[T + "test_publish_a_draft_into_the_package"], origin="module-constant"),
    Expect("dirname-above-root", "HT102", L, 'open(os.path.join(base, "deploy.ini"))',
           tests=[T + "test_layout_outside_the_project"], origin="literal"),
    # the scratch folders are made and removed in the working directory: each write is reported
    *[Expect(f"scratch-write-{i}", "HT102", "tests/test_report.py", snippet, tests=[T + test])
      for i, (snippet, test) in enumerate([
          ('shutil.rmtree("scratch-export")', "TestScratchFolder::test_scratch_export"),
          ('Path("scratch-export").mkdir(exist_ok=True)', "TestScratchFolder::test_scratch_export"),
          ('shutil.rmtree("scratch-refill")', "TestScratchFolderRefilled::test_scratch_refill"),
          ('Path("scratch-refill").mkdir()', "TestScratchFolderRefilled::test_scratch_refill"),
          ('Path("scratch-refill/summary.txt").write_text', "TestScratchFolderRefilled::test_scratch_refill"),
          ('Path("scratch-refill").mkdir(exist_ok=True)', "TestScratchFolderRefilled::test_scratch_refill"),
          ("shutil.rmtree(self.root)", "TestScratchFolderByAbspath::test_scratch_abs"),
          ('os.remove("scratch-try.lock")', "TestScratchFolderRemovedInATry::test_scratch_try"),
          ('shutil.rmtree("scratch-try")', "TestScratchFolderRemovedInATry::test_scratch_try")])],
    # near miss: a removal in a try body after a call that may fail first is not certain
    Expect("remove-after-a-removal-in-a-try", "HT102", "tests/test_report.py",
           'os.remove("scratch-try/summary.txt")', tests=[T + "TestScratchFolderRemovedInATry::test_scratch_try"]),
    # near misses of the removed folder: a path beside it, and one written into it again
    Expect("remove-beside-a-removed-folder", "HT102", "tests/test_report.py",
           'os.remove("scratch-export.lock")', tests=[T + "TestScratchFolder::test_scratch_export"]),
    Expect("remove-in-a-refilled-folder", "HT102", "tests/test_report.py",
           'os.remove("scratch-refill/summary.txt")  # reached',
           tests=[T + "TestScratchFolderRefilled::test_scratch_refill"]),
]

SILENT = [
    Silent("tmp-path-parameter", R, "out.write_text(json.dumps(rows)", "folder is tmp_path in the only caller (V1)"),
    Silent("read-shipped-data", R, "(data_dir / name).read_text", "V2: read of data built from __file__"),
    Silent("file-path-data-folder", L, '(HERE / "data").iterdir()', "V2: shipped data"),
    Silent("file-path-project-root", L, '(HERE.parent.parent / "pyproject.toml")', "V2: still inside the project"),
    Silent("replace-within-tmp", L, "draft.replace(folder / draft.name)", "both paths in tmp_path (V1)"),
    Silent("settings-literal", "src/exporter/settings.py", "EXPORT_DIR = Path(", "literal path constant: not HT201"),
    Silent("test-reads-tmp", "tests/test_report.py", "assert target.read_text", "T1: a tmp_path file"),
    Silent("test-reads-own-tmp", "tests/test_report.py", "read_text(encoding=\"utf-8\") == \"a\\nb\"", "T1"),
    Silent("test-call-site", "tests/test_report.py", "report.write_audit([", "anchored at the open, not the call"),
    Silent("remove-in-a-removed-folder", "tests/test_report.py", 'os.remove("scratch-export/summary.txt")',
           "the teardown removed the folder just before: the existence check is False (fsmodel)"),
    Silent("remove-in-a-removed-abspath-folder", "tests/test_report.py", 'os.remove("scratch-abs/summary.txt")',
           "abspath() of a literal is that path; the test's chdir was put back to the saved getcwd()"),
]

findings, test_reported, test_silent, test_nothing_else = fixture_suite(FIX, EXPECTED, SILENT)


def test_open_anchor_spans_only_the_call(findings):
    from helpers import at, line_of
    line = line_of(FIX, R, '(settings.EXPORT_DIR / "summary.txt").open(')
    (found,) = at(findings, R, line, "HT102")
    assert found.end_line == line + 2  # the open(...) call, not the with body




def test_one_sink_reached_with_different_targets_names_each(tmp_path, monkeypatch):
    """One finding per sink location (contract section 4) shows the first test's origin; a test
    that reaches the sink with another target is named in the message with that target, so
    fixing the first test is not taken for fixing the finding."""
    monkeypatch.chdir(tmp_path)
    report, _ = check_files(tmp_path, {
        "app.py": "from pathlib import Path\nGOALS_FILE = Path.home() / 'goals.yaml'\n\n\n"
                  "def save(text):\n    GOALS_FILE.write_text(text)\n",
        "tests/test_a.py": "from pathlib import Path\nimport app\n\n\n"
                           "def test_patched(monkeypatch):\n"
                           "    monkeypatch.setattr(app, 'GOALS_FILE', Path('/srv/goals.yaml'))\n    app.save('x')\n\n\n"
                           "def test_plain():\n    app.save('y')\n\n\n"
                           "def test_plain_too():\n    app.save('z')\n"})
    [f] = [f for f in report.findings if f.code == "HT102"]
    assert f.origin["kind"] == "literal" and len(f.tests) == 3
    assert f.message.endswith("; tests/test_a.py::test_plain and 1 more reach it with GOALS_FILE "
                              "(a module constant, app.py:2, from the home folder)")

    # the same target for every test: nothing added
    report, _ = check_files(tmp_path, {
        "tests/test_a.py": "import app\n\n\ndef test_plain():\n    app.save('y')\n\n\n"
                           "def test_plain_too():\n    app.save('z')\n"})
    [f] = [f for f in report.findings if f.code == "HT102"]
    assert f.message.endswith("not controlled by tests/test_a.py::test_plain and 1 more")


def test_stateless_devices_are_controlled(tmp_path, monkeypatch):
    """/dev/null and its kin keep nothing between opens: a test writing there leaves no state.
    /dev/shm (shared memory) and /proc (other processes) are files like any other."""
    from hermetic.api import run_check

    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_d.py").write_text('''import os
from pathlib import Path


def test_devices():
    open("/dev/null", "w").write("x")
    open("/dev/full", "w")
    open("/dev/urandom", "rb").read(4)
    open("/dev/fd/1", "w")
    open(os.devnull, "w")
    Path("/dev/null").write_text("x")


def test_not_devices():
    open("/dev/shm/state", "w")
    open("/proc/1/environ", "rb")
''', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    report, _ = run_check([], tmp_path)
    assert sorted(f.line for f in report.findings) == [15, 16]


def test_a_class_attribute_origin_is_its_own_line(tmp_path, monkeypatch):
    """A path held in a class attribute is named by the line that binds it, not the class's
    header, and called a class attribute."""
    monkeypatch.chdir(tmp_path)
    report, _ = check_files(tmp_path, {"tests/test_a.py": (
        "import os\n\n\nclass TestHooks:\n    \"\"\"Hooks.\"\"\"\n\n    repo_path = os.path.abspath('hooks-repo')\n\n"
        "    def test_made(self):\n        os.mkdir(self.repo_path)\n")})
    [f] = [f for f in report.findings if f.code == "HT102"]
    assert (f.origin["kind"], f.origin["line"]) == ("module-constant", 7)
    assert "TestHooks.repo_path (a class attribute, tests/test_a.py:7" in f.message


def test_abspath_of_a_relative_literal_is_the_working_directory(tmp_path, monkeypatch):
    """``os.path.abspath("out/x")`` (or ``Path("out").resolve()``) computed at call time is a
    path in the working directory: origin kind ``cwd`` (contract section 8), judged as the
    relative path it was made from: a write is uncontrolled, a read of the tests' own data and a
    write after ``monkeypatch.chdir(tmp_path)`` are not."""
    monkeypatch.chdir(tmp_path)
    report, _ = check_files(tmp_path, {"tests/test_a.py": (
        "import os\nfrom pathlib import Path\n\n\n"
        "def test_report_written():\n    open(os.path.abspath('out/report.txt'), 'w').close()\n\n\n"
        "def test_resolved():\n    Path('out').resolve().joinpath('r.txt').write_text('x')\n\n\n"
        "def test_data_read():\n    open(os.path.abspath('tests/data.txt')).close()\n\n\n"
        "def test_in_tmp(monkeypatch, tmp_path):\n    monkeypatch.chdir(tmp_path)\n"
        "    open(os.path.abspath('scratch.txt'), 'w').close()\n")})
    found = sorted((f.line, f.origin["kind"], f.origin["expression"]) for f in report.findings if f.code == "HT102")
    assert found == [(6, "cwd", "abspath('out/report.txt')"), (10, "cwd", "resolve('out')")]
    [first] = [f for f in report.findings if f.line == 6]
    assert "writes (open) abspath('out/report.txt') (in the working directory, tests/test_a.py:6)" in first.message
