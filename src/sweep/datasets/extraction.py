"""Extract a document file's text once: by file content and reader version, in JSON.

A sweep over chunk sizes reads the same PDFs in every job, and parsing a PDF
costs far more than chunking it. The text a reader made is kept twice: in this
process (jobs of one sweep share it) and on disk under the ``extract`` cache
(``$XDG_CACHE_HOME/sweep/extract``), keyed by the SHA-256 of the file's bytes,
the reader's name and its version, so an edited file or an upgraded parser is
read afresh and a renamed file is not. Entries are JSON: reading a cache never
runs code. A cache that cannot be written (read-only, full) is read, not written, and
the log says so once (``sweep.core.cachedirs``).

Every reader's text passes through here, so what no later stage may receive is
settled here once: a file beyond the reading limits
(:mod:`~sweep.datasets.readers.limits`) is refused before a reader parses it, and a
lone surrogate (U+D800 to U+DFFF: a PDF may map a glyph to one) becomes U+FFFD, one
character for one so no offset moves, as Python cannot encode it and a tokenizer
fails on it. What a reader could not keep (``Extracted.warnings``) is logged once
per process with the file's path, also when the text comes from the cache.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from dataclasses import replace
from pathlib import Path

from sweep.core import cachedirs
from sweep.core.tokenization import replace_surrogates
from sweep.datasets.readers.base import Extracted, ExtractedHeading, Reader
from sweep.datasets.readers.limits import ReadLimits, check_limits
from sweep.datasets.readers.registry import format_of

__all__ = ["CACHE_FORMAT", "extract"]

log = logging.getLogger(__name__)

#: Bumped when an entry's layout changes; entries of another format are read afresh.
CACHE_FORMAT = 2

_memo: dict[tuple[str, str, str], Extracted] = {}


def extract(
    data: bytes,
    filename: str,
    reader: Reader,
    cache_dir: Path | None,
    digest: str | None = None,
    limits: ReadLimits | None = None,
) -> Extracted:
    """What ``reader`` makes of a file ``filename`` (its path, for messages) with content
    ``data`` (SHA-256 ``digest``, computed when not given), from a cache when it was read
    before. ``cache_dir`` None keeps it in this process only. Raises
    :class:`~sweep.datasets.readers.base.UnreadableFile` (never cached: a fixed file is
    read again), also for a file beyond ``limits`` (default: :class:`ReadLimits`)."""
    digest = digest or hashlib.sha256(data).hexdigest()
    key = (digest, reader.name, reader.version)
    if key in _memo:
        return _memo[key]
    entry = None if cache_dir is None else _entry_path(cache_dir, *key)
    extracted = _load(entry, key) if entry is not None else None
    if extracted is None:
        check_limits(data, format_of(filename), limits or ReadLimits(), reader.name)
        extracted = _without_surrogates(reader.read(data, filename))
        if entry is not None:
            _save(entry, key, extracted)
    else:
        extracted = _without_surrogates(extracted)  # (a damaged entry may hold one as \ud800)
    for warning in extracted.warnings:
        log.warning("%s: %s", filename, warning)
    _memo[key] = extracted
    return extracted


def _without_surrogates(extracted: Extracted) -> Extracted:
    """``extracted`` with every lone surrogate of its text, title, headings and page labels
    as U+FFFD, and a warning saying how many the text held (the title and headings are
    mostly its own lines again: theirs are counted when the text held none)."""
    text, title = replace_surrogates(extracted.text), replace_surrogates(extracted.title)
    headings = tuple(replace(h, title=replace_surrogates(h.title)) for h in extracted.headings)
    labels = tuple(replace_surrogates(label) for label in extracted.page_labels)
    found = _replaced(extracted.text, text) or sum(
        _replaced(before, after)
        for before, after in (
            (extracted.title, title),
            *((a.title, b.title) for a, b in zip(extracted.headings, headings)),
            *zip(extracted.page_labels, labels),
        )
    )
    if not found:
        return extracted
    return replace(
        extracted,
        text=text,
        title=title,
        headings=headings,
        page_labels=labels,
        warnings=extracted.warnings
        + (
            f"{found:,} lone surrogate code point{'s' if found != 1 else ''} "
            "(U+D800 to U+DFFF, no character; a font's broken Unicode map) read as U+FFFD",
        ),
    )


def _replaced(before: str, after: str) -> int:
    """How many characters :func:`replace_surrogates` changed: each became one U+FFFD."""
    return 0 if before is after else after.count("\ufffd") - before.count("\ufffd")


def _entry_path(cache_dir: Path, digest: str, name: str, version: str) -> Path:
    recipe = hashlib.sha256(f"{name}\0{version}".encode()).hexdigest()[:12]
    return cache_dir / digest[:2] / f"{digest}-{recipe}.json"


def _load(path: Path, key: tuple[str, str, str]) -> Extracted | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, RecursionError) as e:
        # A damaged entry (nested past the recursion limit too) costs one re-read, never a
        # wrong text.
        log.warning("extraction cache: ignoring %s (%s)", path, e)
        return None
    try:
        if data.get("format") != CACHE_FORMAT or [
            data["sha256"],
            data["reader"],
            data["version"],
        ] != list(key):
            return None
        return Extracted(
            text=data["text"],
            title=data["title"],
            headings=tuple(
                ExtractedHeading(int(h[0]), str(h[1]), int(h[2])) for h in data["headings"]
            ),
            pages=tuple((int(p[0]), int(p[1])) for p in data["pages"]),
            warnings=tuple(str(w) for w in data["warnings"]),
            # (absent from entries written before pages had labels: those had none)
            page_labels=tuple(str(label) for label in data.get("page_labels", ())),
        )
    except (AttributeError, KeyError, IndexError, TypeError, ValueError):
        log.warning("extraction cache: ignoring %s (not an entry of this version)", path)
        return None


def _save(path: Path, key: tuple[str, str, str], extracted: Extracted) -> None:
    root = path.parent.parent  # the cache folder (entries sit in <root>/<2 hex digits>/)
    if cachedirs.read_only(root):
        return
    entry = {
        "format": CACHE_FORMAT,
        "sha256": key[0],
        "reader": key[1],
        "version": key[2],
        "title": extracted.title,
        "text": extracted.text,
        "headings": [[h.level, h.title, h.start] for h in extracted.headings],
        "pages": [list(p) for p in extracted.pages],
        "page_labels": list(extracted.page_labels),
        "warnings": list(extracted.warnings),
    }
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # A unique temporary name: two jobs of a parallel sweep may write the same entry.
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(entry, f, ensure_ascii=False)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    except OSError as e:
        # A read-only or full cache makes the next sweep slower, not wrong: said once.
        cachedirs.note_unwritable("extraction", root, e)
