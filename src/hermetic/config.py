"""Configuration: ``[tool.hermetic]`` (contract section 6) and the pytest settings we honour.

Errors in configuration raise ``ConfigError`` whose message names the file and the key;
the CLI turns it into exit status 2.
"""
from __future__ import annotations

import configparser
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.9/3.10 only
    import tomli as tomllib

from .discover.patterns import gitignore_spec
from .rules.registry import RULES

CATEGORIES = ("connection", "file", "env", "clock", "network", "subprocess")
PLATFORMS = ("linux", "darwin", "win32", "cygwin", "freebsd", "aix")   # `platform`: sys.platform values
DEFAULT_EXCLUDES = (".git", ".venv", "venv", ".tox", ".nox", "build", "dist", "node_modules",
                    "site-packages", ".hermetic_cache")


class ConfigError(Exception):
    """Bad configuration: the message is one line naming the file and the key."""


@dataclass
class GuardConfig:
    function: str = ""
    bootstrap: List[str] = field(default_factory=list)
    production: List[str] = field(default_factory=list)
    exempt: Dict[str, str] = field(default_factory=dict)


@dataclass
class Config:
    """Resolved ``[tool.hermetic]`` settings; ``source`` is the file they came from (or None)."""

    source: Optional[Path] = None
    root: Optional[Path] = None
    select: List[str] = field(default_factory=lambda: ["HT"])
    ignore: List[str] = field(default_factory=list)
    fail_on: str = "error"
    exclude: List[str] = field(default_factory=list)
    per_file_ignores: Dict[str, List[str]] = field(default_factory=dict)
    sinks_add: Dict[str, List[str]] = field(default_factory=dict)
    sinks_remove: List[str] = field(default_factory=list)
    control_fixtures: List[str] = field(default_factory=list)
    control_functions: List[str] = field(default_factory=list)
    loopback: bool = False
    integration_markers: List[str] = field(default_factory=list)
    integration_paths: List[str] = field(default_factory=list)
    integration_allow: List[str] = field(default_factory=list)
    guard: Optional[GuardConfig] = None
    benign_env: List[str] = field(default_factory=list)      # [tool.hermetic.benign] env: more notes
    benign_remove: List[str] = field(default_factory=list)   # [tool.hermetic.benign] remove: warnings again
    file_timeout: float = 60.0   # seconds to parse one file before it is reported and skipped
    platform: Optional[str] = None   # sys.platform that branches are decided for (None: the running one)
    # classes whose subclasses a pytest plugin collects as test classes (qualified names)
    test_base_classes: List[str] = field(default_factory=list)
    # calls that change process-wide state (HT304), added to catalogue/process_state.toml: name -> state
    process_state: Dict[str, str] = field(default_factory=dict)
    explicit: List[str] = field(default_factory=list)   # keys set in the file (the rest are defaults)


@dataclass
class PytestConfig:
    """The pytest settings that decide which tests exist and how they import."""

    inifile: Optional[Path] = None
    rootdir: Optional[Path] = None
    testpaths: List[str] = field(default_factory=list)
    python_files: List[str] = field(default_factory=lambda: ["test_*.py", "*_test.py"])
    python_classes: List[str] = field(default_factory=lambda: ["Test"])
    python_functions: List[str] = field(default_factory=lambda: ["test"])
    pythonpath: List[str] = field(default_factory=list)
    norecursedirs: List[str] = field(default_factory=lambda: ["*.egg", ".*", "_darcs", "build", "CVS", "dist",
                                                              "node_modules", "venv", "{arch}"])
    env: Dict[str, str] = field(default_factory=dict)
    addopts: str = ""

    def testpath_dirs(self, root: Path) -> List[Path]:
        """What ``testpaths`` names under ``root``, as pytest expands it: each entry a glob
        (``**`` recursive) relative to the rootdir, entries that match nothing dropped. Empty
        means every test file counts, as pytest collects from the rootdir when none matches
        (``_pytest/main.py``)."""
        import glob

        out: List[Path] = []
        for t in self.testpaths:
            out.extend(Path(g) for g in sorted(glob.glob(os.path.join(glob.escape(str(root)), t), recursive=True)))
        return out


def _load_toml(path: Path) -> Dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except UnicodeDecodeError:   # TOML is UTF-8 by definition
        raise ConfigError(f"{path}: invalid TOML: not UTF-8 text") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None


