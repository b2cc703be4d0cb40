"""Per-query traces of a job, ``<job>/hits.jsonl``: what a person reads to see why a query failed.

One JSON object per query: the question, its gold evidence (with text), the
retrieved chunks of the top ``max(eval.k)`` ranks with their text and retrieval
scores, and the rank at which each relevance unit was credited in the whole
ranking (so the first relevant rank is exact, not rebuilt from a metric).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sweep.core.errors import BadInput
from sweep.core.files import not_utf8, regular_file
from sweep.core.measures import LEVELS
from sweep.core.types import Chunk, Dataset, Query, Ranking
from sweep.scoring.credit import UnitCredits

__all__ = [
    "Evidence",
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
    the order of the query's ``relevant`` list. Empty at a level the query has
    no unit at.
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
                "hits": [
                    {
                        **vars(h),
                        "score": None if h.score is None or math.isnan(h.score) else h.score,
                    }
                    for h in self.hits
                ],
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
                    g.get("start"),
                    g.get("end"),
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


def traces_of(
    dataset: Dataset,
    chunks: Sequence[Chunk],
    ranking: Ranking,
    credits: UnitCredits,
    top_k: int,
    twohop: Mapping[str, Mapping[int, str]] | None = None,
) -> list[QueryTrace]:
    """The trace of every query of ``dataset`` (row i of ``ranking`` is query i); ``twohop``
    gives the two-hop class per k of the multi-hop queries."""
    by_id = dataset.by_id()
    out = []
    for i, q in enumerate(dataset.queries):
        ids = ranking.row(i)[:top_k].tolist()
        scores = ranking.scores[i, : len(ids)].tolist()
        hits = tuple(
            Retrieved(
                rank,
                chunks[c].chunk_id,
                chunks[c].doc_id,
                chunks[c].start,
                chunks[c].end,
                chunks[c].n_tokens,
                float(s),
                chunks[c].text,
                page_range(by_id[chunks[c].doc_id], chunks[c].start, chunks[c].end),
            )
            for rank, (c, s) in enumerate(zip(ids, scores), 1)
        )
        out.append(
            QueryTrace(
                q.query_id,
                q.query,
                q.type,
                _source(q),
                _gold(q, by_id),
                hits,
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
    out: dict[str, QueryTrace] = {}
    regular_file(path)  # never open a FIFO or a device in its place
    with open(path, "rb") as f:  # decoded line by line: an error names its line
        for line, raw in enumerate(f, start=1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise TraceError(not_utf8(path)) from None
            if not text.strip():
                continue
            try:
                trace = QueryTrace.from_json(json.loads(text))
            except json.JSONDecodeError as e:
                raise TraceError(f"{path}:{line}: bad JSON: {e.msg}") from None
            except RecursionError:  # a trace is a few levels deep; thousands are damage
                raise TraceError(f"{path}:{line}: nested too deeply to be a trace") from None
            except KeyError as e:
                raise TraceError(f"{path}:{line}: missing key {e.args[0]!r}") from None
            except (TypeError, ValueError, AttributeError) as e:
                raise TraceError(f"{path}:{line}: malformed record: {e}") from None
            out[trace.query_id] = trace
    return out
