"""``sweep.pipeline.evaluate``: one setting end to end, with small fake stages (no model)."""

import numpy as np
import pytest

from sweep.core.evalconfig import EvalConfig
from sweep.core.protocols import Chunker, Embedder, FullEmbedder, Retriever, SearchIndex
from sweep.core.types import Chunk, Document, Judgment, Query
from sweep.pipeline.evaluate import evaluate_setting
from sweep.pipeline.steps import retrieval_depth
from sweep.retrieval.dense import DenseRetriever
from sweep.retrieval.index import FlatIPIndex
from sweep.store.stats import Stats


def _chunks(lengths):
    return [Chunk("d", i, 0, 1, "x", n) for i, n in enumerate(lengths)]


def test_depth_covers_max_k():
    assert retrieval_depth(_chunks([100] * 50), ks=[1, 5, 10], budgets=[]) == 10


def test_depth_covers_the_largest_budget_with_the_shortest_chunks():
    # 1024 tokens of 50-token chunks: 20 fit, the 21st ends the prefix.
    assert retrieval_depth(_chunks([50] * 100), ks=[5], budgets=[256, 1024]) == 21
    assert retrieval_depth(_chunks([10, 10, 500, 500, 500]), ks=[1], budgets=[30]) == 3


def test_depth_is_capped_by_the_index_and_can_be_raised_but_never_cuts():
    def ranked_lengths(n_chunks, ks, budgets, depth):
        index = FlatIPIndex()
        index.build(np.random.default_rng(0).random((n_chunks, 4), dtype=np.float32))
        k = retrieval_depth(_chunks([10] * n_chunks), ks=ks, budgets=budgets)
        return (
            DenseRetriever(index, depth=depth)
            .retrieve(["q"], np.ones((1, 4), dtype=np.float32), k)
            .depth
        )

    assert retrieval_depth(_chunks([10] * 4), ks=[10], budgets=[1024]) == 4
    assert ranked_lengths(400, ks=[10], budgets=[], depth=50) == 50
    assert ranked_lengths(40, ks=[10], budgets=[], depth=2) == 10
    assert ranked_lengths(400, ks=[10], budgets=[1024], depth=7) == 103


# ---------------------------------------------------------------- fakes of every stage

WORDS = ("meal", "rail", "sensor", "battery")
TEXT = "meal allowance is 45 euros. rail is preferred. sensor calibration yearly. battery lasts 5 years."


class WordChunker:
    """One chunk per sentence."""

    notes: tuple[str, ...] = ()

    def chunk_documents(self, docs):
        out = []
        for doc in docs:
            start = 0
            for i, piece in enumerate(doc.text.split(". ")):
                end = start + len(piece)
                out.append(
                    Chunk(doc.doc_id, i, start, end, doc.text[start:end], len(piece.split()))
                )
                start = end + 2
        return out


class _Stats:
    embedded = cache_hits = cache_misses = 0
    seconds = load_seconds = 0.0


class BagOfWordsEmbedder:
    """A vector per text: which of WORDS it mentions."""

    max_seq_length = 8

    def __init__(self):
        self.stats = _Stats()
        self.calls = []
        self.encoded = []

    def reset_stats(self):
        self.stats = _Stats()

    def count_model_tokens(self, texts):
        return np.array([len(t.split()) + 2 for t in texts])

    def _vectors(self, texts, what="texts"):
        self.calls.append(list(texts))
        v = np.array([[float(w in t) for w in WORDS] for t in texts], dtype=np.float32)
        return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-9)

    embed_documents = _vectors
    embed_queries = _vectors

    def encode_query(self, text):
        self.encoded.append(text)
        v = np.array([[float(w in text) for w in WORDS]], dtype=np.float32)
        return v / max(float(np.linalg.norm(v)), 1e-9)


class ThreeMemberEmbedder:
    """Only what an embedder must provide: documents, queries, an identity."""

    identity = "words-v1"

    def __init__(self):
        self.calls = []

    def embed_documents(self, texts):
        self.calls.append(("documents", list(texts)))
        return np.array([[float(w in t) for w in WORDS] for t in texts], dtype=np.float32)

    def embed_queries(self, texts):
        self.calls.append(("queries", list(texts)))
        return np.array([[float(w in t) for w in WORDS] for t in texts], dtype=np.float32)


def test_fakes_satisfy_the_stage_protocols():
    assert isinstance(WordChunker(), Chunker) and isinstance(ThreeMemberEmbedder(), Embedder)
    # Written to the seven members the protocol asked for before three sufficed.
    assert isinstance(BagOfWordsEmbedder(), FullEmbedder)
    assert isinstance(FlatIPIndex(), SearchIndex) and isinstance(DenseRetriever(), Retriever)


