"""Chunkers: split a Document into Chunks with exact offsets, sized in tokens.

Every strategy obeys the same contract (tests/test_chunking.py checks it):

- ``doc.text[chunk.start:chunk.end] == chunk.text``; chunks are in document
  order and ``chunk.index`` is the position, so ids are ``f"{doc_id}#{i}"``;
- ``chunk.n_tokens`` is the chunk text re-encoded on its own and is at most
  ``size`` (a single character that alone needs more tokens than ``size`` is
  the only exception);
- no chunk is empty or whitespace-only and every non-whitespace character of
  the document lies in some chunk;
- the same input gives the same chunks.

What ``overlap`` means differs by strategy; see ``OVERLAP_MEANING`` and the
README section on chunking. Strategies share one toolbox (``_DocTools``):
they cut the text into pieces at natural boundaries, fall back to finer
boundaries and finally to token windows for pieces longer than ``size``, and
pack pieces greedily up to ``size``. The semantic strategy first merges its
sentences into units of at least ``min_unit_tokens``, since it embeds each one.
"""

from __future__ import annotations

import bisect
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

import numpy as np
import tiktoken

from sweep.core.types import Chunk, Document
from sweep.core.suggest import did_you_mean
from sweep.core.tokenization import TokenizedText, count_tokens, get_encoding, tokenize

__all__ = [
    "STRATEGIES",
    "PREFIXES",
    "OVERLAP_MEANING",
    "ChunkingSettingsError",
    "BaseChunker",
    "TokenChunker",
    "SentenceChunker",
    "ParagraphChunker",
    "RecursiveChunker",
    "MarkdownChunker",
    "SemanticChunker",
    "Heading",
    "parse_headings",
    "markdown_sections",
    "build_chunker",
]

Span = tuple[int, int]
EmbedFn = Callable[[list[str]], np.ndarray]

STRATEGIES = ("token", "sentence", "paragraph", "recursive", "markdown", "semantic")
PREFIXES = ("none", "title", "title+headings")

OVERLAP_MEANING = {
    "token": "exactly `overlap` tokens shared by consecutive chunks (stride size - overlap)",
    "sentence": "up to `overlap` tokens of whole sentences repeated from the end of the previous chunk",
    "paragraph": "ignored: chunks never overlap",
    "recursive": "up to `overlap` tokens of whole pieces (lines, sentences, words) repeated from the previous chunk",
    "markdown": "as recursive, but only between chunks of one section longer than `size`",
    "semantic": "as sentence, but only between chunks of one semantic group longer than `size`",
}

# option name -> (strategy that uses it, default)
#: The settings every strategy takes (build_chunker's own parameters).
_SETTINGS = ("strategy", "size", "overlap", "tokenizer", "prefix")
_OPTIONS: dict[str, tuple[str, Any]] = {
    "breakpoint_percentile": ("semantic", 90.0),
    "buffer_size": ("semantic", 1),
    "min_unit_tokens": ("semantic", 8),
}


class ChunkingSettingsError(ValueError):
    """Invalid chunker settings; str() is one line naming the setting."""


class UnknownChunkSetting(ChunkingSettingsError):
    """A strategy, prefix or option name sweep does not know: a typo, never a grid cell to
    skip, so a sweep stops on it before its first job."""


# --------------------------------------------------------------------------
# Boundaries
# --------------------------------------------------------------------------

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


def _sentence_cuts(text: str, a: int, b: int) -> list[int]:
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


_paragraph_cuts = _regex_cuts(_BLANK_LINE)
_line_cuts = _regex_cuts(_NEWLINES)
_word_cuts = _regex_cuts(_WHITESPACE)

Cutter = Callable[[str, int, int], list[int]]
# Separator hierarchies; a piece still too long after the last level is cut
# into token windows.
_RECURSIVE_LEVELS: tuple[Cutter, ...] = (_paragraph_cuts, _line_cuts, _sentence_cuts, _word_cuts)
_PARAGRAPH_LEVELS: tuple[Cutter, ...] = (_paragraph_cuts, _sentence_cuts, _word_cuts)
_SENTENCE_LEVELS: tuple[Cutter, ...] = (_word_cuts,)


