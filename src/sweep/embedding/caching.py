"""Vectors through the embedding cache: each distinct key looked up once, the misses
computed by whoever embeds them and stored as they come, so a killed job keeps what it
has embedded so far. ``SentenceTransformerEmbedder`` and its late chunker go through
:func:`through_cache`; ``sweep.embedding.cached.CachedEmbedder`` puts any embedder
behind the cache.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, fields

import numpy as np

from sweep.core import progress
from sweep.embedding.cache import EmbeddingCache
from sweep.embedding.errors import EmbedderError

__all__ = [
    "STORE_EVERY_BATCHES",
    "CacheCount",
    "CacheRun",
    "Compute",
    "compute_misses",
    "count_run",
    "embed_misses",
    "keep",
    "through_cache",
]

log = logging.getLogger(__name__)

#: Misses are embedded and stored in groups of this many batches, so a killed job keeps
#: what it has embedded so far.
STORE_EVERY_BATCHES = 16

#: ``compute(misses, first, out, cache)``: write the vectors of the distinct keys
#: ``misses`` into ``out`` (``first[u]``: the first input with distinct key ``u``); its
#: model and cache-store seconds.
Compute = Callable[[list[int], list[int], np.ndarray, "EmbeddingCache | None"], tuple[float, float]]


@dataclass(frozen=True, slots=True)
class CacheCount:
    """What the cache holds of some texts, counted without loading the model."""

    #: Distinct model inputs (two texts the model truncates alike are one).
    distinct: int
    cached: int
    #: Model tokens of the inputs not cached (None: no tokenizer file to count them with).
    missing_tokens: int | None

    @property
    def missing(self) -> int:
        return self.distinct - self.cached


@dataclass(frozen=True, slots=True)
class EmbedStats:
    """Counts since the last ``reset_stats()``; unique strings unless said otherwise.

    With the cache disabled every unique string counts as a miss.
    """

    requested: int = 0  # strings asked for, duplicates included
    unique: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    embedded: int = 0  # strings actually run through the model
    seconds: float = 0.0  # model time (encode calls)
    cache_seconds: float = 0.0  # cache lookups and writes
    load_seconds: float = 0.0  # importing and loading the model, when this embedder did it


def bump(stats: EmbedStats, **add: float) -> EmbedStats:
    """``stats`` with ``add`` added to its counts."""
    values = {f.name: getattr(stats, f.name) + add.get(f.name, 0) for f in fields(EmbedStats)}
    return EmbedStats(**values)


@dataclass(frozen=True, slots=True)
class CacheRun:
    """What one pass through the cache gave and did."""

    vectors: np.ndarray  # float32 (len(keys), dim), rows aligned with the keys
    unique: int
    hits: int
    misses: int
    model_seconds: float
    cache_seconds: float


def through_cache(
    keys: list[str],
    cache: EmbeddingCache | None,
    dim: Callable[[], int],
    announce: Callable[[int, int, int], None],
    compute: Compute,
) -> CacheRun:
    """Vectors for ``keys``, rows aligned: each distinct key looked up in ``cache`` once,
    the others computed into ``out`` by ``compute``; ``announce(distinct, cached, to
    compute)`` logs; ``dim()`` is the model's width (asked only when something is computed
    or nothing is asked for)."""
    position: dict[str, int] = {}
    inverse = np.fromiter(
        (position.setdefault(k, len(position)) for k in keys), dtype=np.int64, count=len(keys)
    )
    unique = list(position)
    first = np.unique(inverse, return_index=True)[1].tolist()
    start = time.perf_counter()
    if cache is not None:
        vectors, found = cache.get_many(unique)
    else:
        vectors, found = np.zeros((len(unique), 0), np.float32), np.zeros(len(unique), bool)
    cache_seconds = time.perf_counter() - start
    misses = np.flatnonzero(~found).tolist()
    hits = len(unique) - len(misses)
    announce(len(unique), hits, len(misses))
    model_seconds = 0.0
    if misses:
        out = np.empty((len(unique), dim()), dtype=np.float32)
        if hits:
            if vectors.shape[1] != out.shape[1]:
                raise EmbedderError(
                    f"embedding cache holds dim {vectors.shape[1]} vectors, "
                    f"the model gives {out.shape[1]}"
                )
            out[found] = vectors[found]
        model_seconds, store_seconds = compute(misses, first, out, cache)
        cache_seconds += store_seconds
    elif unique:
        out = vectors
    else:
        out = np.zeros((0, dim()), dtype=np.float32)
    return CacheRun(
        np.ascontiguousarray(out[inverse], dtype=np.float32),
        len(unique),
        hits,
        len(misses),
        model_seconds,
        cache_seconds,
    )


def count_run(stats: EmbedStats, requested: int, run: CacheRun, cached: bool) -> EmbedStats:
    """``stats`` with one pass through the cache added: ``requested`` strings asked for,
    ``run`` what the pass did (no hits counted when ``cached`` is False: there was no cache)."""
    return bump(
        stats,
        requested=requested,
        unique=run.unique,
        cache_hits=run.hits if cached else 0,
        cache_misses=run.misses,
        embedded=run.misses,
        seconds=run.model_seconds,
        cache_seconds=run.cache_seconds,
    )


def keep(cache: EmbeddingCache, keys: list[str], vecs: np.ndarray, what: str) -> float:
    """Cache the finite ones of ``vecs`` (a NaN must be computed again, not served);
    the seconds it took."""
    start = time.perf_counter()
    ok = np.isfinite(vecs).all(axis=1)
    if not ok.all():
        log.warning("%d %s to non-finite vectors; not cached", int((~ok).sum()), what)
    cache.put_many([k for k, good in zip(keys, ok) if good], vecs[ok])
    return time.perf_counter() - start


def embed_misses(
    strings: list[str],
    keys: list[str],
    where: np.ndarray,
    out: np.ndarray,
    cache: EmbeddingCache | None,
    encode: Callable[[list[str]], np.ndarray],
    batch_size: int,
    show_progress: bool,
) -> tuple[float, float]:
    """Embed ``strings`` with ``encode`` (one batch per call) into ``out[where]``, storing
    each group of :data:`STORE_EVERY_BATCHES` batches under ``keys`` as it is done; the
    model and cache-store seconds."""
    # Longest first: similar lengths share a batch, so padding is small, and
    # the progress bar's rate estimate starts pessimistic rather than rosy.
    order = sorted(range(len(strings)), key=lambda i: -len(strings[i]))
    group = batch_size * STORE_EVERY_BATCHES
    model_seconds = store_seconds = 0.0
    with progress.bar(len(strings), "embedding", "text", show=show_progress) as bar:
        for lo in range(0, len(order), group):
            idx = order[lo : lo + group]
            chunk = [strings[i] for i in idx]
            start = time.perf_counter()
            parts = []
            # One batch per call, so the bar moves as each batch is done, not
            # once per stored group (which on a small corpus is the whole job).
            for b in range(0, len(chunk), batch_size):
                parts.append(np.asarray(encode(chunk[b : b + batch_size]), dtype=np.float32))
                bar.update(len(parts[-1]))
            model_seconds += time.perf_counter() - start
            vecs = np.concatenate(parts)
            out[where[idx]] = vecs
            if cache is not None:
                store_seconds += keep(cache, [keys[i] for i in idx], vecs, "texts embedded")
    return model_seconds, store_seconds


def compute_misses(
    strings: list[str],
    keys: list[str],
    load: Callable[[], None],
    encode: Callable[[list[str]], np.ndarray],
    batch_size: int,
    show_progress: bool,
    record: Callable[[list[str], float], None],
) -> Compute:
    """The :data:`Compute` of :func:`through_cache` for ``strings`` cached under ``keys``
    (aligned): the model loaded by ``load``, the missing strings embedded by
    :func:`embed_misses`, then ``record(those strings, model seconds)``."""

    def compute(
        misses: list[int], first: list[int], out: np.ndarray, cache: EmbeddingCache | None
    ) -> tuple[float, float]:
        todo = [strings[first[u]] for u in misses]
        load()  # before the bar and the clock: loading is not model time
        model_s, store_s = embed_misses(
            todo,
            [keys[first[u]] for u in misses],
            np.asarray(misses, dtype=np.int64),
            out,
            cache,
            encode,
            batch_size,
            show_progress,
        )
        record(todo, model_s)
        return model_s, store_s

    return compute
