"""A sweep's per-query files, read back: scores, retrieved chunks, query types.

Each job saves ``per_query.csv`` (``query_id,level,metric,value``) and
``hits.jsonl`` (the query, its gold evidence, its top chunks). The report
reads them to test settings against each other query by query, to break the
primary metric down by query type, and to list the worst queries with the
text a person needs to see why they failed (seed 003).
"""

from __future__ import annotations

import csv
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np

#: Type label of queries the evaluation set gives no ``type``.
NO_TYPE = "(no type)"


class ReportError(ValueError):
    """A saved file of a sweep cannot be read; ``str()`` names the file, line and problem."""


# ---------------------------------------------------------------- scores


@dataclass(frozen=True)
class ScoreSheet:
    """One job's per-query scores: ``values[(level, metric)][query_id] = value``."""

    values: Mapping[tuple[str, str], Mapping[str, float]]

    def get(self, level: str, metric: str) -> dict[str, float]:
        """Scores of every query scored on ``metric`` at ``level`` (excluded queries absent)."""
        return dict(self.values.get((level, metric), {}))


_cache: dict[tuple[Path, frozenset], tuple[tuple[int, int], ScoreSheet]] = {}


def read_scores(path: Path, wanted: Iterable[tuple[str, str]] | None = None) -> ScoreSheet:
    """``per_query.csv`` of one job; empty or NaN values (excluded queries) are skipped.

    ``wanted`` keeps only those ``(level, metric)`` pairs: a job's file holds
    every metric at every k and budget, the report needs one or two. Parsed
    sheets are kept per file version, because the sweep rebuilds the report
    after every job and would otherwise reread every earlier job's file.
    """
    path = Path(path)
    key = (path, frozenset(wanted) if wanted is not None else frozenset({("*", "*")}))
    st = os.stat(path)
    stamp = (st.st_mtime_ns, st.st_size)
    hit = _cache.get(key)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    sheet = _parse_scores(path, None if wanted is None else key[1])
    _cache[key] = (stamp, sheet)
    return sheet


def _parse_scores(path: Path, wanted: frozenset | None) -> ScoreSheet:
    values: dict[tuple[str, str], dict[str, float]] = {}
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        want = ["query_id", "level", "metric", "value"]
        if header is None or header[:4] != want:
            raise ReportError(f"{path}:1: expected the header {','.join(want)}, got {header}")
        for line, rec in enumerate(reader, start=2):
            if not rec:
                continue
            if len(rec) < 4:
                raise ReportError(f"{path}:{line}: expected 4 columns, got {len(rec)}")
            qid, level, metric, raw = rec[:4]
            if wanted is not None and (level, metric) not in wanted:
                continue
            if raw.strip() == "":
                continue
            try:
                value = float(raw)
            except ValueError:
                raise ReportError(f"{path}:{line}: value {raw!r} is not a number") from None
            if math.isnan(value):
                continue
            values.setdefault((level, metric), {})[qid] = value
    return ScoreSheet(values)


# ---------------------------------------------------------------- hits


@dataclass(frozen=True)
class Evidence:
    """One gold judgment of a query; ``text`` is the span's text (None for a whole document)."""

    doc_id: str
    grade: int
    start: int | None
    end: int | None
    text: str | None


@dataclass(frozen=True)
class Retrieved:
    """One retrieved chunk; ``text`` is saved for the top few ranks only."""

    rank: int
    doc_id: str
    start: int
    end: int
    n_tokens: int
    text: str | None

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
class QueryRecord:
    """One line of ``hits.jsonl``: the query, its gold evidence and what was retrieved."""

    query_id: str
    query: str
    type: str | None
    gold: tuple[Evidence, ...]
    hits: tuple[Retrieved, ...]


def read_hits(path: Path) -> dict[str, QueryRecord]:
    """``hits.jsonl`` of one job, by query id (not cached: it carries chunk texts)."""
    out: dict[str, QueryRecord] = {}
    with open(path, encoding="utf-8") as f:
        for line, text in enumerate(f, start=1):
            if not text.strip():
                continue
            try:
                obj = json.loads(text)
                rec = QueryRecord(
                    query_id=str(obj["query_id"]), query=str(obj.get("query", "")),
                    type=None if obj.get("type") is None else str(obj["type"]),
                    gold=tuple(Evidence(str(g["doc_id"]), int(g.get("grade", 1)), g.get("start"),
                                        g.get("end"), g.get("text")) for g in obj.get("gold", [])),
                    hits=tuple(Retrieved(int(h["rank"]), str(h["doc_id"]), int(h["start"]),
                                         int(h["end"]), int(h.get("n_tokens", 0)), h.get("text"))
                               for h in obj.get("hits", [])))
            except json.JSONDecodeError as e:
                raise ReportError(f"{path}:{line}: bad JSON: {e.msg}") from None
            except KeyError as e:
                raise ReportError(f"{path}:{line}: missing key {e.args[0]!r}") from None
            except (TypeError, ValueError, AttributeError) as e:
                raise ReportError(f"{path}:{line}: malformed record: {e}") from None
            out[rec.query_id] = rec
    return out


# ---------------------------------------------------------------- derived tables


