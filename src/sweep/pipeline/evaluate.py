"""One sweep setting from documents to scores: chunk, embed, index, retrieve, re-rank, score.

Everything here takes plain objects typed by the protocols of ``sweep.core.protocols``;
Hydra only builds them (``sweep.jobs.job``).
"""

from __future__ import annotations

import dataclasses
import logging
import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from sweep.scoring.aggregate import Summary, summarize
from sweep.core.types import Chunk, Document, Query, Ranking
from sweep.scoring.diagnostics import Diagnostics, diagnose
from sweep.core.evalconfig import EvalConfig
from sweep.retrieval.index import ANN_RECALL_K, ann_recall
from sweep.pipeline.latency import Latency, encode_times, search_times
from sweep.core.measures import measures_for
from sweep.scoring.credit import ScoreTable, UnitCredits, credit_units, score_ranked
from sweep.core.protocols import Chunker, Embedder, Reranker, Retriever

log = logging.getLogger(__name__)

__all__ = ["SettingResult", "Stats", "evaluate_setting", "retrieval_depth"]


_ANN_COLUMN = f"ann_recall@{ANN_RECALL_K}"


@dataclass(frozen=True)
class Stats:
    """A setting's non-metric columns: its index, what embedding cost, where the time went."""

    n_chunks: int = 0
    mean_chunk_tokens: float = 0.0
    max_chunk_tokens: int = 0
    mean_model_tokens: float = 0.0
    truncated_share: float = 0.0
    max_seq_length: int = 0
    #: What the setting costs to run: vectors and bytes of its index, model tokens to embed
    #: the corpus (every chunk, cached or not, as the model sees it: truncated at max_seq_length).
    n_vectors: int = 0
    index_bytes: int | None = None
    embed_tokens: int = 0
    retrieval_depth: int = 0
    embedded: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    model_s: float = 0.0
    model_load_s: float = 0.0
    #: k -> mean tokens of the top k chunks per query: what an LLM would read.
    tokens_at: Mapping[int, float] = field(default_factory=dict)
    chunk_s: float = 0.0
    embed_s: float = 0.0
    index_s: float = 0.0
    retrieve_s: float = 0.0
    #: Retrieval per query, one at a time with a fresh query encode (sweep.pipeline.latency);
    #: None when not measured (eval.latency_queries=0).
    latency_p50_ms: float | None = None
    latency_p95_ms: float | None = None
    #: Chunks per query the re-ranker scored (0: no re-ranker), pairs it ran through
    #: its model (the others came from its cache), and its time.
    rerank_candidates: float = 0.0
    rerank_computed: int = 0
    rerank_s: float = 0.0
    score_s: float = 0.0
    total_s: float = 0.0
    #: Approximate indexes only (hnsw, ivf): share of exact search's top 10 the index also
    #: returned, on the same vectors (column ``ann_recall@10``).
    ann_recall: float | None = None

    def tokens(self, k: int) -> float | None:
        value = self.tokens_at.get(int(k))
        return None if value is None or math.isnan(value) else float(value)

    def to_columns(self) -> dict[str, Any]:
        """Flat ``name -> value`` as results.csv has them (``tokens@5``...)."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            if f.name == "tokens_at":
                out.update({f"tokens@{k}": v for k, v in sorted(self.tokens_at.items())})
            elif f.name == "ann_recall":
                if self.ann_recall is not None:
                    out[_ANN_COLUMN] = self.ann_recall
            else:
                out[f.name] = getattr(self, f.name)
        return out

    @classmethod
    def from_columns(cls, columns: Mapping[str, Any]) -> "Stats":
        names = {f.name: f for f in dataclasses.fields(cls)}
        values: dict[str, Any] = {}
        tokens: dict[int, float] = {}
        for key, value in columns.items():
            if key.startswith("tokens@"):
                tokens[int(key.split("@", 1)[1])] = float(value)
            elif key == _ANN_COLUMN:
                values["ann_recall"] = None if value is None else float(value)
            elif key in names:
                values[key] = value
            else:
                raise ValueError(f"unknown stats column {key!r}")
        return cls(**values, tokens_at=tokens)


@dataclass(frozen=True)
class SettingResult:
    """What one setting produced: its chunks, the ranking per query, and every score.

    With a re-ranker, ``ranking`` and ``summary`` are the re-ranked ones and
    ``first_stage`` summarizes the retriever's own ranking (every eval measure,
    plus each at k = the re-ranker's ``top_n``: the re-ranker's ceiling).
    """

    chunks: list[Chunk]
    ranking: Ranking
    scores: ScoreTable
    summary: Summary
    credits: UnitCredits
    diagnostics: Diagnostics
    stats: Stats
    first_stage: Summary | None = None


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
    chunker: Chunker,
    embedder: Embedder,
    retriever: Retriever,
    settings: EvalConfig,
    reranker: Reranker | None = None,
    encode_times_of: Callable[[Sequence[str]], np.ndarray] | None = None,
) -> SettingResult:
    """Run one configuration end to end and score it.

    ``encode_times_of`` gives the fresh-encode time (ms) of each query for the latency
    columns; None: measured here with ``embedder.encode_query``. A sweep passes the
    times it measured once for all its settings (``sweep.pipeline.latency.EncodeTimes``).

    A retriever that needs no vectors (BM25) gets none: nothing is embedded and
    the embedding model is never loaded (the semantic chunker still embeds sentences).
    """
    timings: dict[str, float] = {}
    # Before chunking: the semantic strategy embeds sentences, and those count too.
    embedder.reset_stats()
    t0 = time.perf_counter()
    chunks = list(chunker.chunk_documents(documents))
    timings["chunk_s"] = time.perf_counter() - t0
    if not chunks:
        raise ValueError("the chunker produced no chunks")
    log.info("chunked %d documents into %d chunks (%.2fs)", len(documents), len(chunks),
             timings["chunk_s"])

    texts = [q.query for q in queries]
    doc_vecs = query_vecs = None
    model_tokens, max_len, truncated_share = np.zeros(len(chunks)), 0, 0.0
    t0 = time.perf_counter()
    if getattr(retriever, "needs_vectors", True):
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
        doc_vecs = np.ascontiguousarray(embedder.embed_documents(inputs, what="chunks"), dtype=np.float32)
        query_vecs = np.ascontiguousarray(embedder.embed_queries(texts), dtype=np.float32)
    timings["embed_s"] = time.perf_counter() - t0
    embed_stats = embedder.stats

    t0 = time.perf_counter()
    retriever.index(chunks, doc_vecs)
    timings["index_s"] = time.perf_counter() - t0
    index_bytes = getattr(retriever, "nbytes", None)

    depth = retrieval_depth(chunks, settings.k, settings.budgets)
    if reranker is not None:  # the re-ranker must see its full top N
        depth = max(depth, min(int(reranker.top_n), len(chunks)))
    t0 = time.perf_counter()
    ranking = retriever.retrieve(texts, query_vecs, depth)
    timings["retrieve_s"] = time.perf_counter() - t0
    # What an approximate index misses, against exact search on the same vectors (cheap
    # next to embedding them).
    index = getattr(retriever, "search_index", None)
    ann = (ann_recall(index, doc_vecs, query_vecs)
           if getattr(index, "approximate", False) and doc_vecs is not None else None)

    # Latency per query: a fresh query encode (none for a retriever without vectors) plus
    # this setting's own search, one query at a time (sweep.pipeline.latency).
    n_timed = min(len(texts), settings.latency_queries)
    search_ms = search_times(texts, query_vecs, retriever, depth, limit=n_timed)
    if doc_vecs is not None and n_timed:
        encode_ms = (encode_times_of(texts[:n_timed]) if encode_times_of is not None
                     else encode_times(texts, embedder.encode_query, limit=n_timed))
        search_ms = search_ms + encode_ms
    latency = Latency.of_ms(search_ms)
    if latency.n:
        log.info("retrieval latency over %d queries, one at a time: p50 %.1f ms, p95 %.1f ms",
                 latency.n, latency.p50_ms, latency.p95_ms)

    first_stage = None
    rerank: dict[str, Any] = {}
    if reranker is not None:
        reranker.reset_stats()
        t0 = time.perf_counter()
        first = ranking
        ranking = reranker.rerank(texts, chunks, first, int(reranker.top_n))
        n = min(int(reranker.top_n), first.ids.shape[1])
        rerank = {"rerank_s": time.perf_counter() - t0,
                  "rerank_candidates": float((first.ids[:, :n] >= 0).sum(axis=1).mean())
                  if len(queries) else 0.0,
                  "rerank_computed": int(reranker.stats.computed)}
        ceiling = measures_for(sorted({*settings.k, int(reranker.top_n)}), settings.budgets)
        first_table = score_ranked(queries, first.ids, chunks, ceiling,
                                   min_coverage=settings.min_coverage, gain=settings.gain)
        first_stage = summarize(first_table, queries, n_boot=settings.n_boot, seed=settings.seed)

    t0 = time.perf_counter()
    table = score_ranked(queries, ranking.ids, chunks, settings.measures,
                         min_coverage=settings.min_coverage, gain=settings.gain)
    summary = summarize(table, queries, n_boot=settings.n_boot, seed=settings.seed)
    credits = credit_units(queries, ranking.ids, chunks, min_coverage=settings.min_coverage)
    top = ranking.scores[:, 0] if ranking.scores.shape[1] else np.full(len(queries), np.nan)
    diagnostics = diagnose(queries, credits, top, ks=settings.k, twohop_types=settings.twohop_types,
                           n_boot=settings.n_boot, seed=settings.seed)
    timings["score_s"] = time.perf_counter() - t0

    n_tokens = np.fromiter((c.n_tokens for c in chunks), dtype=np.int64, count=len(chunks))
    # The context an LLM would be handed at each k: the cost side of the trade-off.
    padded = np.where(ranking.ids >= 0, n_tokens[np.maximum(ranking.ids, 0)], 0)
    tokens_at = {k: float(padded[:, :k].sum(axis=1).mean()) if len(queries) else math.nan
                 for k in settings.k}
    stats = Stats(
        n_chunks=len(chunks),
        mean_chunk_tokens=float(n_tokens.mean()),
        max_chunk_tokens=int(n_tokens.max()),
        mean_model_tokens=float(model_tokens.mean()),
        truncated_share=truncated_share,
        max_seq_length=max_len,
        n_vectors=int(getattr(retriever, "ntotal", len(chunks))),
        index_bytes=None if index_bytes is None else int(index_bytes),
        embed_tokens=int(np.minimum(model_tokens, max_len).sum()),
        retrieval_depth=ranking.depth,
        embedded=int(embed_stats.embedded),
        cache_hits=int(embed_stats.cache_hits),
        cache_misses=int(embed_stats.cache_misses),
        model_s=float(embed_stats.seconds),
        model_load_s=float(getattr(embed_stats, "load_seconds", 0.0)),
        tokens_at=tokens_at,
        latency_p50_ms=latency.p50_ms if latency.n else None,
        latency_p95_ms=latency.p95_ms if latency.n else None,
        **rerank,
        ann_recall=ann,
        **timings,
    )
    return SettingResult(chunks, ranking, table, summary, credits, diagnostics, stats, first_stage)
