"""FAISS indexes: exact top-k against NumPy, HNSW recall, input validation."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sweep.retrieval.index import FlatIPIndex, HNSWIndex


def unit_rows(rng, n, d):
    x = rng.standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def numpy_topk(docs, queries, k):
    scores = queries.astype(np.float64) @ docs.astype(np.float64).T
    ids = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(scores, ids, axis=1), ids


@settings(max_examples=30, deadline=None)
@given(
    n=st.integers(1, 300),
    d=st.integers(1, 48),
    nq=st.integers(1, 12),
    k=st.integers(1, 20),
    seed=st.integers(0, 2**32 - 1),
)
def test_flat_matches_brute_force(n, d, nq, k, seed):
    rng = np.random.default_rng(seed)
    docs, queries = unit_rows(rng, n, d), unit_rows(rng, nq, d)
    index = FlatIPIndex()
    index.build(docs)
    scores, ids = index.search(queries, k)
    assert scores.dtype == np.float32 and ids.dtype == np.int64
    assert scores.shape == ids.shape == (nq, k)
    kk = min(k, n)
    ref_scores, ref_ids = numpy_topk(docs, queries, kk)
    np.testing.assert_allclose(scores[:, :kk], ref_scores, atol=1e-5)
    # Ids agree wherever the score is not (nearly) tied with a neighbour.
    for q in range(nq):
        for r in range(kk):
            s = ref_scores[q]
            near = np.abs(np.delete(s, r) - s[r]).min() if kk > 1 else 1.0
            if near > 1e-4:
                assert ids[q, r] == ref_ids[q, r]
    assert (ids[:, kk:] == -1).all()


def test_flat_exact_on_a_small_case():
    docs = np.array([[1, 0], [0, 1], [0.6, 0.8]], dtype=np.float32)
    index = FlatIPIndex()
    index.build(docs)
    scores, ids = index.search(np.array([[0.0, 1.0]], dtype=np.float32), 5)
    assert ids.tolist() == [[1, 2, 0, -1, -1]]
    np.testing.assert_allclose(scores[0, :3], [1.0, 0.8, 0.0], atol=1e-6)
    assert index.ntotal == 3 and index.dim == 2
    assert index.describe() == "FlatIP(dim=2, n=3)"


def test_rebuild_replaces_the_previous_vectors():
    index = FlatIPIndex()
    index.build(np.eye(4, dtype=np.float32))
    index.build(np.eye(2, 3, dtype=np.float32))
    assert index.ntotal == 2 and index.dim == 3


def test_hnsw_recall_on_random_data():
    rng = np.random.default_rng(7)
    docs, queries = unit_rows(rng, 3000, 32), unit_rows(rng, 100, 32)
    exact = FlatIPIndex()
    exact.build(docs)
    hnsw = HNSWIndex(m=16, ef_construction=100, ef_search=64)
    hnsw.build(docs)
    _, truth = exact.search(queries, 10)
    _, got = hnsw.search(queries, 10)
    recall = np.mean([len(set(t) & set(g)) / 10 for t, g in zip(truth, got)])
    assert recall >= 0.9
    assert hnsw.ntotal == 3000
    assert hnsw.describe() == "HNSW(m=16, ef_construction=100, ef_search=64, dim=32, n=3000)"


def test_hnsw_is_reproducible():
    rng = np.random.default_rng(3)
    docs, queries = unit_rows(rng, 800, 16), unit_rows(rng, 20, 16)
    results = []
    for _ in range(2):
        index = HNSWIndex(m=8, ef_construction=40, ef_search=16)
        index.build(docs)
        results.append(index.search(queries, 10))
    assert np.array_equal(results[0][1], results[1][1])
    assert np.array_equal(results[0][0], results[1][0])


def test_hnsw_pads_with_minus_one():
    index = HNSWIndex()
    index.build(np.eye(3, dtype=np.float32))
    _, ids = index.search(np.eye(3, dtype=np.float32)[:1], 5)
    assert ids[0, 0] == 0 and sorted(ids[0, :3]) == [0, 1, 2] and ids[0, 3:].tolist() == [-1, -1]


@pytest.mark.parametrize("cls", [FlatIPIndex, HNSWIndex])
def test_empty_index(cls):
    index = cls()
    index.build(np.zeros((0, 4), dtype=np.float32))
    assert index.ntotal == 0
    _scores, ids = index.search(np.ones((2, 4), dtype=np.float32), 3)
    assert ids.shape == (2, 3) and (ids == -1).all()


@pytest.mark.parametrize("cls", [FlatIPIndex, HNSWIndex])
def test_input_validation(cls):
    index = cls()
    with pytest.raises(ValueError, match="not built"):
        index.search(np.ones((1, 4), np.float32), 1)
    bad_builds = [
        (np.ones((3, 4), np.float64), "float32"),
        (np.ones(4, np.float32), "2-D"),
        (np.ones((3, 0), np.float32), "dimension 0"),
        (np.array([[np.nan, 1]], np.float32), "NaN"),
        ([[1.0, 2.0]], "NumPy array"),
    ]
    for vectors, message in bad_builds:
        with pytest.raises(ValueError, match=message) as err:
            index.build(vectors)
        assert "\n" not in str(err.value)
    index.build(np.ones((3, 4), np.float32))
    with pytest.raises(ValueError, match="dim 5, the index has dim 4"):
        index.search(np.ones((1, 5), np.float32), 1)
    with pytest.raises(ValueError, match="float32"):
        index.search(np.ones((1, 4), np.float64), 1)
    for k in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="k must be"):
            index.search(np.ones((1, 4), np.float32), k)


def test_non_contiguous_input_is_accepted():
    docs = np.asfortranarray(np.eye(5, dtype=np.float32))
    index = FlatIPIndex()
    index.build(docs)
    _, ids = index.search(np.eye(5, dtype=np.float32)[::2], 1)
    assert ids[:, 0].tolist() == [0, 2, 4]


@pytest.mark.parametrize(
    "kw", [{"m": 1}, {"m": 0}, {"ef_search": 0}, {"ef_construction": -3}, {"m": 2.5}]
)
def test_hnsw_bad_settings(kw):
    with pytest.raises(ValueError, match="HNSWIndex"):
        HNSWIndex(**kw)
