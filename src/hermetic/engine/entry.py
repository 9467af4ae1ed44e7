"""The per-test result cache's entry as bytes (``hermetic.engine.reuse`` says what it holds).

``dumps`` writes ``_MAGIC``, the lengths of the head and of each part, then the head and the
parts (``_PARTS``: the tests' results, the HT201 sweep's, the rules' outcome), each a compressed
pickle; ``loads`` reads the head only and ``part`` a part when it is asked for. Only this
package's classes and plain containers are unpickled (``_Loader``), so an entry restored from
elsewhere cannot run code; a damaged or foreign entry loads as None.

Its own module so that the summary cache (``cache``), which stores the bytes, and the reuse
logic (``reuse``), which makes and reads the entries, both import it and not each other.
"""
from __future__ import annotations

import hashlib
import io
import pickle
import zlib
from typing import Any, Optional

ANALYSIS_VERSION = 19   # bumped whenever the analysis of the same files can give other results
_MAGIC = b"HTA5"


class _Loader(pickle.Unpickler):
    """Loads this package's classes and plain containers only."""

    _BUILTINS = {"set", "frozenset", "tuple", "list", "dict"}

    def find_class(self, module: str, name: str):
        if module == "builtins" and name in self._BUILTINS:
            return super().find_class(module, name)
        if module.startswith("hermetic.") and not name.startswith("_"):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} is not allowed in an analysis entry")


# the parts of an entry written as blobs of their own, in this order, and loaded when asked for
# (``part``): a run that analyses nothing again reads none of the tests' results
_PARTS = ("tests", "sweep", "outcome")


def blob(obj) -> bytes:
    """``obj`` as an entry part is stored (a compressed pickle)."""
    return zlib.compress(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL), 1)


def dumps(entry: dict) -> bytes:
    """``_MAGIC``, the lengths of the head and of each part of ``_PARTS`` (8 bytes each), then
    the head (every key but the parts) and the parts, each a compressed pickle. A part that is
    None carries the blob of the entry it was loaded from (``"_blobs"``) and is written as it
    was: a run that reused every test's result does not pickle them again."""
    head = {k: v for k, v in entry.items() if k not in _PARTS and k != "_blobs"}
    head_blob = blob(head)
    blobs = [entry["_blobs"][k] if entry.get(k) is None else blob(entry[k]) for k in _PARTS]
    return (_MAGIC + b"".join(len(b).to_bytes(8, "big") for b in [head_blob] + blobs)
            + head_blob + b"".join(blobs))


def loads(data: bytes) -> Optional[dict]:
    """The head of the entry ``dumps`` wrote, with its parts' blobs as ``"_blobs"`` (part ->
    bytes; ``part`` loads one), or None for anything else."""
    at = len(_MAGIC) + 8 * (1 + len(_PARTS))
    if not data.startswith(_MAGIC) or len(data) < at:
        return None
    ends, end = [], at
    for i in range(1 + len(_PARTS)):
        end += int.from_bytes(data[len(_MAGIC) + 8 * i:len(_MAGIC) + 8 * (i + 1)], "big")
        ends.append(end)
    if end != len(data):
        return None
    try:
        entry = _Loader(io.BytesIO(zlib.decompress(data[at:ends[0]]))).load()
    except Exception:   # damaged, foreign or from another version of the classes: run again
        return None
    if not isinstance(entry, dict) or entry.get("version") != ANALYSIS_VERSION:
        return None
    entry["_blobs"] = {k: data[ends[i]:ends[i + 1]] for i, k in enumerate(_PARTS)}
    if not all(isinstance(entry.get(k), t) for k, t in (("digest", str), ("keys", dict), ("collection", dict),
                                                         ("plain", dict))):
        return None
    return entry


def part(entry: dict, name: str) -> Optional[dict]:
    """The part ``name`` of a loaded entry, loaded now if it was not; None where its blob is
    damaged (and for an outcome an entry holds none of)."""
    if name not in entry:
        try:
            value = _Loader(io.BytesIO(zlib.decompress(entry["_blobs"][name]))).load()
        except Exception:
            value = None
        entry[name] = value if isinstance(value, dict) else None
    return entry[name]


def scope_key(*parts: Any) -> str:
    """A stable name for the configuration a run analyses under (the entry's file name)."""
    return hashlib.sha256(repr(("analysis", ANALYSIS_VERSION) + tuple(parts)).encode()).hexdigest()[:40]
