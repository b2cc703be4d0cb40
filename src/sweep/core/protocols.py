"""What each stage of a setting must offer: the protocols ``evaluate_setting`` is typed with.

``Document`` → :class:`Chunker` → ``Chunk``s → :class:`Embedder` → float32 ``(n, d)``
vectors → :class:`Retriever` (a dense one holds a :class:`SearchIndex`) →
:class:`~sweep.core.types.Ranking` → optionally a :class:`Reranker` → ``Ranking``.
sweep's own classes satisfy them; so does anything a user points a ``_target_`` at
that has these members (the tests run the pipeline with small fakes).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from sweep.core.timing import Timed
from sweep.core.types import Chunk, Document, Ranking

__all__ = [
    "ApproximateIndex",
    "Chunker",
    "CountsModelTokens",
    "DocumentChunker",
    "EmbedStatsLike",
    "Embedder",
    "EmbedsLate",
    "EncodesQuery",
    "FindsWindowEnds",
    "FullEmbedder",
    "HasEmbedStats",
    "HasNotes",
    "HoldsSearchIndex",
    "IdentifiedEmbedder",
    "LabelledEmbedder",
    "MayChunkLate",
    "RerankStatsLike",
    "Reranker",
    "Retriever",
    "SearchIndex",
    "SizedRetriever",
    "TalliesChunking",
    "TimesQueries",
    "embed_named",
    "encode_one_query",
    "identity_of",
    "late_chunker_of",
]


@runtime_checkable
class Chunker(Protocol):
    #: Settings the chunker ignores or bends (shown under the table); may be empty.
    notes: tuple[str, ...]

    def chunk_documents(self, docs: Sequence[Document]) -> list[Chunk]:
        """Every chunk of every document, documents in order."""
        ...


@runtime_checkable
class DocumentChunker(Protocol):
    """A user's chunker that splits one document at a time; the job wraps it as a
    :class:`Chunker`."""

    def chunk(self, doc: Document) -> list[Chunk]: ...


@runtime_checkable
class HasNotes(Protocol):
    """A stage with remarks on settings it ignores or bends (shown under the table)."""

    notes: tuple[str, ...]


@runtime_checkable
class TalliesChunking(Protocol):
    """A chunker that counts what it did while chunking (the page strategy: its pages, the
    pages it split at ``size``, the documents without pages). Read after
    ``chunk_documents``: ``tally`` holds the row's columns (each a column of
    :class:`~sweep.store.stats.Stats`), ``tally_notes`` the lines that say them, kept with
    the row's notes (its settings' notes are known before chunking; these only after)."""

    @property
    def tally(self) -> Mapping[str, int]: ...

    @property
    def tally_notes(self) -> tuple[str, ...]: ...


@runtime_checkable
class Embedder(Protocol):
    """What an embedder must provide: vectors of documents and of queries, and an identity.

    Everything else the pipeline asks of sweep's own embedder is an optional capability
    below (token counts, stats, a one-query encode, late chunking; :class:`FullEmbedder`
    has them all and is told what it embeds); an embedder without one runs the same,
    with the fallback each names.
    """

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """float32-convertible ``(len(texts), dim)``, rows aligned with ``texts``."""
        ...

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """float32-convertible ``(len(texts), dim)``, rows aligned with ``texts``."""
        ...

    @property
    def identity(self) -> str:
        """Everything that determines the vectors (model, weights, settings) in one string:
        jobs whose embedders have the same identity share cached vectors and query-encode
        timings; an empty string shares nothing."""
        ...


# Optional capabilities of an embedder (see Embedder).


@runtime_checkable
class CountsModelTokens(Protocol):
    """An embedder that says how long each text is in its model's tokens and where it
    truncates (the ``mean_model_tokens``, ``embed_tokens`` and ``trunc %`` columns).
    Without: no tokens are counted and nothing is reported truncated."""

    @property
    def max_seq_length(self) -> int:
        """Tokens the model reads of a text; 0 for a model that truncates nothing."""
        ...

    def count_model_tokens(self, texts: Sequence[str]) -> np.ndarray:
        """Length of each text in the model's own tokens, as it would be embedded."""
        ...


@runtime_checkable
class FindsWindowEnds(Protocol):
    """An embedder that says where in a text it truncates: how many of its characters the
    model reads (what a trace shows of a chunk longer than the model's window). Without:
    no trace says where a truncated chunk stops being read."""

    def window_ends(self, texts: Sequence[str]) -> list[int | None]:
        """Per text, the characters the model reads of it (up to the end of the last
        token it keeps, its own prefix not counted); None when it reads all of it."""
        ...


class EmbedStatsLike(Protocol):
    embedded: int
    cache_hits: int
    cache_misses: int
    seconds: float
    load_seconds: float


@runtime_checkable
class HasEmbedStats(Protocol):
    """An embedder that counts what it embedded, found in a cache and loaded since its last
    ``reset_stats()``. Without: every text a setting hands it counts as embedded, its
    model time is the embedding step's and no load is reported."""

    @property
    def stats(self) -> EmbedStatsLike: ...

    def reset_stats(self) -> None: ...


@runtime_checkable
class EncodesQuery(Protocol):
    """An embedder with a one-query encode that never reads a cache (the latency columns
    time it). Without: ``embed_queries([text])``."""

    def encode_query(self, text: str) -> np.ndarray:
        """``(1, dim)`` from the model itself, never a cache (latency is timed on it)."""
        ...


