"""Per-query traces of a job, ``<job>/hits.jsonl``: what a person reads to see why a query failed.

One JSON object per query: the question, its gold evidence (with text), the
retrieved chunks of the top ``max(eval.k)`` ranks with their text and retrieval
scores, and the rank at which each relevance unit was credited in the whole
ranking (so the first relevant rank is exact, not rebuilt from a metric).

Each hit also says why it was read and ranked as it was, when the setting tells
(:class:`Provenance`; each key left out when it does not apply): ``window_end``, the
characters of a chunk longer than the embedding model's window that the model read;
``first_rank`` and ``first_score``, its rank and score in the retriever's own ranking
before a re-ranker reordered it; ``via``, ``via_start`` and ``via_end``, with parent
retrieval, the chunk whose match brought the parent in.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from sweep.core.errors import BadInput
from sweep.core.files import jsonl_records, regular_file
from sweep.core.measures import LEVELS
from sweep.core.types import Chunk, Dataset, Query, Ranking
from sweep.scoring.credit import UnitCredits

__all__ = [
    "Evidence",
    "Provenance",
    "QueryTrace",
    "Retrieved",
    "TraceError",
    "read_traces",
    "traces_of",
    "write_traces",
]


class TraceError(ValueError, BadInput):
    """A hits.jsonl line that cannot be read; ``str()`` names the file, line and problem."""


@dataclass(frozen=True)
class Evidence:
    """One gold judgment of a query; ``text`` is the span's text (None for a whole document)."""

    doc_id: str
    grade: int
    start: int | None
    end: int | None
    text: str | None
    #: Pages of a paged document (PDF) the span lies on: ``"3"`` or ``"3-4"``.
    pages: str | None = None


@dataclass(frozen=True)
class Retrieved:
    """One retrieved chunk at ``rank`` (1-based) with its retrieval score."""

    rank: int
    chunk_id: str
    doc_id: str
    start: int
    end: int
    n_tokens: int
    score: float | None
    text: str | None
    #: Pages of a paged document (PDF) the chunk lies on: ``"3"`` or ``"3-4"``.
    pages: str | None = None
    #: Characters of ``text`` the embedding model read, for a chunk longer than its window
    #: (None: it read all of it, or nothing was embedded).
    window_end: int | None = None
    #: With a re-ranker: the rank (1-based) and score in the retriever's own ranking
    #: (None: no re-ranker, or not in the retriever's list).
    first_rank: int | None = None
    first_score: float | None = None
    #: With parent retrieval: the chunk whose match brought this parent in, and its offsets.
    via: str | None = None
    via_start: int | None = None
    via_end: int | None = None

    def overlaps(self, gold: Evidence) -> tuple[int, int] | None:
        """The part of this chunk (chunk-relative offsets) inside ``gold``, if any."""
        if gold.doc_id != self.doc_id:
            return None
        if gold.start is None or gold.end is None:
            return (0, self.end - self.start)  # a whole relevant document
        a, b = max(self.start, gold.start), min(self.end, gold.end)
        return (a - self.start, b - self.start) if a < b else None

    def gold_share(self, gold: Evidence) -> float:
        """Share of ``gold``'s characters inside this chunk (1.0 for a document judgment)."""
        part = self.overlaps(gold)
        if part is None:
            return 0.0
        if gold.start is None or gold.end is None:
            return 1.0
        return (part[1] - part[0]) / max(gold.end - gold.start, 1)


