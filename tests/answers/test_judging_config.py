"""``sweep.answers.config``: the ``answers`` and ``judge`` nodes, checked with one line naming
the key. (Named test_judging_config: tests/hydrakit/test_config.py has the plain name.)"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sweep.answers.config import AnswersConfig, AnswersConfigError, JudgeConfig


def test_the_defaults_are_valid():
    s = AnswersConfig()
    assert (s.k, s.dry_run, s.show_progress, s.seed, s.n_boot, s.n_perm) == (
        None,
        False,
        True,
        0,
        1000,
        10_000,
    )
    assert JudgeConfig() == JudgeConfig(export=0, agreement=None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.k = 3


@pytest.mark.parametrize(
    "key,low,high,null",
    [
        ("k", 1, 10_000, True),
        ("n_boot", 1, 1_000_000, False),
        ("n_perm", 1, 10_000_000, False),
        ("seed", 0, 2**31 - 1, False),
    ],
)
def test_each_integer_has_its_range_and_the_message_names_the_key(key, low, high, null):
    assert getattr(AnswersConfig(**{key: low}), key) == low
    assert getattr(AnswersConfig(**{key: high}), key) == high
    tail = " or null" if null else ""
    for bad in (low - 1, high + 1, True, 2.0, "5"):
        with pytest.raises(AnswersConfigError) as e:
            AnswersConfig(**{key: bad})
        assert (
            str(e.value)
            == f"answers.{key} must be an integer in [{low}, {high}]{tail}, got {bad!r}"
        )
    if not null:
        with pytest.raises(AnswersConfigError):
            AnswersConfig(**{key: None})


@given(st.integers(-100, 20_000))
def test_k_is_accepted_exactly_inside_its_range(k):
    if 1 <= k <= 10_000:
        assert AnswersConfig(k=k).k == k
    else:
        with pytest.raises(AnswersConfigError, match=r"^answers\.k "):
            AnswersConfig(k=k)


@pytest.mark.parametrize("key", ["dry_run", "show_progress"])
@pytest.mark.parametrize("bad", ["yes", 1, 0, None])
def test_switches_must_be_booleans(key, bad):
    with pytest.raises(AnswersConfigError) as e:
        AnswersConfig(**{key: bad})
    assert str(e.value) == f"answers.{key} must be true or false, got {bad!r}"


def test_judge_settings():
    assert JudgeConfig(export=25, agreement="labels.csv").agreement == "labels.csv"
    with pytest.raises(
        AnswersConfigError, match=r"judge\.export must be an integer in \[0, 1000000\], got -1"
    ):
        JudgeConfig(export=-1)
    with pytest.raises(AnswersConfigError, match="judge.agreement must be a path, got 3"):
        JudgeConfig(agreement=3)
    assert issubclass(AnswersConfigError, ValueError)
