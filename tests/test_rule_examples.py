"""Every rule names the fixture project that shows it (``Rule.fixture``, a folder of ``fixtures/``).

The projects are those of ``tests/test_rule_ht*.py``. Checking each rule's documented example
against its project waits for the examples to be rewritten from the fixtures: that changes the
help text every SARIF report carries, so it is its own change (branch ``layout-docs-examples``).
"""
from __future__ import annotations

import pytest

from helpers import FIXTURES
from hermetic.rules.registry import RULES

CODES = sorted(RULES)


@pytest.mark.parametrize("code", CODES)
def test_rule_has_a_fixture_project(code):
    fixture = RULES[code].fixture
    assert fixture, f"{code} names no fixture project (Rule.fixture)"
    assert (FIXTURES / fixture / "pyproject.toml").is_file(), f"{code}: fixtures/{fixture} is not a project"
