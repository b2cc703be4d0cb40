"""The corpora shipped inside the package (``kestrel``, the default; ``kestrel-ja``, the
same company's rules and manuals in Japanese; ``tiny``, for tests; ``documents``, the same
kind of documents as PDF, HTML and DOCX files)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["CORPORA_DIR", "bundled_corpus"]

#: The checkout's top-level corpora/ is a link to this folder.
CORPORA_DIR = Path(__file__).resolve().parent.parent / "corpora"


def bundled_corpus(name: str) -> str:
    """Path of a corpus shipped with sweep (``${bundled:kestrel}`` in configs)."""
    path = CORPORA_DIR / name
    if not path.is_dir():
        raise ValueError(f"no bundled corpus {name!r} at {path}; set dataset.path=DIR")
    return str(path)
