"""The steps of one setting, each a function returning a small frozen record.

Each record carries what the next step needs and the :class:`~sweep.store.stats.Stats`
columns it measured (``columns()``); :func:`sweep.pipeline.evaluate.evaluate_setting`
runs them in order and composes ``Stats`` from their columns.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

import numpy as np

from sweep.chunking.contexts import Contexts, with_contexts
from sweep.chunking.health import Health, chunk_health
from sweep.core.evalconfig import EvalConfig
from sweep.core.measures import measures_for
from sweep.core.protocols import (
    ApproximateIndex,
    Chunker,
    CountsModelTokens,
    Embedder,
    FindsWindowEnds,
    HasEmbedStats,
    HoldsSearchIndex,
    Reranker,
    Retriever,
    SizedRetriever,
    TalliesChunking,
    embed_named,
    encode_one_query,
    late_chunker_of,
)
from sweep.core.timing import Conditions, Timed, conditions_now
from sweep.core.types import Chunk, Document, Query, Ranking
from sweep.pipeline.latency import Latency, encode_times, latency_sample, search_times
from sweep.retrieval.fusion import HybridRetriever
from sweep.retrieval.index import ann_recall
from sweep.retrieval.lexical import BM25Retriever
from sweep.retrieval.parents import LiftedRanking, Parents, ParentSpec, parents_of
from sweep.retrieval.parents import lift_to_parents as lift_ranking
from sweep.scoring.aggregate import Summary, summarize
from sweep.scoring.credit import UnitCredits, credit_units, score_ranked
from sweep.scoring.diagnostics import Diagnostics, diagnose
from sweep.scoring.table import ScoreTable

log = logging.getLogger(__name__)

__all__ = [
    "Chunked",
    "Embedded",
    "Indexed",
    "Lifted",
    "Reranked",
    "Scored",
    "Searched",
    "chunk",
    "contextualize",
    "embed",
    "find_parents",
    "index",
    "lift",
    "rerank",
    "retrieval_depth",
    "score",
    "search",
]


@dataclass(frozen=True)
class Chunked:
    chunks: list[Chunk]
    n_tokens: np.ndarray  # per chunk, in the chunker's tokens
    seconds: float
    health: Health
    #: What the chunker counted while chunking (sweep.core.protocols.TalliesChunking): its
    #: columns and the notes that say them; empty for a chunker that counts nothing.
    tally: tuple[tuple[str, int], ...] = ()
    notes: tuple[str, ...] = ()

    def columns(self) -> dict[str, Any]:
        return {
            "n_chunks": len(self.chunks),
            "mean_chunk_tokens": float(self.n_tokens.mean()),
            "max_chunk_tokens": int(self.n_tokens.max()),
            "chunk_s": self.seconds,
            **self.health.columns(),
            **dict(self.tally),
        }


def chunk(chunker: Chunker, documents: Sequence[Document]) -> Chunked:
    t0 = time.perf_counter()
    chunks = list(chunker.chunk_documents(documents))
    seconds = time.perf_counter() - t0
    if not chunks:
        raise ValueError("the chunker produced no chunks")
    log.info("chunked %d documents into %d chunks (%.2fs)", len(documents), len(chunks), seconds)
    n_tokens = np.fromiter((c.n_tokens for c in chunks), dtype=np.int64, count=len(chunks))
    # A chunker of one's own may not say its target size or its length unit: then no
    # chunk is called tiny (None), and the other health columns still apply.
    health = chunk_health(
        documents, chunks, getattr(chunker, "target_size", None), getattr(chunker, "length", None)
    )
    if isinstance(chunker, TalliesChunking):
        tally, notes = tuple(chunker.tally.items()), tuple(chunker.tally_notes)
        for note in notes:
            log.info("%s", note)
        return Chunked(chunks, n_tokens, seconds, health, tally, notes)
    return Chunked(chunks, n_tokens, seconds, health)


def contextualize(
    write: Callable[[Sequence[Document], Sequence[Chunk]], Contexts],
    documents: Sequence[Document],
    chunked: Chunked,
) -> tuple[Chunked, Contexts]:
    """The chunks with an LLM's context before their embedding input (searched, never
    credited: offsets and text stay the chunk's own)."""
    contexts = write(documents, chunked.chunks)
    return replace(chunked, chunks=with_contexts(chunked.chunks, contexts.texts)), contexts


