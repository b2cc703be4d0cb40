"""Where a framework's chunk texts lie in the document they came from.

Splitters return strings, and the offsets some of them offer are not reliable
(LangChain's ``add_start_index`` searches from the previous chunk's start plus
its length minus the overlap, and gives -1 when whitespace stripping moved the
chunk). Span credit needs exact offsets, so sweep finds every returned text in
the document itself. Chunks come in document order: each starts and ends where
or after the previous one does, and is not the same span (an overlap repeats
the previous chunk's tail, never a whole chunk).

Text that repeats (boilerplate, a table of like rows, a log) makes a chunk's
text occur in many places, so the placement takes three passes, each about
linear in the document:

1. from the first chunk on, each at its earliest place after the previous one:
   the pieces that fit in order (a piece that does not is ``unordered``);
2. from the last chunk back, the *latest* place each can have so that every
   later chunk still fits after it (a bound);
3. from the first chunk on, the place where it continues the previous chunk:
   the latest occurrence that starts no later than where the previous chunk
   ended (past whitespace), else the first one after that (a splitter that
   dropped a separator leaves a gap); never past the bound, so no later chunk
   is ever squeezed out. In text that repeats exactly, where a chunk lies is
   ambiguous; its text is the same wherever it is placed.

Searches look near the cursor first and widen, so a document of any size costs
about its length. How a text is matched:

- as returned, then without the whitespace the splitter stripped at its edges;
- by its words with any whitespace between them, when the splitter changed
  whitespace (joined lines, collapsed runs): counted as ``loose``;
- a token splitter that cut a multi-byte character decodes the halves as
  U+FFFD at the chunk's edges: the rest is matched and the span takes the
  whole character;
- a text that is not in the document (a splitter that rewrites text) is never
  guessed: it is reported in ``missing``; one that is in the document but not
  after the chunk before it (a splitter that repeats or reorders chunks) is
  reported in ``unordered``.

The located span's text is the document's own (``doc[start:end]``), so a loose
match credits exactly the characters the chunk covers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Iterator, Sequence

import numpy as np

from sweep.chunking.boundaries import Span
from sweep.core.textspans import strip_span

__all__ = ["Located", "locate_pieces"]

_BROKEN = "\ufffd"  # what a decoder makes of half a UTF-8 character


@dataclass(frozen=True)
class Located:
    """The spans of the pieces that were placed, in order, and what was not."""

    spans: tuple[Span, ...]
    #: pieces found only up to whitespace (the splitter changed spaces or line breaks)
    loose: int
    #: texts of the pieces that are not in the document, in order
    missing: tuple[str, ...]
    #: texts of the pieces that are in the document, but not after the piece before them
    unordered: tuple[str, ...] = ()


class _Squeezed:
    """The document with every whitespace run as one space, and where each of its
    characters is in the document: a text whose whitespace a splitter changed is found
    here by plain search (one compiled pattern per chunk would cost more than the rest)."""

    _RUNS = re.compile(r"\s+")
    _LONG_RUNS = re.compile(r"\s\s+")

    def __init__(self, text: str) -> None:
        self.text = self._RUNS.sub(" ", text)
        keep = np.ones(len(text), dtype=bool)
        for m in self._LONG_RUNS.finditer(text):  # a lone whitespace character stays itself
            keep[m.start() + 1:m.end()] = False
        #: squeezed position -> document position
        self.source = np.flatnonzero(keep)

    def at(self, pos: int) -> int:
        """The squeezed position of the first character at or after document ``pos``."""
        return int(np.searchsorted(self.source, pos))

    def span(self, i: int, n: int) -> Span:
        """The document span of squeezed ``[i, i + n)`` (which starts and ends in a word)."""
        return int(self.source[i]), int(self.source[i + n - 1]) + 1


class _Document:
    def __init__(self, text: str) -> None:
        self.text = text

    @cached_property
    def squeezed(self) -> _Squeezed:
        return _Squeezed(self.text)


class _Needle:
    """One piece as it is searched for: exactly as returned, then without edge
    whitespace (its ``forms``), then by its words with any whitespace between them
    (``LOOSE``). A piece with U+FFFD at an edge is searched for without it."""

    LOOSE = -1

    def __init__(self, piece: str) -> None:
        stripped = piece.strip()
        self.lead = stripped.startswith(_BROKEN)
        self.trail = stripped.endswith(_BROKEN)
        core = stripped.strip(_BROKEN)
        self.empty = not core.strip()
        self.forms = [core] if self.lead or self.trail or piece == stripped else [piece, stripped]

    @cached_property
    def words(self) -> str:
        """The piece's words joined by one space, as the squeezed document has them."""
        return " ".join(self.forms[-1].split())

    def loose(self, doc: _Document, lo: int, hi: int) -> Iterator[Span]:
        """Matches by words that start at or after ``lo`` and end by ``hi``, in order."""
        sq = doc.squeezed
        n = len(self.words)
        end = sq.at(hi)
        i = sq.text.find(self.words, sq.at(lo), end)
        while i != -1:
            yield sq.span(i, n)
            i = sq.text.find(self.words, i + 1, end)

    def loose_last(self, doc: _Document, lo: int, below: Span) -> Span | None:
        """The latest match by words within ``[lo, below's end)`` that ``below`` can follow."""
        sq = doc.squeezed
        n = len(self.words)
        start, end = sq.at(lo), sq.at(below[1])
        while True:
            i = sq.text.rfind(self.words, start, end)
            if i == -1:
                return None
            span = sq.span(i, n)
            if span[0] <= below[0] and span != below:
                return span
            end = i + n - 1

    def last(self, doc: _Document, below: Span) -> tuple[Span, int] | None:
        """The latest occurrence that ``below`` can follow (starting and ending by
        ``below``'s start and end, not ``below`` itself), and the form found; the search
        widens back from ``below``'s start."""
        text = doc.text
        width = 2 * len(self.forms[-1]) + 256
        while True:
            lo = max(0, below[0] - width)
            for form, needle in enumerate(self.forms):
                n = len(needle)
                hi = min(below[1], below[0] + n)
                i = text.rfind(needle, lo, hi)
                if i != -1 and (i, i + n) == below:
                    i = text.rfind(needle, lo, hi - 1)
                if i != -1:
                    return (i, i + n), form
            found = self.loose_last(doc, lo, below)
            if found is not None:
                return found, self.LOOSE
            if lo == 0:
                return None
            width *= 2

    def first(self, doc: _Document, after: Span) -> tuple[Span, int] | None:
        """The earliest occurrence that can follow ``after`` (starting and ending where or
        after it does, not ``after`` itself), and the form found; the search widens
        forward from ``after``'s end."""
        text = doc.text
        width = 2 * len(self.forms[0]) + 256
        while True:
            hi = min(len(text), after[1] + width)
            for form, needle in enumerate(self.forms):
                n = len(needle)
                lo = max(after[0], after[1] - n, 0)
                i = text.find(needle, lo, hi)
                if i != -1 and (i, i + n) == after:
                    i = text.find(needle, lo + 1, hi)
                if i != -1:
                    return (i, i + n), form
            for span in self.loose(doc, max(after[0], 0), hi):
                if span[1] >= after[1] and span != after:
                    return span, self.LOOSE
            if hi == len(text):
                return None
            width *= 2

    def anywhere(self, doc: _Document) -> bool:
        return self.forms[-1] in doc.text or self.words in doc.squeezed.text

    def next(self, doc: _Document, prev: Span, limit: int, bound: Span, form: int) -> Span:
        """Where the piece continues the chunk at ``prev``: the latest occurrence (in the
        form its bound was found in) that starts by ``limit``, else the first after it;
        never past ``bound`` (itself an occurrence that fits)."""
        text = doc.text
        lo = max(prev[0], 0)
        if form != self.LOOSE:
            needle = self.forms[form]
            n = len(needle)
            i = text.rfind(needle, lo, min(limit, bound[0]) + n)
            if i != -1 and i + n >= prev[1] and (i, i + n) != prev:
                return i, i + n
            i = text.find(needle, limit + 1, bound[1])
            return (i, i + n) if i != -1 else bound
        within = None
        for start, end in self.loose(doc, lo, bound[1]):
            if end < prev[1] or (start, end) == prev or start > bound[0]:
                continue
            if start > limit:
                return within or (start, end)
            within = (start, end)
        return within or bound

    def widen(self, text: str, span: Span) -> Span:
        """``span`` with the characters whose halves the piece showed as U+FFFD."""
        start, end = span
        if self.lead:
            j = start
            while j > 0 and text[j - 1].isspace():
                j -= 1
            if j > 0 and not text[j - 1].isascii():
                start = j - 1
        if self.trail:
            j = end
            while j < len(text) and text[j].isspace():
                j += 1
            if j < len(text) and not text[j].isascii():
                end = j + 1
        return start, end


