"""Record files on disk (``hermetic-record.json``): their version, reading one, merging several.

A record is the JSON object ``Recorder.to_record`` writes: ``version``, ``tool``, ``kind``
(``"hermetic-record"``), ``rootdir``, ``mode``, ``worker``, ``python``, ``tests`` (one entry per
node id), ``events`` (see ``events``) and ``summary``. xdist workers each write their own
(``worker_record_path``); ``merge`` makes one record of them for ``hermetic verify``.
"""
from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional, Sequence

from .events import event_order, summarize

RECORD_VERSION = 1


class RecordError(Exception):
    """A record file that cannot be read; the message is one line."""


def worker_record_path(path: str, worker: Optional[str]) -> str:
    """``hermetic-record.json`` -> ``hermetic-record-gw0.json`` for xdist worker ``gw0``."""
    if not worker:
        return path
    stem, ext = os.path.splitext(path)
    return f"{stem}-{worker}{ext or '.json'}"


def load_record(path: str) -> Dict[str, Any]:
    """The record at ``path``; ``RecordError`` when it cannot be read, is not a record or is of
    another ``RECORD_VERSION``."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except OSError as exc:
        raise RecordError(f"{path}: cannot read the record: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise RecordError(f"{path}: not a JSON record: {exc}") from None
    if not isinstance(data, dict) or data.get("kind") != "hermetic-record" or not isinstance(data.get("events"), list):
        raise RecordError(f"{path}: not a hermetic record (write one with pytest --hermetic=record)")
    if data.get("version") != RECORD_VERSION:
        raise RecordError(f"{path}: record version {data.get('version')!r}, expected {RECORD_VERSION}")
    return data


def merge(records: Sequence[Dict[str, Any]]) -> Dict[str, Any]:
    """One record from several (xdist workers, split runs of one project).

    Events of a test that ran in several records are kept side by side (their counts are
    not added: they are different runs). All records must share a rootdir.
    """
    if not records:
        raise RecordError("no records to merge")
    roots = {r.get("rootdir") for r in records}
    if len(roots) > 1:
        raise RecordError(f"records from different rootdirs cannot be merged: {', '.join(sorted(map(str, roots)))}")
    first = records[0]
    if len(records) == 1:
        return first
    tests: Dict[str, Dict[str, Any]] = {}
    events: List[Dict[str, Any]] = []
    counts: Dict[str, int] = {}
    for r in records:
        for t in r.get("tests", []):
            tests.setdefault(t["nodeid"], t)
        events.extend(r.get("events", []))
        for k, v in (r.get("summary") or {}).items():
            if k in ("ignored", "indirect", "internal_errors", "profiler_conflicts", "env_snapshots", "env_restores") and isinstance(v, int):
                counts[k] = counts.get(k, 0) + v
    events.sort(key=lambda e: (e.get("test", ""),) + event_order(e))
    modes = sorted({str(r.get("mode")) for r in records})
    return {
        "version": RECORD_VERSION,
        "tool": first.get("tool"),
        "kind": "hermetic-record",
        "rootdir": first.get("rootdir"),
        "mode": modes[0] if len(modes) == 1 else "mixed",
        "worker": None,
        "workers": sorted(str(r.get("worker")) for r in records if r.get("worker")),
        "python": first.get("python"),
        "tests": [tests[k] for k in sorted(tests)],
        "events": events,
        "summary": summarize(events, len(tests), counts),
    }
