"""Do results on one set of questions hold on another? Rank agreement of the settings.

Generated questions tend to reuse their passage's wording, so tuning on them alone can
over-fit. When an evaluation set
mixes synthetic questions (``metadata.source: synthetic``, as
``sweep.generate`` writes them) with hand-written ones, or when two sweeps ran
the same grid on two question sets, the settings are ranked on each by their
mean primary metric; Kendall's τ (τ-b, ties allowed) says how alike the two
rankings are, with a bootstrap interval over queries (each set resampled on
its own), and the two recommendations say whether the decision would change.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from sweep.scoring.perquery import PerQueryScores

__all__ = ["SYNTHETIC", "RankingAgreement", "agreement", "kendall_tau", "split_by_source"]

SYNTHETIC = "synthetic"
#: The other side of a mixed set: every question not marked synthetic.
HAND_WRITTEN = "hand-written"


def kendall_tau(x: Sequence[float], y: Sequence[float]) -> float:
    """Kendall's τ-b of two paired score vectors (NaN when either is constant)."""
    from scipy.stats import kendalltau

    if len(x) < 2:
        return math.nan
    return float(kendalltau(x, y).statistic)


@dataclass(frozen=True)
class RankingAgreement:
    """How two question sets rank the same settings."""

    names: tuple[str, str]  # e.g. ("synthetic", "hand-written")
    jobs: tuple[int, ...]  # the settings compared (same order in both sets)
    means: tuple[np.ndarray, np.ndarray]  # per setting, the primary metric's mean on each set
    n_queries: tuple[int, int]
    tau: float
    tau_low: float
    tau_high: float
    picks: tuple[int | None, int | None]  # the setting each set's decision recommends

    @property
    def same_pick(self) -> bool:
        return self.picks[0] is not None and self.picks[0] == self.picks[1]


def _matrix(scores: PerQueryScores, jobs: Sequence[int]) -> np.ndarray:
    """Queries x settings, the queries every setting scored (in query-id order)."""
    return scores.common(jobs)[1].T


def agreement(
    a: PerQueryScores,
    b: PerQueryScores,
    *,
    names: tuple[str, str],
    picks: tuple[int | None, int | None],
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    pairs: Mapping[int, int] | None = None,
) -> RankingAgreement | None:
    """Rank agreement of the settings between two question sets.

    ``a`` and ``b`` hold each job's per-query primary metric on each set;
    ``pairs`` maps a job of ``a`` to the same setting's job in ``b`` (the same
    job when both come from one sweep). None with fewer than two settings
    scored on both sets.
    """
    pairs = dict(pairs) if pairs is not None else {j: j for j in a if j in b}
    jobs = tuple(j for j in sorted(a) if pairs.get(j) in b)
    if len(jobs) < 2:
        return None
    ma = _matrix(a, jobs)
    mb = _matrix(b, [pairs[j] for j in jobs])
    if not len(ma) or not len(mb):
        return None
    tau = kendall_tau(ma.mean(axis=0), mb.mean(axis=0))
    rng = np.random.default_rng([seed, 11])
    boots = np.empty(n_boot)
    for i in range(n_boot):
        ra = ma[rng.integers(0, len(ma), len(ma))].mean(axis=0)
        rb = mb[rng.integers(0, len(mb), len(mb))].mean(axis=0)
        boots[i] = kendall_tau(ra, rb)
    boots = boots[np.isfinite(boots)]
    alpha = (1 - confidence) / 2
    low, high = np.quantile(boots, [alpha, 1 - alpha]) if boots.size else (math.nan, math.nan)
    return RankingAgreement(
        names,
        jobs,
        (ma.mean(axis=0), mb.mean(axis=0)),
        (len(ma), len(mb)),
        tau,
        float(low),
        float(high),
        picks,
    )


def split_by_source(
    scores: PerQueryScores, sources: Mapping[str, str | None]
) -> tuple[PerQueryScores, PerQueryScores] | None:
    """Per-query scores of the synthetic and of the other questions; None unless both exist."""
    synthetic = {q for q, s in sources.items() if s == SYNTHETIC}
    if not synthetic or len(synthetic) == len(sources):
        return None
    a = scores.restrict(synthetic)
    b = scores.restrict(set(scores.query_ids) - synthetic)
    if not a.scored().any() or not b.scored().any():
        return None
    return a, b