def _limit(text: str, end: int) -> int:
    """Where a chunk ending at ``end`` is continued at the latest: past whitespace."""
    while end < len(text) and text[end].isspace():
        end += 1
    return end


def locate_pieces(text: str, pieces: Sequence[str]) -> Located:
    """Find every piece in ``text``; pieces that are empty, only whitespace or only a
    broken character are skipped. See the module's docstring for how."""
    needles = [(p, _Needle(p)) for p in pieces]
    needles = [(p, n) for p, n in needles if not n.empty]
    doc = _Document(text)

    # 1. which pieces fit in order: each at its first place after the previous one
    earliest: list[tuple[Span, int] | None] = []
    after: Span = (-1, 0)
    for _, needle in needles:
        earliest.append(needle.first(doc, after))
        if earliest[-1] is not None:
            after = earliest[-1][0]

    # 2. from the end: the latest place of each of them that leaves room for the rest
    bounds: list[tuple[Span, int] | None] = [None] * len(needles)
    below: Span = (len(text), len(text) + 1)  # a sentinel every piece can precede
    for k in range(len(needles) - 1, -1, -1):
        if earliest[k] is not None:
            # the earliest place is a fallback the search cannot miss
            bounds[k] = needles[k][1].last(doc, below) or earliest[k]
            below = bounds[k][0]

    # 3. from the start: each piece where it continues the previous one
    spans: list[Span] = []
    missing: list[str] = []
    unordered: list[str] = []
    loose = 0
    prev: Span = (-1, 0)
    last_start = 0
    for (piece, needle), bound in zip(needles, bounds):
        if bound is None:
            (unordered if needle.anywhere(doc) else missing).append(piece)
            continue
        span = needle.next(doc, prev, _limit(text, prev[1]), bound[0], bound[1])
        prev = span
        loose += bound[1] == needle.LOOSE
        start, end = strip_span(text, *needle.widen(text, span))
        last_start = max(last_start, start)  # a widened start never goes before the last
        spans.append((last_start, end))
    return Located(tuple(spans), loose, tuple(missing), tuple(unordered))
