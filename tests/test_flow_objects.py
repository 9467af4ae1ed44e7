"""Value flow through objects (contract section 3), fixture flow-objects.

self.x set in __init__ (with a default naming a constant), Class(...) into __init__, self.m(),
super().m(), methods of objects built by a constructor, `with` (__enter__ / __exit__),
await / async def tests, unittest.TestCase with setUp (TemporaryDirectory, mkdtemp). A clone made
with ``self.__class__.__new__(self.__class__)`` and ``c.__dict__ = self.__dict__.copy()`` is an
instance of the class holding the original's attributes (near miss: the copied attribute is
None, and the clone's method returns before its read). A dict display is known whole as made:
``get`` of a key it lacks is the default, until a key is stored or a mutator changes it through
the attribute that holds it (near misses). A function a factory made and the class body stored
(``str = _reader(str)``) is a method: the instance comes first, so the variable read is the
test's name, not its default (near miss: the variable the test set). ``self.__dict__.update(kw)``
sets the attributes ``kw`` names (an attribute bag); an attribute a class lacks is what its
``__getattr__`` gives (a proxy); methods are looked up in Python's C3 order; ``Box[str](...)`` makes a ``Box``.
"""
import pytest

from helpers import (fixture_suite, Expect, Silent, listed_at)

FIX = "flow-objects"
S = "src/shelf/store.py"
A = "src/shelf/aio.py"
T = "tests/test_store.py::"
Q = "src/shelf/query.py"
TQ = "tests/test_query.py::"
RQ = "src/shelf/request.py"
TR = "tests/test_request.py::"
EV = "src/shelf/env.py"


EXPECTED = [
    # a method raising NotImplementedError on the instance's own class raises (filelock's
    # WindowsFileLock off Windows, a new user's trial); near miss: a class whose _acquire returns
    Expect("concrete-not-implemented", "HT102", "src/shelf/locks.py", 'with open("lock.log", "a") as fh:',
           tests=["tests/test_locks.py::test_posix_lock"], origin="literal"),
    # Box[str](...) is Box(...): a generic class's alias (watchdog's DelayedQueue[str](2), a new
    # user's trial); near miss: the box in tmp_path
    Expect("generic-alias-made", "HT102", "src/shelf/bag.py", 'with open(self.path, "a") as fh:',
           tests=["tests/test_bag.py::test_keep_in_a_box_made_through_its_alias"], origin="literal"),
    # a method is looked up in Python's C3 order (filelock's AsyncSoftFileLock, a new user's trial):
    # AsyncSoft's save() is AsyncBase's; Soft's is Base's (near miss)
    Expect("c3-method-order", "HT102", "src/shelf/locks.py", 'with open("state.txt", "w") as fh:',
           tests=["tests/test_locks.py::test_soft_saves_its_fixed_file"], origin="literal"),
    # an attribute a class does not have is what its __getattr__ gives (structlog's BoundLogger,
    # a new user's trial); the proxy called with a tmp_path path writes there (near miss)
    # (not a proxy made while modules import: Django's settings, set up once per process)
    Expect("getattr-proxy", "HT102", "src/shelf/bag.py", 'with open(path, "a") as fh:',
           tests=["tests/test_bag.py::test_record_through_a_proxy"], origin="literal"),
    # setattr(self, "name", v) and object.__setattr__(self, key, v) in a loop over **kwargs set
    # those attributes (invoke's Config._set); a loader given none opens nothing (near miss)
    Expect("attributes-set-through-setattr", "HT102", "src/shelf/loaders.py",
           "with open(self._prefix + \"shelf\" + self._suffix) as fh:",
           tests=["tests/test_loaders.py::test_set_through_object_setattr",
                  "tests/test_loaders.py::test_set_through_setattr"], origin="literal"),
    # self.__dict__.update(kwargs) sets the attributes the keywords name (celery's Bunch); the
    # bag made with a tmp_path path writes there (near miss)
    Expect("attribute-bag", "HT102", "src/shelf/bag.py", 'with open(settings.path, "w") as fh:',
           tests=["tests/test_bag.py::test_export_to_the_working_directory"], origin="literal"),
    # kwargs.pop("store", self.default_store) of the **kwargs the call filled is the class the test
    # named (a new user's trial on tinydb); the default store opens nothing (near miss)
    Expect("class-popped-from-kwargs", "HT102", "src/shelf/db.py", 'self.fh = open(path, "a")',
           tests=["tests/test_db.py::test_db_in_a_file"], origin="literal"),
    # self.jobs.append(job) on an instance's list: a loop over self.jobs reaches the job added
    # (a new user's trial on schedule); a scheduler with no job added runs none (near miss)
    Expect("job-appended-to-an-attribute-list", "HT104", "src/shelf/jobs.py", "self.last_run = time.time()",
           tests=["tests/test_jobs.py::test_run_all_added_jobs"], origin="clock"),
    # not test_reads_a_variable_it_set: SHELF_SIZE is set (S2)
    Expect("factory-made-method", "HT103", EV, "return os.environ.get(name, default)",
           tests=["tests/test_env.py::test_reads_the_real_environment"]),
    # Store() default, Store.open_default() (cls.m() and cls(...)), and a TestCase whose setUp builds Store()
    Expect("self-attr-from-init-default", "HT102", S, "self.path_for(name).write_text(text)",
           tests=[T + "test_put_default_root", T + "TestServerStore::test_put", T + "test_put_via_classmethod"],
           origin="module-constant"),
    Expect("class-attribute", "HT102", S, "(self.ROOT / name).write_text(text)",
           tests=[T + "test_archive_default"], origin="module-constant"),
    Expect("async-with-aenter", "HT102", A, 'self.marker.write_text("locked")',
           tests=[T + "test_async_lock_on_server"], origin="module-constant"),
    Expect("super-method", "HT102", S, 'with open(self.path_for("log.txt"), "a")',
           tests=[T + "test_journal_default_root"], origin="module-constant"),
    Expect("with-enter", "HT102", S, 'self.lock.write_text("locked")',
           tests=[T + "test_lock_on_server"], origin="module-constant"),
    Expect("with-exit", "HT102", S, "self.lock.unlink()",
           tests=[T + "test_lock_on_server"], origin="module-constant"),
    Expect("await-async-test", "HT102", A, "target.write_text(text)",
           tests=[T + "test_async_save_server"], origin="module-constant"),
    # not test_plain_request: the dict display the request made holds no such key; an update
    # through the attribute changes its keys
    Expect("header-set-or-updated", "HT102", RQ, 'return os.listdir(".")',
           tests=[TR + "test_header_set", TR + "test_headers_updated"]),   # the second may: listed and counted
    Expect("clone-by-new-and-dict-copy", "HT103", Q, "return os.environ.get(self.table)",
           tests=[TQ + "test_clone_keeps_the_table"]),
]

