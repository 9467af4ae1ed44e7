"""HT101: database connections and clients (fixture ht101-connection)."""

from helpers import fixture_suite, Expect, Silent

FIX = "ht101-connection"
DB = "src/ledger/db.py"
T = "tests/test_ledger.py::"

EXPECTED = [
    # a pool made with no target is the library's default (near miss of a socket in tmp_path)
    Expect("redis-pool-default", "HT101", "tests/test_redis_pool.py", "pool = redis.ConnectionPool()   # the library"),
    # playhouse.db_url.connect (peewee's URL helper; huey's trial); the in-memory URL is controlled
    Expect("peewee-url-connect", "HT101", DB, "return connect(url)   # a file the URL names",
           tests=[T + "test_peewee_ledger"]),
    # boto3.resource("dynamodb"): the service's name is no target; with no endpoint_url the
    # library's default (AWS) is; with **options the analysis cannot read, the target is not known
    # (row U: the near miss; a new user's trial on requests-cache)
    Expect("boto3-default-endpoint", "HT101", DB, 'return boto3.resource("dynamodb")   # the library',
           tests=[T + "test_default_archive"], origin="library-default"),
    Expect("settings-constant", "HT101", DB, "sqlite3.connect(settings.DB_PATH)",
           tests=[T + "test_balance_on_live_ledger"], origin="module-constant"),
    # the same sink serves the tmp_path fixture (controlled) and a test passing the constant
    Expect("parameter-carries-constant", "HT101", DB, "return sqlite3.connect(path)",
           tests=[T + "test_open_at_settings_path"], origin="module-constant"),
    Expect("library-default", "HT101", DB, "redis.Redis()",
           tests=[T + "test_cache_ping"], origin="library-default"),
    # "sqlite:///%s" % tmpdir.join(...) is the test's own file, "sqlite:///" SQLAlchemy's memory
    # database (APScheduler's job-store tests; a new user's trial): only the server is reported
    Expect("percent-formatted-url", "HT101", DB, "return sqlalchemy.create_engine(url)",
           tests=[T + "test_engine_on_a_server"], origin="literal"),
]

SILENT = [
    Silent("redis-pool-socket-in-tmp", "tests/test_redis_pool.py", "client = redis.Redis(connection_pool=pool)",
           "Redis(connection_pool=) connects where the pool does: a socket in tmp_path"),
    Silent("redis-pool-made-in-tmp", "tests/test_redis_pool.py", "pool = redis.ConnectionPool(connection_class",
           "path= is the pool's socket, in tmp_path"),
    Silent("boto3-endpoint-in-unknown-options", DB, 'return boto3.resource("dynamodb", **options)',
           "endpoint_url may be among the options: the target is not known (row U)"),
    Silent("memory-literal", DB, 'sqlite3.connect(":memory:")', "in-memory database (V1)"),
    Silent("duckdb-no-path", DB, "duckdb.connect()", "duckdb.connect() with no path is in memory (V1)"),
    Silent("use-of-connection", DB, "conn.execute(\"SELECT COALESCE", "a use of a connection is not a sink"),
    Silent("fixture-call", "tests/conftest.py", "conn = open_at(tmp_path", "the fixture's tmp_path database"),
    Silent("test-direct-tmp", "tests/test_ledger.py", "sqlite3.connect(tmp_path", "T1: the test's own tmp_path database"),
    Silent("test-call-site", "tests/test_ledger.py", "conn = db.open_ledger()", "HT101 is anchored at the connect"),
    Silent("settings-literal", "src/ledger/settings.py", "DB_PATH =", "a literal path constant is not HT201"),
]

findings, test_reported, test_silent, test_nothing_else = fixture_suite(FIX, EXPECTED, SILENT)


