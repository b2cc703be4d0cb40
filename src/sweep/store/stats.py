"""What one setting measured besides its scores: its index, embedding cost, where the time went.

Saved with the row (``row.json``'s ``stats``) and shown as results.csv's cost columns.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sweep.core.timing import Conditions
from sweep.retrieval.index import ANN_RECALL_K

__all__ = ["ANN_COLUMN", "Stats"]

#: results.csv's column for :attr:`Stats.ann_recall`.
ANN_COLUMN = f"ann_recall@{ANN_RECALL_K}"


@dataclass(frozen=True)
class Stats:
    """A setting's non-metric columns: its index, what embedding cost, where the time went."""

    n_chunks: int = 0
    mean_chunk_tokens: float = 0.0
    max_chunk_tokens: int = 0
    #: Chunk health (sweep.chunking.health): chunks under a quarter of the target size,
    #: chunks that stop inside a sentence, Markdown tables and code blocks no chunk holds
    #: whole (None: no target size known / no such block in the corpus).
    tiny_share: float | None = None
    midsentence_share: float | None = None
    n_blocks: int = 0
    blocks_cut_share: float | None = None
    #: What the chunker counted while chunking (sweep.core.protocols.TalliesChunking); the
    #: page strategy's pages that gave chunks, those of them longer than chunk.size (split
    #: at sentence ends) and the documents without pages (chunked by its fallback). None,
    #: and no column in results.csv, for a strategy that counts none of them.
    n_pages: int | None = field(default=None, metadata={"only_when_set": True})
    pages_split: int | None = field(default=None, metadata={"only_when_set": True})
    docs_without_pages: int | None = field(default=None, metadata={"only_when_set": True})
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
    #: k -> mean tokens of the top k chunks (or their parents) per query: what an LLM would read.
    tokens_at: Mapping[int, float] = field(default_factory=dict)
    chunk_s: float = 0.0
    embed_s: float = 0.0
    index_s: float = 0.0
    retrieve_s: float = 0.0
    #: Retrieval per query, one at a time with a fresh query encode (sweep.pipeline.latency);
    #: None when not measured (eval.latency_queries=0).
    latency_p50_ms: float | None = None
    latency_p95_ms: float | None = None
    #: When the latency was measured (UTC, ISO 8601), the 1-minute load average and the
    #: CPUs then (sweep.core.timing.Conditions); None: not measured, or a row saved before
    #: they were recorded.
    latency_measured_at: str | None = None
    latency_load: float | None = None
    latency_cpus: int | None = None
    #: Chunks per query the re-ranker scored (0: no re-ranker), pairs it ran through
    #: its model (the others came from its cache), and its time.
    rerank_candidates: float = 0.0
    rerank_computed: int = 0
    rerank_s: float = 0.0
    #: Parent retrieval (parent.mode): the distinct parents of the chunks, their mean
    #: tokens, and the time to find them and map the rankings (0: none).
    #: Contextual chunk headers (chunk.context=llm): requests sent and answered from the
    #: cache, the tokens of every context (cached ones included: paid once), their cost
    #: at the llm group's prices (None: no prices) and the time (0: none).
    context_requests: int = 0
    context_cached: int = 0
    context_prompt_tokens: int = 0
    context_completion_tokens: int = 0
    context_cost: float | None = None
    context_s: float = 0.0
    n_parents: int = 0
    mean_parent_tokens: float = 0.0
    parent_s: float = 0.0
    score_s: float = 0.0
    total_s: float = 0.0
    #: The job's peak resident memory (MB): the process's highest RSS while the job ran
    #: (sweep.core.peakmemory); None where the system does not say.
    peak_rss_mb: float | None = None
    #: Approximate indexes only (hnsw, ivf): share of exact search's top 10 the index also
    #: returned, on the same vectors (column ``ann_recall@10``).
    ann_recall: float | None = None
    #: BM25 and hybrid only: the analyzer that read the chunks (``sudachi``, ``english``,
    #: ``bigram (sudachipy missing)``) and the share of questions none of whose terms is
    #: in the corpus (they score 0 everywhere); None for dense retrieval.
    bm25_analyzer: str | None = None
    bm25_unmatched_share: float | None = None

    @property
    def latency_conditions(self) -> Conditions:
        """When and under what load the latency columns were measured."""
        return Conditions.from_dict(
            {"at": self.latency_measured_at, "load": self.latency_load, "cpus": self.latency_cpus}
        )

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
                    out[ANN_COLUMN] = self.ann_recall
            elif f.metadata.get("only_when_set") and getattr(self, f.name) is None:
                continue  # a column only the settings that measure it have
            else:
                out[f.name] = getattr(self, f.name)
        return out

    @classmethod
    def from_columns(cls, columns: Mapping[str, Any]) -> Stats:
        names = {f.name: f for f in dataclasses.fields(cls)}
        values: dict[str, Any] = {}
        tokens: dict[int, float] = {}
        for key, value in columns.items():
            if key.startswith("tokens@"):
                tokens[int(key.split("@", 1)[1])] = float(value)
            elif key == ANN_COLUMN:
                values["ann_recall"] = None if value is None else float(value)
            elif key in names:
                values[key] = value
            else:
                raise ValueError(f"unknown stats column {key!r}")
        return cls(**values, tokens_at=tokens)
