"""Dynamic dispatch the analysis follows (issue 25, contract section 1 "what a test reaches"),
fixture flow-dispatch.

An instance called (``__call__``), also by a WSGI test client it is handed (``[invokes]`` in the
sink catalogue); a decorator whose wrapper does something of its own (also on a function a test
defines in its body); a list of functions called in ``sorted`` order; ``getattr(mod, name)`` with
a parametrize list of names; handler tables (a dict literal, a list in a dict, a registry a
decorator fills at import, a list a function fills with ``append``); an attribute a decorator
sets on the function itself (Django's ``csrf_exempt``); a function handed to a library call that
calls it (``map``, an executor's ``map`` / ``submit``, a thread's target); a sqlite database file next to the
package (V2) reached through
``sqlite3.connect`` and an ``f"sqlite:///{DB_FILE}"`` URL (origin: the constant, not the prefix).
"""
from helpers import Expect, Silent, at, fixture_suite, line_of, listed_at

FIX = "flow-dispatch"
T = "tests/test_relay.py::"
M = "src/relay/middleware.py"
D = "src/relay/deco.py"
R = "src/relay/dirs.py"
P = "src/relay/dispatch.py"
S = "src/relay/store.py"

SH = "src/relay/shelf.py"
TS = "tests/test_shelf.py::"

