"""CachedEmbedder: any embedder with an identity behind the embedding cache."""

from __future__ import annotations

import numpy as np
import pytest

from sweep.core.protocols import Embedder, HasEmbedStats, TimesQueries
from sweep.embedding.cached import CachedEmbedder
from sweep.embedding.errors import EmbedderError


class Counting:
    """Three members; documents and queries embedded differently; counts what it embeds."""

    def __init__(self, identity: str = "counting-v1") -> None:
        self.identity = identity
        self.seen: list[str] = []

    def _vec(self, texts, sign):
        self.seen.extend(texts)
        return np.array([[len(t), sign, 1.0] for t in texts], dtype=np.float32)

    def embed_documents(self, texts):
        return self._vec(texts, 1.0)

    def embed_queries(self, texts):
        return self._vec(texts, -1.0)


def test_only_texts_not_seen_before_reach_the_embedder(tmp_path):
    inner = Counting()
    cached = CachedEmbedder(inner, cache_dir=str(tmp_path))
    assert isinstance(cached, Embedder) and isinstance(cached, HasEmbedStats)
    first = cached.embed_documents(["a", "bb", "a"])
    assert inner.seen == ["a", "bb"] and first.shape == (3, 3)
    assert cached.stats.embedded == 2 and cached.stats.unique == 2
    again = CachedEmbedder(Counting(), cache_dir=str(tmp_path))
    np.testing.assert_array_equal(
        again.embed_documents(["bb", "a", "ccc"]),
        np.array([[2, 1, 1], [1, 1, 1], [3, 1, 1]], np.float32),
    )
    assert again.embedder.seen == ["ccc"] and again.stats.cache_hits == 2


def test_queries_are_kept_apart_from_documents_of_the_same_text(tmp_path):
    cached = CachedEmbedder(Counting(), cache_dir=str(tmp_path))
    cached.embed_documents(["same"])
    assert cached.embed_queries(["same"])[0, 1] == -1.0
    assert cached.embedder.seen == ["same", "same"]


def test_another_identity_is_another_cache(tmp_path):
    CachedEmbedder(Counting("v1"), cache_dir=str(tmp_path)).embed_documents(["x"])
    other = CachedEmbedder(Counting("v2"), cache_dir=str(tmp_path))
    other.embed_documents(["x"])
    assert other.embedder.seen == ["x"]


def test_query_encode_times_are_kept_and_never_read_from_the_vectors(tmp_path):
    cached = CachedEmbedder(Counting(), cache_dir=str(tmp_path))
    assert isinstance(cached, TimesQueries)
    timed = cached.query_encode_ms(["q1", "q2"])
    assert timed is not None and len(timed.ms) == 2
    seen = list(cached.embedder.seen)
    assert cached.query_encode_ms(["q1", "q2"]).ms.tolist() == timed.ms.tolist()
    assert cached.embedder.seen == seen  # kept: not encoded again
    assert CachedEmbedder(Counting(), cache_dir="off").query_encode_ms(["q"]) is None


def test_an_embedder_without_identity_is_refused_in_one_line():
    class Anonymous:
        def embed_documents(self, texts):
            return np.zeros((len(texts), 2))

        def embed_queries(self, texts):
            return np.zeros((len(texts), 2))

    with pytest.raises(EmbedderError, match="Anonymous has no identity"):
        CachedEmbedder(Anonymous(), cache_dir="off")