def test_a_setting_end_to_end_with_fake_stages():
    doc = Document("d", TEXT)
    queries = (
        Query(
            "q1",
            "what about rail?",
            (Judgment("d", TEXT.index("rail"), TEXT.index("preferred") + 9),),
        ),
        Query("q2", "the battery?", (Judgment("d", TEXT.index("battery"), len(TEXT)),)),
        Query("q3", "unanswerable", ()),
    )
    emb = BagOfWordsEmbedder()
    ev = EvalConfig(k=(1, 3), budgets=(8,), table_k=(1,), primary="span/recall@1", n_boot=50)
    result = evaluate_setting([doc], queries, WordChunker(), emb, DenseRetriever(FlatIPIndex()), ev)
    assert [c.text for c in result.chunks][:2] == [
        "meal allowance is 45 euros",
        "rail is preferred",
    ]
    assert (
        result.ranking.ids[0, 0] == 1 and result.ranking.ids[1, 0] == 3
    )  # each finds its sentence
    assert result.summary.interval("span", "recall@1").mean == 1.0
    assert result.credits.ranks["span"] == {"q1": (1,), "q2": (1,)}
    st = result.stats
    assert isinstance(st, Stats) and st.n_chunks == 4 and st.max_seq_length == 8
    assert st.tokens(1) == pytest.approx((3 + 5 + 4) / 3)  # what the top chunk costs, per query
    assert st.truncated_share == 0.0 and st.retrieval_depth == 3  # 8 tokens fit 2 chunks, +1
    assert emb.calls[0] == [c.text for c in result.chunks]  # chunks embedded once, in order
    # Latency: every query encoded afresh (after one warm-up), none of it from the batch call.
    assert emb.encoded == [q.query for q in queries[:1]] + [q.query for q in queries]
    assert 0 < st.latency_p50_ms <= st.latency_p95_ms


def test_an_embedder_with_three_members_runs_a_setting():
    # No stats, token counts or one-query encode: each has a fallback, none is probed for.
    emb = ThreeMemberEmbedder()
    ev = EvalConfig(k=(1,), budgets=(), table_k=(1,), primary="doc/recall@1", n_boot=20)
    q = (Query("q1", "rail?", (Judgment("d", 0, 4),)), Query("q2", "battery?", ()))
    st = evaluate_setting(
        [Document("d", TEXT)], q, WordChunker(), emb, DenseRetriever(FlatIPIndex()), ev
    ).stats
    assert emb.calls[:2] == [("documents", TEXT.split(". ")), ("queries", ["rail?", "battery?"])]
    # The latency columns time embed_queries of one query at a time.
    assert ("queries", ["rail?"]) in emb.calls[2:] and st.latency_p50_ms > 0
    assert st.embedded == 4 + 2 and st.cache_hits == 0 and st.model_load_s == 0.0
    assert st.max_seq_length == 0 and st.truncated_share == 0.0


def test_latency_can_be_switched_off():
    emb = BagOfWordsEmbedder()
    ev = EvalConfig(
        k=(1,), budgets=(), table_k=(1,), primary="doc/recall@1", n_boot=20, latency_queries=0
    )
    q = (Query("q1", "rail?", (Judgment("d", 0, 4),)),)
    st = evaluate_setting(
        [Document("d", TEXT)], q, WordChunker(), emb, DenseRetriever(FlatIPIndex()), ev
    ).stats
    assert emb.encoded == [] and st.latency_p50_ms is None and st.latency_p95_ms is None


def test_a_chunker_that_makes_no_chunks_is_an_error():
    class Nothing:
        notes = ()

        def chunk_documents(self, docs):
            return []

    with pytest.raises(ValueError, match="no chunks"):
        evaluate_setting(
            [Document("d", "x")],
            (),
            Nothing(),
            BagOfWordsEmbedder(),
            DenseRetriever(),
            EvalConfig(),
        )


def test_what_a_chunker_counts_while_chunking_reaches_the_stats_and_the_notes():
    from sweep.chunking import build_chunker

    # Two pages (the second longer than the cap) and a document without pages.
    page_two = "rail is preferred. sensor calibration yearly. battery lasts 5 years."
    paged = Document(
        "p.pdf",
        "meal allowance is 45 euros.\n\n" + page_two,
        metadata={"pages": [[0, 27], [29, 29 + len(page_two)]]},
    )
    queries = (Query("q1", "rail?", (Judgment("p.pdf", 29, 46),)),)
    ev = EvalConfig(k=(1,), budgets=(), table_k=(1,), primary="doc/recall@1", n_boot=20)
    chunker = build_chunker("page", 12)
    result = evaluate_setting(
        [paged, Document("d", TEXT)],
        queries,
        chunker,
        BagOfWordsEmbedder(),
        DenseRetriever(FlatIPIndex()),
        ev,
    )
    st = result.stats
    assert (st.n_pages, st.pages_split, st.docs_without_pages) == (2, 1, 1)
    assert (
        result.notes
        == chunker.tally_notes
        == (
            "page: 1 of 2 pages was longer than chunk.size=12 and was split at sentence ends; "
            "1 document has no pages and was chunked by paragraph",
        )
    )
    assert {"n_pages": 2, "pages_split": 1, "docs_without_pages": 1}.items() <= (
        st.to_columns().items()
    )
    # A chunker that counts nothing: no columns, no notes.
    q = (Query("q1", "rail?", (Judgment("d", 0, 4),)),)
    plain = evaluate_setting(
        [Document("d", TEXT)],
        q,
        WordChunker(),
        BagOfWordsEmbedder(),
        DenseRetriever(FlatIPIndex()),
        ev,
    )
    assert plain.notes == () and plain.stats.n_pages is None
    assert not {"n_pages", "pages_split", "docs_without_pages"} & set(plain.stats.to_columns())