@dataclass(frozen=True)
class QueryTrace:
    """One line of ``hits.jsonl``.

    ``credits[level]`` holds, per relevance unit at that level, the rank at which
    it was credited in the whole retrieved ranking (None: never); span units in
    the order of the query's ``relevant`` list, page units by document and then
    page (each hit's ``pages`` says which pages it lies on). Empty at a level the
    query has no unit at.
    """

    query_id: str
    query: str
    type: str | None
    source: str | None
    gold: tuple[Evidence, ...]
    hits: tuple[Retrieved, ...]
    credits: Mapping[str, tuple[int | None, ...]]
    #: k -> two-hop failure class (``sweep.scoring.diagnostics``), for multi-hop queries only.
    twohop: Mapping[int, str] = field(default_factory=dict)
    #: The evaluation set's reference answer (the query's optional ``answer`` field).
    reference: str | None = None

    @property
    def top_score(self) -> float | None:
        """The top-1 retrieval score: what an abstention threshold would look at."""
        return self.hits[0].score if self.hits else None

    def first_relevant(self, level: str) -> int | None:
        """Rank of the first hit that credits a unit at ``level`` (None: none does, or no unit)."""
        return min((r for r in self.credits.get(level, ()) if r is not None), default=None)

    def to_json(self) -> str:
        return json.dumps(
            {
                "query_id": self.query_id,
                "query": self.query,
                "type": self.type,
                "source": self.source,
                "gold": [vars(g) for g in self.gold],
                "hits": [_hit_json(h) for h in self.hits],
                "credits": {level: list(v) for level, v in self.credits.items()},
                "twohop": {str(k): c for k, c in self.twohop.items()},
                "reference": self.reference,
            },
            ensure_ascii=False,
        )

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> QueryTrace:
        return cls(
            query_id=str(obj["query_id"]),
            query=str(obj.get("query", "")),
            type=None if obj.get("type") is None else str(obj["type"]),
            source=None if obj.get("source") is None else str(obj["source"]),
            gold=tuple(
                Evidence(
                    str(g["doc_id"]),
                    int(g.get("grade", 1)),
                    _optional(int, g.get("start")),
                    _optional(int, g.get("end")),
                    g.get("text"),
                    g.get("pages"),
                )
                for g in obj.get("gold", [])
            ),
            hits=tuple(
                Retrieved(
                    int(h["rank"]),
                    str(h.get("chunk_id", "")),
                    str(h["doc_id"]),
                    int(h["start"]),
                    int(h["end"]),
                    int(h.get("n_tokens", 0)),
                    None if h.get("score") is None else float(h["score"]),
                    h.get("text"),
                    h.get("pages"),
                    _optional(int, h.get("window_end")),
                    _optional(int, h.get("first_rank")),
                    _optional(float, h.get("first_score")),
                    _optional(str, h.get("via")),
                    _optional(int, h.get("via_start")),
                    _optional(int, h.get("via_end")),
                )
                for h in obj.get("hits", [])
            ),
            credits={
                str(level): tuple(None if r is None else int(r) for r in ranks)
                for level, ranks in (obj.get("credits") or {}).items()
            },
            twohop={int(k): str(c) for k, c in (obj.get("twohop") or {}).items()},
            reference=None if obj.get("reference") is None else str(obj["reference"]),
        )


#: The keys of a hit written only when they hold something (a setting without a
#: re-ranker or parents, or whose chunks all fit the model, writes none of them).
_OPTIONAL_KEYS = ("window_end", "first_rank", "first_score", "via", "via_start", "via_end")


def _hit_json(h: Retrieved) -> dict[str, Any]:
    out = {k: v for k, v in vars(h).items() if k not in _OPTIONAL_KEYS or v is not None}
    out["score"] = _finite(h.score)
    if "first_score" in out:
        out["first_score"] = _finite(h.first_score)
    return out


def _finite(x: float | None) -> float | None:
    return None if x is None or math.isnan(x) else x


def _optional(kind: type, value: Any) -> Any:
    return None if value is None else kind(value)


@dataclass(frozen=True)
class Provenance:
    """Why each passage of a ranking was read and ranked as it was, for its traces; each
    part None when the setting has none.

    ``window_ends[p]``: the characters of passage ``p`` the embedding model read (-1: all
    of it, or nothing was embedded). ``first``: the retriever's own ranking of the same
    passages, before a re-ranker reordered it. ``via`` (parent retrieval), aligned with
    the ranking's ids: the index in ``children`` of the chunk that brought each passage.
    """

    window_ends: np.ndarray | None = None
    first: Ranking | None = None
    via: np.ndarray | None = None
    children: Sequence[Chunk] = ()

    def window_end(self, passage: int) -> int | None:
        if self.window_ends is None:
            return None
        end = int(self.window_ends[passage])
        return None if end < 0 else end

    def first_ranks(self, query: int) -> dict[int, tuple[int, float | None]]:
        """Passage -> its rank (1-based) and score in query ``query``'s first-stage row."""
        if self.first is None:
            return {}
        out: dict[int, tuple[int, float | None]] = {}
        for rank, (p, s) in enumerate(
            zip(self.first.ids[query].tolist(), self.first.scores[query].tolist()), 1
        ):
            if p >= 0 and p not in out:
                out[p] = (rank, _finite(float(s)))
        return out

    def child(self, query: int, rank: int) -> Chunk | None:
        """The chunk that brought the passage at ``rank`` (1-based) of query ``query``."""
        if self.via is None or rank > self.via.shape[1]:
            return None
        c = int(self.via[query, rank - 1])
        return self.children[c] if c >= 0 else None


