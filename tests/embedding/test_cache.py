"""The content-addressed embedding cache: exact hits, misses, concurrency, corruption."""

from __future__ import annotations

import hashlib
import json
import logging
import multiprocessing as mp
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sweep.embedding.cache import (
    CacheError,
    EmbeddingCache,
    cache_info,
    clear_cache,
    default_cache_dir,
    namespace_dirname,
    resolve_cache_dir,
)

DIM = 8


def vector_for(text: str, dim: int = DIM) -> np.ndarray:
    """A deterministic vector per text, so any reader can check what it got."""
    seed = int.from_bytes(
        hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:8], "little"
    )
    return np.random.default_rng(seed).standard_normal(dim).astype(np.float32)


def vectors_for(texts, dim: int = DIM) -> np.ndarray:
    return (
        np.stack([vector_for(t, dim) for t in texts]) if texts else np.zeros((0, dim), np.float32)
    )


def shard_files(cache: EmbeddingCache, suffix: str) -> list[Path]:
    return sorted(p for p in cache.dir.iterdir() if p.name.endswith(suffix))


def test_hit_returns_exactly_the_stored_vector(tmp_path):
    texts = ["alpha", "beta", "gamma"]
    vecs = vectors_for(texts)
    vecs[1, 3] = np.float32(1e-39)  # a subnormal survives bit for bit
    assert EmbeddingCache(tmp_path, "ns").put_many(texts, vecs) == 3
    got, found = EmbeddingCache(tmp_path, "ns").get_many(["gamma", "alpha", "beta"])
    assert found.all()
    assert got.dtype == np.float32
    assert got.tobytes() == vecs[[2, 0, 1]].tobytes()


def test_missing_rows_are_nan_and_not_found(tmp_path):
    cache = EmbeddingCache(tmp_path, "ns", dim=DIM)
    cache.put_many(["a"], vectors_for(["a"]))
    got, found = cache.get_many(["b", "a", "c"])
    assert found.tolist() == [False, True, False]
    assert np.isnan(got[[0, 2]]).all()
    assert np.array_equal(got[1], vector_for("a"))


def test_empty_cache_without_dim_gives_zero_width(tmp_path):
    got, found = EmbeddingCache(tmp_path, "ns").get_many(["x", "y"])
    assert got.shape == (2, 0) and not found.any()


def test_namespace_separates_entries(tmp_path):
    EmbeddingCache(tmp_path, "model-a").put_many(["same text"], vectors_for(["same text"]))
    _, found = EmbeddingCache(tmp_path, "model-b").get_many(["same text"])
    assert not found.any()
    _, found = EmbeddingCache(tmp_path, "model-a").get_many(["same text"])
    assert found.all()


def test_keys_distinguish_namespace_text_boundary(tmp_path):
    # "ab" + NUL + "c" must not collide with "a" + NUL + "bc".
    EmbeddingCache(tmp_path, "ab").put_many(["c"], vectors_for(["c"]))
    _, found = EmbeddingCache(tmp_path, "a").get_many(["b\0c"])
    assert not found.any()


def test_duplicates_and_existing_entries_are_written_once(tmp_path):
    cache = EmbeddingCache(tmp_path, "ns")
    assert cache.put_many(["x", "y", "x"], vectors_for(["x", "y", "x"])) == 2
    assert cache.put_many(["x", "y"], vectors_for(["x", "y"])) == 0
    assert cache.put_many(["y", "z"], vectors_for(["y", "z"])) == 1
    assert len(EmbeddingCache(tmp_path, "ns")) == 3
    assert len(shard_files(cache, ".keys.npy")) == 2


def test_put_many_rejects_bad_vectors(tmp_path):
    cache = EmbeddingCache(tmp_path, "ns", dim=DIM)
    with pytest.raises(CacheError, match="shape"):
        cache.put_many(["a", "b"], vectors_for(["a"]))
    with pytest.raises(CacheError, match="NaN"):
        cache.put_many(["a"], np.full((1, DIM), np.nan, np.float32))
    with pytest.raises(CacheError, match="dim 4"):
        cache.put_many(["a"], np.zeros((1, 4), np.float32))
    with pytest.raises(CacheError, match="float"):
        cache.put_many(["a"], np.zeros((1, DIM), np.int64))
    assert not cache.dir.exists() or not shard_files(cache, ".keys.npy")


