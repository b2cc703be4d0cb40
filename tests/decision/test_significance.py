import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sweep.decision.significance import (
    Comparison,
    compare_to_best,
    holm,
    paired_randomization_test,
    recommend,
)
from sweep.scoring.perquery import PerQueryScores

P = PerQueryScores.from_mapping


def test_identical_settings_are_never_significantly_different():
    a = np.random.default_rng(1).random(150)
    assert paired_randomization_test(a, a.copy()) == 1.0
    res = compare_to_best(P({0: dict(enumerate(a)), 1: dict(enumerate(a))}))
    assert {c.verdict for c in res} == {"best", "tie"}


def test_a_strongly_better_setting_is_significant():
    rng = np.random.default_rng(2)
    base = rng.random(150)
    better = np.clip(base + 0.3, 0, 1)
    p = paired_randomization_test(better, base, n_perm=5000)
    assert p < 0.001
    res = compare_to_best(P({0: dict(enumerate(base)), 1: dict(enumerate(better))}))
    assert [c.verdict for c in res] == ["worse", "best"]


def test_small_noisy_difference_is_a_tie():
    rng = np.random.default_rng(3)
    a = rng.integers(0, 2, 150).astype(float)
    b = a.copy()
    b[:2] = 1 - b[:2]  # two queries flip: not evidence of a difference
    assert paired_randomization_test(a, b) > 0.3


def test_p_value_is_reproducible_with_the_seed():
    rng = np.random.default_rng(4)
    a, b = rng.random(80), rng.random(80)
    assert paired_randomization_test(a, b, seed=7) == paired_randomization_test(a, b, seed=7)


def test_holm_known_values():
    np.testing.assert_allclose(holm([0.01, 0.04, 0.03]), [0.03, 0.06, 0.06])
    np.testing.assert_allclose(holm([0.5]), [0.5])
    assert holm([0.9, 0.8]).max() <= 1.0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=20))
def test_holm_is_monotone_bounded_and_never_below_raw(ps):
    adj = holm(ps)
    assert np.all(adj >= np.asarray(ps) - 1e-15) and np.all(adj <= 1.0)
    order = np.argsort(ps, kind="stable")
    assert np.all(np.diff(adj[order]) >= -1e-15)


def test_only_common_queries_are_compared():
    res = compare_to_best(P({0: {"a": 1.0, "b": 0.0, "extra": 1.0}, 1: {"a": 1.0, "b": 0.0}}))
    assert all(c.mean == 0.5 for c in res)


def test_recommend_picks_the_cheapest_tie():
    comps = [
        Comparison(0, 0.80, 0.0, 1.0, 1.0, "best"),
        Comparison(1, 0.79, -0.01, 0.6, 0.9, "tie"),
        Comparison(2, 0.50, -0.3, 0.0001, 0.0002, "worse"),
    ]
    cost = {0: (1200.0, 300), 1: (600.0, 700), 2: (100.0, 50)}
    rec = recommend(comps, cost, labels={0: "size=256", 1: "size=128", 2: "size=64"})
    assert rec.job == 1
    assert "size=128" in rec.reason and "size=256" in rec.reason and "600" in rec.reason
    # Equal token cost: fewer chunks wins.
    rec = recommend(comps, {0: (600.0, 300), 1: (600.0, 700), 2: (1.0, 1)})
    assert rec.job == 0
    assert recommend([], {}) is None


@pytest.mark.parametrize("mean,sd,comparisons", [(0.05, 0.4, 1), (0.1, 0.5, 5), (0.2, 0.3, 1)])
def test_questions_needed_gives_the_power_asked_for_in_simulation(mean, sd, comparisons):
    """Simulated paired t-tests at the computed n reject with probability 0.80 ± 0.05."""
    from scipy import stats as st

    from sweep.decision.significance import questions_needed

    rng = np.random.default_rng(1)
    z = rng.standard_normal(2_000)
    pilot = (z - z.mean()) / z.std(ddof=1) * sd + mean  # differences with exactly this mean and sd
    n = questions_needed(pilot, alpha=0.05, power=0.8, comparisons=comparisons)
    reps = 4000
    diffs = rng.normal(mean, sd, size=(reps, n))
    t = diffs.mean(axis=1) / (diffs.std(axis=1, ddof=1) / np.sqrt(n))
    crit = st.t.ppf(1 - 0.05 / comparisons / 2, df=n - 1)
    power = float((np.abs(t) > crit).mean())
    assert 0.75 <= power <= 0.85, (n, power)


def test_questions_needed_without_a_difference_is_none():
    from sweep.decision.significance import questions_needed

    assert questions_needed(np.zeros(50), alpha=0.05) is None  # no difference at all
    assert questions_needed(np.array([1.0, -1.0] * 20), alpha=0.05) is None  # no mean difference
    assert questions_needed(np.array([0.5]), alpha=0.05) is None


def test_questions_needed_is_never_below_what_the_sign_flip_test_can_reach():
    from sweep.decision.significance import paired_randomization_test, questions_needed

    # Every query differs by the same amount: a real difference, no spread. The smallest
    # p of n sign flips is 2 / 2^n: 6 queries reach 0.05, 8 reach 0.05 / 5 comparisons.
    assert questions_needed(np.full(4, -0.2), alpha=0.05) == 6
    assert questions_needed(np.full(4, -0.2), alpha=0.05, comparisons=5) == 8
    # A large difference with little spread: the normal approximation alone says 2 or 3.
    diffs = np.array([-0.9, -1.0, -1.1, -1.0])
    assert questions_needed(diffs, alpha=0.05) == 6
    n = questions_needed(np.full(3, -0.2), alpha=0.05)
    assert paired_randomization_test(np.full(n, -0.2), np.zeros(n), n_perm=10_000, seed=0) <= 0.05
    assert (
        paired_randomization_test(np.full(n - 1, -0.2), np.zeros(n - 1), n_perm=10_000, seed=0)
        > 0.05
    )


def test_ties_get_the_questions_they_would_need_and_others_do_not():
    rng = np.random.default_rng(0)
    base = (rng.random(200) < 0.6).astype(float)
    near = base.copy()
    near[np.flatnonzero(base)[:4]] = 0  # a small real difference
    far = np.zeros(200)
    cmp = {
        c.job: c
        for c in compare_to_best(
            P(
                {
                    0: {str(i): v for i, v in enumerate(base)},
                    1: {str(i): v for i, v in enumerate(near)},
                    2: {str(i): v for i, v in enumerate(base)},
                    3: {str(i): v for i, v in enumerate(far)},
                }
            ),
            n_perm=2000,
        )
    }
    assert cmp[0].verdict == "best" and cmp[0].n_needed is None
    assert cmp[3].verdict == "worse" and cmp[3].n_needed is None
    assert cmp[1].verdict == "tie" and cmp[1].n_needed > 200 and cmp[1].n_compared == 200
    assert cmp[2].verdict == "tie" and cmp[2].n_needed is None  # identical: no difference observed
