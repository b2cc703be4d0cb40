"""Where text may be cut: sentence ends, blank lines, line ends and spaces, as cut
positions inside a span, and the separator hierarchies the strategies descend."""

from __future__ import annotations

import re
from collections.abc import Callable

# The sentence rule and the span helper are every stage's; the chunkers cut with them.
from sweep.core.text.sentences import sentence_cuts
from sweep.core.textspans import pieces

__all__ = [
    "PARAGRAPH_LEVELS",
    "RECURSIVE_LEVELS",
    "SENTENCE_LEVELS",
    "Cutter",
    "Span",
    "line_cuts",
    "paragraph_cuts",
    "pieces",
    "sentence_cuts",
    "word_cuts",
]

Span = tuple[int, int]

_NEWLINES = re.compile(r"[ \t]*\n\s*")
_BLANK_LINE = re.compile(r"\n[ \t]*\n\s*")
_WHITESPACE = re.compile(r"\s+")


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