EXPECTED = [
    # a decorator factory returning a project instance (`@group()`): its methods run the callback
    # and the commands it registered
    Expect("group-callback", "HT103", "src/relay/groups.py", '"RELAY_GROUP_APP" in os.environ',
           tests=["tests/test_groups.py::test_init_command"]),
    Expect("group-command", "HT103", "src/relay/groups.py", 'os.environ.get("RELAY_GROUP_INIT")',
           tests=["tests/test_groups.py::test_init_command"]),
    # getattr(self, "_load_{}".format(ext)) over known suffixes: the formatted name (invoke's trial)
    Expect("getattr-formatted-name", "HT102", "src/relay/loaders.py", "with open(path) as fh:   # a fixed location",
           tests=["tests/test_loaders.py::test_system_settings"]),
    # globals().get("_state_root_" + platform.system(), default): the running platform's function
    # (a new user's trial on keyring; the near miss is a platform no one runs)
    Expect("globals-get-by-platform", "HT103", "src/relay/platdirs.py", 'return os.environ.get("RELAY_STATE_HOME")',
           tests=["tests/test_platdirs.py::test_state_root"]),
    # item access in a test on a project class's instance runs its __getitem__ / __setitem__ /
    # __contains__ and __delitem__; the tmp_path shelf is controlled (near miss); item access in
    # project code is not dispatched (docs/limits.md: its cost on SQLAlchemy)
    Expect("getitem-dunder", "HT102", SH, "return (self.folder / key).read_text()",
           tests=[TS + "test_parcel_read_from_the_spool"]),
    Expect("setitem-dunder", "HT102", SH, "(self.folder / key).write_text(value)",
           tests=[TS + "test_parcel_put_on_the_spool"]),
    Expect("contains-dunder", "HT102", SH, "return os.path.exists(self.folder / key)",
           tests=[TS + "test_parcel_looked_for_on_the_spool"]),
    Expect("delitem-dunder", "HT102", SH, "os.remove(self.folder / key)", tests=[TS + "test_parcel_taken_off_the_spool"]),
    # a function handed to a library call that calls it (catalogue [handed]): map and an
    # executor's map (through a context manager yielding either), submit, a thread's target;
    # near miss: a function only kept in a list (test_kept_for_later)
    Expect("handed-to-map", "HT103", "src/relay/pool.py", 'return os.environ.get("RELAY_PART_TARGET")',
           tests=["tests/test_pool.py::test_part_sent_later", "tests/test_pool.py::test_parts_sent"]),
    Expect("handed-to-a-thread", "HT103", "src/relay/pool.py", 'return os.environ.get("RELAY_FLUSH_TARGET")',
           tests=["tests/test_pool.py::test_flushed_in_a_thread"]),
    # kw.update(settings) keeps the settings' entries, so **kw hands the test's bundle path on;
    # the tmp_path bundle of the other test is controlled
    Expect("dict-update-into-kwargs", "HT102", "src/relay/transport.py", "return os.path.exists(verify)",
           tests=[T + "test_fetch_with_a_bundle_on_the_machine"]),
    # the adapter a session mounts in its own dict is found again by prefix and its send followed;
    # the local session's dict holds only the LocalAdapter
    Expect("instance-dict-table", "HT103", "src/relay/transport.py", 'return os.environ.get("RELAY_WIRE_PROXY")',
           tests=[T + "test_session_over_the_wire"]),
    Expect("instance-called", "HT102", M, 'self.log.write_text("hit")',
           tests=[T + "test_middleware_called", T + "test_middleware_in_test_client"], origin="module-constant"),
    # pytest.importorskip("relay.optional") is the module (a new user's trial on APScheduler)
    Expect("importorskip-module", "HT102", "src/relay/optional.py", 'self.fh = open("relay-journal.log", "a")',
           tests=[T + "test_journal_where_installed"], origin="literal"),
    # functools.wraps(export) gives back what it decorates: it never calls export (at import,
    # for every test that imports the module); a test calling export reaches its write
    Expect("wraps-calls-nothing", "HT102", D, 'with open("/var/spool/relay/export.txt", "w") as fh:',
           tests=[T + "test_export"], origin="literal"),
    Expect("decorator-wrapper-body", "HT102", D, '(settings.SPOOL / "calls.log").write_text(fn.__name__)',
           tests=[T + "test_send"], origin="module-constant"),
    Expect("decorator-factory-wrapper", "HT103", D, 'os.environ.get("RELAY_RETRY_DEBUG")',
           tests=[T + "test_fetch"]),
    Expect("decorated-method-wrapper", "HT103", D, 'os.environ.get("RELAY_METHOD_LOG")', tests=[T + "test_sender"]),
    # a function a test defines in its body gets its project decorators (one never called: no wrapper run)
    Expect("decorator-on-a-function-the-test-defines", "HT103", D, 'os.environ.get("RELAY_TRACE")',
           tests=[T + "test_traced_job_defined_in_the_test"]),
    # an item a function appended to its own list, reached by a loop over the list it returns
    Expect("appended-item", "HT103", P, 'return os.environ.get("RELAY_JOB_TOKEN")', tests=[T + "test_run_collected"]),
    # a function's own attribute, set by a decorator (Django's csrf_exempt), read back elsewhere
    Expect("function-attribute", "HT103", D, 'return os.environ.get("RELAY_CSRF_SECRET")',
           tests=[T + "test_serve_checked"]),
    Expect("getattr-parametrized-1", "HT103", R, 'os.environ.get("XDG_CONFIG_HOME")', tests=[T + "test_dirs"]),
    Expect("getattr-parametrized-2", "HT103", R, 'os.environ.get("XDG_CACHE_HOME")', tests=[T + "test_dirs"]),
    Expect("dict-table", "HT102", P, 'return (settings.SPOOL / "request").read_text()',
           tests=[T + "test_handle_request"], origin="module-constant"),
    Expect("sorted-list-of-functions-1", "HT103", P, 'os.environ.get("RELAY_DISK_CHECK")', tests=[T + "test_run_checks"]),
    Expect("sorted-list-of-functions-2", "HT103", P, 'os.environ.get("RELAY_QUEUE_CHECK")', tests=[T + "test_run_checks"]),
    Expect("dict-literal-called", "HT103", P, 'os.environ.get("RELAY_EVENT_LOG")', tests=[T + "test_handle_inline"]),
    Expect("list-in-dict", "HT103", P, 'os.environ.get("RELAY_CSV_DIALECT")', tests=[T + "test_parse_csv"]),
    Expect("registry-filled-by-decorator", "HT103", P, 'os.environ.get("RELAY_PING")', tests=[T + "test_fire_ping"]),
    Expect("sqlite-file-in-tree", "HT101", S, "return sqlite3.connect(settings.DB_FILE)",
           tests=[T + "test_open_db"], origin="module-constant"),
    Expect("sqlite-url-from-constant", "HT101", S, 'return create_engine(f"sqlite:///{settings.DB_FILE}")',
           tests=[T + "test_engine"], origin="module-constant"),
]

