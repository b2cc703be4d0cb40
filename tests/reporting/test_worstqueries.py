"""``sweep.reporting.worstqueries``: the worst queries of a setting, gold beside what was retrieved."""

from sweep.decision.breakdown import worst_first
from sweep.reporting.worstqueries import worst_queries_html
from sweep.scoring.perquery import PerQueryScores
from sweep.store.traces import Evidence, QueryTrace, Retrieved


def test_worst_queries_html():
    rec = QueryTrace(
        "q1",
        "Why <not>?",
        "multi",
        None,
        (Evidence("a.md", 1, 5, 10, "56789"),),
        (
            Retrieved(1, "a.md#0", "a.md", 0, 12, 3, 0.9, "0123456789ab"),
            Retrieved(2, "b.md#0", "b.md", 0, 4, 1, 0.8, "zzzz"),
        ),
        {"span": (1,)},
    )
    rows = worst_first(PerQueryScores.from_mapping({0: {"q1": 0.0, "q2": 1.0}}), 0, {"q1": rec})
    html = worst_queries_html(rows, metric="span recall@5", setting="size=64", details=5)
    assert "Why &lt;not&gt;?" in html and "01234<mark>56789</mark>ab" in html
    assert "holds 100% of gold 1" in html and "no gold" in html
    assert "(no saved hits)" in html  # q2 has no hits.jsonl line
    assert html.index(">q1<") < html.index(">q2<")
