"""``sweep.store.traces``: hits.jsonl written and read back."""

import json
import re

import numpy as np
import pytest

from sweep.core.types import Chunk, Dataset, Document, Judgment, Query, Ranking
from sweep.scoring.credit import credit_units
from sweep.store.traces import (
    Evidence,
    Provenance,
    QueryTrace,
    Retrieved,
    TraceError,
    read_traces,
    traces_of,
    write_traces,
)


def _trace(i=1, **kw):
    fields = dict(
        query_id=f"q{i}",
        query="Where?",
        type="fact",
        source=None,
        gold=(Evidence("a.md", 2, 10, 20, "0123456789"),),
        hits=(
            Retrieved(1, "a.md#0", "a.md", 0, 15, 4, 0.75, "x" * 15),
            Retrieved(2, "b.md#0", "b.md", 0, 9, 3, 0.5, "y" * 9),
        ),
        credits={"doc": (1,), "span": (None,)},
    )
    fields.update(kw)
    return QueryTrace(**fields)


def test_traces_round_trip(tmp_path):
    path = tmp_path / "hits.jsonl"
    write_traces(path, [_trace(1), _trace(2, type=None, source="synthetic")])
    got = read_traces(path)
    assert got == {"q1": _trace(1), "q2": _trace(2, type=None, source="synthetic")}
    assert got["q1"].first_relevant("doc") == 1 and got["q1"].first_relevant("span") is None


def test_traces_of_a_ranking_hold_text_scores_and_exact_credit_ranks():
    doc = Document("a.md", "0123456789" * 4)
    chunks = [
        Chunk("a.md", i, 10 * i, 10 * i + 10, doc.text[10 * i : 10 * i + 10], 3) for i in range(4)
    ]
    queries = (
        Query("q", "where?", (Judgment("a.md", 20, 30), Judgment("a.md", 0, 10)), type="multi"),
        Query("none", "nothing?", ()),
    )
    ds = Dataset("d", (doc,), queries)
    ranking = Ranking(
        np.array([[3, 2, 1, 0], [0, 1, -1, -1]]),
        np.array([[0.9, 0.8, 0.7, 0.6], [0.5, 0.4, np.nan, np.nan]], np.float32),
    )
    credits = credit_units(queries, ranking.ids, chunks)
    traces = traces_of(ds, chunks, ranking, credits, top_k=2)
    q = traces[0]
    assert [h.chunk_id for h in q.hits] == ["a.md#3", "a.md#2"]  # top_k only
    assert [h.score for h in q.hits] == pytest.approx([0.9, 0.8])
    assert q.hits[1].text == "0123456789"
    # Span 1 (20:30) is chunk 2 at rank 2; span 2 (0:10) is chunk 0 at rank 4: beyond top_k,
    # but within the ranking, so its credit rank is kept.
    assert q.credits == {"doc": (1,), "span": (2, 4)}
    assert q.first_relevant("span") == 2
    assert traces[1].credits == {} and traces[1].gold == ()


def test_traces_of_a_paged_document_hold_page_credits_and_each_hits_pages(tmp_path):
    text = "東京都の図書館は午前九時に開館します。" * 4  # four pages of 19 characters
    pages = [[19 * i, 19 * i + 19] for i in range(4)]
    doc = Document("m.pdf", text, metadata={"pages": pages})
    chunks = [Chunk("m.pdf", i, 25 * i, min(25 * i + 25, 76), "", 9) for i in range(4)]
    chunks = [Chunk(c.doc_id, c.index, c.start, c.end, text[c.start : c.end], 9) for c in chunks]
    # the evidence runs from page 2 into page 3: two page units
    on = ((2, 19, 38), (3, 38, 57))
    queries = (Query("q", "開館は何時ですか", (Judgment("m.pdf", 30, 45, pages=on),)),)
    ranking = Ranking(np.array([[3, 1, 0, 2]]), np.array([[0.9, 0.8, 0.7, 0.6]], np.float32))
    credits = credit_units(queries, ranking.ids, chunks)
    (trace,) = traces_of(Dataset("d", (doc,), queries), chunks, ranking, credits, top_k=4)
    # chunk 3 (75:76) is on page 4; chunk 1 (25:50) is on pages 2-3 and credits both
    assert [h.pages for h in trace.hits] == ["4", "2-3", "1-2", "3-4"]
    assert trace.credits["page"] == (2, 2) and trace.first_relevant("page") == 2
    write_traces(tmp_path / "hits.jsonl", [trace])
    assert read_traces(tmp_path / "hits.jsonl")["q"].credits["page"] == (2, 2)


@pytest.mark.parametrize(
    "line,problem",
    [
        ("{not json", "bad JSON"),
        ('{"query": "x"}', "missing key 'query_id'"),
        ('{"query_id": "q", "hits": [{"rank": "one"}]}', "malformed"),
    ],
)
def test_bad_trace_files_name_file_and_line(tmp_path, line, problem):
    path = tmp_path / "hits.jsonl"
    path.write_text(_trace().to_json() + "\n" + line + "\n")
    with pytest.raises(TraceError) as e:
        read_traces(path)
    assert f"{path}:2:" in str(e.value) and problem in str(e.value)


