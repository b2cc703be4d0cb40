"""The ``page`` level: a unit per (document, page) the evidence lies on, credited at the first
hit that overlaps the page. Hand-computed cases, a plain-Python reference on random inputs,
and hypothesis properties."""

from __future__ import annotations

import math
from itertools import pairwise

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from brute_scoring import brute_force
from sweep.core.measures import RANK_NAMES, Measure, measures_for
from sweep.core.types import Chunk, Hit, Judgment, Query
from sweep.scoring.aggregate import summarize
from sweep.scoring.credit import credit_units, first_relevant_ranks, score_queries, score_ranked

# Five pages of 100 characters: page n is [100 (n - 1), 100 n).
PAGES = tuple((n, 100 * (n - 1), 100 * n) for n in range(1, 6))


def page(n: int) -> tuple[int, int, int]:
    return PAGES[n - 1]


def on_pages(doc: str, start: int, end: int, grade: int = 1) -> Judgment:
    """A span of ``doc`` with the pages it overlaps, as the loader resolves them."""
    pages = tuple(p for p in PAGES if p[1] < end and start < p[2])
    return Judgment(doc, start, end, grade, pages=pages)


def page_scores(query: Query, hits: list[Hit], measures) -> dict[str, float]:
    ms = [Measure.parse(m) if isinstance(m, str) else m for m in measures]
    table = score_queries([query], {query.query_id: hits}, ms)
    return {metric: v for _, level, metric, v in table.rows() if level == "page"}


# --------------------------------------------------------------------------- by hand


def test_page_hit_twice_then_another_page():
    # Relevant pages {3, 5}; hits: page 3, page 3 again, page 5.
    q = Query("q", "", (on_pages("d", 210, 250), on_pages("d", 420, 440)))
    hits = [Hit("d", 200, 240), Hit("d", 250, 300), Hit("d", 410, 480)]
    got = page_scores(q, hits, measures_for([1, 2, 3]))
    assert got["recall@1"] == got["recall@2"] == 0.5
    assert got["recall@3"] == 1.0
    assert got["precision@2"] == 0.5  # the second chunk of page 3 is gain 0
    assert got["precision@3"] == pytest.approx(2 / 3)
    assert got["mrr@3"] == 1.0 and got["hit@1"] == 1.0
    assert got["complete@2"] == 0.0 and got["complete@3"] == 1.0
    assert got["ap@3"] == pytest.approx((1 / 1 + 2 / 3) / 2)
    idcg = 1 + 1 / math.log2(3)
    assert got["ndcg@2"] == pytest.approx(1 / idcg)
    assert got["ndcg@3"] == pytest.approx((1 + 1 / math.log2(4)) / idcg)


def test_page_recall_at_3_with_a_repeated_page_is_a_half():
    q = Query("q", "", (on_pages("d", 210, 250), on_pages("d", 420, 440)))
    hits = [Hit("d", 200, 240), Hit("d", 240, 300), Hit("d", 260, 280), Hit("d", 410, 480)]
    assert page_scores(q, hits, ["recall@3", "precision@3"]) == {
        "recall@3": 0.5,
        "precision@3": pytest.approx(1 / 3),
    }


def test_a_chunk_over_a_page_break_credits_both_pages_at_one_rank():
    q = Query("q", "", (on_pages("d", 220, 240), on_pages("d", 310, 330)))
    got = page_scores(q, [Hit("d", 250, 350), Hit("x", 0, 10)], measures_for([1, 2]))
    assert got["recall@1"] == 1.0 and got["complete@1"] == 1.0
    assert got["precision@1"] == 1.0
    assert got["precision@2"] == 0.5  # one rank credited, counted once
    # As at the span level: one rank with new credits, R = 2; the rank's gain is its
    # largest grade, the ideal has both pages.
    assert got["ap@2"] == 0.5
    assert got["ndcg@2"] == pytest.approx(1 / (1 + 1 / math.log2(3)))


def test_an_evidence_span_over_a_page_break_is_two_units():
    q = Query("q", "", (on_pages("d", 280, 320),))  # pages 3 and 4
    got = page_scores(q, [Hit("d", 300, 310)], ["recall@1", "complete@1"])
    assert got == {"recall@1": 0.5, "complete@1": 0.0}


