"""Measure names print and parse losslessly; bad names fail with the valid ones listed."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sweep.core.measures import (
    COVERAGE_NAMES,
    LEVELS,
    NAMES,
    RANK_NAMES,
    Measure,
    measures_for,
    parse_measures,
)


@pytest.mark.parametrize(
    ("text", "measure"),
    [
        ("recall@5", Measure("recall", k=5)),
        ("ndcg@10", Measure("ndcg", k=10)),
        ("cov_iou@5", Measure("cov_iou", k=5)),
        ("recall@512t", Measure("recall", budget=512)),
        ("cov_precision@1024t", Measure("cov_precision", budget=1024)),
        ("precision_omega", Measure("precision_omega")),
    ],
)
def test_parse_and_print(text: str, measure: Measure) -> None:
    assert Measure.parse(text) == measure
    assert str(measure) == text


@given(
    st.sampled_from(RANK_NAMES + COVERAGE_NAMES),
    st.integers(1, 10**6),
    st.booleans(),
)
def test_round_trip(name: str, value: int, budget: bool) -> None:
    m = Measure(name, budget=value) if budget else Measure(name, k=value)
    assert Measure.parse(str(m)) == m
    assert hash(Measure.parse(str(m))) == hash(m)


@pytest.mark.parametrize(
    "text", ["nope@5", "recal@5", "Recall@5", "recall@", "recall@5x", "@5", ""]
)
def test_unknown_names_list_the_valid_ones(text: str) -> None:
    with pytest.raises(ValueError) as err:
        Measure.parse(text)
    message = str(err.value)
    assert "\n" not in message
    for name in NAMES:
        assert name in message


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("recall", "exactly one cut-off"),
        ("recall@0", "positive"),
        ("recall@0t", "positive"),
        ("precision_omega@5", "no cut-off"),
    ],
)
def test_bad_cutoffs(text: str, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        Measure.parse(text)


def test_constructor_checks() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        Measure("recall", k=5, budget=512)
    with pytest.raises(ValueError, match="unknown measure name"):
        Measure("f1", k=5)
    with pytest.raises(ValueError, match="positive integer"):
        Measure("recall", k=True)


def test_levels() -> None:
    # page is last: a score table stores a level as its index, so doc and span keep theirs
    assert LEVELS == ("doc", "span", "page")
    for name in RANK_NAMES:
        assert Measure(name, k=1).levels == ("doc", "span", "page")
    for name in COVERAGE_NAMES:
        assert Measure(name, k=1).levels == ("span",)
    assert Measure("precision_omega").levels == ("span",)


def test_measures_for_covers_every_measure_at_every_cutoff() -> None:
    ms = measures_for([1, 5], [512])
    assert [str(m) for m in ms[:3]] == ["recall@1", "recall@5", "recall@512t"]
    assert ms[-1] == Measure("precision_omega")
    expected = {f"{n}@{c}" for n in RANK_NAMES + COVERAGE_NAMES for c in ("1", "5", "512t")} | {
        "precision_omega"
    }
    assert {str(m) for m in ms} == expected
    assert len(ms) == len(expected)


def test_measures_for_drops_repeated_cutoffs() -> None:
    assert len(measures_for([5, 5])) == len(measures_for([5]))


def test_parse_measures_keeps_order_and_drops_repeats() -> None:
    assert parse_measures(["ndcg@10", "recall@5", "ndcg@10"]) == [
        Measure("ndcg", k=10),
        Measure("recall", k=5),
    ]
