"""``sweep.latency``: one query at a time, fresh encodes, a warm-up that is not timed."""

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from sweep.data import Ranking
from sweep.latency import Latency, measure_latency


class CountingRetriever:
    def __init__(self):
        self.calls = []

    def retrieve(self, texts, vecs, depth):
        self.calls.append((list(texts), None if vecs is None else vecs.shape, depth))
        n = len(texts)
        return Ranking(np.zeros((n, depth), dtype=np.int64), np.zeros((n, depth), dtype=np.float32))


def test_each_query_is_encoded_and_searched_on_its_own_after_an_untimed_warm_up():
    encoded = []

    def encode(text):
        encoded.append(text)
        return np.ones((1, 4), dtype=np.float32)

    retriever = CountingRetriever()
    out = measure_latency(["a", "b", "c", "d"], retriever, 7, encode, limit=3)
    assert encoded == ["a", "a", "b", "c"]
    assert retriever.calls == [(["a"], (1, 4), 7), (["a"], (1, 4), 7), (["b"], (1, 4), 7), (["c"], (1, 4), 7)]
    assert out.n == 3 and 0 < out.p50_ms <= out.p95_ms


def test_a_retriever_without_vectors_is_timed_on_its_own():
    retriever = CountingRetriever()
    out = measure_latency(["a", "b"], retriever, 3, None, limit=200)
    assert [c[1] for c in retriever.calls] == [None, None, None] and out.n == 2


@pytest.mark.parametrize("queries,limit", [([], 10), (["a"], 0)])
def test_nothing_to_time_is_nan_not_an_error(queries, limit):
    retriever = CountingRetriever()
    out = measure_latency(queries, retriever, 3, None, limit=limit)
    assert out.n == 0 and math.isnan(out.p50_ms) and math.isnan(out.p95_ms) and retriever.calls == []


@given(st.lists(st.floats(0, 10, allow_nan=False), min_size=1, max_size=50))
def test_percentiles_are_in_milliseconds_and_ordered(seconds):
    out = Latency.of(seconds)
    assert out.n == len(seconds)
    assert 1000 * min(seconds) - 1e-6 <= out.p50_ms <= out.p95_ms <= 1000 * max(seconds) + 1e-6
