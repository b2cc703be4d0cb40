"""What each stage of a setting must offer: the protocols ``evaluate_setting`` is typed with.

``Document`` → :class:`Chunker` → ``Chunk``s → :class:`Embedder` → float32 ``(n, d)``
vectors → :class:`Retriever` (a dense one holds a :class:`SearchIndex`) →
:class:`~sweep.core.types.Ranking` → optionally a :class:`Reranker` → ``Ranking``.
sweep's own classes satisfy them; so does anything a user points a ``_target_`` at
that has these members (the tests run the pipeline with small fakes).
"""

from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable

import numpy as np

from sweep.core.timing import Timed
from sweep.core.types import Chunk, Document, Ranking

__all__ = ["ApproximateIndex", "Chunker", "DocumentChunker", "EmbedStatsLike", "Embedder",
           "HasNotes", "HoldsSearchIndex", "IdentifiedEmbedder", "LabelledEmbedder",
           "identity_of",
           "RerankStatsLike", "Reranker", "Retriever", "SearchIndex", "SizedRetriever", "TimesQueries"]


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


class EmbedStatsLike(Protocol):
    embedded: int
    cache_hits: int
    cache_misses: int
    seconds: float
    load_seconds: float


@runtime_checkable
class Embedder(Protocol):
    @property
    def max_seq_length(self) -> int: ...

    @property
    def stats(self) -> EmbedStatsLike: ...

    def reset_stats(self) -> None: ...

    def count_model_tokens(self, texts: Sequence[str]) -> np.ndarray:
        """Length of each text in the model's own tokens, as it would be embedded."""
        ...

    def embed_documents(self, texts: Sequence[str], what: str = "texts") -> np.ndarray:
        """``what`` names the texts in the log (chunks, sentences)."""
        ...

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray: ...

    def encode_query(self, text: str) -> np.ndarray:
        """``(1, dim)`` from the model itself, never a cache (latency is timed on it)."""
        ...


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

    def retrieve(self, queries: Sequence[str], query_vectors: np.ndarray | None,
                 depth: int) -> Ranking:
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
    whose embedders have the same identity share cached vectors and query-encode timings."""

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

    def query_encode_ms(self, texts: Sequence[str], *,
                        retime: bool | None = None) -> Timed | None: ...


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
    computed: int     # (query, chunk) pairs run through the model
    cache_hits: int   # pairs whose score came from the cache
    seconds: float    # model time, loading included


@runtime_checkable
class Reranker(Protocol):
    #: How many first-stage chunks per query it re-orders; the first stage retrieves at least these.
    top_n: int

    @property
    def stats(self) -> RerankStatsLike: ...

    def reset_stats(self) -> None: ...

    def rerank(self, queries: Sequence[str], chunks: Sequence[Chunk], ranking: Ranking,
               top_n: int) -> Ranking:
        """``ranking`` with each query's first ``top_n`` chunks re-ordered; the rest keep
        their first-stage order."""
        ...
