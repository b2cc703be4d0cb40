"""A disk that fills while a sweep runs: the sweep stops at the first file it cannot write.

Every later job would fail the same way, so the job that finds the disk full (or over its
quota) stops the sweep with :class:`DiskFull`, which names the file; ``sweep.jobs.entry``
then says so in one line and writes the finished rows' tables where they still fit.
:class:`DiskFull` is a ``BaseException``, as ``KeyboardInterrupt`` is: Hydra turns an
``Exception`` out of a job into a failed job, or into its own traceback, and neither
reaches the command.

Two writers are Hydra's, not sweep's, and are made to behave too: the job setup that
saves ``<job>/.hydra/*.yaml`` (:func:`guard_job_setup`) and the job's log file
(:class:`JobLogFile`, named in ``conf/hydra/job_logging/sweep.yaml``).
"""

from __future__ import annotations

import errno
import logging
import sys
from pathlib import Path
from typing import Any

__all__ = ["DiskFull", "JobLogFile", "guard_job_setup", "is_disk_full", "stop_if_disk_full"]

log = logging.getLogger("sweep")

#: What a full disk says: no space left, or no more of this user's quota.
_FULL = frozenset({errno.ENOSPC, errno.EDQUOT})


def is_disk_full(error: BaseException) -> bool:
    """Whether ``error`` says a disk is full (or a quota used up)."""
    return isinstance(error, OSError) and error.errno in _FULL


class DiskFull(BaseException):
    """A file of the sweep could not be written for lack of space: the sweep stops.
    ``str()`` is the one line the sweep prints (the file, then why)."""

    def __init__(self, error: OSError, where: str | Path | None = None) -> None:
        super().__init__(error, where)
        self.error = error
        #: The file that could not be written; the folder it was in when the error did
        #: not say (Python's buffered writes name no file).
        self.path = error.filename or where

    def __str__(self) -> str:
        reason = self.error.strerror or str(self.error)
        return f"cannot write {self.path}: {reason}" if self.path else reason


def stop_if_disk_full(error: BaseException, where: str | Path | None = None) -> None:
    """Raise :class:`DiskFull` for ``error`` when it says a disk is full (``where``: the
    folder it was written in, when the error names no file); else do nothing."""
    if is_disk_full(error):
        raise DiskFull(error, where) from None  # type: ignore[arg-type]  # is_disk_full: an OSError


def guard_job_setup() -> None:
    """Make Hydra's job setup (``<job>/.hydra/config.yaml``, ``hydra.yaml``,
    ``overrides.yaml``) stop the sweep with :class:`DiskFull` on a full disk, naming the
    file, instead of printing its traceback.

    Hydra offers no hook between a job's folder and its first file, so its private
    ``_save_config`` is wrapped (once; left alone should a Hydra version not have it).
    """
    import hydra.core.utils as hydra_utils

    save = getattr(hydra_utils, "_save_config", None)
    if save is None:  # another Hydra: its traceback on a full disk, as before
        log.debug("hydra.core.utils._save_config not found: Hydra's job setup is not guarded")
        return
    if getattr(save, "_sweep_guarded", False):
        return

    def save_config(*args: Any, **kwargs: Any) -> Any:
        # Any signature: a Hydra that adds a parameter still gets every argument.
        try:
            return save(*args, **kwargs)
        except OSError as e:
            stop_if_disk_full(e, _where(*args, **kwargs))
            raise

    save_config._sweep_guarded = True  # type: ignore[attr-defined]
    hydra_utils._save_config = save_config


def _where(cfg: Any = None, filename: str = "", output_dir: Any = ".", *_: Any, **__: Any) -> Path:
    """The file Hydra 1.3's ``_save_config(cfg, filename, output_dir)`` writes."""
    return Path(output_dir) / str(filename)


class JobLogFile(logging.FileHandler):
    """``<job>/<name>.log``: a log file that cannot be written (a full disk) says so once
    and stays quiet after, the terminal keeping every line, where ``logging`` would print
    a traceback for every line it could not write."""

    def __init__(
        self,
        filename: str,
        mode: str = "a",
        encoding: str | None = None,
        delay: bool = False,
        errors: str | None = None,
    ) -> None:
        self._failed = False
        super().__init__(filename, mode, encoding, delay, errors)

    def emit(self, record: logging.LogRecord) -> None:
        if not self._failed:
            super().emit(record)

    def flush(self) -> None:
        if self._failed:
            return
        try:
            super().flush()
        except OSError as e:
            self._fail(e)

    def handleError(self, record: logging.LogRecord) -> None:
        error = sys.exc_info()[1]
        if isinstance(error, OSError):
            self._fail(error)
        else:
            super().handleError(record)

    def close(self) -> None:
        try:
            super().close()
        except OSError:  # the lines it still held could not be written: said already
            pass

    def _fail(self, error: OSError) -> None:
        if self._failed:
            return
        self._failed = True  # before logging: this handler hears its own warning too
        log.warning(
            "cannot write the log %s (%s); it goes on on the terminal only",
            self.baseFilename,
            error.strerror or error,
        )