def test_new_shards_of_another_writer_are_seen_by_an_open_cache(tmp_path):
    reader = EmbeddingCache(tmp_path, "ns")
    assert not reader.get_many(["late"])[1].any()
    EmbeddingCache(tmp_path, "ns").put_many(["late"], vectors_for(["late"]))
    got, found = reader.get_many(["late"])
    assert found.all() and np.array_equal(got[0], vector_for("late"))


def test_no_pickle_and_no_temporaries_left(tmp_path):
    cache = EmbeddingCache(tmp_path, "ns")
    cache.put_many(["a", "b"], vectors_for(["a", "b"]))
    names = sorted(p.name for p in cache.dir.iterdir())
    assert not [n for n in names if n.startswith(".tmp")]
    for p in cache.dir.glob("*.npy"):
        np.load(p, allow_pickle=False)  # would raise on object arrays
    meta = json.loads((cache.dir / "namespace.json").read_text())
    assert meta["namespace"] == "ns" and meta["dim"] == DIM


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(), min_size=1, max_size=12))
def test_round_trip_any_texts(texts):
    with tempfile.TemporaryDirectory() as root:
        EmbeddingCache(root, "ns").put_many(texts, vectors_for(texts))
        got, found = EmbeddingCache(root, "ns").get_many(texts)
        assert found.all()
        assert got.tobytes() == vectors_for(texts).tobytes()


def test_lone_surrogates_are_keyed_not_crashed_on(tmp_path):
    texts = ["\ud800", "\udfff x"]
    EmbeddingCache(tmp_path, "ns").put_many(texts, vectors_for(texts))
    got, found = EmbeddingCache(tmp_path, "ns").get_many(texts)
    assert found.all() and np.array_equal(got, vectors_for(texts))


# -- corruption ------------------------------------------------------------------


def _one_shard(tmp_path, texts):
    cache = EmbeddingCache(tmp_path, "ns")
    cache.put_many(texts, vectors_for(texts))
    return cache


def test_truncated_vectors_file_is_ignored_then_recomputed(tmp_path, caplog):
    texts = ["one", "two", "three"]
    cache = _one_shard(tmp_path, texts)
    (vec_file,) = shard_files(cache, ".vecs.npy")
    data = vec_file.read_bytes()
    vec_file.write_bytes(data[: len(data) - 7])
    fresh = EmbeddingCache(tmp_path, "ns")
    got, found = fresh.get_many(texts)
    assert not found.any() and np.isnan(got).all()
    assert "corrupt" in caplog.text
    # The caller recomputes and stores again; the next reader gets the vectors.
    assert fresh.put_many(texts, vectors_for(texts)) == 3
    got, found = EmbeddingCache(tmp_path, "ns").get_many(texts)
    assert found.all() and np.array_equal(got, vectors_for(texts))


def test_truncated_keys_file_is_ignored(tmp_path):
    cache = _one_shard(tmp_path, ["one", "two"])
    (key_file,) = shard_files(cache, ".keys.npy")
    key_file.write_bytes(key_file.read_bytes()[:100])
    _, found = EmbeddingCache(tmp_path, "ns").get_many(["one", "two"])
    assert not found.any()


def test_flipped_byte_in_vectors_fails_the_checksum(tmp_path):
    cache = _one_shard(tmp_path, ["one", "two"])
    (vec_file,) = shard_files(cache, ".vecs.npy")
    data = bytearray(vec_file.read_bytes())
    data[-3] ^= 0x40
    vec_file.write_bytes(bytes(data))
    _, found = EmbeddingCache(tmp_path, "ns").get_many(["one", "two"])
    assert not found.any()


def test_garbage_file_with_a_shard_name_is_ignored(tmp_path):
    cache = _one_shard(tmp_path, ["one"])
    (cache.dir / ("f" * 32 + ".keys.npy")).write_bytes(b"\x93NUMPY garbage")
    (cache.dir / ("e" * 32 + ".keys.npy")).write_bytes(b"")
    got, found = EmbeddingCache(tmp_path, "ns").get_many(["one"])
    assert found.all() and np.array_equal(got[0], vector_for("one"))