@dataclass(frozen=True)
class Embedded:
    """Chunk and query vectors; both None for a retriever that needs none (BM25)."""

    doc_vecs: np.ndarray | None
    query_vecs: np.ndarray | None
    model_tokens: np.ndarray  # per chunk, in the model's tokens (zeros when nothing is embedded)
    max_seq_length: int
    truncated_share: float
    embedded: int
    cache_hits: int
    cache_misses: int
    model_s: float
    model_load_s: float
    seconds: float
    #: Per chunk, the characters of its text the model read when it truncated the chunk;
    #: -1 when it read all of it, nothing was embedded, or the embedder cannot say.
    window_ends: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    def columns(self) -> dict[str, Any]:
        return {
            "mean_model_tokens": float(self.model_tokens.mean()),
            "truncated_share": self.truncated_share,
            "max_seq_length": self.max_seq_length,
            # what embedding the corpus costs: every chunk, cached or not, as the model
            # sees it (truncated at max_seq_length; 0: a model that truncates nothing)
            "embed_tokens": int(
                np.minimum(self.model_tokens, self.max_seq_length).sum()
                if self.max_seq_length > 0
                else self.model_tokens.sum()
            ),
            "embedded": self.embedded,
            "cache_hits": self.cache_hits,
            "cache_misses": self.cache_misses,
            "model_s": self.model_s,
            "model_load_s": self.model_load_s,
            "embed_s": self.seconds,
        }


def embed(
    embedder: Embedder,
    chunks: Sequence[Chunk],
    queries: Sequence[str],
    *,
    needs_vectors: bool,
    documents: Sequence[Document] = (),
) -> Embedded:
    """The embedder's stats count from its last ``reset_stats`` (before chunking, so the
    semantic chunker's sentence embeddings count too).

    A late-chunking embedder (``embed.late``) reads each of ``documents`` whole, in
    overlapping windows, and pools each chunk's token vectors: nothing is truncated, and
    a chunk's prefix or context is not part of its vector.

    An embedder without token counts (``CountsModelTokens``) reports none and nothing
    truncated; one without stats (``HasEmbedStats``) counts every text handed to it here
    as embedded, in this step's time.
    """
    late = late_chunker_of(embedder) if needs_vectors else None
    doc_vecs = query_vecs = None
    model_tokens, max_len, truncated_share = np.zeros(len(chunks)), 0, 0.0
    window_ends = np.full(len(chunks), -1, dtype=np.int64)
    t0 = time.perf_counter()
    if needs_vectors:
        inputs = [c.text if late is not None else c.embedding_input for c in chunks]
        model_tokens, max_len, truncated_share = _token_counts(embedder, inputs, late is not None)
        if truncated_share > 0:  # late chunking truncates nothing (its share is 0)
            window_ends = _window_ends(embedder, chunks, inputs, model_tokens > max_len)
        t0 = time.perf_counter()
        vecs = (
            late.embed_late(documents, chunks)
            if late is not None
            else embed_named(embedder, inputs, "chunks")
        )
        doc_vecs = np.ascontiguousarray(vecs, dtype=np.float32)
        query_vecs = np.ascontiguousarray(embedder.embed_queries(queries), dtype=np.float32)
    seconds = time.perf_counter() - t0
    s = (
        embedder.stats
        if isinstance(embedder, HasEmbedStats)
        else _Handed(len(chunks) + len(queries) if needs_vectors else 0, seconds)
    )
    return Embedded(
        doc_vecs,
        query_vecs,
        model_tokens,
        max_len,
        truncated_share,
        int(s.embedded),
        int(s.cache_hits),
        int(s.cache_misses),
        float(s.seconds),
        float(s.load_seconds),
        seconds,
        window_ends,
    )


def _window_ends(
    embedder: Embedder, chunks: Sequence[Chunk], inputs: list[str], truncated: np.ndarray
) -> np.ndarray:
    """Per chunk, the characters of its text the model read (-1: all, or not known), asked
    of the embedder for the truncated chunks only. A chunk's input may hold a heading or a
    context before its text: the window end is moved to the text's own offsets, 0 when the
    model stopped before the text began."""
    out = np.full(len(chunks), -1, dtype=np.int64)
    long = np.flatnonzero(truncated)
    if not long.size or not isinstance(embedder, FindsWindowEnds):
        return out
    for i, end in zip(long.tolist(), embedder.window_ends([inputs[i] for i in long])):
        text, given = chunks[i].text, inputs[i]
        at = len(given) - len(text) if given.endswith(text) else given.find(text)
        if end is None or at < 0:
            continue  # read whole, or a chunker's own input without the text in it
        read = min(max(end - at, 0), len(text))
        out[i] = read if read < len(text) else -1
    return out


