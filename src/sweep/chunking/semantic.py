"""The semantic strategy: sentence units grouped where the embeddings of neighbours stay
similar, cut where they jump (the percentile breakpoints of LangChain's SemanticChunker)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from sweep.chunking.base import BaseChunker, ChunkingSettingsError, chunker
from sweep.chunking.boundaries import Span
from sweep.chunking.fitting import DocTools
from sweep.chunking.strategies import sentence_units
from sweep.core.checks import is_int
from sweep.core.types import Chunk, Document

__all__ = ["DEFAULT_MIN_UNIT_TOKENS", "EmbedFn", "SemanticChunker", "semantic_units"]

EmbedFn = Callable[[list[str]], np.ndarray]
#: Chosen by a sweep over 1-32 on the bundled corpus.
DEFAULT_MIN_UNIT_TOKENS = 8


def semantic_units(tools: DocTools, a: int, b: int, minimum: int) -> list[Span]:
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
    for u in sentence_units(tools, a, b):
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
        if (
            start is not None
            and out
            and tools.is_heading(x, y)
            and tools.fits(out[-1][0], grown_to)
        ):
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
            out.extend(
                [(last_start, end)]
                if tools.fits(last_start, end)
                else tools.halves(last_start, end)
            )
    return out


@chunker(
    "semantic",
    overlap="as sentence, but only between chunks of one semantic group longer than `size`",
)
class SemanticChunker(BaseChunker):
    """Sentence units (merged to ``min_unit_tokens``) grouped where neighbour embeddings stay
    similar; groups over ``size`` are packed. Its options and their defaults are the
    keyword-only parameters below, declared here only."""

    def __init__(
        self,
        *args: Any,
        embed_fn: EmbedFn | None = None,
        breakpoint_percentile: float = 90.0,
        buffer_size: int = 1,
        min_unit_tokens: int = DEFAULT_MIN_UNIT_TOKENS,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        if embed_fn is None:
            raise ChunkingSettingsError(
                "strategy 'semantic' needs embed_fn (a function list[str] -> array)"
            )
        numeric = isinstance(breakpoint_percentile, (int, float)) and not isinstance(
            breakpoint_percentile, bool
        )
        if not numeric or not 0 <= breakpoint_percentile <= 100:
            raise ChunkingSettingsError(
                f"chunk option breakpoint_percentile must be a number in [0, 100], got {breakpoint_percentile!r}"
            )
        if not is_int(buffer_size) or buffer_size < 0:
            raise ChunkingSettingsError(
                f"chunk option buffer_size must be an integer >= 0, got {buffer_size!r}"
            )
        if not is_int(min_unit_tokens) or min_unit_tokens < 1:
            raise ChunkingSettingsError(
                f"chunk option min_unit_tokens must be an integer >= 1, got {min_unit_tokens!r}"
            )
        self.embed_fn = embed_fn
        self.breakpoint_percentile = float(breakpoint_percentile)
        self.buffer_size = buffer_size
        # Capped at size/4: see semantic_units.
        self.min_unit = max(1, min(min_unit_tokens, self.size // 4))
        self.settings.update(
            breakpoint_percentile=self.breakpoint_percentile,
            buffer_size=buffer_size,
            min_unit_tokens=min_unit_tokens,
        )
        notes = []
        if self.overlap:
            notes.append(
                f"overlap ({self.overlap}) applies only inside semantic groups longer than size "
                "(strategy 'semantic')"
            )
        # The default is capped silently (every size below 32 would say so).
        if self.min_unit < min_unit_tokens and min_unit_tokens != DEFAULT_MIN_UNIT_TOKENS:
            notes.append(
                f"min_unit_tokens ({min_unit_tokens}) is capped at size/4: {self.min_unit} tokens"
            )
        self.notes = tuple(notes)

    def spans(self, doc: Document) -> list[Span]:
        return self._spans_batch([doc])[0]

    def chunk_documents(self, docs: Iterable[Document]) -> list[Chunk]:
        # One embed_fn call for the sentences of all documents.
        docs = list(docs)
        return [
            c for doc, spans in zip(docs, self._spans_batch(docs)) for c in self._build(doc, spans)
        ]

    def _spans_batch(self, docs: Sequence[Document]) -> list[list[Span]]:
        prepared = []
        texts: list[str] = []
        for doc in docs:
            tools = self._tools(doc.text)
            units = semantic_units(tools, 0, len(doc.text), self.min_unit)
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
                if (
                    tools.estimate(a, b) <= tools.size
                    and (s := tools.strip(a, b))
                    and tools.fits(*s)
                ):
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
