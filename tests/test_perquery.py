import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sweep.perquery import (NO_TYPE, Evidence, QueryRecord, ReportError, Retrieved, first_relevant_ranks,
                            read_hits, read_scores, type_breakdown, worst_first, worst_queries_markdown)


def test_read_scores_skips_excluded_queries_and_keeps_only_what_is_wanted(tmp_path):
    path = tmp_path / "per_query.csv"
    path.write_text("query_id,level,metric,value\nq1,span,recall@5,1.0\nq2,span,recall@5,0.5\n"
                    "q3,span,recall@5,\nq4,span,recall@5,nan\nq1,doc,recall@5,0.25\n")
    sheet = read_scores(path, {("span", "recall@5")})
    assert sheet.get("span", "recall@5") == {"q1": 1.0, "q2": 0.5}
    assert sheet.get("doc", "recall@5") == {}
    assert read_scores(path).get("doc", "recall@5") == {"q1": 0.25}


def test_read_scores_rereads_a_changed_file(tmp_path):
    path = tmp_path / "per_query.csv"
    path.write_text("query_id,level,metric,value\nq1,span,recall@5,1.0\n")
    assert read_scores(path).get("span", "recall@5") == {"q1": 1.0}
    path.write_text("query_id,level,metric,value\nq1,span,recall@5,0.0\nq2,span,recall@5,1.0\n")
    assert read_scores(path).get("span", "recall@5") == {"q1": 0.0, "q2": 1.0}


@pytest.mark.parametrize("text,where,problem", [
    ("query_id,level,metric,value\nq1,span,recall@5,abc\n", ":2:", "'abc' is not a number"),
    ("query_id,level,metric,value\nq1,span\n", ":2:", "expected 4 columns"),
    ("id,level,metric,value\n", ":1:", "expected the header"),
])
def test_bad_score_files_name_file_and_line(tmp_path, text, where, problem):
    path = tmp_path / "per_query.csv"
    path.write_text(text)
    with pytest.raises(ReportError) as e:
        read_scores(path)
    assert f"{path}{where}" in str(e.value) and problem in str(e.value) and "\n" not in str(e.value)


def _record(i=1, **kw):
    return {"query_id": f"q{i}", "query": "Where?", "type": "fact",
            "gold": [{"doc_id": "a.md", "grade": 2, "start": 10, "end": 20, "text": "0123456789"}],
            "hits": [{"rank": 1, "chunk_id": "a.md#0", "doc_id": "a.md", "start": 0, "end": 15,
                      "n_tokens": 4, "text": "x" * 15},
                     {"rank": 2, "chunk_id": "b.md#0", "doc_id": "b.md", "start": 0, "end": 9,
                      "n_tokens": 3}], **kw}


def test_read_hits(tmp_path):
    path = tmp_path / "hits.jsonl"
    path.write_text(json.dumps(_record(1)) + "\n\n" + json.dumps(_record(2, type=None)) + "\n")
    recs = read_hits(path)
    assert list(recs) == ["q1", "q2"] and recs["q2"].type is None
    assert recs["q1"].gold[0] == Evidence("a.md", 2, 10, 20, "0123456789")
    assert recs["q1"].hits[1] == Retrieved(2, "b.md", 0, 9, 3, None)


@pytest.mark.parametrize("line,problem", [("{not json", "bad JSON"),
                                          ('{"query": "x"}', "missing key 'query_id'"),
                                          ('{"query_id": "q", "hits": [{"rank": "one"}]}', "malformed")])
def test_bad_hits_files_name_file_and_line(tmp_path, line, problem):
    path = tmp_path / "hits.jsonl"
    path.write_text(json.dumps(_record()) + "\n" + line + "\n")
    with pytest.raises(ReportError) as e:
        read_hits(path)
    assert f"{path}:2:" in str(e.value) and problem in str(e.value)


def test_overlap_of_a_chunk_with_gold_evidence():
    hit = Retrieved(1, "a.md", 0, 15, 4, None)
    assert hit.overlaps(Evidence("a.md", 1, 10, 20, None)) == (10, 15)
    assert hit.gold_share(Evidence("a.md", 1, 10, 20, None)) == 0.5
    assert hit.overlaps(Evidence("a.md", 1, 15, 20, None)) is None  # end is exclusive
    assert hit.overlaps(Evidence("b.md", 1, 0, 5, None)) is None
    assert hit.gold_share(Evidence("a.md", 1, None, None, None)) == 1.0  # a whole document


def test_first_relevant_ranks_from_mrr():
    assert first_relevant_ranks({"a": 1.0, "b": 0.5, "c": 0.0, "d": 1 / 3}) == {"a": 1, "b": 2, "c": 0, "d": 3}


@given(st.integers(1, 1000))
def test_first_relevant_rank_round_trips_through_mrr(rank):
    assert first_relevant_ranks({"q": 1.0 / rank}) == {"q": rank}


def test_type_breakdown_known_values():
    scores = {0: {"q1": 1.0, "q2": 0.0, "q3": 0.5, "q4": 1.0}, 1: {"q1": 0.0, "q2": 0.0, "q3": 1.0}}
    types = {"q1": "fact", "q2": "fact", "q3": "multi", "q4": None}
    tb = type_breakdown(scores, types)
    assert tb.types == ("fact", "multi", NO_TYPE) and tb.counts == (2, 1, 1) and tb.jobs == (0, 1)
    np.testing.assert_allclose(tb.means, [[0.5, 0.5, 1.0], [0.0, 1.0, np.nan]])
    assert type_breakdown(scores, {"q1": None, "q2": None}) is None


def test_worst_first_orders_by_value_then_by_how_hard_the_query_is_everywhere():
    chosen = {"a": 0.0, "b": 0.0, "c": 1.0, "d": 0.5}
    others = {0: chosen, 1: {"a": 1.0, "b": 0.0, "c": 1.0, "d": 0.5}}
    rows = worst_first(chosen, others, {})
    assert [r.query_id for r in rows] == ["b", "a", "d", "c"]
    assert (rows[1].across_mean, rows[1].across_min, rows[1].across_max) == (0.5, 0.0, 1.0)


def test_worst_queries_markdown_shows_query_gold_and_chunks():
    rec = QueryRecord("q1", "Where | is <it>?", "fact", (Evidence("a.md", 2, 10, 20, "0123456789"),),
                      (Retrieved(1, "a.md", 0, 15, 4, "x" * 15), Retrieved(2, "b.md", 0, 9, 3, None)))
    rows = worst_first({"q1": 0.0, "q2": 1.0}, {0: {"q1": 0.0, "q2": 1.0}}, {"q1": rec})
    md = worst_queries_markdown(rows, metric="span recall@5", setting="size=64 overlap=0", details=1)
    assert "| 1 | q1 | fact | 0.000 | 0.000 [0.00, 0.00] | Where \\| is &lt;it>? |" in md
    assert "**Query:** Where | is &lt;it>?" in md
    assert "- a.md [10:20], grade 2: “0123456789”" in md
    assert "1. a.md [0:15], 4 tokens, holds 50% of gold 1" in md and "> xxxxxxxxxxxxxxx" in md
    assert "2. b.md [0:9], 3 tokens, no gold" in md
    assert "## 2." not in md  # details for the worst one only; q2 is in the table
    assert "| 2 | q2 |" in md
