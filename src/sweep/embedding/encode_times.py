"""Fresh query-encode times, kept in the embedding cache's folder like the vectors.

The latency columns need what a deployed retriever pays per query: one fresh encode
with a warm model. That time depends on the embedder and the query, not on the
chunking, so it is measured once and kept under a namespace of everything it depends
on: the embedder's identity (model weights, backend, ``max_seq_length``, normalization,
prefixes), the device, the CPU thread count (``embed.threads``, else every core) and
the processor. A rerun reads the times instead of loading the model to measure them
again; a new query, another thread count or another machine is measured anew.

Each time is kept with when it was measured and the machine's load then
(:class:`sweep.core.timing.Conditions`), in ``timings/<namespace id>.json``: a time
measured under load is measured again once the machine is idle, and every one is
measured again with ``runtime.retime=true`` or after ``sweep.cache clear --timings``
(``runtime.retime=false``: never measured again, for reruns that must load no model).
Times kept before the conditions were recorded (one-column entries of the embedding
cache) are still read, as measured at an unknown time.
"""

from __future__ import annotations

import json
import logging
import math
import os
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from pathlib import Path

import numpy as np

from sweep.core import cachedirs
from sweep.core.cpu import cpu_name
from sweep.core.files import write_text_atomic
from sweep.core.folderlock import locked
from sweep.core.timing import (
    TIMING_LINE,
    Conditions,
    Timed,
    conditions_now,
    needs_retime,
    timed_calls,
)
from sweep.embedding.cache import (
    ENCODE_TIMES_KIND,
    FORMAT_DIR,
    EmbeddingCache,
    cache_info,
    cache_key,
    clear_cache,
    namespace_dirname,
)

__all__ = [
    "ENCODE_TIMES_KIND",
    "LOCK_NAME",
    "TIMINGS_DIR",
    "CachedEncodeTimes",
    "clear_timings",
    "count_timings",
    "timing_namespace",
]

#: In the cache folder: the kept times, one JSON file per namespace.
TIMINGS_DIR = "timings"

#: In the cache folder: one measurer at a time, so parallel jobs neither time the same
#: queries twice nor slow each other's timings down.
LOCK_NAME = ".encode-times.lock"

log = logging.getLogger(__name__)


def timing_namespace(identity: str, device: str, threads: int | None) -> str:
    """The cache namespace of one embedder's encode times on this machine."""
    # ``embed.threads``, else every core: what a deployed retriever would use. A parallel
    # launch's share per job (sweep.hydrakit.devices) is not the deployment's, and its prewarm
    # pass times the queries with every core before the jobs start.
    return json.dumps(
        {
            "format": 1,
            "kind": ENCODE_TIMES_KIND,
            "embedder": identity,
            "device": device,
            "threads": threads or os.cpu_count(),
            "cpu": f"{cpu_name()} x{os.cpu_count()}",
        },
        sort_keys=True,
    )