def test_a_page_touching_the_hit_end_is_not_overlapped():
    q = Query("q", "", (on_pages("d", 220, 240),))  # page 3 = [200, 300)
    assert page_scores(q, [Hit("d", 150, 200), Hit("d", 300, 320)], ["recall@2"]) == {
        "recall@2": 0.0
    }
    assert page_scores(q, [Hit("d", 150, 201)], ["recall@1"]) == {"recall@1": 1.0}


def test_document_only_hits_credit_no_page_but_the_document():
    q = Query("q", "", (on_pages("d", 210, 250),))
    table = score_queries([q], {"q": [Hit("d"), Hit("d", 0, 0)]}, [Measure("recall", k=2)])
    assert table.values("doc", "recall@2") == {"q": 1.0}
    assert table.values("page", "recall@2") == {"q": 0.0}


def test_pages_of_another_document_are_not_credited():
    q = Query("q", "", (on_pages("d", 210, 250),))
    assert page_scores(q, [Hit("e", 200, 300)], ["recall@1"]) == {"recall@1": 0.0}


def test_grade_is_the_largest_over_the_judgments_naming_the_page():
    q = Query(
        "q",
        "",
        (
            on_pages("d", 210, 220, grade=1),
            on_pages("d", 250, 260, grade=3),
            on_pages("d", 420, 430),
        ),
    )
    # Units: page 3 (grade 3), page 5 (grade 1). Page 5 first, then page 3.
    got = page_scores(q, [Hit("d", 400, 500), Hit("d", 200, 210)], ["ndcg@2", "recall@2"])
    assert got["recall@2"] == 1.0
    assert got["ndcg@2"] == pytest.approx((1 + 3 / math.log2(3)) / (3 + 1 / math.log2(3)))


def test_grade_zero_names_no_page_and_a_query_without_pages_is_excluded():
    with_page = Query("a", "", (on_pages("d", 210, 250),))
    zero = Query("b", "", (on_pages("d", 210, 250, grade=0), Judgment("d", grade=1)))
    plain = Query("c", "", (Judgment("d", 10, 20),))
    runs = {qid: [Hit("d", 200, 300)] for qid in "abc"}
    table = score_queries([with_page, zero, plain], runs, [Measure("recall", k=1)])
    assert table.values("page", "recall@1") == {"a": 1.0}
    summary = summarize(table, [with_page, zero, plain], n_boot=10)
    page_level = summary.levels["page"]
    assert (page_level.n_queries, page_level.n_excluded) == (1, 2)


def test_a_question_set_without_pages_has_no_page_level():
    q = Query("q", "", (Judgment("d", 10, 20),))
    table = score_queries([q], {"q": [Hit("d", 0, 30)]}, [Measure("recall", k=1)])
    summary = summarize(table, [q], n_boot=10)
    assert list(summary.levels) == ["doc", "span"]
    assert "page" not in summary.to_markdown()


def test_empty_page_ranges_are_never_credited_and_do_not_crash():
    q = Query("q", "", (Judgment("d", 200, 300, pages=((3, 200, 300), (9, 250, 250))),))
    got = page_scores(q, [Hit("d", 0, 500), Hit("d", 240, 260)], ["recall@2", "complete@2"])
    assert got == {"recall@2": 0.5, "complete@2": 0.0}


def test_a_page_range_that_is_not_a_span_is_refused():
    q = Query("q", "", (Judgment("d", 0, 5, pages=((1, 10, 4),)),))
    with pytest.raises(ValueError, match="page 1 of 'd' has the range 10:4"):
        score_queries([q], {}, [Measure("recall", k=1)])


def test_budgets_take_the_prefix_and_the_ideal_over_all_pages():
    q = Query("q", "", (on_pages("d", 210, 250), on_pages("d", 420, 440)))
    hits = [Hit("d", 200, 300, 40), Hit("d", 200, 250, 40), Hit("d", 400, 500, 40)]
    got = page_scores(q, hits, ["recall@80t", "precision@80t", "ndcg@80t", "recall@120t"])
    assert got["recall@80t"] == 0.5  # two hits fit, both on page 3
    assert got["precision@80t"] == 0.5
    assert got["ndcg@80t"] == pytest.approx(1 / (1 + 1 / math.log2(3)))
    assert got["recall@120t"] == 1.0


