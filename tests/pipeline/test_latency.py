"""``sweep.pipeline.latency``: one query at a time, fresh encodes timed once per sweep and embedder."""

import json
import math
import threading

import numpy as np
import pytest
from hypothesis import given, strategies as st

from sweep.core.types import Ranking
from sweep.pipeline.latency import ENCODE_TIMES_NAME, EncodeTimes, Latency, encode_times, search_times


class CountingRetriever:
    def __init__(self):
        self.calls = []

    def retrieve(self, texts, vecs, depth):
        self.calls.append((list(texts), None if vecs is None else vecs.tolist(), depth))
        n = len(texts)
        return Ranking(np.zeros((n, depth), dtype=np.int64), np.zeros((n, depth), dtype=np.float32))


def test_each_query_is_searched_on_its_own_with_its_own_vector_after_a_warm_up():
    retriever = CountingRetriever()
    vecs = np.arange(8, dtype=np.float32).reshape(4, 2)
    ms = search_times(["a", "b", "c", "d"], vecs, retriever, 7, limit=3)
    assert retriever.calls == [(["a"], [[0, 1]], 7), (["a"], [[0, 1]], 7), (["b"], [[2, 3]], 7),
                               (["c"], [[4, 5]], 7)]
    assert ms.shape == (3,) and (ms > 0).all()


def test_a_retriever_without_vectors_is_searched_with_none():
    retriever = CountingRetriever()
    assert search_times(["a", "b"], None, retriever, 3, limit=200).shape == (2,)
    assert [c[1] for c in retriever.calls] == [None, None, None]


def test_each_query_is_encoded_afresh_after_an_untimed_warm_up():
    encoded = []
    ms = encode_times(["a", "b", "c"], lambda t: encoded.append(t), limit=2)
    assert encoded == ["a", "a", "b"] and ms.shape == (2,)


@pytest.mark.parametrize("queries,limit", [([], 10), (["a"], 0)])
def test_nothing_to_time_is_nan_not_an_error(queries, limit):
    retriever = CountingRetriever()
    out = Latency.of_ms(search_times(queries, None, retriever, 3, limit=limit))
    assert out.n == 0 and math.isnan(out.p50_ms) and math.isnan(out.p95_ms) and retriever.calls == []


@given(st.lists(st.floats(0, 1e4, allow_nan=False), min_size=1, max_size=50))
def test_percentiles_are_ordered_and_within_the_times(ms):
    out = Latency.of_ms(ms)
    assert out.n == len(ms)
    assert min(ms) - 1e-9 <= out.p50_ms <= out.p95_ms <= max(ms) + 1e-9


def test_encode_times_are_measured_once_per_embedder_and_queries(tmp_path):
    encoded = []
    store = EncodeTimes(tmp_path)
    first = store.get_or_measure("model-a", ["q1", "q2"], encoded.append, limit=10)
    again = EncodeTimes(tmp_path).get_or_measure("model-a", ["q1", "q2"], encoded.append, limit=10)
    assert encoded == ["q1", "q1", "q2"]  # measured once (after a warm-up), then read back
    np.testing.assert_allclose(again, first, atol=1e-3)
    # Another embedder, or other queries, are measured anew; the first entry stays.
    store.get_or_measure("model-b", ["q1", "q2"], encoded.append, limit=10)
    store.get_or_measure("model-a", ["q1", "q3"], encoded.append, limit=10)
    assert len(encoded) == 9
    data = json.loads((tmp_path / ENCODE_TIMES_NAME).read_text())
    assert set(data) == {"model-a", "model-b"} and data["model-a"]["queries"] == ["q1", "q3"]


def test_a_damaged_file_is_measured_again_not_an_error(tmp_path):
    (tmp_path / ENCODE_TIMES_NAME).write_text("{not json")
    encoded = []
    ms = EncodeTimes(tmp_path).get_or_measure("m", ["q"], encoded.append, limit=5)
    assert encoded == ["q", "q"] and ms.shape == (1,)
    assert json.loads((tmp_path / ENCODE_TIMES_NAME).read_text())["m"]["queries"] == ["q"]


def test_concurrent_jobs_measure_once(tmp_path):
    calls = []
    lock = threading.Lock()

    def slow_encode(text):
        with lock:
            calls.append(text)

    results = []
    threads = [threading.Thread(target=lambda: results.append(
        EncodeTimes(tmp_path).get_or_measure("m", ["a", "b"], slow_encode, limit=2)))
        for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert calls == ["a", "a", "b"] and len(results) == 4
