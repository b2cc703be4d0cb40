"""Can the evaluation set tell two settings apart? Paired tests over queries.

Every setting of a sweep is scored on the same queries, so settings are
compared query by query (paired), which is far more sensitive than comparing
two means with their separate intervals.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np


def paired_randomization_test(a: np.ndarray, b: np.ndarray, *, n_perm: int = 10_000,
                              seed: int = 0) -> float:
    """Two-sided p-value of mean(a - b) under random sign flips of the per-query differences."""
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    if d.shape != np.shape(b) or d.ndim != 1:
        raise ValueError("paired test needs two 1-D arrays of the same length")
    if d.size == 0:
        return 1.0
    observed = abs(d.mean())
    rng = np.random.default_rng(seed)
    # Chunked so memory stays small for large query sets.
    hits, done = 0, 0
    while done < n_perm:
        m = min(2_000, n_perm - done)
        signs = rng.integers(0, 2, size=(m, d.size), dtype=np.int8) * 2 - 1
        flipped = np.abs(signs @ d) / d.size
        # A tolerance keeps exact ties (e.g. identical settings) counted as ties.
        hits += int(np.count_nonzero(flipped >= observed - 1e-12))
        done += m
    return (hits + 1) / (n_perm + 1)


def holm(p_values: Sequence[float]) -> np.ndarray:
    """Holm–Bonferroni adjusted p-values (monotone, capped at 1), in input order."""
    p = np.asarray(p_values, dtype=np.float64)
    order = np.argsort(p, kind="stable")
    m = p.size
    adjusted = np.empty(m)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        adjusted[i] = running
    return adjusted


@dataclass(frozen=True)
class Comparison:
    """One setting against the best setting on the primary metric."""

    job: int
    mean: float
    diff: float           # mean - best mean (<= 0)
    p_value: float        # raw paired test against the best
    p_holm: float         # Holm-adjusted over the grid
    verdict: str          # "best" | "tie" (not distinguishable from best) | "worse"


def compare_to_best(per_query: Mapping[int, Mapping[str, float]], *, alpha: float = 0.05,
                    n_perm: int = 10_000, seed: int = 0) -> list[Comparison]:
    """Test every setting against the one with the highest mean, Holm-corrected.

    ``per_query`` maps a job to its per-query scores on one metric. Only the
    queries scored in every setting are compared (they are the same queries
    whenever the settings ran on one evaluation set).
    """
    if not per_query:
        return []
    common = sorted(set.intersection(*(set(v) for v in per_query.values())))
    if not common:
        raise ValueError("the settings share no scored query")
    jobs = sorted(per_query)
    scores = {j: np.array([per_query[j][q] for q in common]) for j in jobs}
    means = {j: float(scores[j].mean()) for j in jobs}
    best = max(jobs, key=lambda j: (means[j], -j))
    others = [j for j in jobs if j != best]
    raw = [paired_randomization_test(scores[best], scores[j], n_perm=n_perm, seed=seed + j)
           for j in others]
    adjusted = holm(raw) if raw else np.array([])
    out = [Comparison(best, means[best], 0.0, 1.0, 1.0, "best")]
    for j, p, ph in zip(others, raw, adjusted):
        out.append(Comparison(j, means[j], means[j] - means[best], float(p), float(ph),
                              "tie" if ph >= alpha else "worse"))
    return sorted(out, key=lambda c: c.job)


@dataclass(frozen=True)
class Recommendation:
    job: int
    reason: str


def recommend(comparisons: Sequence[Comparison], cost: Mapping[int, tuple[float, float]],
              *, metric: str = "the primary metric", labels: Mapping[int, str] | None = None
              ) -> Recommendation | None:
    """The cheapest setting not distinguishable from the best.

    ``cost[job] = (retrieved tokens per query at the primary k, chunks in the index)``:
    what the LLM reads per question first, then the index size.
    """
    candidates = [c for c in comparisons if c.verdict in ("best", "tie") and c.job in cost]
    if not candidates:
        return None
    pick = min(candidates, key=lambda c: (cost[c.job][0], cost[c.job][1], -c.mean, c.job))
    best = next(c for c in comparisons if c.verdict == "best")
    name = (labels or {}).get(pick.job, f"job {pick.job}")
    if pick.job == best.job:
        reason = (f"{name} has the best {metric} ({best.mean:.3f}) and no setting that is as good "
                  f"retrieves fewer tokens per query ({cost[pick.job][0]:.0f}).")
    else:
        best_name = (labels or {}).get(best.job, f"job {best.job}")
        reason = (f"{name} is not distinguishable from the best, {best_name}, on {metric} "
                  f"({pick.mean:.3f} vs {best.mean:.3f}, Holm-adjusted p = {pick.p_holm:.2f}) and "
                  f"retrieves {cost[pick.job][0]:.0f} tokens per query instead of "
                  f"{cost[best.job][0]:.0f}.")
    return Recommendation(pick.job, reason)