def test_first_relevant_ranks_and_unit_credits_at_the_page_level():
    q = Query("q", "", (on_pages("d", 420, 440), on_pages("d", 210, 250)))
    other = Query("o", "", (Judgment("d", 0, 10),))
    runs = {"q": [Hit("d", 0, 50), Hit("d", 450, 460), Hit("d", 200, 300)], "o": []}
    assert first_relevant_ranks([q, other], runs, "page") == {"q": 2}
    chunks = [Chunk("d", 0, 0, 50, "", 5), Chunk("d", 1, 450, 460, "", 5)]
    credits = credit_units([q, other], np.array([[0, 1], [-1, -1]]), chunks)
    assert credits.ranks["page"] == {"q": (None, 2)}  # pages 3 and 5, in page order
    assert "o" not in credits.ranks["page"]


def test_score_ranked_matches_score_queries_at_the_page_level():
    q = Query("q", "", (on_pages("d", 210, 250), on_pages("d", 280, 330, grade=2)))
    chunks = [Chunk("d", i, s, s + 60, "", 12) for i, s in enumerate(range(0, 440, 40))]
    ranking = np.array([[9, 5, 6, 7, 0, -1]])
    measures = [m for m in measures_for([1, 3, 5], [30]) if m.name != "precision_omega"]
    hits = [Hit(c.doc_id, c.start, c.end, c.n_tokens) for c in (chunks[i] for i in (9, 5, 6, 7, 0))]
    a = {r[1:3]: r[3] for r in score_ranked([q], ranking, chunks, measures).rows()}
    b = {r[1:3]: r[3] for r in score_queries([q], {"q": hits}, measures).rows()}
    assert a == b and any(level == "page" for level, _ in a)


# --------------------------------------------------------------------------- reference


DOC_LEN = 60
DOCS = ("a", "b", "c")
# Each document's pages: cut points drawn per test (pages of a document are disjoint).
KS = (1, 2, 3, 5, 8)
BUDGETS = (6, 15)
RANKED = [m for m in measures_for(KS, BUDGETS) if m.name in RANK_NAMES]


@st.composite
def paged_docs(draw) -> dict[str, tuple[tuple[int, int, int], ...]]:
    """Every document's pages: ``(number, start, end)``, disjoint, covering the text;
    now and then an empty page (a blank PDF page has no characters)."""
    out = {}
    for d in DOCS:
        cuts = sorted(draw(st.sets(st.integers(1, DOC_LEN - 1), max_size=5)))
        if draw(st.booleans()) and cuts:
            cuts.insert(draw(st.integers(0, len(cuts) - 1)), cuts[0])  # an empty page
        bounds = [0, *sorted(cuts), DOC_LEN]
        out[d] = tuple((i + 1, a, b) for i, (a, b) in enumerate(pairwise(bounds)))
    return out


@st.composite
def paged_judgment(draw, pages) -> Judgment:
    d = draw(st.sampled_from(DOCS))
    grade = draw(st.integers(0, 3))
    kind = draw(st.sampled_from(["span", "page", "whole"]))
    if kind == "whole":
        return Judgment(d, grade=grade)
    if kind == "page":
        n, s, e = draw(st.sampled_from([p for p in pages[d] if p[2] > p[1]]))
        return Judgment(d, s, e, grade, page=n, pages=((n, s, e),))
    s = draw(st.integers(0, DOC_LEN - 1))
    e = draw(st.integers(s + 1, DOC_LEN))
    on = tuple(p for p in pages[d] if p[1] < e and s < p[2])
    return Judgment(d, s, e, grade, pages=on)


@st.composite
def page_hit(draw) -> Hit:
    d = draw(st.sampled_from((*DOCS, "z")))
    tokens = draw(st.integers(0, 8))
    if draw(st.integers(0, 4)) == 0:
        return Hit(d, n_tokens=tokens)
    s = draw(st.integers(0, DOC_LEN - 1))
    return Hit(d, s, draw(st.integers(s, DOC_LEN)), tokens)


