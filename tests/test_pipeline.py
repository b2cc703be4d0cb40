from sweep.data import Chunk
from sweep.pipeline import retrieval_depth


def _chunks(lengths):
    return [Chunk("d", i, 0, 1, "x", n) for i, n in enumerate(lengths)]


def test_depth_covers_max_k():
    assert retrieval_depth(_chunks([100] * 50), ks=[1, 5, 10], budgets=[]) == 10


def test_depth_covers_the_largest_budget_with_the_shortest_chunks():
    # 1024 tokens of 50-token chunks: 20 fit, the 21st ends the prefix.
    assert retrieval_depth(_chunks([50] * 100), ks=[5], budgets=[256, 1024]) == 21
    # Mixed lengths: the shortest ones decide how many could fit.
    assert retrieval_depth(_chunks([10, 10, 500, 500, 500]), ks=[1], budgets=[30]) == 3


def _ranked_lengths(n_chunks, ks, budgets, depth):
    import numpy as np

    from sweep.index import FlatIPIndex
    from sweep.retrieval import DenseRetriever

    index = FlatIPIndex()
    index.build(np.random.default_rng(0).random((n_chunks, 4), dtype=np.float32))
    k = retrieval_depth(_chunks([10] * n_chunks), ks=ks, budgets=budgets)
    query = np.ones((1, 4), dtype=np.float32)
    return len(DenseRetriever(depth=depth).retrieve(index, query, k)[0])


def test_depth_is_capped_by_the_index_and_can_be_raised_but_never_cuts():
    assert retrieval_depth(_chunks([10] * 4), ks=[10], budgets=[1024]) == 4
    assert _ranked_lengths(400, ks=[10], budgets=[], depth=50) == 50
    # A depth below max(k) or the budget's need would score truncated rankings.
    assert _ranked_lengths(40, ks=[10], budgets=[], depth=2) == 10
    assert _ranked_lengths(400, ks=[10], budgets=[1024], depth=7) == 103
