"""``sweep.decision.agreement``: do two question sets rank the settings alike? (issue 11, item 8)"""

import math

import numpy as np
import pytest

from sweep.decision.agreement import agreement, kendall_tau, split_by_source
from sweep.report.__main__ import main
from sweep.reporting.sweepreport import build_report
from sweep.reporting.write import write_report
from sweep.scoring.perquery import PerQueryScores
from sweepdirs import GRID, make_grid


def test_kendall_tau_known_values():
    assert kendall_tau([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert kendall_tau([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert kendall_tau([1, 2, 3], [1, 3, 2]) == pytest.approx(1 / 3)
    assert math.isnan(kendall_tau([1, 1, 1], [1, 2, 3]))


def _scores(means, n, seed):
    rng = np.random.default_rng(seed)
    return PerQueryScores.from_mapping(
        {
            j: {f"q{i}": float(v) for i, v in enumerate(rng.random(n) < m)}
            for j, m in enumerate(means)
        }
    )


def test_the_same_ranking_on_two_sets_agrees_and_a_reversed_one_does_not():
    a = _scores([0.2, 0.5, 0.8], 300, 0)
    b = _scores([0.3, 0.55, 0.9], 300, 1)
    agree = agreement(a, b, names=("x", "y"), picks=(2, 2), n_boot=200)
    assert agree.tau == pytest.approx(1.0) and agree.tau_low > 0.3 and agree.same_pick
    rev = agreement(a, _scores([0.9, 0.5, 0.2], 300, 2), names=("x", "y"), picks=(2, 0), n_boot=200)
    assert rev.tau == pytest.approx(-1.0) and rev.tau_high < 0 and not rev.same_pick
    assert agreement(a.select([0]), a.select([0]), names=("x", "y"), picks=(0, 0)) is None


def test_split_by_source_needs_both_kinds():
    scores = PerQueryScores.from_mapping({0: {"a": 1.0, "b": 0.0, "c": 1.0}})
    a, b = split_by_source(scores, {"a": "synthetic", "b": None, "c": "synthetic"})
    assert a == {0: {"a": 1.0, "c": 1.0}} and b == {0: {"b": 0.0}}
    assert split_by_source(scores, {"a": None, "b": None, "c": None}) is None
    assert split_by_source(scores, {"a": "synthetic", "b": "synthetic", "c": "synthetic"}) is None


def test_a_sweep_on_a_mixed_set_says_whether_synthetic_questions_rank_settings_like_real_ones(
    tmp_path,
):
    rng = np.random.default_rng(0)
    sources = ["synthetic" if i % 2 else None for i in range(60)]
    scores = {so: (rng.random(60) < 0.3 + 0.1 * i).astype(float) for i, so in enumerate(GRID)}
    make_grid(tmp_path, scores, sources=sources)
    write_report(tmp_path, quiet=True)
    text = (tmp_path / "by_source.md").read_text()
    assert "synthetic vs hand-written questions (30 and 30)" in text and "Kendall's τ" in text
    assert "(n=30)" in text
    a = build_report(tmp_path).groups[0].agreement
    assert len(a.jobs) == 6 and -1 <= a.tau <= 1
    assert "by_source.md" in (tmp_path / "results.md").read_text()


def test_two_sweeps_of_one_grid_on_two_question_sets_report_their_agreement(tmp_path, capsys):
    a, b = tmp_path / "synthetic", tmp_path / "real"
    make_grid(
        a,
        {so: (np.arange(60) % 10 < i).astype(float) for i, so in enumerate(GRID, 2)},
        dataset="synth",
        fingerprint="a" * 16,
    )
    make_grid(
        b,
        {so: (np.arange(60) % 10 < i).astype(float) for i, so in enumerate(GRID, 2)},
        dataset="real",
        fingerprint="b" * 16,
    )
    assert main([str(a), str(b), "--out", str(tmp_path / "c.html")]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if "Kendall" in line)
    assert "between their rankings of the 6 shared settings" in line and "= 1.00" in line
    assert "both recommend size=256 overlap=16" in line
    assert "Kendall" in (tmp_path / "c.html").read_text(encoding="utf-8")
