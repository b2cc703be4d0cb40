"""Per-query views of a decided sweep: the primary metric per query type, the worst queries.

Pure functions over per-query scores (:class:`PerQueryScores`) and traces;
the report renders them as Markdown and HTML.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from sweep.core.evalconfig import EvalConfig
from sweep.scoring.perquery import PerQueryScores
from sweep.scoring.table import ScoreTable
from sweep.store.traces import QueryTrace

__all__ = [
    "NO_TYPE",
    "QueryRow",
    "TypeBreakdown",
    "type_breakdown",
    "type_metric_breakdown",
    "worst_first",
]

#: Type label of queries the evaluation set gives no ``type``.
NO_TYPE = "(no type)"


@dataclass(frozen=True)
class TypeBreakdown:
    """Mean of a metric per query type: ``means[i, j]`` is job ``jobs[i]`` on ``types[j]``.

    ``metrics[j]`` names the metric of type j when each type has its own
    (``eval.type_metrics``); empty when one metric serves every type.
    """

    jobs: tuple[int, ...]
    types: tuple[str, ...]
    counts: tuple[int, ...]  # queries of each type scored on the metric
    means: np.ndarray  # NaN where a job scored no query of that type
    metrics: tuple[str, ...] = ()


def type_breakdown(scores: PerQueryScores, types: Mapping[str, str | None]) -> TypeBreakdown | None:
    """Per-type means; None when no query of the evaluation set has a type."""
    if not scores or all(t is None for t in types.values()):
        return None
    jobs = tuple(sorted(scores))
    values = scores.select(jobs).values
    kind = np.array(
        [t if (t := types.get(q)) is not None else NO_TYPE for q in scores.query_ids], dtype=object
    )
    scored = scores.scored()
    names = sorted(set(kind[scored].tolist()), key=lambda t: (t == NO_TYPE, t))
    counts = tuple(int((scored & (kind == t)).sum()) for t in names)
    means = np.full((len(jobs), len(names)), np.nan)
    for j, t in enumerate(names):
        of_type = values[:, kind == t]
        for i in range(len(jobs)):
            vals = of_type[i][~np.isnan(of_type[i])]
            if vals.size:
                means[i, j] = float(np.mean(vals))
    return TypeBreakdown(jobs, tuple(names), counts, means)


def type_metric_breakdown(
    tables: Mapping[int, ScoreTable],
    jobs: Sequence[int],
    types: Mapping[str, str | None],
    ev: EvalConfig,
) -> TypeBreakdown | None:
    """Each type on the metric ``eval.type_metrics`` assigns it (fact: mrr@k, multi:
    complete@k, graded: ndcg@k, others: recall@k), at the primary metric's level."""
    if not tables or all(t is None for t in types.values()):
        return None
    level = ev.primary_metric.level
    by_type: dict[str, set[str]] = {}
    for q, t in types.items():
        by_type.setdefault(t if t is not None else NO_TYPE, set()).add(q)
    names, metrics, counts = [], [], []
    for t in sorted(by_type, key=lambda t: (t == NO_TYPE, t)):
        metric = ev.type_metric(None if t == NO_TYPE else t)
        scored = [set(tables[j].values(level, metric)) & by_type[t] for j in jobs if j in tables]
        n = max((len(s) for s in scored), default=0)
        if metric is None or n == 0:
            continue
        names.append(t)
        metrics.append(metric)
        counts.append(n)
    jobs = tuple(j for j in jobs if j in tables)
    means = np.full((len(jobs), len(names)), np.nan)
    for i, j in enumerate(jobs):
        for c, (t, metric) in enumerate(zip(names, metrics)):
            values = [
                v
                for q, v in tables[j].values(level, metric).items()
                if q in by_type[t] and not np.isnan(v)
            ]
            if values:
                means[i, c] = float(np.mean(values))
    return (
        TypeBreakdown(jobs, tuple(names), tuple(counts), means, tuple(metrics)) if names else None
    )


@dataclass(frozen=True)
class QueryRow:
    """One query in the worst-first table of the chosen setting."""

    query_id: str
    value: float  # the chosen setting's score
    across_mean: float  # mean over every tested setting
    across_min: float
    across_max: float
    trace: QueryTrace | None  # None when hits.jsonl has no line for it


def worst_first(
    scores: PerQueryScores, job: int, traces: Mapping[str, QueryTrace]
) -> list[QueryRow]:
    """Job ``job``'s queries, lowest score first; ties: hardest across settings first."""
    rows = []
    column = {q: c for c, q in enumerate(scores.query_ids)}
    for q, v in scores[job].items():
        others = scores.values[:, column[q]]
        across = others[~np.isnan(others)].tolist() or [v]
        rows.append(
            QueryRow(
                q, v, float(np.mean(across)), float(min(across)), float(max(across)), traces.get(q)
            )
        )
    return sorted(rows, key=lambda r: (r.value, r.across_mean, r.query_id))
