"""How fast an embedder ran here before, kept beside the embedding cache (``rates.json``).

The plan printed before a sweep's first job turns the texts still to embed into a time
estimate with it. A rate is kept per model (its weights), backend, device and processor:
what makes one run faster than another on the same texts. It counts model tokens as
well as texts, because a 512-token chunk takes several times as long as a 128-token one,
so tokens per second carry over from one grid of chunk sizes to another where texts per
second would not. It also keeps how long loading the model took the last time.

Plain JSON, written whole to a temporary file and moved into place: a reader never sees
half a file. Two jobs that record at once may lose one of the two measurements; the
next run records again, which is all an estimate needs.
"""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sweep.core import cachedirs
from sweep.core.cpu import cpu_name
from sweep.core.files import write_text_atomic

__all__ = ["RATES_NAME", "EmbedRate", "EmbedRates", "known_rate", "rate_key", "record_rate"]

log = logging.getLogger(__name__)

RATES_NAME = "rates.json"
#: Measurements are summed until they hold this many texts, then halved: a rate follows
#: the machine as it changes, and one small run cannot swing it.
_HORIZON_TEXTS = 20_000


@dataclass(frozen=True)
class EmbedRate:
    """What an embedder did here before: ``texts`` (of ``tokens`` model tokens) in
    ``seconds`` of model time; ``load_s``, its last model load (None: never timed)."""

    texts: float = 0.0
    tokens: float = 0.0
    seconds: float = 0.0
    load_s: float | None = None

    @property
    def known(self) -> bool:
        return self.texts > 0 and self.seconds > 0

    @property
    def texts_per_s(self) -> float:
        return self.texts / self.seconds

    def seconds_for(self, texts: int, tokens: int | None) -> float:
        """Model time for ``texts`` of ``tokens`` model tokens (by tokens when both sides
        counted them, else by texts)."""
        if tokens is not None and self.tokens > 0:
            return tokens * self.seconds / self.tokens
        return texts / self.texts_per_s

    def plus(self, texts: int, tokens: int | None, seconds: float) -> EmbedRate:
        """This rate with one more measurement in it."""
        if tokens is None:  # the tokens of these texts are not known: texts alone carry on
            tokens_total = 0.0
        else:
            tokens_total = self.tokens + tokens if (self.tokens or not self.texts) else 0.0
        total = EmbedRate(self.texts + texts, tokens_total, self.seconds + seconds, self.load_s)
        if total.texts > _HORIZON_TEXTS:
            total = EmbedRate(total.texts / 2, total.tokens / 2, total.seconds / 2, total.load_s)
        return total


class EmbedRates:
    """The rates of every embedder that ran with the cache at ``root``."""

    def __init__(self, root: str | os.PathLike) -> None:
        self.root = Path(root)
        self.path = self.root / RATES_NAME

    def _read(self) -> dict:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):  # none yet, or damaged: rates are measured again
            return {}
        return data if isinstance(data, dict) else {}

    def get(self, key: str) -> EmbedRate | None:
        entry = self._read().get(key)
        if not isinstance(entry, dict):
            return None
        try:
            load = entry.get("load_s")
            return EmbedRate(
                float(entry.get("texts", 0)),
                float(entry.get("tokens", 0)),
                float(entry.get("seconds", 0)),
                None if load is None else float(load),
            )
        except (TypeError, ValueError):
            return None

    def record(
        self,
        key: str,
        *,
        texts: int = 0,
        tokens: int | None = None,
        seconds: float = 0.0,
        load_s: float | None = None,
    ) -> None:
        """Add a measurement (``texts`` embedded in ``seconds``), or a model load's time."""
        if cachedirs.read_only(self.root):
            return
        data = self._read()
        old = self.get(key) or EmbedRate()
        new = old.plus(texts, tokens, seconds) if texts and seconds > 0 else old
        if load_s is not None:
            new = EmbedRate(new.texts, new.tokens, new.seconds, load_s)
        data[key] = {
            "texts": new.texts,
            "tokens": new.tokens,
            "seconds": new.seconds,
            "load_s": new.load_s,
            "updated": time.time(),
        }
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            write_text_atomic(self.path, json.dumps(data, indent=1, sort_keys=True) + "\n")
        except OSError as e:  # a cache that cannot be written: the vectors' own note says so
            log.debug("embedding rate not kept in %s: %s", self.path, e)


def rate_key(model: str, weights: str, backend: str, device: str) -> str:
    """Where an embedder's speed is kept: the same weights on the same backend, device and
    processor run at the same speed."""
    return json.dumps(
        {
            "model": model,
            "weights": weights,
            "backend": backend,
            "device": device,
            "cpu": f"{cpu_name()} x{os.cpu_count()}",
        },
        sort_keys=True,
    )


def known_rate(root: Path | None, key: str) -> EmbedRate | None:
    """How fast the embedder of ``key`` ran with the cache at ``root`` before (None: never
    measured, or no cache)."""
    if root is None:
        return None
    found = EmbedRates(root).get(key)
    return found if found is not None and (found.known or found.load_s is not None) else None


def record_rate(root: Path | None, key: str, **measured: Any) -> None:
    """:meth:`EmbedRates.record` when there is a cache at ``root``."""
    if root is not None:
        EmbedRates(root).record(key, **measured)
