"""Compare named settings evaluated from Python: the paired test the report runs, as a table."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from sweep.core.evalconfig import EvalConfig
from sweep.decision.significance import compare_to_best
from sweep.scoring.perquery import PerQueryScores
from sweep.scoring.table import ScoreTable

__all__ = ["compare"]

COLUMNS = ["setting", "mean", "diff", "p_value", "p_holm", "verdict", "n_needed", "n_compared"]


def compare(tables: Mapping[str, ScoreTable], config: EvalConfig | None = None) -> pd.DataFrame:
    """Every setting against the best on ``config.primary``, best first.

    ``tables`` maps a setting's name to its per-query scores
    (``SettingResult.scores``). The test is the paired randomization test over
    the questions every setting scored, Holm-adjusted over the settings;
    ``verdict`` is ``best``, ``tie`` (not distinguishable from the best at
    ``config.alpha``) or ``worse``, and ``n_needed`` says, for a tie, how many
    questions would tell it apart.
    """
    config = config or EvalConfig()
    if not tables:
        raise ValueError("compare: no settings given")
    primary = config.primary_metric
    names = list(tables)
    per_query = PerQueryScores.from_tables(
        dict(enumerate(tables.values())), primary.level, primary.metric
    )
    missing = next((job for job in range(len(names)) if job not in per_query), None)
    if missing is not None:
        raise ValueError(
            f"compare: setting {names[missing]!r} has no {primary} scores "
            f"(its metrics: {', '.join(tables[names[missing]].metric_names)})"
        )
    comparisons = compare_to_best(
        per_query, alpha=config.alpha, n_perm=config.n_perm, seed=config.seed, power=config.power
    )
    frame = pd.DataFrame(
        [
            {
                "setting": names[c.job],
                "mean": c.mean,
                "diff": c.diff,
                "p_value": c.p_value,
                "p_holm": c.p_holm,
                "verdict": c.verdict,
                "n_needed": c.n_needed,
                "n_compared": c.n_compared,
            }
            for c in comparisons
        ],
        columns=COLUMNS,
    )
    frame["n_needed"] = frame["n_needed"].astype("Int64")
    return frame.sort_values(["mean", "setting"], ascending=[False, True], ignore_index=True)
