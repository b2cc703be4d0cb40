"""Per-setting answer rates with intervals, the diagnosis counts, and paired tests between settings.

Rates, each over the queries where it is defined:

- ``faithful``: answers given (not declined) that the faithfulness judge passed;
- ``relevant``: answers given that address the question;
- ``correct``: queries with a reference answer whose answer agrees with it (a
  declined answerable question counts as not correct);
- ``declined``: unanswerable questions the model declined.

Intervals are percentile bootstraps over queries; settings are compared query
by query with the project's paired randomization test, Holm-corrected over
the pairs of settings, per rate.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from sweep.answers.diagnosis import DIAGNOSES
from sweep.answers.records import AnswerTrace
from sweep.decision.significance import holm, paired_randomization_test
from sweep.scoring.aggregate import bootstrap_means

__all__ = [
    "RATES",
    "PairTest",
    "Rate",
    "SettingSummary",
    "pair_tests",
    "rate_values",
    "setup_text",
    "summarize_answers",
]

RATES = ("faithful", "relevant", "correct", "declined")


def rate_values(t: AnswerTrace, rate: str) -> float | None:
    """One query's 0/1 value on a rate; None where the rate is not defined for it."""
    if rate == "declined":
        return None if t.answerable or t.declined is None else float(t.declined)
    if rate == "correct":
        v = t.verdicts.get("correct")
        return None if v is None else float(v.passed)
    if t.declined is not False:
        return None
    v = t.verdicts.get(rate)
    return None if v is None else float(v.passed)


@dataclass(frozen=True)
class Rate:
    mean: float
    low: float
    high: float
    n: int


@dataclass(frozen=True)
class SettingSummary:
    job: int
    setting: str
    n_queries: int
    rates: Mapping[str, Rate | None]
    diagnoses: Mapping[str, int]
    failures: int  # replies that could not be read or requests that failed
    k: int = 0
    model: str = ""


def summarize_answers(
    traces: Sequence[AnswerTrace], *, n_boot: int = 1000, seed: int = 0
) -> list[SettingSummary]:
    out = []
    for job in sorted({t.job for t in traces}):
        mine = [t for t in traces if t.job == job]
        rates: dict[str, Rate | None] = {}
        for i, rate in enumerate(RATES):
            values = np.array([v for t in mine if (v := rate_values(t, rate)) is not None])
            if values.size == 0:
                rates[rate] = None
                continue
            low, high = bootstrap_means(
                values[:, None], n_boot=n_boot, seed=[seed, job, i], confidence=0.95
            )
            rates[rate] = Rate(
                float(values.mean()), float(low[0]), float(high[0]), int(values.size)
            )
        counts = Counter(t.diagnosis for t in mine)
        out.append(
            SettingSummary(
                job,
                mine[0].setting,
                len(mine),
                rates,
                {d: counts.get(d, 0) for d in DIAGNOSES},
                sum(len(t.failures) for t in mine),
                mine[0].k,
                mine[0].model,
            )
        )
    return out


def setup_text(summaries: Sequence[SettingSummary]) -> str:
    """What each setting's answers were made from: one phrase, or "per setting" when settings
    answered in different runs used another k or model."""
    setups = {(s.k, s.model) for s in summaries}
    if len(setups) == 1:
        ((k, model),) = setups
        top = f"top {k}" if k else "top"  # k unknown: answered before it was recorded
        return f"Each setting's {top} chunks handed to {model or 'the model'}"
    return "Each setting's top k chunks handed to its model (k and model per setting below)"


@dataclass(frozen=True)
class PairTest:
    rate: str
    a: int
    b: int
    n: int  # queries where both settings have a value
    diff: float  # mean of a - mean of b over those queries
    p_value: float
    p_holm: float  # Holm over the pairs of settings, for this rate


def pair_tests(
    traces: Sequence[AnswerTrace], *, n_perm: int = 10_000, seed: int = 0, alpha: float = 0.05
) -> list[PairTest]:
    """Every pair of settings on every rate, paired over the queries both have a value for."""
    values: dict[tuple[str, int], dict[str, float]] = {}
    for t in traces:
        for rate in RATES:
            v = rate_values(t, rate)
            if v is not None:
                values.setdefault((rate, t.job), {})[t.query_id] = v
    jobs = sorted({t.job for t in traces})
    # Settings answered in different runs may differ in model, k or prompt: not a pair to test.
    setup: dict[int, set[tuple[str, int, str]]] = {}
    for t in traces:
        setup.setdefault(t.job, set()).add(t.setup)
    pairs = [(a, b) for a, b in combinations(jobs, 2) if setup[a] == setup[b]]
    out = []
    for rate in RATES:
        rows = []
        for a, b in pairs:
            va, vb = values.get((rate, a), {}), values.get((rate, b), {})
            common = sorted(set(va) & set(vb))
            if not common:
                continue
            x = np.array([va[q] for q in common])
            y = np.array([vb[q] for q in common])
            p = paired_randomization_test(x, y, n_perm=n_perm, seed=seed)
            rows.append((a, b, len(common), float(x.mean() - y.mean()), p))
        adjusted = holm([r[4] for r in rows]) if rows else []
        out += [
            PairTest(rate, a, b, n, d, p, float(ph)) for (a, b, n, d, p), ph in zip(rows, adjusted)
        ]
    return out
