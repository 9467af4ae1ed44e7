"""HT201, HT202 and HT205: values bound at import that a test's patch cannot reach.

Facts in (``Facts``): the file sinks the HT201 sweep and the imports reach (their targets'
origins name the module constants they were computed from), and each test's patch escapes
(a redirected base whose import-time derivatives it still uses) and misses (a patch of a
name the code looks up through its own binding, a clock bound before the freeze). Out:
HT201 per module constant, HT202 and HT205 per patch statement, with ready-to-paste fixes.
"""
from __future__ import annotations

from typing import Dict, List

from ..analyse import interp as I
from ..analyse.origins import computed_constant
from ..analyse.values import Origin
from ..report.model import Finding
from ..report.origin import source_words
from ..summarise.ir import ATTR_ATTR, CALL_ARGS, CALL_FUNC, LIT_VALUE, TAG
from ..summarise import unparse as hints
from .facts import Facts
from .registry import severity


def ht2_findings(facts: Facts) -> List[Finding]:
    """HT201 (path constants computed at import and written through, or derived from the
    home folder / environment / working directory and read), HT202 (a redirected base
    whose import-time derivatives a test still uses), HT205 (patches that miss)."""
    runs, sweep_events, import_events, ip = facts.runs, facts.sweep_events, facts.import_events, facts.ip
    out: List[Finding] = []
    summaries = ip.p.summaries
    # -- HT201
    usage: Dict[tuple, dict] = {}
    consumers: Dict[tuple, set] = {}
    for ev in list(sweep_events) + [e for e in import_events if e.category == "file"]:
        for o in ev.targets:
            for c in constants_of(o):
                if not computed_constant(c):
                    continue   # an entry of the constant that is a literal (a URL in a dict of paths)
                key = (c.path, c.line, c.expr)
                u = usage.setdefault(key, {"origin": c, "write": False, "read": False})
                u["write"] = u["write"] or ev.write
                u["read"] = u["read"] or not ev.write
                consumers.setdefault(key, set()).add((ev.path, ev.pos))
    tests_at: Dict[tuple, set] = {}     # a site -> the tests whose target there is not known
    redirected = {run.item.node_id: run.redirects for run in runs}
    tests_with: Dict[tuple, set] = {}   # constant -> the tests whose own target there was built from it
    for run in runs:
        for ev in run.events:
            if ev.category == "file":
                if not ev.targets or any(o.kind == "unknown" for o in ev.targets):
                    tests_at.setdefault((ev.path, ev.pos), set()).add(run.item.node_id)
                for o in ev.targets:
                    for c in constants_of(o):
                        if computed_constant(c):
                            tests_with.setdefault((c.path, c.line, c.expr), set()).add(run.item.node_id)
    for key, u in sorted(usage.items(), key=lambda kv: (kv[0][0] or "", kv[0][1] or 0, kv[0][2])):
        c: Origin = u["origin"]
        if c.module is None:
            continue  # class attributes: not module-level (docs/limits.md)
        leaves = {b.kind for b in I.origin_bases(c)}
        external = leaves & {"home", "environment", "cwd"}
        if not (u["write"] or external):
            continue
        # the tests whose values take the constant there; where none does in its own run (the
        # sweep reached the site apart from any test), every test that reaches the site with a
        # target it does not know, unless it put its own value in the constant (a patch, a setitem)
        tests = sorted(tests_with.get(key) or {t for p in consumers.get(key, ()) for t in tests_at.get(p, ())
                                               if (c.module, c.expr) not in redirected.get(t, ())})
        base = _describe_base(c)
        what = "written through" if u["write"] else "read"
        msg = f"{c.expr} is a path computed at import from {base} and {what}; a test cannot redirect it " \
              f"by patching what it was computed from"
        fix = (f"compute the path at call time (a function returning it), or have every test that reaches it "
               f"monkeypatch.setattr the module's {c.expr} itself")
        out.append(Finding("HT201", severity("HT201"), c.path, c.line, 1, c.line, 1 + len(c.expr), msg, tests, [],
                           {"kind": "module-constant", "path": c.path, "line": c.line, "expression": c.expr,
                            **({"derived_from": sorted(leaves)[0]} if leaves else {})},
                           fix=fix, anchor=c.expr))
    # -- HT202: one per patch statement
    by_site: Dict[tuple, dict] = {}
    for run in runs:
        for site, base, derived, spath, spos in run.escapes:
            e = by_site.setdefault(site, {"bases": {}, "derived": {}, "tests": set(), "sinks": set()})
            e["bases"][(base.kind, base.expr, base.module)] = base
            e["derived"][(derived.path, derived.line, derived.expr)] = derived
            e["tests"].add(run.item.node_id)
            e["sinks"].add((spath, spos))
    for site, e in sorted(by_site.items()):
        path, pos = site
        names = sorted({d.expr for d in e["derived"].values()})
        bases = sorted({("HOME" if b.kind == "home" else b.expr) for b in e["bases"].values()})
        lines = _ht202_hint(site, e, summaries, hints)
        msg = (f"redirects {', '.join(bases)}, but code this test reaches uses {', '.join(names)}, derived from it "
               f"at import, which still point{'s' if len(names) == 1 else ''} at the original")
        fix = "also redirect the derived bindings:\n" + "\n".join(lines) + "\n" + _call_time_shape(e, summaries, hints)
        out.append(Finding("HT202", severity("HT202"), path, pos[0], pos[1], pos[2], pos[3], msg,
                           sorted(e["tests"]), [], None, fix=fix, function="<patch>",
                           anchor=f"patch({', '.join(bases)})"))
    # -- HT205: one per patch statement
    by_site2: Dict[tuple, dict] = {}
    for run in runs:
        for site, patched, binding, kind, undecided in run.misses:
            e = by_site2.setdefault(site, {"items": set(), "tests": set(), "high": False})
            e["items"].add((patched, binding, kind))
            e["tests"].add(run.item.node_id)
            e["high"] = e["high"] or not undecided
    for site, e in sorted(by_site2.items()):
        path, pos = site
        items = sorted(e["items"])
        if all(k == "binding" for _, _, k in items):
            bindings = sorted({b for _, b, _ in items})
            patched = sorted({p for p, _, _ in items})
            msg = (f"patches {', '.join(patched)}, but the code this test reaches looks it up as "
                   f"{', '.join(bindings)} (its own `from ... import` binding), which keeps the original")
            fix = "patch where it is looked up: " + ", ".join(f'patch("{b}")' for b in bindings)
        else:
            what = sorted({b for _, b, _ in items})
            msg = f"freezes the clock, but {', '.join(what)} {'was' if len(what) == 1 else 'were'} bound before " \
                  f"the freeze and still read{'s' if len(what) == 1 else ''} the real clock"
            fix = "compute the value at call time: a default of None, or call the clock function directly"
        f = Finding("HT205", severity("HT205"), path, pos[0], pos[1], pos[2], pos[3], msg,
                    sorted(e["tests"]), [], None, fix=fix, function="<patch>",
                    anchor="; ".join(f"{p}->{b}" for p, b, _ in items))
        # the missed binding reached only past branches the test's values do not decide
        f.confidence = "high" if e["high"] else "medium"
        out.append(f)
    return out


