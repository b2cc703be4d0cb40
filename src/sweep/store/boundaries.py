"""One document as a job cut it: ``<job>/boundaries.json``, for the report's boundary view.

Every job of a sweep shows the same document (the one with the most evidence spans,
so the cuts that lose evidence are in view), its text up to ``LIMIT`` characters, the
chunks' spans and the evidence spans in it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sweep.core.files import write_text_atomic
from sweep.core.types import Chunk, Document, Query

__all__ = [
    "BOUNDARIES_NAME",
    "LIMIT",
    "BoundaryView",
    "boundary_view",
    "read_boundary_view",
    "showcase_document",
]

BOUNDARIES_NAME = "boundaries.json"
#: characters of the document shown: enough for a dozen chunks at 256 tokens
LIMIT = 12_000


@dataclass(frozen=True)
class BoundaryView:
    doc_id: str
    text: str
    n_chars: int  # the whole document's length (text may be cut at LIMIT)
    chunks: tuple[tuple[int, int], ...]
    evidence: tuple[tuple[int, int], ...]

    def to_json(self) -> str:
        return json.dumps(
            {
                "doc_id": self.doc_id,
                "text": self.text,
                "n_chars": self.n_chars,
                "chunks": [list(s) for s in self.chunks],
                "evidence": [list(s) for s in self.evidence],
            },
            ensure_ascii=False,
        )


def showcase_document(documents: Sequence[Document], queries: Sequence[Query]) -> Document | None:
    """The document with the most evidence spans (the first by id on a tie); else the first."""
    counts: dict[str, int] = {}
    for q in queries:
        for j in q.relevant:
            if j.is_span and j.grade > 0:
                counts[j.doc_id] = counts.get(j.doc_id, 0) + 1
    if not documents:
        return None
    best = max(range(len(documents)), key=lambda i: (counts.get(documents[i].doc_id, 0), -i))
    return documents[best]


def boundary_view(doc: Document, chunks: Sequence[Chunk], queries: Sequence[Query]) -> BoundaryView:
    text = doc.text[:LIMIT]
    spans = tuple(
        (c.start, min(c.end, len(text)))
        for c in chunks
        if c.doc_id == doc.doc_id and c.start < len(text)
    )
    evidence = sorted(
        {
            (j.start, min(j.end, len(text)))
            for q in queries
            for j in q.relevant
            if j.doc_id == doc.doc_id and j.is_span and j.grade > 0 and j.start < len(text)
        }
    )
    return BoundaryView(doc.doc_id, text, len(doc.text), spans, tuple(evidence))


def write_boundary_view(path: Path, view: BoundaryView) -> Path:
    return write_text_atomic(path, view.to_json())


def read_boundary_view(path: Path) -> BoundaryView | None:
    """The view, or None for a file that is missing or damaged (the report goes without)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return BoundaryView(
            str(data["doc_id"]),
            str(data["text"]),
            int(data["n_chars"]),
            tuple((int(a), int(b)) for a, b in data["chunks"]),
            tuple((int(a), int(b)) for a, b in data["evidence"]),
        )
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return None
