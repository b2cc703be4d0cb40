"""Means over queries with bootstrap intervals, per level.

A query with no relevance unit at a level is excluded there and counted in
``n_excluded``. The ``page`` level is summarized only for a question set with a
unit there (evidence on a page of a paged document): a set without pages has the
``doc`` and ``span`` levels alone. Intervals are percentile bootstraps over
queries with a fixed seed: the same table and seed always give the same numbers.
All metrics of a level share the resamples, and each level draws from its own
stream, so adding a metric or a level never moves another metric's interval.
Rounding happens only in :meth:`Summary.to_markdown`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sweep.core.measures import LEVELS, OPTIONAL_LEVELS
from sweep.core.types import Query
from sweep.scoring.table import ScoreTable

__all__ = ["LevelSummary", "MetricSummary", "Summary", "bootstrap_means", "summarize"]

# Resample matrices are built in blocks of about this many cells.
_BLOCK = 1 << 22


@dataclass(frozen=True)
class MetricSummary:
    mean: float
    ci_low: float
    ci_high: float

    def to_dict(self) -> dict[str, float]:
        return {"mean": self.mean, "ci_low": self.ci_low, "ci_high": self.ci_high}


@dataclass(frozen=True)
class LevelSummary:
    """One level: how many queries were averaged and excluded, and each metric's mean."""

    level: str
    n_queries: int
    n_excluded: int
    metrics: Mapping[str, MetricSummary]

    def to_dict(self) -> dict[str, Any]:
        return {
            "n_queries": self.n_queries,
            "n_excluded": self.n_excluded,
            "metrics": {name: m.to_dict() for name, m in self.metrics.items()},
        }


@dataclass(frozen=True)
class Summary:
    levels: Mapping[str, LevelSummary]
    n_boot: int
    confidence: float
    seed: int

    def to_dict(self) -> dict[str, Any]:
        """The ``summary.json`` layout: ``levels`` -> level -> counts and metrics, plus the bootstrap settings."""
        return {
            "levels": {name: lv.to_dict() for name, lv in self.levels.items()},
            "bootstrap": {"n_boot": self.n_boot, "confidence": self.confidence, "seed": self.seed},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Summary:
        """Read back :meth:`to_dict`'s layout; ``KeyError``/``TypeError`` on anything else."""
        levels = {}
        for name, lv in data["levels"].items():
            metrics = {
                m: MetricSummary(float(v["mean"]), float(v["ci_low"]), float(v["ci_high"]))
                for m, v in lv["metrics"].items()
            }
            levels[name] = LevelSummary(name, int(lv["n_queries"]), int(lv["n_excluded"]), metrics)
        boot = data["bootstrap"]
        return cls(levels, int(boot["n_boot"]), float(boot["confidence"]), int(boot["seed"]))

    def interval(self, level: str, metric: str) -> MetricSummary | None:
        """One metric's mean and interval, None when the level or metric was not scored."""
        lv = self.levels.get(level)
        return None if lv is None else lv.metrics.get(metric)

    def metric_names(self) -> list[str]:
        """Every metric of any level, in first-seen order."""
        return list(dict.fromkeys(name for lv in self.levels.values() for name in lv.metrics))

    def to_markdown(self, digits: int = 3) -> str:
        """A table: one row per metric, one column per level, ``mean [ci_low, ci_high]``."""
        pct = f"{self.confidence * 100:g}%"
        header = ["metric"] + [
            f"{name} (n={lv.n_queries}, excluded {lv.n_excluded})"
            for name, lv in self.levels.items()
        ]
        lines = [
            "| " + " | ".join(header) + " |",
            "|" + "|".join(["---"] + ["---:"] * len(self.levels)) + "|",
        ]
        for metric in self.metric_names():
            cells = [metric]
            for lv in self.levels.values():
                m = lv.metrics.get(metric)
                cells.append(
                    "—"
                    if m is None
                    else f"{m.mean:.{digits}f} [{m.ci_low:.{digits}f}, {m.ci_high:.{digits}f}]"
                )
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
        lines.append(
            f"Mean over queries with a relevant unit at the level, [{pct} bootstrap interval over "
            f"queries, {self.n_boot} resamples, seed {self.seed}]."
        )
        return "\n".join(lines) + "\n"


def bootstrap_means(
    values: np.ndarray, *, n_boot: int, seed: Sequence[int] | int, confidence: float
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval of the column means of ``values`` (queries x metrics).

    Rows are resampled with replacement ``n_boot`` times; every column sees the
    same resamples. Returns ``(low, high)`` per column.
    """
    values = np.asarray(values, dtype=np.float64)
    n, m = values.shape
    rng = np.random.default_rng(seed)
    means = np.empty((n_boot, m))
    block = max(1, _BLOCK // max(n, 1))
    for lo in range(0, n_boot, block):
        b = min(block, n_boot - lo)
        picks = rng.integers(0, n, size=(b, n))
        # Counts of each query per resample, then one matrix product for all metrics.
        counts = np.bincount(
            (picks + (np.arange(b) * n)[:, None]).ravel(), minlength=b * n
        ).reshape(b, n)
        means[lo : lo + b] = counts @ values / n
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha], axis=0)
    return low, high


def summarize(
    table: ScoreTable,
    queries: Sequence[Query],
    *,
    n_boot: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Summary:
    """Per level: counts, and every metric's mean with its bootstrap interval.

    ``queries`` are the queries that were scored; a table row for a query not
    among them, or an included query missing from a metric, is an error.
    """
    if not isinstance(n_boot, int) or n_boot < 1:
        raise ValueError(f"n_boot must be a positive integer, got {n_boot!r}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    known = {q.query_id for q in queries}
    for code in np.unique(table.query_code).tolist():
        if table.query_ids[code] not in known:
            raise ValueError(
                f"score table has rows for query {table.query_ids[code]!r}, "
                "which is not among the queries"
            )
    levels: dict[str, LevelSummary] = {}
    for level_index, level in enumerate(LEVELS):
        included = {q.query_id for q in queries if q.has_unit(level)}
        codes, names, values = table.matrix(level)
        if level in OPTIONAL_LEVELS and not included and len(codes) == 0:
            # A question set without pages says nothing about pages: its summary, tables
            # and results.csv stay what they were before the page level existed.
            continue
        row_ids = [table.query_ids[c] for c in codes.tolist()]
        stray = next((qid for qid in row_ids if qid not in included), None)
        if stray is not None:
            raise ValueError(
                f"score table has {level}-level rows for query {stray!r}, "
                f"which has no relevant unit at that level"
            )
        if names and (len(row_ids) != len(included) or np.isnan(values).any()):
            missing = len(included) - int(np.isfinite(values).all(axis=1).sum())
            raise ValueError(
                f"score table lacks {level}-level values for {missing} of "
                f"{len(included)} queries with a relevant unit"
            )
        metrics: dict[str, MetricSummary] = {}
        if names and len(included):
            means = values.mean(axis=0)
            low, high = bootstrap_means(
                values, n_boot=n_boot, seed=[seed, level_index], confidence=confidence
            )
            for j, name in enumerate(names):
                metrics[name] = MetricSummary(float(means[j]), float(low[j]), float(high[j]))
        levels[level] = LevelSummary(level, len(included), len(queries) - len(included), metrics)
    return Summary(levels, n_boot, confidence, seed)
