"""Why retrieval fails: two-hop failure classes, and whether the retriever's top score can
tell an unanswerable question.

Pure functions over what a setting's ranking credited (per evidence span, the
rank at which it was credited anywhere in the retrieved depth) and over the
top-1 retrieval score of each query.

Two-hop classes of a query with two or more evidence spans, at cut-off k
(spans in the order of the query's ``relevant`` list):

- ``complete``: every span credited within k (two-hop Recall@k);
- ``ranked_out``: every span credited somewhere in the retrieved depth, not all
  within k — a larger k would fix it;
- ``hop1_missed``: the first span credited nowhere, every later one somewhere;
- ``hop2_missed``: the first span credited, a later one nowhere;
- ``both_missed``: the first span and a later one credited nowhere.
With more than two spans, "hop 2" is any span after the first. A missed span
is one the ranking never covers: chunking, embedding or the query is at
fault, not k.

Abstention ("should we retrieve at all?"): the top-1 score of the
answerable and the unanswerable (``relevant: []``) queries; the AUROC of that
score for telling them apart (ties count half), with a stratified bootstrap
interval, and the threshold that maximises balanced accuracy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sweep.core.types import Query
from sweep.scoring.credit import UnitCredits

__all__ = [
    "TWOHOP_CLASSES",
    "Abstention",
    "Diagnostics",
    "TwoHop",
    "abstention",
    "auroc",
    "best_threshold",
    "diagnose",
    "twohop_class",
    "twohop_counts",
    "twohop_queries",
]

TWOHOP_CLASSES = ("complete", "ranked_out", "hop1_missed", "hop2_missed", "both_missed")
#: Below this many unanswerable questions the AUROC says little: the report says so.
FEW_UNANSWERABLE = 10


def twohop_class(ranks: Sequence[int | None], k: int) -> str:
    """The class of one query with two or more spans; ``ranks[i]`` is span i's credit rank."""
    if len(ranks) < 2:
        raise ValueError("two-hop classes need two or more evidence spans")
    if all(r is not None and r <= k for r in ranks):
        return "complete"
    first_missed = ranks[0] is None
    later_missed = any(r is None for r in ranks[1:])
    if first_missed and later_missed:
        return "both_missed"
    if first_missed:
        return "hop1_missed"
    if later_missed:
        return "hop2_missed"
    return "ranked_out"


@dataclass(frozen=True)
class TwoHop:
    """Two-hop classes of a setting's multi-span queries at one k."""

    k: int
    counts: Mapping[str, int]

    @property
    def n(self) -> int:
        return sum(self.counts.values())

    def share(self, cls: str) -> float:
        return self.counts.get(cls, 0) / self.n if self.n else float("nan")


def twohop_counts(span_ranks: Mapping[str, Sequence[int | None]], k: int) -> TwoHop:
    """Class counts over the given queries (each with two or more spans) at cut-off k."""
    counts = dict.fromkeys(TWOHOP_CLASSES, 0)
    for ranks in span_ranks.values():
        counts[twohop_class(ranks, k)] += 1
    return TwoHop(k, counts)


def auroc(positive: np.ndarray, negative: np.ndarray) -> float:
    """P(a positive scores above a negative), ties counting half (Mann–Whitney U / (n·m))."""
    positive = np.asarray(positive, dtype=np.float64)
    negative = np.asarray(negative, dtype=np.float64)
    if positive.size == 0 or negative.size == 0:
        return float("nan")
    return float(_auroc_rows(positive[None, :], negative[None, :])[0])


def _auroc_rows(pos: np.ndarray, neg: np.ndarray) -> np.ndarray:
    """AUROC of each row pair (rows are resamples): midranks of the pooled scores."""
    from scipy.stats import rankdata

    n, m = pos.shape[1], neg.shape[1]
    ranks = rankdata(np.concatenate([pos, neg], axis=1), axis=1)  # ties get their mean rank
    u = ranks[:, :n].sum(axis=1) - n * (n + 1) / 2
    return u / (n * m)


def best_threshold(positive: np.ndarray, negative: np.ndarray) -> tuple[float, float]:
    """``(threshold, balanced accuracy)``: answer when the score is >= threshold.

    Candidates are the observed scores and +inf (decline everything); among
    equally good thresholds the lowest wins (it declines the fewest answerable).
    """
    positive = np.asarray(positive, dtype=np.float64)
    negative = np.asarray(negative, dtype=np.float64)
    candidates = np.append(np.unique(np.concatenate([positive, negative])), np.inf)
    answered = (positive[None, :] >= candidates[:, None]).mean(axis=1)
    declined = (negative[None, :] < candidates[:, None]).mean(axis=1)
    balanced = (answered + declined) / 2
    i = int(np.argmax(balanced))  # the first maximum: the lowest threshold
    return float(candidates[i]), float(balanced[i])


