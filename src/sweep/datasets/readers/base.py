"""What every document reader returns, and the one protocol readers implement.

A reader turns a file's bytes into the text that every offset of the dataset
indexes: chunk spans, evidence spans, quotes located in it. Paged formats also
say where each page's text lies, so a trace can say ``p. 3``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from sweep.core.errors import BadInput

__all__ = ["Extracted", "ExtractedHeading", "Reader", "UnreadableFile"]


@dataclass(frozen=True)
class ExtractedHeading:
    """A heading of the extracted text: its level (1 for ``#``), its title, where its line starts."""

    level: int
    title: str
    start: int


@dataclass(frozen=True)
class Extracted:
    """A document's text as a reader made it.

    ``pages[i]`` is the ``(start, end)`` character range of page ``i + 1`` in
    ``text`` (empty for formats without pages); ranges are in order and do not
    overlap. ``page_labels[i]`` is the label page ``i + 1`` prints (a PDF's page labels:
    ``iv``, ``A-3``; an XLSX sheet's name), one per page, or empty when the file has none
    (its pages are just numbered 1 to n). ``headings`` are the Markdown headings of ``text`` (readers of
    structured formats write headings as ``#`` lines so ``chunk=markdown`` and
    heading prefixes work on them). ``warnings`` say, one line each and without the
    path, what of the file the text does not hold as the file says it (text a parser
    could not reach, bytes that are not what the file declares); the loader logs them
    with the path.
    """

    text: str
    title: str = ""
    headings: tuple[ExtractedHeading, ...] = ()
    pages: tuple[tuple[int, int], ...] = ()
    warnings: tuple[str, ...] = ()
    page_labels: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.page_labels and len(self.page_labels) != len(self.pages):
            raise ValueError(
                f"{len(self.page_labels)} page labels for {len(self.pages)} pages: "
                "one label per page, or none"
            )

    def page_of(self, offset: int) -> int | None:
        """The 1-based page holding character ``offset``, or None (no pages, or between pages)."""
        for number, (start, end) in enumerate(self.pages, 1):
            if start <= offset < end:
                return number
        return None


class UnreadableFile(BadInput):
    """A file a reader cannot turn into text. ``str()`` is the reason on one line, without
    the path (the loader adds it): ``encrypted PDF: ...``, ``no text layer: OCR is not
    supported; convert it first``, ``corrupt DOCX: ...``, ``empty file``."""


@runtime_checkable
class Reader(Protocol):
    """Turns the bytes of one file format into :class:`Extracted` text.

    ``name`` is what a config chooses it by (``dataset.reader.pdf=pdfplumber``);
    ``version`` changes whenever the same bytes could give a different text (the
    library's version and the reader's own recipe), so cached extractions of an
    older version are not reused.
    """

    name: str

    @property
    def version(self) -> str: ...

    def read(self, data: bytes, filename: str) -> Extracted:
        """The text of a file whose content is ``data`` (``filename`` only for messages
        and format hints). Raises :class:`UnreadableFile`."""
        ...