def _pieces(a: int, b: int, cuts: Sequence[int]) -> list[Span]:
    bounds = [a, *cuts, b]
    return [(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1) if bounds[i] < bounds[i + 1]]


# --------------------------------------------------------------------------
# Markdown headings
# --------------------------------------------------------------------------

_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r" {0,3}(=+|-+)[ \t]*$")
_NOT_PARAGRAPH = re.compile(r"[ \t]*(?:[-*+]\s|\d{1,9}[.)]\s|>|\||#|$)")


@dataclass(frozen=True, slots=True)
class Heading:
    """A Markdown heading: ``start`` of its first line, ``body_start`` after its last."""

    level: int
    title: str
    start: int
    body_start: int
    path: tuple[str, ...]


def parse_headings(text: str) -> list[Heading]:
    """ATX (``## x``) and setext headings outside fenced code, each with its heading path."""
    headings: list[Heading] = []
    stack: list[tuple[int, str]] = []
    fence: str | None = None
    pos = 0
    prev: tuple[int, str] | None = None  # (start, line) of a paragraph line that could be a setext title

    def add(level: int, title: str, start: int, body_start: int) -> None:
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        headings.append(Heading(level, title, start, body_start, tuple(t for _, t in stack)))

    for line in text.split("\n"):
        start, pos = pos, pos + len(line) + 1
        body_start = min(pos, len(text))
        if start == 0:
            line = line.removeprefix("\ufeff")  # a byte-order mark does not hide the first heading
        fm = _FENCE.match(line)
        if fence is not None:
            if fm and fm.group(1)[0] == fence[0] and len(fm.group(1)) >= len(fence) and not line[fm.end():].strip():
                fence = None
            continue
        if fm:
            fence = fm.group(1)
            prev = None
            continue
        atx = _ATX.match(line)
        if atx:
            add(len(atx.group(1)), (atx.group(2) or "").strip(), start, body_start)
            prev = None
            continue
        setext = _SETEXT.match(line)
        if setext and prev is not None:
            add(1 if setext.group(1)[0] == "=" else 2, prev[1].strip(), prev[0], body_start)
            prev = None
            continue
        prev = None if _NOT_PARAGRAPH.match(line) or line.startswith(("    ", "\t")) else (start, line)
    return headings


def _title_of(doc: Document, headings: Sequence[Heading]) -> str:
    if doc.title and doc.title.strip():
        return doc.title.strip()
    return next((h.title for h in headings if h.level == 1 and h.title), "")


class _Prefixer:
    """Builds the embed-time prefix of a chunk from the section it starts in."""

    def __init__(self, mode: str, doc: Document) -> None:
        self.mode = mode
        self.headings = parse_headings(doc.text) if mode != "none" else []
        self.starts = [h.start for h in self.headings]
        self.title = _title_of(doc, self.headings) if mode != "none" else ""

    def __call__(self, start: int) -> str:
        if self.mode == "none":
            return ""
        if self.mode == "title":
            return self.title
        i = bisect.bisect_right(self.starts, start) - 1
        path = list(self.headings[i].path) if i >= 0 else []
        # The title usually is the H1; don't say it twice.
        if path and self.title and path[0] == self.title:
            path = path[1:]
        return " > ".join(p for p in [self.title, *path] if p)


# --------------------------------------------------------------------------
# Size fitting
# --------------------------------------------------------------------------


class _DocTools:
    """Token estimates, exact counts and splitting for one document text."""

    def __init__(self, text: str, encoding: tiktoken.Encoding, size: int) -> None:
        self.text = text
        self.encoding = encoding
        self.size = size
        self.tt: TokenizedText = tokenize(encoding, text)
        self._starts: list[int] = self.tt.start.tolist()

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
        if 4 * (b - a) <= self.size or len(self.text[a:b].encode("utf-8", "surrogatepass")) <= self.size:
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
        return line.startswith("#") and "\n" not in line and _ATX.match(line) is not None

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
        for x, y in _pieces(a, b, sorted(set(c for c in cuts if a < c < b))):
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
        for p in _pieces(a, b, levels[0](self.text, a, b)):
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


# --------------------------------------------------------------------------
# Chunkers
# --------------------------------------------------------------------------


