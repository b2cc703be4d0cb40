"""The embedding cache under concurrent writers: overlapping keys, one writer killed mid-write.

Jobs of a parallel sweep (joblib processes, Ray workers on a shared filesystem)
write one cache at once. Every writer here stores, for a text, the vector that
text always gets (as a model would), so any vector read back can be checked.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import signal
import time
from pathlib import Path

import numpy as np

from sweep.embedding.cache import EmbeddingCache, _shard_hash

NAMESPACE = '{"test": "concurrency"}'
DIM = 64


def vector_of(text: str) -> np.ndarray:
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    return np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)


def vectors_of(texts: list[str]) -> np.ndarray:
    return np.stack([vector_of(t) for t in texts])


def writer(root: str, worker: int, rounds: int, done) -> None:
    """Store overlapping batches: text i is written by several workers, in other groupings."""
    cache = EmbeddingCache(root, NAMESPACE, dim=DIM)
    rng = np.random.default_rng(worker)
    for r in range(rounds):
        ids = sorted(set(rng.integers(0, 600, 80).tolist()))
        texts = [f"text {i}" for i in ids]
        cache.put_many(texts, vectors_of(texts))
        hits, found = cache.get_many(texts)
        assert found.all(), f"worker {worker} round {r}: its own entries are missing"
        np.testing.assert_array_equal(hits, vectors_of(texts))
        done.put((worker, texts))


def big_writer(root: str, start: int) -> None:
    """Shards large enough that a kill lands inside a write."""
    cache = EmbeddingCache(root, NAMESPACE, dim=DIM)
    n = 60_000
    base = np.random.default_rng(start).standard_normal((n, DIM)).astype(np.float32)
    for r in range(1000):
        texts = [f"big {start} {r} {i}" for i in range(n)]
        cache.put_many(texts, base + r)


def _temporaries(root: Path, pid: int) -> list[Path]:
    return [p for p in root.rglob(f".tmp-{pid}-*")]


def test_concurrent_writers_and_a_killed_one_lose_and_corrupt_nothing(tmp_path):
    root = tmp_path / "cache"
    ctx = multiprocessing.get_context("spawn")
    done = ctx.Queue()
    victim = ctx.Process(target=big_writer, args=(str(root), 7))
    writers = [ctx.Process(target=writer, args=(str(root), w, 12, done)) for w in range(4)]
    victim.start()
    for p in writers:
        p.start()
    # Kill the big writer while one of its files is half written.
    deadline = time.monotonic() + 120
    partial: list[Path] = []
    while time.monotonic() < deadline and not partial:
        partial = [
            p
            for p in _temporaries(root, victim.pid)
            if p.exists() and 0 < p.stat().st_size < 60_000 * DIM * 4
        ]
        time.sleep(0.001)
    assert partial, "the big writer never started a shard"
    os.kill(victim.pid, signal.SIGKILL)
    victim.join(30)
    committed: dict[int, list[str]] = {}
    for p in writers:
        p.join(180)
    while not done.empty():
        w, texts = done.get()
        committed.setdefault(w, []).extend(texts)
    assert all(p.exitcode == 0 for p in writers), [p.exitcode for p in writers]
    assert victim.exitcode == -signal.SIGKILL
    assert _temporaries(root, victim.pid), "the kill should leave a half-written temporary file"

    # A fresh reader: every entry any writer stored is there, with its own vector.
    reader = EmbeddingCache(root, NAMESPACE, dim=DIM)
    stored = sorted({t for texts in committed.values() for t in texts})
    assert len(stored) > 300
    got, found = reader.get_many(stored)
    assert found.all()
    np.testing.assert_array_equal(got, vectors_of(stored))
    # The killed writer's finished shards are whole; its half-written one is invisible.
    expected = np.random.default_rng(7).standard_normal((60_000, DIM)).astype(np.float32)
    big = [f"big 7 {r} {i}" for r in range(4) for i in (0, 12_345, 59_999)]
    got, found = reader.get_many(big)
    for text, ok, vec in zip(big, found, got):
        if ok:
            r, i = map(int, text.split()[2:])
            np.testing.assert_array_equal(vec, expected[i] + r)
    # Every shard committed on disk is whole: its name is the checksum of its contents.
    shards = list(root.rglob("*.keys.npy"))
    assert shards
    for keys_file in shards:
        name = keys_file.name[: -len(".keys.npy")]
        keys = np.load(keys_file, allow_pickle=False)
        vecs = np.load(keys_file.with_name(name + ".vecs.npy"), allow_pickle=False)
        assert _shard_hash(keys, vecs) == name
