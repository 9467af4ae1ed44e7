"""pytest plugin: ``pytest --hermetic=record`` records the I/O each test really performs;
``pytest --hermetic=enforce`` also blocks and fails uncontrolled I/O.

Registered through the ``pytest11`` entry point, so it is loaded in every pytest process
once hermetic is installed: this module imports nothing beyond the standard library and
pytest, and does nothing unless ``--hermetic`` is given (the work is in
``hermetic.runtime.recorder`` and the modules beside it, imported only then).
"""
from __future__ import annotations

import os
import sys

import pytest

_EARLY: dict = {}
_KEY = pytest.StashKey() if hasattr(pytest, "StashKey") else None
DEFAULT_RECORD = "hermetic-record.json"


def pytest_addoption(parser) -> None:
    # the real environment and home folder, before conftests and plugins (pytest-env) change them
    _EARLY["env"] = dict(getattr(os.environ, "_data", {}))
    _EARLY["home"] = os.path.expanduser("~")
    group = parser.getgroup("hermetic", "hermetic runtime check")
    group.addoption("--hermetic", dest="hermetic", choices=("record", "enforce"), default=None,
                    help="record: write the I/O each test performs to hermetic-record.json; enforce: also "
                         "block uncontrolled I/O and fail the test that performed it.")
    group.addoption("--hermetic-record", dest="hermetic_record", default=None, metavar="PATH",
                    help=f"where to write the record (default: {DEFAULT_RECORD} in the rootdir; "
                         "xdist workers add their id: hermetic-record-gw0.json).")
    group.addoption("--hermetic-loopback", dest="hermetic_loopback", action="store_true", default=False,
                    help="count connections to loopback addresses as controlled "
                         "(also [tool.hermetic.controls] loopback = true).")
    group.addoption("--hermetic-no-block", dest="hermetic_no_block", action="store_true", default=False,
                    help="enforce without blocking: let uncontrolled I/O happen, fail the test afterwards.")


def _recorder(config):
    if _KEY is None:
        return None
    return config.stash.get(_KEY, None)


def pytest_configure(config) -> None:
    mode = config.getoption("hermetic", None)
    if not mode or _KEY is None:
        return
    config.stash[_KEY] = _make_recorder(config, mode)


def _make_recorder(config, mode: str):
    import site
    import sysconfig
    import tempfile

    from . import recorder as runtime

    rootdir = str(config.rootpath)
    invocation = str(config.invocation_params.dir)
    loopback = bool(config.getoption("hermetic_loopback"))
    clock_remove: list = []
    integration = ([], [], [])
    try:
        from pathlib import Path

        from ..config import find_config

        cfg = find_config(Path(rootdir))
        loopback = loopback or cfg.loopback
        clock_remove = list(cfg.sinks_remove)
        integration = (cfg.integration_markers, cfg.integration_paths, cfg.integration_allow)
    except Exception as exc:  # a bad configuration is the static check's to report
        config.issue_config_time_warning(pytest.PytestWarning(f"hermetic: configuration ignored: {exc}"), 2)
    tmp = []
    given = getattr(config.option, "basetemp", None)
    if given:
        tmp.append(os.path.join(invocation, str(given)))
    try:
        from _pytest.tmpdir import get_user

        user = get_user() or "unknown"
    except Exception:
        user = "unknown"
    temproot = os.environ.get("PYTEST_DEBUG_TEMPROOT") or tempfile.gettempdir()
    tmp.append(os.path.join(temproot, f"pytest-of-{user}"))
    machinery = {sys.prefix, sys.base_prefix, sys.exec_prefix, getattr(sys, "base_exec_prefix", sys.prefix)}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        try:
            machinery.add(sysconfig.get_paths()[key])
        except KeyError:
            pass
    try:
        machinery.update(site.getsitepackages())
        machinery.add(site.getusersitepackages())
    except AttributeError:  # pragma: no cover - virtualenv's old site.py
        pass
    roots = runtime.Roots(rootdir, home=_EARLY.get("home", ""), tmp=tmp, machinery=sorted(machinery))
    matcher = runtime.test_code_matcher(config.getini("python_files"), config.getini("testpaths"))
    worker = getattr(config, "workerinput", {}).get("workerid")
    record = config.getoption("hermetic_record")
    record = os.path.join(invocation, record) if record else os.path.join(rootdir, DEFAULT_RECORD)
    rec = runtime.Recorder(runtime.RecorderOptions(
        rootdir, mode=mode, block=not config.getoption("hermetic_no_block"), loopback=loopback, roots=roots,
        env_snapshot=_EARLY.get("env", {}), test_code=matcher, clock_remove=clock_remove, worker=worker,
        record_path=runtime.worker_record_path(record, worker)))
    rec.integration = integration
    rec.config = config
    runtime.install_audit_hook()
    # xdist's controller runs no test: its workers write hermetic-record-gw<N>.json
    rec.controller = worker is None and getattr(config.option, "dist", "no") not in ("no", None)
    if rec.controller:
        _remove_stale_worker_records(record)
    return rec


def _remove_stale_worker_records(record: str) -> None:
    import glob
    import re

    stem, ext = os.path.splitext(record)
    for p in glob.glob(f"{glob.escape(stem)}-gw*{glob.escape(ext)}"):
        if re.fullmatch(r"gw\d+", p[len(stem) + 1:len(p) - len(ext)]):
            try:
                os.remove(p)
            except OSError:
                pass


