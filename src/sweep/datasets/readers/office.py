"""Word, PowerPoint and Excel files (DOCX, PPTX, XLSX) as Markdown, with markitdown.

A Word file's title is its first paragraph in Word's Title style, else the title of its
properties, else its first heading, else the file's name.

markitdown turns Word heading styles into ``#`` lines, lists into list items and
tables into Markdown tables, which is what ``chunk=markdown`` and heading
prefixes need; slides become sections with the slide's title as heading, and
sheets become tables under the sheet's name. Inline markup and escapes are then
taken out (:func:`~sweep.datasets.readers.markdown.plain_markdown`) so quotes
match. A PPTX's slides are its pages (``p. 3`` is slide 3); an XLSX's sheets are its
pages too, each labelled with the sheet's name.

The format's own converter is called, not ``MarkItDown.convert_stream``: that
one guesses the type from the bytes and, for a damaged file, falls back to
reading it as plain text, which would index the bytes of a zip file.

markitdown's DOCX path first rewrites ``word/document.xml`` through
BeautifulSoup's XML parser (to turn equations into LaTeX). With lxml 6.2 that
parser drops namespace prefixes and mammoth then fails on every file ("Could
not find the body element"). When a one-time check finds the parser so broken,
the reader gives the file to mammoth directly, as markitdown does after that
step, and equations are read as their text; the version says which path ran.
Either way mammoth is called here, as markitdown calls it, but with images left as
their alt text (all the text keeps of them): by default mammoth writes each image
as a data URI once for each place the document shows it, so one image shown many
times costs its size many times over.

An Office part never needs a DTD, and entities are never expanded (XXE, billion
laughs). A part that declares one anyway (``<!DOCTYPE p:sld [<!ENTITY x ...>]>``)
would lose text quietly: python-pptx and openpyxl drop what follows an entity they do
not expand in its element. Such a part is read without its DTD and its entity
references, and the reader warns which entities were left out.
"""

from __future__ import annotations

import io
import re
import zipfile
from functools import cache
from pathlib import PurePath

from sweep.core.messages import visible
from sweep.datasets.readers.base import Extracted, UnreadableFile
from sweep.datasets.readers.markdown import markdown_headings, markitdown_html, plain_markdown
from sweep.datasets.readers.pdf import library_version

__all__ = ["OFFICE_FORMATS", "OfficeReader"]

#: The formats an :class:`OfficeReader` reads, with the archive member each must hold.
OFFICE_FORMATS = {
    "docx": "word/document.xml",
    "pptx": "ppt/presentation.xml",
    "xlsx": "xl/workbook.xml",
}

# 6: headings by the one shared parser (setext headings listed, BOM at 0)
# 7: an XLSX's sheets are its pages, labelled with their names
_RECIPE = 7
_BACKENDS = {"docx": ("mammoth",), "pptx": ("python-pptx",), "xlsx": ("openpyxl", "pandas")}
_OLE2 = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
# Where markitdown starts a slide's text.
_SLIDE_MARK = re.compile(r"<!-- Slide number: (\d+) -->")
# Where markitdown starts a sheet: its name as a "##" heading, first or after a blank line
# (a cell's line breaks are written as "\n" inside its table row, so no cell starts a line).
_SHEET_HEAD = re.compile(r"(?:\A|\n\n)(?=## ([^\n]*)(?:\n|\Z))")


class OfficeReader:
    """One Office format (``docx``, ``pptx`` or ``xlsx``) through markitdown's converter."""

    name = "markitdown"

    def __init__(self, fmt: str = "docx") -> None:
        if fmt not in OFFICE_FORMATS:
            raise ValueError(f"OfficeReader reads {', '.join(OFFICE_FORMATS)}, not {fmt!r}")
        self.fmt = fmt

    def __repr__(self) -> str:
        return f"OfficeReader({self.fmt!r})"

    @property
    def version(self) -> str:
        path = "+docx-direct" if self.fmt == "docx" and not _xml_namespaces_survive() else ""
        return (
            f"{library_version('markitdown', 'markdownify', *_BACKENDS[self.fmt])}"
            f"{path}+recipe{_RECIPE}"
        )

    def read(self, data: bytes, filename: str) -> Extracted:
        label = self.fmt.upper()
        if not data.strip():
            raise UnreadableFile("empty file")
        archive = _open_archive(data, label, OFFICE_FORMATS[self.fmt])
        warnings: list[str] = []
        try:
            data = _without_dtds(archive, data, warnings)
            markdown = _convert(self.fmt, data, warnings)
        except UnreadableFile:
            raise
        except Exception as e:  # noqa: BLE001 - the converter library's own error on a damaged file
            raise UnreadableFile(f"corrupt {label}: {_one_line(e)}") from None
        pages: tuple[tuple[int, int], ...] = ()
        labels: tuple[str, ...] = ()
        if self.fmt == "pptx":
            text, pages = _slides(markdown)
        elif self.fmt == "xlsx":
            text, pages, labels = _sheets(markdown)
        else:
            text = plain_markdown(markdown)
            text = text + "\n" if text else ""
        if not text.strip():
            raise UnreadableFile(f"no text: the {label} file holds no text")
        headings = markdown_headings(text)
        styled = _title_paragraph(zipfile.ZipFile(io.BytesIO(data))) if self.fmt == "docx" else ""
        title = (
            styled
            or _core_title(archive)
            or next((h.title for h in headings if h.level == 1), "")
            or PurePath(filename).stem
        )
        return Extracted(
            text=text,
            title=title,
            headings=headings,
            pages=pages,
            warnings=tuple(warnings),
            page_labels=labels,
        )


