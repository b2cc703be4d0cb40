"""``sweep.embedding.rates``: an embedder's speed here before, kept as JSON beside the cache."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from sweep.embedding.rates import RATES_NAME, EmbedRate, EmbedRates


def test_a_rate_is_kept_per_key_and_read_back(tmp_path):
    rates = EmbedRates(tmp_path)
    assert rates.get("m") is None
    rates.record("m", texts=100, tokens=4000, seconds=2.0)
    rates.record("m", load_s=7.5)
    rates.record("other", texts=10, seconds=1.0)
    got = rates.get("m")
    assert (got.texts, got.tokens, got.seconds, got.load_s) == (100, 4000, 2.0, 7.5)
    assert got.texts_per_s == 50
    # Plain JSON, never a pickle.
    body = json.loads((tmp_path / RATES_NAME).read_text())
    assert set(body) == {"m", "other"} and body["other"]["tokens"] == 0


def test_a_damaged_rates_file_is_no_rate_and_is_written_anew(tmp_path):
    (tmp_path / RATES_NAME).write_text("{not json")
    rates = EmbedRates(tmp_path)
    assert rates.get("m") is None
    rates.record("m", texts=5, seconds=1.0)
    assert rates.get("m").texts == 5


def test_an_estimate_counts_tokens_when_both_sides_know_them():
    rate = EmbedRate(texts=100, tokens=10_000, seconds=10.0)
    # 1,000 tokens a second: 50 long texts of 200 tokens take 10 s, not 5 s at 10 texts/s.
    assert rate.seconds_for(50, 10_000) == 10.0
    assert rate.seconds_for(50, None) == 5.0
    assert EmbedRate(texts=100, seconds=10.0).seconds_for(50, 10_000) == 5.0


@given(
    st.lists(
        st.tuples(st.integers(1, 5000), st.integers(1, 10**6), st.floats(0.01, 1000)),
        min_size=1,
        max_size=30,
    )
)
def test_summed_measurements_keep_the_mean_speed_and_stay_bounded(runs):
    rate = EmbedRate()
    for texts, tokens, seconds in runs:
        rate = rate.plus(texts, tokens, seconds)
    # The speed lies between the slowest and the fastest run; the sums never grow unbounded.
    speeds = [t / s for t, _, s in runs]
    assert min(speeds) * (1 - 1e-9) <= rate.texts_per_s <= max(speeds) * (1 + 1e-9)
    assert rate.texts <= 20_000 + 5000