def first_relevant_ranks(mrr: Mapping[str, float]) -> dict[str, int]:
    """Rank of the first relevant hit per query from ``mrr@K`` (0: none in the top K)."""
    return {q: (int(round(1.0 / v)) if v > 0 else 0) for q, v in mrr.items()}


@dataclass(frozen=True)
class TypeBreakdown:
    """Mean of one metric per query type: ``means[i, j]`` is job ``jobs[i]`` on ``types[j]``."""

    jobs: tuple[int, ...]
    types: tuple[str, ...]
    counts: tuple[int, ...]   # queries of each type scored on the metric
    means: np.ndarray         # NaN where a job scored no query of that type


def type_breakdown(scores: Mapping[int, Mapping[str, float]],
                   types: Mapping[str, str | None]) -> TypeBreakdown | None:
    """Per-type means; None when no query of the evaluation set has a type."""
    if not scores or all(t is None for t in types.values()):
        return None
    label = {q: (t if t is not None else NO_TYPE) for q, t in types.items()}
    scored = set().union(*(set(v) for v in scores.values()))
    names = sorted({label.get(q, NO_TYPE) for q in scored}, key=lambda t: (t == NO_TYPE, t))
    jobs = tuple(sorted(scores))
    counts = tuple(sum(1 for q in scored if label.get(q, NO_TYPE) == t) for t in names)
    means = np.full((len(jobs), len(names)), np.nan)
    for i, job in enumerate(jobs):
        for j, t in enumerate(names):
            vals = [v for q, v in scores[job].items() if label.get(q, NO_TYPE) == t]
            if vals:
                means[i, j] = float(np.mean(vals))
    return TypeBreakdown(jobs, tuple(names), counts, means)


@dataclass(frozen=True)
class QueryRow:
    """One query in the worst-first table of the chosen setting."""

    query_id: str
    value: float                 # the chosen setting's score
    across_mean: float           # mean over every tested setting
    across_min: float
    across_max: float
    record: QueryRecord | None   # None when hits.jsonl has no line for it


def worst_first(chosen: Mapping[str, float], all_scores: Mapping[int, Mapping[str, float]],
                records: Mapping[str, QueryRecord]) -> list[QueryRow]:
    """The chosen setting's queries, lowest score first; ties: hardest across settings first."""
    rows = []
    for q, v in chosen.items():
        across = [s[q] for s in all_scores.values() if q in s] or [v]
        rows.append(QueryRow(q, v, float(np.mean(across)), float(min(across)), float(max(across)),
                             records.get(q)))
    return sorted(rows, key=lambda r: (r.value, r.across_mean, r.query_id))


def _clip(text: str, limit: int) -> str:
    """One line of at most ``limit`` characters, with ``<`` and ``&`` escaped: Markdown
    renderers would otherwise take a document's HTML for markup."""
    text = " ".join(text.split())
    text = text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
    return text.replace("&", "&amp;").replace("<", "&lt;")


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def worst_queries_markdown(rows: Sequence[QueryRow], *, metric: str, setting: str,
                           details: int = 20, text_limit: int = 700) -> str:
    """The worst-first table, then query text, gold evidence and top chunks of the worst ones."""
    out = [f"# Worst queries: {metric}, {setting}", "",
           f"Queries sorted by {metric} of {setting}, lowest first; `all settings` is the mean "
           "[min, max] over every setting that ran, so a query that is low everywhere is a hard "
           "question (or a bad judgment), one that is low only here is this setting's fault.", "",
           "| # | query_id | type | value | all settings | query |",
           "|---|---|---|---|---|---|"]
    for i, r in enumerate(rows, 1):
        rec = r.record
        out.append(f"| {i} | {_md_cell(r.query_id)} | {_md_cell((rec and rec.type) or '')} | "
                   f"{r.value:.3f} | {r.across_mean:.3f} [{r.across_min:.2f}, {r.across_max:.2f}] | "
                   f"{_md_cell(_clip(rec.query, 120) if rec else '')} |")
    for i, r in enumerate(rows[:details], 1):
        rec = r.record
        out += ["", f"## {i}. {r.query_id} — {metric} = {r.value:.3f}"
                + (f" (type: {rec.type})" if rec and rec.type else ""), ""]
        if rec is None:
            out.append("(no saved hits for this query)")
            continue
        out += [f"**Query:** {_clip(rec.query, 10 * text_limit)}", "", "**Gold evidence:**", ""]
        for g in rec.gold:
            where = f"{g.doc_id} [{g.start}:{g.end}]" if g.start is not None else f"{g.doc_id} (whole document)"
            out.append(f"- {where}, grade {g.grade}" + (f": “{_clip(g.text, text_limit)}”" if g.text else ""))
        out += ["", "**Retrieved:**", ""]
        for h in rec.hits:
            shares = [h.gold_share(g) for g in rec.gold]
            mark = ("holds " + ", ".join(f"{s:.0%} of gold {j + 1}" for j, s in enumerate(shares) if s > 0)
                    if any(shares) else "no gold")
            line = f"{h.rank}. {h.doc_id} [{h.start}:{h.end}], {h.n_tokens} tokens, {mark}"
            if h.text is not None:
                line += f"  \n   > {_clip(h.text, text_limit)}"
            out.append(line)
    return "\n".join(out) + "\n"
