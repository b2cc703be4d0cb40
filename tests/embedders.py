"""Embedders of a user's own, plugged into a sweep with ``embed._target_``.

Both embed a bag of hashed words (texts sharing words get similar vectors), so a sweep
with them needs no model. They receive every key of the ``embed`` node (model, device,
backend...) plus ``cache_dir`` and ``show_progress``, and ignore them.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np


def _hashed(texts, dim: int = 64) -> np.ndarray:
    v = np.zeros((len(texts), dim), dtype=np.float32)
    for i, t in enumerate(texts):
        for w in t.lower().split():
            v[i, zlib.crc32(w.strip(".,?!").encode()) % dim] += 1.0
    return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-9)


class ThreeMembers:
    """The least an embedder provides: documents, queries, an identity."""

    identity = "hashed-words-64"

    def __init__(self, **settings: object) -> None:
        pass

    def embed_documents(self, texts):
        return _hashed(texts)

    def embed_queries(self, texts):
        return _hashed(texts)


@dataclass
class _Stats:
    embedded: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    seconds: float = 0.0
    load_seconds: float = 0.0


class SevenMembers:
    """An embedder written to the seven members sweep's protocol asked for before three
    sufficed (no identity): it is still told what it embeds and asked for its stats."""

    max_seq_length = 8

    def __init__(self, **settings: object) -> None:
        self.stats = _Stats()
        self.whats: list[str] = []

    def reset_stats(self) -> None:
        self.stats = _Stats()

    def count_model_tokens(self, texts):
        return np.array([len(t.split()) for t in texts])

    def embed_documents(self, texts, what="texts"):
        if what != "chunks":
            raise AssertionError(f"told it embeds {what!r}, not chunks")
        self.stats = _Stats(embedded=self.stats.embedded + len(texts))
        return _hashed(texts)

    def embed_queries(self, texts):
        return _hashed(texts)

    def encode_query(self, text):
        return _hashed([text])
