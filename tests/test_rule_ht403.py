"""HT403: a production name is a connection target (contract section 5), fixture
ht4-production-name: production names matched after normalising case and surrounding whitespace,
against the whole database part of a URL (also with a query string), ``dbname=``, or the file
stem; near misses ``shipping_prod_archive``, a production name as the host, ``carrier_lively``,
``warehouse_backup``, a folder named warehouse, an unreached connection, a label no connection uses.
"""
from helpers import Expect, Silent, fixture_suite

FIX = "ht4-production-name"
PS = "src/shipping/settings.py"
ST = "tests/test_stores.py::"

NAME_EXPECTED = [
    Expect("url-database-part-case-and-space", "HT403", PS, 'ORDERS_DSN = "postgresql://app@db.internal:5432/SHIPPING_PROD "',
           tests=["tests/test_orders.py::test_orders_database_opens"]),
    Expect("url-database-part-with-query", "HT403", PS, "CARRIER_URL =", tests=[ST + "test_carriers_tls"]),
    Expect("dbname-keyword", "HT403", PS, "CARRIER_DSN =", tests=[ST + "test_carriers"]),
    Expect("file-stem", "HT403", PS, 'STOCK_FILE = "/srv/data/Warehouse.sqlite3"', tests=[ST + "test_stock"]),
] + [
    Expect("HT101-" + fn, "HT101", path, snippet, tests=[test], origin="module-constant")
    for fn, path, snippet, test in [
        ("orders", "src/shipping/bootstrap.py", "psycopg.connect(settings.ORDERS_DSN)",
         "tests/test_orders.py::test_orders_database_opens"),
        ("archive", "src/shipping/stores.py", "settings.ARCHIVE_DSN", ST + "test_archive"),
        ("reports", "src/shipping/stores.py", "settings.REPORTS_DSN", ST + "test_reports"),
        ("carriers", "src/shipping/stores.py", "settings.CARRIER_DSN", ST + "test_carriers"),
        ("carriers-tls", "src/shipping/stores.py", "settings.CARRIER_URL", ST + "test_carriers_tls"),
        ("replica", "src/shipping/stores.py", "settings.REPLICA_DSN", ST + "test_replica"),
        ("stock", "src/shipping/stores.py", "settings.STOCK_FILE)", ST + "test_stock"),
        ("stock-backup", "src/shipping/stores.py", "settings.STOCK_BACKUP_FILE", ST + "test_stock_backup"),
        ("picking", "src/shipping/stores.py", "settings.PICKING_FILE", ST + "test_picking"),
    ]
]

NAME_SILENT = [
    Silent("longer-database-part", PS, "ARCHIVE_DSN =", "shipping_prod_archive is not shipping_prod: whole part only"),
    Silent("name-as-host", PS, "REPORTS_DSN =", "the database part is reports; the host does not count"),
    Silent("longer-dbname", PS, "REPLICA_DSN =", "dbname=carrier_lively is not carrier_live"),
    Silent("longer-file-stem", PS, "STOCK_BACKUP_FILE =", "stem warehouse_backup is not warehouse"),
    Silent("folder-not-stem", PS, "PICKING_FILE =", "a folder named warehouse is not the file stem"),
    Silent("unreached-connection", PS, "LEGACY_DSN =", "no test reaches connect_legacy()"),
    Silent("unreached-connect", "src/shipping/legacy.py", "psycopg.connect(settings.LEGACY_DSN)", "no test reaches it"),
    Silent("label-not-a-target", PS, "ENVIRONMENT_LABEL =", "no connection uses it"),
    Silent("guard-own-read", "tests/support.py", 'settings.ORDERS_DSN.rsplit("/", 1)', "the guard's own read"),
    Silent("guard-names", "tests/support.py", "PRODUCTION = {", "a set of names, no connection"),
    Silent("autouse-guard-import", "tests/test_orders.py", "from shipping import bootstrap",
           "imported after the autouse guard fixture"),
]

findings, test_reported, test_silent, test_nothing_else = fixture_suite(FIX, NAME_EXPECTED, NAME_SILENT)
