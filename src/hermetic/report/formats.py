"""Review formats: SARIF 2.1.0, GitHub workflow annotations, a Markdown review comment, JUnit XML.

Each function takes the ``model.Report`` of a check and returns the text to write; all are
deterministic for the same report.
"""
from __future__ import annotations

import json
import re
from typing import Dict, List, Optional, Tuple


def xml_escape(text: str, entities: Optional[Dict[str, str]] = None) -> str:
    from xml.sax.saxutils import escape   # imported when a JUnit report is written

    return escape(text, entities or {})

from .. import __version__
from .model import Finding, Report
from ..rules.registry import RULES, describe

MAX_CODE_FLOWS = 10          # thread flows per SARIF result (one per reaching test)
MARKDOWN_LIMIT = 65_000      # characters in a review comment on the common forges


# ---------------------------------------------------------------------- SARIF
def to_sarif(report: Report, srcroot: str) -> str:
    """SARIF 2.1.0: a rule descriptor per code, results with locations, the reaching tests as
    related locations, one code flow per reaching test (capped), and the fingerprint."""
    codes = sorted({f.code for f in report.findings} | set(RULES))
    rules = []
    for code in codes:
        r = RULES.get(code)
        entry: Dict = {"id": code}
        if r is not None:
            entry.update({
                "name": r.name,
                "shortDescription": {"text": r.summary},
                "fullDescription": {"text": r.why},
                "help": {"text": describe(code), "markdown": describe(code)},
                "defaultConfiguration": {"level": _level(r.severity)},
            })
        rules.append(entry)
    index = {c: i for i, c in enumerate(codes)}
    results = [_sarif_result(f, index, report.test_locations) for f in report.findings]
    run = {
        "tool": {"driver": {"name": "hermetic", "version": __version__, "informationUri":
                            "https://pypi.org/project/hermetic/", "rules": rules}},
        "originalUriBaseIds": {"%SRCROOT%": {"uri": _dir_uri(srcroot)}},
        "results": results,
        "invocations": [{"executionSuccessful": True, "toolExecutionNotifications": [
            {"level": "error", "message": {"text": f"{e.path}: {e.message}"},
             "locations": [{"physicalLocation": {"artifactLocation": {"uri": e.path, "uriBaseId": "%SRCROOT%"}}}]}
            for e in report.errors]}],
    }
    doc = {"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0", "runs": [run]}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _level(severity: str) -> str:
    return severity if severity in ("error", "warning", "note") else "warning"


#: SARIF ``rank`` (0-100, higher first) by severity and confidence: what a viewer sorts by
_RANK = {("error", "high"): 90.0, ("error", "medium"): 70.0, ("warning", "high"): 50.0,
         ("warning", "medium"): 35.0, ("note", "high"): 10.0, ("note", "medium"): 5.0}


def _dir_uri(path: str) -> str:
    from pathlib import Path

    uri = Path(path).resolve().as_uri()
    return uri if uri.endswith("/") else uri + "/"


def _loc(path: str, line: int, column: int = 1, end_line: int = 0, end_column: int = 0, message: str = "") -> Dict:
    region = {"startLine": max(1, line), "startColumn": max(1, column)}
    if end_line:
        region["endLine"] = max(end_line, line)
    if end_column and end_column > 0:
        region["endColumn"] = end_column if end_line != line or end_column > column else column + 1
    loc: Dict = {"physicalLocation": {"artifactLocation": {"uri": path, "uriBaseId": "%SRCROOT%"}, "region": region}}
    if message:
        loc["message"] = {"text": message}
    return loc


def _sarif_result(f: Finding, index: Dict[str, int], tests_at: Dict[str, Tuple[str, int]]) -> Dict:
    res: Dict = {
        "ruleId": f.code,
        "ruleIndex": index[f.code],
        "level": _level(f.severity),
        "message": {"text": f.message + (f"\nFix: {f.fix}" if f.fix else "")},
        "locations": [_loc(f.path, f.line, f.column, f.end_line, f.end_column)],
        "partialFingerprints": {"hermetic/v1": f.fingerprint},
        "rank": _RANK.get((f.severity, f.confidence), 50.0),
        "properties": {"tests": list(f.tests), "confidence": f.confidence,
                       **({"maybe_tests": list(f.maybe_tests)} if f.maybe_tests else {})},
    }
    related = []
    for i, t in enumerate(f.tests):
        # where the test is defined, as paths are shown (the node id's path is the rootdir's)
        path, line = tests_at.get(t, (t.split("::", 1)[0], 1))
        related.append({"id": i, **_loc(path, line, message=t)})
    if related:
        res["relatedLocations"] = related
    if f.trace:
        flows = []
        for t in (f.tests or [""])[:MAX_CODE_FLOWS]:
            steps = [{"location": _loc(s.path, s.line, message=s.function)} for s in f.trace]
            flows.append({"message": {"text": t or "import"}, "threadFlows": [{"locations": steps}]})
        res["codeFlows"] = flows
        res["properties"]["codeFlowCap"] = MAX_CODE_FLOWS
        res["properties"]["codeFlowsOmitted"] = max(0, len(f.tests) - MAX_CODE_FLOWS)
    if f.origin:
        res["properties"]["origin"] = f.origin
    if f.runtime is not None:
        res["properties"]["runtime"] = f.runtime
        if f.runtime_tests:
            res["properties"]["runtimeTests"] = list(f.runtime_tests)
    return res


