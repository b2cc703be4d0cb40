"""Dense retrieval: query vectors -> ranked chunk positions per query, through a FAISS index."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sweep.core.checks import positive_int
from sweep.core.protocols import SearchIndex
from sweep.core.types import Chunk, Ranking

__all__ = ["DenseRetriever", "check_depth"]


def check_depth(depth: int | None) -> int | None:
    return positive_int("retrieve.depth", depth, allow_null=True)


def check_k(k: int) -> int:
    return positive_int("retrieve: k", k)


class DenseRetriever:
    """Ranks chunks by the index's score, ties broken by chunk position.

    ``index`` is the search index it builds from the chunk vectors (the
    ``index`` config group; exact inner product when not given). ``depth``:
    retrieve at least this many chunks per query even when ``k`` is smaller
    (token-budget metrics can need more chunks than the largest k).
    """

    needs_vectors = True

    def __init__(self, index: SearchIndex | None = None, depth: int | None = None) -> None:
        if index is None:
            from sweep.retrieval.index import FlatIPIndex

            index = FlatIPIndex()
        self.search_index = index
        self.depth = check_depth(depth)

    @property
    def ntotal(self) -> int:
        return 0 if self.search_index is None else int(self.search_index.ntotal)

    @property
    def nbytes(self) -> int | None:
        """The FAISS index's own size (None for an index that cannot say)."""
        return getattr(self.search_index, "nbytes", None)

    def index(self, chunks: Sequence[Chunk], vectors: np.ndarray | None) -> None:
        if vectors is None:
            raise ValueError("dense retrieval needs the chunk vectors")
        if len(vectors) != len(chunks):
            raise ValueError(f"{len(chunks)} chunks but {len(vectors)} vectors")
        self.search_index.build(np.ascontiguousarray(vectors, dtype=np.float32))

    def retrieve(self, queries: Sequence[str], query_vectors: np.ndarray | None, k: int) -> Ranking:
        """Per query, chunk positions in rank order and their scores
        (``min(max(k, depth), ntotal)`` of them). ``queries`` (the texts) are not read."""
        k = check_k(k)
        if query_vectors is None:
            raise ValueError("dense retrieval needs the query vectors")
        query_vectors = np.ascontiguousarray(query_vectors, dtype=np.float32)
        index = self.search_index
        n = min(max(k, self.depth or 0), index.ntotal)
        nq = len(query_vectors)
        if n == 0:
            return Ranking(np.zeros((nq, 0), dtype=np.int64), np.zeros((nq, 0), dtype=np.float32))
        # Equal scores can straddle the cut; fetch past it until the tie group
        # at the cut is complete, so the choice among equals is by position and
        # not by the index's internal order.
        fetch = min(index.ntotal, max(2 * n, n + 8))
        while True:
            scores, ids = index.search(query_vectors, fetch)
            ranked = [_rank(s, i) for s, i in zip(scores, ids)]
            # Complete when every row's score at the cut differs from the last
            # fetched score (exact search then returned all of its equals).
            if fetch >= index.ntotal or all(
                len(rs) < fetch or rs[-1] != rs[n - 1] for rs, _ in ranked
            ):
                break
            fetch = min(index.ntotal, 2 * fetch)
        ids = np.full((nq, n), -1, dtype=np.int64)
        scores = np.full((nq, n), np.nan, dtype=np.float32)
        for i, (row_scores, order) in enumerate(ranked):
            ids[i, : len(order[:n])] = order[:n]
            scores[i, : len(row_scores[:n])] = row_scores[:n]
        return Ranking(ids, scores)


def _rank(scores: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    keep = ids >= 0
    scores, ids = scores[keep], ids[keep].astype(np.int64)
    order = np.lexsort((ids, -scores.astype(np.float64)))
    return scores[order], ids[order]
