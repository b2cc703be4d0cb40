"""Retrieval latency per query, as a deployed retriever would see it.

A deployed retriever encodes each query as it arrives (no cache) and searches
the index for it, one query at a time. The two parts are timed apart:

- **encode**: a fresh encode of each query with a warm model. It depends on the
  embedder and the query, never on the chunking, so it is measured once per
  sweep and embedder and shared by every setting (:class:`EncodeTimes`, a JSON
  file in the sweep folder): the model loads once for it, not once per job, and
  differences between rows are the settings' own.
- **search**: each setting's retriever searching its own index for each query,
  one at a time, with the query's (cached) vector. No model is needed.

A query's latency is its encode time plus its search time; the row reports
p50 and p95 over the first ``eval.latency_queries`` queries. Re-ranking is not
included: its cost is reported on its own (``rerank_s``), and its pair-score
cache would make a timing here meaningless.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from sweep.core.files import write_text_atomic
from sweep.core.folderlock import locked
from sweep.core.protocols import Retriever

log = logging.getLogger(__name__)

__all__ = ["ENCODE_TIMES_LOCK", "ENCODE_TIMES_NAME", "EncodeTimes", "Latency", "encode_times", "search_times"]

#: In the sweep folder: per embedder, the fresh-encode time of each query (ms).
ENCODE_TIMES_NAME = "query_encode_ms.json"
ENCODE_TIMES_LOCK = ".encode-times.lock"


@dataclass(frozen=True)
class Latency:
    """Milliseconds per query over ``n`` queries (NaN when none were timed)."""

    p50_ms: float
    p95_ms: float
    n: int

    @classmethod
    def of_ms(cls, ms: Sequence[float] | np.ndarray) -> "Latency":
        ms = np.asarray(ms, dtype=np.float64)
        if not ms.size:
            return cls(float("nan"), float("nan"), 0)
        return cls(float(np.percentile(ms, 50)), float(np.percentile(ms, 95)), int(ms.size))


def _timed(texts: Sequence[str], once: Callable[[int, str], object]) -> np.ndarray:
    """Milliseconds of ``once(i, text)`` per text, after one untimed warm-up call (it
    loads what is loaded lazily and lets the BLAS threads settle)."""
    if not texts:
        return np.zeros(0)
    once(0, texts[0])
    ms = np.empty(len(texts))
    for i, text in enumerate(texts):
        t0 = time.perf_counter()
        once(i, text)
        ms[i] = 1000.0 * (time.perf_counter() - t0)
    return ms


def encode_times(queries: Sequence[str], encode: Callable[[str], np.ndarray], *,
                 limit: int) -> np.ndarray:
    """Fresh-encode time (ms) of each of the first ``limit`` queries, one at a time."""
    return _timed(list(queries)[:max(0, int(limit))], lambda i, text: encode(text))


def search_times(queries: Sequence[str], vectors: np.ndarray | None, retriever: Retriever,
                 depth: int, *, limit: int) -> np.ndarray:
    """Search time (ms) of each of the first ``limit`` queries, one at a time, for the
    sweep's depth; ``vectors`` are the queries' rows (None: a retriever without them)."""
    texts = list(queries)[:max(0, int(limit))]

    def once(i: int, text: str) -> object:
        vec = None if vectors is None else vectors[i:i + 1]
        return retriever.retrieve([text], vec, depth)

    return _timed(texts, once)


class EncodeTimes:
    """The sweep folder's fresh-encode times, one entry per embedder identity.

    The first job (or the prewarm pass) to need an embedder's times measures them
    under a lock; the others wait and read them. An entry is reused only for the
    same queries (by text), so a changed dataset is measured again.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.path = self.folder / ENCODE_TIMES_NAME

    def _read(self) -> dict:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def get_or_measure(self, identity: str, queries: Sequence[str],
                       encode: Callable[[str], np.ndarray], *, limit: int) -> np.ndarray:
        texts = list(queries)[:max(0, int(limit))]
        if not texts:
            return np.zeros(0)
        self.folder.mkdir(parents=True, exist_ok=True)
        with locked(self.folder, ENCODE_TIMES_LOCK):
            data = self._read()
            entry = data.get(identity)
            if isinstance(entry, dict) and entry.get("queries") == texts:
                ms = np.asarray(entry.get("ms", []), dtype=np.float64)
                if ms.shape == (len(texts),) and np.all(np.isfinite(ms)):
                    return ms
            ms = encode_times(texts, encode, limit=len(texts))
            log.info("query encode, one at a time with a warm model, over %d queries: "
                     "p50 %.1f ms (shared by every setting with this embedder)",
                     len(ms), float(np.median(ms)))
            data[identity] = {"queries": texts, "ms": [round(float(x), 4) for x in ms]}
            write_text_atomic(self.path, json.dumps(data, ensure_ascii=False))
        return ms
