"""index=ivf (FAISS IVF-Flat) and what an approximate index's rows report (ann_recall@10)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sweep.retrieval.index import ANN_RECALL_K, FlatIPIndex, HNSWIndex, IVFIndex, ann_recall
from sweep.store.stats import Stats


def _vectors(n: int, dim: int = 32, seed: int = 0, clusters: int = 20) -> np.ndarray:
    """Unit vectors around a few centres, as sentence embeddings of a corpus cluster."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((clusters, dim))
    x = centres[rng.integers(0, clusters, n)] + 0.3 * rng.standard_normal((n, dim))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x.astype(np.float32)


def test_cells_are_capped_for_small_corpora():
    assert IVFIndex.cells_for(100, None) == 2  # 4*sqrt(100) = 40, but 100/39 = 2
    assert IVFIndex.cells_for(10, None) == 1
    assert IVFIndex.cells_for(0, None) == 1
    assert IVFIndex.cells_for(1_000_000, None) == 4000
    assert IVFIndex.cells_for(1_000_000, 256) == 256
    assert IVFIndex.cells_for(5000, 1024) == 128  # 5000/39


def test_ivf_finds_the_same_neighbours_as_exact_search_when_it_probes_every_cell():
    x = _vectors(2000)
    q = _vectors(50, seed=1)
    ivf = IVFIndex(nlist=16, nprobe=16)
    ivf.build(x)
    flat = FlatIPIndex()
    flat.build(x)
    assert ivf.ntotal == 2000 and ivf.approximate and not flat.approximate
    s1, i1 = ivf.search(q, 10)
    s2, i2 = flat.search(q, 10)
    np.testing.assert_array_equal(i1, i2)
    np.testing.assert_allclose(s1, s2, rtol=1e-5)
    assert ann_recall(ivf, x, q) == 1.0
    assert "IVF(nlist=16, nprobe=16" in ivf.describe()


def test_probing_fewer_cells_loses_some_neighbours_and_ann_recall_says_how_many():
    x = _vectors(4000, clusters=60)
    q = _vectors(200, seed=2, clusters=60)
    one = IVFIndex(nlist=64, nprobe=1)
    one.build(x)
    many = IVFIndex(nlist=64, nprobe=16)
    many.build(x)
    r1, r16 = ann_recall(one, x, q), ann_recall(many, x, q)
    assert 0.0 < r1 < r16 <= 1.0
    # By hand: the share of exact top-10 ids the index also returns.
    flat = FlatIPIndex()
    flat.build(x)
    _, truth = flat.search(q, ANN_RECALL_K)
    _, got = one.search(q, ANN_RECALL_K)
    by_hand = np.mean([len(set(a) & set(b)) / ANN_RECALL_K for a, b in zip(truth, got)])
    assert r1 == pytest.approx(by_hand)


def test_ivf_is_the_same_every_build():
    x = _vectors(3000)
    q = _vectors(40, seed=3)
    runs = []
    for _ in range(2):
        ivf = IVFIndex(nlist=32, nprobe=2)
        ivf.build(x)
        runs.append(ivf.search(q, 10))
    np.testing.assert_array_equal(runs[0][1], runs[1][1])


def test_ivf_on_fewer_vectors_than_k_and_on_none():
    x = _vectors(5)
    ivf = IVFIndex()
    ivf.build(x)
    _scores, ids = ivf.search(x[:2], 10)
    assert ids.shape == (2, 10) and set(ids[0][:5]) == set(range(5)) and (ids[:, 5:] == -1).all()
    assert ann_recall(ivf, x, x[:2]) == 1.0  # all 5 vectors are the whole target
    empty = IVFIndex()
    empty.build(np.zeros((0, 8), np.float32))
    assert empty.ntotal == 0 and (empty.search(_vectors(1, 8), 3)[1] == -1).all()
    assert np.isnan(ann_recall(empty, np.zeros((0, 8), np.float32), _vectors(1, 8)))


def test_ivf_reports_its_size():
    x = _vectors(1000)
    ivf = IVFIndex()
    ivf.build(x)
    assert ivf.nbytes >= x.nbytes


@pytest.mark.parametrize(
    "kwargs", [{"nlist": 0}, {"nlist": -3}, {"nprobe": 0}, {"nprobe": 1.5}, {"nlist": True}]
)
def test_bad_ivf_settings_are_refused(kwargs):
    with pytest.raises(ValueError, match="IVFIndex: n(list|probe) must be a positive integer"):
        IVFIndex(**kwargs)


def test_hnsw_is_approximate_and_measured_the_same_way():
    x = _vectors(1500)
    hnsw = HNSWIndex(m=8, ef_construction=40, ef_search=16)
    hnsw.build(x)
    assert hnsw.approximate and 0.5 < ann_recall(hnsw, x, _vectors(30, seed=4)) <= 1.0


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 300), st.integers(1, 40), st.integers(1, 12))
def test_ann_recall_is_a_share(n, nlist, nprobe):
    x = _vectors(n, dim=8, seed=n)
    ivf = IVFIndex(nlist=nlist, nprobe=nprobe)
    ivf.build(x)
    r = ann_recall(ivf, x, _vectors(5, dim=8, seed=n + 1))
    assert 0.0 <= r <= 1.0


def test_the_stats_column_round_trips():
    stats = Stats(n_chunks=3, ann_recall=0.875, tokens_at={5: 10.0})
    cols = stats.to_columns()
    assert cols["ann_recall@10"] == 0.875 and "ann_recall" not in cols
    assert Stats.from_columns(cols) == stats
    assert "ann_recall@10" not in Stats(n_chunks=3).to_columns()  # exact rows: no column
    assert Stats.from_columns(Stats(n_chunks=3).to_columns()).ann_recall is None
