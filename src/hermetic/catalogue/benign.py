"""The benign reads of ``catalogue/benign.toml``: the reads reported as notes (contract
section 4). ``loader.load_benign`` adds the configuration's changes; the rule docs list them."""
from __future__ import annotations

import sys
from dataclasses import dataclass

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


@dataclass(frozen=True)
class Benign:
    """``env``: the presentation-only environment variables; ``durations``: whether a clock
    read only subtracted from another clock read is benign."""

    env: frozenset = frozenset()
    durations: bool = True


def packaged_benign() -> Benign:
    """The list as hermetic ships it."""
    from importlib import resources

    text = resources.files("hermetic").joinpath("catalogue/benign.toml").read_text(encoding="utf-8")
    data = tomllib.loads(text)
    return Benign(frozenset(data.get("env", {}).get("names", ())), bool(data.get("clock", {}).get("durations", True)))
