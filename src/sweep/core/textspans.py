"""Character spans of a text: the one helper every stage that places text by offsets shares."""

from __future__ import annotations

__all__ = ["strip_span"]


def strip_span(text: str, start: int, end: int) -> tuple[int, int]:
    """``(start, end)`` moved inward past whitespace at either edge of ``text[start:end]``."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end
