"""``sweep.pipeline.latency``: one query at a time over a fixed sample, fresh encodes timed once
per embedder and kept where a rerun finds them."""

import json
import math
import os
import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from sweep.core.timing import TIMING_LINE, Conditions, needs_retime
from sweep.core.types import Ranking
from sweep.embedding.encode_times import CachedEncodeTimes, timing_namespace
from sweep.pipeline.latency import (
    ENCODE_TIMES_NAME,
    EncodeTimes,
    Latency,
    encode_times,
    encode_times_for,
    latency_sample,
    search_times,
)


@pytest.fixture(autouse=True)
def idle_machine(monkeypatch):
    """Every test here times on an idle machine unless it says otherwise: a busy test
    machine must not re-time what a test expects to be read back."""
    monkeypatch.setattr(os, "getloadavg", lambda: (0.1, 0.1, 0.1))


def _per_text(encode):
    """A sweep-folder store's measurer that times ``encode`` per text."""
    return lambda texts: encode_times(texts, encode)


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
    ms = search_times(["a", "b", "c"], vecs[:3], retriever, 7)
    assert retriever.calls == [
        (["a"], [[0, 1]], 7),
        (["a"], [[0, 1]], 7),
        (["b"], [[2, 3]], 7),
        (["c"], [[4, 5]], 7),
    ]
    assert ms.shape == (3,) and (ms > 0).all()


def test_a_retriever_without_vectors_is_searched_with_none():
    retriever = CountingRetriever()
    assert search_times(["a", "b"], None, retriever, 3).shape == (2,)
    assert [c[1] for c in retriever.calls] == [None, None, None]


def test_each_query_is_encoded_afresh_after_an_untimed_warm_up(caplog):
    caplog.set_level("INFO")
    encoded = []
    timed = encode_times(["a", "b"], encoded.append)
    assert encoded == ["a", "a", "b"] and timed.ms.shape == (2,) and timed.conditions.known
    assert caplog.messages == [TIMING_LINE % 2]


@pytest.mark.parametrize("queries,limit", [([], 10), (["a"], 0)])
def test_nothing_to_time_is_nan_not_an_error(queries, limit):
    retriever = CountingRetriever()
    sample = [queries[i] for i in latency_sample(len(queries), limit)]
    out = Latency.of_ms(search_times(sample, None, retriever, 3))
    assert (
        out.n == 0 and math.isnan(out.p50_ms) and math.isnan(out.p95_ms) and retriever.calls == []
    )


@given(st.lists(st.floats(0, 1e4, allow_nan=False), min_size=1, max_size=50))
def test_percentiles_are_ordered_and_within_the_times(ms):
    out = Latency.of_ms(ms)
    assert out.n == len(ms)
    assert min(ms) - 1e-9 <= out.p50_ms <= out.p95_ms <= max(ms) + 1e-9


def test_encode_times_are_measured_once_per_embedder_and_queries(tmp_path):
    encoded = []
    store = EncodeTimes(tmp_path)
    first = store.get_or_measure("model-a", ["q1", "q2"], _per_text(encoded.append))
    again = EncodeTimes(tmp_path).get_or_measure("model-a", ["q1", "q2"], _per_text(encoded.append))
    assert encoded == ["q1", "q1", "q2"]  # measured once (after a warm-up), then read back
    np.testing.assert_allclose(again.ms, first.ms, atol=1e-3)
    assert again.conditions == first.conditions and first.conditions.known
    # Another embedder, or other queries, are measured anew; the first entry stays.
    store.get_or_measure("model-b", ["q1", "q2"], _per_text(encoded.append))
    store.get_or_measure("model-a", ["q1", "q3"], _per_text(encoded.append))
    assert len(encoded) == 9
    data = json.loads((tmp_path / ENCODE_TIMES_NAME).read_text())
    assert set(data) == {"model-a", "model-b"} and data["model-a"]["queries"] == ["q1", "q3"]


def test_a_damaged_file_is_measured_again_not_an_error(tmp_path):
    (tmp_path / ENCODE_TIMES_NAME).write_text("{not json")
    encoded = []
    timed = EncodeTimes(tmp_path).get_or_measure("m", ["q"], _per_text(encoded.append))
    assert encoded == ["q", "q"] and timed.ms.shape == (1,)
    assert json.loads((tmp_path / ENCODE_TIMES_NAME).read_text())["m"]["queries"] == ["q"]


