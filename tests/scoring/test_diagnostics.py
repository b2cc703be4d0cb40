"""``sweep.scoring.diagnostics``: two-hop failure classes and abstention (seeds 000 and 002)."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sweep.core.types import Chunk, Judgment, Query
from sweep.scoring.credit import credit_units
from sweep.scoring.diagnostics import (
    TWOHOP_CLASSES,
    Diagnostics,
    abstention,
    auroc,
    best_threshold,
    diagnose,
    twohop_class,
    twohop_counts,
    twohop_queries,
)


@pytest.mark.parametrize(
    "ranks,k,cls",
    [
        ((1, 2), 5, "complete"),
        ((5, 5), 5, "complete"),
        ((1, 7), 5, "ranked_out"),  # both retrieved, one below k: a larger k would do
        ((9, 8), 5, "ranked_out"),
        ((None, 2), 5, "hop1_missed"),
        ((None, 9), 5, "hop1_missed"),
        ((1, None), 5, "hop2_missed"),
        ((None, None), 5, "both_missed"),
        ((1, 2, None), 5, "hop2_missed"),  # more spans: "hop 2" is any span after the first
        ((None, 2, 3), 5, "hop1_missed"),
        ((None, 2, None), 5, "both_missed"),
        ((1, 2, 6), 5, "ranked_out"),
        ((3, 1, 2), 3, "complete"),
    ],
)
def test_every_two_hop_class_on_hand_built_rankings(ranks, k, cls):
    assert twohop_class(ranks, k) == cls


def test_one_span_is_not_a_two_hop_query():
    with pytest.raises(ValueError, match="two or more"):
        twohop_class((1,), 5)


def test_counts_and_shares():
    t = twohop_counts({"a": (1, 2), "b": (None, 1), "c": (1, 9), "d": (1, 3)}, 5)
    assert t.n == 4 and t.counts["complete"] == 2 and t.share("complete") == 0.5
    assert sum(t.counts.values()) == 4 and set(t.counts) == set(TWOHOP_CLASSES)
    assert twohop_counts({"a": (1, 2), "c": (1, 9)}, 10).counts["complete"] == 2


def _brute_auroc(pos, neg):
    wins = sum((p > n) + 0.5 * (p == n) for p, n in itertools.product(pos, neg))
    return wins / (len(pos) * len(neg))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(-5, 5), min_size=1, max_size=30),
    st.lists(st.integers(-5, 5), min_size=1, max_size=30),
)
def test_auroc_equals_the_pairwise_count_with_ties_as_half(pos, neg):
    # Small integers: ties are frequent.
    assert auroc(np.array(pos, float) / 4, np.array(neg, float) / 4) == pytest.approx(
        _brute_auroc(pos, neg)
    )


def test_threshold_search_on_a_small_case():
    pos = np.array([0.9, 0.8, 0.7, 0.4])
    neg = np.array([0.5, 0.3])
    # Answer when score >= t. t=0.7: answers 3/4, declines 2/2 -> balanced 0.875, the best.
    t, balanced = best_threshold(pos, neg)
    assert (t, balanced) == (0.7, 0.875)
    # Perfect separation: the lowest threshold that declines every negative.
    assert best_threshold(np.array([0.9, 0.8]), np.array([0.1, 0.2])) == (0.8, 1.0)
    # Everything equal: declining everything is no better than answering everything; lowest wins.
    assert best_threshold(np.array([0.5]), np.array([0.5])) == (0.5, 0.5)


def test_abstention_numbers_and_interval():
    rng = np.random.default_rng(0)
    pos, neg = rng.normal(1.0, 0.5, 150), rng.normal(0.0, 0.5, 20)
    a = abstention(pos, neg, n_boot=500, seed=0)
    assert a.auroc == pytest.approx(_brute_auroc(pos, neg))
    assert a.auroc_low < a.auroc < a.auroc_high and a.n_answerable == 150 and a.n_unanswerable == 20
    assert a.declined_unanswerable == pytest.approx(float((neg < a.threshold).mean()))
    assert a.declined_answerable == pytest.approx(float((pos < a.threshold).mean()))
    assert abstention(pos, neg, n_boot=500, seed=0) == a  # seeded
    assert abstention(pos, np.array([]), n_boot=10) is None
    assert Diagnostics.from_dict(Diagnostics((), a).to_dict()).abstention == a


def test_diagnose_picks_the_multi_hop_queries_and_the_top_scores():
    chunks = [Chunk("d", i, 10 * i, 10 * i + 10, "x" * 10, 3) for i in range(4)]
    queries = [
        Query("m", "?", (Judgment("d", 0, 10), Judgment("d", 30, 40)), type="multi"),
        Query("g", "?", (Judgment("d", 0, 10, 2), Judgment("d", 10, 20)), type="graded"),
        Query("f", "?", (Judgment("d", 10, 20),), type="fact"),
        Query("u", "?", (), type="unanswerable"),
    ]
    ranking = np.array([[0, 1, -1, -1], [2, 0, 1, -1], [1, 0, -1, -1], [3, -1, -1, -1]])
    credits = credit_units(queries, ranking, chunks)
    assert set(twohop_queries(queries, credits, ("multi",))) == {"m"}
    assert set(twohop_queries(queries, credits, None)) == {"m", "g"}
    untyped = [Query(q.query_id, q.query, q.relevant) for q in queries]
    assert set(twohop_queries(untyped, credit_units(untyped, ranking, chunks), ("multi",))) == {
        "m",
        "g",
    }
    d = diagnose(
        queries,
        credits,
        np.array([0.9, 0.8, 0.7, 0.1]),
        ks=(1, 5),
        twohop_types=("multi",),
        n_boot=50,
        seed=0,
    )
    # "m": span 1 (chunk 0) at rank 1, span 2 (chunk 3) never retrieved.
    assert d.twohop_at(5).counts["hop2_missed"] == 1 and d.twohop_at(1).n == 1
    assert d.abstention.n_unanswerable == 1 and d.abstention.auroc == 1.0
    cols = d.columns()
    assert cols["span.twohop_hop2_missed@5"] == 1.0 and cols["span.twohop_hop2_missed@5.n"] == 1
    assert cols["abstain.auroc"] == 1.0 and "abstain.threshold" in cols
