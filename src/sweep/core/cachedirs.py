"""Where sweep keeps its caches: ``$XDG_CACHE_HOME/sweep/<kind>``, or a folder the user names.

One rule for every cache (embeddings, ONNX exports, LLM replies), so ``off`` means
the same thing in ``runtime.cache_dir`` and ``llm.cache_dir``. One rule too for a cache
that cannot be written (a read-only mount shared by a team, a full disk): it is read,
not written, and the log says so once (:func:`note_unwritable`).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

__all__ = [
    "DISABLED_VALUES",
    "check_writable",
    "default_cache_dir_of",
    "note_unwritable",
    "read_only",
    "resolve_cache_dir_of",
]

log = logging.getLogger(__name__)

#: Values of a ``cache_dir`` setting that turn the cache off.
DISABLED_VALUES = ("", "none", "off", "false", "no", "0")

#: Cache folders found unwritable in this process: read from then on, never written.
_read_only: set[Path] = set()


def default_cache_dir_of(kind: str) -> Path:
    """``$XDG_CACHE_HOME/sweep/<kind>`` (an absolute XDG path only), else ``~/.cache/sweep/<kind>``."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "sweep" / kind


def resolve_cache_dir_of(cache_dir: str | os.PathLike | None, kind: str) -> Path | None:
    """The folder a configured ``cache_dir`` names; None when it turns the cache off.

    ``None`` is :func:`default_cache_dir_of` of ``kind``; ``~`` is expanded.
    """
    if cache_dir is None:
        return default_cache_dir_of(kind)
    text = os.fspath(cache_dir)
    if text.strip().lower() in DISABLED_VALUES:
        return None
    return Path(os.path.expanduser(text))


def read_only(folder: str | os.PathLike) -> bool:
    """Whether the cache at ``folder``, or one it is inside of (the pictures kept in the
    embedding cache's folder), was found unwritable in this process."""
    folder = Path(folder)
    return folder in _read_only or any(p in _read_only for p in folder.parents)


def note_unwritable(what: str, folder: str | os.PathLike, error: OSError | str) -> None:
    """The ``what`` cache at ``folder`` cannot be written: say so once (per folder and
    process), and from now on :func:`read_only` is true for it, so its owner reads it and
    writes nothing more. What it lacks is computed as if it were off: slower, never wrong."""
    folder = Path(folder)
    if read_only(folder):
        return
    _read_only.add(folder)
    if isinstance(error, OSError):
        error = error.strerror or str(error)
    log.warning(
        "%s cache: cannot write %s (%s); it is read, not written, for the rest of this run",
        what,
        folder,
        error,
    )


def check_writable(what: str, folder: str | os.PathLike) -> bool:
    """False (said once, :func:`note_unwritable`) when the cache at ``folder`` exists and
    cannot be written: a read-only mount, or a folder this user may not write in. A folder
    that does not exist yet is made on its first write, which says so if that fails."""
    folder = Path(folder)
    if read_only(folder):
        return False
    if not folder.is_dir() or os.access(folder, os.W_OK):
        return True
    try:  # access() says no without saying why: a read-only mount, or permissions
        mounted_ro = bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        mounted_ro = False
    note_unwritable(what, folder, "Read-only file system" if mounted_ro else "Permission denied")
    return False
