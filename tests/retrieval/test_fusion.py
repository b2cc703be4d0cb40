"""Hybrid retrieval: RRF on hand-made rankings, weighted fusion at its ends, the retriever."""

from __future__ import annotations

import numpy as np
import pytest

from sweep.core.protocols import Retriever
from sweep.core.types import Chunk, Ranking
from sweep.retrieval.dense import DenseRetriever
from sweep.retrieval.fusion import HybridRetriever, reciprocal_rank_fusion, weighted_fusion
from sweep.retrieval.index import FlatIPIndex
from sweep.retrieval.lexical import BM25Retriever


def ranking(rows, scores=None):
    width = max(len(r) for r in rows)
    ids = np.full((len(rows), width), -1, dtype=np.int64)
    sc = np.full((len(rows), width), np.nan, dtype=np.float32)
    for i, r in enumerate(rows):
        ids[i, : len(r)] = r
        sc[i, : len(r)] = scores[i] if scores else np.linspace(1, 0, len(r))
    return Ranking(ids, sc)


def test_rrf_on_hand_made_rankings():
    a = ranking([[3, 1, 2], [0, 1]])
    b = ranking([[1, 4, 3], [1]])
    fused = reciprocal_rank_fusion([a, b], k=60)
    # Query 0: 1 -> 1/62 + 1/61, 3 -> 1/61 + 1/63, 4 -> 1/62, 2 -> 1/63.
    assert fused.row(0).tolist() == [1, 3, 4, 2]
    np.testing.assert_allclose(
        fused.scores[0], [1 / 62 + 1 / 61, 1 / 61 + 1 / 63, 1 / 62, 1 / 63], rtol=1e-6
    )
    # Query 1: 1 -> 1/62 + 1/61 beats 0 -> 1/61; a short row is padded.
    assert fused.row(1).tolist() == [1, 0] and fused.ids[1, 2:].tolist() == [-1, -1]
    assert reciprocal_rank_fusion([a, b], k=60, n=2).ids.tolist() == [[1, 3], [1, 0]]


def test_rrf_ties_go_to_the_earlier_chunk_and_k_matters():
    # 5 first in one list and 2 first in the other: equal fused score, 2 is earlier.
    assert reciprocal_rank_fusion([ranking([[5, 9]]), ranking([[2, 9]])]).row(0).tolist()[:2] == [
        9,
        2,
    ]
    # 8 is second and third; 7 and 9 are first once. k=0 favours the top ranks, k=60 agreement.
    a, b = ranking([[7, 8]]), ranking([[9, 5, 8]])
    assert reciprocal_rank_fusion([a, b], k=0).row(0).tolist() == [7, 9, 8, 5]  # 1 > 1/2 + 1/3
    assert reciprocal_rank_fusion([a, b], k=60).row(0).tolist() == [
        8,
        7,
        9,
        5,
    ]  # 1/62 + 1/63 > 1/61
    with pytest.raises(ValueError, match="same queries"):
        reciprocal_rank_fusion([ranking([[1]]), ranking([[1], [2]])])


def test_weighted_fusion_normalises_each_side():
    dense = ranking([[0, 1, 2]], [[0.9, 0.5, 0.1]])
    bm25 = ranking([[2, 3]], [[12.0, 2.0]])
    fused = weighted_fusion(dense, bm25, alpha=0.5)
    # 0: .5*1, 1: .5*.5, 2: .5*0 + .5*1, 3: .5*0. 0 and 2 tie at 0.5: 2, which both sides
    # retrieved, comes first; then 1, then 3.
    assert fused.row(0).tolist() == [2, 0, 1, 3]
    np.testing.assert_allclose(fused.scores[0], [0.5, 0.5, 0.25, 0.0])


CHUNK_TEXTS = [
    "meal allowance 45 euros",
    "rail travel preferred",
    "sensor calibration yearly",
    "battery lasts 5 years",
    "travel expenses approved",
    "rail tickets",
    "sensor battery",
    "calibration drift",
    "flights need approval",
    "meal travel rail sensor",
]
QUERIES = ["rail travel", "sensor battery calibration", "meal", "approval of flights"]


def _setup(n_candidates, **kw):
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((len(CHUNK_TEXTS), 8)).astype(np.float32)
    vectors[5] = vectors[1]  # an exact dense tie
    qv = rng.standard_normal((len(QUERIES), 8)).astype(np.float32)
    chunks = [Chunk("d", i, 0, len(t), t, 4) for i, t in enumerate(CHUNK_TEXTS)]
    hybrid = HybridRetriever(FlatIPIndex(), candidates=n_candidates, **kw)
    hybrid.index(chunks, vectors)
    dense = DenseRetriever(FlatIPIndex())
    dense.index(chunks, vectors)
    bm25 = BM25Retriever()
    bm25.index(chunks)
    return hybrid, dense, bm25, qv


@pytest.mark.parametrize("k", [1, 4, 10])
def test_weighted_hybrid_at_alpha_1_is_dense_and_at_alpha_0_is_bm25(k):
    for alpha, single in ((1.0, "dense"), (0.0, "bm25")):
        hybrid, dense, bm25, qv = _setup(k, fusion="weighted", alpha=alpha)
        got = hybrid.retrieve(QUERIES, qv, k)
        want = (dense if single == "dense" else bm25).retrieve(QUERIES, qv, k)
        assert got.ids.tolist() == want.ids.tolist(), (alpha, k)


def test_rrf_hybrid_fuses_the_two_sides_it_retrieves():
    hybrid, dense, bm25, qv = _setup(5, fusion="rrf", rrf_k=60)
    assert isinstance(hybrid, Retriever) and hybrid.needs_vectors
    got = hybrid.retrieve(QUERIES, qv, 3)
    want = reciprocal_rank_fusion(
        [dense.retrieve(QUERIES, qv, 5), bm25.retrieve(QUERIES, None, 5)], k=60, n=3
    )
    assert got.ids.tolist() == want.ids.tolist()
    np.testing.assert_allclose(got.scores, want.scores)
    assert np.all(np.diff(got.scores, axis=1) <= 0)  # the fused score, higher is better
    # Each side retrieves at least as many as asked for: a deep k is never cut by candidates.
    assert hybrid.retrieve(QUERIES, qv, 8).depth == 8
    assert HybridRetriever(FlatIPIndex(), candidates=2, depth=6).depth == 6


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"fusion": "max"}, "retrieve.fusion"),
        ({"alpha": 1.5}, "retrieve.alpha"),
        ({"rrf_k": -1}, "retrieve.rrf_k"),
        ({"candidates": 0}, "retrieve.candidates"),
        ({"k1": -2}, "retrieve.k1"),
        ({"depth": 2.5}, "retrieve.depth"),
    ],
)
def test_bad_hybrid_settings_name_their_key(kwargs, match):
    with pytest.raises(ValueError, match=match):
        HybridRetriever(FlatIPIndex(), **kwargs)
