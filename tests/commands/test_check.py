"""``python -m sweep.check`` on sweep folders written without a model: what its p means."""

from __future__ import annotations

import json

import numpy as np

from sweep.check.__main__ import main
from sweep.reporting.sweepreport import build_report
from sweepdirs import GRID, base, make_grid


def test_check_says_its_p_is_unadjusted_where_the_table_adjusts_over_its_comparisons(
    tmp_path, capsys
):
    # One sweep, six settings: (64, 16) loses 6 of the best's questions. The table tests
    # five settings against the best and calls it a tie; the check tests that one pair.
    best = base()
    scores = {so: best.copy() for so in GRID}
    for so, lost in zip(GRID[1:], (6, 1, 1, 1, 1)):
        scores[so][np.flatnonzero(best)[:lost]] = 0
    make_grid(tmp_path, scores)
    table = build_report(tmp_path).decision.comparison(1)
    assert table.verdict == "tie" and table.p_holm >= 0.05

    args = [str(tmp_path), "--baseline", str(tmp_path), "--job", "1", "--baseline-job", "0"]
    assert main(args) == 1
    out = capsys.readouterr().out
    assert "significantly worse" in out
    assert (
        "p unadjusted: one planned comparison (baseline vs this run); the new sweep's vs "
        "best column adjusts over 5 comparisons with the best (Holm), so it can call the "
        "same pair a tie."
    ) in out
    assert main([*args, "--json"]) == 1
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["correction"] == "none: one planned comparison"
    assert verdict["table_comparisons"] == 5
    # The check's p is the table's p before Holm's correction: the same test, same seed.
    assert verdict["p_value"] == table.p_value


def test_check_compares_on_a_page_level_primary(tmp_path, capsys):
    # eval.primary=page/recall@5: the check reads page-level per-query scores.
    best = base()
    worse = best.copy()
    worse[np.flatnonzero(best)[:12]] = 0
    make_grid(tmp_path, {GRID[0]: best, GRID[1]: worse}, pages=True, primary="page/recall@5")
    args = [str(tmp_path), "--baseline", str(tmp_path), "--job", "1", "--baseline-job", "0"]
    assert main([*args, "--json"]) == 1
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["metric"] == "page recall@5" and verdict["result"] == "regressed"
    assert (verdict["new_mean"], verdict["baseline_mean"]) == (0.35, 0.55)
    same = [str(tmp_path), "--baseline", str(tmp_path), "--job", "0", "--baseline-job", "0"]
    assert main(same) == 0