@st.composite
def page_cases(draw, max_queries: int = 4):
    pages = draw(paged_docs())
    n = draw(st.integers(1, max_queries))
    queries, runs = [], {}
    for i in range(n):
        js = draw(st.lists(paged_judgment(pages), max_size=4))
        queries.append(Query(f"q{i}", "", tuple(js)))
        hits = draw(st.one_of(st.none(), st.lists(page_hit(), max_size=12)))
        if hits is not None:
            runs[f"q{i}"] = hits
    return pages, queries, runs


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(page_cases(), st.sampled_from(["linear", "exponential"]))
def test_agrees_with_the_reference(case, gain) -> None:
    _, queries, runs = case
    table = score_queries(queries, runs, RANKED, gain=gain)
    got = {(q, metric): v for q, level, metric, v in table.rows() if level == "page"}
    expected = {}
    for q in queries:
        for m in RANKED:
            value = brute_force(q, runs.get(q.query_id, []), m, "page", gain=gain)
            if value is not None:
                expected[(q.query_id, str(m))] = value
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, abs=1e-12), key
        assert 0.0 <= got[key] <= 1.0


def _page_table(query: Query, hits: list[Hit]) -> dict[str, float]:
    return page_scores(query, hits, RANKED)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(page_cases(max_queries=1), st.data())
def test_more_chunks_repeating_a_credited_page_never_raise_a_page_metric(case, data) -> None:
    """The same text cut into more chunks: a hit split in two pieces adds at most a
    repeat of pages the first piece already retrieved, so no page metric rises."""
    _, (query,), runs = case
    hits = runs.get("q", [])
    splittable = [i for i, h in enumerate(hits) if h.start is not None and h.end - h.start >= 2]
    if not splittable:
        return
    i = data.draw(st.sampled_from(splittable))
    h = hits[i]
    mid = data.draw(st.integers(h.start + 1, h.end - 1))
    t1 = data.draw(st.integers(0, h.n_tokens))
    pieces = [Hit(h.doc_id, h.start, mid, t1), Hit(h.doc_id, mid, h.end, h.n_tokens - t1)]
    split = [*hits[:i], *pieces, *hits[i + 1 :]]
    before, after = _page_table(query, hits), _page_table(query, split)
    fits = {b: sum(x.n_tokens for x in hits[: i + 1]) <= b for b in BUDGETS}
    for metric, value in before.items():
        m = Measure.parse(metric)
        if m.budget is not None and not fits[m.budget]:
            continue  # a piece of a chunk that did not fit may fit: the point of budgets
        if m.name in ("precision", "ap", "ndcg") and not _pieces_repeat(query, pieces):
            continue  # two pieces on two different pages are two credits at two ranks
        assert after[metric] <= value + 1e-12, (metric, value, after[metric])


def _pieces_repeat(query: Query, pieces: list[Hit]) -> bool:
    """Whether the second piece retrieves only pages the first one did."""
    a, b = pieces

    def on(h: Hit) -> set[int]:
        return {
            n
            for j in query.relevant
            if j.doc_id == h.doc_id
            for n, s, e in j.pages
            if max(s, h.start) < min(e, h.end)
        }

    return on(b) <= on(a)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(page_cases(), st.sampled_from(["linear", "exponential"]))
def test_one_page_per_document_makes_the_page_level_the_document_level(case, gain) -> None:
    _, queries, runs = case
    # Every document is one page: a judgment of it (span or whole) is on that page.
    whole = [
        Query(
            q.query_id,
            "",
            tuple(
                Judgment(j.doc_id, j.start, j.end, j.grade, pages=((1, 0, DOC_LEN),))
                for j in q.relevant
            ),
        )
        for q in queries
    ]
    # A hit with offsets retrieves the page; a document-only hit retrieves the document but no
    # page, so give every hit offsets.
    runs = {
        qid: [h if h.start is not None else Hit(h.doc_id, 0, 1, h.n_tokens) for h in hits]
        for qid, hits in runs.items()
    }
    runs = {
        qid: [Hit(h.doc_id, h.start, max(h.end, h.start + 1), h.n_tokens) for h in hits]
        for qid, hits in runs.items()
    }
    table = score_queries(whole, runs, RANKED, gain=gain)
    doc = {(q, m): v for q, level, m, v in table.rows() if level == "doc"}
    by_page = {(q, m): v for q, level, m, v in table.rows() if level == "page"}
    assert doc == by_page
