"""How much one document file may cost to read, checked before a reader parses it.

A small file can hold a great deal: a 1 MB DOCX can unpack to 1 GB of XML, a 75 KB
PDF can draw one 70 MB content stream on each of its 1000 pages, a 1 MB XLSX can
place a cell on row 5,000,000, a deck can list one big slide 5000 times. A parser
given such a file runs for hours or until memory runs out. So before a reader sees a
file it is measured, without parsing it and without keeping what it unpacks, and
refused on one line that names the limit (:class:`~sweep.datasets.readers.base.UnreadableFile`,
so it is listed, or skipped with ``dataset.skip_unreadable``, like any unreadable file):

- ``max_file_mb``: the file's own size (checked before it is read into memory);
- ``max_expanded_mb``: for DOCX, PPTX and XLSX, how much bigger than the file its
  parts are once unpacked (the sizes the zip's directory records; Python's zipfile
  never yields more than those), so that images, which barely compress, cost
  nothing here; for a web page, its decoded text; for a PDF, the decoded page
  content its pages draw, a stream counted once for each page (and each form) that
  draws it, plus the character maps its fonts make a reader parse. A PDF reader reads
  only its share of the setting (:data:`PDF_SHARES`): pdfplumber holds about 2 GB
  per MB of a page's content, pypdf's time grows faster than a page's content;
- ``max_pages``: a PDF's pages, a PowerPoint deck's slides;
- ``max_blocks``: the pieces a converter builds an object for, each costing it up to
  about the same: a Word file's and a deck's XML elements (paragraphs, runs, table
  cells, shapes and every other element), a web page's tags, and for a workbook the
  cells its sheets span (rows times the widest row, the empty cells a converter
  writes included) plus an eighth of its XML elements. A part counts once for each
  time the converter reads it: a slide for each time the deck lists it (and its notes
  and charts with it), a sheet for each time the workbook lists it, a Word footnote,
  endnote or comment for each reference to it; a placeholder on a slide adds the
  placeholders of its layout and master, which the converter looks through for it. A
  workbook's shared string counts toward ``max_expanded_mb`` once for each cell that
  shows it.

XML is measured as its parsers read it: in the encoding it declares (UTF-16 too), an
attribute with its character and entity references decoded, a row number as openpyxl
reads it (``5e6`` is row 5,000,000).

Each limit bounds work, not time: the same file is read, or refused, on any machine,
however busy. The defaults are declared once, here (the config's ``null`` means
them), and come from measured costs (``bench/reading_costs.py``; docs/documents.md
gives the numbers). A text already in the extraction cache is not measured again: it
costs nothing to read.
"""

from __future__ import annotations

import codecs
import io
import itertools
import math
import os
import posixpath
import re
import struct
import zipfile
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, get_type_hints

from sweep.core.files import read_regular_bytes
from sweep.core.messages import visible
from sweep.datasets.readers.base import UnreadableFile

__all__ = ["LIMIT_KEYS", "PDF_SHARES", "ReadLimits", "check_limits", "read_document"]

_MB = 1024 * 1024
_CHUNK = 1 << 20  # bytes unpacked at a time while counting


@dataclass(frozen=True)
class ReadLimits:
    """The most one document file may hold (see the module): sizes in MB, counts."""

    max_file_mb: float = 100
    max_expanded_mb: float = 32
    max_pages: int = 5000
    max_blocks: int = 100_000

    @classmethod
    def of(cls, **values: Any) -> ReadLimits:
        """Limits from a config's plain values, None meaning the default. ValueError,
        naming the setting, for an unknown name or a value that is not a positive
        number (a whole one for the counts) up to a sane maximum."""
        known = {f.name for f in fields(cls)}
        for name, value in values.items():
            if name not in known:
                raise ValueError(f"unknown setting dataset.{name}; limits: {', '.join(known)}")
            if value is None:
                continue
            whole = name in _WHOLE
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not math.isfinite(value)
                or not value > 0
                or (whole and value != int(value))
            ):
                what = "a positive whole number" if whole else "a positive number of MB"
                raise ValueError(f"dataset.{name} must be {what}, got {value!r}")
            most = _MOST_COUNT if whole else _MOST_MB
            if value > most:
                raise ValueError(
                    f"dataset.{name} must be at most {most:,}{'' if whole else ' MB'}, "
                    f"got {value:g}"
                )
        return cls(
            **{
                name: (int(value) if name in _WHOLE else float(value))
                for name, value in values.items()
                if value is not None
            }
        )


# The counts (whole numbers) among the limits, from the declared types.
_WHOLE = frozenset(name for name, kind in get_type_hints(ReadLimits).items() if kind is int)
# Beyond these a setting is a typo, not a limit: a million MB is a terabyte.
_MOST_MB = 1_000_000
_MOST_COUNT = 1_000_000_000

#: The config keys (``dataset.<key>``) of the limits.
LIMIT_KEYS: tuple[str, ...] = tuple(f.name for f in fields(ReadLimits))

