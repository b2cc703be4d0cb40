"""Which file formats sweep reads, by which readers, chosen by name.

A format is known by its file suffix (any letter case); each has one or more
readers, the first of which is the default, and a config chooses one per
format (``dataset.reader.pdf=pdfplumber``). Readers are built here but import
their parsing libraries only when they first read a file, so importing this
module (and loading a corpus of plain text) stays fast.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import PurePath

from sweep.core.suggest import did_you_mean
from sweep.datasets.readers.base import Reader
from sweep.datasets.readers.html import HtmlReader, MarkitdownHtmlReader
from sweep.datasets.readers.office import OfficeReader
from sweep.datasets.readers.pdf import PypdfReader
from sweep.datasets.readers.pdfplumber_reader import PdfplumberReader
from sweep.datasets.readers.plain import TEXT_SUFFIXES, PlainTextReader

__all__ = ["DEFAULT_READERS", "FORMATS", "READERS", "format_of", "reader_for", "resolve_readers"]

#: Each format and the file suffixes (lower case) that are it.
FORMATS: dict[str, tuple[str, ...]] = {
    "pdf": (".pdf",),
    "html": (".html", ".htm", ".xhtml"),
    "docx": (".docx",),
    "pptx": (".pptx",),
    "xlsx": (".xlsx",),
    "text": TEXT_SUFFIXES,
}

#: Each format's readers by name, as factories.
READERS: dict[str, dict[str, Callable[[], Reader]]] = {
    "pdf": {"pypdf": PypdfReader, "pdfplumber": PdfplumberReader},
    "html": {"trafilatura": HtmlReader, "markitdown": MarkitdownHtmlReader},
    "docx": {"markitdown": lambda: OfficeReader("docx")},
    "pptx": {"markitdown": lambda: OfficeReader("pptx")},
    "xlsx": {"markitdown": lambda: OfficeReader("xlsx")},
    "text": {"text": PlainTextReader},
}

#: The reader of each format when a config names none.
DEFAULT_READERS: dict[str, str] = {fmt: next(iter(readers)) for fmt, readers in READERS.items()}

_BY_SUFFIX = {suffix: fmt for fmt, suffixes in FORMATS.items() for suffix in suffixes}


def format_of(filename: str) -> str | None:
    """The format of a file by its suffix (``Report.PDF`` is ``pdf``), or None when
    sweep reads no such files."""
    return _BY_SUFFIX.get(PurePath(filename).suffix.lower())


def reader_for(fmt: str, name: str) -> Reader:
    """A new reader ``name`` of format ``fmt``; ValueError for an unknown format or name,
    naming the valid ones."""
    if fmt not in READERS:
        raise ValueError(
            f"unknown format {fmt!r}{did_you_mean(fmt, READERS)}; formats: {', '.join(READERS)}"
        )
    readers = READERS[fmt]
    if name not in readers:
        raise ValueError(
            f"unknown {fmt} reader {name!r}{did_you_mean(name, readers)}; "
            f"{fmt} readers: {', '.join(readers)}"
        )
    return readers[name]()


def resolve_readers(choice: Mapping[str, str] | None) -> dict[str, Reader]:
    """A reader for every format: the one ``choice`` names for its format, else the
    default. ValueError for an unknown format or reader name."""
    choice = dict(choice or {})
    unknown = [fmt for fmt in choice if fmt not in READERS]
    if unknown:
        fmt = unknown[0]
        raise ValueError(
            f"unknown format {fmt!r}{did_you_mean(str(fmt), READERS)}; "
            f"formats: {', '.join(READERS)}"
        )
    for fmt, name in choice.items():
        if not isinstance(name, str):
            # (ValueError like every other bad setting: the loader reports those as config errors)
            raise ValueError(  # noqa: TRY004
                f"the {fmt} reader must be a name ({', '.join(READERS[fmt])}), got {name!r}"
            )
    return {
        fmt: reader_for(fmt, choice.get(fmt, default)) for fmt, default in DEFAULT_READERS.items()
    }
