"""One sweep setting from documents to scores: chunk, embed, index, retrieve, score.

Everything here takes plain objects (a chunker, an embedder, an index, a
retriever); Hydra only builds them, in ``sweep.__main__``.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from sweep.aggregate import Summary, summarize
from sweep.data import Chunk, Document, Hit, Query
from sweep.measures import measures_for
from sweep.scoring import ScoreTable, score_queries

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EvalSettings:
    ks: tuple[int, ...] = (1, 3, 5, 10)
    budgets: tuple[int, ...] = (256, 512, 1024)
    gain: str = "linear"
    min_coverage: float = 0.5
    n_boot: int = 1000
    seed: int = 0


@dataclass
class SettingResult:
    """What one setting produced; ``stats`` are the row's non-metric columns."""

    chunks: list[Chunk]
    runs: dict[str, list[int]]
    scores: ScoreTable
    summary: Summary
    stats: dict[str, Any] = field(default_factory=dict)


def retrieval_depth(chunks: Sequence[Chunk], ks: Sequence[int], budgets: Sequence[int]) -> int:
    """How many chunks to retrieve so every @k and @Bt measure sees a full ranking.

    A budget B can be filled by at most as many chunks as the shortest chunks
    add up to B, plus one (the chunk that no longer fits ends the prefix).
    A retriever's own ``depth`` can only deepen this, never cut it.
    """
    need = max(ks, default=1)
    if budgets and chunks:
        lengths = np.sort(np.fromiter((max(c.n_tokens, 1) for c in chunks), dtype=np.int64))
        fit = int(np.searchsorted(np.cumsum(lengths), max(budgets), side="right"))
        need = max(need, fit + 1)
    return max(1, min(need, len(chunks)))


def evaluate_setting(
    documents: Sequence[Document],
    queries: Sequence[Query],
    chunker: Any,
    embedder: Any,
    index: Any,
    retriever: Any,
    settings: EvalSettings,
) -> SettingResult:
    """Run one configuration end to end and score it (SPEC §2)."""
    timings: dict[str, float] = {}
    # Before chunking: the semantic strategy embeds sentences, and those count too.
    embedder.reset_stats()
    t0 = time.perf_counter()
    if hasattr(chunker, "chunk_documents"):
        # One call for the corpus: the semantic strategy batches its embedding there.
        chunks = list(chunker.chunk_documents(documents))
    else:
        chunks = [c for doc in documents for c in chunker.chunk(doc)]
    timings["chunk_s"] = time.perf_counter() - t0
    if not chunks:
        raise ValueError("the chunker produced no chunks")
    log.info("chunked %d documents into %d chunks (%.2fs)", len(documents), len(chunks),
             timings["chunk_s"])

    inputs = [c.embedding_input for c in chunks]
    model_tokens = np.asarray(embedder.count_model_tokens(inputs))
    max_len = int(embedder.max_seq_length)
    truncated = model_tokens > max_len
    truncated_share = float(truncated.mean())
    if truncated_share > 0:
        log.warning(
            "%.1f%% of chunks exceed the embedder's max_seq_length of %d model tokens "
            "(longest %d); their tails are never embedded, so this row partly measures "
            "truncation, not chunking", 100 * truncated_share, max_len, int(model_tokens.max()))

    t0 = time.perf_counter()
    doc_vecs = embedder.embed_documents(inputs)
    query_vecs = embedder.embed_queries([q.query for q in queries])
    timings["embed_s"] = time.perf_counter() - t0
    embed_stats = embedder.stats

    t0 = time.perf_counter()
    index.build(np.ascontiguousarray(doc_vecs, dtype=np.float32))
    timings["index_s"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    ranked = retriever.retrieve(index, np.ascontiguousarray(query_vecs, dtype=np.float32),
                                retrieval_depth(chunks, settings.ks, settings.budgets))
    timings["retrieve_s"] = time.perf_counter() - t0
    runs = {q.query_id: [int(i) for i in ids] for q, ids in zip(queries, ranked)}
    hits = {
        qid: [Hit(chunks[i].doc_id, chunks[i].start, chunks[i].end, chunks[i].n_tokens) for i in ids]
        for qid, ids in runs.items()
    }

    t0 = time.perf_counter()
    measures = measures_for(settings.ks, settings.budgets)
    table = score_queries(queries, hits, measures, min_coverage=settings.min_coverage,
                          gain=settings.gain, chunks=chunks)
    summary = summarize(table, queries, n_boot=settings.n_boot, seed=settings.seed)
    timings["score_s"] = time.perf_counter() - t0

    n_tokens = np.array([c.n_tokens for c in chunks], dtype=np.float64)
    stats: dict[str, Any] = {
        "n_chunks": len(chunks),
        "mean_chunk_tokens": float(n_tokens.mean()),
        "max_chunk_tokens": int(n_tokens.max()),
        "mean_model_tokens": float(model_tokens.mean()),
        "truncated_share": truncated_share,
        "max_seq_length": max_len,
        "retrieval_depth": max((len(ids) for ids in ranked), default=0),
        "embedded": int(embed_stats.embedded),
        "cache_hits": int(embed_stats.cache_hits),
        "cache_misses": int(embed_stats.cache_misses),
        "model_s": float(embed_stats.seconds),
        "model_load_s": float(getattr(embed_stats, "load_seconds", 0.0)),
    }
    for k in settings.ks:
        # The context an LLM would be handed at this k: the cost side of the trade-off.
        per_query = [sum(chunks[i].n_tokens for i in ids[:k]) for ids in runs.values()]
        stats[f"tokens@{k}"] = float(np.mean(per_query)) if per_query else math.nan
    stats.update(timings)
    return SettingResult(chunks=chunks, runs=runs, scores=table, summary=summary, stats=stats)