def test_vectors_without_keys_are_invisible(tmp_path):
    # A writer killed between its two renames leaves only the vectors file.
    cache = _one_shard(tmp_path, ["one"])
    (key_file,) = shard_files(cache, ".keys.npy")
    key_file.unlink()
    _, found = EmbeddingCache(tmp_path, "ns").get_many(["one"])
    assert not found.any()


def test_stale_temporaries_are_removed_on_open_fresh_ones_kept(tmp_path):
    cache = _one_shard(tmp_path, ["one"])
    stale = cache.dir / ".tmp-1-stale.npy"
    fresh = cache.dir / ".tmp-2-fresh.npy"
    stale.write_bytes(b"partial")
    fresh.write_bytes(b"partial")
    old = time.time() - 3 * 24 * 3600
    os.utime(stale, (old, old))
    _got, found = EmbeddingCache(tmp_path, "ns").get_many(["one"])
    assert found.all()
    assert not stale.exists() and fresh.exists()


# -- several processes ---------------------------------------------------------------


def _writer(root: str, namespace: str, texts: list[str], rounds: int, batch: int) -> None:
    for _ in range(rounds):
        cache = EmbeddingCache(root, namespace)
        for lo in range(0, len(texts), batch):
            part = texts[lo : lo + batch]
            cache.put_many(part, vectors_for(part))


def _check_valid(root, namespace, texts):
    got, found = EmbeddingCache(root, namespace).get_many(texts)
    assert found.all()
    assert got.tobytes() == vectors_for(texts).tobytes()


def test_two_processes_writing_same_and_different_keys(tmp_path):
    shared = [f"shared {i}" for i in range(60)]
    own_a = [f"only a {i}" for i in range(60)]
    own_b = [f"only b {i}" for i in range(60)]
    ctx = mp.get_context("spawn")
    # Different interleavings of shared keys, so the writers race on them.
    procs = [
        ctx.Process(target=_writer, args=(str(tmp_path), "ns", shared + own_a, 3, 7)),
        ctx.Process(target=_writer, args=(str(tmp_path), "ns", own_b + shared[::-1], 3, 5)),
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    _check_valid(tmp_path, "ns", shared + own_a + own_b)
    info = cache_info(tmp_path)
    assert info["entries"] == 180
    ns_dir = tmp_path / "v1" / namespace_dirname("ns")
    assert not [p for p in ns_dir.iterdir() if p.name.startswith(".tmp")]


_KILLED_WRITER = """
import sys
from sweep.embedding.cache import EmbeddingCache
sys.path.insert(0, {tests!r})
from test_cache import vectors_for
cache = EmbeddingCache({root!r}, "ns", dim=512)
i = 0
print("ready", flush=True)
while True:
    part = [f"text {{j}}" for j in range(i, i + 64)]
    cache.put_many(part, vectors_for(part, 512))
    i += 64
"""


def test_writer_killed_mid_write_leaves_a_valid_cache(tmp_path):
    script = _KILLED_WRITER.format(tests=str(Path(__file__).parent), root=str(tmp_path))
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE)
    assert proc.stdout.readline().strip() == b"ready"
    ns_dir = tmp_path / "v1" / namespace_dirname("ns")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and len(list(ns_dir.glob("*.keys.npy"))) < 5:
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    texts = [f"text {j}" for j in range(64 * 200)]
    got, found = EmbeddingCache(tmp_path, "ns", dim=512).get_many(texts)
    assert found.sum() >= 5 * 64
    # Every entry a reader sees is complete and exactly what was written.
    seen = [t for t, f in zip(texts, found) if f]
    assert got[found].tobytes() == vectors_for(seen, 512).tobytes()


# -- info, clear, CLI ------------------------------------------------------------------


