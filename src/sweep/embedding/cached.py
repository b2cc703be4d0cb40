"""Any embedder behind the embedding cache: :class:`CachedEmbedder`.

sweep's own embedder keeps its vectors in the cache itself (keyed by what the model
sees, so two texts it truncates alike are one); an embedder of your own, with only the
three members of :class:`sweep.core.protocols.Embedder`, gets the same from this
wrapper: its vectors kept under its identity and the exact text, so a rerun, or
another setting with the same embedder, embeds only texts it has not seen, and the
latency columns' query-encode times kept beside them.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence

import numpy as np

from sweep.core.protocols import Embedder, LabelledEmbedder, encode_one_query, identity_of
from sweep.core.timing import Timed
from sweep.embedding.cache import EmbeddingCache, resolve_cache_dir
from sweep.embedding.caching import EmbedStats, bump, keep
from sweep.embedding.encode_times import CachedEncodeTimes, timing_namespace
from sweep.embedding.errors import EmbedderError

__all__ = ["CachedEmbedder"]

log = logging.getLogger(__name__)

# Queries may be embedded unlike documents of the same text (an instruction, another
# tower); this prefix (no text starts with a NUL) keeps their keys apart.
_QUERY_KEY = "\0query:"


class CachedEmbedder:
    """``embedder`` with its vectors kept in the cache at ``cache_dir`` (None: the default
    folder; ``off``: none, and this wrapper only counts). ``device`` and ``threads`` name
    where the query-encode times were measured (they are kept per device and thread count).
    """

    def __init__(
        self,
        embedder: Embedder,
        cache_dir: str | None = None,
        device: str = "cpu",
        threads: int | None = None,
    ) -> None:
        identity = identity_of(embedder)
        if not identity:
            raise EmbedderError(
                f"{type(embedder).__name__} has no identity to keep its vectors "
                "under: give it an `identity` (the model and settings that "
                "determine its vectors, as one string)"
            )
        self.embedder = embedder
        self.device = device
        self.threads = threads
        self._identity = identity
        self._root = resolve_cache_dir(cache_dir)
        self._cache = (
            None
            if self._root is None
            else EmbeddingCache(
                self._root,
                json.dumps({"format": 1, "embedder": identity}, sort_keys=True),
                meta={"model": self.label},
            )
        )
        self._stats = EmbedStats()

    @property
    def identity(self) -> str:
        return self._identity

    @property
    def label(self) -> str:
        """The wrapped embedder's label, else its identity."""
        inner = self.embedder
        return (inner.label if isinstance(inner, LabelledEmbedder) else "") or self._identity

    @property
    def stats(self) -> EmbedStats:
        return self._stats

    def reset_stats(self) -> None:
        self._stats = EmbedStats()

    def embed_documents(self, texts: Sequence[str], what: str = "texts") -> np.ndarray:
        """float32 (len(texts), dim), rows aligned with ``texts``; the uncached ones from the
        wrapped embedder."""
        return self._embed(list(texts), "", what, self.embedder.embed_documents)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(list(texts), _QUERY_KEY, "queries", self.embedder.embed_queries)

    def encode_query(self, text: str) -> np.ndarray:
        """The wrapped embedder's fresh encode of one query, never the cache."""
        return encode_one_query(self.embedder, text)

    def query_encode_ms(self, texts: Sequence[str], *, retime: bool | None = None) -> Timed | None:
        """Fresh-encode times (ms) of ``texts``, kept in the cache; None when it is off."""
        if self._root is None:
            return None
        store = CachedEncodeTimes(
            self._root, timing_namespace(self._identity, self.device, self.threads), self.label
        )
        return store.get_or_measure(list(texts), self.encode_query, retime=retime)[0]

    def _embed(self, texts: list[str], role: str, what: str, embed) -> np.ndarray:
        keys = list(dict.fromkeys(role + t for t in texts))
        start = time.perf_counter()
        if self._cache is not None and keys:
            vectors, found = self._cache.get_many(keys)
        else:
            vectors, found = np.zeros((len(keys), 0), np.float32), np.zeros(len(keys), bool)
        misses = np.flatnonzero(~found).tolist()
        cache_seconds = time.perf_counter() - start
        log.info(
            "embedding %d %s (%d distinct): %d cached, %d to embed",
            len(texts),
            what,
            len(keys),
            len(keys) - len(misses),
            len(misses),
        )
        model_seconds = 0.0
        if misses:
            start = time.perf_counter()
            fresh = np.asarray(embed([keys[u][len(role) :] for u in misses]), dtype=np.float32)
            model_seconds = time.perf_counter() - start
            if len(misses) < len(keys):
                if vectors.shape[1] != fresh.shape[1]:
                    raise EmbedderError(
                        f"embedding cache holds dim {vectors.shape[1]} vectors, "
                        f"the embedder gives {fresh.shape[1]}"
                    )
            else:
                vectors = np.empty((len(keys), fresh.shape[1]), np.float32)
            vectors[misses] = fresh
            if self._cache is not None:
                cache_seconds += keep(self._cache, [keys[u] for u in misses], fresh, what)
        self._stats = bump(
            self._stats,
            requested=len(texts),
            unique=len(keys),
            cache_hits=len(keys) - len(misses) if self._cache is not None else 0,
            cache_misses=len(misses),
            embedded=len(misses),
            seconds=model_seconds,
            cache_seconds=cache_seconds,
        )
        row = {k: i for i, k in enumerate(keys)}
        return np.ascontiguousarray(vectors[[row[role + t] for t in texts]], dtype=np.float32)