#: What each PDF reader may read of ``max_expanded_mb``: one over (its share for the
#: whole file, its share for one page). From measured costs (``bench/reading_costs.py``,
#: docs/documents.md): per MB of the costliest page content, pdfplumber takes about
#: 95 s and holds 2 GB (one page at a time), so it reads a 64th (0.5 MB by default);
#: pypdf takes about 8 s per MB on pages of up to 0.5 MB and more per MB on bigger
#: pages (its time grows faster than a page's text), so it reads an eighth in all and
#: a 64th on one page. A reader not listed gets the smallest shares.
PDF_SHARES: dict[str, tuple[int, int]] = {"pypdf": (8, 64), "pdfplumber": (64, 64)}


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
        raise _refuse(
            f"larger than {_mb(limits.max_file_mb)} ({size / _MB:,.1f} MB)", "max_file_mb"
        )
    return data


def check_limits(
    data: bytes, fmt: str | None, limits: ReadLimits, reader: str | None = None
) -> None:
    """Raises UnreadableFile when a file of format ``fmt`` with content ``data`` is
    beyond ``limits`` for the reader named ``reader`` (which matters for PDFs:
    :data:`PDF_SHARES`). A file too damaged to measure passes: its reader says what is
    wrong with it."""
    if len(data) > limits.max_file_mb * _MB:
        raise _refuse(
            f"larger than {_mb(limits.max_file_mb)} ({len(data) / _MB:,.1f} MB)", "max_file_mb"
        )
    if fmt in _OFFICE:
        try:
            archive = zipfile.ZipFile(io.BytesIO(data))
        except (zipfile.BadZipFile, OSError, ValueError, EOFError):
            return
        with archive:
            _check_expansion(archive, limits)
            _Package(archive, fmt, limits).check()
    elif fmt == "html":
        _check_html(data, limits)
    elif fmt == "pdf":
        _check_pdf(data, limits, reader)


# --------------------------------------------------------------------------- XML, as parsers read it