def _allow(rec, item) -> frozenset:
    markers, paths, allow = rec.integration
    if not allow:
        return frozenset()
    names = {m.name for m in item.iter_markers()}
    path = item.nodeid.split("::", 1)[0]
    if names & set(markers) or any(path == p.rstrip("/") or path.startswith(p.rstrip("/") + "/") for p in paths):
        return frozenset(allow)
    return frozenset()


def _log(rec, item):
    log = rec.tests.get(item.nodeid)
    if log is None:
        log = rec.test_log(item.nodeid, _allow(rec, item))
        factory = getattr(item.config, "_tmp_path_factory", None)
        base = getattr(factory, "_basetemp", None)
        if base is not None and str(base) not in rec.known_basetemps:
            rec.known_basetemps.add(str(base))
            rec.roots.add("tmp", str(base))
    return log


def _window(item, phase: str):
    rec = _recorder(item.config)
    if rec is None:
        return None
    rec.enter(_log(rec, item), phase)
    return rec


def _phase(item, phase: str):
    """The body of the three per-phase hookwrappers: record inside the phase only."""
    rec = _window(item, phase)
    try:
        yield
    finally:
        if rec is not None:
            rec.leave()


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_runtest_setup(item):
    yield from _phase(item, "setup")


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_runtest_call(item):
    yield from _phase(item, "call")


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_runtest_teardown(item, nextitem):
    yield from _phase(item, "teardown")


@pytest.hookimpl(hookwrapper=True)
def pytest_collection(session):
    rec = _recorder(session.config)
    if rec is not None:
        rec.enter(rec.test_log(""), "collect")
    try:
        yield
    finally:
        if rec is not None:
            rec.leave()


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rec = _recorder(item.config)
    if rec is None:
        return
    rep = outcome.get_result()
    log = rec.tests.get(item.nodeid)
    if log is None:
        return
    if rep.failed:
        log.outcome = "failed"
    elif rep.skipped and not log.outcome:
        log.outcome = "skipped"
    elif call.when == "call" and not log.outcome:
        log.outcome = "passed"
    if rec.mode != "enforce":
        return
    if call.when == "setup" and rep.passed:
        return      # the call phase reports what setup did
    events = rec.pending_violations(log)
    if not events:
        return
    from .events import format_violations

    text = format_violations(item.nodeid, events)
    if rep.failed:
        rep.sections.append(("hermetic: uncontrolled I/O", text))
        return
    if hasattr(rep, "wasxfail"):
        del rep.wasxfail
    rep.outcome = "failed"
    rep.longrepr = text
    log.outcome = "failed"


def pytest_report_header(config):
    rec = _recorder(config)
    if rec is None:
        return None
    what = "recording" if rec.mode == "record" else ("enforcing" if rec.block else "enforcing (not blocking)")
    return f"hermetic: {what} the I/O of each test -> {rec.record_path}"


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session):
    rec = _recorder(session.config)
    if rec is None:
        return
    if rec.controller or (not any(rec.tests) and session.config.pluginmanager.hasplugin("dsession")):
        rec.controller = True
        return
    try:
        rec.write(rec.record_path)
    except OSError as exc:
        rec.write_error = str(exc)


def pytest_terminal_summary(terminalreporter, config):
    rec = _recorder(config)
    if rec is None:
        return
    if rec.controller:
        terminalreporter.write_line(f"hermetic: the workers wrote their records next to {rec.record_path} "
                                    "(-gw0, -gw1, ...); `hermetic verify` merges them")
        return
    err = rec.write_error
    if err:
        terminalreporter.write_line(f"hermetic: could not write the record: {err}", red=True)
        return
    from .events import describe_event, is_violation

    events = [e for log in rec.tests.values() for e in log.order]
    unc = sum(e["count"] for e in events if is_violation(e))
    supp = sum(e["count"] for e in events if e.get("suppressed"))
    tests = len([t for t in rec.tests if t])
    terminalreporter.write_line(
        f"hermetic: {sum(e['count'] for e in events)} I/O events in {tests} tests, {unc} uncontrolled"
        + (f" ({supp} more suppressed inline)" if supp else "") + f" -> {rec.record_path}")
    for name, where in installed_copies(str(config.rootpath)):
        terminalreporter.write_line(
            f"hermetic: {name} was imported from {where}, not from this checkout: the I/O of its code is "
            f"not recorded (install it with `pip install -e .`, or put its folder on the path)", yellow=True)
    for e in rec.tests[""].order if "" in rec.tests else ():
        if is_violation(e):
            terminalreporter.write_line(f"hermetic: at import (collection): {describe_event(e)}", yellow=True)


def installed_copies(rootdir: str) -> list:
    """``[(package, file)]``: the checkout's own top-level packages (``rootdir/<p>`` or
    ``rootdir/src/<p>`` with an ``__init__.py``) that the session imported from elsewhere (an
    installed copy), whose code the recorder, which watches the checkout, does not see."""
    root = os.path.abspath(rootdir)
    out = []
    for base in (root, os.path.join(root, "src")):
        try:
            names = sorted(os.listdir(base))
        except OSError:
            continue
        for name in names:
            if not os.path.isfile(os.path.join(base, name, "__init__.py")):
                continue
            where = getattr(sys.modules.get(name), "__file__", None)
            if where and not os.path.abspath(where).startswith(root + os.sep):
                out.append((name, where))
    return out