class BaseChunker(ABC):
    """Splits documents into chunks; subclasses implement ``spans``.

    ``settings`` describes the effective settings; ``notes`` are remarks on
    settings that do not apply (the pipeline reports them with the results).
    """

    strategy: str = ""

    def __init__(
        self,
        size: int = 256,
        overlap: int = 0,
        tokenizer: str = "cl100k_base",
        prefix: str = "none",
    ) -> None:
        _check_size_overlap(size, overlap)
        if prefix not in PREFIXES:
            raise UnknownChunkSetting(
                f"unknown chunk prefix {prefix!r}{did_you_mean(prefix, PREFIXES)}; "
                f"valid: {', '.join(PREFIXES)}"
            )
        self.size = size
        self.overlap = overlap
        self.prefix = prefix
        self.tokenizer = tokenizer
        self.encoding = get_encoding(tokenizer)
        self.notes: tuple[str, ...] = ()
        self.settings: dict[str, Any] = {
            "strategy": self.strategy,
            "size": size,
            "overlap": overlap,
            "tokenizer": tokenizer,
            "encoding": self.encoding.name,
            "prefix": prefix,
        }

    @abstractmethod
    def spans(self, doc: Document) -> list[Span]:
        """Character spans of the chunks of ``doc``, in order, each fitting ``size``."""

    def chunk(self, doc: Document) -> list[Chunk]:
        """Chunks of one document, ids ``f"{doc_id}#{i}"``."""
        return self._build(doc, self.spans(doc))

    def chunk_documents(self, docs: Iterable[Document]) -> list[Chunk]:
        """Chunks of all documents, in document order."""
        return [c for doc in docs for c in self.chunk(doc)]

    def _build(self, doc: Document, spans: Sequence[Span]) -> list[Chunk]:
        prefixer = _Prefixer(self.prefix, doc)
        chunks: list[Chunk] = []
        last = 0
        for i, (start, end) in enumerate(spans):
            if not (0 <= start < end <= len(doc.text)) or start < last:
                raise RuntimeError(
                    f"chunker {type(self).__name__} produced span ({start}, {end}) out of order "
                    f"or outside document {doc.doc_id!r}"
                )
            last = start
            text = doc.text[start:end]
            prefix = prefixer(start)
            chunks.append(
                Chunk(
                    doc_id=doc.doc_id,
                    index=i,
                    start=start,
                    end=end,
                    text=text,
                    n_tokens=count_tokens(self.encoding, text),
                    embed_text=f"{prefix}\n\n{text}" if prefix else None,
                )
            )
        return chunks

    def _tools(self, text: str) -> _DocTools:
        return _DocTools(text, self.encoding, self.size)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.settings.items() if k != "encoding")
        return f"{type(self).__name__}({args})"


class TokenChunker(BaseChunker):
    """Fixed windows of ``size`` tokens, consecutive windows sharing ``overlap`` tokens."""

    strategy = "token"

    def windows(self, doc: Document) -> list[tuple[int, int, Span]]:
        """All token windows ``(first_token, stop_token, (start, end))``, blank ones included."""
        return self._tools(doc.text).token_windows(0, len(doc.text), self.overlap)

    def spans(self, doc: Document) -> list[Span]:
        # Windows keep their exact token edges (no stripping), so overlap stays
        # exact. Dropped: windows with nothing but whitespace, and a window
        # whose characters equal the previous one's (tokens inside a
        # multi-byte character own no characters).
        out: list[Span] = []
        for _, _, span in self.windows(doc):
            if doc.text[span[0] : span[1]].strip() and (not out or out[-1] != span):
                out.append(span)
        return out


class SentenceChunker(BaseChunker):
    """Whole sentences packed up to ``size``; overlap in whole sentences."""

    strategy = "sentence"

    def spans(self, doc: Document) -> list[Span]:
        tools = self._tools(doc.text)
        units = _sentence_units(tools, 0, len(doc.text))
        return tools.pack(units, self.overlap)


def _sentence_units(tools: _DocTools, a: int, b: int) -> list[Span]:
    """Sentences of ``[a, b)``; a sentence over ``size`` is cut at spaces, then tokens."""
    return tools.units(a, b, (_sentence_cuts, *_SENTENCE_LEVELS))