def traces_of(
    dataset: Dataset,
    chunks: Sequence[Chunk],
    ranking: Ranking,
    credits: UnitCredits,
    top_k: int,
    twohop: Mapping[str, Mapping[int, str]] | None = None,
    provenance: Provenance | None = None,
) -> list[QueryTrace]:
    """The trace of every query of ``dataset`` (row i of ``ranking`` is query i); ``twohop``
    gives the two-hop class per k of the multi-hop queries; ``provenance``, why each of
    ``chunks`` (the passages ranked) was read and ranked as it was."""
    by_id = dataset.by_id()
    why = provenance or Provenance()
    out = []
    for i, q in enumerate(dataset.queries):
        ids = ranking.row(i)[:top_k].tolist()
        scores = ranking.scores[i, : len(ids)].tolist()
        first = why.first_ranks(i)
        hits = []
        for rank, (c, s) in enumerate(zip(ids, scores), 1):
            chunk, child = chunks[c], why.child(i, rank)
            first_rank, first_score = first.get(c, (None, None))
            hits.append(
                Retrieved(
                    rank,
                    chunk.chunk_id,
                    chunk.doc_id,
                    chunk.start,
                    chunk.end,
                    chunk.n_tokens,
                    float(s),
                    chunk.text,
                    page_range(by_id[chunk.doc_id], chunk.start, chunk.end),
                    window_end=why.window_end(c),
                    first_rank=first_rank,
                    first_score=first_score,
                    via=None if child is None else child.chunk_id,
                    via_start=None if child is None else child.start,
                    via_end=None if child is None else child.end,
                )
            )
        out.append(
            QueryTrace(
                q.query_id,
                q.query,
                q.type,
                _source(q),
                _gold(q, by_id),
                tuple(hits),
                {
                    level: credits.ranks[level][q.query_id]
                    for level in LEVELS
                    if q.query_id in credits.ranks[level]
                },
                dict((twohop or {}).get(q.query_id, {})),
                _reference(q),
            )
        )
    return out


def _source(q: Query) -> str | None:
    value = q.metadata.get("source") if isinstance(q.metadata, Mapping) else None
    return None if value is None else str(value)


def _reference(q: Query) -> str | None:
    value = q.metadata.get("answer") if isinstance(q.metadata, Mapping) else None
    return value.strip() if isinstance(value, str) and value.strip() else None


def page_range(document: Any, start: int, end: int) -> str | None:
    """``"3"`` or ``"3-4"``: the pages of a paged document that ``start:end`` lies on
    (``metadata["pages"]``: each page's character range, as a reader recorded it)."""
    meta = getattr(document, "metadata", None)
    pages = meta.get("pages") if isinstance(meta, Mapping) else None
    if not pages:
        return None
    on = [n for n, (a, b) in enumerate(pages, 1) if a < end and start < b]
    if not on:
        return None
    return str(on[0]) if on[0] == on[-1] else f"{on[0]}-{on[-1]}"


def _gold(q: Query, by_id: Mapping[str, Any]) -> tuple[Evidence, ...]:
    return tuple(
        Evidence(
            j.doc_id,
            j.grade,
            j.start,
            j.end,
            by_id[j.doc_id].text[j.start : j.end] if j.is_span else None,
            page_range(by_id[j.doc_id], j.start, j.end) if j.is_span else None,
        )
        for j in q.relevant
        if j.grade > 0
    )


def write_traces(path: Path, traces: Iterable[QueryTrace]) -> None:
    """``hits.jsonl``, a trace a line. A write that fails (a full disk) leaves no half
    file holding the space, and its error names the file."""
    try:
        with open(path, "w", encoding="utf-8") as f:
            for t in traces:
                f.write(t.to_json() + "\n")
    except OSError as e:
        try:
            Path(path).unlink(missing_ok=True)
        except OSError:
            pass
        raise OSError(e.errno, e.strerror, str(path)) from None


def read_traces(path: Path) -> dict[str, QueryTrace]:
    """``hits.jsonl`` of one job, by query id."""
    regular_file(path)  # never open a FIFO or a device in its place
    # a trace is a few levels deep; thousands are damage
    traces = jsonl_records(path, QueryTrace.from_json, TraceError, "a trace", "malformed record")
    return {t.query_id: t for t in traces}
