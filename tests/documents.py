"""Real PDF, DOCX, PPTX, XLSX and HTML files for the tests, written by real producers.

The document readers are tested on files that fpdf2, python-docx, python-pptx and
openpyxl wrote, not on strings shaped like their output: line wraps, hyphenated
breaks, page breaks, running headers and page numbers then come from a real layout,
as they do in the files users have. Every builder takes Markdown-ish content (the
shape of the bundled corpus) so the same document can be written in every format,
and the benchmark (``bench/extract_speed.py``) renders the corpus with them too.

Content is either a Markdown string, or a list of blocks (each block one Markdown
paragraph, ``# heading``, ``- item``, ``1. item``, or a list of table rows), or for
PDFs a list of pages, each a list of blocks (a page break before every page but
the first; pages also break by themselves when full).
"""

from __future__ import annotations

import io
import re
import struct
import zipfile
import zlib
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Literal

__all__ = [
    "BOILERPLATE",
    "Block",
    "check_invariants",
    "corrupt",
    "parse_markdown",
    "pdf_stream",
    "plain_inline",
    "render_html",
    "replace_member",
    "sentences",
    "write_docx",
    "write_encrypted_pdf",
    "write_html",
    "write_image_only_pdf",
    "write_pdf",
    "write_pptx",
    "write_raw_pdf",
    "write_xlsx",
    "write_zip_bomb",
]

FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")

Content = str | Sequence[str | Sequence[Sequence[str]]]


# --------------------------------------------------------------------------- Markdown blocks


@dataclass(frozen=True)
class Block:
    """One block of a document: a heading, paragraph, list item, table or code block."""

    kind: Literal["heading", "paragraph", "item", "table", "code"]
    text: str = ""
    level: int = 0  # heading level; for an ordered item its number (0: a bullet)
    rows: tuple[tuple[str, ...], ...] = ()


_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_ITEM = re.compile(r"^\s*(?:([-*+])|(\d+)[.)])\s+(.*)$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")


def parse_markdown(markdown: str) -> list[Block]:
    """The blocks of a Markdown text (the subset the bundled corpus uses)."""
    blocks: list[Block] = []
    paragraph: list[str] = []
    table: list[tuple[str, ...]] = []
    code: list[str] | None = None

    def flush() -> None:
        if paragraph:
            blocks.append(Block("paragraph", " ".join(paragraph)))
            paragraph.clear()
        if table:
            blocks.append(Block("table", rows=tuple(table)))
            table.clear()

    for line in markdown.splitlines():
        if code is not None:
            if line.strip().startswith("```"):
                blocks.append(Block("code", "\n".join(code)))
                code = None
            else:
                code.append(line)
            continue
        stripped = line.strip()
        if stripped.startswith("```"):
            flush()
            code = []
        elif not stripped:
            flush()
        elif (m := _HEADING.match(stripped)) is not None:
            flush()
            blocks.append(Block("heading", m.group(2), level=len(m.group(1))))
        elif stripped.startswith("|"):
            if paragraph:
                flush()
            if not _TABLE_RULE.match(stripped):
                table.append(tuple(c.strip() for c in stripped.strip("|").split("|")))
        elif (m := _ITEM.match(line)) is not None:
            flush()
            blocks.append(Block("item", m.group(3), level=int(m.group(2) or 0)))
        elif (
            blocks and blocks[-1].kind == "item" and not paragraph and line.startswith((" ", "\t"))
        ):
            last = blocks.pop()  # a wrapped list item
            blocks.append(Block("item", f"{last.text} {stripped}", level=last.level))
        else:
            if table:
                flush()
            paragraph.append(stripped)
    if code is not None:
        blocks.append(Block("code", "\n".join(code)))
    flush()
    return blocks


def _blocks(content: Content) -> list[Block]:
    if isinstance(content, str):
        return parse_markdown(content)
    out: list[Block] = []
    for part in content:
        if isinstance(part, str):
            out.extend(parse_markdown(part))
        else:
            out.append(Block("table", rows=tuple(tuple(map(str, row)) for row in part)))
    return out


