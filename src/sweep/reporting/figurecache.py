"""Pictures drawn before, kept by what they show, so a rerun copies them instead of drawing.

Drawing a report's pictures takes seconds (matplotlib's layout and rendering), about a
quarter of a rerun whose vectors all come from the embedding cache. A picture is a pure
function of its inputs (the values drawn, the title, the drawing code, matplotlib's style
settings and the versions of matplotlib and NumPy), so it is kept under the hash of
exactly those in ``<cache>/figures/<hash>.png`` and copied when the same picture is asked
for again. Anything that changes a pixel changes the hash: another value, label or title,
an edit of the drawing module, a matplotlibrc, another matplotlib. The folder keeps the most recently used ``MAX_FILES`` pictures.

Only PNG files written here are read back; one that is damaged (no PNG header or end) is
deleted and the picture drawn again. A cache that cannot be written (a read-only mount, a
full disk) is read, not written, and the log says so once (``sweep.core.cachedirs``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import shutil
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from sweep.core import cachedirs
from sweep.core.files import write_atomic

__all__ = ["FIGURES_DIR", "FigureCache", "fingerprint"]

log = logging.getLogger(__name__)

FIGURES_DIR = "figures"
#: Pictures kept; the least recently used go first (a report has about a dozen).
MAX_FILES = 2000
_FORMAT = b"sweep-figure-1"
_PNG_HEAD = b"\x89PNG\r\n\x1a\n"
_PNG_TAIL = b"IEND\xaeB`\x82"
_TMP_PREFIX = ".tmp-"
#: A temporary this old is a copy that a crash cut short, not one in progress.
_STALE_TMP_SECONDS = 3600


def _feed(h: Any, obj: Any) -> None:
    """Hash ``obj`` by value, with its type, so that 1, 1.0, "1" and True differ."""
    if obj is None or isinstance(obj, (bool, int, str)):
        h.update(f"{type(obj).__name__}:{obj!r};".encode())
    elif isinstance(obj, float):
        h.update(f"float:{obj!r};".encode())  # repr round-trips: every bit counts
    elif isinstance(obj, np.ndarray):
        if obj.dtype.hasobject:  # its bytes are pointers, not values
            raise TypeError("cannot fingerprint an array of Python objects")
        a = np.ascontiguousarray(obj)
        h.update(f"ndarray:{a.dtype.str}:{a.shape};".encode())
        h.update(a.tobytes())
    elif isinstance(obj, np.generic):
        _feed(h, obj.item())
    elif isinstance(obj, Path):
        h.update(f"path:{obj};".encode())
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        h.update(f"dataclass:{type(obj).__qualname__}{{".encode())
        for f in dataclasses.fields(obj):
            h.update(f.name.encode() + b"=")
            _feed(h, getattr(obj, f.name))
        h.update(b"}")
    elif isinstance(obj, Mapping):
        h.update(b"map{")  # in order: the order of panels and bars is drawn
        for key, value in obj.items():
            _feed(h, key)
            _feed(h, value)
        h.update(b"}")
    elif isinstance(obj, (list, tuple)):
        h.update(f"{type(obj).__name__}[".encode())
        for item in obj:
            _feed(h, item)
        h.update(b"]")
    else:
        raise TypeError(f"cannot fingerprint a {type(obj).__name__}")


def fingerprint(*parts: Any) -> str:
    """The hex SHA-256 of ``parts`` by value; TypeError for a value it cannot hash."""
    h = hashlib.sha256(_FORMAT)
    for part in parts:
        _feed(h, part)
    return h.hexdigest()


def _looks_whole(path: Path) -> bool:
    try:
        size = path.stat().st_size
        if size < len(_PNG_HEAD) + len(_PNG_TAIL):
            return False
        with open(path, "rb") as f:
            head = f.read(len(_PNG_HEAD))
            f.seek(size - len(_PNG_TAIL))
            return head == _PNG_HEAD and f.read() == _PNG_TAIL
    except OSError:
        return False


@dataclasses.dataclass(frozen=True)
class FigureCache:
    """The kept pictures in ``folder`` (made on first use)."""

    folder: Path

    def key(self, *parts: Any) -> str | None:
        """The picture's hash, or None when an input cannot be hashed (it is then drawn)."""
        try:
            return fingerprint(*parts)
        except TypeError as exc:
            log.debug("picture not cached: %s", exc)
            return None

    def fetch(self, key: str, dest: Path) -> bool:
        """Copy the picture kept under ``key`` to ``dest``; False when there is none."""
        kept = self.folder / f"{key}.png"
        if not kept.is_file():
            return False
        if not _looks_whole(kept):
            log.warning("damaged cached picture %s ignored; drawing it again", kept)
            try:
                kept.unlink(missing_ok=True)
            except OSError:  # a cache shared read-only: it stays, and is never served
                pass
            return False
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
            with open(kept, "rb") as src:
                # Whole or not at all, through a temporary file made new (never a link
                # planted under a name sweep would use).
                write_atomic(dest, lambda f: shutil.copyfileobj(src, f))
        except OSError as exc:  # the picture is drawn instead, and says why if it cannot be
            log.debug("cached picture %s not copied (%s)", kept, exc)
            return False
        try:
            os.utime(kept)  # recently used: pruned last
        except OSError:  # a cache shared read-only: the copy stands
            pass
        return True

    def keep(self, key: str, drawn: Path) -> None:
        """Keep ``drawn`` under ``key``; a cache that cannot be written is said so once
        and only read from then on."""
        if cachedirs.read_only(self.folder):
            return
        tmp = self.folder / f"{_TMP_PREFIX}{key}-{uuid.uuid4().hex[:8]}.png"
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(drawn, tmp)
            tmp.replace(self.folder / f"{key}.png")
            self._prune()
        except OSError as exc:
            _discard(tmp)  # a copy a full disk cut short must not hold its space
            cachedirs.note_unwritable("figure", self.folder, exc)

    def files(self) -> list[Path]:
        """The kept pictures."""
        if not self.folder.is_dir():
            return []
        return [p for p in self.folder.iterdir() if p.suffix == ".png" and _is_key(p.stem)]

    def size(self) -> tuple[int, int]:
        """(pictures, bytes) kept now."""
        n = size = 0
        for p in self.files():
            try:
                size += p.stat().st_size
                n += 1
            except OSError:  # pruned by another sweep meanwhile
                pass
        return n, size

    def clear(self) -> tuple[int, int]:
        """Delete the kept pictures and the temporaries of copies cut short (and nothing
        else); (pictures, bytes) removed."""
        for p in self._temporaries():
            p.unlink(missing_ok=True)
        n = size = 0
        for p in self.files():
            try:
                size += p.stat().st_size
                p.unlink()
                n += 1
            except OSError:
                pass
        try:
            self.folder.rmdir()  # only when nothing else is in it
        except OSError:
            pass
        return n, size

    def _temporaries(self) -> list[Path]:
        if not self.folder.is_dir():
            return []
        return [
            p
            for p in self.folder.iterdir()
            if p.name.startswith(_TMP_PREFIX) and p.suffix == ".png"
        ]

    def _prune(self) -> None:
        now = time.time()
        for p in self._temporaries():  # a copy cut short by a crash
            if now - _mtime(p) > _STALE_TMP_SECONDS:
                p.unlink(missing_ok=True)
        files = self.files()
        if len(files) <= MAX_FILES:
            return
        by_age = sorted(files, key=_mtime)
        for p in by_age[: len(files) - MAX_FILES * 4 // 5]:
            p.unlink(missing_ok=True)


def _discard(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:  # gone meanwhile: first in line
        return 0.0


def _is_key(name: str) -> bool:
    return len(name) == 64 and all(c in "0123456789abcdef" for c in name)