def _token_counts(
    embedder: Embedder, inputs: list[str], late: bool
) -> tuple[np.ndarray, int, float]:
    """Each input's model tokens, the embedder's max_seq_length and the share of inputs
    longer (none when late chunking, which truncates nothing)."""
    if not isinstance(embedder, CountsModelTokens):
        return np.zeros(len(inputs)), 0, 0.0
    model_tokens = np.asarray(embedder.count_model_tokens(inputs))
    max_len = int(embedder.max_seq_length)
    # max_seq_length 0: a model that reads every token (USE), so nothing is truncated.
    truncated_share = 0.0 if late or max_len <= 0 else float((model_tokens > max_len).mean())
    if truncated_share > 0:
        log.warning(
            "%.1f%% of chunks exceed the embedder's max_seq_length of %d model tokens "
            "(longest %d); their tails are never embedded, so this row partly measures "
            "truncation, not chunking",
            100 * truncated_share,
            max_len,
            int(model_tokens.max()),
        )
    return model_tokens, max_len, truncated_share


@dataclass(frozen=True)
class _Handed:
    """The stats of an embedder that keeps none: the texts handed to it, all embedded."""

    embedded: int
    seconds: float
    cache_hits: int = 0
    cache_misses: int = 0
    load_seconds: float = 0.0


@dataclass(frozen=True)
class Indexed:
    n_vectors: int
    index_bytes: int | None
    seconds: float

    def columns(self) -> dict[str, Any]:
        return {
            "n_vectors": self.n_vectors,
            "index_bytes": self.index_bytes,
            "index_s": self.seconds,
        }


def index(retriever: Retriever, chunks: Sequence[Chunk], vectors: np.ndarray | None) -> Indexed:
    # Said first: a large approximate index can take a while to build.
    log.info("indexing %d chunks", len(chunks))
    t0 = time.perf_counter()
    retriever.index(chunks, vectors)
    seconds = time.perf_counter() - t0
    if isinstance(retriever, SizedRetriever):
        nbytes = retriever.nbytes
        return Indexed(int(retriever.ntotal), None if nbytes is None else int(nbytes), seconds)
    return Indexed(len(chunks), None, seconds)


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


@dataclass(frozen=True)
class Searched:
    ranking: Ranking
    depth: int
    latency: Latency
    #: Approximate indexes only: share of exact search's top 10 the index also returned.
    ann_recall: float | None
    seconds: float
    #: When and under what load the latency was measured (its oldest, busiest part).
    measured: Conditions = Conditions()
    #: BM25 and hybrid only: the analyzer that ran and the share of questions without a
    #: term in the corpus (BM25Retriever.row_facts).
    bm25: tuple[tuple[str, Any], ...] = ()

    def columns(self) -> dict[str, Any]:
        n = self.latency.n
        return dict(self.bm25) | {
            "retrieval_depth": self.ranking.depth,
            "retrieve_s": self.seconds,
            "latency_p50_ms": self.latency.p50_ms if n else None,
            "latency_p95_ms": self.latency.p95_ms if n else None,
            "latency_measured_at": self.measured.at if n else None,
            "latency_load": self.measured.load if n else None,
            "latency_cpus": self.measured.cpus if n else None,
            "ann_recall": self.ann_recall,
        }


