"""``sweep.decision.breakdown`` and the worst-queries Markdown."""

import numpy as np

from sweep.decision.breakdown import NO_TYPE, type_breakdown, worst_first
from sweep.reporting.tables import worst_queries_markdown
from sweep.scoring.perquery import PerQueryScores
from sweep.store.traces import Evidence, QueryTrace, Retrieved


def test_type_breakdown_known_values():
    scores = {0: {"q1": 1.0, "q2": 0.0, "q3": 0.5, "q4": 1.0}, 1: {"q1": 0.0, "q2": 0.0, "q3": 1.0}}
    types = {"q1": "fact", "q2": "fact", "q3": "multi", "q4": None}
    tb = type_breakdown(PerQueryScores.from_mapping(scores), types)
    assert tb.types == ("fact", "multi", NO_TYPE) and tb.counts == (2, 1, 1) and tb.jobs == (0, 1)
    np.testing.assert_allclose(tb.means, [[0.5, 0.5, 1.0], [0.0, 1.0, np.nan]])
    assert type_breakdown(PerQueryScores.from_mapping(scores), {"q1": None, "q2": None}) is None


def test_worst_first_orders_by_value_then_by_how_hard_the_query_is_everywhere():
    chosen = {"a": 0.0, "b": 0.0, "c": 1.0, "d": 0.5}
    others = {0: chosen, 1: {"a": 1.0, "b": 0.0, "c": 1.0, "d": 0.5}}
    rows = worst_first(PerQueryScores.from_mapping(others), 0, {})
    assert [r.query_id for r in rows] == ["b", "a", "d", "c"]
    assert (rows[1].across_mean, rows[1].across_min, rows[1].across_max) == (0.5, 0.0, 1.0)


def test_worst_queries_markdown_shows_query_gold_and_chunks():
    t = QueryTrace(
        "q1",
        "Where | is <it>?",
        "fact",
        None,
        (Evidence("a.md", 2, 10, 20, "0123456789"),),
        (
            Retrieved(1, "a.md#0", "a.md", 0, 15, 4, 0.9, "x" * 15),
            Retrieved(2, "b.md#0", "b.md", 0, 9, 3, 0.8, None),
        ),
        {"span": (1,)},
    )
    rows = worst_first(PerQueryScores.from_mapping({0: {"q1": 0.0, "q2": 1.0}}), 0, {"q1": t})
    md = worst_queries_markdown(
        rows, metric="span recall@5", setting="size=64 overlap=0", details=1
    )
    import re

    line = next(line for line in md.splitlines() if line.startswith("| 1 "))
    cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]  # an escaped pipe is text
    assert cells == ["1", "q1", "fact", "0.000", "0.000 [0.00, 0.00]", "Where \\| is &lt;it&gt;?"]
    assert "**Query:** Where \\| is &lt;it&gt;?" in md
    assert "- a.md [10:20], grade 2: “0123456789”" in md
    assert "1. a.md [0:15], 4 tokens, holds 50% of gold 1" in md and "> xxxxxxxxxxxxxxx" in md
    assert "2. b.md [0:9], 3 tokens, no gold" in md
    assert "## 2." not in md  # details for the worst one only; q2 is in the table
    assert any(line.startswith("| 2 ") and "q2" in line for line in md.splitlines())


def test_each_type_on_its_own_metric():
    from sweep.core.evalconfig import EvalConfig
    from sweep.decision.breakdown import type_metric_breakdown
    from sweepdirs import score_table

    table = score_table(
        {
            "recall@5": np.array([1.0, 0.0, 1.0, 0.5]),
            "mrr@5": np.array([0.5, 0.25, 1.0, 1.0]),
            "complete@5": np.array([1.0, 0.0, 0.0, 0.0]),
        }
    )
    types = {"q0": "fact", "q1": "fact", "q2": "multi", "q3": None}
    b = type_metric_breakdown({7: table}, [7], types, EvalConfig())
    assert b.types == ("fact", "multi", NO_TYPE) and b.metrics == (
        "mrr@5",
        "complete@5",
        "recall@5",
    )
    np.testing.assert_allclose(b.means, [[0.375, 0.0, 0.5]])
    assert b.counts == (2, 1, 1)
    assert type_metric_breakdown({7: table}, [7], {"q0": None}, EvalConfig()) is None
