"""How much one document file may cost to read, checked before a reader parses it.

A small file can hold a great deal: a 1 MB DOCX can unpack to 1 GB of XML, a 75 KB
PDF can draw one 70 MB content stream on each of its 1000 pages, a 1 MB XLSX can
place a cell on row 5,000,000. A parser given such a file runs for hours or until
memory runs out. So before a reader sees a file it is measured, without parsing it
and without keeping what it unpacks, and refused on one line that names the limit
(:class:`~sweep.datasets.readers.base.UnreadableFile`, so it is listed, or skipped
with ``dataset.skip_unreadable``, like any unreadable file):

- ``max_file_mb``: the file's own size (checked before it is read into memory);
- ``max_expanded_mb``: for DOCX, PPTX and XLSX, how much bigger than the file its
  parts are once unpacked (the sizes the zip's directory records; Python's zipfile
  never yields more than those), so that images, which barely compress, cost
  nothing here; for a PDF, the decoded page content its pages draw, a stream
  counted once for each page (and each form) that draws it, as the readers parse it;
- ``max_pages``: a PDF's pages, a PowerPoint deck's slides;
- ``max_blocks``: a Word file's paragraphs (those of table cells, headers and notes
  included), the cells of a workbook's sheets, counted as the rows times the columns
  each sheet spans (a single cell on row 5,000,000 makes the converter write every
  empty row above it).

Each limit bounds work, not time: the same file is read, or refused, on any machine,
however busy. The defaults are declared once, here (the config's ``null`` means
them). A text already in the extraction cache is not measured again: it costs
nothing to read.
"""

from __future__ import annotations

import io
import math
import os
import re
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from sweep.core.files import read_regular_bytes
from sweep.datasets.readers.base import UnreadableFile, inner_name

__all__ = ["LIMIT_KEYS", "ReadLimits", "check_limits", "read_document"]

_MB = 1024 * 1024
_CHUNK = 1 << 20  # bytes unpacked at a time while counting


@dataclass(frozen=True)
class ReadLimits:
    """The most one document file may hold (see the module): sizes in MB, counts."""

    max_file_mb: float = 100
    max_expanded_mb: float = 64
    max_pages: int = 5000
    max_blocks: int = 200_000

    @classmethod
    def of(cls, **values: Any) -> "ReadLimits":
        """Limits from a config's plain values, None meaning the default. ValueError,
        naming the setting, for an unknown name or a value that is not a positive
        number (a whole one for the counts)."""
        known = {f.name: f for f in fields(cls)}
        for name, value in values.items():
            if name not in known:
                raise ValueError(f"unknown setting dataset.{name}; limits: {', '.join(known)}")
            if value is None:
                continue
            whole = known[name].type == "int"
            if (isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value)
                    or not value > 0 or (whole and value != int(value))):
                what = "a positive whole number" if whole else "a positive number of MB"
                raise ValueError(f"dataset.{name} must be {what}, got {value!r}")
        return cls(**{name: (int(value) if known[name].type == "int" else float(value))
                      for name, value in values.items() if value is not None})


#: The config keys (``dataset.<key>``) of the limits.
LIMIT_KEYS: tuple[str, ...] = tuple(f.name for f in fields(ReadLimits))


def _refuse(what: str, key: str) -> UnreadableFile:
    option = "--" + key.replace("_", "-")
    return UnreadableFile(f"{what}: raise dataset.{key} ({option}) to read it")


def _mb(limit: float) -> str:
    return f"{limit:g} MB"


def read_document(path: Path, limits: ReadLimits) -> bytes:
    """The bytes of a document file; UnreadableFile when it is larger than
    ``max_file_mb``, before more than that is read."""
    cap = int(limits.max_file_mb * _MB)
    data = read_regular_bytes(path, limit=cap + 1)  # a FIFO put in its place never blocks
    if len(data) > cap:
        size = max(os.stat(path).st_size, len(data))
        raise _refuse(f"larger than {_mb(limits.max_file_mb)} ({size / _MB:,.1f} MB)",
                      "max_file_mb")
    return data


def check_limits(data: bytes, fmt: str | None, limits: ReadLimits) -> None:
    """Raises UnreadableFile when a file of format ``fmt`` with content ``data`` is
    beyond ``limits``. A file too damaged to measure passes: its reader says what is
    wrong with it."""
    if len(data) > limits.max_file_mb * _MB:
        raise _refuse(f"larger than {_mb(limits.max_file_mb)} ({len(data) / _MB:,.1f} MB)", "max_file_mb")
    if fmt in _ARCHIVE_CHECKS:
        try:
            archive = zipfile.ZipFile(io.BytesIO(data))
        except (zipfile.BadZipFile, OSError, ValueError, EOFError):
            return
        with archive:
            _check_expansion(archive, limits)
            _ARCHIVE_CHECKS[fmt](archive, limits)
    elif fmt == "pdf":
        _check_pdf(data, limits)


