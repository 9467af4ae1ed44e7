"""The types the report is made of (contract section 8)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple


@dataclass
class TraceStep:
    path: str
    line: int
    function: str

    def to_json(self) -> Dict[str, Any]:
        return {"path": self.path, "line": self.line, "function": self.function}


@dataclass
class Finding:
    """One finding: a rule code anchored at a span, the tests it affects, how they reach it."""

    code: str
    severity: str
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    message: str
    tests: List[str] = field(default_factory=list)
    trace: List[TraceStep] = field(default_factory=list)
    origin: Optional[Dict[str, Any]] = None
    fingerprint: str = ""
    fix: str = ""
    function: str = "<module>"
    anchor: str = ""          # normalised anchored expression (fingerprint input)
    runtime: Optional[str] = None   # with --runtime: confirmed / not-exercised / n/a
    runtime_tests: List[str] = field(default_factory=list)
    confidence: str = "high"   # "high" or "medium" (contract section 4)
    # what may make it a note: "env:NAME" (a variable the benign list may hold), "duration"
    benign: str = ""
    # those of `tests` that reach it only on ways their values do not decide (counted in the message)
    maybe_tests: List[str] = field(default_factory=list)

    def sort_key(self):
        return (self.path, self.line, self.column, self.code, self.message)

    def to_json(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {
            "code": self.code,
            "severity": self.severity,
            "confidence": self.confidence,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "message": self.message,
            "tests": list(self.tests),
            "trace": [t.to_json() for t in self.trace],
            "origin": self.origin,
            "fingerprint": self.fingerprint,
        }
        if self.fix:
            out["fix"] = self.fix
        if self.maybe_tests:
            out["maybe_tests"] = list(self.maybe_tests)
        if self.runtime is not None:
            out["runtime"] = self.runtime
            if self.runtime_tests:
                out["runtime_tests"] = list(self.runtime_tests)
        return out


@dataclass
class FileError:
    path: str
    message: str

    def to_json(self) -> Dict[str, Any]:
        return {"path": self.path, "message": self.message}


_UNPRINTABLE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\ud800-\udfff]")


def printable(text: str) -> str:
    """``text`` with what would break a report escaped as Python writes it: control characters
    (a terminal escape, a NUL, a newline that ends a one-line message, what XML refuses) and
    lone surrogates, which no UTF-8 output can encode. They reach reports from string literals
    and file names of the analysed code (``"\\x1b[31m"``, ``"\\ud800"``)."""
    if text.isascii() and text.isprintable():
        return text
    return _UNPRINTABLE.sub(lambda m: "\\x%02x" % ord(m.group()) if ord(m.group()) < 0x100
                            else "\\u%04x" % ord(m.group()), text)


def _printable_data(obj: Any) -> Any:
    if isinstance(obj, str):
        return printable(obj)
    if isinstance(obj, list):
        return [_printable_data(x) for x in obj]
    if isinstance(obj, dict):
        return {k: _printable_data(v) for k, v in obj.items()}
    return obj


@dataclass
class Report:
    findings: List[Finding] = field(default_factory=list)
    errors: List[FileError] = field(default_factory=list)
    files: int = 0
    tests: int = 0
    unresolved_calls: List[Dict[str, Any]] = field(default_factory=list)
    unknown_origins: List[Dict[str, Any]] = field(default_factory=list)
    suppressed: int = 0
    unused_suppressions: List[Dict[str, Any]] = field(default_factory=list)
    baseline_fixed: Optional[int] = None
    calls_seen: int = 0     # call sites in the modules whose code the tests ran
    sinks_seen: int = 0     # distinct I/O operations reached
    inventory: List[Dict[str, Any]] = field(default_factory=list)   # per test: operations and their control
    statistics: Dict[str, Any] = field(default_factory=dict)   # not in the JSON report: timings vary
    # node id -> (the test's file as paths are shown, its def line), for the tests findings name
    # (SARIF's related locations); not in the JSON report, which has the node ids
    test_locations: Dict[str, Tuple[str, int]] = field(default_factory=dict)
    root: str = ""   # the rootdir the run analysed (not in the JSON report)

    def make_printable(self) -> None:
        """Escape, in place, what would break an output format in the texts that come from the
        analysed code (``printable``): paths, node ids, messages, origins, traces. The fix hints
        are hermetic's own, several lines on purpose, and their values are written as reprs."""
        for f in self.findings:
            f.path, f.message, f.function, f.anchor = (printable(f.path), printable(f.message),
                                                       printable(f.function), printable(f.anchor))
            f.tests = [printable(t) for t in f.tests]
            f.trace = [TraceStep(printable(t.path), t.line, printable(t.function)) for t in f.trace]
            if f.origin:
                f.origin = _printable_data(f.origin)
            f.fix = "\n".join(printable(line) for line in f.fix.split("\n"))
        self.errors = [FileError(printable(e.path), printable(e.message)) for e in self.errors]
        self.unresolved_calls = _printable_data(self.unresolved_calls)
        self.unknown_origins = _printable_data(self.unknown_origins)
        self.unused_suppressions = _printable_data(self.unused_suppressions)
        self.inventory = _printable_data(self.inventory)
        self.test_locations = {printable(k): (printable(p), line) for k, (p, line) in self.test_locations.items()}