def _open_archive(data: bytes, label: str, member: str) -> zipfile.ZipFile:
    if data.startswith(_OLE2):
        # Office's own encryption wraps the file in an OLE2 container; so is an old binary
        # .doc/.ppt/.xls that was renamed.
        raise UnreadableFile(
            f"corrupt {label}: an OLE2 container, not a zip: a password-protected "
            "file, or an old binary Office file renamed; save it as "
            f".{label.lower()} without a password"
        )
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        archive.getinfo(member)
    except zipfile.BadZipFile:
        raise UnreadableFile(f"corrupt {label}: not a zip file") from None
    except KeyError:
        raise UnreadableFile(
            f"corrupt {label}: no {member} in the archive (not a {label} file)"
        ) from None
    return archive


# A part's DTD, in its prolog (after the XML declaration, comments and processing instructions).
_DOCTYPE = re.compile(
    rb"\A((?:\xef\xbb\xbf)?(?:\s|<\?.*?\?>|<!--.*?-->)*)<!DOCTYPE\s[^\[>]*(?:\[.*?\]\s*)?>",
    re.DOTALL,
)
_ROOT = re.compile(rb"<[A-Za-z_]")  # an element's start: the prolog is over
_HEAD = 1 << 16  # bytes of each part looked at for a DTD
# A reference to an entity other than XML's five (character references stay).
_ENTITY_REFERENCE = re.compile(rb"&(?!(?:amp|lt|gt|quot|apos);)([A-Za-z_:][\w.:-]*);")


def _without_dtds(archive: zipfile.ZipFile, data: bytes, warnings: list[str]) -> bytes:
    """``data``, or when one of its XML parts declares a DTD, a copy whose such parts have
    neither the DTD nor references to the entities it declares (see the module)."""
    changed: dict[str, bytes] = {}
    for member in archive.infolist():
        if not member.filename.lower().endswith((".xml", ".rels")):
            continue
        with archive.open(member) as part:
            head = part.read(_HEAD)
        if _DOCTYPE.match(head) is None and (_ROOT.search(head) or len(head) < _HEAD):
            continue  # (the root element starts before any DTD: there is none)
        xml = archive.read(member)
        match = _DOCTYPE.match(xml)
        if match is None:
            continue
        xml = match.group(1) + xml[match.end() :]
        names = list(
            dict.fromkeys(m.decode("utf-8", "replace") for m in _ENTITY_REFERENCE.findall(xml))
        )
        changed[member.filename] = _ENTITY_REFERENCE.sub(b"", xml)
        left_out = (
            (
                f"entit{'ies' if len(names) > 1 else 'y'} "
                + ", ".join(f"&{name};" for name in names[:5])
                + (", ..." if len(names) > 5 else "")
                + " left out (entities are never expanded)"
            )
            if names
            else "ignored"
        )
        warnings.append(f"{visible(member.filename)} declares a DTD, which is not read: {left_out}")
    if not changed:
        return data
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as copy:
        for member in archive.infolist():
            copy.writestr(
                member,
                changed[member.filename] if member.filename in changed else archive.read(member),
            )
    return out.getvalue()


def _convert(fmt: str, data: bytes, warnings: list[str]) -> str:
    from markitdown import StreamInfo
    from markitdown.converters import PptxConverter, XlsxConverter

    stream = io.BytesIO(data)
    if fmt == "docx":
        return _docx(stream, warnings)
    converter = PptxConverter() if fmt == "pptx" else XlsxConverter()
    return converter.convert(stream, StreamInfo(extension=f".{fmt}")).markdown


def _docx(stream: io.BytesIO, warnings: list[str]) -> str:
    """markitdown's DOCX conversion (its XML pre-processing only when BeautifulSoup keeps
    namespaces), with images left as their alt text: mammoth would otherwise write each
    image as a data URI once for each time the document shows it (a 2 MB image shown
    100 times took 1.1 GB), and the text keeps only the alt text anyway."""
    import mammoth

    if _xml_namespaces_survive():
        from markitdown.converter_utils.docx.pre_process import pre_process_docx

        stream = pre_process_docx(stream)
    html = mammoth.convert_to_html(
        stream, style_map="u => u", convert_image=mammoth.images.img_element(_unread_image)
    ).value
    return markitdown_html(html, warnings)


