"""The pages of a paged document and the pages a span of its text lies on.

A reader of a paged format records where each page's text lies
(``Document.metadata["pages"]``: ``[start, end]`` of page ``i + 1`` at index ``i``; PDF
pages, PPTX slides, XLSX sheets) and, where the file has them, the label each page
prints (``metadata["page_labels"]``: a PDF's ``iv`` or ``A-3``, a sheet's name). A
document written into a ``corpus.jsonl`` may carry the same two keys. Pages do not
overlap; the separator between two pages belongs to neither, and a page without text is
an empty range where it would have been.

A span's pages are the pages whose text it overlaps: those are its units at the ``page``
level. A span that lies wholly between two pages' texts (a separator) is on the page
before it, the one whose text it follows, or the page after it when none comes before.
A page without text holds no span.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sweep.core.checks import is_int
from sweep.core.types import Document

__all__ = ["document_page_labels", "document_pages", "pages_of_span"]


def document_pages(document: Document) -> tuple[tuple[int, int], ...]:
    """Each page's ``(start, end)`` in ``document.text``; empty for a document without pages
    or whose ``metadata["pages"]`` is not a list of in-order, non-overlapping ranges within
    its text (a hand-written ``corpus.jsonl`` row may hold anything)."""
    meta = document.metadata if isinstance(document.metadata, Mapping) else {}
    raw = meta.get("pages")
    if not isinstance(raw, (list, tuple)) or not raw:
        return ()
    pages: list[tuple[int, int]] = []
    position = 0
    for item in raw:
        if not (
            isinstance(item, (list, tuple))
            and len(item) == 2
            and all(is_int(x) for x in item)
            and position <= item[0] <= item[1] <= len(document.text)
        ):
            return ()
        pages.append((int(item[0]), int(item[1])))
        position = item[1]
    return tuple(pages)


def document_page_labels(document: Document) -> tuple[str, ...]:
    """The label each page of ``document`` prints, one per page of :func:`document_pages`;
    empty when it has none (its pages are numbered 1 to n)."""
    meta = document.metadata if isinstance(document.metadata, Mapping) else {}
    raw: Any = meta.get("page_labels")
    if (
        not isinstance(raw, (list, tuple))
        or not raw
        or not all(isinstance(label, str) for label in raw)
        or len(raw) != len(document_pages(document))
    ):
        return ()
    return tuple(raw)


def pages_of_span(
    pages: Sequence[tuple[int, int]], start: int, end: int
) -> tuple[tuple[int, int, int], ...]:
    """``(number, start, end)`` (1-based) of every page whose text ``start:end`` overlaps;
    for a span between pages' texts, the page before it (else the one after); empty when
    no page has text."""
    on = tuple(
        (number, a, b) for number, (a, b) in enumerate(pages, 1) if a < b and a < end and start < b
    )
    if on or start >= end:
        return on
    before = [(number, a, b) for number, (a, b) in enumerate(pages, 1) if a < b and b <= start]
    if before:
        return (before[-1],)
    after = [(number, a, b) for number, (a, b) in enumerate(pages, 1) if a < b and a >= end]
    return tuple(after[:1])
