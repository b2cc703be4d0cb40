"""Milliseconds per call, timed one call at a time (the latency columns' clock), and the
conditions a timing was taken under: when, and how busy the machine was.

A timing is only as good as the machine was idle: the same query encode takes 5 ms on
an idle machine and hundreds on one whose CPUs are shared with other work. So every
kept timing carries :class:`Conditions`, the tables show them beside the figure, and a
timing taken under load is taken again once the machine is idle (:func:`needs_retime`).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import numpy as np

__all__ = [
    "BUSY_LOAD_PER_CPU",
    "TIMING_LINE",
    "Conditions",
    "Timed",
    "conditions_now",
    "needs_retime",
    "per_call_ms",
    "timed_calls",
]

#: Above this 1-minute load average per CPU a timing counts as taken under load. Not 1.0:
#: a sweep's own embedding keeps about one runnable thread per CPU (the encoder uses every
#: core), so only more than that says that other work was competing for the CPUs.
BUSY_LOAD_PER_CPU = 1.5

#: Said before queries are timed one by one, which can take half a minute with nothing
#: else to show.
TIMING_LINE = "timing %d queries one at a time with a warm model, for the latency columns"


def per_call_ms(items: Sequence, once: Callable[[int, object], object]) -> np.ndarray:
    """Milliseconds of ``once(i, item)`` per item, after one untimed warm-up call (it loads
    what is loaded lazily and lets the BLAS threads settle)."""
    if not len(items):
        return np.zeros(0)
    once(0, items[0])
    ms = np.empty(len(items))
    for i, item in enumerate(items):
        t0 = time.perf_counter()
        once(i, item)
        ms[i] = 1000.0 * (time.perf_counter() - t0)
    return ms


@dataclass(frozen=True)
class Conditions:
    """When a timing was taken (UTC, ISO 8601) and the machine's 1-minute load average and
    CPU count then; None for what is not known (a timing kept before they were recorded)."""

    at: str | None = None
    load: float | None = None
    cpus: int | None = None

    @property
    def known(self) -> bool:
        return self.at is not None and self.load is not None and bool(self.cpus)

    @property
    def busy(self) -> bool | None:
        """Taken under load (more than :data:`BUSY_LOAD_PER_CPU` per CPU); None: unknown."""
        if self.load is None or not self.cpus:
            return None
        return self.load / self.cpus > BUSY_LOAD_PER_CPU

    def when(self) -> str:
        """``2026-12-05 13:40 UTC`` (the minute is enough to tell runs apart)."""
        if self.at is None:
            return "an unknown time"
        try:
            t = datetime.fromisoformat(self.at).astimezone(timezone.utc)
        except ValueError:
            return self.at
        return t.strftime("%Y-%m-%d %H:%M UTC")

    def describe(self) -> str:
        """``measured 2026-12-05 13:40 UTC, load 0.3 on 2 CPUs``."""
        if self.at is None:
            return "measured at an unknown time"
        out = f"measured {self.when()}"
        if self.load is not None and self.cpus:
            out += f", load {self.load:.1f} on {self.cpus} CPU{'s' if self.cpus != 1 else ''}"
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"at": self.at, "load": self.load, "cpus": self.cpus}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> Conditions:
        """Read back; what is missing or malformed is unknown, never an error."""
        data = data if isinstance(data, Mapping) else {}
        at, load, cpus = data.get("at"), data.get("load"), data.get("cpus")
        return cls(
            at if isinstance(at, str) else None,
            float(load) if isinstance(load, (int, float)) and math.isfinite(load) else None,
            int(cpus) if isinstance(cpus, int) and cpus > 0 else None,
        )

    @classmethod
    def worst(cls, parts: Sequence[Conditions]) -> Conditions:
        """One figure made of several timings (an encode kept from an earlier run plus a
        search timed now): as old as its oldest part, as loaded as its busiest; unknown
        when any part is."""
        if not parts or not all(p.known for p in parts):
            return cls()
        oldest = min(p.at for p in parts)  # type: ignore[type-var]
        busiest = max(parts, key=lambda p: p.load / p.cpus)  # type: ignore[operator]
        return cls(oldest, busiest.load, busiest.cpus)


def _cpus() -> int:
    # The CPUs this process may run on (a container's or a taskset's share), else all.
    try:
        return len(os.sched_getaffinity(0)) or os.cpu_count() or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def conditions_now() -> Conditions:
    """This machine now: the UTC time, the 1-minute load average (None where the system
    has none) and the CPUs this process may use."""
    try:
        load: float | None = os.getloadavg()[0]
    except (AttributeError, OSError):
        load = None
    at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    return Conditions(at, load, _cpus())


def needs_retime(kept: Conditions, now: Conditions, retime: bool | None = None) -> bool:
    """Whether a kept timing is taken again: as ``runtime.retime`` says (true: always;
    false: never), else (None, ``auto``) when it was taken under load, or under unknown
    load, and the machine is not under load now (timing it again on a busy machine would
    only replace one slow figure by another)."""
    if retime is not None:
        return retime
    return kept.busy is not False and now.busy is False


@dataclass(frozen=True)
class Timed:
    """Milliseconds per item and the conditions they were taken under (the worst of them,
    when the items were timed at different times)."""

    ms: np.ndarray
    conditions: Conditions


def timed_calls(
    items: Sequence,
    once: Callable[[int, object], object],
    now: Callable[[], Conditions] = conditions_now,
) -> Timed:
    """:func:`per_call_ms` with the conditions read just before: the load average then
    says what the calls competed with, not the calls' own load."""
    conditions = now()
    return Timed(per_call_ms(items, once), conditions)