_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")


def plain_inline(text: str) -> str:
    """Markdown inline markup dropped: ``**bold**``, ``*em*``, ```code```, links' targets."""
    text = _LINK.sub(r"\1", text)
    text = re.sub(r"(\*\*|__)(.+?)\1", r"\2", text)
    text = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"\1", text)
    return text.replace("`", "")


# --------------------------------------------------------------------------- PDF


def _fpdf(
    header: str | Callable[[int], tuple[str, str]] | None,
    page_numbers: str | None,
    title: str | None,
):
    from fpdf import FPDF

    class _Document(FPDF):
        def header(self) -> None:
            if callable(header):  # a book's: the chapter on the left, the page number on the right
                left, right = header(self.page_no())
                if left or right:
                    self.set_font("DejaVu", "", 8)
                    self.cell(0, 5, left, align="L")
                    self.set_x(self.l_margin)
                    self.cell(0, 5, right, new_x="LMARGIN", new_y="NEXT", align="R")
                    self.ln(4)
            elif header:
                self.set_font("DejaVu", "", 8)
                self.cell(0, 5, header, new_x="LMARGIN", new_y="NEXT", align="C")
                self.ln(4)

        def footer(self) -> None:
            if page_numbers:
                self.set_y(-15)
                self.set_font("DejaVu", "", 8)
                text = page_numbers.format(page=self.page_no(), pages="{nb}")
                self.cell(0, 10, text, align="C")

    pdf = _Document(format="A4")
    pdf.set_margins(20, 20, 20)
    pdf.set_auto_page_break(True, margin=20)
    pdf.add_font("DejaVu", "", str(FONT_DIR / "DejaVuSans.ttf"))
    pdf.add_font("DejaVu", "B", str(FONT_DIR / "DejaVuSans-Bold.ttf"))
    pdf.add_font("DejaVuMono", "", str(FONT_DIR / "DejaVuSansMono.ttf"))
    if title:
        pdf.set_title(title)
    return pdf


def _wrap(pdf, text: str, width: float, hyphenate: bool | Collection[str]) -> list[str]:
    """Greedy line breaking; ``hyphenate`` True breaks any long overflowing word with a
    hyphen at the margin, a collection of words breaks those words wherever they fall."""
    lines: list[str] = []
    current = ""
    for word in text.split():
        bare = word.strip(".,;:!?()\"'“”‘’")
        forced = not isinstance(hyphenate, bool) and bare in hyphenate
        candidate = f"{current} {word}" if current else word
        if not forced and pdf.get_string_width(candidate) <= width:
            current = candidate
            continue
        if (forced or (hyphenate is True and len(bare) >= 7)) and word[:2].isalpha():
            prefix = f"{current} " if current else ""
            # The longest cut that fits, as a typesetter breaks at the margin (a word in
            # ``hyphenate`` is broken even when it would fit whole; when not even two of its
            # letters fit, it moves to the next line unbroken).
            cut = _hyphen_point(pdf, prefix, word, width)
            if cut is not None:
                lines.append(f"{prefix}{word[:cut]}-")
                current = word[cut:]
                continue
        if current:
            lines.append(current)
        current = word
    if current:
        lines.append(current)
    return lines


def _hyphen_point(pdf, prefix: str, word: str, width: float) -> int | None:
    """The longest cut of ``word`` (between two lowercase letters, two letters kept on each
    side) that fits on the line with its hyphen."""
    for cut in range(len(word) - 2, 1, -1):
        if (
            word[cut - 2 : cut].isalpha()
            and word[cut : cut + 2].isalpha()
            and word[cut].islower()
            and pdf.get_string_width(f"{prefix}{word[:cut]}-") <= width
        ):
            return cut
    return None


