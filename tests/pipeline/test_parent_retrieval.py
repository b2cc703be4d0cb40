"""Parent retrieval through the pipeline: parents scored, their tokens counted, children kept."""

from __future__ import annotations

import numpy as np

from sweep.chunking import build_chunker
from sweep.core.evalconfig import EvalConfig
from sweep.core.types import Document, Judgment, Query
from sweep.embedding.embedder import SentenceTransformerEmbedder
from sweep.pipeline.evaluate import evaluate_setting
from sweep.retrieval.lexical import BM25Retriever
from sweep.retrieval.parents import ParentSpec

SECTIONS = {
    "Travel": "Rail is preferred for trips under six hours. " * 10,
    "Meals": "The meal allowance is 45 euros per day abroad. " * 10,
    "Devices": "Sensors are calibrated once a year by the lab. " * 10,
    "Power": "A battery lasts five years before replacement. " * 10,
}
TEXT = "\n\n".join(f"## {head}\n\n{body}" for head, body in SECTIONS.items())
DOC = Document("policy", TEXT)
QUESTIONS = {
    "q1": ("meal allowance abroad", "The meal allowance is 45 euros"),
    "q2": ("how often are sensors calibrated", "Sensors are calibrated once a year"),
    "q3": ("battery replacement", "A battery lasts five years"),
}


def queries():
    out = []
    for qid, (text, quote) in QUESTIONS.items():
        start = TEXT.index(quote)
        out.append(Query(qid, text, (Judgment("policy", start, start + len(quote)),)))
    return out


def run(parents):
    embedder = SentenceTransformerEmbedder(cache_dir="off", show_progress=False)
    chunker = build_chunker(strategy="token", size=24, overlap=0)
    config = EvalConfig(
        k=(1, 3), budgets=(64,), table_k=(3,), primary="span/recall@3", n_boot=50, latency_queries=0
    )
    return evaluate_setting(
        [DOC], queries(), chunker, embedder, BM25Retriever(), config, parents=parents
    )


def test_parents_are_scored_and_their_tokens_counted_with_the_chunks_kept_beside():
    plain = run(None)
    lifted = run(ParentSpec("section", None))
    assert plain.child is None and plain.passages == plain.chunks
    assert lifted.stats.n_parents == len(lifted.passages) < len(lifted.chunks)
    # The children's own scores are the plain setting's.
    assert (
        lifted.child.interval("span", "recall@1").mean
        == plain.summary.interval("span", "recall@1").mean
    )
    # What an LLM reads is parent text: tok@k sums the distinct parents of the top k.
    n_tokens = np.array([p.n_tokens for p in lifted.passages])
    for k in (1, 3):
        rows = [n_tokens[lifted.ranking.row(q)[:k]].sum() for q in range(3)]
        assert lifted.stats.tokens_at[k] == np.mean(rows)
        assert lifted.stats.tokens_at[k] > plain.stats.tokens_at[k]
    for q in range(3):
        row = lifted.ranking.row(q).tolist()
        assert len(row) == len(set(row))  # no parent counted twice
    # No model was loaded: BM25 needs no vectors.
    assert lifted.stats.model_load_s == 0


def test_a_budget_counts_parent_tokens_so_a_big_parent_can_overrun_it():
    lifted = run(ParentSpec("section", None))
    smallest = min(p.n_tokens for p in lifted.passages)
    assert smallest > 64  # each section is longer than the 64-token budget
    assert lifted.summary.interval("span", "recall@64t").mean == 0.0
    assert run(None).summary.interval("span", "recall@64t").mean > 0.0


def test_overlapping_window_parents_never_count_text_twice():
    lifted = run(ParentSpec("window", 80))
    for q in range(3):
        got = [lifted.passages[i] for i in lifted.ranking.row(q)[:3]]
        chars = [c for p in got for c in range(p.start, p.end)]
        assert len(chars) == len(set(chars))
        assert sum(p.n_tokens for p in got) <= 80 * 3 + 3
