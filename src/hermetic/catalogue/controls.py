"""The controls table (``catalogue/controls.toml``): the calls and fixtures that install a
substitute (contract section 2, rows S1-S6), loaded once at import into the sets and dicts the
interpreter (``analyse.controls``, ``analyse.calls``) and the pytest model (``analyse.runner``)
test membership in.

Sets hold fully qualified call names (``_DOUBLE_CTORS``, ``_FREEZERS``, ``_FS_FAKES``) or
fixture names (the ``*_FIXTURES`` sets); the two dicts map a call or fixture to the HTTP
library its network mock intercepts (``"*"``: every library; ``""``: none, a local server).
Raises ``KeyError`` at import if the packaged table lacks one of them.
"""
from __future__ import annotations

import sys
from importlib import resources
from typing import Dict, Set

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

_TABLE = tomllib.loads(resources.files("hermetic").joinpath("catalogue/controls.toml").read_text(encoding="utf-8"))

_DOUBLE_CTORS: Set[str] = set(_TABLE["doubles"])
_FREEZERS: Set[str] = set(_TABLE["freezers"])
_NET_MOCKS: Dict[str, str] = dict(_TABLE["net_mocks"])
_FS_FAKES: Set[str] = set(_TABLE["fs_fakes"])
_NET_TRANSPORTS: Dict[str, str] = dict(_TABLE["net_transports"])
_MOCK_ADAPTERS: Dict[str, str] = dict(_TABLE["mock_adapters"])
_BUILTIN_FIXTURES_CONTROLLED: Set[str] = set(_TABLE["fixtures_controlled"])
_NET_FIXTURES: Dict[str, str] = dict(_TABLE["net_fixtures"])
_FREEZE_FIXTURES: Set[str] = set(_TABLE["freeze_fixtures"])
_FS_FIXTURES: Set[str] = set(_TABLE["fs_fixtures"])
_SUBPROCESS_FIXTURES: Set[str] = set(_TABLE["subprocess_fixtures"])
# fixture -> {variable: "tmp" | a string | False (deleted)} it sets for the test (row S2)
_FIXTURE_ENVIRONMENT: Dict[str, Dict[str, object]] = {k: dict(v) for k, v in _TABLE["fixture_environment"].items()}
