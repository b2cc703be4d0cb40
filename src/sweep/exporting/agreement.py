"""How closely an exported splitter reproduces a setting's chunks, document by document.

Both sides are compared as spans of the document with surrounding whitespace stripped
(frameworks strip it; sweep's token windows keep it), so "identical" means the same
characters in the same chunks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from sweep.chunking.frameworks import split_function, chunk_texts
from sweep.chunking.locate import locate_pieces
from sweep.core.types import Document
from sweep.store.chunkfile import ChunkOffsets

__all__ = ["Agreement", "measure_agreement"]


@dataclass(frozen=True)
class Agreement:
    n_documents: int
    identical: int
    #: chunks of the setting the splitter also makes, over all documents
    shared: int
    n_chunks: int
    n_theirs: int
    #: (doc_id, sweep's chunks, the splitter's chunks, how many of them are the same)
    first_difference: tuple[str, int, int, int] | None
    missing: int

    def lines(self, name: str) -> list[str]:
        out = [f"Measured on the sweep's {self.n_documents} documents: identical chunks on "
               f"{self.identical} of {self.n_documents} documents; {self.shared} of the "
               f"setting's {self.n_chunks} chunks are also {name}'s ({self.n_theirs} in all)."]
        if self.first_difference is not None:
            doc, mine, theirs, same = self.first_difference
            out.append(f"First difference: {doc}, where the setting makes {mine} chunks and "
                       f"{name} {theirs}, {same} of them the same.")
        if self.missing:
            out.append(f"{self.missing} of {name}'s chunk texts are not in their document "
                       "(it rewrites text).")
        return out


def _strip(text: str, a: int, b: int) -> tuple[int, int]:
    while a < b and text[a].isspace():
        a += 1
    while b > a and text[b - 1].isspace():
        b -= 1
    return a, b


def measure_agreement(splitter: Any, framework: str, call: Mapping[str, Any],
                      documents: Sequence[Document], offsets: Sequence[ChunkOffsets]
                      ) -> Agreement:
    split = split_function(framework, splitter, dict(call))
    by_doc: dict[str, list[tuple[int, int]]] = {}
    for c in offsets:
        by_doc.setdefault(c.doc_id, []).append((c.start, c.end))
    identical = shared = n_chunks = n_theirs = missing = 0
    first = None
    for doc in documents:
        mine = [_strip(doc.text, a, b) for a, b in by_doc.get(doc.doc_id, [])]
        located = locate_pieces(doc.text, chunk_texts(split(doc.text), "the splitter"))
        theirs = list(located.spans)
        missing += len(located.missing)
        same = len(set(mine) & set(theirs))
        n_chunks += len(mine)
        n_theirs += len(theirs)
        shared += same
        if mine == theirs and not located.missing:
            identical += 1
        elif first is None:
            first = (doc.doc_id, len(mine), len(theirs), same)
    return Agreement(len(documents), identical, shared, n_chunks, n_theirs, first, missing)
