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
p95 over the sample, and when and under what load they were measured (the oldest and
busiest of the two parts, :class:`sweep.core.timing.Conditions`). A kept encode time
measured under load is measured again once the machine is idle; ``runtime.retime=true``
measures them all again, once per sweep (the sweep folder keeps them for its settings).
Re-ranking is not included: its cost is reported on its own (``rerank_s``), and its
pair-score cache would make a timing here meaningless.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np

from sweep.core.files import write_text_atomic
from sweep.core.folderlock import locked
from sweep.core.protocols import Embedder, Retriever, TimesQueries, encode_one_query, identity_of
from sweep.core.timing import (
    TIMING_LINE,
    Conditions,
    Timed,
    conditions_now,
    needs_retime,
    per_call_ms,
    timed_calls,
)

log = logging.getLogger(__name__)

__all__ = [
    "ENCODE_TIMES_LOCK",
    "ENCODE_TIMES_NAME",
    "EncodeTimes",
    "Latency",
    "encode_times",
    "encode_times_for",
    "latency_sample",
    "search_times",
]

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
    def of_ms(cls, ms: Sequence[float] | np.ndarray) -> Latency:
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


def encode_times(
    texts: Sequence[str],
    encode: Callable[[str], object],
    now: Callable[[], Conditions] = conditions_now,
) -> Timed:
    """Fresh-encode time (ms) of each text, one at a time, and the conditions then."""
    log.info(TIMING_LINE, len(texts))
    return timed_calls(list(texts), lambda i, text: encode(text), now)


def search_times(
    queries: Sequence[str], vectors: np.ndarray | None, retriever: Retriever, depth: int
) -> np.ndarray:
    """Search time (ms) of each query, one at a time, for the sweep's depth; ``vectors``
    are the queries' rows (None: a retriever without them)."""

    def once(i: int, text: object) -> object:
        vec = None if vectors is None else vectors[i : i + 1]
        return retriever.retrieve([text], vec, depth)

    return per_call_ms(list(queries), once)


def encode_times_for(
    embedder: Embedder, sweep_dir: Path, *, retime: bool | None = None
) -> Callable[[Sequence[str]], Timed] | None:
    """Where a sweep's settings get their encode times: the embedder's cache, else the
    sweep folder (the first setting to need them measures them); None for an embedder
    without an identity (each setting measures its own). ``retime`` (``runtime.retime``):
    true, the kept times are measured again, once for the whole sweep: the first setting
    measures them (into the embedder's cache too) and the sweep folder keeps them for
    the others; false, a kept time is never measured again; None (``auto``), as
    :func:`sweep.core.timing.needs_retime` says."""
    identity = identity_of(embedder)
    if not identity:
        return None
    store = EncodeTimes(sweep_dir)
    keeper = embedder if isinstance(embedder, TimesQueries) else None
    encode_one = partial(encode_one_query, embedder)

    def measure(texts: Sequence[str]) -> Timed:
        timed = keeper.query_encode_ms(texts, retime=True) if keeper is not None else None
        return timed if timed is not None else encode_times(texts, encode_one)

    def times(texts: Sequence[str]) -> Timed:
        if keeper is not None and not retime:
            timed = keeper.query_encode_ms(texts, retime=retime)
            if timed is not None:
                return timed
        # The sweep folder is new, so with retime true its entries are this sweep's own.
        return store.get_or_measure(
            identity, texts, measure, retime=False if retime is False else None
        )

    return times


class EncodeTimes:
    """The sweep folder's fresh-encode times, one entry per embedder identity.

    The first job (or the prewarm pass) to need an embedder's times measures them
    under a lock; the others wait and read them. An entry is reused only for the
    same queries (by text), so a changed dataset is measured again, and only while
    :func:`needs_retime` keeps it (measured under load, it is measured again when the
    machine is idle); ``now`` reads the machine's conditions.
    """

    def __init__(self, folder: Path, now: Callable[[], Conditions] = conditions_now) -> None:
        self.folder = Path(folder)
        self.path = self.folder / ENCODE_TIMES_NAME
        self._now = now

    def _read(self) -> dict:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            return {}
        return data if isinstance(data, dict) else {}

    def get_or_measure(
        self,
        identity: str,
        texts: Sequence[str],
        measure: Callable[[list[str]], Timed],
        *,
        retime: bool | None = None,
    ) -> Timed:
        texts = list(texts)
        if not texts:
            return Timed(np.zeros(0), Conditions())
        self.folder.mkdir(parents=True, exist_ok=True)
        with locked(self.folder, ENCODE_TIMES_LOCK):
            data = self._read()
            entry = data.get(identity)
            if isinstance(entry, dict) and entry.get("queries") == texts:
                ms = np.asarray(entry.get("ms", []), dtype=np.float64)
                kept = Conditions.from_dict(entry.get("conditions"))
                if (
                    ms.shape == (len(texts),)
                    and np.all(np.isfinite(ms))
                    and not needs_retime(kept, self._now(), retime)
                ):
                    return Timed(ms, kept)
            timed = measure(texts)
            log.info(
                "query encode, one at a time with a warm model, over %d queries: "
                "p50 %.1f ms, %s (shared by every setting with this embedder)",
                len(timed.ms),
                float(np.median(timed.ms)),
                timed.conditions.describe(),
            )
            data[identity] = {
                "queries": texts,
                "ms": [round(float(x), 4) for x in timed.ms],
                "conditions": timed.conditions.to_dict(),
            }
            write_text_atomic(self.path, json.dumps(data, ensure_ascii=False))
        return timed