SILENT = [
    Silent("only-tmp-store", S, "self.path_for(name).unlink()", "reached only by a Store(tmp_path)"),
    Silent("init-default", S, "def __init__(self, root=settings.STORE_DIR)", "flow step, not a sink"),
    Silent("attribute-store", S, "self.root = Path(root)", "flow step, not a sink"),
    Silent("test-with", "tests/test_store.py", "with Lock(tmp_path) as lock", "anchored at the sinks"),
    Silent("setup-mkdtemp", "tests/test_store.py", "self.folder = tempfile.mkdtemp()", "a scratch folder, cleaned up"),
]

findings, test_reported, test_silent, test_nothing_else = fixture_suite(FIX, EXPECTED, SILENT)

# (sink snippet, a test that reaches it with a controlled value)
CONTROLLED = [
    ("self.path_for(name).write_text(text)", "test_put_scratch"),
    ("self.path_for(name).write_text(text)", "TestScratchStore::test_put"),
    ('with open(self.path_for("log.txt"), "a")', "test_journal_scratch"),
    ('with open(self.path_for("log.txt"), "a")', "TestJournalInMkdtemp::test_append"),
    ('self.lock.write_text("locked")', "test_lock_scratch"),
    ("self.lock.unlink()", "test_lock_scratch"),
    # V3: setattr on the class attribute installs tmp_path
    ("(self.ROOT / name).write_text(text)", "test_archive_with_patched_class_attribute"),
]


@pytest.mark.parametrize("snippet, test", CONTROLLED, ids=[f"{c[1]}@{c[0][:20]}" for c in CONTROLLED])
def test_controlled_test_not_listed(findings, snippet, test):
    assert T + test not in listed_at(FIX, findings, "HT102", S, snippet)


@pytest.mark.parametrize("snippet, test", [("target.write_text(text)", "test_async_save_scratch"),
                                           ('self.marker.write_text("locked")', "test_async_lock_scratch")])
def test_async_scratch_not_listed(findings, snippet, test):
    assert T + test not in listed_at(FIX, findings, "HT102", A, snippet)




def test_a_factory_made_method_reads_the_name_it_is_given(findings):
    [f] = [f for f in findings if f.path == EV]
    assert "SHELF_TITLE" in f.message and "untitled" not in f.message, f.message