# ---------------------------------------------------------------------- GitHub annotations
def _gh_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_prop(text: str) -> str:
    return _gh_data(text).replace(":", "%3A").replace(",", "%2C")


def to_github(report: Report) -> str:
    """Workflow-command annotations, one line per finding."""
    out = []
    for f in report.findings:
        kind = {"error": "error", "note": "notice"}.get(f.severity, "warning")
        props = (f"file={_gh_prop(f.path)},line={f.line},endLine={f.end_line},col={f.column},"
                 f"title={_gh_prop(f.code)}")
        msg = f.message + (f"\nfix: {f.fix}" if f.fix else "")
        out.append(f"::{kind} {props}::{_gh_data(msg)}")
    for e in report.errors:
        # GitHub shows an annotation without a line on the run only, not on the file
        out.append(f"::error file={_gh_prop(e.path)},line={_error_line(e.message)},title=hermetic::"
                   f"{_gh_data(e.message)}")
    return "\n".join(out) + ("\n" if out else "")


def _error_line(message: str) -> int:
    """The line a file error's message names (``syntax error at line 3``), else 1."""
    m = re.search(r"\bline (\d+)", message)
    return max(1, int(m.group(1))) if m else 1


# ---------------------------------------------------------------------- Markdown
def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def to_markdown(report: Report, limit: int = MARKDOWN_LIMIT) -> str:
    """A review comment: a verdict line, counts per rule and severity, then the errors with
    their fixes, the warnings folded under one summary, and the notes counted."""
    n = len(report.findings)
    by_sev = {s: [f for f in report.findings if f.severity == s] for s in ("error", "warning", "note")}
    errors, warnings, notes = len(by_sev["error"]), len(by_sev["warning"]), len(by_sev["note"])
    verdict = ("**hermetic: no uncontrolled I/O found** in the analysed tests" if n == 0 else
               f"**hermetic: {_count(n, 'finding')}** ({_count(errors, 'error')}, {_count(warnings, 'warning')}, "
               f"{_count(notes, 'note')})")
    head = [verdict, "", f"{_count(report.files, 'file')}, {_count(report.tests, 'test')}; "
            f"{_count(len(report.unresolved_calls), 'unresolved call')} and "
            f"{_count(len(report.unknown_origins), 'unknown origin')} were not followed.", ""]
    if n:
        counts: Dict[Tuple[str, str], int] = {}
        for f in report.findings:
            counts[(f.code, f.severity)] = counts.get((f.code, f.severity), 0) + 1
        head += ["| rule | severity | findings |", "|---|---|---|"]
        head += [f"| {c} {RULES[c].name if c in RULES else ''} | {sev} | {counts[(c, sev)]} |"
                 for c, sev in sorted(counts, key=lambda k: (_SEV_ORDER[k[1]], k[0]))]
        head.append("")
    text = "\n".join(head)
    blocks = [_md_finding(f) for f in by_sev["error"]]
    if errors:
        text += "\n### Errors: the tests can change something outside their sandbox or reach a real service\n"
    text, left = _fit(text, blocks, limit - 200)
    if warnings and not left:
        wblocks = [_md_finding(f) for f in by_sev["warning"]]
        text += (f"\n<details><summary>{_count(warnings, 'warning')}: the results depend on the machine the "
                 f"tests run on</summary>\n")
        text, left = _fit(text, wblocks, limit - 250)
        text += "\n</details>\n"
    elif warnings:
        left += warnings
    if notes:
        text += f"\n_{_count(notes, 'note')} (benign reads: presentation-only environment variables, durations) " \
                f"not shown._\n"
    if left:
        text += f"\n\n_{left} more findings are not shown (comment size limit); run " \
                f"`hermetic check` for the full list._\n"
    return text