# A start tag, matched whole: its name and its attributes (a quoted value may hold ">",
# never "<"). End tags, comments, declarations and processing instructions are not.
_START_TAG = re.compile(rb"""<([^\s/<>!?"'=][^\s/<>"'=]*)((?:[^<>"']|"[^"<]*"|'[^'<]*')*)>""")
_ATTRIBUTE = re.compile(rb"""([^\s=/<>"']+)\s*=\s*(?:"([^"<]*)"|'([^'<]*)')""")
_REFERENCE = re.compile(r"&(?:#([0-9]+)|#[xX]([0-9A-Fa-f]+)|(lt|gt|amp|quot|apos));")
_PREDEFINED = {"lt": "<", "gt": ">", "amp": "&", "quot": '"', "apos": "'"}
# What the first bytes of an XML part say of its encoding (XML 1.0, appendix F), longest first.
_SNIFFED = (
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x4c\x6f\xa7\x94", "cp037"),  # ("<?xm" in EBCDIC, which libxml2 reads)
    (b"\x00\x00\x00<", "utf-32-be"),
    (b"<\x00\x00\x00", "utf-32-le"),
    (b"\xfe\xff", "utf-16-be"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\x00<\x00?", "utf-16-be"),
    (b"<\x00?\x00", "utf-16-le"),
)
_DECLARED = re.compile(rb"""\A(?:\xef\xbb\xbf)?\s*<\?xml[^>]*?\sencoding\s*=\s*["']([^"']*)["']""")
_PROBE = '<a b="1"/>'
_LONGEST_TAG = 1 << 20  # no Office part holds a tag of a megabyte
_TEXT = 64  # the text after a tag that is kept: enough for a number (a shared string's)
# What unpacking a damaged or encrypted member raises.
_UNPACKING = (
    zipfile.BadZipFile,
    zlib.error,
    NotImplementedError,
    RuntimeError,
    ValueError,
    OSError,
    EOFError,
)


def _xml_chunks(stream: Any, head: bytes, name: str) -> Iterator[bytes] | None:
    """The rest of an XML part, ``head`` its first bytes, as chunks in which markup is
    ASCII (decoded and encoded as UTF-8 when the part is in UTF-16, UTF-32 or another
    encoding that is not ASCII-compatible); None when the part is not XML."""
    encoding = next((codec for bom, codec in _SNIFFED if head.startswith(bom)), None)
    if encoding is None and (declared := _DECLARED.match(head)) is not None:
        label = declared.group(1).decode("ascii", "replace")
        try:
            codec = codecs.lookup(label).name
        except LookupError:
            raise UnreadableFile(
                f"{visible(name)} declares the encoding '{visible(label)}', "
                "which cannot be measured"
            ) from None
        if _PROBE.encode(codec, "replace") != _PROBE.encode("ascii"):
            encoding = codec
    if encoding is None:
        if not head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<"):
            return None
        return _chained(head, stream)
    decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
    if not decoder.decode(head[:64]).lstrip("\ufeff \t\r\n").startswith("<"):
        return None
    decoder.reset()
    return (
        decoder.decode(chunk, final=not chunk).encode("utf-8", "surrogatepass")
        for chunk in itertools.chain(_chained(head, stream), [b""])
    )


def _chained(head: bytes, stream: Any) -> Iterator[bytes]:
    yield head
    while chunk := stream.read(_CHUNK):
        yield chunk


def _start_tags(
    archive: zipfile.ZipFile, member: zipfile.ZipInfo
) -> Iterator[tuple[bytes, bytes, int, bytes]]:
    """The name, the attributes, the offset and the start of the text that follows (up to
    ``_TEXT`` bytes) of every start tag of one part that is XML, whatever its name (a
    parser finds a part by its relationships), then ``(b"", b"", the part's length, b"")``;
    unpacked a chunk at a time: nothing is kept but the tail of a tag cut by a chunk's end
    (or a tag whose text the chunk's end may cut)."""
    try:
        stream = archive.open(member)
    except _UNPACKING:
        return  # (encrypted or damaged: the reader says so)
    with stream:
        try:
            chunks = _xml_chunks(stream, stream.read(_CHUNK), member.filename)
            if chunks is None:
                return
            carry, offset = b"", 0  # (offset: where the carry starts in the part)
            for chunk in itertools.chain(chunks, [None]):
                last = chunk is None
                buffer = carry + (chunk or b"")
                keep = None  # (where what is carried to the next chunk starts)
                end = 0
                for match in _START_TAG.finditer(buffer):
                    text_end = buffer.find(b"<", match.end(), match.end() + _TEXT)
                    if text_end == -1 and len(buffer) - match.end() < _TEXT and not last:
                        keep = match.start()  # (its text may go on in the next chunk)
                        break
                    yield (
                        match.group(1),
                        match.group(2),
                        offset + match.start(),
                        buffer[match.end() : text_end if text_end != -1 else match.end() + _TEXT],
                    )
                    end = match.end()
                if keep is None:
                    cut = buffer.rfind(b"<", end)
                    keep = cut if cut != -1 else len(buffer)
                carry, offset = buffer[keep:], offset + keep
                if len(carry) > _LONGEST_TAG:
                    raise UnreadableFile(
                        f"{visible(member.filename)} holds an XML tag longer than "
                        "1 MB, which cannot be measured"
                    )
            yield b"", b"", offset + len(carry), b""
        except _UNPACKING:
            return


def _attributes(raw: bytes) -> dict[bytes, str]:
    """A tag's attributes by name as written (``r:id``), each value as a parser gives it."""
    return {
        match.group(1): _value(match.group(2) if match.group(2) is not None else match.group(3))
        for match in _ATTRIBUTE.finditer(raw)
    }


def _value(raw: bytes) -> str:
    """An attribute's value as a parser gives it: line breaks and tabs as spaces, character
    and predefined entity references decoded."""
    text = raw.decode("utf-8", "replace")
    if "\t" in text or "\n" in text or "\r" in text:
        text = re.sub(r"[\t\r\n]", " ", text)
    return _REFERENCE.sub(_referenced, text) if "&" in text else text


def _referenced(match: re.Match[str]) -> str:
    if match.group(3):
        return _PREDEFINED[match.group(3)]
    code = int(match.group(1)) if match.group(1) else int(match.group(2), 16)
    return chr(code) if 0 < code <= 0x10FFFF else "\ufffd"


def _local(name: bytes) -> bytes:
    return name.rpartition(b":")[2]


def _ids(attributes: dict[bytes, str], *, prefixed: bool) -> tuple[str, ...]:
    """The values of a tag's ``id`` attributes (``prefixed``: only those in a namespace,
    as ``r:id``, whatever prefix the file binds to it)."""
    return tuple(
        value
        for name, value in attributes.items()
        if _local(name) == b"id" and (not prefixed or b":" in name)
    )


def _row_number(value: str | None, previous: int) -> int:
    """The row a ``<row>`` starts, as openpyxl reads its ``r`` (a whole float too: ``5e6``);
    one that it cannot read (it refuses the file) as the next row."""
    if value is None:
        return previous + 1
    try:
        return int(value)
    except ValueError:
        try:
            number = float(value)
        except ValueError:
            return previous + 1
        return int(number) if number.is_integer() else previous + 1


def _cell(value: str | None, row: int, column: int) -> tuple[int, int]:
    """The (row, column) of a ``<c>``, as openpyxl reads its ``r``; without one the next
    column of the row."""
    if value is not None and (plain := _PLAIN_CELL.match(value)) is not None:
        number = 0
        for letter in plain.group(1):
            number = number * 26 + ord(letter) - 64
        return int(plain.group(2)), number
    if value is not None:
        from openpyxl.utils.cell import coordinate_to_tuple

        try:
            return coordinate_to_tuple(value.strip())
        except (ValueError, TypeError, KeyError, IndexError):
            pass  # (openpyxl refuses the file: its reader says so)
    return row, column + 1


# A sheet's row or cell reference, a cell's type: the "r" and "t" attributes, unprefixed as
# openpyxl reads them.
_R = re.compile(rb"""(?:^|\s)r\s*=\s*(?:"([^"<]*)"|'([^'<]*)')""")
_T = re.compile(rb"""(?:^|\s)t\s*=\s*(?:"([^"<]*)"|'([^'<]*)')""")
# A cell reference as Excel writes it ("AB12"), read here as openpyxl reads it; any other
# goes to openpyxl itself.
_PLAIN_CELL = re.compile(r"\A([A-Z]{1,3})([0-9]{1,7})\Z")


def _extent(ref: str) -> tuple[int, int]:
    """The last row and column of a ``<dimension ref="A1:J20">`` (older pandas lays a
    sheet out by it)."""
    from openpyxl.utils.cell import range_boundaries

    try:
        _, _, columns, rows = range_boundaries(ref.strip())
    except (ValueError, TypeError, KeyError, IndexError):
        return 0, 0
    return rows or 0, columns or 0


# --------------------------------------------------------------------------- DOCX, PPTX, XLSX


def _check_expansion(archive: zipfile.ZipFile, limits: ReadLimits) -> None:
    members = archive.infolist()
    unpacked = sum(m.file_size for m in members)
    if unpacked - sum(m.compress_size for m in members) > limits.max_expanded_mb * _MB:
        raise _refuse(
            f"expands by more than {_mb(limits.max_expanded_mb)} when unpacked "
            f"(to {unpacked / _MB:,.0f} MB)",
            "max_expanded_mb",
        )


class _Part:
    """What one XML part holds that the limits count, gathered while it is scanned."""

    __slots__ = (
        "columns",
        "elements",
        "note",
        "notes",
        "placeholders",
        "references",
        "relationships",
        "row",
        "rows",
        "shared_cell",
        "shown",
        "strings",
        "widest",
    )

    def __init__(self) -> None:
        self.elements = 0
        self.placeholders = 0  # <p:ph>: a shape that looks through its layout and master
        self.rows = self.widest = 0  # the sheet its rows and cells lay out
        self.row = self.columns = 0  # (the row and column being read)
        self.references: list[tuple[bytes, tuple[str, ...]]] = []  # (what, the ids it names)
        self.note: tuple[bytes, str] | None = None  # the footnote, endnote or comment being read
        self.notes: Counter[tuple[bytes, str]] = Counter()  # their elements, by (kind, id)
        # Id: the (type, target part) of a .rels, each (an Id written twice leads to both)
        self.relationships: dict[str, list[tuple[str, str]]] = {}
        self.strings: list[int] = []  # the bytes of each shared string, in order
        self.shown: Counter[int] = Counter()  # cells showing each shared string, by its index
        self.shared_cell = False  # (the cell being read shows a shared string)

    def spanned(self) -> int:
        """The cells a converter writes for this sheet: its rows, each as wide as the
        widest (and one more: an empty row costs a row)."""
        return max(self.rows, 0) * (max(self.widest, 0) + 1)


# Word's references to a note or comment, by the kind of note they name.
_NOTE_REFERENCES = {
    b"footnoteReference": b"footnote",
    b"endnoteReference": b"endnote",
    b"commentReference": b"comment",
}
# References by relationship id: a slide of the deck's list, a chart on a slide, a sheet
# of the workbook's list.
_LISTED = (b"sldId", b"chart", b"sheet")
# A part's relationships: "word/_rels/document.xml.rels" are those of "word/document.xml".
_RELATIONSHIPS = re.compile(r"\A(.*?)_rels/([^/]*)\.rels\Z")
# Counted at a time while a part is scanned, between looks at the running total.
_STEP = 4096


class _Package:
    """The XML parts of an Office file, counted as its converter reads them (see the
    module): what each holds, then how many times the converter reads each."""

    def __init__(self, archive: zipfile.ZipFile, fmt: str, limits: ReadLimits) -> None:
        self.archive, self.fmt, self.limits = archive, fmt, limits
        self.parts: dict[str, _Part] = {}
        self.kinds: dict[str, set[str]] = {}  # the types of the relationships leading to each part
        self.rendered: set[str] = set()  # the parts read as content (known once all are scanned)
        self.counted = 0.0  # the blocks of the parts scanned so far, each read once

    def check(self) -> None:
        """Raises UnreadableFile when the file is beyond the limits."""
        members = self.archive.infolist()
        # Relationships first: the parts they lead to are known before those are scanned.
        for member in sorted(members, key=lambda m: _RELATIONSHIPS.match(m.filename) is None):
            if not member.is_dir():
                self.parts[member.filename] = self._scan(member)
                for entries in self.parts[member.filename].relationships.values():
                    for kind, target in entries:
                        self.kinds.setdefault(target, set()).add(kind)
        if self.fmt == "pptx":
            slides = sum(
                1
                for part in self.parts.values()
                for what, ids in part.references
                if what == b"sldId" and ids
            )
            if slides > self.limits.max_pages:
                raise _refuse(f"has more than {self.limits.max_pages:,} slides", "max_pages")
        reads = self._reads()
        for name, part in self.parts.items():
            spanned = part.spanned() * reads[name] if self.fmt == "xlsx" else 0
            if spanned > self.limits.max_blocks:
                raise self._too_wide(name, part, reads[name])
        if self.fmt == "xlsx":
            self._check_shown(reads)
        blocks = sum(
            (part.elements * self._weight(name) + (part.spanned() if self.fmt == "xlsx" else 0))
            * reads[name]
            for name, part in self.parts.items()
        )
        blocks += self._notes() + self._looked_through(reads)
        if blocks > self.limits.max_blocks:
            raise self._too_many()

    def _scan(self, member: zipfile.ZipInfo) -> _Part:
        part = _Part()
        owner = _RELATIONSHIPS.match(member.filename)
        string = None  # (where the shared string being read starts)
        for name, raw, offset, text in _start_tags(self.archive, member):
            if name == b"" or _local(name) == b"si":
                if string is not None:  # a shared string ends where the next (or the part) does
                    part.strings.append(offset - string)
                string = offset if name else None
                if not name:
                    break
            part.elements += 1
            if part.note is not None:
                part.notes[part.note] += 1
            local = _local(name)
            if local in _LAID_OUT:
                self._lay_out(part, local, raw)
            elif local == b"v" and part.shared_cell:
                part.shared_cell = False
                try:
                    part.shown[int(_value(text))] += 1
                except ValueError:
                    pass  # (not an index: openpyxl refuses the file)
            elif local in _INTERESTING:
                self._tag(part, local, _attributes(raw), owner)
            if part.elements % _STEP == 0:
                self._running(member.filename, part)
        self._running(member.filename, part)
        self.counted += part.elements * self._weight(member.filename) + (
            part.spanned() if self.fmt == "xlsx" else 0
        )
        return part

    def _weight(self, name: str) -> float:
        """What one element of part ``name`` counts (see _WEIGHTS): a part counts as read
        aside unless every relationship leading to it says so and it is not where the
        converter looks when none does."""
        whole, aside = _WEIGHTS[self.fmt]
        kinds = self.kinds.get(name)
        if (
            kinds
            and kinds <= _READ_ASIDE[self.fmt]
            and name not in _FALLBACKS[self.fmt]
            and name not in self.rendered
        ):
            return aside
        return whole

    def _tag(
        self, part: _Part, local: bytes, attributes: dict[bytes, str], owner: re.Match[str] | None
    ) -> None:
        if local == b"Relationship" and owner is not None:
            target, mode = attributes.get(b"Target"), attributes.get(b"TargetMode", "")
            if target is not None and mode.strip().lower() != "external":
                source = owner.group(1) + owner.group(2)
                part.relationships.setdefault(attributes.get(b"Id", ""), []).append(
                    (attributes.get(b"Type", "").rpartition("/")[2], _resolve(source, target))
                )
        elif local in (b"footnote", b"endnote", b"comment"):
            part.note = (local, next(iter(_ids(attributes, prefixed=False)), ""))
        elif local in _NOTE_REFERENCES:
            part.references.append((_NOTE_REFERENCES[local], _ids(attributes, prefixed=False)))
        elif local in _LISTED:
            part.references.append((local, _ids(attributes, prefixed=True)))
        elif local == b"ph":
            part.placeholders += 1
        elif local == b"dimension":
            rows, columns = _extent(attributes.get(b"ref", ""))
            part.rows, part.widest = max(part.rows, rows), max(part.widest, columns)

    @staticmethod
    def _lay_out(part: _Part, local: bytes, raw: bytes) -> None:
        """A sheet's ``<row>`` or ``<c>``: where it puts the row and column being read (and
        whether the cell shows a shared string, its ``<v>`` the string's index)."""
        match = _R.search(raw)
        value = (
            None
            if match is None
            else _value(match.group(1) if match.group(1) is not None else match.group(2))
        )
        if local == b"row":
            part.row, part.columns = _row_number(value, part.row), 0
            part.rows = max(part.rows, part.row)
        else:
            kind = _T.search(raw)
            part.shared_cell = (
                kind is not None
                and _value(kind.group(1) if kind.group(1) is not None else kind.group(2)).strip()
                == "s"
            )
            part.row, part.columns = _cell(value, part.row, part.columns)
            part.rows, part.widest = max(part.rows, part.row), max(part.widest, part.columns)

    def _running(self, name: str, part: _Part) -> None:
        """Refuses as soon as the parts scanned so far, each read once, are too many."""
        if self.fmt == "xlsx" and part.spanned() > self.limits.max_blocks:
            raise self._too_wide(name, part, 1)
        if (
            self.counted
            + part.elements * self._weight(name)
            + (part.spanned() if self.fmt == "xlsx" else 0)
            > self.limits.max_blocks
        ):
            raise self._too_many()

    def _reads(self) -> Counter[str]:
        """How many times the converter reads each part (once when nothing lists it); the
        parts it reads as content (listed slides and sheets, their notes and charts) are
        kept in ``self.rendered``, whatever type their relationships claim."""
        listed: Counter[str] = Counter()
        for source, part in self.parts.items():
            for what, ids in part.references:
                if what in (b"sldId", b"sheet"):
                    target = self._target(source, ids)
                    if target is not None:
                        listed[target] += 1
        if self.fmt == "pptx":
            for slide, times in list(listed.items()):
                for notes in self._related(slide, "notesSlide"):
                    listed[notes] += times
                for what, ids in self.parts[slide].references if slide in self.parts else ():
                    chart = self._target(slide, ids) if what == b"chart" else None
                    if chart is not None:
                        listed[chart] += times
        self.rendered = set(listed)
        return Counter({name: max(1, listed[name]) for name in self.parts})

    def _check_shown(self, reads: Counter[str]) -> None:
        """A workbook's cells show a shared string by its index: the converter writes its
        text once for each cell (a 1 MB string shown by 100 cells of a 6 KB file made 100 MB
        of text), which counts toward ``max_expanded_mb``."""
        sizes: dict[int, int] = {}
        for part in self.parts.values():
            for index, size in enumerate(part.strings):
                sizes[index] = max(sizes.get(index, 0), size)
        shown = sum(
            reads[name] * times * sizes.get(index, 0)
            for name, part in self.parts.items()
            for index, times in part.shown.items()
        )
        if shown > self.limits.max_expanded_mb * _MB:
            raise _refuse(
                f"its cells show more than {_mb(self.limits.max_expanded_mb)} of text "
                f"({shown / _MB:,.0f} MB: a shared string once for each cell that shows it)",
                "max_expanded_mb",
            )

    def _notes(self) -> int:
        """What a Word file's references make the converter read again: each footnote,
        endnote or comment once for each reference to it."""
        if self.fmt != "docx":
            return 0
        sizes: Counter[tuple[bytes, str]] = Counter()
        for part in self.parts.values():
            for key, size in part.notes.items():
                sizes[key] = max(sizes[key], size)
        return sum(
            max((sizes[(kind, i)] for i in ids), default=0)
            for part in self.parts.values()
            for kind, ids in part.references
            if kind in (b"footnote", b"endnote", b"comment")
        )

    def _looked_through(self, reads: Counter[str]) -> int:
        """What a deck's placeholders make the converter read: each looks through the
        placeholders of its slide's layout and of the layout's master, each time the
        slide is read."""
        if self.fmt != "pptx":
            return 0
        total = 0
        for name, part in self.parts.items():
            if not part.placeholders:
                continue
            inherited = 0
            for layout in self._related(name, "slideLayout"):
                masters = self._related(layout, "slideMaster")
                inherited = max(
                    inherited,
                    self._placeholders(layout)
                    + max((self._placeholders(m) for m in masters), default=0),
                )
            total += reads[name] * part.placeholders * inherited
        return total

    def _placeholders(self, name: str) -> int:
        part = self.parts.get(name)
        return part.placeholders if part is not None else 0

    def _relationships(self, source: str) -> dict[str, list[tuple[str, str]]]:
        folder, _, base = source.rpartition("/")
        part = self.parts.get(f"{folder}/_rels/{base}.rels" if folder else f"_rels/{base}.rels")
        return part.relationships if part is not None else {}

    def _target(self, source: str, ids: tuple[str, ...]) -> str | None:
        relationships = self._relationships(source)
        targets = [target for i in ids for _, target in relationships.get(i, ())]
        return max(
            targets, key=lambda t: self.parts[t].elements if t in self.parts else 0, default=None
        )

    def _related(self, source: str, kind: str) -> list[str]:
        return [
            target
            for entries in self._relationships(source).values()
            for type_, target in entries
            if type_ == kind
        ]

    def _too_wide(self, name: str, part: _Part, reads: int) -> UnreadableFile:
        listed = f", listed {reads:,} times" if reads > 1 else ""
        wide = f" by {part.widest:,} columns" if part.widest else ""
        return _refuse(
            f"its sheets span more than {self.limits.max_blocks:,} cells "
            f"({visible(name)}{listed}: {part.rows:,} rows{wide}, or more)",
            "max_blocks",
        )

    def _too_many(self) -> UnreadableFile:
        return _refuse(
            f"takes more than {self.limits.max_blocks:,} blocks to read ({_WHAT_COUNTS[self.fmt]})",
            "max_blocks",
        )


# What an element counts, (in a part the converter renders or may render, in a part it
# only parses or never reads: _READ_ASIDE). Measured (bench/reading_costs.py): mammoth
# spends 40 to 300 us on an element it renders and 34 to 55 us on one of the styles or
# numbering; python-pptx and markitdown about 90 us on an element of a slide's shapes and
# 0.5 to 2 us on one of a layout or master; openpyxl 4 to 12 us on an element, where a
# cell costs it and pandas about 250 us (a cell is counted as spanned besides).
_WEIGHTS = {"docx": (1, 1 / 4), "pptx": (1, 1 / 4), "xlsx": (1 / 8, 1 / 8)}
# The relationships (by the last part of their type) to the parts a converter only
# parses or never reads: styles, themes, settings, properties, layouts and masters
# (looked through by placeholders: counted apart), Word's headers and footers.
_READ_ASIDE = {
    "docx": frozenset(
        {
            "styles",
            "stylesWithEffects",
            "numbering",
            "theme",
            "settings",
            "webSettings",
            "fontTable",
            "header",
            "footer",
            "core-properties",
            "extended-properties",
            "custom-properties",
            "customXml",
            "customXmlProps",
            "thumbnail",
            "glossaryDocument",
            "people",
            "commentsExtended",
            "commentsIds",
            "commentsExtensible",
        }
    ),
    "pptx": frozenset(
        {
            "slideLayout",
            "slideMaster",
            "notesMaster",
            "handoutMaster",
            "theme",
            "presProps",
            "viewProps",
            "tableStyles",
            "commentAuthors",
            "core-properties",
            "extended-properties",
            "custom-properties",
            "customXml",
            "customXmlProps",
            "thumbnail",
            "tags",
            "printerSettings",
        }
    ),
    "xlsx": frozenset(),
}
# Where mammoth looks for the document and its notes when no relationship says.
_FALLBACKS = {
    "docx": frozenset(
        {"word/document.xml", "word/footnotes.xml", "word/endnotes.xml", "word/comments.xml"}
    ),
    "pptx": frozenset(),
    "xlsx": frozenset(),
}
_INTERESTING = frozenset(
    (
        b"Relationship",
        b"footnote",
        b"endnote",
        b"comment",
        *_NOTE_REFERENCES,
        *_LISTED,
        b"ph",
        b"dimension",
    )
)
_LAID_OUT = frozenset((b"row", b"c"))
_OFFICE = ("docx", "pptx", "xlsx")
_WHAT_COUNTS = {
    "docx": "XML elements: paragraphs, runs, table cells and the rest, a note or comment once "
    "for each reference to it",
    "pptx": "XML elements, a slide once for each time the deck lists it, and the placeholders "
    "each placeholder looks through",
    "xlsx": "the cells its sheets span and an eighth of its XML elements, a sheet once for each "
    "time the workbook lists it",
}


def _resolve(source: str, target: str) -> str:
    """The part a relationship of ``source`` leads to, as the converters resolve it."""
    target = target.strip()
    if target.startswith("/"):
        return posixpath.normpath(target).lstrip("/")
    return posixpath.normpath(posixpath.join(posixpath.dirname(source), target)).lstrip("/")


# --------------------------------------------------------------------------- web pages

# A tag's start, as an HTML parser reads one: "<" and a letter (end tags, comments not).
_HTML_TAG = re.compile(r"<[A-Za-z]")


def _check_html(data: bytes, limits: ReadLimits) -> None:
    """A web page's text, decoded as its reader decodes it, within ``max_expanded_mb``
    (readers hold about 26 times a page's text), its tags within ``max_blocks`` (about
    200 us each)."""
    from sweep.datasets.readers.html import decode_html

    text = decode_html(data)
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > limits.max_expanded_mb * _MB:
        raise _refuse(
            f"holds more than {_mb(limits.max_expanded_mb)} of text ({size / _MB:,.0f} MB)",
            "max_expanded_mb",
        )
    for tags, _ in enumerate(_HTML_TAG.finditer(text), 1):
        if tags > limits.max_blocks:
            raise _refuse(f"has more than {limits.max_blocks:,} tags", "max_blocks")


# --------------------------------------------------------------------------- PDF


def _check_pdf(data: bytes, limits: ReadLimits, reader: str | None) -> None:
    import pypdf
    from pypdf.errors import PyPdfError

    from sweep.datasets.readers.pdf import quiet_pdf_logs

    strictest = tuple(max(shares) for shares in zip(*PDF_SHARES.values()))
    whole, page = PDF_SHARES.get(reader or "", strictest)
    name = reader or "the reader"
    with quiet_pdf_logs():
        try:
            document = pypdf.PdfReader(io.BytesIO(data))
            if document.is_encrypted and not document.decrypt(""):
                return
            pages = len(document.pages)
        except (PyPdfError, *_DAMAGED):
            return  # (a damaged or encrypted file: the reader says so)
        if pages > limits.max_pages:
            raise _refuse(f"has {pages:,} pages, more than {limits.max_pages:,}", "max_pages")
        budget, page_budget = (
            limits.max_expanded_mb * _MB / whole,
            limits.max_expanded_mb * _MB / page,
        )
        content = _PageContent()
        drawn = 0
        for number in range(pages):
            try:
                size = content.of_page(document.pages[number])
            except (PyPdfError, *_DAMAGED):
                continue  # (a damaged page: the reader says so, the others count)
            if size > page_budget:
                raise _refuse(
                    f"page {number + 1} draws more than {_mb(page_budget / _MB)} of content "
                    f"(decoded; {name} reads at most 1/{page} of dataset.max_expanded_mb on "
                    "one page)",
                    "max_expanded_mb",
                )
            drawn += size
            if drawn + content.fonts > budget:
                raise _refuse(
                    f"expands to more than {_mb(budget / _MB)} of page content (decoded, for "
                    f"each page that draws it; {name} reads at most 1/{whole} of "
                    "dataset.max_expanded_mb)",
                    "max_expanded_mb",
                )


# What pypdf raises, besides its own errors, on a damaged object or stream: a bad number,
# a missing key, a filter it does not implement, a broken zlib stream, objects nested
# past the recursion limit.
_DAMAGED = (
    ValueError,
    KeyError,
    TypeError,
    IndexError,
    AttributeError,
    NotImplementedError,
    RecursionError,
    zlib.error,
    struct.error,
)
# A form XObject drawn by a content stream: "/Fm1 Do".
_DO = re.compile(rb"/([^\s/\[\]()<>{}%]+)\s*Do\b")


class _PageContent:
    """The decoded size of what a page's content makes a reader parse: its content
    streams and, each time it is drawn, every form they draw (forms drawing forms
    included). A form's size is measured once; a form drawing itself counts once. What
    cannot be resolved or decoded counts nothing (no reader parses it either) and does
    not stop the rest from being counted. The character maps of the fonts a page uses
    (``/ToUnicode`` and ``/Encoding`` streams, the clear-text part of a Type 1 font
    program), which pdfminer parses once per file at about 3 s per MB, add up in
    ``fonts``, each once."""

    def __init__(self) -> None:
        self._forms: dict[tuple[int, int], int] = {}
        self._open: set[tuple[int, int]] = set()
        self._fonts: set[tuple[int, int]] = set()
        self.fonts = 0

    def of_page(self, page: Any) -> int:
        contents = _resolved(page.get("/Contents"))
        streams = list(contents) if isinstance(contents, list) else [contents]
        resources = page.get("/Resources")
        self._count_fonts(resources)
        return sum(self._stream(_resolved(s), resources) for s in streams)

    def _stream(self, stream: Any, resources: Any) -> int:
        from pypdf.errors import LimitReachedError, PyPdfError

        if not hasattr(stream, "get_data"):
            return 0
        try:
            # pypdf keeps what it decoded with the stream: what is measured stays in memory
            # until the check ends, which is when it exceeds the budget at the latest.
            data = stream.get_data()
        except LimitReachedError:
            return _LARGER_THAN_PYPDF_DECODES  # pdfminer, under pdfplumber, would decode it all
        except (PyPdfError, *_DAMAGED):
            return 0  # undecodable: no reader parses it either
        size = len(data)
        forms = _form_xobjects(resources)
        if forms:
            for name in _DO.findall(data):
                form = forms.get("/" + name.decode("latin-1"))
                if form is not None:
                    size += self._form(form, resources)
        return size

    def _form(self, reference: Any, resources: Any) -> int:
        key = _key(reference)
        if key in self._forms:
            return self._forms[key]
        if key in self._open:
            return 0  # a form drawing itself: readers stop there
        self._open.add(key)
        try:
            form = _resolved(reference)
            own = form.get("/Resources") if hasattr(form, "get") else None
            self._count_fonts(own)
            size = self._stream(form, own if own is not None else resources)
        finally:
            self._open.discard(key)
        self._forms[key] = size
        return size

    def _count_fonts(self, resources: Any) -> None:
        try:
            fonts = _resolved(_resolved(resources).get("/Font")) if resources is not None else None
            for reference in (fonts or {}).values():
                font = _resolved(reference)
                descendants = _resolved(font.get("/DescendantFonts")) or []
                for spec in [font, *(_resolved(d) for d in descendants)]:
                    self._count_font(spec)
        except (AttributeError, TypeError, ValueError, KeyError, IndexError, RecursionError):
            return  # damaged resources: no reader draws from them either

    def _count_font(self, font: Any) -> None:
        if not hasattr(font, "get"):
            return
        for key in ("/ToUnicode", "/Encoding"):
            stream = font.get(key)
            if hasattr(_resolved(stream), "get_data") and _key(stream) not in self._fonts:
                self._fonts.add(_key(stream))
                self.fonts += self._stream(_resolved(stream), None)
        descriptor = _resolved(font.get("/FontDescriptor"))
        program = descriptor.get("/FontFile") if hasattr(descriptor, "get") else None
        if program is not None and _key(program) not in self._fonts:
            self._fonts.add(_key(program))
            length = _resolved(_resolved(program).get("/Length1"))
            self.fonts += max(0, int(length)) if isinstance(length, int) else 0


# What a stream counts that decodes to more than pypdf decodes (75 MB unless configured):
# more than any budget.
_LARGER_THAN_PYPDF_DECODES = 1 << 62


def _key(reference: Any) -> tuple[int, int]:
    return (
        (reference.idnum, reference.generation)
        if hasattr(reference, "idnum")
        else (id(reference), 0)
    )


def _resolved(value: Any) -> Any:
    """A PDF object behind a reference, or None when it cannot be read."""
    from pypdf.errors import PyPdfError

    try:
        return value.get_object() if value is not None else None
    except (PyPdfError, *_DAMAGED):
        return None  # a damaged reference


def _form_xobjects(resources: Any) -> dict[str, Any]:
    """The form XObjects of ``resources`` by name (``/Fm1``)."""
    try:
        xobjects = (
            _resolved(_resolved(resources).get("/XObject")) if resources is not None else None
        )
        return {
            str(name): reference
            for name, reference in (xobjects or {}).items()
            if _resolved(reference).get("/Subtype") == "/Form"
        }
    except (AttributeError, TypeError, ValueError, KeyError, IndexError, RecursionError):
        return {}  # damaged resources: no reader draws from them either
