"""Retrieval latency per query, as a deployed retriever would see it.

A deployed retriever encodes each query as it arrives (no cache) and searches
the index for it, one query at a time. Both are timed on a fixed sample of the
questions (``eval.latency_queries``, spread evenly over the dataset so the sample
keeps its mix, and the same in every run), apart:

- **encode**: a fresh encode of each query with a warm model. It depends on the
  embedder and the query, never on the chunking, so it is measured once and shared
  by every setting and every later run: the embedder keeps it in the embedding cache
  (``sweep.embedding.encode_times``), so a warm rerun loads no model. With the cache
  off, the sweep folder keeps it for the sweep's own settings (:class:`EncodeTimes`).
- **search**: each setting's retriever searching its own index for each query,
  one at a time, with the query's (cached) vector. No model is needed.

A query's latency is its encode time plus its search time; the row reports p50 and
p95 over the sample. Re-ranking is not included: its cost is reported on its own
(``rerank_s``), and its pair-score cache would make a timing here meaningless.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from sweep.core.files import write_text_atomic
from sweep.core.folderlock import locked
from sweep.core.protocols import Retriever, TimesQueries, identity_of
from sweep.core.timing import TIMING_LINE, per_call_ms

log = logging.getLogger(__name__)

__all__ = ["ENCODE_TIMES_LOCK", "ENCODE_TIMES_NAME", "EncodeTimes", "Latency", "encode_times",
           "encode_times_for", "latency_sample", "search_times"]

#: In the sweep folder (cache off): per embedder, the fresh-encode time of each query (ms).
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


def latency_sample(n: int, limit: int) -> np.ndarray:
    """Indices of the ``limit`` queries (of ``n``) whose latency is timed: spread evenly,
    in order, all of them when there are fewer."""
    n, limit = max(0, int(n)), max(0, int(limit))
    if limit >= n:
        return np.arange(n)
    return (np.arange(limit) * n) // limit


def encode_times(texts: Sequence[str], encode: Callable[[str], object]) -> np.ndarray:
    """Fresh-encode time (ms) of each text, one at a time."""
    log.info(TIMING_LINE, len(texts))
    return per_call_ms(list(texts), lambda i, text: encode(text))


def search_times(queries: Sequence[str], vectors: np.ndarray | None, retriever: Retriever,
                 depth: int) -> np.ndarray:
    """Search time (ms) of each query, one at a time, for the sweep's depth; ``vectors``
    are the queries' rows (None: a retriever without them)."""

    def once(i: int, text: object) -> object:
        vec = None if vectors is None else vectors[i:i + 1]
        return retriever.retrieve([text], vec, depth)

    return per_call_ms(list(queries), once)


def encode_times_for(embedder: Any, sweep_dir: Path
                     ) -> Callable[[Sequence[str]], np.ndarray] | None:
    """Where a sweep's settings get their encode times: the embedder's cache, else the
    sweep folder (the first setting to need them measures them); None for an embedder
    without an identity (each setting measures its own)."""
    identity = identity_of(embedder)
    if not identity:
        return None
    store = EncodeTimes(sweep_dir)

    def times(texts: Sequence[str]) -> np.ndarray:
        if isinstance(embedder, TimesQueries):
            ms = embedder.query_encode_ms(texts)
            if ms is not None:
                return ms
        return store.get_or_measure(identity, texts, embedder.encode_query)

    return times


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

    def get_or_measure(self, identity: str, texts: Sequence[str],
                       encode: Callable[[str], object]) -> np.ndarray:
        texts = list(texts)
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
            ms = encode_times(texts, encode)
            log.info("query encode, one at a time with a warm model, over %d queries: "
                     "p50 %.1f ms (shared by every setting with this embedder)",
                     len(ms), float(np.median(ms)))
            data[identity] = {"queries": texts, "ms": [round(float(x), 4) for x in ms]}
            write_text_atomic(self.path, json.dumps(data, ensure_ascii=False))
        return ms