def _semantic_units(tools: _DocTools, a: int, b: int, minimum: int) -> list[Span]:
    """Sentences of ``[a, b)`` merged so that each has at least ``minimum`` tokens.

    Every unit fits ``size``, owns at least ``minimum`` of the document's
    tokens (counted from the end of the previous unit) and re-encodes to at
    least ``minimum`` tokens; only the one unit of a document shorter than
    that may have fewer. So a document of T tokens gives at most
    ceil(T / minimum) units. Short pieces join the next piece, except that
    short text before a heading joins the unit before it (a heading starts a
    unit) and a short end joins the last unit. Text without sentence ends
    falls to words here, and the words are merged into runs of ``minimum``
    tokens instead of being embedded one by one. ``minimum`` must be at most
    ``size // 4``, so that a short piece next to one near ``size`` can be cut
    into two halves that are both long enough.
    """
    pieces: list[Span] = []
    for u in _sentence_units(tools, a, b):
        span = tools.strip(*u)
        if span is not None:
            pieces.extend([span] if tools.fits(*span) else tools.split_long(*span))
    if not pieces:
        return pieces
    out: list[Span] = []
    owned_from = a  # the next unit owns the document's tokens from here
    start: int | None = None  # of the unit being grown
    grown_to = a  # its end so far
    for x, y in pieces:
        if start is not None and out and tools.is_heading(x, y) and tools.fits(out[-1][0], grown_to):
            out[-1] = (out[-1][0], grown_to)
            start, owned_from = None, grown_to
        grown_to = y
        if start is not None and not tools.fits(start, y):
            # Too short alone, too long with the next piece: cut the two in halves.
            out.extend(tools.halves(start, y))
            start, owned_from = None, y
            continue
        start = x if start is None else start
        if tools.estimate(owned_from, y) >= minimum and tools.count(start, y) >= minimum:
            out.append((start, y))
            start, owned_from = None, y
    if start is not None:
        end = pieces[-1][1]
        if not out:
            out.append((start, end))
        else:
            last_start = out.pop()[0]
            out.extend([(last_start, end)] if tools.fits(last_start, end) else tools.halves(last_start, end))
    return out


class ParagraphChunker(BaseChunker):
    """Whole paragraphs (blank-line separated) packed up to ``size``, no overlap."""

    strategy = "paragraph"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.overlap:
            self.notes = (f"overlap is ignored by strategy 'paragraph' (got {self.overlap})",)
        self.settings["overlap"] = 0

    def spans(self, doc: Document) -> list[Span]:
        return self._tools(doc.text).recursive(0, len(doc.text), _PARAGRAPH_LEVELS, 0)


class RecursiveChunker(BaseChunker):
    """Separator hierarchy (blank line, line, sentence end, space, tokens), merged up to ``size``."""

    strategy = "recursive"

    def spans(self, doc: Document) -> list[Span]:
        return self._tools(doc.text).recursive(0, len(doc.text), _RECURSIVE_LEVELS, self.overlap)


class MarkdownChunker(BaseChunker):
    """One chunk per Markdown section; sections over ``size`` are split recursively."""

    strategy = "markdown"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.overlap:
            self.notes = (
                f"overlap ({self.overlap}) applies only inside sections longer than size "
                "(strategy 'markdown')",
            )

    def spans(self, doc: Document) -> list[Span]:
        tools = self._tools(doc.text)
        out: list[Span] = []
        for a, b in markdown_sections(doc.text):
            out.extend(tools.recursive(a, b, _RECURSIVE_LEVELS, self.overlap))
        return out


def markdown_sections(text: str) -> list[Span]:
    """Spans of the text before the first heading and of each heading's section.

    A heading with nothing but whitespace before the next heading is joined
    to that next section, so no chunk is a bare heading.
    """
    headings = parse_headings(text)
    bounds = [0] + [h.start for h in headings] + [len(text)]
    sections: list[Span] = []
    pending: int | None = None
    for k in range(len(bounds) - 1):
        a, b = bounds[k], bounds[k + 1]
        if a >= b:
            continue
        head = headings[k - 1] if k > 0 else None
        start = a if pending is None else pending
        if head is not None and not text[head.body_start : b].strip() and k + 1 < len(bounds) - 1:
            pending = start
            continue
        pending = None
        sections.append((start, b))
    if pending is not None:
        sections.append((pending, len(text)))
    return sections


