"""Fitting text to a token budget: one document's tokenization, exact counts, token
windows, and the greedy packing and recursive splitting every strategy shares.

Strategies cut the text into pieces at natural boundaries, fall back to finer
boundaries and finally to token windows for pieces longer than ``size``, and
pack pieces greedily up to ``size``.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from functools import cached_property

import tiktoken

from sweep.chunking.boundaries import Cutter, Span, pieces, sentence_cuts
from sweep.chunking.headings import ATX_HEADING
from sweep.core.text.sentences import SentenceEnds, sentence_rule
from sweep.core.tokenization import ModelTokenizer, TokenizedText, count_tokens, tokenize

__all__ = ["DocTools"]


class DocTools:
    """Token estimates, exact counts and splitting for one document text."""

    def __init__(self, text: str, encoding: tiktoken.Encoding | ModelTokenizer, size: int) -> None:
        self.text = text
        self.encoding = encoding
        self.size = size
        # A model's tokenizer may add a token no byte carries (sentencepiece's leading U+2581
        # piece), so its text fits uncounted only with one token to spare.
        self._spare = 1 if isinstance(encoding, ModelTokenizer) else 0
        self.tt: TokenizedText = tokenize(encoding, text)
        self._starts: list[int] = self.tt.start.tolist()

    @cached_property
    def sentence_ends(self) -> SentenceEnds:
        """The sentence rule of the document's language (told once, when first cut)."""
        return sentence_rule(self.text)

    def cuts(self, cutter: Cutter, a: int, b: int) -> list[int]:
        """``cutter``'s cuts of ``[a, b)``; sentences end by the document's language."""
        if cutter is sentence_cuts:
            return sentence_cuts(self.text, a, b, self.sentence_ends)
        return cutter(self.text, a, b)

    def index(self, pos: int) -> int:
        """Number of tokens (of the document's tokenization) starting before ``pos``."""
        return bisect.bisect_left(self._starts, pos)

    def estimate(self, a: int, b: int) -> int:
        """Tokens of the document whose span starts in ``[a, b)``: additive over adjacent spans."""
        return self.index(b) - self.index(a)

    def count(self, a: int, b: int) -> int:
        return count_tokens(self.encoding, self.text[a:b])

    def fits(self, a: int, b: int) -> bool:
        # A token is at least one byte: text of at most `size` UTF-8 bytes fits uncounted.
        budget = self.size - self._spare
        if 4 * (b - a) <= budget or len(self.text[a:b].encode("utf-8", "surrogatepass")) <= budget:
            return True
        return self.count(a, b) <= self.size

    def strip(self, a: int, b: int) -> Span | None:
        """``[a, b)`` without leading/trailing whitespace; None if nothing is left."""
        s = self.text[a:b]
        core = s.strip()
        if not core:
            return None
        lead = len(s) - len(s.lstrip())
        return a + lead, a + lead + len(core)

    def is_heading(self, a: int, b: int) -> bool:
        line = self.text[a:b].strip()
        return line.startswith("#") and "\n" not in line and ATX_HEADING.match(line) is not None

    def fit_chars(self, pos: int, limit: int) -> int:
        """Largest end in ``(pos, limit]`` whose text fits (at least one character)."""
        if self.fits(pos, limit):
            return limit
        lo, hi = pos + 1, limit  # hi never fits; lo is accepted even if it does not
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self.fits(pos, mid):
                lo = mid
            else:
                hi = mid
        return lo

    def token_windows(self, a: int, b: int, overlap: int = 0) -> list[tuple[int, int, Span]]:
        """Cut ``[a, b)`` into windows of at most ``size`` tokens.

        Returns ``(first_token, stop_token, (start, end))``: windows follow the
        document's tokenization, consecutive windows share exactly ``overlap``
        tokens, and the character spans tile ``[a, b)`` (with overlap, they
        repeat the shared tokens' characters). A window whose re-encoded text
        would exceed ``size`` is shortened by whole tokens; the next window
        then starts ``overlap`` tokens before the new end.
        """
        size = self.size
        starts = self._starts
        i, stop_all = self.index(a), self.index(b)
        pos = a
        out: list[tuple[int, int, Span]] = []
        while pos < b:
            j = min(i + size, stop_all)
            end = b if j >= stop_all else starts[j]
            while end <= pos and j < stop_all:  # tokens inside one character own no span
                j += 1
                end = b if j >= stop_all else starts[j]
            if not self.fits(pos, end):
                while j - 1 > i:
                    j -= 1
                    end = starts[j]
                    if end > pos and self.fits(pos, end):
                        break
                if end <= pos or not self.fits(pos, end):
                    # Too few tokens to shrink by (tiny ``size``): fit by characters.
                    end = self.fit_chars(pos, end if end > pos else b)
                    out.append((i, self.index(end), (pos, end)))
                    pos, i = end, self.index(end)
                    continue
            out.append((i, j, (pos, end)))
            if end >= b:
                break
            i = max(i + 1, j - overlap)
            pos = starts[i]
        return out

    def split_long(self, a: int, b: int) -> list[Span]:
        """Token windows of ``[a, b)`` without overlap, stripped, blanks dropped."""
        spans = (self.strip(*w[2]) for w in self.token_windows(a, b))
        return [s for s in spans if s is not None]

    def halves(self, a: int, b: int) -> list[Span]:
        """``[a, b)`` cut into as few near-equal token windows as fit ``size``, at least two.

        Cuts fall on document token starts, moved to a word start when one is
        within a quarter of a part (at most 4 tokens), so every part keeps at
        least 3/4 of its share. A part that still does not fit is cut by ``split_long``.
        """
        first, stop = self.index(a), self.index(b)
        n = stop - first
        if n < 2:
            span = self.strip(a, b)
            return [] if span is None else [span] if self.fits(*span) else self.split_long(*span)
        k = max(2, -(-self.count(a, b) // self.size))
        cuts: list[int] = []
        for i in range(1, k):
            j = first + round(i * n / k)
            cuts.append(self._word_start_near(j, first, stop, min(4, n // (4 * k))))
        out: list[Span] = []
        for x, y in pieces(a, b, sorted(set(c for c in cuts if a < c < b))):
            span = self.strip(x, y)
            if span is not None:
                out.extend([span] if self.fits(*span) else self.split_long(*span))
        return out

    def _word_start_near(self, j: int, first: int, stop: int, reach: int) -> int:
        """Start of token ``j``, or of a token within ``reach`` of it that begins a word."""
        starts, text = self._starts, self.text
        for d in range(reach + 1):
            for k in (j - d, j + d):
                if first < k < stop:
                    pos = starts[k]
                    if text[pos].isspace() or text[pos - 1].isspace():
                        return pos
        return starts[j]

    def pack(self, units: Sequence[Span], overlap: int) -> list[Span]:
        """Greedily merge adjacent units into chunks of at most ``size`` tokens.

        A chunk may repeat trailing units of the previous one whose tokens sum
        to at most ``overlap`` (whole units only, so overlap rounds down).
        """
        size = self.size
        out: list[Span] = []
        n = len(units)
        s = 0
        min_e = 1  # a chunk must include a unit the previous chunk did not
        while s < n:
            e = s + 1
            while e < n and self.estimate(units[s][0], units[e][1]) <= size:
                e += 1
            # A heading belongs with what follows it, not at the end of a chunk.
            while e < n and e - 1 > s and e - 1 >= min_e and self.is_heading(*units[e - 1]):
                e -= 1
            # The estimate ignores re-tokenization at the chunk's edges; check,
            # and give up overlap before new material.
            while True:
                span = self.strip(units[s][0], units[e - 1][1])
                if span is None or e - s == 1 or self.fits(*span):
                    break
                if e - 1 >= min_e:
                    e -= 1
                else:
                    s += 1
            if span is not None:
                out.extend([span] if self.fits(*span) else self.split_long(*span))
            if e >= n:
                break
            min_e = e + 1
            nxt = e
            if overlap > 0:
                while (
                    nxt - 1 > s
                    and self.estimate(units[nxt - 1][0], units[e - 1][1]) <= overlap
                    and self.estimate(units[nxt - 1][0], units[e][1]) <= size
                ):
                    nxt -= 1
            s = nxt
        return out

    def units(self, a: int, b: int, levels: Sequence[Cutter]) -> list[Span]:
        """Cut ``[a, b)`` at ``levels[0]``; pieces over ``size`` go down the hierarchy."""
        if not levels:
            return [w[2] for w in self.token_windows(a, b)]
        out: list[Span] = []
        for p in pieces(a, b, self.cuts(levels[0], a, b)):
            if self.estimate(*p) <= self.size:
                out.append(p)
            else:
                out.extend(self.units(*p, levels[1:]))
        return out

    def recursive(self, a: int, b: int, levels: Sequence[Cutter], overlap: int) -> list[Span]:
        """Split by a separator hierarchy, then merge the pieces up to ``size``.

        Only pieces longer than ``size`` go down to finer separators, so
        chunks end at the coarsest boundary that lets them fit. Unlike
        LangChain's splitter, the pieces of a long paragraph may share a
        chunk with the short paragraphs around it (no orphan headings).
        """
        if self.estimate(a, b) <= self.size:
            span = self.strip(a, b)
            if span is None:
                return []
            if self.fits(*span):
                return [span]
        return self.pack(self.units(a, b, levels), overlap)
