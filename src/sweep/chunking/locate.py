"""Where a framework's chunk texts lie in the document they came from.

Splitters return strings, and the offsets some of them offer are not reliable
(LangChain's ``add_start_index`` searches from the previous chunk's start plus
its length minus the overlap, and gives -1 when whitespace stripping moved the
chunk). Span credit needs exact offsets, so sweep finds every returned text in
the document itself.

A chunk's place is a span of the document without whitespace at its edges.
Chunks come in document order: each starts and ends where or after the previous
one does. Two chunks may share a place: a token splitter with a large overlap
returns windows that differ only in edge whitespace or in halves of a
character, and LangChain's character splitters sometimes return one chunk
twice. A text returned twice in a row is placed twice in one place only when
no other place fits: in text that repeats, the second copy is the next
occurrence.

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
about its length. A text is matched by its words, with any run of whitespace
standing for any other (the search runs on a copy of the document with every
run squeezed to one space), so a splitter that stripped, joined or collapsed
whitespace is matched too; a match whose whitespace differs from the text's is
counted as ``loose``. A token splitter that cut a multi-byte character decodes
the halves as U+FFFD at the chunk's edges: when the text is not in the document
as returned, it is matched without them, and the place takes the character
that was cut (a piece of nothing but halves has no place of its own and is
skipped). A text that is not in the document (a splitter that rewrites
text) is never guessed: it is reported in ``missing``; one that is in the
document but not after the chunk before it (a splitter that repeats or
reorders chunks) is reported in ``unordered``. Where a splitter says where a
chunk starts (chonkie's ``start_index``) and the chunk is there, that place is
taken: offsets from a splitter are checked, never trusted blindly.

The located span's text is the document's own (``doc[start:end]``), so a loose
match credits exactly the characters the chunk covers.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from sweep.chunking.boundaries import Span
from sweep.core.textspans import strip_span

__all__ = ["PlacedPieces", "locate_pieces"]

_BROKEN = "\ufffd"  # what a decoder makes of half a UTF-8 character
#: every character ``str.isspace`` (and so ``str.split``) treats as whitespace
WHITESPACE = (
    "\t\n\v\f\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004"
    "\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
_WHITESPACE_CODES = np.array(sorted(map(ord, WHITESPACE)), dtype=np.uint32)
_SLACK = 2  # how far taking a cut character or stripping moves a place from its match


@dataclass(frozen=True)
class PlacedPieces:
    """The spans of the pieces that were placed, in order, and what was not."""

    spans: tuple[Span, ...]
    #: pieces found only up to whitespace (the splitter changed spaces or line breaks)
    loose: int
    #: texts of the pieces that are not in the document, in order
    missing: tuple[str, ...]
    #: texts of the pieces that are in the document, but not after the piece before them
    unordered: tuple[str, ...] = ()


class _Document:
    """A document, with every whitespace run squeezed to one space (``squeezed``) and
    where each squeezed character is in the document (``source``)."""

    def __init__(self, text: str) -> None:
        self.text = text
        codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        space = np.isin(codes, _WHITESPACE_CODES)
        keep = ~(space & np.concatenate(([False], space[:-1])))
        #: squeezed position -> document position
        self.source = np.flatnonzero(keep)
        kept = codes[keep]
        kept[space[keep]] = ord(" ")
        self.squeezed = kept.tobytes().decode("utf-32-le", "surrogatepass")

    def at(self, pos: int) -> int:
        """The squeezed position of the first character at or after document ``pos``."""
        return int(self.source.searchsorted(max(pos, 0)))

    def span(self, i: int, n: int) -> Span:
        """The document span of squeezed ``[i, i + n)`` (which starts and ends in a word)."""
        return int(self.source[i]), int(self.source[i + n - 1]) + 1

    @cached_property
    def words(self) -> frozenset[str]:
        return frozenset(self.text.split())


@dataclass(frozen=True)
class _Place:
    span: Span
    #: the piece as returned
    piece: str
    loose: bool = False

    def precedes(self, span: Span) -> bool:
        """Whether a piece at ``span`` may come right after this one."""
        return span[0] >= self.span[0] and span[1] >= self.span[1]

    def repeats(self, other: _Place) -> bool:
        """Whether ``other`` is this piece again in this place."""
        return other.span == self.span and other.piece == self.piece

    def holds(self, span: Span) -> bool:
        """Whether ``span`` starts and ends where or before this place does."""
        return span[0] <= self.span[0] and span[1] <= self.span[1]


_START = _Place((-1, 0), "")


class _Form:
    """One way a piece is searched for: its text, or its text without the U+FFFD at its
    edges (``cut_before``/``cut_after``: the place then takes the character cut there)."""

    def __init__(self, text: str, cut_before: bool = False, cut_after: bool = False) -> None:
        self.text = text
        self.words = " ".join(text.split())
        self.cut_before = cut_before
        self.cut_after = cut_after
        #: the whitespace between the cut character and the words, exactly as returned
        self.before = text[: len(text) - len(text.lstrip())]
        self.after = text[len(text.rstrip()) :]

    def could_be_in(self, doc: _Document) -> bool:
        """False when a word inside the text (not the first or last, which a splitter may
        have cut) is no word of the document: then the text is not in it."""
        inner = self.words.split(" ")[1:-1]
        return all(w in doc.words for w in inner)

    def place(self, doc: _Document, i: int, piece: str) -> _Place:
        """The place of the match at squeezed position ``i``."""
        start, end = doc.span(i, len(self.words))
        text = doc.text
        loose = text[start:end] != self.text.strip()
        if self.cut_before:
            cut = start - len(self.before) - 1
            if cut >= 0 and text[cut + 1 : start] == self.before and not text[cut].isascii():
                start = cut
        if self.cut_after:
            cut = end + len(self.after)
            if cut < len(text) and text[end:cut] == self.after and not text[cut].isascii():
                end = cut + 1
        return _Place(strip_span(text, start, end), piece, loose)

    def matches(self, doc: _Document, lo: int, hi: int, piece: str) -> Iterator[_Place]:
        """Places of the matches that start at or after document ``lo - _SLACK`` and end by
        ``hi + _SLACK``, in order."""
        end = doc.at(hi + _SLACK)
        i = doc.squeezed.find(self.words, doc.at(lo - _SLACK), end)
        while i != -1:
            yield self.place(doc, i, piece)
            i = doc.squeezed.find(self.words, i + 1, end)

    def backward(self, doc: _Document, lo: int, hi: int, piece: str) -> Iterator[_Place]:
        """Places of the matches that start between document ``lo - _SLACK`` and
        ``hi + _SLACK``, latest first."""
        start, n = doc.at(lo - _SLACK), len(self.words)
        i = doc.squeezed.rfind(self.words, start, doc.at(hi + _SLACK) + n)
        while i != -1:
            yield self.place(doc, i, piece)
            i = doc.squeezed.rfind(self.words, start, i + n - 1)

    def latest(
        self,
        doc: _Document,
        lo: int,
        below: _Place,
        piece: str,
        other: bool = False,
        exact: bool = False,
    ) -> _Place | None:
        """The latest place from document ``lo`` on that ``below`` can follow (``other``:
        one that is not ``below`` itself; ``exact``: one whose text is as returned)."""
        start, end = doc.at(lo - _SLACK), doc.at(below.span[1] + _SLACK)
        while True:
            i = doc.squeezed.rfind(self.words, start, end)
            if i == -1:
                return None
            place = self.place(doc, i, piece)
            if (
                below.holds(place.span)
                and not (other and below.repeats(place))
                and not (exact and place.loose)
            ):
                return place
            end = i + len(self.words) - 1


class _Needle:
    """One piece and the forms it may be found in: as returned, and without U+FFFD at its
    edges when it has some. The first pass settles on one form (the first that fits in
    order), so that all places compared are of one kind."""

    def __init__(self, piece: str) -> None:
        self.piece = piece
        stripped = piece.strip()
        cut_before, cut_after = stripped.startswith(_BROKEN), stripped.endswith(_BROKEN)
        core = stripped.strip(_BROKEN)
        # a piece of nothing but halves of a character (a token window that cut one) has
        # no text of its own to place
        self.forms = [_Form(stripped)] if core.strip() else []
        if self.forms and (cut_before or cut_after):
            self.forms.append(_Form(core, cut_before, cut_after))
        self.form: _Form | None = None  # settled by the first pass
        self.width = 2 * len(stripped) + 256
        self._present: dict[int, bool] = {}

    @property
    def empty(self) -> bool:
        return not self.forms

    def _in(self, doc: _Document, k: int) -> bool:
        """Whether form ``k`` occurs anywhere in the document (searched once)."""
        if k not in self._present:
            form = self.forms[k]
            self._present[k] = form.could_be_in(doc) and form.words in doc.squeezed
        return self._present[k]

    def first(self, doc: _Document, after: _Place) -> _Place | None:
        """The earliest place that can follow ``after``, in the first form that has one
        (which the later passes keep to); the search widens forward."""
        for k, form in enumerate(self.forms):
            width = self.width
            while True:
                hi = min(len(doc.text), after.span[1] + width)
                place = next(
                    (
                        p
                        for p in form.matches(doc, after.span[0], hi, self.piece)
                        if after.precedes(p.span)
                    ),
                    None,
                )
                if place is not None:
                    self.form = form
                    return place
                if hi >= len(doc.text) or not self._in(doc, k):
                    break
                width *= 2
        return None

    def last(self, doc: _Document, below: _Place, floor: _Place) -> _Place:
        """The latest place that ``below`` can follow, no earlier than ``floor`` (a place
        that can): one where the text is as returned if there is such, and one that is
        not ``below`` itself if there is such (in text that repeats, a copy is elsewhere).
        The search widens back."""
        form = self.form
        assert form is not None, "the first pass places the piece"
        width = self.width
        place = floor
        while True:
            lo = max(0, below.span[0] - width)
            found = form.latest(doc, lo, below, self.piece)
            if found is not None:
                place = max(found, floor, key=lambda p: p.span)
                break
            if lo <= floor.span[0]:
                break
            width *= 2
        if place.loose:
            exact = form.latest(doc, floor.span[0], below, self.piece, exact=True)
            if exact is not None and floor.precedes(exact.span):
                place = exact
        if below.repeats(place):
            other = form.latest(doc, floor.span[0], below, self.piece, other=True)
            if other is not None and floor.precedes(other.span):
                place = other
        return place

    def anywhere(self, doc: _Document) -> bool:
        return any(self._in(doc, k) for k in range(len(self.forms)))

    def next(self, doc: _Document, prev: _Place, limit: int, bound: _Place) -> _Place:
        """Where the piece continues the chunk at ``prev``: the latest place that starts by
        ``limit`` (where its text is as returned, if there is one), else the first after
        it; never past ``bound`` (itself a place that fits)."""
        form = self.form
        assert form is not None, "the first pass places the piece"
        within: _Place | None = None
        for place in form.backward(doc, prev.span[0], min(limit, bound.span[0]), self.piece):
            if place.span[0] <= limit and prev.precedes(place.span) and bound.holds(place.span):
                # the text as it is before the same words with other whitespace
                if within is None or (within.loose and not place.loose):
                    within = place
                if not place.loose:
                    break
        if within is not None:
            return within
        for place in form.matches(doc, limit + 1, bound.span[1], self.piece):
            if place.span[0] > limit and prev.precedes(place.span) and bound.holds(place.span):
                return place
        return bound


def _limit(text: str, end: int) -> int:
    """Where a chunk ending at ``end`` is continued at the latest: past whitespace."""
    while end < len(text) and text[end].isspace():
        end += 1
    return end


def _said(text: str, needle: _Needle, start: int | None) -> _Place | None:
    """The place a splitter said a piece starts at, if the piece is there as returned."""
    if start is None or start < 0 or not text.startswith(needle.piece, start):
        return None
    return _Place(strip_span(text, start, start + len(needle.piece)), needle.piece)


def locate_pieces(
    text: str, pieces: Sequence[str], starts: Sequence[int | None] | None = None
) -> PlacedPieces:
    """Find every piece in ``text``; pieces that are empty, only whitespace, or only
    halves of a cut character (U+FFFD) are skipped. See the module's docstring for how.

    ``starts``: where the splitter says each piece starts (chonkie does), or None. Where
    the piece is there as returned and fits the order, that place is taken: in text that
    repeats it settles what the text alone cannot."""
    said = list(starts) if starts is not None else []
    if len(said) != len(pieces):
        said = [None] * len(pieces)
    kept = [(n, s) for n, s in zip(map(_Needle, pieces), said) if not n.empty]
    needles = [n for n, _ in kept]
    doc = _Document(text)

    # 1. which pieces fit in order: each at its first place after the previous one
    earliest: list[_Place | None] = []
    after = _START
    for needle in needles:
        earliest.append(needle.first(doc, after))
        after = earliest[-1] or after

    # 2. from the end: the latest place of each of them that leaves room for the rest
    bounds: list[_Place | None] = [None] * len(needles)
    below = _Place((len(text) + 1, len(text) + 1), "")  # every piece can precede it
    for k in range(len(needles) - 1, -1, -1):
        if earliest[k] is not None:
            bounds[k] = below = needles[k].last(doc, below, earliest[k])

    # 3. from the start: each piece where it continues the previous one
    spans: list[Span] = []
    missing: list[str] = []
    unordered: list[str] = []
    loose = 0
    prev = _START
    for (needle, start), bound in zip(kept, bounds):
        if bound is None:
            (unordered if needle.anywhere(doc) else missing).append(needle.piece)
            continue
        told = _said(text, needle, start)
        if told is not None and prev.precedes(told.span) and bound.holds(told.span):
            prev = told
        else:
            prev = needle.next(doc, prev, _limit(text, prev.span[1]), bound)
        loose += prev.loose
        spans.append(prev.span)
    return PlacedPieces(tuple(spans), loose, tuple(missing), tuple(unordered))