L = "src/relay/libio.py"
EXPECTED += [   # library I/O on the caller's behalf (catalogue entries of issue 25)
    Expect("configparser-read", "HT102", L, "    parser.read(settings.CONF)", tests=[T + "test_conf"],
           origin="module-constant"),
    Expect("py-compile-into-shared-tmp", "HT102", L, "py_compile.compile(source, cfile=", tests=[T + "test_precompile"],
           origin="literal"),
    Expect("mako-template-file", "HT102", L, 'Template(filename="/usr/share/relay/page.mako")',
           tests=[T + "test_render_default"], origin="literal"),
    # its history database lives in the home folder (catalogue default = "home")
    Expect("ipython-history-db", "HT101", L, "InteractiveShellEmbed()()", tests=[T + "test_shell"],
           origin="home"),
    Expect("settings-subclass-reads-environ", "HT103", L, "return RelaySettings()", tests=[T + "test_settings"]),
    # round 29 (a new user's trial on portalocker, tldextract): redis-py's class where it is
    # defined, and a filelock lock's file (not the one in tmp_path: near miss)
    Expect("redis-client-module", "HT101", L, "return client.Redis()", tests=[T + "test_queue_connection"],
           origin="library-default"),
    Expect("filelock-lock-file", "HT102", L, 'return filelock.FileLock(path or "/var/lock/relay.lock")',
           tests=[T + "test_spool_lock"], origin="literal"),
    # a file object's own operation ([file.handle_methods]): extractall writes where it is told, or
    # into the working directory when told nothing
    Expect("zip-extractall-into-tree", "HT102", L, "bundle.extractall(path=dest)", tests=[T + "test_unpack_into_tree"],
           origin="literal"),
    Expect("zip-extractall-into-cwd", "HT102", L, "        bundle.extractall()", tests=[T + "test_unpack_here"],
           origin="cwd"),
    Expect("tar-extractall-into-constant", "HT102", L, "bundle.extractall(settings.SPOOL)", tests=[T + "test_unpack_tar"],
           origin="module-constant"),
    Expect("is-zipfile-reads", "HT102", L, "return zipfile.is_zipfile(path)", tests=[T + "test_is_archive"],
           origin="literal"),
    Expect("filecmp-reads", "HT102", L, "return filecmp.cmp(a, b)", tests=[T + "test_same_file"],
           origin="literal"),
    # answers the same on every machine (catalogue [existing-folders], the empty path) are no
    # reads and decide their branch: "/" exists, "/etc" and "" are no archive
    Expect("exists-but-not-of-the-root", "HT102", L, "if os.path.exists(path):   # the path itself, first",
           tests=[T + "test_member_of_an_archive", T + "test_member_under_etc"], origin="literal"),
    Expect("is-zipfile-only-of-an-unknown-head", "HT102", L, "if not zipfile.is_zipfile(archive):",
           tests=[T + "test_member_of_an_archive"], origin="literal"),
    Expect("zipfile-only-where-the-head-may-be-one", "HT102", L, "bundle:   # where the head may be an archive",
           tests=[T + "test_member_of_an_archive"], origin="literal"),
]

EXPECTED += [
    Expect("last-line-of-a-long-test", "HT103", "src/relay/steps.py", 'os.environ.get("RELAY_LAST_STEP")',
           tests=["tests/test_steps.py::test_long_test"]),
    Expect("last-line-of-a-long-module", "HT203", "src/relay/steps.py", 'os.environ.get("RELAY_IMPORT_STEP")'),
]