class SemanticChunker(BaseChunker):
    """Sentence units (merged to ``min_unit_tokens``) grouped where neighbour embeddings stay
    similar; groups over ``size`` are packed."""

    strategy = "semantic"

    def __init__(
        self,
        *args: Any,
        embed_fn: EmbedFn | None = None,
        breakpoint_percentile: float = 90.0,
        buffer_size: int = 1,
        min_unit_tokens: int = 8,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        if embed_fn is None:
            raise ChunkingSettingsError("strategy 'semantic' needs embed_fn (a function list[str] -> array)")
        numeric = isinstance(breakpoint_percentile, (int, float)) and not isinstance(breakpoint_percentile, bool)
        if not numeric or not 0 <= breakpoint_percentile <= 100:
            raise ChunkingSettingsError(
                f"chunk option breakpoint_percentile must be a number in [0, 100], got {breakpoint_percentile!r}"
            )
        if isinstance(buffer_size, bool) or not isinstance(buffer_size, int) or buffer_size < 0:
            raise ChunkingSettingsError(f"chunk option buffer_size must be an integer >= 0, got {buffer_size!r}")
        if isinstance(min_unit_tokens, bool) or not isinstance(min_unit_tokens, int) or min_unit_tokens < 1:
            raise ChunkingSettingsError(
                f"chunk option min_unit_tokens must be an integer >= 1, got {min_unit_tokens!r}"
            )
        self.embed_fn = embed_fn
        self.breakpoint_percentile = float(breakpoint_percentile)
        self.buffer_size = buffer_size
        # Capped at size/4: see _semantic_units.
        self.min_unit = max(1, min(min_unit_tokens, self.size // 4))
        self.settings.update(breakpoint_percentile=self.breakpoint_percentile, buffer_size=buffer_size,
                             min_unit_tokens=min_unit_tokens)
        notes = []
        if self.overlap:
            notes.append(
                f"overlap ({self.overlap}) applies only inside semantic groups longer than size "
                "(strategy 'semantic')"
            )
        # The default is capped silently (every size below 32 would say so).
        if self.min_unit < min_unit_tokens and min_unit_tokens != _OPTIONS["min_unit_tokens"][1]:
            notes.append(f"min_unit_tokens ({min_unit_tokens}) is capped at size/4: {self.min_unit} tokens")
        self.notes = tuple(notes)

    def spans(self, doc: Document) -> list[Span]:
        return self._spans_batch([doc])[0]

    def chunk_documents(self, docs: Iterable[Document]) -> list[Chunk]:
        # One embed_fn call for the sentences of all documents.
        docs = list(docs)
        return [c for doc, spans in zip(docs, self._spans_batch(docs)) for c in self._build(doc, spans)]

    def _spans_batch(self, docs: Sequence[Document]) -> list[list[Span]]:
        prepared = []
        texts: list[str] = []
        for doc in docs:
            tools = self._tools(doc.text)
            units = _semantic_units(tools, 0, len(doc.text), self.min_unit)
            first = len(texts)
            texts.extend(self._window_text(doc.text, units, i) for i in range(len(units)))
            prepared.append((tools, units, first))
        vectors = self._embed(texts)
        out = []
        for tools, units, first in prepared:
            groups = self._groups(units, vectors[first : first + len(units)])
            spans: list[Span] = []
            for group in groups:
                a, b = group[0][0], group[-1][1]
                if tools.estimate(a, b) <= self.size and (s := tools.strip(a, b)) and tools.fits(*s):
                    spans.append(s)
                else:
                    spans.extend(tools.pack(group, self.overlap))
            out.append(spans)
        return out

    def _window_text(self, text: str, units: Sequence[Span], i: int) -> str:
        # Embedding a sentence with its neighbours smooths the similarity curve
        # (LangChain's SemanticChunker does the same with buffer_size=1).
        lo = max(0, i - self.buffer_size)
        hi = min(len(units) - 1, i + self.buffer_size)
        return text[units[lo][0] : units[hi][1]]

    def _embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 1), dtype=np.float32)
        vectors = np.asarray(self.embed_fn(texts), dtype=np.float64)
        if vectors.ndim != 2 or vectors.shape[0] != len(texts):
            raise ValueError(
                f"embed_fn returned shape {vectors.shape} for {len(texts)} texts; expected ({len(texts)}, d)"
            )
        return vectors

    def _groups(self, units: list[Span], vectors: np.ndarray) -> list[list[Span]]:
        if len(units) <= 1:
            return [units] if units else []
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        unit_vectors = vectors / np.where(norms == 0, 1.0, norms)
        distance = 1.0 - np.einsum("ij,ij->i", unit_vectors[:-1], unit_vectors[1:])
        threshold = np.percentile(distance, self.breakpoint_percentile)
        groups: list[list[Span]] = [[units[0]]]
        for i in range(1, len(units)):
            if distance[i - 1] > threshold:
                groups.append([])
            groups[-1].append(units[i])
        return groups


_CLASSES: dict[str, type[BaseChunker]] = {
    "token": TokenChunker,
    "sentence": SentenceChunker,
    "paragraph": ParagraphChunker,
    "recursive": RecursiveChunker,
    "markdown": MarkdownChunker,
    "semantic": SemanticChunker,
}


def _check_size_overlap(size: Any, overlap: Any) -> None:
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)):
        raise ChunkingSettingsError(f"chunk.size must be an integer number of tokens, got {size!r}")
    if isinstance(overlap, bool) or not isinstance(overlap, (int, np.integer)):
        raise ChunkingSettingsError(f"chunk.overlap must be an integer number of tokens, got {overlap!r}")
    if size <= 0:
        raise ChunkingSettingsError(f"chunk.size must be > 0 tokens, got {size}")
    if overlap < 0:
        raise ChunkingSettingsError(f"chunk.overlap must be >= 0 tokens, got {overlap}")
    if overlap >= size:
        raise ChunkingSettingsError(
            f"chunk.overlap ({overlap}) must be smaller than chunk.size ({size})"
        )


