"""Cross-encoder re-ranking (``sweep.retrieval.rerank``) with a real, tiny cross-encoder built from the
packaged MiniLM weights (random head: its scores mean nothing, the plumbing is what is tested)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from crossencoder import build_cross_encoder
from sweep.core.evalconfig import EvalConfig
from sweep.core.protocols import Reranker
from sweep.core.types import Chunk, Document, Judgment, Query, Ranking
from sweep.decision.significance import Comparison, recommend
from sweep.pipeline.evaluate import evaluate_setting
from sweep.retrieval.lexical import BM25Retriever
from sweep.retrieval.rerank import CrossEncoderReranker, RerankerError
from sweep.store.row import Row

TEXTS = [
    "meal allowance is 45 euros",
    "rail is preferred over flights",
    "sensor calibration yearly",
    "battery lasts 5 years",
    "rail is preferred over flights",
    "travel expenses need approval",
    "flights need a manager's approval",
    "the sensor battery reports low power",
]
CHUNKS = [Chunk("d", i, 0, len(t), t, len(t.split())) for i, t in enumerate(TEXTS)]
QUERIES = ["is rail preferred", "how long does the battery last"]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return str(build_cross_encoder(tmp_path_factory.mktemp("cross-encoder")))


def first_stage():
    ids = np.array([[1, 4, 0, 2, 3, 5, 6], [3, 7, 2, 0, 1, -1, -1]], dtype=np.int64)
    scores = np.where(ids >= 0, -np.arange(7, dtype=np.float32), np.nan).astype(np.float32)
    return Ranking(ids, scores)


@pytest.mark.e2e
def test_rerank_orders_the_top_n_by_cross_encoder_score_and_keeps_the_tail(model, tmp_path):
    rr = CrossEncoderReranker(model, top_n=4, cache_dir=str(tmp_path), show_progress=False)
    assert isinstance(rr, Reranker)
    first = first_stage()
    got = rr.rerank(QUERIES, CHUNKS, first, 4)
    scorer = CrossEncoderReranker(model, cache_dir="off", show_progress=False)
    for i, q in enumerate(QUERIES):
        head = first.ids[i, :4].tolist()
        s = scorer.score_pairs([(q, TEXTS[c]) for c in head])
        # By score, then by first-stage rank (chunks 1 and 4 have the same text: a real tie).
        want = [head[j] for j in sorted(range(4), key=lambda j: (-round(float(s[j]), 6), j))]
        assert got.ids[i, :4].tolist() == want
        np.testing.assert_allclose(got.scores[i, :4], sorted(s, reverse=True), rtol=1e-5)
        assert (
            got.ids[i, 4:].tolist() == first.ids[i, 4:].tolist()
        )  # beyond top_n: first-stage order
        assert np.isnan(got.scores[i, 4:]).all()  # not scored by the re-ranker
    pos = got.ids[0, :4].tolist()
    assert pos.index(1) < pos.index(4)  # the tie keeps first-stage order
    assert rr.stats.computed == 7 and rr.stats.cache_hits == 0  # 8 pairs, one repeated


@pytest.mark.e2e
def test_scores_are_cached_so_a_rerun_scores_no_pair(model, tmp_path):
    first = first_stage()
    a = CrossEncoderReranker(model, top_n=5, cache_dir=str(tmp_path), show_progress=False)
    ra = a.rerank(QUERIES, CHUNKS, first, 5)
    b = CrossEncoderReranker(model, top_n=5, cache_dir=str(tmp_path), show_progress=False)
    rb = b.rerank(QUERIES, CHUNKS, first, 5)
    assert a.stats.computed == 9 and b.stats.computed == 0 and b.stats.cache_hits == 9
    assert b.stats.seconds == 0.0
    assert ra.ids.tolist() == rb.ids.tolist()
    np.testing.assert_array_equal(ra.scores, rb.scores)
    # Another max_length is another model input: not served from these entries.
    c = CrossEncoderReranker(model, max_length=16, cache_dir=str(tmp_path), show_progress=False)
    c.rerank(QUERIES, CHUNKS, first, 5)
    assert c.stats.computed == 9


def test_a_cross_encoder_that_is_not_on_disk_says_how_to_get_it(tmp_path):
    with pytest.raises(
        RerankerError,
        match=r"rerank.model=nobody/no-such-reranker: .*"
        r"huggingface-cli download nobody/no-such-reranker",
    ):
        CrossEncoderReranker("nobody/no-such-reranker")
    with pytest.raises(RerankerError, match="not a model folder"):
        CrossEncoderReranker(str(tmp_path))


@pytest.mark.e2e
@pytest.mark.parametrize(
    "key,value", [("top_n", 0), ("batch_size", True), ("max_length", -1), ("device", "gpu0")]
)
def test_bad_rerank_settings_name_their_key(model, key, value):
    with pytest.raises(RerankerError, match=f"rerank.{key}"):
        CrossEncoderReranker(model, **{key: value})


class _NoEmbedder:
    """BM25 needs no vectors: any call to this embedder fails the test."""

    max_seq_length = 0

    class stats:
        embedded = cache_hits = cache_misses = 0
        seconds = load_seconds = 0.0

    def reset_stats(self):
        pass

    def count_model_tokens(self, texts):
        raise AssertionError("counted model tokens for BM25")

    def embed_documents(self, texts):
        raise AssertionError("embedded documents for BM25")

    embed_queries = embed_documents


class _Sentences:
    notes = ()

    def chunk_documents(self, docs):
        return [
            Chunk(d.doc_id, i, 0, len(d.text), t, len(t.split()))
            for d in docs
            for i, t in enumerate(d.text.split(". "))
        ]


@pytest.mark.e2e
def test_a_setting_with_a_reranker_scores_both_stages(model, tmp_path):
    text = ". ".join(TEXTS)
    docs = [Document("d", text)]
    span = lambda t: (Judgment("d", text.index(t), text.index(t) + len(t)),)  # noqa: E731
    queries = [
        Query("q1", QUERIES[0], span(TEXTS[1])),
        Query("q2", QUERIES[1], span(TEXTS[3])),
        Query("q3", "who approves travel expenses", span(TEXTS[5])),
    ]
    ev = EvalConfig(k=(1, 3), budgets=(), table_k=(1,), primary="span/recall@1", n_boot=50)
    rr = CrossEncoderReranker(model, top_n=5, cache_dir=str(tmp_path), show_progress=False)
    result = evaluate_setting(docs, queries, _Sentences(), _NoEmbedder(), BM25Retriever(), ev, rr)
    st = result.stats
    # 3 queries x 5 chunks, one pair twice (chunks 1 and 4 have the same text).
    assert st.rerank_candidates == 5 and st.rerank_computed == 14 and st.rerank_s > 0
    assert st.embedded == 0 and st.model_load_s == 0 and st.max_seq_length == 0
    assert st.retrieval_depth == 5  # deep enough for the re-ranker's top 5
    fs = result.first_stage
    assert fs is not None and fs.interval("span", "recall@5") is not None  # the ceiling
    assert result.summary.interval("span", "recall@5") is None  # not an eval measure
    # The first stage scored on its own ranking: BM25 finds every answer at rank 1 here.
    assert fs.interval("span", "recall@1").mean == 1.0
    again = evaluate_setting(
        docs,
        queries,
        _Sentences(),
        _NoEmbedder(),
        BM25Retriever(),
        ev,
        CrossEncoderReranker(model, top_n=5, cache_dir=str(tmp_path), show_progress=False),
    )
    assert again.stats.rerank_computed == 0
    assert again.ranking.ids.tolist() == result.ranking.ids.tolist()
    # A row keeps both stages, through row.json and back.
    row = Row(
        0, "ok", {"rerank": "cross_encoder"}, ev, stats=st, summary=result.summary, first_stage=fs
    )
    back = Row.from_json(row.to_json())
    assert back.first_stage == fs and back.stats.rerank_candidates == 5
    assert json.loads(Row(1, "ok", {}, ev, summary=result.summary).to_json())["first_stage"] is None


def test_the_recommendation_prefers_fewer_reranked_candidates_among_equal_cost():
    comps = [
        Comparison(0, 0.80, 0.0, 1.0, 1.0, "best"),
        Comparison(1, 0.79, -0.01, 0.6, 0.9, "tie"),
        Comparison(2, 0.78, -0.02, 0.5, 0.9, "tie"),
    ]
    cost = {0: (500.0, 100.0, 50.0), 1: (500.0, 100.0, 20.0), 2: (500.0, 100.0, 0.0)}
    rec = recommend(comps, cost, labels={0: "rerank=50", 1: "rerank=20", 2: "rerank=none"})
    assert rec.job == 2 and "re-ranks 0 chunks per query instead of 50" in rec.reason
    # Tokens still come first, then chunks.
    cost = {0: (500.0, 100.0, 50.0), 1: (400.0, 300.0, 50.0), 2: (500.0, 90.0, 0.0)}
    assert recommend(comps, cost).job == 1
    cost = {0: (500.0, 100.0, 50.0), 1: (500.0, 100.0, 50.0), 2: (500.0, 90.0, 60.0)}
    assert recommend(comps, cost).job == 2
    # Two-part costs (no re-ranker anywhere) still work.
    assert recommend(comps, {0: (500.0, 100.0), 1: (400.0, 100.0)}).job == 1
