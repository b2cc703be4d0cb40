"""Writing result files so that a reader never sees half of one."""

from __future__ import annotations

from pathlib import Path


def write_text_atomic(path: Path, text: str) -> Path:
    """Write ``text`` to a temporary file beside ``path`` and rename it into place.

    A job killed mid-write, or a report rebuilt while a sweep is running,
    then finds either the old file or the new one, never a truncated one.
    """
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8", newline="")
    tmp.replace(path)
    return path
