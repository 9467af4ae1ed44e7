"""HT401-HT403: the production-guard wiring check (contract section 5)."""
import textwrap

from hermetic.api import run_check

PYPROJECT = '''[tool.pytest.ini_options]
pythonpath = ["src"]

[tool.hermetic.guard]
function = "tests.support.refuse_production"
bootstrap = ["shop.bootstrap"]
production = ["Shop_Live"]
exempt = {"tests/test_db.py::test_exempt" = "scratch only"}
'''

FILES = {
    "src/shop/__init__.py": "",
    "src/shop/settings.py": '''
        DSN = "postgresql://db.internal/shop_live "
        OTHER = "postgresql://db.internal/shop_live_archive"
    ''',
    "src/shop/bootstrap.py": '''
        import psycopg
        from shop import settings
        def connect(dsn=None):
            return psycopg.connect(dsn or settings.DSN)
    ''',
    "src/shop/archive.py": '''
        import psycopg
        from shop import settings
        def count():
            return psycopg.connect(settings.OTHER)
    ''',
    "tests/__init__.py": "",
    "tests/support.py": '''
        from shop import settings
        def refuse_production():
            if "live" in settings.DSN:
                raise RuntimeError("production")
    ''',
    "tests/conftest.py": '''
        import pytest
        from tests.support import refuse_production
        @pytest.fixture
        def db():
            refuse_production()
            from shop import bootstrap
            return bootstrap.connect()
    ''',
    "tests/test_db.py": '''
        from shop import archive
        from tests.support import refuse_production

        def test_guard_first(db):
            assert db

        def test_no_guard():
            from shop import bootstrap
            bootstrap.connect("postgresql://localhost/scratch")

        def test_guard_late():
            from shop import bootstrap
            refuse_production()

        def test_archive_after_guard():
            refuse_production()
            archive.count()

        def test_exempt():
            from shop import bootstrap
    ''',
    "tests/test_module_import.py": '''
        from shop import bootstrap

        def test_imports_first(db):
            assert db
    ''',
}


def test_guard_rules(tmp_path):
    for rel, text in FILES.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text), encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    report, _ = run_check([], tmp_path)
    got = sorted((f.code, f.path, f.line, tuple(f.tests)) for f in report.findings if f.code.startswith("HT4"))
    assert got == [
        ("HT401", "tests/test_db.py", 8, ("tests/test_db.py::test_no_guard",)),
        ("HT402", "tests/test_db.py", 13, ("tests/test_db.py::test_guard_late",)),
        ("HT402", "tests/test_module_import.py", 2, ("tests/test_module_import.py::test_imports_first",)),
        ("HT403", "src/shop/settings.py", 2, ("tests/test_db.py::test_guard_first",
                                              "tests/test_module_import.py::test_imports_first")),
    ]


def test_no_guard_configured_means_no_ht4(tmp_path):
    for rel, text in FILES.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text), encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\npythonpath = ["src"]\n', encoding="utf-8")
    report, _ = run_check([], tmp_path)
    assert not [f for f in report.findings if f.code.startswith("HT4")]