def build_chunker(
    strategy: str = "token",
    size: int = 256,
    overlap: int = 0,
    tokenizer: str = "cl100k_base",
    prefix: str = "none",
    embed_fn: EmbedFn | None = None,
    **options: Any,
) -> BaseChunker:
    """Build the chunker for one sweep setting (the ``_target_`` of the chunk config group).

    ``embed_fn`` is used by ``semantic`` only; ``options`` are strategy
    options (``breakpoint_percentile``, ``buffer_size``, ``min_unit_tokens``
    for ``semantic``).
    Options given for another strategy with a non-default value are kept in
    ``notes``. Invalid settings raise ``ChunkingSettingsError`` (a ValueError).
    """
    cls = _CLASSES.get(strategy)
    if cls is None:
        raise UnknownChunkSetting(
            f"unknown chunk strategy {strategy!r}{did_you_mean(str(strategy), STRATEGIES)}; "
            f"valid: {', '.join(STRATEGIES)}"
        )
    unknown = sorted(set(options) - set(_OPTIONS))
    if unknown:
        keys = sorted(_SETTINGS + tuple(_OPTIONS))
        raise UnknownChunkSetting(
            f"unknown chunk setting {unknown[0]!r}{did_you_mean(unknown[0], keys)}; "
            f"valid: {', '.join(keys)}"
        )
    mine = {k: v for k, v in options.items() if _OPTIONS[k][0] == strategy}
    ignored = [
        f"option {k}={v!r} is ignored by strategy {strategy!r}"
        for k, v in sorted(options.items())
        if _OPTIONS[k][0] != strategy and v != _OPTIONS[k][1]
    ]
    base = dict(size=size, overlap=overlap, tokenizer=tokenizer, prefix=prefix)
    chunker = cls(**base, embed_fn=embed_fn, **mine) if cls is SemanticChunker else cls(**base, **mine)
    chunker.notes = chunker.notes + tuple(ignored)
    return chunker