def _call_time_shape(e, summaries, hints) -> str:
    d = sorted(e["derived"].values(), key=lambda x: (x.module or "", x.line or 0))[0]
    s = summaries.get(d.module or "")
    expr = hints.module_binding(s, d.expr) if s is not None else None
    body = hints.unparse(expr) if expr is not None else "..."
    return f"or compute it at call time: `def {d.expr.lower()}(): return {body}`"


def constants_of(o: Origin):
    """``o`` and every module constant it was derived from."""
    out = []
    todo = [o]
    seen = set()
    while todo:
        x = todo.pop()
        if x in seen:
            continue
        seen.add(x)
        if x.kind == "module-constant":
            out.append(x)
            todo.extend(x.inner)
    return out


def _describe_base(c: Origin) -> str:
    parts = {w for w in map(source_words, c.inner) if w is not None}
    return ", ".join(sorted(parts)) or "other values"


def _ht202_hint(site, e, summaries, hints) -> List[str]:
    """Ready-to-paste monkeypatch lines: every derived binding, valued from the test's own
    replacement of the base."""
    path, pos = site
    call = None
    for s in summaries.values():
        if s["path"] == path:
            call = hints.find_call(s, pos)
            if call is not None:
                break
    subst: Dict = {}
    if call is not None:
        args = call[CALL_ARGS]
        fname = call[CALL_FUNC][ATTR_ATTR] if call[CALL_FUNC][TAG] == "attr" else ""
        if fname == "setenv" and len(args) >= 2 and args[0][TAG] == "lit":
            subst[("env", args[0][LIT_VALUE])] = hints.unparse(args[1])
        elif fname == "setattr" and len(args) >= 3 and args[1][TAG] == "lit":
            subst[args[1][LIT_VALUE]] = hints.unparse(args[2])
        elif fname == "setattr" and len(args) == 2 and args[0][TAG] == "lit":
            subst[args[0][LIT_VALUE].rsplit(".", 1)[-1]] = hints.unparse(args[1])
    lines = []
    derived = sorted(e["derived"].values(), key=lambda d: (d.module or "", d.line or 0))
    # intermediate constants between the base and each derived one, in binding order
    chain: Dict[tuple, Origin] = {}
    base_keys = {(b.expr, b.module) for b in e["bases"].values()}
    for d in derived:
        for c in constants_of(d):
            if (c.expr, c.module) not in base_keys and any(
                    (b.expr, b.module) in base_keys or b.kind == "environment" for b in I.origin_bases(c)):
                chain[(c.module or "", c.line or 0, c.expr)] = c
    for key in sorted(chain):
        c = chain[key]
        s = summaries.get(c.module or "")
        expr = hints.module_binding(s, c.expr) if s is not None else None
        value = hints.unparse(expr, subst) if expr is not None else "..."
        subst[c.expr] = value
        lines.append(f'monkeypatch.setattr("{c.module}.{c.expr}", {value})')
    return lines
