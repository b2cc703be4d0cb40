"""Is a new sweep's chosen setting worse than a baseline's? The verdict ``sweep.check`` gives CI.

The two settings are compared on the primary metric, paired over the questions both were
scored on, with the test the report uses between settings (a paired randomization test,
two-sided). Worse means significantly worse at ``alpha``, or a mean drop larger than
``max_drop`` whatever the test says (a drop CI should stop even when the set is small).

The p is not adjusted: the check is one planned comparison, decided before looking. A
sweep's ``vs best`` column tests every setting against its best and adjusts over all those
comparisons (Holm), so it can call a tie the same pair this check calls worse; the verdict
says so, with the number of comparisons the table adjusted over.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from sweep.core.mdtext import md_text
from sweep.decision.significance import paired_randomization_test

__all__ = [
    "INCOMPARABLE",
    "PASSED",
    "REGRESSED",
    "RegressionVerdict",
    "compare_runs",
    "unadjusted_note",
]

PASSED, REGRESSED, INCOMPARABLE = 0, 1, 2


@dataclass(frozen=True)
class RegressionVerdict:
    """What the check found; ``status`` is its exit status."""

    status: int
    reason: str
    metric: str
    new: str = ""
    baseline: str = ""
    new_mean: float | None = None
    baseline_mean: float | None = None
    diff: float | None = None
    p_value: float | None = None
    n_questions: int = 0
    alpha: float = 0.05
    max_drop: float | None = None
    #: how ``p_value`` was corrected: never, it is one planned comparison
    correction: str = "none: one planned comparison"
    #: comparisons with the best the new sweep's ``vs best`` column adjusted over (Holm);
    #: None when unknown
    table_comparisons: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"result": ("passed", "regressed", "incomparable")[self.status], **asdict(self)}

    def markdown(self) -> str:
        """The verdict for ``$GITHUB_STEP_SUMMARY``: folder names, settings and dataset names
        in it come from the sweep folders, so every one is escaped (:func:`md_text`)."""
        head = {
            PASSED: "✅ sweep.check: no retrieval regression",
            REGRESSED: "❌ sweep.check: retrieval got worse",
            INCOMPARABLE: "⚠️ sweep.check: the two sweeps cannot be compared",
        }[self.status]
        lines = [f"### {head}", "", md_text(self.reason)]
        if self.new_mean is not None and self.baseline_mean is not None:
            cell = {"starts_line": False}
            lines += [
                "",
                f"| | setting | {md_text(self.metric, **cell)} |",
                "|---|---|---|",
                f"| baseline | {md_text(self.baseline, **cell)} | {self.baseline_mean:.3f} |",
                f"| new | {md_text(self.new, **cell)} | {self.new_mean:.3f} |",
            ]
        return "\n".join(lines) + "\n"


def compare_runs(
    new: Mapping[str, float],
    baseline: Mapping[str, float],
    *,
    metric: str,
    alpha: float,
    max_drop: float | None,
    new_label: str = "",
    baseline_label: str = "",
    n_perm: int = 10_000,
    seed: int = 0,
    table_comparisons: int | None = None,
) -> RegressionVerdict:
    """Per-query scores of the new and the baseline setting (query id -> value).
    ``table_comparisons``: how many comparisons with the best the new sweep's table
    adjusted over, to say why its ``vs best`` can differ from this verdict."""
    shared = sorted(set(new) & set(baseline))
    common = dict(
        metric=metric,
        new=new_label,
        baseline=baseline_label,
        alpha=alpha,
        max_drop=max_drop,
        table_comparisons=table_comparisons,
    )
    if not shared:
        return RegressionVerdict(
            INCOMPARABLE, "The two settings share no scored question.", **common
        )
    a = np.array([new[q] for q in shared], dtype=np.float64)
    b = np.array([baseline[q] for q in shared], dtype=np.float64)
    keep = ~(np.isnan(a) | np.isnan(b))
    a, b = a[keep], b[keep]
    if a.size == 0:
        return RegressionVerdict(
            INCOMPARABLE, f"No shared question has a {metric} score in both.", **common
        )
    diff = float(a.mean() - b.mean())
    p = paired_randomization_test(a, b, n_perm=n_perm, seed=seed)
    significant = diff < 0 and p < alpha
    too_far = max_drop is not None and -diff > max_drop + 1e-12
    worse = significant or too_far
    change = (
        f"{'fell' if diff < 0 else 'rose'} by {abs(diff):.3f} ({b.mean():.3f} → {a.mean():.3f})"
        if diff
        else f"did not change ({a.mean():.3f})"
    )
    said = (
        f"{metric} {change} over {a.size} shared questions; "
        f"paired randomization test p {_p(p)} (α = {alpha:g})"
        + (f"; allowed drop {max_drop:g}" if max_drop is not None else "")
        + ". "
        + unadjusted_note(table_comparisons)
    )
    if worse:
        why = []
        if significant:
            why.append("significantly worse")
        if too_far:
            why.append(f"the drop exceeds {max_drop:g}")
        reason = f"The new setting is {' and '.join(why)}: {said}"
    else:
        reason = f"Not worse: {said}"
    return RegressionVerdict(
        REGRESSED if worse else PASSED,
        reason,
        new_mean=float(a.mean()),
        baseline_mean=float(b.mean()),
        diff=diff,
        p_value=p,
        n_questions=int(a.size),
        **common,
    )


def unadjusted_note(table_comparisons: int | None) -> str:
    """Which correction the check's p carries (none), and why a sweep's table may call the
    same pair a tie."""
    head = "p unadjusted: one planned comparison (baseline vs this run)"
    if table_comparisons is None:
        return (
            f"{head}; a sweep's vs best column adjusts over all its comparisons with the "
            "best (Holm), so it can call the same pair a tie."
        )
    if table_comparisons < 2:
        return f"{head}, as in the new sweep's table, which made one comparison with its best."
    return (
        f"{head}; the new sweep's vs best column adjusts over {table_comparisons} "
        "comparisons with the best (Holm), so it can call the same pair a tie."
    )


def _p(p: float) -> str:
    return "< 0.001" if p < 0.001 else f"= {p:.3f}" if not math.isnan(p) else "n/a"
