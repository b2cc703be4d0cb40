"""One writer at a time for a sweep folder's tables.

Under a parallel launcher every job rebuilds the sweep's tables after saving
its row, so several processes (on several machines, over a shared filesystem)
may rebuild them at once: ``per_query.csv`` is appended to, and two appenders
would duplicate or interleave jobs. An exclusive ``flock`` on ``.sweep.lock``
in the folder serializes the rebuilds. The kernel drops the lock when its
holder exits, so a killed job never leaves the folder locked.

A sweep folder is untrusted input (sweep.report reads folders people mail and commit):
the lock file is opened without following a link (a dangling link would have the lock
made at its target, outside the folder) and only when it is a regular file.
"""

from __future__ import annotations

import errno
import logging
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sweep.core.files import NotRegularFile, file_kind

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
    fd = _open(Path(folder) / name)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError as e:  # a filesystem without locks (some network mounts)
            log.debug("no lock on %s (%s); going on unlocked", Path(folder) / name, e)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _open(path: Path) -> int:
    """The lock file, made when absent; a link, FIFO, device or folder in its place is a
    :class:`NotRegularFile`, never opened (a device's open alone can act) nor followed."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        mode = stat.S_IFREG
    if stat.S_ISREG(mode):
        # O_NOFOLLOW: a link put there between the look and the open is refused, not followed.
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0)
        try:
            fd = os.open(path, flags, 0o644)
        except OSError as e:
            if e.errno != errno.ELOOP:
                raise
            mode = stat.S_IFLNK
        else:
            mode = os.fstat(fd).st_mode
            if stat.S_ISREG(mode):
                return fd
            os.close(fd)
    raise NotRegularFile(
        errno.EINVAL,
        f"is {file_kind(mode)}, not a regular file: sweep locks only a file of its own there",
        str(path),
    )
