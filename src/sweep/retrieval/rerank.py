"""Re-ranking: a cross-encoder re-orders each query's first-stage top N.

The model reads (query, chunk) pairs, so it costs far more per chunk than the
first stage; its scores are cached on disk like embeddings (the same
content-addressed cache, a one-number "vector" per pair, keyed by the model's
weights fingerprint, ``max_length`` and the pair's text), so a rerun or a
setting that retrieves the same chunks scores nothing twice, and a fully cached
run never loads the model.

The re-ranked head's scores are the cross-encoder's; ranks past ``top_n`` keep
their first-stage order with a NaN score (not scored by the re-ranker).
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from sweep.core.checks import positive_int
from sweep.core.errors import BadInput
from sweep.core.types import Chunk, Ranking
from sweep.embedding.cache import EmbeddingCache, resolve_cache_dir
from sweep.embedding.models import DEVICE_PATTERN, model_fingerprint

__all__ = [
    "CrossEncoderReranker",
    "RerankStats",
    "RerankerError",
    "no_reranker",
    "resolve_reranker",
]

log = logging.getLogger(__name__)

_MODELS: dict[tuple[str, str, int | None], Any] = {}
_LOCK = threading.RLock()


class RerankerError(ValueError, BadInput):
    """One line naming the ``rerank.*`` key or the model and the problem."""


@dataclass(frozen=True)
class RerankStats:
    computed: int = 0  # pairs run through the model
    cache_hits: int = 0  # pairs whose score came from the cache
    seconds: float = 0.0  # model time, loading included


def resolve_reranker(name: str) -> Path:
    """A local model folder: ``name`` itself, or its snapshot in the Hugging Face cache.

    Nothing is downloaded at run time: a model that is not on disk is an error
    that says how to get it.
    """
    if not isinstance(name, str) or not name.strip():
        raise RerankerError("rerank.model is empty: give a cross-encoder folder or Hub id")
    name = name.strip()
    path = Path(os.path.expanduser(name))
    if path.exists():
        if not path.is_dir() or not (path / "config.json").is_file():
            raise RerankerError(f"rerank.model={name}: not a model folder (no config.json in it)")
        return path
    if name.count("/") == 1 and not name.startswith((".", "/", "~")):
        try:
            from huggingface_hub import snapshot_download

            return Path(snapshot_download(name, local_files_only=True))
        except Exception:  # not cached (or no huggingface_hub): say how to get it
            pass
    raise RerankerError(
        f"rerank.model={name}: no such folder and not in the local Hugging Face "
        f"cache; get it with `huggingface-cli download {name}` and set "
        f"rerank.model=<the folder it prints>"
    )


def _load(path: Path, device: str, max_length: int | None) -> Any:
    key = (str(path), device, max_length)
    with _LOCK:
        model = _MODELS.get(key)
        if model is None:
            from sentence_transformers import CrossEncoder

            from sweep.embedding.torch_backend import quiet_transformers

            with quiet_transformers():
                try:
                    model = CrossEncoder(
                        str(path), device=device, max_length=max_length, local_files_only=True
                    )
                except Exception as exc:
                    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
                    raise RerankerError(f"cannot load re-ranking model {path}: {first}") from None
            _MODELS[key] = model
        return model


def no_reranker() -> None:
    """``rerank=none``: no re-ranker; the retriever's ranking is scored as it is. It takes
    no settings (a key of ``cross_encoder`` set for both arms of a sweep is refused
    before the sweep starts: sweep.hydrakit.overrides)."""
    return None


class CrossEncoderReranker:
    """A sentence-transformers ``CrossEncoder`` that re-orders the first ``top_n`` chunks.

    ``model``: a local folder or a Hub id already in the Hugging Face cache.
    ``cache_dir``: where pair scores are cached (null: the embedding cache's default
    folder; ``off`` disables).
    """

    def __init__(
        self,
        model: str,
        top_n: int = 20,
        batch_size: int = 32,
        max_length: int | None = None,
        device: str = "cpu",
        cache_dir: str | None = None,
        show_progress: bool = True,
    ) -> None:
        self.top_n = positive_int("rerank.top_n", top_n, error=RerankerError)
        self.batch_size = positive_int("rerank.batch_size", batch_size, error=RerankerError)
        self.max_length = positive_int(
            "rerank.max_length", max_length, error=RerankerError, allow_null=True
        )
        if not isinstance(device, str) or not DEVICE_PATTERN.fullmatch(device):
            raise RerankerError(
                f"rerank.device must be a torch device name like cpu or cuda, got {device!r}"
            )
        self.device = device
        self.model_name = str(model)
        self.path = resolve_reranker(self.model_name)
        self.show_progress = show_progress
        try:
            self.fingerprint = model_fingerprint(self.path)
        except OSError as exc:
            raise RerankerError(f"rerank.model={model}: {exc}") from None
        self._cache_root = resolve_cache_dir(cache_dir)
        self._cache: EmbeddingCache | None = None
        self._stats = RerankStats()

    @property
    def stats(self) -> RerankStats:
        return self._stats

    def reset_stats(self) -> None:
        self._stats = RerankStats()

    @property
    def cache_namespace(self) -> str:
        return json.dumps(
            {
                "kind": "cross-encoder",
                "format": 1,
                "weights": self.fingerprint,
                "max_length": self.max_length,
            },
            sort_keys=True,
        )

    def _get_cache(self) -> EmbeddingCache | None:
        if self._cache is None and self._cache_root is not None:
            self._cache = EmbeddingCache(
                self._cache_root,
                self.cache_namespace,
                dim=1,
                meta={"model": f"cross-encoder {self.path.name}"},
            )
        return self._cache

    def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """float32 score of each ``(query, passage)`` pair, higher is more relevant."""
        keys = [json.dumps(p, ensure_ascii=False) for p in pairs]
        unique = list(dict.fromkeys(keys))
        where = {k: i for i, k in enumerate(unique)}
        cache = self._get_cache()
        if cache is not None and unique:
            found_vecs, found = cache.get_many(unique)
            values = np.where(found, found_vecs[:, 0] if found_vecs.shape[1] else np.nan, np.nan)
        else:
            values, found = np.full(len(unique), np.nan), np.zeros(len(unique), dtype=bool)
        misses = np.flatnonzero(~found)
        seconds = 0.0
        if len(misses):
            start = time.perf_counter()
            model = _load(self.path, self.device, self.max_length)
            todo = [json.loads(unique[i]) for i in misses]
            try:
                computed = model.predict(
                    [tuple(p) for p in todo],
                    batch_size=self.batch_size,
                    show_progress_bar=self.show_progress and len(todo) > 256,
                    convert_to_numpy=True,
                )
            except Exception as exc:
                first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
                raise RerankerError(f"re-ranking with {self.model_name} failed: {first}") from None
            computed = np.asarray(computed, dtype=np.float32).reshape(len(todo), -1)
            if computed.shape[1] != 1:
                raise RerankerError(
                    f"rerank.model={self.model_name} gives {computed.shape[1]} "
                    "scores per pair; a re-ranker must give one (num_labels=1)"
                )
            seconds = time.perf_counter() - start
            values[misses] = computed[:, 0]
            ok = np.isfinite(computed[:, 0])
            if cache is not None and ok.any():
                cache.put_many([unique[i] for i, good in zip(misses, ok) if good], computed[ok])
        self._stats = replace(
            self._stats,
            computed=self._stats.computed + len(misses),
            cache_hits=self._stats.cache_hits + len(unique) - len(misses),
            seconds=self._stats.seconds + seconds,
        )
        log.info(
            "re-ranking %d pairs: %d cached, %d scored",
            len(unique),
            len(unique) - len(misses),
            len(misses),
        )
        return np.asarray([values[where[k]] for k in keys], dtype=np.float32)

    def rerank(
        self, queries: Sequence[str], chunks: Sequence[Chunk], ranking: Ranking, top_n: int
    ) -> Ranking:
        """Each query's first ``top_n`` chunks ordered by cross-encoder score, ties by
        first-stage rank; later ranks unchanged, their scores NaN."""
        if len(queries) != len(ranking.ids):
            raise ValueError(f"{len(queries)} queries but {len(ranking.ids)} ranking rows")
        n = min(int(top_n), ranking.ids.shape[1])
        heads = [ranking.ids[i, :n][ranking.ids[i, :n] >= 0] for i in range(len(queries))]
        pairs = [(q, chunks[c].embedding_input) for q, head in zip(queries, heads) for c in head]
        scores = self.score_pairs(pairs)
        ids = ranking.ids.copy()
        out = np.full(ranking.scores.shape, np.nan, dtype=np.float32)
        at = 0
        for i, head in enumerate(heads):
            s = scores[at : at + len(head)]
            at += len(head)
            order = np.lexsort((np.arange(len(head)), -s.astype(np.float64)))
            ids[i, : len(head)] = head[order]
            out[i, : len(head)] = s[order]
        return Ranking(ids, out)
