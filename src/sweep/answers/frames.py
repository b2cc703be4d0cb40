"""The answers of a sweep as tables: a row per setting, the diagnosis counts, the paired tests.

Shared by ``answers.md`` (:mod:`sweep.answers.output`) and ``answers.html``
(:mod:`sweep.answers.page`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from sweep.answers.summary import RATES, PairTest, SettingSummary

__all__ = ["RATE_NAMES", "costs_line", "diagnosis_frame", "settings_frame", "tests_frame"]

RATE_NAMES = {
    "faithful": "faithful",
    "relevant": "relevant",
    "correct": "correct",
    "declined": "unanswerable declined",
}


def settings_frame(summaries: Sequence[SettingSummary], *, display: bool = False) -> pd.DataFrame:
    """One row per setting: each rate with its interval and n, then the diagnosis counts."""
    records = []
    for s in summaries:
        rec: dict[str, Any] = {
            "job": s.job,
            "setting": s.setting,
            "k": s.k,
            "model": s.model or "–",
            "queries": s.n_queries,
        }
        for rate in RATES:
            r = s.rates.get(rate)
            if display:
                rec[RATE_NAMES[rate]] = (
                    "–" if r is None else f"{r.mean:.2f} [{r.low:.2f}, {r.high:.2f}] (n={r.n})"
                )
            else:
                rec[rate] = None if r is None else r.mean
                rec[f"{rate}.lo"] = None if r is None else r.low
                rec[f"{rate}.hi"] = None if r is None else r.high
                rec[f"{rate}.n"] = 0 if r is None else r.n
        if not display:
            rec.update({f"diagnosis.{d}": n for d, n in s.diagnoses.items()})
            rec["failures"] = s.failures
        records.append(rec)
    return pd.DataFrame(records)


def diagnosis_frame(summaries: Sequence[SettingSummary]) -> pd.DataFrame:
    return pd.DataFrame(
        [{"setting": s.setting, **{d: str(n) for d, n in s.diagnoses.items()}} for s in summaries]
    )


def tests_frame(tests: Sequence[PairTest], labels: Mapping[int, str]) -> pd.DataFrame | None:
    if not tests:
        return None
    return pd.DataFrame(
        [
            {
                "rate": RATE_NAMES[t.rate],
                "setting A": labels[t.a],
                "setting B": labels[t.b],
                "queries": str(t.n),
                "A - B": f"{t.diff:+.3f}",
                "p (Holm)": f"{t.p_holm:.3f}",
            }
            for t in tests
        ]
    )


def costs_line(stats: Mapping[str, int]) -> str:
    return (
        f"requests: {stats['sent']} sent, {stats['cached']} from the cache, {stats['failed']} "
        f"failed after {stats['retries']} retries; tokens: {stats['prompt_tokens']:,} prompt + "
        f"{stats['completion_tokens']:,} completion sent now"
    )
