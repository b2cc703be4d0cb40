"""Fresh query-encode times, kept in the embedding cache like the vectors.

The latency columns need what a deployed retriever pays per query: one fresh encode
with a warm model. That time depends on the embedder and the query, not on the
chunking, so it is measured once and stored beside the embeddings, under a namespace
of everything it depends on: the embedder's identity (model weights, backend,
``max_seq_length``, normalization, prefixes), the device, the CPU thread count
(``embed.threads``, else every core) and the processor. A rerun reads the times
instead of loading the model to measure them again; a new query, another thread
count or another machine is measured anew.
"""

from __future__ import annotations

import json
import logging
import os
import platform
from contextlib import ExitStack
from functools import lru_cache
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from sweep.core import cachedirs
from sweep.core.folderlock import locked
from sweep.core.timing import TIMING_LINE, per_call_ms
from sweep.embedding.cache import ENCODE_TIMES_KIND, EmbeddingCache

__all__ = ["ENCODE_TIMES_KIND", "LOCK_NAME", "CachedEncodeTimes", "cpu_name", "timing_namespace"]

#: In the cache folder: one measurer at a time, so parallel jobs neither time the same
#: queries twice nor slow each other's timings down.
LOCK_NAME = ".encode-times.lock"

log = logging.getLogger(__name__)


@lru_cache(maxsize=1)
def cpu_name() -> str:
    """The processor's model name (``/proc/cpuinfo`` on Linux), else what Python knows."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def timing_namespace(identity: str, device: str, threads: int | None) -> str:
    """The cache namespace of one embedder's encode times on this machine."""
    # ``embed.threads``, else every core: what a deployed retriever would use. A parallel
    # launch's share per job (sweep.jobs.devices) is not the deployment's, and its prewarm
    # pass times the queries with every core before the jobs start.
    return json.dumps({"format": 1, "kind": ENCODE_TIMES_KIND, "embedder": identity,
                       "device": device, "threads": threads or os.cpu_count(),
                       "cpu": f"{cpu_name()} x{os.cpu_count()}"}, sort_keys=True)


class CachedEncodeTimes:
    """One embedder's fresh-encode time per query text (ms), in the cache at ``root``."""

    def __init__(self, root: Path, namespace: str, label: str) -> None:
        self.root = Path(root)
        self._cache = EmbeddingCache(self.root, namespace, dim=1,
                                     meta={"model": label, "kind": ENCODE_TIMES_KIND})

    def get_or_measure(self, texts: Sequence[str], encode: Callable[[str], object]
                       ) -> tuple[np.ndarray, int]:
        """(ms per text, how many were measured now): cached times are read, the others
        timed one at a time with ``encode`` and stored."""
        texts = list(texts)
        if not texts:
            return np.zeros(0), 0
        stored, found = self._cache.get_many(texts)
        if found.all():  # a warm cache is only read: no lock, so a read-only one serves too
            return stored[:, 0].astype(np.float64), 0
        with self._measuring():
            stored, found = self._cache.get_many(texts)  # timed meanwhile by another job?
            ms = stored[:, 0].astype(np.float64) if stored.shape[1] else np.full(len(texts), np.nan)
            todo = np.flatnonzero(~found)
            if todo.size:
                log.info(TIMING_LINE, todo.size)
                fresh = per_call_ms([texts[i] for i in todo], lambda i, text: encode(text))
                ms[todo] = fresh
                self._cache.put_many([texts[i] for i in todo], fresh.reshape(-1, 1))
        return ms, int(todo.size)

    def _measuring(self) -> ExitStack:
        """The measurers' lock in the cache folder; none in a cache that cannot be written
        (said once): its times are measured here and kept in memory, as its vectors are."""
        stack = ExitStack()
        if cachedirs.read_only(self.root):
            return stack
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            stack.enter_context(locked(self.root, LOCK_NAME))
        except OSError as e:
            cachedirs.note_unwritable("embedding", self.root, e)
        return stack
