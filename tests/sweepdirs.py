"""Sweep folders for report tests, written through sweep's own types (no model).

A job gets what a real job saves: ``row.json`` (a :class:`Row` with a real
:func:`summarize` of its scores), ``per_query.csv`` (a :class:`ScoreTable`) and
``hits.jsonl`` (:class:`QueryTrace` lines).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from sweep.core.evalconfig import EvalConfig
from sweep.core.measures import LEVELS
from sweep.core.types import Judgment, Query
from sweep.scoring.aggregate import summarize
from sweep.scoring.table import ScoreTable
from sweep.store.row import DatasetInfo, Row
from sweep.store.stats import Stats
from sweep.store.traces import Evidence, QueryTrace, Retrieved, write_traces

TYPES = ("fact", "multi", "adversarial")
GRID = [(s, o) for s in (64, 128, 256) for o in (0, 16)]


def base(n: int = 60, seed: int = 0) -> np.ndarray:
    """Per-query 0/1 recall of a typical setting."""
    return (np.random.default_rng(seed).random(n) < 0.6).astype(float)


# The levels of a question set without pages (the fixtures' default).
UNPAGED = ("doc", "span")


def score_table(per_metric: dict[str, np.ndarray], levels: Sequence[str] = UNPAGED) -> ScoreTable:
    """Every query scored on every metric at every level (values[i] is query q{i})."""
    names = tuple(per_metric)
    n = len(next(iter(per_metric.values())))
    q, lv, m, v = [], [], [], []
    for li, level in enumerate(LEVELS):
        if level not in levels:
            continue
        for i in range(n):
            for mi, name in enumerate(names):
                q.append(i)
                lv.append(li)
                m.append(mi)
                v.append(float(per_metric[name][i]))
    return ScoreTable(
        tuple(f"q{i}" for i in range(n)),
        names,
        np.array(q, dtype=np.int64),
        np.array(lv, dtype=np.int8),
        np.array(m, dtype=np.int64),
        np.array(v),
    )


def make_job(
    sweep: Path,
    job: int,
    size: int,
    overlap: int,
    recall,
    *,
    status: str = "ok",
    error: str | None = None,
    primary: str = "span/recall@5",
    budgets: Sequence[int] = (256, 512, 1024),
    dataset: str = "synthetic",
    fingerprint: str = "f" * 16,
    types: Sequence[str] | None = TYPES,
    min_coverage: float = 0.5,
    notes: Sequence[str] = (),
    settings: dict | None = None,
    scores: bool = True,
    n_boot: int = 100,
    sources: Sequence[str | None] | None = None,
    pages: bool = False,
) -> Row:
    """A finished job as the sweep saves it. ``recall`` is the per-query span/doc recall@5
    (and page recall@5 with ``pages``: each question's evidence then lies on page 1)."""
    levels = LEVELS if pages else UNPAGED
    d = Path(sweep) / str(job)
    d.mkdir(parents=True)
    ev = EvalConfig(
        k=(1, 3, 5, 10),
        budgets=tuple(budgets),
        table_k=(5,),
        primary=primary,
        n_boot=n_boot,
        seed=0,
        min_coverage=min_coverage,
    )
    row_settings = {
        "chunk.strategy": "token",
        "chunk.size": size,
        "chunk.overlap": overlap,
        "chunk.prefix": "none",
        "embed.model": "m",
        "index": "flat",
        **(settings or {}),
    }
    info = DatasetInfo(dataset, fingerprint, 10, 60)
    overrides = (f"chunk.size={size}", f"chunk.overlap={overlap}")
    if status != "ok":
        row = Row(
            job,
            status,
            row_settings,
            ev,
            info,
            overrides,
            error,
            tuple(notes),
            Stats(total_s=0.1),
            path=d,
        )
        row.save(d)
        return row
    recall = np.asarray(recall, dtype=float)
    n = recall.size
    ranks = np.where(recall > 0, 1 + np.arange(n) % 4, 0)
    per_metric = {
        "recall@5": recall,
        "ndcg@5": recall * 0.8,
        "mrr@10": np.where(ranks > 0, 1.0 / np.maximum(ranks, 1), 0.0),
    }
    for b in budgets:
        per_metric[f"recall@{b}t"] = recall * min(1.0, b / (4 * size))
    table = score_table(per_metric, levels)
    on_page = ((1, 0, 60),) if pages else ()
    queries = [
        Query(
            f"q{i}",
            f"Question number {i} & <more>?",
            (Judgment(f"doc{i}.md", 5, 25, pages=on_page),),
        )
        for i in range(n)
    ]
    summary = summarize(table, queries, n_boot=n_boot, seed=0)
    stats = Stats(
        n_chunks=10_000 // size + overlap,
        mean_chunk_tokens=float(size),
        truncated_share=0.0,
        tokens_at={5: 5.0 * size, 1: float(size)},
        embed_s=1.0,
        total_s=2.0,
    )
    row = Row(
        job, "ok", row_settings, ev, info, overrides, None, tuple(notes), stats, summary, path=d
    )
    if scores:  # before the row, as a job does: a saved row's scores are on disk
        table.write_csv(d / "per_query.csv")
    row.save(d)
    traces = []
    for i in range(n):
        hits = tuple(
            Retrieved(
                r,
                f"doc{i + r}.md#0",
                f"doc{i + r}.md",
                0,
                60,
                size,
                1.0 - r / 20,
                f"chunk text {i}-{r} <about> travel",
            )
            for r in range(1, 11)
        )
        traces.append(
            QueryTrace(
                f"q{i}",
                f"Question number {i} & <more>?",
                types[i % len(types)] if types else None,
                sources[i] if sources else None,
                (Evidence(f"doc{i}.md", 1, 5, 25, f"gold evidence {i}"),),
                hits,
                {level: (int(ranks[i]) if ranks[i] else None,) for level in levels},
            )
        )
    write_traces(d / "hits.jsonl", traces)
    return row


def make_grid(sweep: Path, scores: dict, **kw) -> list[Row]:
    """scores[(size, overlap)] = per-query recall array; jobs numbered in insertion order."""
    return [
        make_job(sweep, job, size, overlap, v, **kw)
        for job, ((size, overlap), v) in enumerate(scores.items())
    ]
