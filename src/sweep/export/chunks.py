"""A setting's chunks as JSON lines: ids, exact offsets, text, and headings and pages
where the document has them."""

from __future__ import annotations

import bisect
import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from sweep.chunking.headings import Prefixer, parse_headings
from sweep.core.types import Document
from sweep.store.chunkfile import ChunkOffsets
from sweep.store.traces import page_range

__all__ = ["check_offsets", "chunk_records"]


def check_offsets(documents: Mapping[str, Document], offsets: Sequence[ChunkOffsets]) -> str | None:
    """Why the chunks cannot be the documents' (a document is gone or shorter), or None."""
    for c in offsets:
        doc = documents.get(c.doc_id)
        if doc is None:
            return f"chunk {c.chunk_id}: document {c.doc_id!r} is not in the dataset any more"
        if not 0 <= c.start < c.end <= len(doc.text):
            return f"chunk {c.chunk_id}: offsets {c.start}:{c.end} are outside {c.doc_id!r}"
    return None


def chunk_records(
    documents: Mapping[str, Document], offsets: Sequence[ChunkOffsets], prefix: str = "none"
) -> Iterator[dict[str, Any]]:
    """One record per chunk: ``chunk_id, doc_id, start, end, text`` (``text ==
    doc.text[start:end]``), ``n_tokens``, ``headings`` (the path of Markdown headings the
    chunk starts under), ``pages`` (for paged documents) and, for a setting that embeds a
    title or heading prefix (``prefix``), ``embed_text``: what was embedded."""
    headings_of: dict[str, tuple[list[int], list[Any]]] = {}
    prefixers: dict[str, Prefixer] = {}
    for c in offsets:
        doc = documents[c.doc_id]
        if c.doc_id not in headings_of:
            heads = parse_headings(doc.text)
            headings_of[c.doc_id] = ([h.start for h in heads], heads)
            prefixers[c.doc_id] = Prefixer(prefix, doc)
        starts, heads = headings_of[c.doc_id]
        record: dict[str, Any] = {
            "chunk_id": c.chunk_id,
            "doc_id": c.doc_id,
            "start": c.start,
            "end": c.end,
            "text": doc.text[c.start : c.end],
            "n_tokens": c.n_tokens,
        }
        i = bisect.bisect_right(starts, c.start) - 1
        if i >= 0:
            record["headings"] = list(heads[i].path)
        head = prefixers[c.doc_id](c.start)
        if head:
            record["embed_text"] = f"{head}\n\n{record['text']}"
        pages = page_range(doc, c.start, c.end)
        if pages is not None:
            record["pages"] = pages
        yield record


def to_jsonl(records: Iterator[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