@runtime_checkable
class FullEmbedder(Protocol):
    """An embedder with every capability, as sweep's own is and as the protocol asked of
    every embedder before the three members of :class:`Embedder` sufficed: its
    ``embed_documents`` takes ``what``, the texts' name in its log ("chunks",
    "sentences"), and it has the members of :class:`CountsModelTokens`,
    :class:`HasEmbedStats` and :class:`EncodesQuery`."""

    @property
    def max_seq_length(self) -> int: ...

    @property
    def stats(self) -> EmbedStatsLike: ...

    def reset_stats(self) -> None: ...

    def count_model_tokens(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_documents(self, texts: Sequence[str], what: str = "texts") -> np.ndarray: ...

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray: ...

    def encode_query(self, text: str) -> np.ndarray: ...


@runtime_checkable
class EmbedsLate(Protocol):
    """Late chunking: each document read whole, each chunk's vector pooled from its tokens'."""

    def embed_late(self, documents: Sequence[Document], chunks: Sequence[Chunk]) -> np.ndarray:
        """float32 ``(len(chunks), dim)``, rows aligned with ``chunks``."""
        ...


@runtime_checkable
class MayChunkLate(Protocol):
    """An embedder that may embed a setting's chunks late (``embed.late=true``): its
    ``late_chunker``, None when it embeds chunks on their own. Without: never late."""

    @property
    def late_chunker(self) -> EmbedsLate | None: ...


def embed_named(embedder: Embedder, texts: Sequence[str], what: str) -> np.ndarray:
    """The embedder's vectors of documents ``texts``; a :class:`FullEmbedder` is told that
    they are ``what`` ("chunks", "sentences"), to name them in its log."""
    if isinstance(embedder, FullEmbedder):
        return embedder.embed_documents(texts, what=what)
    return embedder.embed_documents(texts)


def encode_one_query(embedder: Embedder, text: str) -> np.ndarray:
    """``(1, dim)``: the embedder's fresh encode of one query (:class:`EncodesQuery`)."""
    if isinstance(embedder, EncodesQuery):
        return embedder.encode_query(text)
    return np.asarray(embedder.embed_queries([text]), dtype=np.float32).reshape(1, -1)


def late_chunker_of(embedder: object) -> EmbedsLate | None:
    """What embeds the embedder's chunks late, None when they are embedded on their own."""
    return embedder.late_chunker if isinstance(embedder, MayChunkLate) else None


@runtime_checkable
class SearchIndex(Protocol):
    @property
    def ntotal(self) -> int: ...

    def build(self, vectors: np.ndarray) -> None: ...

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-k ``(scores, ids)``, each ``(n_queries, k)``; id -1 where fewer than k."""
        ...


@runtime_checkable
class Retriever(Protocol):
    """Indexes a setting's chunks once, then ranks them for the queries.

    ``needs_vectors`` False (BM25): the pipeline embeds nothing, passes ``None``
    for every vector argument and never loads the embedding model.
    """

    needs_vectors: bool

    def index(self, chunks: Sequence[Chunk], vectors: np.ndarray | None) -> None:
        """Replace what is indexed with ``chunks`` (row i of ``vectors`` is chunk i)."""
        ...

    def retrieve(
        self, queries: Sequence[str], query_vectors: np.ndarray | None, depth: int
    ) -> Ranking:
        """At least ``depth`` chunks per query (fewer only when fewer are indexed),
        scores higher-is-better."""
        ...


# Optional capabilities: a stage that has one gets the extra columns, one without it
# runs the same (a user's own retriever need not report its size).


@runtime_checkable
class SizedRetriever(Protocol):
    """A retriever that says how many vectors its index holds and how many bytes they take."""

    @property
    def ntotal(self) -> int: ...

    @property
    def nbytes(self) -> int | None: ...


@runtime_checkable
class IdentifiedEmbedder(Protocol):
    """An embedder that names its model, weights and input settings in one string: jobs
    whose embedders have the same identity share cached vectors and query-encode timings.
    Every :class:`Embedder` has one; an embedder written for sweep before that may not."""

    @property
    def identity(self) -> str: ...


def identity_of(embedder: object) -> str | None:
    """The embedder's identity, None for one that has none (its vectors are shared with no
    other job)."""
    return (embedder.identity or None) if isinstance(embedder, IdentifiedEmbedder) else None


@runtime_checkable
class TimesQueries(Protocol):
    """An embedder that keeps its fresh-encode time per query (ms), with when and under
    what load it was measured, where a rerun finds it (``retime``: when to measure them
    again, :func:`sweep.core.timing.needs_retime`); None when it has nowhere to keep them."""

    def query_encode_ms(
        self, texts: Sequence[str], *, retime: bool | None = None
    ) -> Timed | None: ...


@runtime_checkable
class LabelledEmbedder(Protocol):
    """An embedder with a short name for logs (the model's name or folder)."""

    @property
    def label(self) -> str: ...


@runtime_checkable
class HoldsSearchIndex(Protocol):
    """A retriever searching a :class:`SearchIndex` (None before the first ``index`` call)."""

    @property
    def search_index(self) -> SearchIndex | None: ...


@runtime_checkable
class ApproximateIndex(Protocol):
    """An index that says whether it may miss true neighbours (HNSW and IVF do)."""

    approximate: bool


class RerankStatsLike(Protocol):
    computed: int  # (query, chunk) pairs run through the model
    cache_hits: int  # pairs whose score came from the cache
    seconds: float  # model time, loading included


@runtime_checkable
class Reranker(Protocol):
    #: How many first-stage chunks per query it re-orders; the first stage retrieves at least these.
    top_n: int

    @property
    def stats(self) -> RerankStatsLike: ...

    def reset_stats(self) -> None: ...

    def rerank(
        self, queries: Sequence[str], chunks: Sequence[Chunk], ranking: Ranking, top_n: int
    ) -> Ranking:
        """``ranking`` with each query's first ``top_n`` chunks re-ordered; the rest keep
        their first-stage order."""
        ...