def write_pdf(
    path: Path | str,
    content: Content | Sequence[Sequence[str]],
    *,
    title: str | None = None,
    header: str | Callable[[int], tuple[str, str]] | None = None,
    page_numbers: str | None = "Page {page} of {pages}",
    hyphenate: bool | Collection[str] = (),
    paragraph_gap: bool = True,
    font_size: float = 11,
) -> Path:
    """A text PDF of ``content``: paragraphs wrapped into real lines (``hyphenate``: words
    broken with a hyphen at a line end), headings in bold, a running ``header`` and a
    footer ``page_numbers`` (``{page}``, ``{pages}``; None for none) on every page. A
    callable ``header`` gives a book's header of page N: (left text, right text), both
    empty for none.
    ``paragraph_gap`` False sets paragraphs without vertical space between them.
    ``title`` goes into the PDF's metadata. A list whose every element is a list of block
    strings is a list of pages (a table alone is given inside a page, or as Markdown)."""
    is_pages = (
        not isinstance(content, str)
        and bool(content)
        and all(
            isinstance(p, (list, tuple)) and all(isinstance(b, str) for b in p) for p in content
        )
    )
    pages = list(content) if is_pages else [content]
    pdf = _fpdf(header, page_numbers, title)
    line_height = font_size * 0.5
    for page in pages:
        pdf.add_page()
        for block in _blocks(page):
            _write_block(pdf, block, font_size, line_height, hyphenate, paragraph_gap)
    path = Path(path)
    pdf.output(str(path))
    return path