@dataclass(frozen=True)
class Abstention:
    n_answerable: int
    n_unanswerable: int
    auroc: float
    auroc_low: float
    auroc_high: float
    threshold: float
    balanced_accuracy: float
    declined_unanswerable: float  # share of unanswerable queries with a top score below threshold
    declined_answerable: float  # share of answerable queries wrongly declined


def abstention(
    answerable: np.ndarray,
    unanswerable: np.ndarray,
    *,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> Abstention | None:
    """How well the top-1 score separates answerable from unanswerable queries; None when
    either group is empty."""
    pos = np.asarray(answerable, dtype=np.float64)
    neg = np.asarray(unanswerable, dtype=np.float64)
    pos, neg = pos[np.isfinite(pos)], neg[np.isfinite(neg)]
    if pos.size == 0 or neg.size == 0:
        return None
    rng = np.random.default_rng([seed, 7])
    # Stratified: each resample keeps both group sizes.
    boots = _auroc_rows(
        pos[rng.integers(0, pos.size, size=(n_boot, pos.size))],
        neg[rng.integers(0, neg.size, size=(n_boot, neg.size))],
    )
    alpha = (1 - confidence) / 2
    low, high = np.quantile(boots, [alpha, 1 - alpha])
    threshold, balanced = best_threshold(pos, neg)
    return Abstention(
        int(pos.size),
        int(neg.size),
        auroc(pos, neg),
        float(low),
        float(high),
        threshold,
        balanced,
        float((neg < threshold).mean()),
        float((pos < threshold).mean()),
    )


@dataclass(frozen=True)
class Diagnostics:
    """A setting's diagnostics, saved in its row."""

    twohop: tuple[TwoHop, ...] = ()
    abstention: Abstention | None = None

    def twohop_at(self, k: int) -> TwoHop | None:
        return next((t for t in self.twohop if t.k == k), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "twohop": [{"k": t.k, "counts": dict(t.counts)} for t in self.twohop],
            "abstention": None if self.abstention is None else vars(self.abstention),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Diagnostics:
        a = data.get("abstention")
        return cls(
            tuple(
                TwoHop(int(t["k"]), {str(c): int(n) for c, n in t["counts"].items()})
                for t in data.get("twohop", ())
            ),
            None if a is None else Abstention(**a),
        )

    def columns(self) -> dict[str, Any]:
        """results.csv columns: ``span.twohop_<class>@k`` (share) and ``.n`` (count), ``abstain.*``."""
        out: dict[str, Any] = {}
        for t in self.twohop:
            out[f"span.twohop_n@{t.k}"] = t.n
            for c in TWOHOP_CLASSES:
                out[f"span.twohop_{c}@{t.k}"] = t.share(c)
                out[f"span.twohop_{c}@{t.k}.n"] = t.counts.get(c, 0)
        a = self.abstention
        if a is not None:
            out.update(
                {
                    "abstain.auroc": a.auroc,
                    "abstain.auroc.lo": a.auroc_low,
                    "abstain.auroc.hi": a.auroc_high,
                    "abstain.threshold": a.threshold,
                    "abstain.declined_unanswerable": a.declined_unanswerable,
                    "abstain.declined_answerable": a.declined_answerable,
                    "abstain.n_unanswerable": a.n_unanswerable,
                    "abstain.n_answerable": a.n_answerable,
                }
            )
        return out


def twohop_queries(
    queries: Sequence[Query], credits: UnitCredits, types: Sequence[str] | None
) -> dict[str, tuple[int | None, ...]]:
    """Span credit ranks of the queries whose two-hop failures are classified: two or more
    evidence spans and, when the dataset has types and ``types`` is given, one of them."""
    typed = types is not None and any(q.type for q in queries)
    spans = credits.ranks.get("span", {})
    return {
        q.query_id: spans[q.query_id]
        for q in queries
        if len(spans.get(q.query_id, ())) >= 2 and (not typed or q.type in types)
    }


def diagnose(
    queries: Sequence[Query],
    credits: UnitCredits,
    top_scores: np.ndarray,
    *,
    ks: Sequence[int],
    twohop_types: Sequence[str] | None,
    n_boot: int,
    seed: int,
) -> Diagnostics:
    """A setting's diagnostics; ``top_scores[i]`` is query i's top-1 retrieval score."""
    multi = twohop_queries(queries, credits, twohop_types)
    twohop = tuple(twohop_counts(multi, k) for k in ks) if multi else ()
    answerable = np.array([q.has_unit("doc") for q in queries], dtype=bool)
    scores = np.asarray(top_scores, dtype=np.float64)
    return Diagnostics(
        twohop, abstention(scores[answerable], scores[~answerable], n_boot=n_boot, seed=seed)
    )
