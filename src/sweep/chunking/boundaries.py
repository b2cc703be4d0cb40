"""Where text may be cut: sentence ends, blank lines, line ends and spaces, as cut
positions inside a span, and the separator hierarchies the strategies descend."""

from __future__ import annotations

import re
from typing import Callable, Sequence

__all__ = ["Cutter", "PARAGRAPH_LEVELS", "RECURSIVE_LEVELS", "SENTENCE_LEVELS", "Span",
           "line_cuts", "paragraph_cuts", "pieces", "sentence_cuts", "word_cuts"]

Span = tuple[int, int]

# Cut after sentence punctuation and the spaces that follow it; a following
# lowercase letter vetoes the cut (abbreviations: "e.g. the").
_SENTENCE_END = re.compile(r"[.!?…]+[\"'”’»)\]]*[ \t\u00a0\u3000]+")
# CJK full stops need no space after them.
_CJK_END = re.compile(r"[。！？]+[」』”’）)]*[ \t\u3000]*")
_NEWLINES = re.compile(r"[ \t]*\n\s*")
_BLANK_LINE = re.compile(r"\n[ \t]*\n\s*")
_WHITESPACE = re.compile(r"\s+")
# A line that starts a Markdown block: heading, list item, quote, table row, fence.
_BLOCK_START = re.compile(r"[ \t]*(?:#{1,6}\s|[-*+]\s|\d{1,3}[.)]\s|>|\||```|~~~)")
_LINE_END_PUNCT = re.compile(r"[.!?:;…。！？]['\"”’)\]]*[ \t]*$")
_HEADING_OR_ROW = re.compile(r"[ \t]*(?:#{1,6}\s|\|)")


def sentence_cuts(text: str, a: int, b: int) -> list[int]:
    """Cut positions strictly inside ``(a, b)`` at sentence and line-block ends."""
    cuts: list[int] = []
    for m in _SENTENCE_END.finditer(text, a, b):
        e = m.end()
        # A newline after the stop is left to the line rule below.
        if e < b and not text[e].islower() and not text[e].isspace():
            cuts.append(e)
    for m in _CJK_END.finditer(text, a, b):
        if m.end() < b:
            cuts.append(m.end())
    for m in _NEWLINES.finditer(text, a, b):
        e = m.end()
        if e >= b:
            continue
        if m.group().count("\n") >= 2:
            cuts.append(e)
            continue
        # One newline: a cut between Markdown blocks or after a finished
        # sentence, not inside hard-wrapped prose.
        line_start = text.rfind("\n", a, m.start()) + 1
        line_start = max(line_start, a)
        prev_line = text[line_start : m.start()]
        if (
            _BLOCK_START.match(text, e)
            or _LINE_END_PUNCT.search(prev_line)
            or _HEADING_OR_ROW.match(prev_line)
        ):
            cuts.append(e)
    return sorted(set(cuts))


def _regex_cuts(pattern: re.Pattern[str]) -> Callable[[str, int, int], list[int]]:
    def cuts(text: str, a: int, b: int) -> list[int]:
        return [m.end() for m in pattern.finditer(text, a, b) if a < m.end() < b]

    return cuts


paragraph_cuts = _regex_cuts(_BLANK_LINE)
line_cuts = _regex_cuts(_NEWLINES)
word_cuts = _regex_cuts(_WHITESPACE)

Cutter = Callable[[str, int, int], list[int]]
# Separator hierarchies; a piece still too long after the last level is cut
# into token windows.
RECURSIVE_LEVELS: tuple[Cutter, ...] = (paragraph_cuts, line_cuts, sentence_cuts, word_cuts)
PARAGRAPH_LEVELS: tuple[Cutter, ...] = (paragraph_cuts, sentence_cuts, word_cuts)
SENTENCE_LEVELS: tuple[Cutter, ...] = (word_cuts,)


def pieces(a: int, b: int, cuts: Sequence[int]) -> list[Span]:
    """The non-empty spans between ``a``, the ``cuts`` and ``b``."""
    bounds = [a, *cuts, b]
    return [(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1) if bounds[i] < bounds[i + 1]]