def search(
    retriever: Retriever,
    embedder: Embedder,
    queries: Sequence[str],
    embedded: Embedded,
    depth: int,
    *,
    latency_queries: int,
    encode_times_of: Callable[[Sequence[str]], Timed] | None = None,
    enough: Callable[[Ranking], bool] | None = None,
    n_chunks: int | None = None,
) -> Searched:
    """Rank ``depth`` chunks per query, then time queries one at a time for the latency columns.

    ``enough`` (parent retrieval): a test of the ranking; while it fails, the depth
    doubles, up to ``n_chunks``, since many chunks can share one parent.

    Latency per query, over ``latency_queries`` of them spread evenly, is a fresh query
    encode (none for a retriever without vectors) plus this setting's own search
    (sweep.pipeline.latency); ``encode_times_of`` gives the encode times a sweep keeps
    for all its settings and reruns, else they are measured here.
    """
    t0 = time.perf_counter()
    ranking = retriever.retrieve(queries, embedded.query_vecs, depth)
    while enough is not None and n_chunks is not None and depth < n_chunks and not enough(ranking):
        depth = min(n_chunks, 2 * depth)
        ranking = retriever.retrieve(queries, embedded.query_vecs, depth)
    seconds = time.perf_counter() - t0
    lexical = isinstance(retriever, (BM25Retriever, HybridRetriever))
    bm25 = tuple(retriever.row_facts().items()) if lexical else ()
    # What an approximate index misses, against exact search on the same vectors (cheap
    # next to embedding them).
    ann = None
    found = retriever.search_index if isinstance(retriever, HoldsSearchIndex) else None
    if isinstance(found, ApproximateIndex) and found.approximate and embedded.doc_vecs is not None:
        ann = ann_recall(found, embedded.doc_vecs, embedded.query_vecs)

    sample = latency_sample(len(queries), latency_queries)
    timed = [queries[i] for i in sample]
    vectors = None if embedded.query_vecs is None else embedded.query_vecs[sample]
    parts = [conditions_now()]  # before the searches: what they competed with
    search_ms = search_times(timed, vectors, retriever, depth)
    if embedded.doc_vecs is not None and timed:
        encode = (
            encode_times_of(timed)
            if encode_times_of is not None
            else encode_times(timed, partial(encode_one_query, embedder))
        )
        search_ms = search_ms + encode.ms
        parts.append(encode.conditions)
    latency, measured = Latency.of_ms(search_ms), Conditions.worst(parts)
    if latency.n:
        log.info(
            "retrieval latency over %d queries, one at a time: p50 %.1f ms, p95 %.1f ms, %s",
            latency.n,
            latency.p50_ms,
            latency.p95_ms,
            measured.describe(),
        )
    return Searched(ranking, depth, latency, ann, seconds, measured, bm25)


@dataclass(frozen=True)
class Reranked:
    ranking: Ranking
    #: The retriever's own ranking summarized: every eval measure, plus each at k = top_n.
    first_stage: Summary
    candidates: float  # chunks per query the re-ranker scored
    computed: int  # pairs it ran through its model (the others came from its cache)
    seconds: float
    #: The retriever's own ranking, before re-ranking (the traces' first ranks).
    first: Ranking

    def columns(self) -> dict[str, Any]:
        return {
            "rerank_candidates": self.candidates,
            "rerank_computed": self.computed,
            "rerank_s": self.seconds,
        }


def rerank(
    reranker: Reranker,
    queries: Sequence[Query],
    chunks: Sequence[Chunk],
    first: Ranking,
    config: EvalConfig,
) -> Reranked:
    texts = [q.query for q in queries]
    top_n = int(reranker.top_n)
    reranker.reset_stats()
    t0 = time.perf_counter()
    ranking = reranker.rerank(texts, chunks, first, top_n)
    seconds = time.perf_counter() - t0
    n = min(top_n, first.ids.shape[1])
    candidates = float((first.ids[:, :n] >= 0).sum(axis=1).mean()) if len(queries) else 0.0
    ceiling = measures_for(sorted({*config.k, top_n}), config.budgets)
    first_table = score_ranked(
        queries, first.ids, chunks, ceiling, min_coverage=config.min_coverage, gain=config.gain
    )
    first_stage = summarize(first_table, queries, n_boot=config.n_boot, seed=config.seed)
    return Reranked(ranking, first_stage, candidates, int(reranker.stats.computed), seconds, first)


@dataclass(frozen=True)
class Lifted:
    """Parent retrieval: the chunk ranking as the passages an LLM would read (``passages``,
    ranked by ``ranking``), and the chunk ranking's own scores (``child``), kept beside the
    parents' like a first stage."""

    parents: Parents
    passages: list[Chunk]
    n_tokens: np.ndarray
    ranking: Ranking
    child: Summary
    seconds: float
    #: Aligned with ``ranking.ids``: the chunk whose rank brought each passage (-1: padding).
    via: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.int64))
    #: With a re-ranker: the retriever's own chunk ranking lifted to these passages.
    first: Ranking | None = None

    def columns(self) -> dict[str, Any]:
        return {
            "n_parents": len(self.parents.passages),
            "mean_parent_tokens": float(self.parents.n_tokens.mean()),
            "parent_s": self.seconds,
        }


