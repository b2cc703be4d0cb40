"""sweep.check's verdict: significantly worse or past the allowed drop fails; else it passes."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from sweep.decision.regression import INCOMPARABLE, PASSED, REGRESSED, compare_runs


def _scores(values, prefix="q"):
    return {f"{prefix}{i}": float(v) for i, v in enumerate(values)}


def test_a_clear_drop_on_the_same_questions_regresses():
    rng = np.random.default_rng(0)
    old = (rng.random(200) < 0.7).astype(float)
    new = old.copy()
    new[:40] = 0.0  # forty questions lost
    v = compare_runs(_scores(new), _scores(old), metric="span recall@5", alpha=0.05, max_drop=None)
    assert v.status == REGRESSED and v.p_value < 0.001 and v.n_questions == 200
    assert "significantly worse" in v.reason and "❌" in v.markdown()


def test_a_small_drop_passes_unless_it_exceeds_max_drop():
    old = np.array([1.0] * 50 + [0.0] * 50)
    new = old.copy()
    new[0] = 0.0  # one question: 0.01 lower, far from significant
    plain = compare_runs(_scores(new), _scores(old), metric="m", alpha=0.05, max_drop=None)
    assert plain.status == PASSED and plain.p_value > 0.5
    assert (
        compare_runs(_scores(new), _scores(old), metric="m", alpha=0.05, max_drop=0.02).status
        == PASSED
    )
    strict = compare_runs(_scores(new), _scores(old), metric="m", alpha=0.05, max_drop=0.005)
    assert strict.status == REGRESSED and "the drop exceeds 0.005" in strict.reason


def test_only_shared_questions_are_paired_and_none_shared_cannot_be_compared():
    v = compare_runs(
        {"a": 1.0, "b": 0.0, "x": 0.0},
        {"a": 1.0, "b": 0.0, "y": 1.0},
        metric="m",
        alpha=0.05,
        max_drop=None,
    )
    assert v.n_questions == 2 and v.diff == 0 and v.status == PASSED
    none = compare_runs({"a": 1.0}, {"b": 1.0}, metric="m", alpha=0.05, max_drop=None)
    assert none.status == INCOMPARABLE and none.to_dict()["result"] == "incomparable"


@settings(max_examples=50, deadline=None)
@given(st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=1, max_size=60))
def test_a_setting_never_regresses_against_itself_or_a_better_one(values):
    old = _scores(values)
    assert compare_runs(old, old, metric="m", alpha=0.05, max_drop=0.0).status == PASSED
    better = {q: min(1.0, v + 0.5) for q, v in old.items()}
    assert compare_runs(better, old, metric="m", alpha=0.05, max_drop=0.0).status == PASSED


def test_the_markdown_verdict_shows_hostile_names_as_text():
    import re

    from markdown_it import MarkdownIt

    hostile = "job 0 of new|<img src=x onerror=alert(1)>\n| injected | row |: size=[x](https://e)"
    v = compare_runs(
        _scores([1, 0, 1]),
        _scores([1, 0, 1]),
        metric="span recall@5",
        alpha=0.05,
        max_drop=None,
        new_label=hostile,
        baseline_label="job 0 of old",
    )
    html = MarkdownIt("commonmark").enable("table").render(v.markdown())
    assert "<img" not in html and "<a " not in html and "injected" in html
    rows = re.findall(r"<tr>(.*?)</tr>", html, flags=re.S)
    assert len(rows) == 3 and all(row.count("<t") == 3 for row in rows), html
    assert v.to_dict()["new"] == hostile  # the JSON verdict keeps the name as it is


def test_the_verdict_names_its_correction_and_the_tables():
    old = np.array([1.0] * 30 + [0.0] * 30)
    new = old.copy()
    new[:8] = 0.0
    said = {
        n: compare_runs(
            _scores(new), _scores(old), metric="m", alpha=0.05, max_drop=None, table_comparisons=n
        )
        for n in (None, 1, 7)
    }
    assert all(
        "p unadjusted: one planned comparison (baseline vs this run)" in v.reason
        and "p unadjusted" in v.markdown()
        for v in said.values()
    )
    assert (
        "adjusts over 7 comparisons with the best (Holm), so it can call the same pair a tie"
        in said[7].reason
    )
    assert "a sweep's vs best column adjusts over all its comparisons" in said[None].reason
    assert "which made one comparison with its best" in said[1].reason
    assert said[7].to_dict()["correction"] == "none: one planned comparison"