SILENT = [
    Silent("group-command-not-invoked", "src/relay/groups.py", 'os.environ.get("RELAY_GROUP_STATUS")',
           "the name the test invokes picks init, not status"),
    Silent("getattr-formatted-other-name", "src/relay/loaders.py", 'with open(path + ".yaml") as fh:',
           "no suffix of the loop names _load_yaml"),
    Silent("globals-get-other-platform", "src/relay/platdirs.py", 'return os.environ.get("RELAY_PLAN9_HOME")',
           "the key names the running platform's function only"),
    Silent("configparser-on-tmp", L, "    parser.read(path)", "load_conf_from(tmp_path / ...)"),
    Silent("mako-on-tmp", L, 'Template(filename=os.path.join(folder, "page.mako"))', "render(tmp_path)"),
    Silent("mako-from-text", L, 'Template("hello ${name}")', "a template from text reads no file"),
    Silent("instance-called-on-tmp", M, '(self.folder / "seen").write_text("1")', "Quiet(tmp_path)"),
    Silent("wrapped-body-on-tmp", D, '(folder / "out.txt").write_text(text)', "the wrapped function on tmp_path"),
    Silent("factory-wrapped-on-tmp", D, 'return (folder / "in.txt").read_text()', "the wrapped function on tmp_path"),
    Silent("decorated-method-on-tmp", D, '(self.folder / "sent.txt").write_text(text)', "Sender(tmp_path)"),
    Silent("identity-decorator", D, 'return (folder / "peek.txt").read_text()', "@plain returns the function"),
    Silent("getattr-name-not-listed", R, 'os.environ.get("XDG_STATE_HOME")', "not in the parametrize list"),
    Silent("registry-entry-not-fired", P, 'os.environ.get("RELAY_AUDIT")', "no test fires \"audit\""),
    Silent("sqlite-on-tmp", S, "return sqlite3.connect(path)", "open_at(tmp_path / ...)"),
]

findings, test_reported, test_silent, test_nothing_else = fixture_suite(FIX, EXPECTED, SILENT)


def test_known_key_picks_its_entry(findings):
    # handle("response") and handle_inline("response") do not reach the other entries
    assert T + "test_handle_response" not in listed_at(FIX, findings, "HT102", P,
                                                       'return (settings.SPOOL / "request").read_text()')
    assert T + "test_fire_pong" not in listed_at(FIX, findings, "HT103", P, 'os.environ.get("RELAY_PING")')


def test_each_line_of_a_test_has_its_own_budget(tmp_path, monkeypatch):
    # with a budget of 40 steps, the eight work() calls before it used to spend the test's (the
    # module's) only budget, and the last line's environment read was cut (issue 25 item 11)
    import hermetic.analyse.interp as interp

    from helpers import run_fixture

    monkeypatch.setattr(interp, "STEP_BUDGET", 40)
    found = run_fixture(FIX, tmp_path)
    assert T.replace("test_relay", "test_steps") + "test_long_test" in listed_at(
        FIX, found, "HT103", "src/relay/steps.py", 'os.environ.get("RELAY_LAST_STEP")')
    assert at(found, "src/relay/steps.py", line_of(FIX, "src/relay/steps.py", "RELAY_IMPORT_STEP"), "HT203")


def test_archive_operations_by_consequence(findings):
    # extracting writes (error); is_zipfile / filecmp only read (warning); each lists only the test
    # whose own path reaches it, never the tmp_path or chdir(tmp_path) twin
    sev = {f.line: f.severity for f in findings if f.path == L}
    for snippet, want in (("bundle.extractall(path=dest)", "error"), ("        bundle.extractall()", "error"),
                          ("return zipfile.is_zipfile(path)", "warning"), ("return filecmp.cmp(a, b)", "warning")):
        assert sev[line_of(FIX, L, snippet)] == want, snippet
    listed = {t for f in findings if f.path == L for t in f.tests}
    assert not listed & {T + n for n in ("test_unpack_into_tmp", "test_unpack_here_in_tmp",
                                         "test_is_archive_in_tmp", "test_same_file_in_tmp")}


def test_wraps_calls_nothing_at_import(findings):
    # functools.wraps(export) once gave export back, and the decorator application called it with
    # the decorated function: every test importing the module "reached" export's write
    import helpers

    (hit,) = helpers.at(findings, D, helpers.line_of(FIX, D, 'with open("/var/spool/relay/export.txt"'), "HT102")
    assert "may reach" not in hit.message and hit.confidence == "high"
