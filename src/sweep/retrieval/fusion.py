"""Hybrid retrieval: a dense and a BM25 ranking fused into one.

``rrf``: reciprocal rank fusion, ``sum over lists of 1 / (rrf_k + rank)`` (rank
from 1; a chunk missing from a list gets nothing from it); ties by chunk position.

``weighted``: each list's scores min-max normalised to [0, 1] per query (a chunk
missing from a list gets 0 from it), fused as ``alpha * dense + (1 - alpha) * bm25``;
at equal fused score the chunk that the more heavily weighted side retrieved comes
first, then by position. So ``alpha=1`` is the dense ranking and ``alpha=0`` the
BM25 ranking, exactly, over the first ``candidates`` chunks.

Either way the Ranking's score is the fused score (higher is better).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sweep.core.checks import positive_int
from sweep.core.protocols import SearchIndex
from sweep.core.types import Chunk, Ranking
from sweep.retrieval.dense import DenseRetriever, check_depth, check_k
from sweep.retrieval.lexical import BM25Retriever

__all__ = ["FUSIONS", "HybridRetriever", "reciprocal_rank_fusion", "weighted_fusion"]

FUSIONS = ("rrf", "weighted")


def _ranked(rows: list[list[tuple[float, float, int]]], n: int | None) -> Ranking:
    """Per query ``(fused, secondary, chunk)`` triples -> a Ranking, best first."""
    width = max((len(r) for r in rows), default=0)
    width = width if n is None else min(n, width)
    ids = np.full((len(rows), width), -1, dtype=np.int64)
    scores = np.full((len(rows), width), np.nan, dtype=np.float32)
    for i, row in enumerate(rows):
        best = sorted(row, key=lambda t: (-t[0], -t[1], t[2]))[:width]
        ids[i, : len(best)] = [c for _, _, c in best]
        scores[i, : len(best)] = [s for s, _, _ in best]
    return Ranking(ids, scores)


def reciprocal_rank_fusion(
    rankings: Sequence[Ranking], k: float = 60, n: int | None = None
) -> Ranking:
    """Fuse rankings of the same queries by RRF; ``n`` cuts each fused row (None: keep all)."""
    if not rankings:
        raise ValueError("reciprocal_rank_fusion needs at least one ranking")
    nq = len(rankings[0].ids)
    if any(len(r.ids) != nq for r in rankings):
        raise ValueError("rankings to fuse must have one row per query each, for the same queries")
    rows = []
    for i in range(nq):
        fused: dict[int, float] = {}
        for r in rankings:
            for rank, c in enumerate(r.row(i).tolist(), 1):
                fused[c] = fused.get(c, 0.0) + 1.0 / (k + rank)
        rows.append([(s, 0.0, c) for c, s in fused.items()])
    return _ranked(rows, n)


def _normalised(ids: np.ndarray, scores: np.ndarray) -> dict[int, float]:
    keep = ids >= 0
    ids, s = ids[keep], scores[keep].astype(np.float64)
    if not len(s):
        return {}
    lo, hi = float(s.min()), float(s.max())
    values = (s - lo) / (hi - lo) if hi > lo else np.ones_like(s)
    return dict(zip(ids.tolist(), values.tolist()))


def weighted_fusion(
    dense: Ranking, lexical: Ranking, alpha: float, n: int | None = None
) -> Ranking:
    """``alpha * dense + (1 - alpha) * lexical`` on per-query min-max normalised scores."""
    if len(dense.ids) != len(lexical.ids):
        raise ValueError("rankings to fuse must have one row per query each, for the same queries")
    rows = []
    for i in range(len(dense.ids)):
        d = _normalised(dense.ids[i], dense.scores[i])
        b = _normalised(lexical.ids[i], lexical.scores[i])
        rows.append(
            [
                (
                    alpha * d.get(c, 0.0) + (1 - alpha) * b.get(c, 0.0),
                    alpha * (c in d) + (1 - alpha) * (c in b),
                    c,
                )
                for c in {**d, **b}
            ]
        )
    return _ranked(rows, n)


class HybridRetriever:
    """Dense retrieval over ``index`` and BM25, each retrieving ``candidates`` chunks per
    query, fused by ``fusion`` (``rrf`` with ``rrf_k``, or ``weighted`` with ``alpha``,
    the dense side's weight). The BM25 keys are :class:`~sweep.retrieval.lexical.BM25Retriever`'s."""

    needs_vectors = True

    def __init__(
        self,
        index: SearchIndex | None = None,
        fusion: str = "rrf",
        rrf_k: float = 60,
        alpha: float = 0.5,
        candidates: int = 100,
        depth: int | None = None,
        k1: float = 1.5,
        b: float = 0.75,
        stemmer: str | None = "english",
        stopwords: Any = "en",
        analyzer: str = "auto",
    ) -> None:
        if fusion not in FUSIONS:
            raise ValueError(f"retrieve.fusion must be one of {', '.join(FUSIONS)}, got {fusion!r}")
        if isinstance(rrf_k, bool) or not isinstance(rrf_k, (int, float)) or rrf_k < 0:
            raise ValueError(f"retrieve.rrf_k must be a number ≥ 0, got {rrf_k!r}")
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 <= alpha <= 1:
            raise ValueError(f"retrieve.alpha must be a number in [0, 1], got {alpha!r}")
        positive_int("retrieve.candidates", candidates)
        self.fusion, self.rrf_k, self.alpha = fusion, float(rrf_k), float(alpha)
        self.candidates = candidates
        self.depth = check_depth(depth)
        self.dense = DenseRetriever(index)
        self.lexical = BM25Retriever(
            k1=k1, b=b, stemmer=stemmer, stopwords=stopwords, analyzer=analyzer
        )

    @property
    def ntotal(self) -> int:
        return self.dense.ntotal

    def row_facts(self) -> dict[str, Any]:
        """The BM25 side's (:meth:`~sweep.retrieval.lexical.BM25Retriever.row_facts`)."""
        return self.lexical.row_facts()

    @property
    def search_index(self):
        """The dense side's FAISS index (what ``ann_recall`` measures)."""
        return self.dense.search_index

    @property
    def nbytes(self) -> int | None:
        dense = self.dense.nbytes
        return None if dense is None else dense + self.lexical.nbytes

    def index(self, chunks: Sequence[Chunk], vectors: np.ndarray | None) -> None:
        self.dense.index(chunks, vectors)
        self.lexical.index(chunks)

    def retrieve(self, queries: Sequence[str], query_vectors: np.ndarray | None, k: int) -> Ranking:
        """The fused ``max(k, depth)`` best of the two sides' ``max(candidates, k, depth)``."""
        n = max(check_k(k), self.depth or 0)
        each = max(self.candidates, n)
        dense = self.dense.retrieve(queries, query_vectors, each)
        lexical = self.lexical.retrieve(queries, None, each)
        if self.fusion == "rrf":
            return reciprocal_rank_fusion([dense, lexical], self.rrf_k, n)
        return weighted_fusion(dense, lexical, self.alpha, n)