def test_overlap_of_a_chunk_with_gold_evidence():
    hit = Retrieved(1, "a.md#0", "a.md", 0, 15, 4, None, None)
    assert hit.overlaps(Evidence("a.md", 1, 10, 20, None)) == (10, 15)
    assert hit.gold_share(Evidence("a.md", 1, 10, 20, None)) == 0.5
    assert hit.overlaps(Evidence("a.md", 1, 15, 20, None)) is None  # end is exclusive
    assert hit.overlaps(Evidence("b.md", 1, 0, 5, None)) is None
    assert hit.gold_share(Evidence("a.md", 1, None, None, None)) == 1.0  # a whole document


def test_nan_scores_are_written_as_null(tmp_path):
    t = _trace(hits=(Retrieved(1, "a.md#0", "a.md", 0, 15, 4, float("nan"), None),))
    assert json.loads(t.to_json())["hits"][0]["score"] is None


def test_a_trace_nested_too_deeply_or_not_text_names_file_and_line(tmp_path):
    path = tmp_path / "hits.jsonl"
    path.write_text(_trace().to_json() + "\n" + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(TraceError, match=f"^{re.escape(str(path))}:2: nested too deeply"):
        read_traces(path)
    path.write_bytes(_trace().to_json().encode() + b"\n\n" + b'{"query_id": "\xff"}\n')
    with pytest.raises(TraceError, match=f"^{re.escape(str(path))}:3: not UTF-8 text"):
        read_traces(path)


def test_why_a_hit_was_read_and_ranked_round_trips_and_old_lines_still_read(tmp_path):
    hits = (
        Retrieved(1, "a.md#0", "a.md", 0, 15, 4, 0.75, "x" * 15, window_end=12),
        Retrieved(
            2, "a.md#p1", "a.md", 0, 90, 20, 0.5, None, first_rank=7, first_score=float("nan")
        ),
        Retrieved(3, "b.md#p0", "b.md", 0, 80, 18, 0.25, None, None, None, 3, -1.5),
        Retrieved(4, "b.md#p2", "b.md", 80, 160, 18, 0.2, None, via="b.md#5", via_start=100),
    )
    path = tmp_path / "hits.jsonl"
    write_traces(path, [_trace(1, hits=hits)])
    got = read_traces(path)["q1"].hits
    assert got[0].window_end == 12 and got[0].first_rank is None and got[0].via is None
    assert got[1].first_rank == 7 and got[1].first_score is None  # NaN written as null
    assert got[2].first_rank == 3 and got[2].first_score == -1.5
    assert (got[3].via, got[3].via_start, got[3].via_end) == ("b.md#5", 100, None)
    # Keys that hold nothing are left out: a setting without them writes what it did before.
    line = json.loads(path.read_text())
    assert "window_end" not in line["hits"][1] and set(line["hits"][3]) >= {"via", "via_start"}
    old = json.loads(_trace(2).to_json())
    assert not {"window_end", "first_rank", "via"} & set(old["hits"][0])
    path.write_text(json.dumps(old) + "\n")
    assert read_traces(path)["q2"] == _trace(2)


def test_traces_of_say_what_the_model_read_the_first_stage_rank_and_the_child():
    doc = Document("a.md", "0123456789" * 4)
    chunks = [
        Chunk("a.md", i, 10 * i, 10 * i + 10, doc.text[10 * i : 10 * i + 10], 3) for i in range(4)
    ]
    queries = (Query("q", "where?", (Judgment("a.md", 20, 30),)),)
    ds = Dataset("d", (doc,), queries)
    ranking = Ranking(np.array([[2, 0, 3]]), np.array([[0.9, 0.8, 0.7]], np.float32))
    credits = credit_units(queries, ranking.ids, chunks)
    first = Ranking(np.array([[0, -1, 2, 1]]), np.array([[5.0, np.nan, 3.0, 2.0]], np.float32))
    why = Provenance(window_ends=np.array([-1, -1, 6, -1]), first=first)
    hits = traces_of(ds, chunks, ranking, credits, top_k=3, provenance=why)[0].hits
    assert [h.window_end for h in hits] == [6, None, None]
    # The first stage's rank counts its dropped entry: chunk 2 was third there.
    assert [(h.first_rank, h.first_score) for h in hits] == [(3, 3.0), (1, 5.0), (None, None)]
    assert all(h.via is None for h in hits)
    # Parent retrieval: the hits are parents, each brought by one of the children.
    parents = [
        Chunk("a.md", 0, 0, 20, doc.text[:20], 6),
        Chunk("a.md", 1, 20, 40, doc.text[20:], 6),
    ]
    lifted = Ranking(np.array([[1, 0, -1]]), np.array([[0.9, 0.8, np.nan]], np.float32))
    why = Provenance(via=np.array([[2, 0, -1]]), children=chunks)
    credits = credit_units(queries, lifted.ids, parents)
    hits = traces_of(ds, parents, lifted, credits, top_k=3, provenance=why)[0].hits
    assert [(h.via, h.via_start, h.via_end) for h in hits] == [
        ("a.md#2", 20, 30),
        ("a.md#0", 0, 10),
    ]
    assert all(h.window_end is None and h.first_rank is None for h in hits)
