"""The base of every error that bad input or setup causes (a user's to fix).

The command line prints such an error as one line (``Error: <Type>: <message>``) and
exits 1, without a traceback; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

__all__ = ["AliasError"]


class AliasError(Exception):
    """Bad input or setup: a missing table, a malformed file, a setting out of range."""
