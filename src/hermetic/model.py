"""The types the report is made of (contract section 8)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional


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

    def sort_key(self):
        return (self.path, self.line, self.column, self.code, self.message)

    def to_json(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {
            "code": self.code,
            "severity": self.severity,
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