def _unread_image(image: object) -> dict[str, str]:
    return {"src": ""}


@cache
def _xml_namespaces_survive() -> bool:
    """Whether BeautifulSoup's XML parser keeps namespace prefixes (it does not with
    lxml 6.2), which markitdown's DOCX pre-processing needs."""
    try:
        from bs4 import BeautifulSoup

        soup = BeautifulSoup('<w:document xmlns:w="urn:x"><w:body/></w:document>', features="xml")
    except Exception:  # noqa: BLE001 - no XML parser at all: markitdown's step fails too
        return False
    return "<w:body" in str(soup)


def _slides(markdown: str) -> tuple[str, tuple[tuple[int, int], ...]]:
    """The text of a deck, with the range of each slide (markitdown marks where each
    starts with a comment; the comments are not kept)."""
    # pieces: [before the first slide, number, text, number, text, ...]
    return _paged(_SLIDE_MARK.split(markdown)[2::2])


def _sheets(markdown: str) -> tuple[str, tuple[tuple[int, int], ...], tuple[str, ...]]:
    """The text of a workbook, with the range of each sheet (its ``##`` heading and its
    table) and the sheets' names as the pages' labels."""
    heads = list(_SHEET_HEAD.finditer(markdown))
    if not heads or heads[0].start() != 0:  # (not markitdown's layout: one page-less text)
        text = plain_markdown(markdown)
        return (text + "\n" if text else ""), (), ()
    ends = [h.start() for h in heads[1:]] + [len(markdown)]
    text, pages = _paged([markdown[h.end() : end] for h, end in zip(heads, ends)])
    return text, pages, tuple(h.group(1) for h in heads)


def _paged(bodies: list[str]) -> tuple[str, tuple[tuple[int, int], ...]]:
    """The plain text of the Markdown ``bodies`` of a file's pages, a blank line between
    two, and the range of each page's text."""
    parts: list[str] = []
    pages: list[tuple[int, int]] = []
    offset = 0
    for body in bodies:
        text = plain_markdown(body)
        if offset and text:
            parts.append("\n\n")
            offset += 2
        pages.append((offset, offset + len(text)))
        parts.append(text)
        offset += len(text)
    text = "".join(parts)
    return (text + "\n" if text.strip() else ""), tuple(pages)


_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
#: How far into a Word file its title paragraph is looked for: a title opens the document,
#: maybe after a few empty lines; a Title-styled line further on is a divider.
_TITLE_WITHIN = 50


def _title_paragraph(archive: zipfile.ZipFile) -> str:
    """The text of a Word file's first paragraph in Word's Title style among its first
    paragraphs, or ``""``. The style is known by its name, "Title", which Word writes in
    English whatever the language of its menus; its id may be another word ("Titel")."""
    from lxml import etree

    try:
        # (entities are never expanded, nothing is fetched; the part's size is within the limits)
        styles = etree.fromstring(
            archive.read("word/styles.xml"),
            etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True),
        )
    except (KeyError, etree.XMLSyntaxError):
        return ""
    ids = {
        style.get(f"{_W}styleId")
        for style in styles.iter(f"{_W}style")
        if (name := style.find(f"{_W}name")) is not None
        and (name.get(f"{_W}val") or "").casefold() == "title"
    }
    if not ids:
        return ""
    try:
        with archive.open("word/document.xml") as part:
            for n, (_, paragraph) in enumerate(
                etree.iterparse(
                    part, tag=f"{_W}p", resolve_entities=False, no_network=True, huge_tree=True
                )
            ):
                style = paragraph.find(f"{_W}pPr/{_W}pStyle")
                if style is not None and style.get(f"{_W}val") in ids:
                    return " ".join("".join(t.text or "" for t in paragraph.iter(f"{_W}t")).split())
                if n >= _TITLE_WITHIN:
                    break
                paragraph.clear()
    except (KeyError, etree.XMLSyntaxError):
        return ""
    return ""


def _core_title(archive: zipfile.ZipFile) -> str:
    """The title in the file's properties (``docProps/core.xml``), or ``""``."""
    try:
        core = archive.read("docProps/core.xml").decode("utf-8", errors="replace")
    except KeyError:
        return ""
    match = re.search(r"<dc:title>(.*?)</dc:title>", core, re.DOTALL)
    if match is None:
        return ""
    from html import unescape

    return " ".join(unescape(match.group(1)).split())


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split())[:200] or type(error).__name__
