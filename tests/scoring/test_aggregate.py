"""Aggregation: means over included queries, exclusions counted, reproducible bootstrap intervals."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sweep.core.measures import Measure
from sweep.core.types import Hit, Judgment, Query
from sweep.scoring.aggregate import bootstrap_means, summarize
from sweep.scoring.credit import score_queries
from sweep.scoring.table import ScoreTable


def seed_003():
    """The five questions of seed 003: top 3 and correct documents by number."""
    rows = [
        ((1, 5, 4), (1, 5)),
        ((3, 9, 0), (3, 9)),
        ((4, 6, 0), (4,)),
        ((7, 0, 1), (7,)),
        ((11, 9, 10), (11, 0)),
    ]
    queries = [
        Query(f"q{i}", "", tuple(Judgment(str(d)) for d in rel)) for i, (_, rel) in enumerate(rows)
    ]
    runs = {f"q{i}": [Hit(str(d)) for d in top] for i, (top, _) in enumerate(rows)}
    return queries, runs


def test_seed_003_table_means() -> None:
    queries, runs = seed_003()
    ms = [Measure.parse(m) for m in ("precision@3", "recall@3", "ndcg@3")]
    table = score_queries(queries, runs, ms)
    assert table.values("doc", "ndcg@3")["q4"] == pytest.approx(0.613, abs=5e-4)  # the low row
    doc = summarize(table, queries).levels["doc"]
    assert doc.n_queries == 5 and doc.n_excluded == 0
    assert round(doc.metrics["precision@3"].mean, 3) == 0.467
    assert round(doc.metrics["recall@3"].mean, 3) == 0.900
    assert round(doc.metrics["ndcg@3"].mean, 3) == 0.923


def test_queries_without_units_are_excluded_and_counted() -> None:
    queries = [
        Query("found", "", (Judgment("a", 0, 10),)),
        Query("missed", "", (Judgment("b"),)),
        Query("unanswerable", "", ()),
        Query("judged-irrelevant", "", (Judgment("c", grade=0),)),
    ]
    runs = {"found": [Hit("a", 0, 10)], "missed": [Hit("x")], "unanswerable": [Hit("a", 0, 10)]}
    table = score_queries(queries, runs, [Measure("recall", k=1), Measure("cov_recall", k=1)])
    summary = summarize(table, queries)
    doc, span = summary.levels["doc"], summary.levels["span"]
    assert (doc.n_queries, doc.n_excluded) == (2, 2)
    assert (span.n_queries, span.n_excluded) == (1, 3)
    assert doc.metrics["recall@1"].mean == 0.5  # not 0.25: excluded queries are not zeros
    assert span.metrics["recall@1"].mean == 1.0
    assert "cov_recall@1" not in doc.metrics


def test_interval_is_reproducible_and_seeded() -> None:
    rng = np.random.default_rng(7)
    values = rng.random((50, 3))
    a = bootstrap_means(values, n_boot=500, seed=[0, 0], confidence=0.95)
    b = bootstrap_means(values, n_boot=500, seed=[0, 0], confidence=0.95)
    c = bootstrap_means(values, n_boot=500, seed=[1, 0], confidence=0.95)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.array_equal(a[0], c[0])


def test_bootstrap_is_the_plain_percentile_bootstrap() -> None:
    rng = np.random.default_rng(3)
    values = rng.random((40, 2))
    low, high = bootstrap_means(values, n_boot=300, seed=5, confidence=0.9)
    picks = np.random.default_rng(5).integers(0, 40, size=(300, 40))
    means = values[picks].mean(axis=1)  # (300, 2)
    np.testing.assert_allclose(low, np.quantile(means, 0.05, axis=0), rtol=1e-12)
    np.testing.assert_allclose(high, np.quantile(means, 0.95, axis=0), rtol=1e-12)


def test_interval_width_matches_the_standard_error() -> None:
    # 400 coin flips: the 95% interval of the mean is about ±1.96 * 0.025.
    values = (np.arange(400) % 2).astype(float)[:, None]
    low, high = bootstrap_means(values, n_boot=2000, seed=0, confidence=0.95)
    assert 0.08 < float(high[0] - low[0]) < 0.115
    assert low[0] < 0.5 < high[0]


def test_adding_a_metric_does_not_move_another_metrics_interval() -> None:
    queries, runs = seed_003()
    one = summarize(score_queries(queries, runs, [Measure("ndcg", k=3)]), queries)
    two = summarize(
        score_queries(queries, runs, [Measure("recall", k=1), Measure("ndcg", k=3)]), queries
    )
    assert one.levels["doc"].metrics["ndcg@3"] == two.levels["doc"].metrics["ndcg@3"]


def test_single_query_and_constant_metric_have_degenerate_intervals() -> None:
    queries = [Query("q", "", (Judgment("a"),))]
    table = score_queries(queries, {"q": [Hit("b"), Hit("a")]}, [Measure("mrr", k=2)])
    m = summarize(table, queries).levels["doc"].metrics["mrr@2"]
    assert (m.mean, m.ci_low, m.ci_high) == (0.5, 0.5, 0.5)


def test_to_dict_layout_and_markdown() -> None:
    queries, runs = seed_003()
    queries.append(Query("span-q", "", (Judgment("1", 0, 4),)))
    runs["span-q"] = [Hit("1", 0, 4)]
    table = score_queries(queries, runs, [Measure("recall", k=3), Measure("cov_iou", k=3)])
    summary = summarize(table, queries, n_boot=200, seed=3)
    d = json.loads(json.dumps(summary.to_dict()))
    assert d["bootstrap"] == {"n_boot": 200, "confidence": 0.95, "seed": 3}
    assert set(d["levels"]) == {"doc", "span"}
    assert d["levels"]["doc"]["n_queries"] == 6 and d["levels"]["span"]["n_excluded"] == 5
    assert set(d["levels"]["doc"]["metrics"]["recall@3"]) == {"mean", "ci_low", "ci_high"}
    assert d["levels"]["doc"]["metrics"]["recall@3"]["mean"] == pytest.approx(5.5 / 6)  # unrounded
    md = summary.to_markdown()
    assert "| metric | doc (n=6, excluded 0) | span (n=1, excluded 5) |" in md
    assert "| recall@3 | 0.917 [" in md
    assert "| cov_iou@3 | — | 1.000 [1.000, 1.000] |" in md


def test_table_and_queries_must_match() -> None:
    queries, runs = seed_003()
    table = score_queries(queries, runs, [Measure("recall", k=3)])
    with pytest.raises(ValueError, match="not among the queries"):
        summarize(table, queries[:-1])
    extra = queries + [Query("new", "", (Judgment("1"),))]
    with pytest.raises(ValueError, match="lacks doc-level values"):
        summarize(table, extra)
    with pytest.raises(ValueError, match="n_boot"):
        summarize(table, queries, n_boot=0)


def test_summary_of_a_table_read_back_from_csv(tmp_path) -> None:
    queries, runs = seed_003()
    table = score_queries(queries, runs, [Measure("ndcg", k=3)])
    table.write_csv(tmp_path / "t.csv")
    again = ScoreTable.read_csv(tmp_path / "t.csv")
    assert summarize(again, queries).to_dict() == summarize(table, queries).to_dict()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=60), st.integers(0, 2**32 - 1))
def test_interval_stays_within_the_data(values, seed) -> None:
    data = np.asarray(values)[:, None]
    low, high = bootstrap_means(data, n_boot=200, seed=seed, confidence=0.95)
    assert data.min() - 1e-12 <= low[0] <= high[0] <= data.max() + 1e-12
