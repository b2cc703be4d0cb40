"""The closest valid name to a mistyped one, for "did you mean ...?" in error messages."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["closest", "did_you_mean"]


def closest(given: str, valid: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The valid name most like ``given`` (case aside), or None when none is as close as
    ``cutoff`` (difflib's similarity ratio)."""
    names = list(valid)
    by_lower = {n.lower(): n for n in names}
    found = difflib.get_close_matches(str(given).lower(), list(by_lower), n=1, cutoff=cutoff)
    return by_lower[found[0]] if found else None


def did_you_mean(given: str, valid: Iterable[str], cutoff: float = 0.6) -> str:
    """``" (did you mean 'size'?)"``, or ``""`` when no valid name is close."""
    match = closest(given, valid, cutoff)
    return f" (did you mean {match!r}?)" if match is not None else ""
