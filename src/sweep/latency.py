"""Retrieval latency per query, as a deployed retriever would see it.

One query at a time: a fresh encode of the query (never the embedding cache,
which made the sweep's own query vectors free) and the retriever's search for
the sweep's depth. The model is warmed first, so the first query does not pay
for loading it. Re-ranking is not included: its cost is reported on its own
(``rerank_s``, ``rerank_candidates``) and its pair-score cache would make a
timing here meaningless.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from sweep.stages import Retriever

log = logging.getLogger(__name__)

__all__ = ["Latency", "measure_latency"]


@dataclass(frozen=True)
class Latency:
    """Milliseconds per query over ``n`` queries (NaN when none were timed)."""

    p50_ms: float
    p95_ms: float
    n: int

    @classmethod
    def of(cls, seconds: Sequence[float]) -> "Latency":
        if not len(seconds):
            return cls(float("nan"), float("nan"), 0)
        ms = 1000.0 * np.asarray(seconds, dtype=np.float64)
        return cls(float(np.percentile(ms, 50)), float(np.percentile(ms, 95)), len(ms))


def measure_latency(queries: Sequence[str], retriever: Retriever, depth: int,
                    encode: Callable[[str], np.ndarray] | None, *, limit: int) -> Latency:
    """Time ``encode`` (None: a retriever that needs no vectors) plus ``retriever.retrieve``
    for each of the first ``limit`` queries, one at a time."""
    texts = list(queries)[:max(0, int(limit))]
    if not texts:
        return Latency.of([])
    # Warm-up, untimed: loads the model, and lets the index and the BLAS threads settle.
    vec = encode(texts[0]) if encode is not None else None
    retriever.retrieve(texts[:1], vec, depth)
    seconds = []
    for text in texts:
        t0 = time.perf_counter()
        vec = encode(text) if encode is not None else None
        retriever.retrieve([text], vec, depth)
        seconds.append(time.perf_counter() - t0)
    out = Latency.of(seconds)
    log.info("retrieval latency over %d queries, one at a time: p50 %.1f ms, p95 %.1f ms",
             out.n, out.p50_ms, out.p95_ms)
    return out
