"""Digests and name sets of a summary: what the caches compare a file's versions by.

``import_digest`` hashes what importing the file does, ``body_digest`` what calling one of its
functions does (both over marshal bytes, so equal data gives equal digests); ``plain_defs``
names the top-level functions whose definition only binds a name; ``may_name`` is the cheap
pre-filter over a summary's sorted ``names``.
"""
from __future__ import annotations

import bisect
from typing import Any, Dict

from .ir import DEF_NAME, DEF_QUALNAME, PARAM_DEFAULT, TAG


def may_name(summary: Dict[str, Any], names) -> bool:
    """Whether the file a summary is of may use one of the identifiers ``names`` (as a name, an
    attribute, an import or in a short string): its sorted ``names`` hold one, or it has none
    recorded. A cheap exact pre-filter before a walk that looks for those identifiers."""
    have = summary.get("names")
    if have is None:
        return True
    for name in names:
        i = bisect.bisect_left(have, name)
        if i < len(have) and have[i] == name:
            return True
    return False


def body_digest(f: Dict[str, Any]) -> str:
    """A hash of what running a function does: its def line, parameters and body (the per-test
    result cache compares the functions that ran during collection by it)."""
    import hashlib
    import marshal

    try:
        data = marshal.dumps((f["line"], f["params"], f["body"]), 2)
    except ValueError:
        data = repr((f["line"], f["params"], f["body"])).encode()
    return hashlib.sha256(data).hexdigest()[:16]


def plain_defs(body, functions: Dict[str, Any]) -> Dict[str, str]:
    """The module's top-level functions whose definition does nothing but bind the name: no
    decorator, literal defaults only, defined once. name -> qualname."""
    out = {}
    for st in body:
        if st[TAG] != "def":
            continue
        qualname = st[DEF_QUALNAME]
        f = functions.get(qualname)
        if f is None or f["decorators"] or "@" in qualname:
            continue
        if all(p[PARAM_DEFAULT] is None or p[PARAM_DEFAULT][TAG] == "lit" for p in f["params"]):
            out[st[DEF_NAME]] = qualname
    return out


def import_digest(module: str, path: str, is_package: bool, body, functions: Dict[str, Any],
                  classes: Dict[str, Any]) -> str:
    """A hash of what importing the file does: the summary without the bodies of its functions
    (and without what is defined inside them), and without its plain top-level functions
    (``plain_defs``: defining one only binds its name). Two versions of a file with the same
    digest differ only in what runs when called, not when imported, and in which plain
    functions they define; positions are part of it, so a body that grows or shrinks a line
    changes it for what follows (unless only plain functions follow). The per-test result
    cache (``hermetic.engine.reuse``) keys the state collection leaves by it."""
    import hashlib
    import marshal

    plain = plain_defs(body, functions)
    body = [st for st in body if not (st[TAG] == "def" and st[DEF_NAME] in plain)]
    omit = set(plain.values())
    heads = {qn: {k: v for k, v in f.items() if k not in ("body", "generator", "end_line")}
             for qn, f in functions.items() if ".<locals>." not in qn and qn not in omit
             and not any(qn.startswith(p + ".") for p in omit)}
    local = {qn: c for qn, c in classes.items() if ".<locals>." not in qn}
    try:   # marshal version 2 writes no back-references, so equal data gives equal bytes
        data = marshal.dumps((module, path, is_package, body, heads, local), 2)
    except ValueError:   # nested deeper than marshal goes
        data = repr((module, path, is_package, body, heads, local)).encode()
    return hashlib.sha256(data).hexdigest()[:32]