class CachedEncodeTimes:
    """One embedder's fresh-encode time per query text (ms), in the cache at ``root``, each
    with the :class:`Conditions` it was measured under; ``now`` reads the machine's."""

    def __init__(
        self,
        root: Path,
        namespace: str,
        label: str,
        *,
        now: Callable[[], Conditions] = conditions_now,
    ) -> None:
        self.root = Path(root)
        self.namespace = namespace
        self.label = label
        self.path = self.root / TIMINGS_DIR / f"{namespace_dirname(namespace)}.json"
        self._now = now

    def get_or_measure(
        self, texts: Sequence[str], encode: Callable[[str], object], *, retime: bool | None = None
    ) -> tuple[Timed, int]:
        """(the times per text and their worst conditions, how many were measured now):
        kept times are read, the others (and those :func:`needs_retime` says are stale)
        timed one at a time with ``encode`` and kept."""
        texts = list(texts)
        if not texts:
            return Timed(np.zeros(0), Conditions()), 0
        entries = self._read(texts)
        if not self._stale(texts, entries, retime):  # only read: a read-only cache serves too
            return self._timed(texts, entries), 0
        with self._measuring():
            entries = self._read(texts)  # timed meanwhile by another job?
            todo = self._stale(texts, entries, retime)
            if todo:
                log.info(TIMING_LINE, len(todo))
                fresh = timed_calls(
                    [texts[i] for i in todo], lambda i, text: encode(text), self._now
                )
                for i, ms in zip(todo, fresh.ms):
                    entries[self._key(texts[i])] = {
                        "ms": round(float(ms), 4),
                        **fresh.conditions.to_dict(),
                    }
                self._write(entries)
        return self._timed(texts, entries), len(todo)

    def _key(self, text: str) -> str:
        return cache_key(self.namespace, text).hex()

    def _stale(self, texts: list[str], entries: dict, retime: bool | None) -> list[int]:
        """Indices of the texts to time: not kept, or kept but stale (:func:`needs_retime`:
        measured under load, or under unknown load, while the machine is idle now; all of
        them with ``retime`` true, none with false). A cache that cannot be
        written keeps its times: one timed again could not be kept."""
        missing = [i for i, t in enumerate(texts) if self._key(t) not in entries]
        if not missing and not cachedirs.check_writable("embedding", self.root):
            return missing
        now = self._now()
        return [
            i
            for i, t in enumerate(texts)
            if self._key(t) not in entries
            or needs_retime(Conditions.from_dict(entries[self._key(t)]), now, retime)
        ]

    def _timed(self, texts: list[str], entries: dict) -> Timed:
        rows = [entries[self._key(t)] for t in texts]
        return Timed(
            np.array([r["ms"] for r in rows], dtype=np.float64),
            Conditions.worst([Conditions.from_dict(r) for r in rows]),
        )

    def _read(self, texts: list[str]) -> dict[str, dict]:
        """The kept times by text key: this namespace's file, then (for texts it lacks)
        the one-column entries of the embedding cache kept before conditions were."""
        entries: dict[str, dict] = {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            data = None
        times = data.get("times") if isinstance(data, dict) else None
        for key, entry in times.items() if isinstance(times, dict) else ():
            ms = entry.get("ms") if isinstance(entry, dict) else None
            if isinstance(ms, (int, float)) and math.isfinite(ms) and ms >= 0:
                entries[key] = entry
        return {**self._legacy([t for t in texts if self._key(t) not in entries]), **entries}

    def _legacy(self, texts: list[str]) -> dict[str, dict]:
        folder = self.root / FORMAT_DIR / namespace_dirname(self.namespace)
        if not texts or not folder.is_dir():
            return {}
        stored, found = EmbeddingCache(self.root, self.namespace, dim=1).get_many(texts)
        return {
            self._key(t): {"ms": float(stored[i, 0])}
            for i, t in enumerate(texts)
            if found[i] and np.isfinite(stored[i, 0])
        }

    def _write(self, entries: dict[str, dict]) -> None:
        if cachedirs.read_only(self.root):
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_text_atomic(
                self.path,
                json.dumps(
                    {"namespace": self.namespace, "model": self.label, "times": entries},
                    ensure_ascii=False,
                ),
            )
        except OSError as e:
            cachedirs.note_unwritable("embedding", self.root, e)

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


def _legacy_namespaces(root: Path) -> list[dict]:
    """The embedding cache's namespaces of encode times kept before their conditions were."""
    out = []
    for ns in cache_info(root)["namespaces"]:
        try:
            ident = json.loads(ns.get("namespace") or "")
        except ValueError:
            continue
        if isinstance(ident, dict) and ident.get("kind") == ENCODE_TIMES_KIND:
            out.append(ns)
    return out


def _timing_files(root: Path) -> list[Path]:
    """The kept-times files of the cache at ``root`` (none when it has no such folder)."""
    try:
        return [p for p in (root / TIMINGS_DIR).iterdir() if p.suffix == ".json" and p.is_file()]
    except OSError:
        return []


def count_timings(root: Path) -> int:
    """How many embedders' encode times the cache at ``root`` keeps."""
    return len(_timing_files(Path(root))) + len(_legacy_namespaces(Path(root)))


def clear_timings(root: Path) -> int:
    """Delete every kept encode time (each is measured again when next needed); returns
    how many embedders' times were deleted."""
    root = Path(root)
    n = 0
    for ns in _legacy_namespaces(root):
        clear_cache(root, ns["id"])
        n += 1
    for path in _timing_files(root):
        path.unlink(missing_ok=True)
        n += 1
    try:
        (root / TIMINGS_DIR).rmdir()
    except OSError:
        pass
    return n
