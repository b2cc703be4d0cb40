"""One writer at a time for a sweep folder's tables.

Under a parallel launcher every job rebuilds the sweep's tables after saving
its row, so several processes (on several machines, over a shared filesystem)
may rebuild them at once: ``per_query.csv`` is appended to, and two appenders
would duplicate or interleave jobs. An exclusive ``flock`` on ``.sweep.lock``
in the folder serializes the rebuilds. The kernel drops the lock when its
holder exits, so a killed job never leaves the folder locked.
"""

from __future__ import annotations

import logging
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

__all__ = ["LOCK_NAME", "locked"]

log = logging.getLogger(__name__)

LOCK_NAME = ".sweep.lock"

try:
    import fcntl
except ImportError:  # Windows: no flock; parallel launchers there run unlocked
    fcntl = None  # type: ignore[assignment]


@contextmanager
def locked(folder: Path, name: str = LOCK_NAME) -> Iterator[None]:
    """Hold the folder's lock ``name`` (default: the tables') for the duration of the
    block (waits for it)."""
    if fcntl is None:
        yield
        return
    fd = os.open(Path(folder) / name, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError as e:  # a filesystem without locks (some network mounts)
            log.debug("no lock on %s (%s); going on unlocked", Path(folder) / name, e)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
