"""One metric's per-query scores for several settings, as one jobs × queries array.

What the decision stage tests, breaks down by query type and compares across
question sets. A setting that did not score a query (another question set, a
NaN score) holds NaN there; reading it by job gives only the queries it scored.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from sweep.scoring.table import ScoreTable

__all__ = ["PerQueryScores"]


@dataclass(frozen=True, eq=False)
class PerQueryScores(Mapping[int, Mapping[str, float]]):
    """``values[i, j]``: job ``jobs[i]`` on query ``query_ids[j]`` (NaN: not scored).

    Reads as a mapping ``job -> {query_id: value}`` over the scored queries.
    """

    jobs: tuple[int, ...]
    query_ids: tuple[str, ...]
    values: np.ndarray

    def __post_init__(self) -> None:
        values = np.asarray(self.values, dtype=np.float64).reshape(
            len(self.jobs), len(self.query_ids)
        )
        if len(set(self.jobs)) != len(self.jobs) or len(set(self.query_ids)) != len(self.query_ids):
            raise ValueError("PerQueryScores: jobs and query ids must be unique")
        values.setflags(write=False)
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "_row", {j: i for i, j in enumerate(self.jobs)})

    @classmethod
    def from_mapping(cls, scores: Mapping[int, Mapping[str, float]]) -> PerQueryScores:
        """From ``job -> query_id -> value``; queries in first-seen order, NaN values dropped."""
        jobs = tuple(scores)
        queries = tuple(dict.fromkeys(q for s in scores.values() for q in s))
        col = {q: c for c, q in enumerate(queries)}
        values = np.full((len(jobs), len(queries)), np.nan)
        for i, j in enumerate(jobs):
            for q, v in scores[j].items():
                values[i, col[q]] = v
        return cls(jobs, queries, values)

    @classmethod
    def from_tables(
        cls,
        tables: Mapping[int, ScoreTable],
        level: str,
        metric: str,
        jobs: Iterable[int] | None = None,
    ) -> PerQueryScores:
        """One metric at one level of each job's table; jobs without a score of it are left out."""
        wanted = list(tables) if jobs is None else [j for j in jobs if j in tables]
        scores = {
            j: s
            for j in wanted
            if (s := {q: v for q, v in tables[j].values(level, metric).items() if not np.isnan(v)})
        }
        return cls.from_mapping(scores)

    # Mapping: job -> {query_id: value} of the queries it scored
    def __getitem__(self, job: int) -> dict[str, float]:
        row = self.values[self._row[job]]  # type: ignore[attr-defined]
        return {q: float(v) for q, v in zip(self.query_ids, row.tolist()) if v == v}

    def __iter__(self) -> Iterator[int]:
        return iter(self.jobs)

    def __len__(self) -> int:
        return len(self.jobs)

    def __contains__(self, job: object) -> bool:
        return job in self._row  # type: ignore[attr-defined]

    def select(self, jobs: Iterable[int]) -> PerQueryScores:
        """These jobs only, in this order."""
        jobs = tuple(jobs)
        rows = [self._row[j] for j in jobs]  # type: ignore[attr-defined]
        return PerQueryScores(jobs, self.query_ids, self.values[rows])

    def restrict(self, query_ids: Collection[str]) -> PerQueryScores:
        """Only these queries (jobs that scored none of them stay, with no scores)."""
        keep = [c for c, q in enumerate(self.query_ids) if q in query_ids]
        return PerQueryScores(
            self.jobs, tuple(self.query_ids[c] for c in keep), self.values[:, keep]
        )

    def scored(self) -> np.ndarray:
        """Per query: whether at least one job scored it."""
        return ~np.isnan(self.values).all(axis=0)

    def common(self, jobs: Iterable[int] | None = None) -> tuple[tuple[str, ...], np.ndarray]:
        """The queries every one of ``jobs`` (default: all) scored, in query-id order (so a
        paired test does not depend on the order the queries came in), and their
        ``len(jobs) × len(queries)`` scores."""
        sub = self if jobs is None else self.select(jobs)
        kept = np.flatnonzero(~np.isnan(sub.values).any(axis=0))
        order = sorted(kept.tolist(), key=sub.query_ids.__getitem__)
        return tuple(sub.query_ids[c] for c in order), sub.values[:, order]
