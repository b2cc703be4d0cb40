"""The one gate before a file of a sweep folder is opened: regular files only.

A sweep folder is input from anyone (a CI baseline, a pull request, a mail), and opening
a FIFO there blocks the command forever, a device is read without end. Every reader of a
sweep folder's files (rows, per-query scores, traces, chunks, results.csv) asks
:func:`saved_file` first.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

__all__ = ["NotAFileError", "saved_file"]


class NotAFileError(OSError, ValueError):
    """A name of a sweep folder that is not a regular file (a FIFO, a device, a folder).

    Both an ``OSError`` and a ``ValueError``: every command already turns one or the other
    into its one-line bad-input error, wherever it reads a sweep folder.
    """

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a device"),
          (stat.S_ISBLK, "a device"), (stat.S_ISDIR, "a folder"))


def saved_file(path: Path) -> Path | None:
    """``path`` when it is a regular file (or a link to one), None when there is nothing
    there; any other kind of file is a :class:`NotAFileError` naming it."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as e:  # a link loop, a name too long: named, not a traceback
        raise NotAFileError(e.errno, f"cannot be read ({e.strerror})", str(path)) from None
    if stat.S_ISREG(mode):
        return path
    kind = next((name for test, name in _KINDS if test(mode)), "a special file")
    raise NotAFileError(errno.EINVAL, f"{kind}, not a regular file; sweep reads only regular "
                        "files from a sweep folder", str(path))
