"""Exclude patterns: gitignore syntax, matched with ``pathspec``.

Its own module because both sides use it: ``config`` checks the patterns it reads, and
``discover.project`` (which reads ``config``'s settings) matches files against them.
"""
from __future__ import annotations

from typing import List


def gitignore_spec(patterns: List[str]):
    """``patterns`` (gitignore syntax) as one ``pathspec.PathSpec``; raises pathspec's error for
    a pattern the syntax does not allow (``config`` turns that into a ConfigError)."""
    import warnings

    import pathspec   # here: only a configuration with exclude patterns pays for its import

    with warnings.catch_warnings():   # newer pathspec calls the "gitwildmatch" name deprecated
        warnings.simplefilter("ignore", DeprecationWarning)
        return pathspec.PathSpec.from_lines("gitwildmatch", patterns)
