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


def test_depth_is_capped_by_the_index_and_can_be_raised_but_never_cuts():
    assert retrieval_depth(_chunks([10] * 4), ks=[10], budgets=[1024]) == 4
    assert retrieval_depth(_chunks([10] * 400), ks=[10], budgets=[], depth=50) == 50
    # A depth below max(k) or the budget's need would score truncated rankings.
    assert retrieval_depth(_chunks([10] * 40), ks=[10], budgets=[], depth=2) == 10
    assert retrieval_depth(_chunks([10] * 400), ks=[10], budgets=[1024], depth=7) == 103