def _fit(text: str, blocks: List[str], room: int) -> Tuple[str, int]:
    """``text`` with as many of ``blocks`` appended, in order, as keep it within ``room``
    characters; and how many were left out."""
    for i, b in enumerate(blocks):
        if len(text) + len(b) > room:
            return text, len(blocks) - i
        text += "\n" + b
    return text, 0


_SEV_ORDER = {"error": 0, "warning": 1, "note": 2}


def _md_finding(f: Finding) -> str:
    """One finding's section of the review comment."""
    medium = " (medium confidence)" if f.confidence == "medium" else ""
    lines = [f"#### {_code(f'{f.path}:{f.line}')} {f.code}{medium}", "", _md_text(f.message), ""]
    if f.fix:
        lines.append(f"**fix:** {_md(f.fix)}\n")
    if f.trace:
        lines.append("<details><summary>trace</summary>\n")
        lines += [f"{i}. {_code(f'{s.path}:{s.line}')} {_md_text(s.function)}" for i, s in enumerate(f.trace, 1)]
        lines.append("\n</details>\n")
    if f.tests:
        shown = ", ".join(_code(t) for t in f.tests[:5])
        more = f" and {len(f.tests) - 5} more" if len(f.tests) > 5 else ""
        lines.append(f"**tests:** {shown}{more}\n")
    return "\n".join(lines)


def _md(text: str) -> str:
    """hermetic's own text (a fix hint, which may hold code spans), with its line breaks kept and
    HTML left inert: the values it quotes come from the analysed code."""
    return _html(text).replace("\n", "  \n")


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# what opens or closes emphasis, code, links, table cells, strikes; an underscore only where it
# can close (not followed by a letter or digit: "__init__()" was bold "init")
_MD_SPECIAL = re.compile(r"([\\`*\[\]|~]|_(?![A-Za-z0-9]))")


def _md_text(text: str) -> str:
    """Text that quotes the analysed code (a finding's message): shown as written, with no
    character of it taken for Markdown or HTML."""
    return _MD_SPECIAL.sub(r"\\\1", _html(text)).replace("\n", "  \n")


def _code(text: str) -> str:
    """``text`` as one inline code span, whatever backticks it holds (CommonMark: a fence longer
    than any run of backticks inside, padded where the text starts or ends with one)."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or (text.startswith(" ") and text.endswith(" ")) else ""
    return f"{fence}{pad}{text}{pad}{fence}"


# ---------------------------------------------------------------------- JUnit
def to_junit(report: Report) -> str:
    """One testcase per analysed test (the passing ones too); a test fails when an error
    finding lists it, and its warnings are its output. Findings that belong to no test
    (import-time and module-level ones) are no test case: they are the suite's output."""
    by_test: Dict[str, List[Finding]] = {}
    orphans: List[Finding] = []
    for f in report.findings:
        if f.tests:
            for t in f.tests:
                by_test.setdefault(t, []).append(f)
        elif f.severity != "note":
            orphans.append(f)
    names = sorted({t["test"] for t in report.inventory if isinstance(t, dict) and "test" in t} | set(by_test))
    cases = [_case(name.split("::", 1)[0], name, by_test.get(name, [])) for name in names]
    failures = sum(1 for c in cases if "<failure" in c)
    body = "\n".join(cases)
    out = "".join(f"{f.path}:{f.line} {f.code} [{f.severity}] {f.message}\n" for f in orphans)
    system_out = f"\n<system-out>{xml_escape(out)}</system-out>" if out else ""
    return (f'<?xml version="1.0" encoding="utf-8"?>\n<testsuites name="hermetic">\n'
            f'<testsuite name="hermetic" tests="{len(cases)}" failures="{failures}" errors="0">\n{body}'
            f'{system_out}\n</testsuite>\n</testsuites>\n')


def _case(classname: str, name: str, findings: List[Finding]) -> str:
    q = {chr(34): "&quot;"}
    fails = "".join(
        f'<failure type="{f.code}" message="{xml_escape(f.message, q)}">'
        f'{xml_escape(f.path)}:{f.line} {xml_escape(f.fix)}</failure>' for f in findings if f.severity == "error")
    warned = "".join(f"{f.path}:{f.line} {f.code} [{f.severity}] {f.message}\n"
                     for f in findings if f.severity != "error")
    out = f"<system-out>{xml_escape(warned)}</system-out>" if warned else ""
    return f'<testcase classname="{xml_escape(classname)}" name="{xml_escape(name, q)}">{fails}{out}</testcase>'