def _did_you_mean(k: str, known) -> str:
    import difflib

    close = difflib.get_close_matches(k, sorted(known), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _str_list(value: Any, where: str) -> List[str]:
    if isinstance(value, str):   # as ruff: a lone string is a mistake more often than a shorthand
        raise ConfigError(f"{where}: expected a list of strings, got the string {value!r} (write [{value!r}])")
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: expected a list of strings")
    return list(value)


MAX_FILE_TIMEOUT = 86_400   # seconds


def rule_codes(values: List[str], where: str, empty_ok: bool = True) -> List[str]:
    """``values`` checked as rule codes or prefixes of them (``HT``, ``HT1``, ``HT102``); raises
    ConfigError naming ``where`` for one that selects no rule (a misspelt or lower-case code)."""
    if not values and not empty_ok:
        raise ConfigError(f"{where}: no rule code given")
    for v in values:
        if not any(code.startswith(v) for code in RULES):
            hint = f" (did you mean {v.upper()!r}?)" if any(c.startswith(v.upper()) for c in RULES) else ""
            raise ConfigError(f"{where}: unknown rule code {v!r}{hint}; codes start with HT "
                              f"(`hermetic rules` lists them)")
    return values


def _check_patterns(patterns: List[str], where: str) -> None:
    """Raise ConfigError naming ``where`` for a pattern gitignore syntax does not allow."""
    for p in patterns:
        try:
            gitignore_spec([p])
        except Exception as exc:   # pathspec's own error types differ between its versions
            raise ConfigError(f"{where}: invalid pattern {p!r}: {exc}") from None


_TOP_KEYS = {"select", "ignore", "fail-on", "exclude", "per-file-ignores", "sinks", "controls",
             "integration", "guard", "file-timeout", "platform", "benign", "test-base-classes",
             "process-state"}


def parse_hermetic(table: Dict[str, Any], source: Path) -> Config:
    """Validate a ``[tool.hermetic]`` table; raises ConfigError naming ``source`` and the key."""
    cfg = Config(source=source, root=source.parent)
    cfg.explicit = sorted(table) if isinstance(table, dict) else []
    prefix = f"{source}: tool.hermetic" if source.name == "pyproject.toml" else f"{source}: "
    def key(k: str) -> str:
        return f"{prefix}.{k}" if prefix.endswith("hermetic") else f"{prefix}{k}"
    if not isinstance(table, dict):
        raise ConfigError(f"{prefix}: expected a table")
    for k in table:
        if k not in _TOP_KEYS:
            raise ConfigError(f"{key(k)}: unknown key{_did_you_mean(k, _TOP_KEYS)}")
    if "select" in table:
        cfg.select = rule_codes(_str_list(table["select"], key("select")), key("select"), empty_ok=False)
    if "ignore" in table:
        cfg.ignore = rule_codes(_str_list(table["ignore"], key("ignore")), key("ignore"))
    if "fail-on" in table:
        if table["fail-on"] not in ("error", "warning"):
            raise ConfigError(f"{key('fail-on')}: expected \"error\" or \"warning\"")
        cfg.fail_on = table["fail-on"]
    if "exclude" in table:
        cfg.exclude = _str_list(table["exclude"], key("exclude"))
        _check_patterns(cfg.exclude, key("exclude"))
    if "file-timeout" in table:
        t = table["file-timeout"]
        # finite and at most a day: the pool waits on it (``selectors`` refuses larger values)
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 < t <= MAX_FILE_TIMEOUT:
            raise ConfigError(f"{key('file-timeout')}: expected a positive number of seconds "
                              f"(at most {MAX_FILE_TIMEOUT})")
        cfg.file_timeout = float(t)
    if "platform" in table:
        plat = table["platform"]
        if plat not in PLATFORMS:
            raise ConfigError(f"{key('platform')}: expected one of {', '.join(repr(p) for p in PLATFORMS)}")
        cfg.platform = plat
    if "test-base-classes" in table:
        cfg.test_base_classes = _str_list(table["test-base-classes"], key("test-base-classes"))
        bad = [c for c in cfg.test_base_classes if not all(p.isidentifier() for p in c.split("."))]
        if bad:
            raise ConfigError(f"{key('test-base-classes')}: expected dotted class names, got {bad[0]!r}")
    if "process-state" in table:
        ps = table["process-state"]
        if not isinstance(ps, dict) or not all(isinstance(k, str) and isinstance(v, str) and v
                                               for k, v in ps.items()):
            raise ConfigError(f"{key('process-state')}: expected a table of \"call\" = \"state name\"")
        cfg.process_state = dict(ps)
    if "per-file-ignores" in table:
        pfi = table["per-file-ignores"]
        if not isinstance(pfi, dict):
            raise ConfigError(f"{key('per-file-ignores')}: expected a table of pattern = [codes]")
        cfg.per_file_ignores = {p: rule_codes(_str_list(v, key(f"per-file-ignores.{p}")), key(f"per-file-ignores.{p}"))
                                for p, v in pfi.items()}
    if "sinks" in table:
        sinks = table["sinks"]
        if not isinstance(sinks, dict):
            raise ConfigError(f"{key('sinks')}: expected a table")
        for k, v in sinks.items():
            if k == "remove":
                cfg.sinks_remove = _str_list(v, key("sinks.remove"))
            elif k in CATEGORIES:
                cfg.sinks_add[k] = _str_list(v, key(f"sinks.{k}"))
            else:
                raise ConfigError(f"{key('sinks.' + k)}: unknown key{_did_you_mean(k, CATEGORIES + ('remove',))} "
                                  f"(expected one of {', '.join(CATEGORIES)}, remove)")
    if "controls" in table:
        ctl = table["controls"]
        if not isinstance(ctl, dict):
            raise ConfigError(f"{key('controls')}: expected a table")
        for k, v in ctl.items():
            if k == "fixtures":
                cfg.control_fixtures = _str_list(v, key("controls.fixtures"))
            elif k == "functions":
                cfg.control_functions = _str_list(v, key("controls.functions"))
            elif k == "loopback":
                if not isinstance(v, bool):
                    raise ConfigError(f"{key('controls.loopback')}: expected true or false")
                cfg.loopback = v
            else:
                raise ConfigError(f"{key('controls.' + k)}: unknown key{_did_you_mean(k, ('fixtures', 'functions', 'loopback'))}")
    if "integration" in table:
        itg = table["integration"]
        if not isinstance(itg, dict):
            raise ConfigError(f"{key('integration')}: expected a table")
        for k, v in itg.items():
            if k == "markers":
                cfg.integration_markers = _str_list(v, key("integration.markers"))
            elif k == "paths":
                cfg.integration_paths = _str_list(v, key("integration.paths"))
            elif k == "allow":
                cfg.integration_allow = _str_list(v, key("integration.allow"))
                for cat in cfg.integration_allow:
                    if cat not in CATEGORIES:
                        raise ConfigError(f"{key('integration.allow')}: unknown category {cat!r}")
            else:
                raise ConfigError(f"{key('integration.' + k)}: unknown key{_did_you_mean(k, ('markers', 'paths', 'allow'))}")
    if "benign" in table:
        _parse_benign(table["benign"], cfg, key)
    if "guard" in table:
        g = table["guard"]
        if not isinstance(g, dict):
            raise ConfigError(f"{key('guard')}: expected a table")
        guard = GuardConfig()
        for k, v in g.items():
            if k == "function":
                if not isinstance(v, str):
                    raise ConfigError(f"{key('guard.function')}: expected a string")
                guard.function = v
            elif k == "bootstrap":
                guard.bootstrap = _str_list(v, key("guard.bootstrap"))
            elif k == "production":
                guard.production = _str_list(v, key("guard.production"))
            elif k == "exempt":
                if isinstance(v, dict):
                    if not all(isinstance(x, str) for x in v.values()):
                        raise ConfigError(f"{key('guard.exempt')}: expected node id = \"reason\"")
                    guard.exempt = dict(v)
                else:
                    guard.exempt = {n: "" for n in _str_list(v, key("guard.exempt"))}
            else:
                raise ConfigError(f"{key('guard.' + k)}: unknown key"
                                  f"{_did_you_mean(k, ('function', 'bootstrap', 'production', 'exempt'))}")
        if not guard.function:
            raise ConfigError(f"{key('guard.function')}: required when [tool.hermetic.guard] is present")
        cfg.guard = guard
    return cfg


def _parse_benign(table: Any, cfg: Config, key) -> None:
    """``[tool.hermetic.benign]``: ``env`` (variables whose reads are notes) and ``remove``
    (names taken out of the packaged list); ``key(k)`` names a key for the error message."""
    if not isinstance(table, dict):
        raise ConfigError(f"{key('benign')}: expected a table")
    for k, v in table.items():
        if k == "env":
            cfg.benign_env = _str_list(v, key("benign.env"))
        elif k == "remove":
            cfg.benign_remove = _str_list(v, key("benign.remove"))
        else:
            raise ConfigError(f"{key('benign.' + k)}: unknown key{_did_you_mean(k, ('env', 'remove'))}")


def load_config_file(path: Path) -> Config:
    """Read one configuration file (``--config``): a pyproject.toml's ``[tool.hermetic]``, or a
    hermetic.toml whose top level (or ``[tool.hermetic]``) is the table."""
    if not path.exists():
        raise ConfigError(f"{path}: no such configuration file")
    if not path.is_file():
        raise ConfigError(f"{path}: not a configuration file (not a regular file)")
    data = _load_toml(path)
    tool = data.get("tool") if isinstance(data.get("tool"), dict) else None
    if path.name == "pyproject.toml":
        return parse_hermetic((tool or {}).get("hermetic", {}), path)
    table = tool.get("hermetic", {}) if tool is not None else data
    return parse_hermetic(table, path)


def find_config(start: Path) -> Config:
    """The nearest configuration from ``start`` up to the repository root (a folder holding
    ``.git``): in each folder the first of .hermetic.toml, hermetic.toml, or a pyproject.toml
    with a ``[tool.hermetic]`` table. Defaults when there is none."""
    for d in [start, *start.parents]:
        for name in (".hermetic.toml", "hermetic.toml"):
            p = d / name
            if p.is_file():
                return load_config_file(p)
        p = d / "pyproject.toml"
        if p.is_file():
            data = _load_toml(p)
            tool = data.get("tool", {})
            if isinstance(tool, dict) and "hermetic" in tool:
                return parse_hermetic(tool["hermetic"], p)
        if (d / ".git").exists():
            break
    return Config()


def describe(cfg: Config) -> List[Tuple[str, Any, str]]:
    """(key, value, where it came from) for every setting: the resolved configuration."""
    src = str(cfg.source) if cfg.source else None
    def origin(k: str) -> str:
        return src if (src and k in cfg.explicit) else "default"
    rows: List[Tuple[str, Any, str]] = [
        ("select", cfg.select, origin("select")),
        ("ignore", cfg.ignore, origin("ignore")),
        ("fail-on", cfg.fail_on, origin("fail-on")),
        ("exclude", list(DEFAULT_EXCLUDES) + cfg.exclude, f"defaults + {src}" if cfg.exclude else "default"),
        ("per-file-ignores", cfg.per_file_ignores, origin("per-file-ignores")),
        ("sinks", {**cfg.sinks_add, **({"remove": cfg.sinks_remove} if cfg.sinks_remove else {})}, origin("sinks")),
        ("controls.fixtures", cfg.control_fixtures, origin("controls")),
        ("controls.functions", cfg.control_functions, origin("controls")),
        ("controls.loopback", cfg.loopback, origin("controls")),
        ("integration.markers", cfg.integration_markers, origin("integration")),
        ("integration.paths", cfg.integration_paths, origin("integration")),
        ("integration.allow", cfg.integration_allow, origin("integration")),
        ("file-timeout", cfg.file_timeout, origin("file-timeout")),
        ("platform", cfg.platform or f"{sys.platform} (the running Python's)", origin("platform")),
        ("benign.env", cfg.benign_env, origin("benign")),
        ("benign.remove", cfg.benign_remove, origin("benign")),
        ("test-base-classes", cfg.test_base_classes, origin("test-base-classes")),
        ("process-state", cfg.process_state, origin("process-state")),
    ]
    if cfg.guard is not None:
        g = cfg.guard
        rows += [("guard.function", g.function, origin("guard")), ("guard.bootstrap", g.bootstrap, origin("guard")),
                 ("guard.production", g.production, origin("guard")), ("guard.exempt", g.exempt, origin("guard"))]
    else:
        rows.append(("guard", None, "default (HT4xx inactive)"))
    return rows


def _ini_list(value: str) -> List[str]:
    return value.split()


def find_pytest_config(start: Path, invocation_dir: Optional[Path] = None) -> PytestConfig:
    """pytest's own rootdir and configfile lookup (pytest 8, ``_pytest/config/findpaths.py``):

    1. the first of pytest.ini, .pytest.ini, pyproject.toml (with ``[tool.pytest.ini_options]``),
       tox.ini (``[pytest]``), setup.cfg (``[tool:pytest]``) in ``start`` or a parent; failing
       that, the nearest pyproject.toml even without the table (no settings);
    2. else the nearest folder holding setup.py, from ``start`` up;
    3. else ``invocation_dir`` (default ``start``) where ``start`` lies inside it, and ``start``
       itself where it does not. pytest takes the common ancestor of the two (unless that is the
       file system's root); hermetic parses everything under the rootdir, so a target outside the
       working folder, with no marker above it, is its own project: a sibling project or the
       whole machine is not analysed with it (docs/limits.md).
    """
    first_pyproject: Optional[Path] = None
    for d in [start, *start.parents]:
        found = _read_pytest_settings(d)
        if found is not None:
            path, settings = found
            cfg = _pytest_from_settings(settings)
            cfg.inifile = path
            cfg.rootdir = d
            return cfg
        if first_pyproject is None and (d / "pyproject.toml").is_file():
            first_pyproject = d / "pyproject.toml"
    cfg = PytestConfig()
    if first_pyproject is not None:
        cfg.inifile = first_pyproject
        cfg.rootdir = first_pyproject.parent
        return cfg
    for d in [start, *start.parents]:
        if (d / "setup.py").is_file():
            cfg.rootdir = d
            return cfg
    inv = (invocation_dir or start).resolve()
    target = start.resolve()
    cfg.rootdir = inv if Path(os.path.commonpath([str(inv), str(target)])) == inv else target
    return cfg


def _read_pytest_settings(d: Path) -> Optional[Tuple[Path, Dict[str, Any]]]:
    for name in ("pytest.ini", ".pytest.ini"):   # these match even when empty
        p = d / name
        if p.is_file():
            parser = _ini(p)
            section = parser["pytest"] if parser is not None and parser.has_section("pytest") else {}
            return p, dict(section)
    p = d / "pyproject.toml"
    if p.is_file():
        try:
            data = _load_toml(p)
        except ConfigError:
            data = {}
        opts = data.get("tool", {}).get("pytest", {}).get("ini_options") if isinstance(data.get("tool"), dict) else None
        if isinstance(opts, dict):
            return p, opts
    p = d / "tox.ini"
    if p.is_file():
        parser = _ini(p)
        if parser is not None and parser.has_section("pytest"):
            return p, dict(parser["pytest"])
    p = d / "setup.cfg"
    if p.is_file():
        parser = _ini(p)
        if parser is not None and parser.has_section("tool:pytest"):
            return p, dict(parser["tool:pytest"])
    return None


def setup_cfg_value(rootdir: Optional[Path], section: str, key: str) -> Optional[str]:
    """A value of the project's ``setup.cfg`` (``[sqla_testing] requirement_cls``), or None."""
    parser = _ini(rootdir / "setup.cfg") if rootdir is not None and (rootdir / "setup.cfg").is_file() else None
    if parser is None or not parser.has_option(section, key):
        return None
    return parser.get(section, key).strip() or None


def _ini(path: Path) -> Optional[configparser.ConfigParser]:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, OSError, UnicodeDecodeError):
        return None
    return parser


def _pytest_from_settings(settings: Dict[str, Any]) -> PytestConfig:
    cfg = PytestConfig()
    def lst(name: str) -> Optional[List[str]]:
        if name not in settings:
            return None
        v = settings[name]
        if isinstance(v, list):
            return [str(x) for x in v]
        return _ini_list(str(v))
    for name in ("testpaths", "python_files", "python_classes", "python_functions", "pythonpath", "norecursedirs"):
        v = lst(name)
        if v is not None:
            setattr(cfg, name, v)
    env = settings.get("env")
    if env is not None:
        entries = env if isinstance(env, list) else [x for x in str(env).splitlines() if x.strip()]
        for entry in entries:
            entry = str(entry).strip()
            if "=" in entry:
                k, v = entry.split("=", 1)
                k = k.strip()
                for flag in ("D:", "R:"):
                    if k.startswith(flag):
                        k = k[2:].strip()
                cfg.env[k] = v.strip()
    addopts = settings.get("addopts", "")
    cfg.addopts = " ".join(addopts) if isinstance(addopts, list) else str(addopts)
    return cfg
