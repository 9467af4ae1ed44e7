"""The process-wide state catalogue (``catalogue/process_state.toml``): what a call, a logger
method or an assignment changes (HT304), what pytest puts back after every test, and the
fixtures and snapshot objects that restore a state. Read once per process."""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Dict, Tuple

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


@dataclass(frozen=True)
class ProcessState:
    """The tables of ``process_state.toml``; state names are strings ("cwd", "argv", ...)."""

    calls: Dict[str, str] = field(default_factory=dict)                 # function -> state
    logger_methods: Dict[str, Tuple[str, str]] = field(default_factory=dict)   # method -> (state, undo method)
    logger_attributes: Dict[str, str] = field(default_factory=dict)     # "handlers" -> state
    attributes: Dict[str, str] = field(default_factory=dict)            # "sys.argv" -> state
    container_methods: Dict[str, Tuple[str, ...]] = field(default_factory=dict)
    restored_per_test: Dict[str, str] = field(default_factory=dict)     # state -> pytest plugin
    restoring_fixtures: Dict[str, Tuple[str, ...]] = field(default_factory=dict)   # fixture -> states
    snapshots: Dict[str, Tuple[str, ...]] = field(default_factory=dict)   # class -> states its restore() puts back
    per_thread: Tuple[str, ...] = ()     # states each thread holds its own of (the current event loop)
    fixes: Dict[str, str] = field(default_factory=dict)   # state -> the fix its HT304 finding suggests
    env_writers: Tuple[str, ...] = ()   # library calls that set environment variables (HT302)
    getters: Dict[str, str] = field(default_factory=dict)   # function -> the state whose value it reads
    teardown_restores: Tuple[str, ...] = ()   # calls that put their state back from a teardown or finally


def state_key(name: str) -> tuple:
    """The key HT3xx's scan uses for a state name: ``("syspath",)``, ``("sysmod", "*")``,
    ``("env", NAME)`` for ``env:NAME``, ``(name,)``."""
    if name.startswith("env:"):
        return ("env", name[4:])
    return ("sysmod", "*") if name == "sysmod" else (name,)


@lru_cache(maxsize=1)
def process_state() -> ProcessState:
    """The catalogue, parsed once."""
    with (Path(__file__).parent / "process_state.toml").open("rb") as fh:
        raw = tomllib.load(fh)
    return ProcessState(
        calls=dict(raw.get("calls", {})),
        logger_methods={k: (v[0], v[1]) for k, v in raw.get("logger-methods", {}).items()},
        logger_attributes=dict(raw.get("logger-attributes", {})),
        attributes=dict(raw.get("attributes", {})),
        container_methods={k: tuple(v) for k, v in raw.get("container-methods", {}).items()},
        restored_per_test=dict(raw.get("restored-per-test", {})),
        restoring_fixtures={k: tuple(v) for k, v in raw.get("restoring-fixtures", {}).items()},
        snapshots={k: tuple(v) for k, v in raw.get("snapshots", {}).items()},
        per_thread=tuple(raw.get("per-thread", {}).get("states", ())),
        fixes=dict(raw.get("fixes", {})),
        env_writers=tuple(raw.get("environment-writers", {}).get("calls", ())),
        getters=dict(raw.get("getters", {})),
        teardown_restores=tuple(raw.get("teardown-restores", {}).get("calls", ())),
    )
