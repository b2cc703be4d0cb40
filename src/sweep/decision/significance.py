"""Can the evaluation set tell two settings apart? Paired tests over queries.

Every setting of a sweep is scored on the same queries, so settings are
compared query by query (paired), which is far more sensitive than comparing
two means with their separate intervals.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from sweep.scoring.perquery import PerQueryScores


def paired_randomization_test(
    a: np.ndarray, b: np.ndarray, *, n_perm: int = 10_000, seed: int = 0
) -> float:
    """Two-sided p-value of mean(a - b) under random sign flips of the per-query differences."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError("paired test needs two 1-D arrays of the same length")
    return float(paired_randomization_tests(a, b[:, None], n_perm=n_perm, seed=seed)[0])


def paired_randomization_tests(
    a: np.ndarray, others: np.ndarray, *, n_perm: int = 10_000, seed: int = 0
) -> np.ndarray:
    """Two-sided p-values of ``a`` against every column of ``others`` (queries x settings).

    All columns share the same random sign flips: one matrix product tests a
    whole grid, so a 30-setting sweep costs about as much as one test. Each
    p-value on its own is still an exact randomization test.
    """
    a = np.asarray(a, dtype=np.float64)
    others = np.asarray(others, dtype=np.float64)
    if a.ndim != 1 or others.ndim != 2 or others.shape[0] != a.size:
        raise ValueError("paired tests need a 1-D array and a 2-D array with one row per query")
    d = a[:, None] - others
    if d.shape[1] == 0:
        return np.empty(0)
    if a.size == 0:
        return np.ones(d.shape[1])
    observed = np.abs(d.mean(axis=0))
    rng = np.random.default_rng(seed)
    # Chunked so memory stays small for large query sets.
    hits = np.zeros(d.shape[1], dtype=np.int64)
    done = 0
    while done < n_perm:
        m = min(2_000, n_perm - done)
        signs = (rng.integers(0, 2, size=(m, a.size), dtype=np.int8) * 2 - 1).astype(np.float64)
        flipped = np.abs(signs @ d) / a.size
        # A tolerance keeps exact ties (e.g. identical settings) counted as ties.
        hits += np.count_nonzero(flipped >= observed - 1e-12, axis=0)
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


def questions_needed(
    diffs: np.ndarray, *, alpha: float, power: float = 0.8, comparisons: int = 1
) -> int | None:
    """Queries a paired test would need to detect ``mean(diffs)`` with ``power``.

    Normal approximation of the paired test: n = ((z(1 - a/2) + z(power)) * sd / |mean|)^2
    with sd the standard deviation of the per-query differences and a = alpha /
    comparisons, the strictest step of Holm's correction over the grid (so the
    number errs on the side of more questions). Never fewer than the sign-flip test
    needs to reach that level at all (its smallest p with n queries is 2 / 2^n), which
    is also the answer when every query differs by the same amount. None when no
    difference was observed (a mean of zero): no finite number of questions would do.
    """
    diffs = np.asarray(diffs, dtype=np.float64)
    if diffs.size < 2:
        return None
    mean, sd = float(diffs.mean()), float(diffs.std(ddof=1))
    if abs(mean) < 1e-12:
        return None
    level = alpha / max(comparisons, 1)
    at_least = max(2, math.ceil(math.log2(2 / level)))
    if sd < 1e-12:
        return at_least
    z = NormalDist()
    n = ((z.inv_cdf(1 - level / 2) + z.inv_cdf(power)) * sd / abs(mean)) ** 2
    return max(math.ceil(n), at_least)


@dataclass(frozen=True)
class Comparison:
    """One setting against the best setting on the primary metric."""

    job: int
    mean: float
    diff: float  # mean - best mean (<= 0)
    p_value: float  # raw paired test against the best
    p_holm: float  # Holm-adjusted over the grid
    verdict: str  # "best" | "tie" (not distinguishable from best) | "worse"
    #: For a tie: questions a paired test would need to tell it from the best
    #: (:func:`questions_needed`); None for the best, a worse setting, or no difference.
    n_needed: int | None = None
    n_compared: int = 0  # queries the test paired


