"""One sweep setting from documents to scores: chunk, embed, index, retrieve, re-rank, score.

Everything here takes plain objects typed by the protocols of ``sweep.core.protocols``;
Hydra only builds them (``sweep.jobs.job``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sweep.chunking.contexts import Contexts
from sweep.core.evalconfig import EvalConfig
from sweep.core.protocols import Chunker, Embedder, HasEmbedStats, Reranker, Retriever
from sweep.core.timing import Timed
from sweep.core.types import Chunk, Document, Query, Ranking
from sweep.pipeline import steps
from sweep.retrieval.parents import ParentSpec
from sweep.scoring.aggregate import Summary
from sweep.scoring.credit import UnitCredits
from sweep.scoring.diagnostics import Diagnostics
from sweep.scoring.table import ScoreTable
from sweep.store.stats import Stats
from sweep.store.traces import Provenance

__all__ = ["SettingResult", "evaluate_setting"]


@dataclass(frozen=True)
class SettingResult:
    """What one setting produced: its chunks, the ranking per query, and every score.

    With a re-ranker, ``ranking`` and ``summary`` are the re-ranked ones and
    ``first_stage`` summarizes the retriever's own ranking (every eval measure,
    plus each at k = the re-ranker's ``top_n``: the re-ranker's ceiling).

    With parent retrieval, ``ranking`` ranks ``passages`` (the parents, which is what
    is scored) and ``child`` summarizes the ranking of the chunks themselves; without,
    ``passages`` is ``chunks``.

    ``provenance`` says, per passage of ``ranking``, how much of it the embedding model
    read, where the retriever ranked it before a re-ranker, and which chunk brought a
    parent (what the traces show).
    """

    chunks: list[Chunk]
    passages: list[Chunk]
    ranking: Ranking
    scores: ScoreTable
    summary: Summary
    credits: UnitCredits
    diagnostics: Diagnostics
    stats: Stats
    first_stage: Summary | None = None
    child: Summary | None = None
    provenance: Provenance = Provenance()
    #: What the stages found while running, for the row's notes (the page strategy's pages
    #: split at the cap); the notes on settings are known before, from the stages themselves.
    notes: tuple[str, ...] = ()


def evaluate_setting(
    documents: Sequence[Document],
    queries: Sequence[Query],
    chunker: Chunker,
    embedder: Embedder,
    retriever: Retriever,
    config: EvalConfig,
    reranker: Reranker | None = None,
    encode_times_of: Callable[[Sequence[str]], Timed] | None = None,
    parents: ParentSpec | None = None,
    contexts: Callable[[Sequence[Document], Sequence[Chunk]], Contexts] | None = None,
) -> SettingResult:
    """Run one configuration end to end and score it.

    ``encode_times_of`` gives the fresh-encode time (ms) of each query, and when it was
    measured, for the latency columns; None: measured here with the embedder's one-query
    encode (``encode_query``, else ``embed_queries`` of one query). A sweep passes the
    times it keeps for all its settings (``sweep.pipeline.latency.encode_times_for``).

    A retriever that needs no vectors (BM25) gets none: nothing is embedded and
    the embedding model is never loaded (the semantic chunker still embeds sentences).

    ``parents`` (section or window): chunks are searched and their parents scored.
    ``contexts`` writes each chunk a context that is searched with it (never credited).
    """
    texts = [q.query for q in queries]
    # Before chunking: the semantic strategy embeds sentences, and those count too.
    if isinstance(embedder, HasEmbedStats):
        embedder.reset_stats()
    chunked = steps.chunk(chunker, documents)
    written = None
    if contexts is not None:
        chunked, written = steps.contextualize(contexts, documents, chunked)
    embedded = steps.embed(
        embedder, chunked.chunks, texts, needs_vectors=retriever.needs_vectors, documents=documents
    )
    indexed = steps.index(retriever, chunked.chunks, embedded.doc_vecs)
    depth = steps.retrieval_depth(chunked.chunks, config.k, config.budgets)
    if reranker is not None:  # the re-ranker must see its full top N
        depth = max(depth, min(int(reranker.top_n), len(chunked.chunks)))
    found, enough = (
        steps.find_parents(documents, chunked, parents, config)
        if parents is not None and parents.active
        else (None, None)
    )
    searched = steps.search(
        retriever,
        embedder,
        texts,
        embedded,
        depth,
        latency_queries=config.latency_queries,
        encode_times_of=encode_times_of,
        enough=enough,
        n_chunks=len(chunked.chunks),
    )
    reranked = (
        steps.rerank(reranker, queries, chunked.chunks, searched.ranking, config)
        if reranker is not None
        else None
    )
    ranking = reranked.ranking if reranked is not None else searched.ranking
    first = reranked.first if reranked is not None else None
    lifted = (
        steps.lift(queries, chunked, ranking, found, config, first) if found is not None else None
    )
    if lifted is not None:
        passages, n_tokens, ranking = lifted.passages, lifted.n_tokens, lifted.ranking
        # A parent is more than what the model read of any one chunk: no window end.
        provenance = Provenance(None, lifted.first, lifted.via, chunked.chunks)
    else:
        passages, n_tokens = chunked.chunks, chunked.n_tokens
        provenance = Provenance(embedded.window_ends, first)
    scored = steps.score(queries, passages, n_tokens, ranking, config)
    parts = (
        [chunked, embedded, indexed, searched, scored]
        + ([reranked] if reranked else [])
        + ([lifted] if lifted else [])
        + ([written] if written else [])
    )
    columns = {name: value for part in parts for name, value in part.columns().items()}
    # The latency columns' query encodes may load the model after embedding did not.
    if isinstance(embedder, HasEmbedStats):
        columns["model_load_s"] = float(embedder.stats.load_seconds)
    stats = Stats(**columns)
    return SettingResult(
        chunked.chunks,
        list(passages),
        ranking,
        scored.table,
        scored.summary,
        scored.credits,
        scored.diagnostics,
        stats,
        reranked.first_stage if reranked is not None else None,
        lifted.child if lifted is not None else None,
        provenance,
        chunked.notes,
    )