# --------------------------------------------------------------------------- DOCX, PPTX, XLSX


def _check_expansion(archive: zipfile.ZipFile, limits: ReadLimits) -> None:
    members = archive.infolist()
    unpacked = sum(m.file_size for m in members)
    if unpacked - sum(m.compress_size for m in members) > limits.max_expanded_mb * _MB:
        raise _refuse(f"expands by more than {_mb(limits.max_expanded_mb)} when unpacked "
                      f"(to {unpacked / _MB:,.0f} MB)", "max_expanded_mb")


def _xml_members(archive: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    return [m for m in archive.infolist() if m.filename.lower().endswith((".xml", ".rels"))]


def _tags(archive: zipfile.ZipFile, member: zipfile.ZipInfo,
          pattern: re.Pattern[bytes]) -> Iterator[re.Match[bytes]]:
    """Every match of ``pattern`` (a tag, matched whole) in one XML part, unpacked a
    chunk at a time: nothing is kept but the tail of a tag cut by a chunk's end."""
    try:
        stream = archive.open(member)
    except (zipfile.BadZipFile, NotImplementedError, RuntimeError, ValueError, OSError):
        return  # (encrypted or damaged: the reader says so)
    with stream:
        carry = b""
        while True:
            try:
                chunk = stream.read(_CHUNK)
            except (zipfile.BadZipFile, OSError, EOFError, ValueError):
                return
            if not chunk:
                return
            buffer = carry + chunk
            cut = buffer.rfind(b"<")
            if cut == -1 or b">" in buffer[cut:]:
                cut = len(buffer)
            yield from pattern.finditer(buffer, 0, cut)
            carry = buffer[cut:][:_CHUNK]  # (a tag longer than a chunk is no tag counted)


# Element names with any namespace prefix: a file may bind the prefix it likes.
_PARAGRAPH = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?p[\s/>]")
# A slide of the deck's list (p:sldId carries r:id; the p14:sldId of sections does not).
_SLIDE = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?sldId\s[^<>]*:id\s*=")
_ROW_OR_CELL = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?(row|c)(?=[\s/>])([^<>]*)>")
_REFERENCE = re.compile(rb"""(?:^|\s)(?:[\w.-]+:)?r\s*=\s*["']\s*([A-Za-z]{0,3})(\d{0,7})""")


def _check_docx(archive: zipfile.ZipFile, limits: ReadLimits) -> None:
    count = 0
    for member in _xml_members(archive):
        for _ in _tags(archive, member, _PARAGRAPH):
            count += 1
            if count > limits.max_blocks:
                raise _refuse(f"has more than {limits.max_blocks:,} paragraphs", "max_blocks")


def _check_pptx(archive: zipfile.ZipFile, limits: ReadLimits) -> None:
    count = 0
    for member in _xml_members(archive):
        for _ in _tags(archive, member, _SLIDE):
            count += 1
            if count > limits.max_pages:
                raise _refuse(f"has more than {limits.max_pages:,} slides", "max_pages")


def _check_xlsx(archive: zipfile.ZipFile, limits: ReadLimits) -> None:
    """The cells the sheets span: per sheet its last row times its widest column, as a
    converter lays a sheet out as one table (a cell or row without a reference follows
    the one before, as spreadsheet programs read it)."""
    spanned = 0
    for member in _xml_members(archive):
        rows = columns = row = column = 0
        for match in _tags(archive, member, _ROW_OR_CELL):
            letters, digits = _reference(match.group(2))
            if match.group(1) == b"row":
                row, column = (int(digits) if digits else row + 1), 0
            else:
                column = _column_number(letters) if letters else column + 1
                row = int(digits) if digits else max(row, 1)
                columns = max(columns, column)
            rows = max(rows, row)
            if spanned + rows * columns > limits.max_blocks:
                raise _refuse(f"its sheets span more than {limits.max_blocks:,} cells "
                              f"({inner_name(member.filename)}: {rows:,} rows by {columns:,} columns, "
                              "or more)",
                              "max_blocks")
        spanned += rows * columns


def _reference(attributes: bytes) -> tuple[bytes, bytes]:
    match = _REFERENCE.search(attributes)
    return (match.group(1), match.group(2)) if match is not None else (b"", b"")


def _column_number(letters: bytes) -> int:
    number = 0
    for letter in letters.upper():
        number = number * 26 + letter - ord("A") + 1
    return number


_ARCHIVE_CHECKS = {"docx": _check_docx, "pptx": _check_pptx, "xlsx": _check_xlsx}


# --------------------------------------------------------------------------- PDF


def _check_pdf(data: bytes, limits: ReadLimits) -> None:
    import pypdf

    from sweep.datasets.readers.pdf import quiet_pdf_logs

    with quiet_pdf_logs():
        try:
            reader = pypdf.PdfReader(io.BytesIO(data))
            if reader.is_encrypted and not reader.decrypt(""):
                return
            pages = len(reader.pages)
        except Exception:  # noqa: BLE001 - a damaged or encrypted file: the reader says so
            return
        if pages > limits.max_pages:
            raise _refuse(f"has {pages:,} pages, more than {limits.max_pages:,}", "max_pages")
        budget = int(limits.max_expanded_mb * _MB)
        content = _PageContent()
        drawn = 0
        for number in range(pages):
            try:
                drawn += content.of_page(reader.pages[number])
            except Exception:  # noqa: BLE001 - a damaged page: the reader says so, the others count
                continue
            if drawn > budget:
                raise _refuse(f"expands to more than {_mb(limits.max_expanded_mb)} of page content "
                              "(decoded, for each page that draws it)", "max_expanded_mb")


# A form XObject drawn by a content stream: "/Fm1 Do".
_DO = re.compile(rb"/([^\s/\[\]()<>{}%]+)\s*Do\b")


class _PageContent:
    """The decoded size of what a page's content makes a reader parse: its content
    streams and, each time it is drawn, every form they draw (forms drawing forms
    included). A form's size is measured once; a form drawing itself counts once. What
    cannot be resolved or decoded counts nothing (no reader parses it either) and does
    not stop the rest from being counted."""

    def __init__(self) -> None:
        self._forms: dict[tuple[int, int], int] = {}
        self._open: set[tuple[int, int]] = set()

    def of_page(self, page: Any) -> int:
        contents = _resolved(page.get("/Contents"))
        streams = list(contents) if isinstance(contents, list) else [contents]
        resources = page.get("/Resources")
        return sum(self._stream(_resolved(s), resources) for s in streams)

    def _stream(self, stream: Any, resources: Any) -> int:
        if not hasattr(stream, "get_data"):
            return 0
        from pypdf import get_configuration
        from pypdf.errors import LimitReachedError

        try:
            data = stream.get_data()
        except LimitReachedError:
            # Larger decoded than pypdf decodes (75 MB); pdfminer would go on.
            return get_configuration().zlib_maximum_output_length + 1
        except Exception:  # noqa: BLE001 - undecodable: no reader parses it either
            return 0
        stream.decoded_self = None  # (pypdf would keep every decoded stream: one at a time)
        size = len(data)
        forms = _form_xobjects(resources)
        if forms:
            for name in _DO.findall(data):
                form = forms.get("/" + name.decode("latin-1"))
                if form is not None:
                    size += self._form(form, resources)
        return size

    def _form(self, reference: Any, resources: Any) -> int:
        key = (reference.idnum, reference.generation) if hasattr(reference, "idnum") else (id(reference), 0)
        if key in self._forms:
            return self._forms[key]
        if key in self._open:
            return 0  # a form drawing itself: readers stop there
        self._open.add(key)
        try:
            form = _resolved(reference)
            own = form.get("/Resources") if hasattr(form, "get") else None
            size = self._stream(form, own if own is not None else resources)
        finally:
            self._open.discard(key)
        self._forms[key] = size
        return size


def _resolved(value: Any) -> Any:
    """A PDF object behind a reference, or None when it cannot be read."""
    try:
        return value.get_object() if value is not None else None
    except Exception:  # noqa: BLE001 - a damaged reference
        return None


def _form_xobjects(resources: Any) -> dict[str, Any]:
    """The form XObjects of ``resources`` by name (``/Fm1``)."""
    try:
        xobjects = _resolved(_resolved(resources).get("/XObject")) if resources is not None else None
        return {str(name): reference for name, reference in (xobjects or {}).items()
                if _resolved(reference).get("/Subtype") == "/Form"}
    except Exception:  # noqa: BLE001 - damaged resources: no reader draws from them either
        return {}