def compare_to_best(
    per_query: PerQueryScores,
    *,
    alpha: float = 0.05,
    n_perm: int = 10_000,
    seed: int = 0,
    power: float = 0.8,
) -> list[Comparison]:
    """Test every setting against the one with the highest mean, Holm-corrected.

    ``per_query`` holds each job's per-query scores on one metric. Only the
    queries scored in every setting are compared (they are the same queries
    whenever the settings ran on one evaluation set).
    """
    if not per_query:
        return []
    jobs = sorted(per_query)
    common, matrix = per_query.common(jobs)
    if not common:
        raise ValueError("the settings share no scored query")
    scores = {j: matrix[i] for i, j in enumerate(jobs)}
    means = {j: float(scores[j].mean()) for j in jobs}
    best = max(jobs, key=lambda j: (means[j], -j))
    others = [j for j in jobs if j != best]
    raw = paired_randomization_tests(
        scores[best],
        np.column_stack([scores[j] for j in others]) if others else np.empty((len(common), 0)),
        n_perm=n_perm,
        seed=seed,
    )
    adjusted = holm(raw) if len(raw) else np.array([])
    n = len(common)
    out = [Comparison(best, means[best], 0.0, 1.0, 1.0, "best", n_compared=n)]
    for j, p, ph in zip(others, raw, adjusted):
        tie = ph >= alpha
        needed = (
            questions_needed(
                scores[best] - scores[j], alpha=alpha, power=power, comparisons=len(others)
            )
            if tie
            else None
        )
        out.append(
            Comparison(
                j,
                means[j],
                means[j] - means[best],
                float(p),
                float(ph),
                "tie" if tie else "worse",
                needed,
                n,
            )
        )
    return sorted(out, key=lambda c: c.job)


@dataclass(frozen=True)
class Recommendation:
    job: int
    reason: str


def recommend(
    comparisons: Sequence[Comparison],
    cost: Mapping[int, tuple[float, ...]],
    *,
    metric: str = "the primary metric",
    labels: Mapping[int, str] | None = None,
    untested: Sequence[str] = (),
) -> Recommendation | None:
    """The cheapest setting not distinguishable from the best.

    ``cost[job] = (retrieved tokens per query at the primary k, chunks in the index[,
    chunks re-ranked per query])``, compared in that order: what the LLM reads per
    question first, then the index size, then the re-ranker's work (0 without one).
    ``untested`` names settings that ran but could not be tested: the reason never
    claims anything of them.
    """
    cost = {j: (*c, 0.0)[:3] if len(c) < 3 else tuple(c) for j, c in cost.items()}
    candidates = [c for c in comparisons if c.verdict in ("best", "tie") and c.job in cost]
    if not candidates:
        return None
    pick = min(candidates, key=lambda c: (*cost[c.job], -c.mean, c.job))
    best = next(c for c in comparisons if c.verdict == "best")
    name = (labels or {}).get(pick.job, f"job {pick.job}")
    tokens, chunks, reranked = cost[pick.job]
    if pick.job == best.job:
        ties = [c for c in candidates if c.job != best.job]
        if not ties:
            others = "every other tested setting" if untested else "every other setting"
            reason = (
                f"{name} has the best {metric} ({best.mean:.3f}) and {others} "
                "is significantly worse."
            )
        else:
            reason = (
                f"{name} has the best {metric} ({best.mean:.3f}); of the {len(ties)} "
                f"setting(s) not distinguishable from it, none retrieves fewer tokens per "
                f"query ({tokens:.0f}) or, at as many tokens, needs fewer chunks ({chunks:.0f})"
                + (f" or re-ranks fewer ({reranked:.0f} per query)" if reranked else "")
                + "."
            )
        return Recommendation(pick.job, reason + _untested(untested))
    best_name = (labels or {}).get(best.job, f"job {best.job}")
    b_tokens, b_chunks, b_reranked = cost.get(best.job, (float("nan"),) * 3)
    if best.job not in cost:  # the best row saved no cost: say what the pick costs
        saving = f"retrieves {tokens:.0f} tokens per query"
    elif tokens < b_tokens:
        saving = f"retrieves {tokens:.0f} tokens per query instead of {b_tokens:.0f}"
    elif chunks < b_chunks:
        saving = (
            f"at the same {tokens:.0f} tokens per query needs {chunks:.0f} chunks in the "
            f"index instead of {b_chunks:.0f}"
        )
    elif reranked < b_reranked:
        saving = (
            f"at the same {tokens:.0f} tokens per query and {chunks:.0f} chunks re-ranks "
            f"{reranked:.0f} chunks per query instead of {b_reranked:.0f}"
        )
    else:
        saving = f"costs as much ({tokens:.0f} tokens per query, {chunks:.0f} chunks)"
    reason = (
        f"{name} is not distinguishable from the best, {best_name}, on {metric} "
        f"({pick.mean:.3f} vs {best.mean:.3f}, Holm-adjusted p = {pick.p_holm:.2f}) and "
        f"{saving}."
    )
    return Recommendation(pick.job, reason + _untested(untested))


def _untested(labels: Sequence[str]) -> str:
    if not labels:
        return ""
    return f" Not tested (no per-query scores): {', '.join(labels)}."