def _write_block(
    pdf,
    block: Block,
    font_size: float,
    line_height: float,
    hyphenate: bool | Collection[str],
    paragraph_gap: bool,
) -> None:
    width = pdf.w - pdf.l_margin - pdf.r_margin
    gap = line_height * 0.8 if paragraph_gap else 0
    if block.kind == "heading":
        size = font_size + max(0, 8 - 2 * block.level)
        pdf.set_font("DejaVu", "B", size)
        pdf.ln(gap)
        for line in _wrap(pdf, plain_inline(block.text), width, False):
            pdf.cell(0, size * 0.55, line, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(gap * 0.5)
    elif block.kind == "code":
        pdf.set_font("DejaVuMono", "", font_size - 2)
        for line in block.text.splitlines() or [""]:
            pdf.cell(0, line_height, line, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(gap)
    elif block.kind == "table":
        pdf.set_font("DejaVu", "", font_size - 1)
        for row in block.rows:
            for line in _wrap(pdf, "   ".join(plain_inline(c) for c in row), width, False):
                pdf.cell(0, line_height, line, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(gap)
    else:
        pdf.set_font("DejaVu", "", font_size)
        text = plain_inline(block.text)
        if block.kind == "item":
            marker = f"{block.level}. " if block.level else "• "
            indent = pdf.get_string_width(marker)
            lines = _wrap(pdf, text, width - indent, hyphenate)
            for i, line in enumerate(lines):
                pdf.set_x(pdf.l_margin + (0 if i == 0 else indent))
                pdf.cell(
                    0, line_height, (marker if i == 0 else "") + line, new_x="LMARGIN", new_y="NEXT"
                )
            pdf.ln(gap * 0.25)
        else:
            for line in _wrap(pdf, text, width, hyphenate):
                pdf.cell(0, line_height, line, new_x="LMARGIN", new_y="NEXT")
            pdf.ln(gap)


def write_encrypted_pdf(
    path: Path | str, text: str = "A secret paragraph.", *, user_password: str = "secret"
) -> Path:
    """A PDF encrypted with ``user_password`` (RC4); ``""`` makes one that opens without a
    password (an owner password only restricts printing and copying)."""
    pdf = _fpdf(None, None, None)
    pdf.set_encryption(owner_password="owner-pass", user_password=user_password)
    pdf.add_page()
    pdf.set_font("DejaVu", "", 11)
    pdf.cell(0, 6, text)
    path = Path(path)
    pdf.output(str(path))
    return path


def write_image_only_pdf(path: Path | str, pages: int = 2) -> Path:
    """A PDF whose pages hold a drawn rectangle and a picture but no text (a scan)."""
    from PIL import Image

    pdf = _fpdf(None, None, None)
    picture = io.BytesIO()
    Image.new("RGB", (40, 30), (120, 60, 200)).save(picture, format="PNG")
    for _ in range(pages):
        pdf.add_page()
        pdf.rect(20, 20, 120, 80, style="D")
        pdf.image(io.BytesIO(picture.getvalue()), x=30, y=120, w=60)
    path = Path(path)
    pdf.output(str(path))
    return path


def corrupt(data: bytes) -> bytes:
    """A damaged copy of a file: its first half only, as an interrupted download leaves."""
    return data[: len(data) // 2]


# --------------------------------------------------------------------------- Office


def write_docx(
    path: Path | str,
    content: Content,
    *,
    title: str | None = None,
    title_paragraph: str | None = None,
) -> Path:
    """A DOCX of ``content``: Word heading styles, paragraphs, bulleted and numbered lists
    (List Bullet, List Number), tables (Table Grid). ``title`` is the file's title property,
    ``title_paragraph`` a first paragraph in Word's Title style."""
    import docx

    document = docx.Document()
    if title:
        document.core_properties.title = title
    if title_paragraph:
        document.add_paragraph(title_paragraph, style="Title")
    for block in _blocks(content):
        if block.kind == "heading":
            document.add_heading(plain_inline(block.text), level=min(block.level, 9))
        elif block.kind == "item":
            style = "List Number" if block.level else "List Bullet"
            document.add_paragraph(plain_inline(block.text), style=style)
        elif block.kind == "table":
            cols = max(len(r) for r in block.rows)
            table = document.add_table(rows=len(block.rows), cols=cols)
            table.style = "Table Grid"
            for r, row in enumerate(block.rows):
                for c, cell in enumerate(row):
                    table.cell(r, c).text = plain_inline(cell)
        else:
            document.add_paragraph(plain_inline(block.text))
    path = Path(path)
    document.save(str(path))
    return path


def write_pptx(path: Path | str, slides: Sequence[tuple[str, Sequence[str]]]) -> Path:
    """A PPTX with one slide per ``(title, bullet lines)``."""
    from pptx import Presentation

    deck = Presentation()
    layout = deck.slide_layouts[1]  # title and content
    for title, lines in slides:
        slide = deck.slides.add_slide(layout)
        slide.shapes.title.text = title
        body = slide.placeholders[1].text_frame
        body.text = lines[0] if lines else ""
        for line in lines[1:]:
            body.add_paragraph().text = line
    path = Path(path)
    deck.save(str(path))
    return path


def write_xlsx(path: Path | str, sheets: dict[str, Sequence[Sequence[object]]]) -> Path:
    """An XLSX with one sheet per name, each a list of rows (the first the header)."""
    from openpyxl import Workbook

    book = Workbook()
    book.remove(book.active)
    for name, rows in sheets.items():
        sheet = book.create_sheet(name)
        for row in rows:
            sheet.append(list(row))
    path = Path(path)
    book.save(str(path))
    return path


# --------------------------------------------------------------------------- hostile files


def _deflate_repeated(
    head: bytes, repeat: bytes, times: int, tail: bytes, *, wbits: int = -15
) -> tuple[bytes, int]:
    """Compressed ``head + repeat * times + tail`` and its CRC-32, made without compressing
    ``repeat`` more than once: a full flush makes what follows it independent of what came
    before, so the compressed ``repeat`` can be written ``times`` times (``wbits``: -15 raw
    deflate, 15 a zlib stream, whose checksum is then written too)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, wbits)
    first = compressor.compress(head) + compressor.flush(zlib.Z_FULL_FLUSH)
    middle = compressor.compress(repeat) + compressor.flush(zlib.Z_FULL_FLUSH)
    last = compressor.compress(tail) + compressor.flush()
    crc, adler = zlib.crc32(head), zlib.adler32(head)
    for _ in range(times):
        crc, adler = zlib.crc32(repeat, crc), zlib.adler32(repeat, adler)
    crc, adler = zlib.crc32(tail, crc), zlib.adler32(tail, adler)
    data = first + middle * times + last
    if wbits > 0:  # (the zlib trailer the compressor wrote is that of head + repeat + tail)
        data = data[:-4] + struct.pack(">I", adler)
    return data, crc


def _zip_bytes(members: list[tuple[str, bytes, int, int]]) -> bytes:
    """A zip of ``(name, raw deflate data, CRC-32, unpacked size)`` members."""
    out, directory = bytearray(), bytearray()
    for name, data, crc, size in members:
        offset, encoded = len(out), name.encode()
        out += (
            struct.pack(
                "<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0x21, crc, len(data), size, len(encoded), 0
            )
            + encoded
            + data
        )
        directory += (
            struct.pack(
                "<IHHHHHHIIIHHHHHII",
                0x02014B50,
                20,
                20,
                0,
                8,
                0,
                0x21,
                crc,
                len(data),
                size,
                len(encoded),
                0,
                0,
                0,
                0,
                0,
                offset,
            )
            + encoded
        )
    return bytes(
        out
        + directory
        + struct.pack(
            "<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members), len(directory), len(out), 0
        )
    )


def write_zip_bomb(
    path: Path | str,
    template: Path | str,
    member: str,
    head: bytes,
    repeat: bytes,
    times: int,
    tail: bytes,
) -> Path:
    """A copy of the Office file ``template`` whose ``member`` holds ``head``, ``repeat``
    ``times`` times and ``tail``: a valid file that unpacks to far more than its size,
    written in well under a second however much it unpacks to (under 4 GB)."""
    members = []
    with zipfile.ZipFile(template) as source:
        for info in source.infolist():
            if info.filename == member:
                data, crc = _deflate_repeated(head, repeat, times, tail)
                size = len(head) + len(repeat) * times + len(tail)
            else:
                content = source.read(info)
                compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
                data = compressor.compress(content) + compressor.flush()
                crc, size = zlib.crc32(content), len(content)
            members.append((info.filename, data, crc, size))
    path = Path(path)
    path.write_bytes(_zip_bytes(members))
    return path


def replace_member(
    path: Path | str, template: Path | str, member: str, edit: Callable[[str], str]
) -> Path:
    """A copy of the Office file ``template`` with ``member``'s XML changed by ``edit``."""
    with (
        zipfile.ZipFile(template) as source,
        zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out,
    ):
        for info in source.infolist():
            data = source.read(info)
            if info.filename == member:
                data = edit(data.decode("utf-8")).encode("utf-8")
            out.writestr(info, data)
    return Path(path)


def pdf_stream(
    data: bytes, entries: bytes = b"", *, repeat: bytes = b"", times: int = 0, tail: bytes = b""
) -> bytes:
    """A PDF stream object: ``data`` as it is, or (with ``times``) ``data``, ``repeat``
    ``times`` times and ``tail`` compressed with FlateDecode, without compressing that much."""
    if times:
        data, _ = _deflate_repeated(data, repeat, times, tail, wbits=15)
        entries += b" /Filter /FlateDecode"
    return b"<< /Length %d%s >>\nstream\n" % (len(data), entries) + data + b"\nendstream"


def write_raw_pdf(path: Path | str, objects: Sequence[bytes]) -> Path:
    """A PDF of ``objects`` (numbered from 1; object 1 is the catalog) with a correct
    cross-reference table: for files no producer writes (a glyph mapped to a lone
    surrogate, one content stream drawn by every page)."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    path = Path(path)
    path.write_bytes(bytes(out))
    return path


# --------------------------------------------------------------------------- HTML

#: The boilerplate every page with ``boilerplate=True`` carries, by where it sits:
#: none of it is the page's content, and a reader that keeps it leaks it into chunks.
BOILERPLATE: dict[str, tuple[str, ...]] = {
    "nav": (
        "Home",
        "Products",
        "Solutions",
        "Pricing",
        "Developer portal",
        "Support centre",
        "Sign in",
    ),
    "cookie": (
        "We use cookies to improve your experience and to measure site traffic.",
        "Accept all cookies",
        "Manage preferences",
    ),
    "sidebar": (
        "Related articles",
        "Getting started with Kestrel Cloud dashboards",
        "Troubleshooting gateway connectivity",
        "Subscribe to our newsletter",
    ),
    "footer": (
        "© 2026 Kestrel Labs, Rua do Carmo 42, Lisbon. All rights reserved.",
        "Privacy policy",
        "Terms of use",
        "Careers at Kestrel",
    ),
    "breadcrumbs": ("Documentation", "Knowledge base"),
    "script": ("trackPageView", "window.dataLayer"),
    "style": ("font-family", "box-sizing"),
}


def _inline_html(text: str) -> str:
    out = escape(text, quote=False)
    out = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", out)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    return _LINK.sub(r'<a href="#">\1</a>', out) if "](" in out else out


def _body_html(blocks: list[Block]) -> str:
    parts: list[str] = []
    open_list: str | None = None
    for block in blocks:
        wanted = ("ol" if block.level else "ul") if block.kind == "item" else None
        if open_list and wanted != open_list:
            parts.append(f"</{open_list}>")
            open_list = None
        if wanted and not open_list:
            parts.append(f"<{wanted}>")
            open_list = wanted
        if block.kind == "heading":
            parts.append(f"<h{block.level}>{_inline_html(block.text)}</h{block.level}>")
        elif block.kind == "item":
            parts.append(f"<li>{_inline_html(block.text)}</li>")
        elif block.kind == "code":
            parts.append(f"<pre><code>{escape(block.text)}</code></pre>")
        elif block.kind == "table":
            head, *rows = block.rows
            cells = "".join(f"<th>{_inline_html(c)}</th>" for c in head)
            body = "".join(
                "<tr>" + "".join(f"<td>{_inline_html(c)}</td>" for c in r) + "</tr>" for r in rows
            )
            parts.append(f"<table><thead><tr>{cells}</tr></thead><tbody>{body}</tbody></table>")
        else:
            parts.append(f"<p>{_inline_html(block.text)}</p>")
    if open_list:
        parts.append(f"</{open_list}>")
    return "\n".join(parts)


def render_html(
    title: str,
    content: Content,
    *,
    boilerplate: bool = True,
    charset: str | None = "utf-8",
    semantic: bool = True,
) -> str:
    """A web page of ``content`` inside ``<article>``; with ``boilerplate`` the page also has
    what real sites wrap around it (:data:`BOILERPLATE`): a style sheet, tracking script,
    navigation menu, breadcrumbs, cookie banner, sidebar and footer. ``semantic`` False
    builds the page of bare ``<div>``s, without classes or ids, as some page builders
    do: an extractor then cannot go by tag or class names, only by the text itself."""
    body = _body_html(_blocks(content))
    meta = f'<meta charset="{charset}">' if charset else ""
    if not boilerplate:
        return (
            f"<!DOCTYPE html>\n<html><head>{meta}<title>{escape(title)}</title></head>\n"
            f"<body>\n<article>\n{body}\n</article>\n</body></html>\n"
        )
    b = BOILERPLATE
    nav = "".join(f'<li><a href="/{i}">{escape(t)}</a></li>' for i, t in enumerate(b["nav"]))
    crumbs = " › ".join(f'<a href="/{t.lower()}">{escape(t)}</a>' for t in b["breadcrumbs"])
    side = "".join(
        f'<li><a href="/a/{i}">{escape(t)}</a></li>' for i, t in enumerate(b["sidebar"][1:3])
    )
    foot = "".join(f'<a href="/f/{i}">{escape(t)}</a> ' for i, t in enumerate(b["footer"][1:]))
    page = f"""<!DOCTYPE html>
<html lang="en"><head>{meta}
<title>{escape(title)} | Kestrel Labs</title>
<style>body {{ font-family: sans-serif; box-sizing: border-box; }} .cookie {{ position: fixed; }}</style>
<script>window.dataLayer = window.dataLayer || []; function trackPageView() {{ dataLayer.push({{event: "view"}}); }}</script>
</head>
<body>
<div class="cookie-banner" id="cookie-consent"><p>{escape(b["cookie"][0])}</p>
<button>{escape(b["cookie"][1])}</button> <button>{escape(b["cookie"][2])}</button></div>
<header class="site-header"><a class="logo" href="/">Kestrel Labs</a>
<nav class="main-menu"><ul>{nav}</ul></nav></header>
<div class="breadcrumbs">{crumbs}</div>
<main>
<article class="content">
{body}
</article>
<aside class="sidebar"><h3>{escape(b["sidebar"][0])}</h3><ul>{side}</ul>
<form><label>{escape(b["sidebar"][3])}</label><input type="email"><button>Subscribe</button></form></aside>
</main>
<footer class="site-footer"><p>{escape(b["footer"][0])}</p><p>{foot}</p></footer>
<script>trackPageView();</script>
</body></html>
"""
    if not semantic:
        for tag in ("header", "nav", "main", "article", "aside", "footer"):
            page = re.sub(rf"<(/?){tag}\b", r"<\1div", page)
        page = re.sub(r' (?:class|id)="[^"]*"', "", page)
    return page


def write_html(
    path: Path | str,
    title: str,
    content: Content,
    *,
    boilerplate: bool = True,
    encoding: str = "utf-8",
) -> Path:
    """:func:`render_html` written in ``encoding`` (and declared so in a meta charset)."""
    path = Path(path)
    path.write_bytes(
        render_html(title, content, boilerplate=boilerplate, charset=encoding).encode(
            encoding, errors="xmlcharrefreplace"
        )
    )
    return path


# --------------------------------------------------------------------------- checking what readers made


def sentences(content: Content) -> list[str]:
    """The sentences (longer than 15 characters) of the paragraphs and list items of
    ``content``, as plain text: what a reader must give back verbatim."""
    out = []
    for block in _blocks(content):
        if block.kind in ("paragraph", "item"):
            out += [
                s
                for s in re.split(r"(?<=[.!?])\s+(?=[A-Z])", plain_inline(block.text))
                if len(s) > 15
            ]
    return out


def check_invariants(extracted) -> None:
    """What every reader guarantees of its :class:`~sweep.datasets.readers.base.Extracted`:
    each heading's ``start`` is the start of its ``#`` line (or of a setext heading's title
    line; a byte-order mark before it on the first line), pages are in order, do not
    overlap and lie within the text, and the title is one clean line."""
    text = extracted.text
    for heading in extracted.headings:
        line, *after = text[heading.start :].split("\n", 2)[:2]
        line = line.removeprefix("\ufeff") if heading.start == 0 else line
        underline = after[0].strip() if after else ""
        setext = (
            heading.level <= 2 and underline != "" and set(underline) == {"=-"[heading.level - 1]}
        )
        assert heading.start == 0 or text[heading.start - 1] in "\n\r\ufeff", heading
        assert setext or line.lstrip(" ").startswith("#" * heading.level + " "), (heading, line)
        assert heading.title in line, (heading, line)
    end = 0
    for start, stop in extracted.pages:
        assert end <= start <= stop <= len(text), extracted.pages
        end = stop
    assert extracted.title == extracted.title.strip() and "\n" not in extracted.title
    assert "\ufeff" not in extracted.title
