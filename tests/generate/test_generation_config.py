"""The generate config node: every bad value is one line naming the key."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sweep.generate.config import KINDS, GenerateConfig, GenerateConfigError


def make(**kw):
    return GenerateConfig(**{"out": "o", **kw})


def test_defaults_split_n_by_the_default_shares():
    s = make(n=100)
    assert s.counts() == {"fact": 40, "adversarial": 30, "multi": 20, "unanswerable": 10}


@pytest.mark.parametrize(
    "kw, needle",
    [
        ({"n": 0}, "generate.n must be an integer"),
        ({"n": -5}, "generate.n must be an integer"),
        ({"n": 2.5}, "generate.n must be an integer"),
        ({"window_tokens": 0}, "generate.window_tokens"),
        ({"window_tokens": -300}, "generate.window_tokens"),
        ({"kinds": {"fact": 0.5, "adversarial": 0.3}}, "must sum to 1, got 0.8"),
        (
            {"kinds": {"fact": 1.0, "trivia": 0.0}},
            "unknown kind 'trivia'; valid kinds: fact, adversarial",
        ),
        ({"kinds": {"fact": 1.5, "multi": -0.5}}, "generate.kinds.multi must be a share >= 0"),
        ({"kinds": {"fact": "all"}}, "generate.kinds.fact must be a share"),
        ({"kinds": {}}, "generate.kinds must map kinds"),
        ({"kinds": ["fact"]}, "generate.kinds must map kinds"),
        ({"min_realism": 6}, "generate.min_realism"),
        ({"dedup_threshold": 0}, "generate.dedup_threshold"),
        ({"dedup_threshold": 1.5}, "generate.dedup_threshold"),
        ({"copy_run_words": -1}, "generate.copy_run_words"),
        ({"check_k": 0}, "generate.check_k"),
        ({"max_attempts": 0.5}, "generate.max_attempts"),
        ({"seed": -1}, "generate.seed"),
        ({"dry_run": "yes"}, "generate.dry_run must be true or false"),
        ({"out": None}, "generate.out is required"),
        ({"out": " "}, "generate.out must be a folder path"),
    ],
)
def test_bad_values(kw, needle):
    with pytest.raises(GenerateConfigError) as e:
        make(**kw)
    assert needle in str(e.value) and "\n" not in str(e.value)


def test_out_is_optional_for_a_dry_run():
    assert GenerateConfig(out=None, dry_run=True).out is None


def test_kinds_left_out_get_share_zero():
    s = make(n=10, kinds={"adversarial": 1})
    assert s.kinds == {"fact": 0.0, "adversarial": 1.0, "multi": 0.0, "unanswerable": 0.0}
    assert s.counts() == {"fact": 0, "adversarial": 10, "multi": 0, "unanswerable": 0}


shares = st.lists(st.integers(0, 20), min_size=4, max_size=4).filter(lambda xs: sum(xs) > 0)


@given(n=st.integers(1, 5000), weights=shares)
def test_counts_add_up_to_n_and_follow_the_shares(n, weights):
    total = sum(weights)
    kinds = {k: w / total for k, w in zip(KINDS, weights)}
    # Floats may miss 1 by an ulp; the check allows 1e-6.
    counts = make(n=n, kinds=kinds).counts()
    assert sum(counts.values()) == n
    for k in KINDS:
        assert abs(counts[k] - n * kinds[k]) < 1
        if kinds[k] == 0:
            assert counts[k] == 0
