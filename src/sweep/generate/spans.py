"""Find a model's quote in the document it came from, as exact character offsets.

Models copy quotes imperfectly: line breaks become spaces, capitals change,
typographic quotes become straight ones, Markdown emphasis disappears. An
exact match is tried first; then a match of the normalised quote in the
normalised text, mapped back to offsets of the original text, so the stored
quote is always ``text[start:end]``. Normalising folds case (``casefold``: "ß" is
"ss"), collapses runs
of whitespace, maps curly quotes and dashes to ASCII, and drops ``*`` and
backticks. No other fuzziness: a quote that is not in the text, as written,
is not found.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["SpanMatch", "match_span", "normalize"]

_FOLD = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u2032": "'",
        "\u2013": "-",
        "\u2014": "-",
        "\u2212": "-",
        "\u2011": "-",
    }
)
_DROPPED = frozenset("*`")


@dataclass(frozen=True, slots=True)
class SpanMatch:
    start: int
    end: int
    exact: bool  # False: found by the normalised match


def _normalized_with_map(text: str) -> tuple[str, list[int]]:
    """The normalised text and, per normalised character, the index it came from."""
    chars: list[str] = []
    where: list[int] = []
    pending_space = -1
    for i, c in enumerate(text):
        if c.isspace():
            if pending_space < 0:
                pending_space = i
            continue
        if c in _DROPPED:
            continue
        if pending_space >= 0:
            if chars:
                chars.append(" ")
                where.append(pending_space)
            pending_space = -1
        # Case folded one character at a time: a character that folds to two ("İ", "ß")
        # maps both back to itself, so offsets stay exact.
        for folded in c.translate(_FOLD).casefold():
            chars.append(folded)
            where.append(i)
    return "".join(chars), where


def normalize(text: str) -> str:
    """What the normalised match compares: folded case, single spaces, no emphasis marks."""
    return _normalized_with_map(text)[0]


def _find(text: str, quote: str, lo: int, hi: int) -> SpanMatch | None:
    at = text.find(quote, lo, hi)
    if at >= 0:
        return SpanMatch(at, at + len(quote), exact=True)
    needle = normalize(quote)
    if not needle:
        return None
    norm, where = _normalized_with_map(text[lo:hi])
    for m in re.finditer(re.escape(needle), norm):
        start = lo + where[m.start()]
        end = lo + where[m.end() - 1] + 1
        # One source character may fold to two (e.g. "İ"); a match that starts
        # or ends inside such a character does not map back, so check.
        if normalize(text[start:end]) == needle:
            return SpanMatch(start, end, exact=False)
    return None


def match_span(
    quote: str, text: str, lo: int = 0, hi: int | None = None, *, anywhere: bool = True
) -> SpanMatch | None:
    """Offsets of ``quote`` in ``text``, preferring ``text[lo:hi]`` (the passage it was
    quoted from) over the rest of the document (only searched when ``anywhere``);
    None when it is not found."""
    quote = quote.strip()
    if not quote:
        return None
    hi = len(text) if hi is None else hi
    found = _find(text, quote, lo, hi)
    if found is None and anywhere and (lo > 0 or hi < len(text)):
        found = _find(text, quote, 0, len(text))
    return found
