"""Character spans of a text: the helpers every stage that places text by offsets shares."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["pieces", "strip_span"]


def strip_span(text: str, start: int, end: int) -> tuple[int, int]:
    """``(start, end)`` moved inward past whitespace at either edge of ``text[start:end]``."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def pieces(a: int, b: int, cuts: Sequence[int]) -> list[tuple[int, int]]:
    """The non-empty spans between ``a``, the ``cuts`` and ``b``."""
    bounds = [a, *cuts, b]
    return [(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1) if bounds[i] < bounds[i + 1]]
