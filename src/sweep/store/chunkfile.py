"""A job's chunks as offsets: ``<job>/chunks.csv``, one line per chunk, no text.

The text is the document's own (``doc.text[start:end]``), so the file stays small and
``sweep.export`` and the report read a setting's exact chunks back without chunking
again (a semantic setting would need its model for that).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sweep.core.errors import BadInput
from sweep.core.files import not_utf8, regular_file, write_text_atomic
from sweep.core.types import Chunk

__all__ = [
    "CHUNKS_NAME",
    "ChunkFileError",
    "ChunkOffsets",
    "read_chunk_offsets",
    "write_chunk_offsets",
]

CHUNKS_NAME = "chunks.csv"
_COLUMNS = ("chunk_id", "doc_id", "start", "end", "n_tokens")


class ChunkFileError(ValueError, BadInput):
    """A chunks.csv that cannot be read; ``str()`` names the file and line."""


@dataclass(frozen=True)
class ChunkOffsets:
    chunk_id: str
    doc_id: str
    start: int
    end: int
    n_tokens: int


def write_chunk_offsets(path: Path, chunks: Sequence[Chunk]) -> Path:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(_COLUMNS)
    for c in chunks:
        writer.writerow((c.chunk_id, c.doc_id, c.start, c.end, c.n_tokens))
    return write_text_atomic(path, buf.getvalue())


def read_chunk_offsets(path: Path) -> list[ChunkOffsets]:
    out: list[ChunkOffsets] = []
    try:
        regular_file(path)  # never open a FIFO or a device in its place
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.reader(f)
            header = next(reader, None)
            if tuple(header or ()) != _COLUMNS:
                raise ChunkFileError(
                    f"{path}:1: not a chunks file (columns {', '.join(_COLUMNS)} expected)"
                )
            for line, values in enumerate(reader, start=2):
                try:
                    cid, doc, start, end, n = values
                    out.append(ChunkOffsets(cid, doc, int(start), int(end), int(n)))
                except ValueError:
                    raise ChunkFileError(f"{path}:{line}: malformed chunk line") from None
    except OSError as e:
        raise ChunkFileError(f"{path}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise ChunkFileError(f"{not_utf8(path)}; not a chunks file sweep wrote") from None
    except csv.Error as e:
        raise ChunkFileError(f"{path}: not a chunks file ({e})") from None
    return out