def test_info_and_clear(tmp_path):
    EmbeddingCache(tmp_path, "ns-a", meta={"model": "model-a"}).put_many(
        ["a", "b"], vectors_for(["a", "b"])
    )
    EmbeddingCache(tmp_path, "ns-b").put_many(["a"], vectors_for(["a"]))
    foreign = tmp_path / "notes.txt"
    foreign.write_text("not ours")
    info = cache_info(tmp_path)
    assert info["entries"] == 3
    assert info["bytes"] > 3 * DIM * 4
    by_id = {ns["id"]: ns for ns in info["namespaces"]}
    a = by_id[namespace_dirname("ns-a")]
    assert (a["entries"], a["dim"], a["model"], a["namespace"]) == (2, DIM, "model-a", "ns-a")

    removed = clear_cache(tmp_path, "ns-a")
    assert removed["entries"] == 2 and removed["namespaces"] == 1
    assert cache_info(tmp_path)["entries"] == 1
    assert not EmbeddingCache(tmp_path, "ns-a").get_many(["a"])[1].any()
    assert EmbeddingCache(tmp_path, "ns-b").get_many(["a"])[1].all()

    clear_cache(tmp_path)
    assert cache_info(tmp_path) == {
        "root": str(tmp_path),
        "entries": 0,
        "bytes": 0,
        "backends": {},
        "namespaces": [],
    }
    assert foreign.read_text() == "not ours"


def test_info_of_missing_directory_is_empty(tmp_path):
    assert cache_info(tmp_path / "nope")["entries"] == 0
    assert clear_cache(tmp_path / "nope")["entries"] == 0


def test_resolve_cache_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_cache_dir() == tmp_path / "sweep" / "embeddings"
    assert resolve_cache_dir(None) == tmp_path / "sweep" / "embeddings"
    for off in ("", "none", "off", "OFF", " None "):
        assert resolve_cache_dir(off) is None
    assert resolve_cache_dir(str(tmp_path / "c")) == tmp_path / "c"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
    assert default_cache_dir() == Path.home() / ".cache" / "sweep" / "embeddings"


def _cli(*args, stdin=subprocess.DEVNULL, env=None):
    return subprocess.run(
        [sys.executable, "-m", "sweep.cache", *args],
        capture_output=True,
        text=True,
        stdin=stdin,
        env=env,
        timeout=60,
    )


def test_cli_info_shows_the_namespaces_by_backend(tmp_path):
    def ns(**backend):
        return json.dumps({"format": 1, "weights": "w", "max_seq_length": 256, **backend})

    EmbeddingCache(tmp_path, ns(), meta={"model": "m"}).put_many(["a"], vectors_for(["a"]))
    openvino = ns(backend="openvino", precision="bf16", recipe="r1")
    EmbeddingCache(tmp_path, openvino, meta={"model": "m"}).put_many(
        ["a", "b"], vectors_for(["a", "b"])
    )
    info = cache_info(tmp_path)
    assert {b: t["entries"] for b, t in info["backends"].items()} == {
        "openvino (bf16, recipe r1)": 2,
        "torch (fp32)": 1,  # a namespace that names no backend is torch's
    }
    assert [n["backend"] for n in info["namespaces"]] == [
        "openvino (bf16, recipe r1)",
        "torch (fp32)",
    ]
    out = _cli("info", "--dir", str(tmp_path)).stdout
    assert "backend openvino (bf16, recipe r1): 2 entries" in out
    assert "backend torch (fp32): 1 entries" in out
    assert "m openvino (bf16, recipe r1) max_seq_length=256" in out


def test_cli_info_and_clear(tmp_path):
    EmbeddingCache(tmp_path, "ns", meta={"model": "my-model"}).put_many(
        ["a", "b"], vectors_for(["a", "b"])
    )
    res = _cli("info", "--dir", str(tmp_path))
    assert res.returncode == 0, res.stderr
    assert f"embedding cache: {tmp_path}" in res.stdout
    assert "entries: 2" in res.stdout and "my-model" in res.stdout
    res = _cli("info", "--dir", str(tmp_path), "--json")
    assert json.loads(res.stdout)["entries"] == 2

    res = _cli("clear", "--dir", str(tmp_path))  # no --yes, stdin not a terminal
    assert res.returncode == 2
    assert res.stderr.strip().count("\n") == 0 and "--yes" in res.stderr
    assert "Traceback" not in res.stderr
    assert cache_info(tmp_path)["entries"] == 2

    res = _cli("clear", "--dir", str(tmp_path), "--yes")
    assert res.returncode == 0, res.stderr
    assert "cleared 2 entries" in res.stdout
    assert cache_info(tmp_path)["entries"] == 0


