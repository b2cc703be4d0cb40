"""Where a sentence ends: the one rule of sweep, its marks held as data.

The chunkers cut at these ends (:func:`sentence_cuts`), the health columns ask whether a
chunk stops at one (:meth:`SentenceEnds.ends_whole`), the evidence tool cuts long
passages and proposals' sentences at them. A language with marks of its own gets a
:class:`SentenceEnds` of its own (``SentenceEnds(stops=".!?…।")``); :data:`SENTENCE_ENDS`
is the rule every stage uses today.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["SENTENCE_ENDS", "SentenceEnds", "sentence_cuts"]


def _chars(marks: str) -> str:
    """``marks`` as the inside of a regex character class."""
    return "".join(re.escape(c) for c in marks)


@dataclass(frozen=True)
class SentenceEnds:
    """The marks that end a sentence, and the three questions asked of them.

    A *spaced* stop (``stops``) ends a sentence when whitespace (``gaps``) follows it and
    the next character is no lowercase letter ("e.g. the" is no end); a *full* stop
    (``full_stops``, the CJK ones) ends one with or without a space after it. Closing
    quotes and brackets after a stop belong to the sentence it ends. ``clause_ends`` end a
    line's thought (a lead-in: "Steps:") but not a sentence inside a line.
    """

    stops: str = ".!?…"
    closers: str = "\"'”’»)]"
    gaps: str = " \t\u00a0\u3000"
    full_stops: str = "。！？"
    full_closers: str = "」』”’）)"
    full_gaps: str = " \t\u3000"
    clause_ends: str = ":;"
    full_clause_ends: str = "：；"
    # What may close a finished sentence at a line's end. It lacks "»" (the chunkers never
    # counted it there, and their cuts are what every score was measured with).
    line_closers: str = "\"'”’)]"
    # Marks a chunk's text may end with after its sentence: Markdown emphasis and code.
    markup_closers: str = "*_`"
    _spaced: re.Pattern[str] = field(init=False, repr=False, compare=False)
    _full: re.Pattern[str] = field(init=False, repr=False, compare=False)
    _line_end: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Patterns built once from the marks (a frozen instance: set past __setattr__).
        set_ = object.__setattr__
        set_(
            self,
            "_spaced",
            re.compile(f"[{_chars(self.stops)}]+[{_chars(self.closers)}]*[{_chars(self.gaps)}]+"),
        )
        set_(
            self,
            "_full",
            re.compile(
                f"[{_chars(self.full_stops)}]+[{_chars(self.full_closers)}]*[{_chars(self.full_gaps)}]*"
            ),
        )
        set_(
            self,
            "_line_end",
            re.compile(
                f"[{_chars(self.stops + self.clause_ends + self.full_stops)}]"
                f"[{_chars(self.line_closers)}]*[ \t]*$"
            ),
        )

    def ends(self, text: str, a: int, b: int) -> list[int]:
        """Positions strictly inside ``(a, b)`` just after a sentence end and the spaces
        after it, in order. A spaced stop followed by a line break is no end here: where a
        line ends is :func:`sentence_cuts`' business."""
        cuts: list[int] = []
        for m in self._spaced.finditer(text, a, b):
            e = m.end()
            if e < b and not text[e].islower() and not text[e].isspace():
                cuts.append(e)
        cuts.extend(m.end() for m in self._full.finditer(text, a, b) if m.end() < b)
        return sorted(set(cuts))

    def ends_line(self, line: str) -> bool:
        """Whether ``line`` (without its line break) ends with a finished sentence or a
        lead-in, so a line break after it is a place to cut."""
        return self._line_end.search(line) is not None

    def ends_whole(self, text: str) -> bool:
        """Whether ``text`` ends with a sentence or clause end, closing quotes, brackets
        and Markdown emphasis after it allowed."""
        marks = self.closers + self.full_closers + self.markup_closers
        last = text.rstrip().rstrip(marks)
        ends = self.stops + self.clause_ends + self.full_stops + self.full_clause_ends
        return bool(last) and last[-1] in ends


#: The rule every stage uses.
SENTENCE_ENDS = SentenceEnds()

_NEWLINES = re.compile(r"[ \t]*\n\s*")
# A line that starts a Markdown block: heading, list item, quote, table row, fence.
_BLOCK_START = re.compile(r"[ \t]*(?:#{1,6}\s|[-*+]\s|\d{1,3}[.)]\s|>|\||```|~~~)")
_HEADING_OR_ROW = re.compile(r"[ \t]*(?:#{1,6}\s|\|)")


def sentence_cuts(text: str, a: int, b: int, rule: SentenceEnds = SENTENCE_ENDS) -> list[int]:
    """Cut positions strictly inside ``(a, b)`` at sentence and line-block ends."""
    cuts = rule.ends(text, a, b)
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
            or rule.ends_line(prev_line)
            or _HEADING_OR_ROW.match(prev_line)
        ):
            cuts.append(e)
    return sorted(set(cuts))
