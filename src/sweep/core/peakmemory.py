"""The peak resident memory of one job: the most RAM the process held while the job ran.

The kernel keeps one high-water mark per process (``VmHWM`` in ``/proc/self/status``;
``ru_maxrss`` elsewhere), and several jobs may run one after another in one process
(the basic launcher, a reused worker). So the mark is reset when a job starts, where
Linux allows it (writing 5 to ``/proc/self/clear_refs``), and read when it ends: the
peak reached during the job. Where it cannot be reset, the mark is the job's peak only
when it rose during the job (an earlier job's higher peak would otherwise be counted
as this one's); then, and where the system says nothing, the peak is unknown (None).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable

__all__ = ["PeakMemory", "process_peak_mb"]

_HWM = re.compile(r"^VmHWM:\s*(\d+)\s*kB", re.M)


def process_peak_mb() -> float | None:
    """The process's peak resident memory so far, in MB (2**20 bytes); None when unknown."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as f:
            found = _HWM.search(f.read())
        if found:
            return int(found.group(1)) / 1024
    except OSError:
        pass
    try:
        import resource
    except ImportError:  # Windows
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # kilobytes on Linux, bytes on macOS
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024


def _reset_peak() -> bool:
    """Reset this process's high-water mark to its current RSS (Linux 4.0+)."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as f:
            f.write("5")
        return True
    except OSError:
        return False


class PeakMemory:
    """Started when a job starts; :meth:`peak_mb` when it ends is the job's own peak."""

    def __init__(
        self,
        read: Callable[[], float | None] = process_peak_mb,
        reset: Callable[[], bool] = _reset_peak,
    ) -> None:
        self._read = read
        self._was_reset = reset()
        self._start = read()

    def peak_mb(self) -> float | None:
        now = self._read()
        if now is None:
            return None
        if self._was_reset:
            return now
        # Not reset: the mark is this job's only if it rose while the job ran.
        return now if self._start is not None and now > self._start else None
