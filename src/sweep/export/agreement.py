"""How closely an exported splitter reproduces a setting's chunks, document by document.

Both sides are compared as spans of the document with surrounding whitespace stripped
(frameworks strip it; sweep's token windows keep it), so "identical" means the same
characters in the same chunks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sweep.chunking.base import ChunkingSettingsError
from sweep.chunking.frameworks import read_chunks, split_function
from sweep.chunking.locate import locate_pieces
from sweep.core.textspans import strip_span
from sweep.core.types import Document
from sweep.reporting.selection import ExportError
from sweep.store.chunkfile import ChunkOffsets

__all__ = ["SplitterAgreement", "measure_agreement"]


@dataclass(frozen=True)
class SplitterAgreement:
    n_documents: int
    identical: int
    #: chunks of the setting the splitter also makes, over all documents
    shared: int
    n_chunks: int
    n_theirs: int
    #: (doc_id, sweep's chunks, the splitter's chunks, how many of them are the same)
    first_difference: tuple[str, int, int, int] | None
    #: the splitter's chunk texts that are not in their document, or not in order
    missing: int
    #: the setting's chunk ends (cut positions) that are also the splitter's
    shared_ends: int = 0

    @property
    def share(self) -> float:
        """Of the setting's chunks, the share the splitter makes too."""
        if not self.n_chunks:
            return 0.0 if self.n_theirs else 1.0
        return self.shared / self.n_chunks

    @property
    def close(self) -> bool:
        """Close enough that the sweep's scores speak for the splitter: 90% of chunks shared."""
        return self.share >= 0.9 and not self.missing

    def lines(self, name: str) -> list[str]:
        out = [
            f"Measured on the sweep's {self.n_documents} documents: identical chunks on "
            f"{self.identical} of {self.n_documents} documents; {self.shared} of the "
            f"setting's {self.n_chunks} chunks are also {name}'s ({self.n_theirs} in all); "
            f"{self.shared_ends} of its {self.n_chunks} cut positions are also {name}'s."
        ]
        if self.first_difference is not None:
            doc, mine, theirs, same = self.first_difference
            out.append(
                f"First difference: {doc}, where the setting makes {mine} chunks and "
                f"{name} {theirs}, {same} of them the same."
            )
        if self.missing:
            out.append(
                f"{self.missing} of {name}'s chunk texts could not be placed in their "
                "document (it rewrites, repeats or reorders text)."
            )
        return out


def measure_agreement(
    splitter: Any,
    framework: str,
    call: Mapping[str, Any],
    documents: Sequence[Document],
    offsets: Sequence[ChunkOffsets],
    *,
    takes_pages: bool = False,
) -> SplitterAgreement:
    """How many of the sweep's chunks the exported ``splitter`` makes again, document by
    document; ``takes_pages``: it is handed each paged document's pages, as the sweep's
    chunker had them (sweep's own chunker: chunk.strategy=page)."""
    try:
        split = split_function(framework, splitter, dict(call))
    except ChunkingSettingsError as e:  # the module built something that does not split
        raise ExportError(f"the exported module's splitter cannot split: {e}") from None
    by_doc: dict[str, list[tuple[int, int]]] = {}
    for c in offsets:
        by_doc.setdefault(c.doc_id, []).append((c.start, c.end))
    identical = shared = n_chunks = n_theirs = missing = shared_ends = 0
    first = None
    for doc in documents:
        mine = [strip_span(doc.text, a, b) for a, b in by_doc.get(doc.doc_id, [])]
        try:
            pages = doc.metadata.get("pages") if isinstance(doc.metadata, Mapping) else None
            made = splitter.split_text(doc.text, pages=pages) if takes_pages else split(doc.text)
            pieces, starts = read_chunks(made, "the exported splitter")
        except ChunkingSettingsError as e:
            raise ExportError(f"document {doc.doc_id!r}: {e}") from None
        except Exception as e:  # the exported splitter's own error, with the document
            raise ExportError(
                f"the exported splitter failed on document {doc.doc_id!r}: {type(e).__name__}: {e}"
            ) from None
        located = locate_pieces(doc.text, pieces, starts)
        theirs = list(located.spans)
        missing += len(located.missing) + len(located.unordered)
        same = len(set(mine) & set(theirs))
        shared_ends += len({b for _, b in mine} & {b for _, b in theirs})
        n_chunks += len(mine)
        n_theirs += len(theirs)
        shared += same
        if mine == theirs and not located.missing and not located.unordered:
            identical += 1
        elif first is None:
            first = (doc.doc_id, len(mine), len(theirs), same)
    return SplitterAgreement(
        len(documents), identical, shared, n_chunks, n_theirs, first, missing, shared_ends
    )