def find_parents(
    documents: Sequence[Document], chunked: Chunked, spec: ParentSpec, config: EvalConfig
) -> tuple[Parents, Callable[[Ranking], bool]]:
    """The chunks' parents, and the test that a chunk ranking brings enough passages for
    every @k and @Bt measure (or all the text there is)."""
    parents = parents_of(documents, chunked.chunks, spec)
    need = retrieval_depth(parents.passages, config.k, config.budgets)

    def enough(ranking: Ranking) -> bool:
        return bool(((lift_ranking(ranking, parents).ranking.ids >= 0).sum(axis=1) >= need).all())

    return parents, enough


def lift(
    queries: Sequence[Query],
    chunked: Chunked,
    ranking: Ranking,
    parents: Parents,
    config: EvalConfig,
    first: Ranking | None = None,
) -> Lifted:
    """``ranking`` of chunks as the parents an LLM would read; ``first`` (with a
    re-ranker, the retriever's own chunk ranking) lifted beside it, for the traces."""
    t0 = time.perf_counter()
    table = score_ranked(
        queries,
        ranking.ids,
        chunked.chunks,
        config.measures,
        min_coverage=config.min_coverage,
        gain=config.gain,
    )
    child = summarize(table, queries, n_boot=config.n_boot, seed=config.seed)
    lifted = lift_ranking(ranking, parents)
    return Lifted(
        parents,
        lifted.passages,
        lifted.n_tokens,
        lifted.ranking,
        child,
        time.perf_counter() - t0,
        lifted.via,
        None
        if first is None
        else _first_over(lifted, lift_ranking(first, parents), parents.of_chunk),
    )


def _first_over(lifted: LiftedRanking, first: LiftedRanking, of_chunk: np.ndarray) -> Ranking:
    """The first stage's lifted ranking over ``lifted``'s passages: an entry there is the
    passage of the same parent in the query's row here (each order cuts a parent that
    overlaps an earlier one differently, so the parent, not the span, is what is the
    same). -1 where that parent is not in the row, so later ranks keep their numbers."""
    ids = np.full(first.ranking.ids.shape, -1, dtype=np.int64)
    for q in range(ids.shape[0]):
        here: dict[int, int] = {}
        for p, c in zip(lifted.ranking.ids[q].tolist(), lifted.via[q].tolist()):
            if p >= 0:
                here.setdefault(int(of_chunk[c]), p)
        for j, c in enumerate(first.via[q].tolist()):
            if c >= 0:
                ids[q, j] = here.get(int(of_chunk[c]), -1)
    return Ranking(ids, np.where(ids >= 0, first.ranking.scores, np.nan).astype(np.float32))


@dataclass(frozen=True)
class Scored:
    table: ScoreTable
    summary: Summary
    credits: UnitCredits
    diagnostics: Diagnostics
    #: k -> mean tokens of the top k chunks per query: what an LLM would read.
    tokens_at: dict[int, float]
    seconds: float

    def columns(self) -> dict[str, Any]:
        return {"tokens_at": self.tokens_at, "score_s": self.seconds}


def score(
    queries: Sequence[Query],
    chunks: Sequence[Chunk],
    n_tokens: np.ndarray,
    ranking: Ranking,
    config: EvalConfig,
) -> Scored:
    """Score ``ranking`` over ``chunks`` (the chunks, or their parents), whose token
    counts ``n_tokens`` are what an LLM would read."""
    t0 = time.perf_counter()
    table = score_ranked(
        queries,
        ranking.ids,
        chunks,
        config.measures,
        min_coverage=config.min_coverage,
        gain=config.gain,
    )
    summary = summarize(table, queries, n_boot=config.n_boot, seed=config.seed)
    credits = credit_units(queries, ranking.ids, chunks, min_coverage=config.min_coverage)
    top = ranking.scores[:, 0] if ranking.scores.shape[1] else np.full(len(queries), np.nan)
    diagnostics = diagnose(
        queries,
        credits,
        top,
        ks=config.k,
        twohop_types=config.twohop_types,
        n_boot=config.n_boot,
        seed=config.seed,
    )
    seconds = time.perf_counter() - t0
    # The context an LLM would be handed at each k: the cost side of the trade-off.
    padded = np.where(ranking.ids >= 0, n_tokens[np.maximum(ranking.ids, 0)], 0)
    tokens_at = {
        k: float(padded[:, :k].sum(axis=1).mean()) if len(queries) else math.nan for k in config.k
    }
    return Scored(table, summary, credits, diagnostics, tokens_at, seconds)
