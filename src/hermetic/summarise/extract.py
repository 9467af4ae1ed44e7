"""Per-file extraction: source bytes -> a small serializable summary.

This is the only module that touches libcst trees. ``summarize`` is a pure function of
its arguments; everything downstream (linking, the interpreter, the rules) works on the
summary it returns, so summaries can be cached and built in worker processes.

Shape of a summary (plain dicts, lists, strings, ints; JSON-serializable):

``{"module": str, "path": str, "is_package": bool, "body": [stmt],
   "functions": {qualname: function}, "classes": {qualname: class},
   "suppressions": {line: [codes] or ["*"]}, "lines": int}``

Expressions and statements are tuples (lists after a JSON round-trip) whose first item
names the form; ``hermetic.summarise.ir`` is their grammar. Positions are
``[line, column, end_line, end_column]``, 1-based lines and 1-based columns.

The work is in the modules beside this one: ``parse`` (bytes -> libcst tree, safely),
``positions`` (node ranges), ``extractor`` (tree -> IR), ``suppressions`` (inline
``# hermetic: ignore``) and ``digests`` (what the caches compare); this module puts a summary
together and re-exports the names other packages import from here.
"""
from __future__ import annotations

from typing import Any, Dict, List, Tuple

from .changed import changed_names, container_constants, is_constant_name
from .codegen import from_codegen
from .digests import body_digest, import_digest, may_name, plain_defs
from .extractor import Extractor
from .parse import SummaryError, folded_names, needs_folding, parse_module, precheck, syntax_message
from .suppressions import SUPPRESS, inline_suppressions

#: what other modules import from here (the summariser's entry points)
__all__ = ["SUMMARY_VERSION", "SummaryError", "import_digest", "may_name", "positions", "summarize"]

SUMMARY_VERSION = 17


def summarize(data: bytes, module: str, path: str, is_package: bool = False) -> Dict[str, Any]:
    """Parse ``data`` (raw file bytes; BOM, CRLF and PEP 263 encodings are honoured).

    ``module`` is the dotted module name the file is imported as (used to resolve
    relative imports and to qualify names); ``path`` is carried through for reports.
    Raises ``SummaryError`` with a one-line reason when the source does not parse.
    """
    import libcst as cst

    amod, refused = precheck(data)
    try:
        # unchecked nodes only where CPython accepted the source: else libcst's checks judge it
        tree = parse_module(cst, data) if amod is not None else cst.parse_module(data)
    except cst.ParserSyntaxError as exc:
        raise SummaryError(syntax_message(exc, refused)) from None
    except (UnicodeDecodeError, LookupError) as exc:
        raise SummaryError(f"cannot decode source: {exc}") from None
    except Exception as exc:  # libcst raises assorted errors on exotic input
        raise SummaryError(f"cannot parse: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from None
    try:
        pos, comments = _positions(tree, amod, data)   # from the source's own spelling
        suppressions = inline_suppressions(comments)
        ex = Extractor(module, is_package, pos, cst)
        if data.isascii() or not needs_folding(tree, data):
            body = ex.block(tree.body, scope=module, cls=None)
        else:
            with folded_names(cst):
                body = ex.block(tree.body, scope=module, cls=None)
    except RecursionError:   # parse workers run with a deep stack; a plain caller may not
        raise SummaryError("too deeply nested to analyse at this recursion limit") from None
    out = {
        "version": SUMMARY_VERSION,
        "module": module,
        "path": path,
        "is_package": is_package,
        "body": body,
        "functions": ex.functions,
        "classes": ex.classes,
        "suppressions": suppressions,
        "spans": ex.spans,
        "lines": data.count(b"\n") + 1,
        "calls": ex.calls,
        "import_digest": import_digest(module, path, is_package, body, ex.functions, ex.classes),
        "plain_defs": sorted(plain_defs(body, ex.functions)),
        "names": sorted(ex.names),
        "changed": sorted(n for n in changed_names([body] + [f["body"] for f in ex.functions.values()]
                                                   + [c["body"] for c in ex.classes.values()]) if is_constant_name(n)),
        "containers": sorted(container_constants(body)),
    }
    for f in ex.functions.values():   # after the import digest, which leaves them out
        f["body_digest"] = body_digest(f)
    return out


def _positions(tree, amod, data: bytes) -> Tuple[Dict[Any, tuple], List[tuple]]:
    """The extractor's node ranges and the module's comments: read off the ``ast`` tree where
    it lines up with libcst's (and no suppression comment needs finding), else from libcst's
    code generation (``hermetic.summarise.positions``)."""
    from . import positions as P   # imports libcst: loaded with the first file summarised, not with this module

    if amod is not None:
        try:
            text = data.decode(tree.encoding)
        except (UnicodeDecodeError, LookupError):
            text = None
        if text is not None and not SUPPRESS.search(text):   # comments come from code generation
            if text.startswith("\ufeff"):
                text = text[1:]
            try:
                return P.from_ast(tree, amod, text), []
            except (P.Mismatch, RecursionError):
                pass
    return P.from_codegen(tree)


def positions(tree) -> Tuple[Dict[Any, tuple], List[tuple]]:
    """Every node's range and the comments of a libcst ``Module`` (``codegen.from_codegen``)."""
    return from_codegen(tree)
