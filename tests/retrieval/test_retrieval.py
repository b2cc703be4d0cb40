"""Dense retrieval: rank order, caps, depth, and deterministic ties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from sweep.retrieval.dense import DenseRetriever
from sweep.retrieval.index import FlatIPIndex, HNSWIndex


def expected_ranking(docs, queries, n):
    """By score descending, then by chunk position; exact for small integers."""
    scores = queries.astype(np.float64) @ docs.astype(np.float64).T
    out = []
    for row in scores:
        order = np.lexsort((np.arange(len(row)), -row))
        out.append(order[: min(n, len(row))])
    return out


def _retrieve(retriever, index, queries, k):
    """The retriever, handed ``index`` (already built), ranking ``queries`` (vectors)."""
    retriever.search_index = index
    return rows(retriever.retrieve([""] * len(queries), queries, k))


def rows(ranking):
    """A Ranking's rows without padding, as lists of arrays."""
    return [ranking.row(i) for i in range(len(ranking.ids))]


def flat(docs):
    index = FlatIPIndex()
    index.build(docs)
    return index


small_ints = st.integers(-2, 2).map(float)


@settings(max_examples=60, deadline=None)
@given(
    data=st.data(),
    n=st.integers(1, 60),
    d=st.integers(1, 4),
    nq=st.integers(1, 4),
    k=st.integers(1, 70),
)
def test_ranking_with_many_exact_ties(data, n, d, nq, k):
    # Small integer vectors: inner products are exact in float32 and ties are common.
    docs = data.draw(arrays(np.float32, (n, d), elements=small_ints))
    queries = data.draw(arrays(np.float32, (nq, d), elements=small_ints))
    got = _retrieve(DenseRetriever(), flat(docs), queries, k)
    want = expected_ranking(docs, queries, k)
    assert len(got) == nq
    for g, w in zip(got, want):
        assert g.dtype == np.int64
        assert g.tolist() == w.tolist()


def test_ties_at_the_cut_pick_the_earliest_positions():
    docs = np.zeros((50, 2), dtype=np.float32)
    docs[:, 0] = 1.0
    docs[[7, 31], 0] = 2.0  # two clear winners, then 48 equal chunks
    got = _retrieve(DenseRetriever(), flat(docs), np.array([[1.0, 0.0]], np.float32), 5)
    assert got[0].tolist() == [7, 31, 0, 1, 2]


def test_k_is_capped_at_the_index_size_and_padding_dropped():
    docs = np.eye(3, dtype=np.float32)
    got = _retrieve(DenseRetriever(), flat(docs), np.eye(3, dtype=np.float32), 10)
    assert [g.tolist() for g in got] == [[0, 1, 2], [1, 0, 2], [2, 0, 1]]


def test_depth_retrieves_at_least_that_many():
    docs = np.eye(6, dtype=np.float32)
    q = np.eye(6, dtype=np.float32)[:1]
    assert len(_retrieve(DenseRetriever(depth=4), flat(docs), q, 2)[0]) == 4
    assert len(_retrieve(DenseRetriever(depth=2), flat(docs), q, 5)[0]) == 5
    assert len(_retrieve(DenseRetriever(depth=100), flat(docs), q, 1)[0]) == 6


def test_empty_index_gives_empty_rankings():
    index = flat(np.zeros((0, 3), dtype=np.float32))
    got = _retrieve(DenseRetriever(), index, np.ones((2, 3), np.float32), 5)
    assert [g.tolist() for g in got] == [[], []]


def test_works_with_hnsw():
    rng = np.random.default_rng(1)
    docs = rng.standard_normal((200, 8)).astype(np.float32)
    docs /= np.linalg.norm(docs, axis=1, keepdims=True)
    index = HNSWIndex()
    index.build(docs)
    got = _retrieve(DenseRetriever(), index, docs[:3], 5)
    assert [int(g[0]) for g in got] == [0, 1, 2]  # each unit vector finds itself first
    assert all(len(set(g.tolist())) == 5 for g in got)


class _ReversedTiesIndex:
    """Returns equal scores in descending position, as FAISS may."""

    ntotal = 4

    def search(self, queries, k):
        ids = np.array([[3, 2, 1, 0][:k]] * len(queries), dtype=np.int64)
        return np.zeros_like(ids, dtype=np.float32), ids


def test_any_index_with_search_and_ntotal():
    got = _retrieve(DenseRetriever(), _ReversedTiesIndex(), np.zeros((1, 2), np.float32), 2)
    assert got[0].tolist() == [0, 1]


@pytest.mark.parametrize("depth", [0, -1, 2.5, True])
def test_bad_depth(depth):
    with pytest.raises(ValueError, match="retrieve.depth"):
        DenseRetriever(depth=depth)


@pytest.mark.parametrize("k", [0, -3, 1.0])
def test_bad_k(k):
    with pytest.raises(ValueError, match="k must be"):
        _retrieve(
            DenseRetriever(), flat(np.eye(2, dtype=np.float32)), np.eye(2, dtype=np.float32), k
        )


def test_scores_come_with_the_ids():
    docs = np.array([[1.0, 0.0], [0.5, 0.0], [0.0, 1.0]], np.float32)
    dense = DenseRetriever(FlatIPIndex())
    dense.index(["a", "b", "c"], docs)
    r = dense.retrieve(["q"], np.array([[1.0, 0.0]], np.float32), 3)
    assert r.ids.tolist() == [[0, 1, 2]]
    np.testing.assert_allclose(r.scores, [[1.0, 0.5, 0.0]])
    assert r.depth == 3
    small = DenseRetriever(flat(docs[:2]), depth=5).retrieve(
        ["q", "r"], np.eye(2, dtype=np.float32), 5
    )
    assert small.ids.shape == (2, 2) and not np.isnan(small.scores).any()


def test_a_ranking_row_drops_its_padding():
    from sweep.core.types import Ranking

    r = Ranking(
        np.array([[2, 0, -1], [1, -1, -1]]),
        np.array([[0.9, 0.1, np.nan], [0.5, np.nan, np.nan]], dtype=np.float32),
    )
    assert r.row(0).tolist() == [2, 0] and r.row(1).tolist() == [1] and r.depth == 2
    with pytest.raises(ValueError, match="same"):
        Ranking(np.zeros((2, 3), dtype=np.int64), np.zeros((2, 2), dtype=np.float32))


def test_the_dense_retriever_builds_its_index_from_the_chunk_vectors():
    docs = np.eye(3, dtype=np.float32)
    dense = DenseRetriever(HNSWIndex())
    assert dense.needs_vectors
    dense.index(["a", "b", "c"], docs)
    assert dense.search_index.ntotal == 3
    assert dense.retrieve(["q"], docs[2:], 1).ids.tolist() == [[2]]
    with pytest.raises(ValueError, match="needs the chunk vectors"):
        dense.index(["a"], None)
    with pytest.raises(ValueError, match="needs the query vectors"):
        dense.retrieve(["q"], None, 1)
    with pytest.raises(ValueError, match="2 chunks but 3 vectors"):
        dense.index(["a", "b"], docs)