def _measured_by_four_jobs_at_once(measure) -> list[str]:
    """The texts encoded when four threads call ``measure(encode)`` at the same time."""
    calls = []
    lock = threading.Lock()

    def encode(text):
        with lock:
            calls.append(text)

    threads = [threading.Thread(target=measure, args=(encode,)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return calls


def test_concurrent_jobs_measure_once(tmp_path):
    results = []
    calls = _measured_by_four_jobs_at_once(
        lambda encode: results.append(
            EncodeTimes(tmp_path).get_or_measure("m", ["a", "b"], _per_text(encode))
        )
    )
    assert calls == ["a", "a", "b"] and len(results) == 4


# --------------------------------------------------------------------------- the sample


@given(st.integers(0, 5000), st.integers(0, 400))
def test_the_sample_is_spread_over_the_queries_in_order_and_the_same_every_time(n, limit):
    idx = latency_sample(n, limit)
    assert len(idx) == min(n, limit)
    assert (np.diff(idx) > 0).all() and (idx >= 0).all() and (idx < max(n, 1)).all()
    if len(idx):
        assert idx[0] == 0
        # Evenly spread: no gap is more than one query wider than the stride.
        assert (np.diff(np.append(idx, n)) <= -(-n // len(idx))).all()
    np.testing.assert_array_equal(idx, latency_sample(n, limit))


def test_a_sample_of_a_dataset_sorted_by_type_takes_every_type():
    types = ["easy"] * 100 + ["multi"] * 100 + ["unanswerable"] * 100
    assert {types[i] for i in latency_sample(len(types), 32)} == set(types)


# --------------------------------------------------------------------------- cached times


def _namespace(**kw):
    return timing_namespace(
        kw.get("identity", "model-a"), kw.get("device", "cpu"), kw.get("threads", 2)
    )


def test_cached_times_are_measured_once_and_read_back_by_a_later_run(tmp_path, caplog):
    caplog.set_level("INFO")
    encoded = []
    first, measured = CachedEncodeTimes(tmp_path, _namespace(), "m").get_or_measure(
        ["q1", "q2"], encoded.append
    )
    assert measured == 2 and encoded == ["q1", "q1", "q2"] and (first.ms > 0).all()
    # Said as it starts: timing takes a while with nothing else to show.
    assert caplog.messages == [TIMING_LINE % 2]
    # A later run (a new object, as a new process would build): read, not measured.
    again, measured = CachedEncodeTimes(tmp_path, _namespace(), "m").get_or_measure(
        ["q2", "q1"], encoded.append
    )
    assert measured == 0 and len(encoded) == 3
    np.testing.assert_allclose(again.ms, first.ms[::-1], rtol=1e-6)
    # Only a new query is timed (after its own warm-up call).
    _, measured = CachedEncodeTimes(tmp_path, _namespace(), "m").get_or_measure(
        ["q1", "q3"], encoded.append
    )
    assert measured == 1 and encoded[3:] == ["q3", "q3"]


@pytest.mark.parametrize("other", [{"identity": "model-b"}, {"device": "cuda:0"}, {"threads": 1}])
def test_times_of_another_embedder_device_or_thread_count_are_measured_anew(tmp_path, other):
    encoded = []
    CachedEncodeTimes(tmp_path, _namespace(), "m").get_or_measure(["q"], encoded.append)
    _, measured = CachedEncodeTimes(tmp_path, _namespace(**other), "m").get_or_measure(
        ["q"], encoded.append
    )
    assert measured == 1 and len(encoded) == 4


def test_the_namespace_names_the_machine_and_the_configured_thread_count(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # a parallel job's share is not the deployment's
    data = json.loads(timing_namespace("model-a", "cpu", None))
    assert data["threads"] == os.cpu_count() and data["cpu"] and data["kind"] == "query_encode_ms"
    assert json.loads(timing_namespace("model-a", "cpu", 5))["threads"] == 5


def test_concurrent_jobs_time_each_query_once_in_the_cache(tmp_path):
    calls = _measured_by_four_jobs_at_once(
        lambda encode: CachedEncodeTimes(tmp_path, _namespace(), "m").get_or_measure(
            ["a", "b"], encode
        )
    )
    assert calls == ["a", "a", "b"]


class TimingEmbedder:
    """Keeps its encode times in a cache folder (None: it has none)."""

    def __init__(self, root, identity="model-a"):
        self.root, self.identity, self.encoded = root, identity, []

    def encode_query(self, text):
        self.encoded.append(text)

    def query_encode_ms(self, texts, *, retime=None):
        if self.root is None:
            return None
        return CachedEncodeTimes(self.root, _namespace(identity=self.identity), "m").get_or_measure(
            texts, self.encode_query, retime=retime
        )[0]


def test_a_sweep_takes_the_embedders_cached_times_and_writes_nothing_in_its_folder(tmp_path):
    emb = TimingEmbedder(tmp_path / "cache")
    times = encode_times_for(emb, tmp_path / "sweep-1")
    assert times(["q1", "q2"]).ms.shape == (2,) and len(emb.encoded) == 3
    later = TimingEmbedder(tmp_path / "cache")
    assert encode_times_for(later, tmp_path / "sweep-2")(["q1", "q2"]).ms.shape == (2,)
    assert later.encoded == []  # a rerun in another sweep folder measures nothing
    assert not (tmp_path / "sweep-1" / ENCODE_TIMES_NAME).exists()


def test_with_the_cache_off_the_sweep_folder_keeps_the_times_for_its_settings(tmp_path):
    emb = TimingEmbedder(None)
    encode_times_for(emb, tmp_path)(["q1"])
    encode_times_for(TimingEmbedder(None), tmp_path)(["q1"])
    assert emb.encoded == ["q1", "q1"] and (tmp_path / ENCODE_TIMES_NAME).exists()


def test_an_embedder_without_an_identity_shares_nothing():
    class Anonymous:
        def encode_query(self, text):
            pass

    assert encode_times_for(Anonymous(), Path("unused")) is None


# --------------------------------------------------------------------------- when and under what load


IDLE = Conditions("2026-12-05T13:40:00+00:00", 0.3, 2)
BUSY = Conditions("2026-12-05T12:00:00+00:00", 8.0, 2)
UNKNOWN = Conditions()


@pytest.mark.parametrize(
    "kept,now,retime,expected",
    [
        (BUSY, IDLE, None, True),  # measured under load, idle now: measured again
        (IDLE, IDLE, None, False),  # measured idle: kept
        (IDLE, BUSY, None, False),
        (BUSY, BUSY, None, False),  # a busy machine now would only give another slow figure
        (UNKNOWN, IDLE, None, True),  # kept before the load was recorded: it may have been busy
        (UNKNOWN, BUSY, None, False),
        (IDLE, IDLE, True, True),  # runtime.retime=true
        (IDLE, BUSY, True, True),
        (BUSY, IDLE, False, False),  # runtime.retime=false: a warm rerun loads no model
        (UNKNOWN, IDLE, False, False),
    ],
)
def test_the_retime_rule(kept, now, retime, expected):
    assert needs_retime(kept, now, retime) is expected


@given(st.floats(0, 100), st.integers(1, 256), st.floats(0, 100), st.integers(1, 256))
def test_a_figure_measured_idle_is_never_retimed_unasked(load, cpus, load_now, cpus_now):
    kept, now = (
        Conditions("2026-01-01T00:00:00+00:00", load, cpus),
        Conditions("x", load_now, cpus_now),
    )
    assume(not kept.busy)
    assert not needs_retime(kept, now) and needs_retime(kept, now, retime=True)


def test_conditions_say_when_and_under_what_load():
    assert IDLE.describe() == "measured 2026-12-05 13:40 UTC, load 0.3 on 2 CPUs"
    assert UNKNOWN.describe() == "measured at an unknown time" and UNKNOWN.busy is None
    assert BUSY.busy and not IDLE.busy
    # A figure of two parts is as old as the older and as loaded as the busier.
    assert Conditions.worst([IDLE, BUSY]) == Conditions(BUSY.at, 8.0, 2)
    assert Conditions.worst([IDLE, UNKNOWN]) == UNKNOWN
    assert Conditions.from_dict({"at": 3, "load": "x", "cpus": -1}) == UNKNOWN


class Clock:
    """An injectable load reading: what the machine looks like when the store asks."""

    def __init__(self, conditions):
        self.conditions = conditions

    def __call__(self):
        return self.conditions


def test_a_cached_time_measured_under_load_is_measured_again_when_the_machine_is_idle(tmp_path):
    clock, encoded = Clock(BUSY), []
    store = lambda: CachedEncodeTimes(tmp_path, _namespace(), "m", now=clock)  # noqa: E731
    first, measured = store().get_or_measure(["q1", "q2"], encoded.append)
    assert measured == 2 and first.conditions == BUSY
    again, measured = store().get_or_measure(["q1", "q2"], encoded.append)  # still busy: kept
    assert measured == 0 and again.conditions == BUSY
    clock.conditions = IDLE
    fresh, measured = store().get_or_measure(["q1", "q2"], encoded.append)
    assert measured == 2 and fresh.conditions == IDLE and len(encoded) == 6
    _, measured = store().get_or_measure(["q1", "q2"], encoded.append)  # idle: kept
    assert measured == 0
    _, measured = store().get_or_measure(["q1", "q2"], encoded.append, retime=True)
    assert measured == 2
    clock.conditions = BUSY
    store().get_or_measure(["q1", "q2"], encoded.append)
    clock.conditions = IDLE
    _, measured = store().get_or_measure(["q1", "q2"], encoded.append, retime=False)
    assert measured == 0  # runtime.retime=false keeps even a figure measured under load


def test_a_cached_time_kept_before_conditions_were_recorded_still_reads(tmp_path):
    from sweep.embedding.cache import EmbeddingCache

    # As an earlier version kept them: one column of the embedding cache, nothing else.
    EmbeddingCache(tmp_path, _namespace(), dim=1).put_many(
        ["q1", "q2"], np.array([[817.0], [805.0]])
    )
    encoded = []
    timed, measured = CachedEncodeTimes(
        tmp_path, _namespace(), "m", now=Clock(BUSY)
    ).get_or_measure(["q1", "q2"], encoded.append)
    assert measured == 0 and timed.ms.tolist() == [817.0, 805.0] and encoded == []
    assert timed.conditions.describe() == "measured at an unknown time"
    # An idle machine measures them again, and says when.
    timed, measured = CachedEncodeTimes(
        tmp_path, _namespace(), "m", now=Clock(IDLE)
    ).get_or_measure(["q1", "q2"], encoded.append)
    assert measured == 2 and timed.ms.max() < 817.0 and timed.conditions == IDLE


def test_the_sweep_folders_times_measured_under_load_are_measured_again_when_idle(tmp_path):
    clock, encoded = Clock(BUSY), []

    def measure(texts):
        return encode_times(texts, encoded.append, clock)

    assert EncodeTimes(tmp_path, clock).get_or_measure("m", ["q"], measure).conditions == BUSY
    EncodeTimes(tmp_path, clock).get_or_measure("m", ["q"], measure)
    assert len(encoded) == 2
    clock.conditions = IDLE
    assert EncodeTimes(tmp_path, clock).get_or_measure("m", ["q"], measure).conditions == IDLE
    EncodeTimes(tmp_path, clock).get_or_measure("m", ["q"], measure)
    assert len(encoded) == 4
    # A file of an earlier version (no conditions) still reads, as measured at an unknown time.
    data = json.loads((tmp_path / ENCODE_TIMES_NAME).read_text())
    del data["m"]["conditions"]
    (tmp_path / ENCODE_TIMES_NAME).write_text(json.dumps(data))
    timed = EncodeTimes(tmp_path, Clock(BUSY)).get_or_measure("m", ["q"], measure)
    assert timed.conditions == UNKNOWN and len(encoded) == 4


def test_retime_measures_the_cached_times_again_once_per_sweep(tmp_path):
    emb = TimingEmbedder(tmp_path / "cache")
    encode_times_for(emb, tmp_path / "sweep-1")(["q1", "q2"])
    assert len(emb.encoded) == 3
    # runtime.retime=true: the first setting of the next sweep measures them again...
    first = TimingEmbedder(tmp_path / "cache")
    encode_times_for(first, tmp_path / "sweep-2", retime=True)(["q1", "q2"])
    assert len(first.encoded) == 3
    # ... and the sweep's other settings read them.
    other = TimingEmbedder(tmp_path / "cache")
    encode_times_for(other, tmp_path / "sweep-2", retime=True)(["q1", "q2"])
    assert other.encoded == []
