"""Milliseconds per call, timed one call at a time (the latency columns' clock)."""

from __future__ import annotations

import time
from typing import Callable, Sequence

import numpy as np

__all__ = ["TIMING_LINE", "per_call_ms"]

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
