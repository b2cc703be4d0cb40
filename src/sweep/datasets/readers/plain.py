"""Plain text and Markdown, read as the bytes say: UTF-8, nothing normalised.

Every offset of a dataset (evidence spans, chunk spans) counts characters of the
text exactly as stored, so this reader decodes and stops there: ``\\r\\n`` stays two
characters and a byte-order mark stays in the text (the title drops it). A file
that is not UTF-8 is refused rather than guessed at: a wrong guess would shift
every offset after the first non-ASCII character.
"""

from __future__ import annotations

from pathlib import PurePath

from sweep.datasets.readers.base import Extracted, UnreadableFile
from sweep.datasets.readers.markdown import markdown_headings

__all__ = ["TEXT_SUFFIXES", "PlainTextReader"]

#: Suffixes read as text (lower case): Markdown, plain text and the other light markups.
TEXT_SUFFIXES: tuple[str, ...] = (
    ".md",
    ".markdown",
    ".txt",
    ".text",
    ".rst",
    ".adoc",
    ".asciidoc",
    ".org",
    ".tex",
    ".wiki",
)

# 2: headings by the one shared parser (setext headings listed, BOM at 0)
_RECIPE = 2


class PlainTextReader:
    """UTF-8 text as it is; Markdown ``#`` lines are its headings."""

    name = "text"

    @property
    def version(self) -> str:
        return f"text+recipe{_RECIPE}"

    def read(self, data: bytes, filename: str) -> Extracted:
        if not data:
            raise UnreadableFile("empty file")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            line = data.count(b"\n", 0, e.start) + 1
            raise UnreadableFile(
                f"not valid UTF-8 (byte 0x{data[e.start]:02x} on line {line})"
            ) from None
        if not text.removeprefix("\ufeff").strip():
            raise UnreadableFile("document is empty")
        return Extracted(text=text, title=_title(text, filename), headings=markdown_headings(text))


def _title(text: str, filename: str) -> str:
    # As the loader titles a text file: a '# ' first line, else the file's stem.
    first = text.removeprefix("\ufeff").split("\n", 1)[0].rstrip("\r")
    if first.startswith("# ") and first[2:].strip():
        return first[2:].strip()
    return PurePath(filename).stem