def test_cli_counts_and_clears_the_report_pictures(tmp_path):
    from sweep.reporting.figurecache import FigureCache, fingerprint

    png = tmp_path / "p.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 100 + b"IEND\xaeB`\x82")
    figures = FigureCache(tmp_path / "cache" / "figures")
    figures.keep(fingerprint("one"), png)
    figures.keep(fingerprint("two"), png)
    (figures.folder / "mine.txt").write_text("not the cache's")
    res = _cli("info", "--dir", str(tmp_path / "cache"))
    assert "report pictures drawn before: 2" in res.stdout, res.stdout
    assert json.loads(_cli("info", "--dir", str(tmp_path / "cache"), "--json").stdout)[
        "figures"
    ] == {"files": 2, "bytes": 2 * 116}
    res = _cli("clear", "--dir", str(tmp_path / "cache"), "--namespace", "x", "--yes")
    assert res.returncode == 2 and len(figures.files()) == 2  # one namespace: pictures stay
    res = _cli("clear", "--dir", str(tmp_path / "cache"), "--yes")
    assert res.returncode == 0 and "cleared 2 report pictures" in res.stdout
    assert figures.files() == [] and (figures.folder / "mine.txt").exists()


def test_cli_default_dir_follows_xdg(tmp_path):
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    root = tmp_path / "sweep" / "embeddings"
    EmbeddingCache(root, "ns").put_many(["a"], vectors_for(["a"]))
    res = _cli("info", env=env)
    assert res.returncode == 0 and f"embedding cache: {root}" in res.stdout
    assert "entries: 1" in res.stdout


def test_cli_errors_are_one_line(tmp_path):
    afile = tmp_path / "file"
    afile.write_text("x")
    res = _cli("info", "--dir", str(afile))
    assert res.returncode == 2
    assert res.stderr.strip() == f"sweep.cache: error: {afile}: not a directory"
    res = _cli("clear", "--dir", str(tmp_path), "--namespace", "nope", "--yes")
    assert res.returncode == 2 and "no namespace 'nope'" in res.stderr
    assert "Traceback" not in res.stderr


def test_info_counts_query_encode_times_and_clear_timings_deletes_only_them(tmp_path):
    from sweep.embedding.cache import describe_namespace
    from sweep.embedding.encode_times import CachedEncodeTimes, timing_namespace

    ns = timing_namespace('{"model": "m"}', "cpu", 4)
    legacy = timing_namespace('{"model": "old"}', "cpu", 4)
    CachedEncodeTimes(tmp_path, ns, "my-model").get_or_measure(["q"], lambda text: None)
    # Times an earlier version kept: a one-column namespace of the embedding cache.
    EmbeddingCache(
        tmp_path, legacy, dim=1, meta={"model": "old-model", "kind": "query_encode_ms"}
    ).put_many(["q"], np.array([[5.0]]))
    EmbeddingCache(tmp_path, "vectors").put_many(["kept"], vectors_for(["kept"]))
    (old,) = [n for n in cache_info(tmp_path)["namespaces"] if n["dim"] == 1]
    assert describe_namespace(old) == "old-model query encode times (ms) on cpu, 4 thread(s)"
    info = json.loads(_cli("info", "--dir", str(tmp_path), "--json").stdout)
    assert info["timings"] == 2
    res = _cli("clear", "--dir", str(tmp_path), "--timings")
    assert res.returncode == 0 and "query encode times of 2 embedder(s)" in res.stdout
    assert json.loads(_cli("info", "--dir", str(tmp_path), "--json").stdout)["timings"] == 0
    assert EmbeddingCache(tmp_path, "vectors").get_many(["kept"])[1].all()  # vectors stay
    encoded = []
    _, measured = CachedEncodeTimes(tmp_path, ns, "my-model").get_or_measure(["q"], encoded.append)
    assert measured == 1  # measured again


# -- a cache that cannot be written: read, not written, said once ------------------------------
# Real filesystems (tests/mounts.py): a tmpfs that fills up, a read-only bind mount. (Imported
# in the tests: the killed writer above imports this module with only tests/embedding/ on
# its path.)


def _warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def test_a_full_cache_warns_once_naming_its_folder_and_keeps_the_vectors(tmp_path, caplog):
    # Issue 41 (8): a full cache failed the job with "No space left on device" and no path.
    from mounts import tmpfs

    texts = [f"text {i}" for i in range(400)]  # 400 x 256 floats: far more than the disk holds
    with tmpfs(tmp_path / "cache", "64k") as root:
        cache = EmbeddingCache(root, "ns", dim=256)
        with caplog.at_level(logging.WARNING):
            assert cache.put_many(texts, vectors_for(texts, 256)) == 0
            assert cache.put_many(["one more"], vectors_for(["one more"], 256)) == 0
        (warning,) = _warnings(caplog)
        assert warning.startswith(f"embedding cache: cannot write {root} (No space left on device)")
        got, found = cache.get_many(texts + ["one more"])  # kept in memory: the job goes on
        assert found.all() and got.tobytes() == vectors_for(texts + ["one more"], 256).tobytes()
        # Nothing half written holds the space: no shard without keys, no temporary.
        left = sorted(p.name for p in cache.dir.iterdir()) if cache.dir.exists() else []
        assert not [n for n in left if n.endswith(".npy") or n.startswith(".tmp")], left
        assert not EmbeddingCache(root, "ns", dim=256).get_many(texts)[1].any()


def test_a_read_only_cache_is_read_and_never_written(tmp_path, caplog):
    # Issue 41 (11): a read-only cache must serve what it holds and fail nothing.
    from mounts import read_only

    root = tmp_path / "cache"
    EmbeddingCache(root, "ns").put_many(["kept"], vectors_for(["kept"]))
    before = sorted(p.name for p in EmbeddingCache(root, "ns").dir.iterdir())
    with read_only(root), caplog.at_level(logging.WARNING):
        cache = EmbeddingCache(root, "ns")
        got, found = cache.get_many(["kept"])
        assert found.all() and np.array_equal(got[0], vector_for("kept"))
        assert cache.put_many(["new"], vectors_for(["new"])) == 0
        assert cache.get_many(["new"])[1].all()  # in memory
        EmbeddingCache(root, "another namespace").put_many(["x"], vectors_for(["x"]))
    (warning,) = _warnings(caplog)
    assert warning.startswith(
        f"embedding cache: cannot write {root} (Read-only file system); it is read, not written"
    )
    assert sorted(p.name for p in cache.dir.iterdir()) == before


def test_query_encode_times_of_a_warm_read_only_cache_are_read_without_the_lock(tmp_path, caplog):
    # Issue 41 (11): every job failed on .encode-times.lock although every time was cached.
    from mounts import read_only
    from sweep.embedding.encode_times import LOCK_NAME, CachedEncodeTimes, timing_namespace

    root = tmp_path / "cache"
    queries = ["what is late chunking?", "how big is a chunk?"]
    ns = timing_namespace('{"model": "m"}', "cpu", 1)

    def encode(text: str) -> bytes:  # what is timed: any work per query will do
        return hashlib.sha256(text.encode()).digest()

    first, measured = CachedEncodeTimes(root, ns, "m").get_or_measure(queries, encode)
    assert measured == 2
    first = first.ms.astype(np.float32)
    (root / LOCK_NAME).unlink()  # a cache copied without it, or shared read-only as it came
    with read_only(root), caplog.at_level(logging.WARNING):
        times, measured = CachedEncodeTimes(root, ns, "m").get_or_measure(queries, encode)
        times = times.ms
        assert measured == 0 and times.astype(np.float32).tolist() == first.tolist()
        # A new query is timed now and kept in memory; the warning is the cache's one line.
        times, measured = CachedEncodeTimes(root, ns, "m").get_or_measure(
            queries + ["a new question"], encode
        )
        times = times.ms
        assert measured == 1 and times[:2].astype(np.float32).tolist() == first.tolist()
        assert times[2] > 0
    (warning,) = _warnings(caplog)
    assert f"embedding cache: cannot write {root} (Read-only file system)" in warning
    assert not (root / LOCK_NAME).exists()
