"""Build the ``documents`` example: a small folder of real PDF, HTML, DOCX, Markdown and reST files.

The example is a dataset folder (documents under ``docs/``, questions beside them): fourteen
documents of the kestrel corpus rendered as the mixed folder a team really
has — four PDFs (fpdf2: running header, ``Page N of M`` footer, wrapped text,
bullet lists, ruled tables), four web pages (the article inside a menu, cookie
banner, "On this page" sidebar, footer, scripts and styles), three Word files
(python-docx: Heading 1-3, List Bullet, List Number, Table Grid, a page
header), two Markdown files and one reStructuredText file — and
``queries.jsonl``: every kestrel question whose evidence lies wholly in these
documents, and eight unanswerable ones about them (``"relevant": []``), with
evidence named by quote only::

    {"doc_id": "people/employee-handbook.pdf", "quote": "...", "grade": 2}

sweep locates each quote in the text its reader extracted (exactly, else after
normalising), so the same questions serve any reader a sweep chooses. A quote is
the kestrel evidence as a reader of the new format shows it:

- in PDF, HTML and DOCX the Markdown markup is gone (``**€15**`` reads ``€15``,
  no list markers or ``#``); ``.md`` and ``.rst`` files are read as they are, so
  their quotes keep the file's own markup;
- a table row reads as its cells, joined by a space in a PDF and by `` | `` in
  HTML and DOCX (the readers write tables as Markdown tables);
- evidence over several plain paragraphs stays whole; evidence over several list
  items, table rows, or a heading and its text keeps one block, since readers put
  markers between them: the longest, a header row only when nothing else is
  left, and for the questions in ``KEEP`` the block that answers them.

Some questions are asked twice: :data:`PAGE_COPIES` repeats a question whose evidence lies
on one PDF page, with that evidence named by page instead of by quote (``"type": "page"``,
id ``<question>-page``), so the two ways of labelling can be compared on the same
passages. The page is found by locating the quote in the default PDF reader's text; the
information security policy carries PDF page labels (``ISP-1``…), so its copies name the
page by its label (``"page_label": "ISP-2"``), as a viewer shows it.

Nothing but the documents goes in ``docs/`` (a README there would be read as
one), so this docstring is the example's documentation.

    python tools/build_documents.py          # rewrites docs/ and queries.jsonl
    python tools/build_documents.py --check  # writes nothing: compares a fresh
                                             # build with the folder, reads every file
                                             # with every reader, locates every quote

``--check`` fails on a stale folder, and on a quote that a *default* reader
(``sweep.datasets.readers.registry``) does not locate exactly once or
boilerplate (menu, banner, sidebar, ``Page N of M``, page header) in a default
reader's text; the other readers (pdfplumber, markitdown for HTML) are reported
only. The build is deterministic — fixed PDF creation date and producer, fixed
DOCX core properties and zip entry times — so a rebuild gives the same bytes
for the same fpdf2 and python-docx. It needs those two (the ``test`` extra) and
the DejaVu fonts (Debian ``fonts-dejavu-core``) for €, curly quotes and arrows.
"""

from __future__ import annotations

import argparse
import datetime as dt
import html
import io
import json
import re
import sys
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

#: The example folder the script builds (bundled inside the package; the script is not).
HERE = Path(__file__).resolve().parent.parent / "src" / "sweep" / "corpora" / "documents"
KESTREL = HERE.parent / "kestrel"
DOCS = HERE / "docs"
QUERIES = HERE / "queries.jsonl"
FONTS = Path("/usr/share/fonts/truetype/dejavu")

# The fixed moment every file claims to be made at, so a rebuild gives the same bytes.
MADE = dt.datetime(2026, 1, 15, 9, 0, 0, tzinfo=dt.timezone.utc)

# kestrel document -> file of the example. Chosen for many questions answered wholly
# inside them (75), from all four departments, with their traps: the user manual vs.
# the newer firmware notes, Lisbon vs. Denver travel policies (in two formats).
SELECTION: dict[str, str] = {
    "people/employee-handbook.md": "people/employee-handbook.pdf",
    "people/travel-policy-eu-lisbon.md": "people/travel-policy-eu-lisbon.pdf",
    "products/aq200-user-manual-v3.0.md": "products/aq200-user-manual-v3.0.pdf",
    "platform/information-security-policy.md": "platform/information-security-policy.pdf",
    "platform/api-guide.md": "platform/api-guide.html",
    "products/aq200-firmware-release-notes.md": "products/aq200-firmware-release-notes.html",
    "products/warranty-and-rma-procedure.md": "products/warranty-and-rma-procedure.html",
    "operations/office-guide-lisbon.md": "operations/office-guide-lisbon.html",
    "operations/vendor-onboarding-procedure.md": "operations/vendor-onboarding-procedure.docx",
    "people/travel-policy-us-denver.md": "people/travel-policy-us-denver.docx",
    "platform/data-retention-policy.md": "platform/data-retention-policy.docx",
    "operations/customer-support-playbook.md": "operations/customer-support-playbook.md",
    "platform/incident-response-procedure.md": "platform/incident-response-procedure.md",
    "people/benefits-faq.md": "people/benefits-faq.rst",
}

# Unanswerable kestrel questions whose subject is one of the chosen documents (the
# near miss: the document discusses the topic but not this fact).
UNANSWERABLE = (
    "operations-041",  # public car park price near the Lisbon office (office guide)
    "people-038",  # SGD per-diem for Kuala Lumpur (travel policies)
    "people-039",  # company car for Denver sales reps (Denver travel policy)
    "people-040",  # Delta Dental annual maximum (benefits FAQ)
    "platform-036",  # GraphQL endpoint (API guide)
    "platform-038",  # maximum webhook payload size (API guide)
    "products-037",  # price of the calibration kit (user manual)
    "products-039",  # firmware 3.5 on Stable (firmware release notes)
)

# Web pages: which site each page is on (its boilerplate) and its breadcrumb.
SITES = {
    "platform/api-guide.html": (
        "Kestrel Cloud Developer Docs",
        ["Developers", "Kestrel Cloud", "API guide"],
    ),
    "products/aq200-firmware-release-notes.html": (
        "Kestrel Support Centre",
        ["Support", "AQ-200", "Firmware"],
    ),
    "products/warranty-and-rma-procedure.html": (
        "Kestrel Support Centre",
        ["Support", "Warranty and returns"],
    ),
    "operations/office-guide-lisbon.html": ("Kestrel Intranet", ["Intranet", "Offices", "Lisbon"]),
}

# Text that only boilerplate carries: a reader whose text contains any of it kept a
# menu, banner, sidebar, footer, script or style (checked by --check).
BOILERPLATE = (
    "We use cookies",
    "Accept all cookies",
    "Only necessary cookies",
    "On this page",
    "Search this site",
    "All rights reserved",
    "Privacy notice",
    "Skip to content",
    "dataLayer",
    "gtag(",
    "font-family",
    "addEventListener",
    "Was this page helpful",
    "Kestrel Labs, Rua",
    "Status page",
)
PAGE_FOOTER = re.compile(r"Page \d+ of \d+")


# --------------------------------------------------------------------------------------
# The Markdown of the kestrel documents, with source offsets
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    """Text of one style; ``src`` is the source offset of ``text[0]`` (``text`` is contiguous there)."""

    text: str
    src: int
    bold: bool = False
    code: bool = False
    url: str = ""

    def clip(self, start: int, end: int) -> Run | None:
        """The part of this run whose source lies in ``[start, end)``."""
        a, b = max(start, self.src), min(end, self.src + len(self.text))
        if a >= b:
            return None
        return Run(self.text[a - self.src : b - self.src], a, self.bold, self.code, self.url)


@dataclass
class Block:
    """One Markdown block: a heading (``level``), a paragraph (one run list per line),
    a list item (``number`` for ordered ones), a table (rows of cells) or code."""

    kind: str  # heading | para | bullet | ordered | table | code
    start: int
    end: int
    level: int = 0
    lines: list[list[Run]] = field(default_factory=list)
    rows: list[list[list[Run]]] = field(default_factory=list)
    info: str = ""


_INLINE = re.compile(r"\*\*(?P<b>.+?)\*\*|`(?P<c>[^`]+)`|\[(?P<lt>[^\]]+)\]\((?P<lu>[^)\s]+)\)")


def inline(text: str, src: int, bold: bool = False) -> list[Run]:
    """The runs of one line of inline Markdown that starts at source offset ``src``."""
    runs: list[Run] = []
    pos = 0
    for m in _INLINE.finditer(text):
        if m.start() > pos:
            runs.append(Run(text[pos : m.start()], src + pos, bold=bold))
        if m.group("b") is not None:
            runs.extend(inline(m.group("b"), src + m.start("b"), bold=True))
        elif m.group("c") is not None:
            runs.append(Run(m.group("c"), src + m.start("c"), bold=bold, code=True))
        else:
            for r in inline(m.group("lt"), src + m.start("lt"), bold=bold):
                runs.append(Run(r.text, r.src, r.bold, r.code, m.group("lu")))
        pos = m.end()
    if pos < len(text):
        runs.append(Run(text[pos:], src + pos, bold=bold))
    return runs


def _row(line: str, src: int) -> list[list[Run]]:
    cells = []
    pos = line.index("|") + 1
    for part in line[pos : line.rindex("|")].split("|"):
        lead = len(part) - len(part.lstrip())
        cells.append(inline(part.strip(), src + pos + lead))
        pos += len(part) + 1
    return cells


_HEADING = re.compile(r"(#{1,6}) +(.*)")
_BULLET = re.compile(r"[-*] +")
_ORDERED = re.compile(r"(\d+)\. +")
_RULE_ROW = re.compile(r"\|[\s:|-]+\|")


def _starts_block(line: str) -> bool:
    return bool(
        _HEADING.match(line)
        or _BULLET.match(line)
        or _ORDERED.match(line)
        or line.startswith(("|", "```"))
    )


def parse(md: str) -> list[Block]:
    """The blocks of a kestrel Markdown document, in order (flat lists, pipe tables)."""
    lines = md.split("\n")
    offs, o = [], 0
    for ln in lines:
        offs.append(o)
        o += len(ln) + 1

    def indent(k: int) -> int:
        return offs[k] + len(lines[k]) - len(lines[k].lstrip())

    blocks: list[Block] = []
    i, n = 0, len(lines)
    while i < n:
        ln, s = lines[i], offs[i]
        if not ln.strip():
            i += 1
        elif m := _HEADING.match(ln):
            blocks.append(
                Block(
                    "heading", s, s + len(ln), len(m.group(1)), [inline(m.group(2), s + m.start(2))]
                )
            )
            i += 1
        elif ln.startswith("```"):
            j = i + 1
            while j < n and not lines[j].startswith("```"):
                j += 1
            body = [
                [Run(lines[k], offs[k], code=True)] if lines[k] else [] for k in range(i + 1, j)
            ]
            blocks.append(
                Block("code", s, offs[j] + len(lines[j]), lines=body, info=ln[3:].strip())
            )
            i = j + 1
        elif ln.startswith("|"):
            j, rows = i, []
            while j < n and lines[j].startswith("|"):
                if not _RULE_ROW.fullmatch(lines[j].strip()):
                    rows.append(_row(lines[j], offs[j]))
                j += 1
            blocks.append(Block("table", s, offs[j - 1] + len(lines[j - 1]), rows=rows))
            i = j
        elif (m := _BULLET.match(ln)) or (m := _ORDERED.match(ln)):
            kind = "ordered" if _ORDERED.match(ln) else "bullet"
            item = [inline(ln[m.end() :], s + m.end())]
            j = i + 1
            while j < n and lines[j].strip() and not _starts_block(lines[j]):  # lazy continuation
                item.append(inline(lines[j].strip(), indent(j)))
                j += 1
            number = int(m.group(1)) if kind == "ordered" else 0
            blocks.append(Block(kind, s, offs[j - 1] + len(lines[j - 1]), number, item))
            i = j
        else:
            j, para = i, []
            while j < n and lines[j].strip() and not _starts_block(lines[j]):
                para.append(inline(lines[j].strip(), indent(j)))
                j += 1
            blocks.append(Block("para", s, offs[j - 1] + len(lines[j - 1]), lines=para))
            i = j
    return blocks


def plain_text(runs: list[Run]) -> str:
    return "".join(r.text for r in runs)


# --------------------------------------------------------------------------------------
# PDF (fpdf2)
# --------------------------------------------------------------------------------------


def render_pdf(blocks: list[Block], title: str, label_prefix: str | None = None) -> bytes:
    """A handbook-style A4 PDF: running header, ``Page N of M`` footer, wrapped text,
    bold headings, bullet and numbered lists, ruled tables; with ``label_prefix``, page
    labels ``<prefix>1``, ``<prefix>2``… that viewers show instead of the numbers."""
    from fpdf import FPDF
    from fpdf.fonts import FontFace

    running = "Kestrel Labs — " + re.sub(r"^Kestrel Labs\s+", "", title)

    class Pdf(FPDF):
        def header(self) -> None:
            self.set_font("DejaVu", "", 8)
            self.set_text_color(110, 110, 110)
            self.cell(0, 5, running, align="L", new_x="LMARGIN", new_y="NEXT")
            self.set_draw_color(190, 190, 190)
            self.line(self.l_margin, self.get_y() + 0.5, self.w - self.r_margin, self.get_y() + 0.5)
            self.set_text_color(0, 0, 0)
            self.ln(6)

        def footer(self) -> None:
            self.set_y(-14)
            self.set_font("DejaVu", "", 8)
            self.set_text_color(110, 110, 110)
            self.cell(0, 5, f"Page {self.page_no()} of {{nb}}", align="C")
            self.set_text_color(0, 0, 0)

    pdf = Pdf(format="A4")
    pdf.set_margins(20, 16, 20)
    pdf.set_auto_page_break(True, margin=20)
    pdf.add_font("DejaVu", "", str(FONTS / "DejaVuSans.ttf"))
    pdf.add_font("DejaVu", "B", str(FONTS / "DejaVuSans-Bold.ttf"))
    pdf.add_font("DejaVuMono", "", str(FONTS / "DejaVuSansMono.ttf"))
    pdf.set_title(title)
    pdf.set_author("Kestrel Labs")
    pdf.set_subject(title)
    pdf.set_creator("Kestrel Labs document templates")
    pdf.set_producer("fpdf2")
    pdf.set_lang("en")
    pdf.set_creation_date(MADE)
    pdf.add_page()
    if label_prefix is not None:
        pdf.set_page_label(label_style="D", label_prefix=label_prefix)

    size, lh = 10, 5.2  # body font size (pt) and line height (mm)

    def write_runs(runs: list[Run]) -> None:
        for r in runs:
            if r.code:
                pdf.set_font("DejaVuMono", "", size - 0.5)
            else:
                pdf.set_font("DejaVu", "B" if r.bold else "", size)
            pdf.write(lh, r.text, link=r.url)
        pdf.set_font("DejaVu", "", size)

    def keep_with_next(height: float) -> None:
        if pdf.get_y() + height > pdf.h - pdf.b_margin:
            pdf.add_page()

    previous = ""
    for b in blocks:
        if previous in ("bullet", "ordered") and b.kind != previous:
            pdf.ln(1.5)  # the space a list ends with
        previous = b.kind
        if b.kind == "heading":
            text = plain_text(b.lines[0])
            pt = {1: 17, 2: 13.5, 3: 11.5}.get(b.level, 10.5)
            if b.level > 1:
                keep_with_next(22)
                pdf.ln(3 if b.level == 2 else 1.5)
            pdf.set_font("DejaVu", "B", pt)
            pdf.start_section(text, level=b.level - 1)
            pdf.multi_cell(0, pt * 0.48, text, align="L", new_x="LMARGIN", new_y="NEXT")
            if b.level == 1:
                pdf.set_draw_color(40, 70, 110)
                pdf.set_line_width(0.6)
                pdf.line(pdf.l_margin, pdf.get_y() + 1, pdf.w - pdf.r_margin, pdf.get_y() + 1)
                pdf.set_line_width(0.2)
                pdf.ln(4)
            pdf.ln(1.5)
            pdf.set_font("DejaVu", "", size)
        elif b.kind == "para":
            for line in b.lines:
                write_runs(line)
                pdf.ln(lh)
            pdf.ln(2.2)
        elif b.kind in ("bullet", "ordered"):
            keep_with_next(lh)
            marker = "•" if b.kind == "bullet" else f"{b.level}."
            left = pdf.l_margin
            pdf.set_font("DejaVu", "", size)
            pdf.set_x(left + 2)
            pdf.cell(6, lh, marker)
            pdf.set_left_margin(left + 8)
            pdf.set_x(left + 8)
            write_runs([r for line in b.lines for r in _spaced(line)])
            pdf.ln(lh)
            pdf.set_left_margin(left)
            pdf.ln(1)
        elif b.kind == "table":
            pdf.ln(1)
            pdf.set_font("DejaVu", "", size - 1.5)
            texts = [[plain_text(c) for c in row] for row in b.rows]
            widths = _column_widths(pdf, texts, size - 1.5, pad=1.6)
            ncol = len(widths)
            with pdf.table(
                col_widths=widths,
                width=pdf.epw,
                text_align="LEFT",
                align="LEFT",
                line_height=4.2,
                padding=(1.2, 1.6),
                borders_layout="HORIZONTAL_LINES",
                headings_style=FontFace(emphasis="BOLD", fill_color=(228, 234, 242)),
                first_row_as_headings=True,
            ) as table:
                for row in texts:
                    r = table.row()
                    for k in range(ncol):
                        r.cell(row[k] if k < len(row) else "")
            pdf.set_font("DejaVu", "", size)
            pdf.ln(3)
        elif b.kind == "code":
            pdf.set_font("DejaVuMono", "", size - 1.5)
            pdf.set_fill_color(244, 244, 244)
            code = "\n".join(plain_text(line) for line in b.lines)
            pdf.multi_cell(0, 4.2, code, fill=True, new_x="LMARGIN", new_y="NEXT")
            pdf.set_font("DejaVu", "", size)
            pdf.ln(2.5)
    return bytes(pdf.output())


def _column_widths(pdf, rows: list[list[str]], pt: float, pad: float) -> list[float]:
    """Column widths (mm) filling the text width: each column at least as wide as its
    longest word (fpdf2 would split a word mid-letters otherwise), the rest shared by
    how much each column's longest cell lacks."""
    ncol = max(len(r) for r in rows)
    least, wants = [], []
    for k in range(ncol):
        cells = [(r[k] if k < len(r) else "", i == 0) for i, r in enumerate(rows)]
        longest_word = longest_cell = 0.0
        for text, head in cells:
            pdf.set_font("DejaVu", "B" if head else "", pt)
            longest_cell = max(longest_cell, pdf.get_string_width(text))
            longest_word = max([longest_word] + [pdf.get_string_width(w) for w in text.split()])
        least.append(longest_word + 2 * pad + 1.5)
        wants.append(max(longest_cell + 2 * pad + 1.5, least[-1]))
    pdf.set_font("DejaVu", "", pt)
    room = pdf.epw
    if sum(wants) <= room:
        return [w * room / sum(wants) for w in wants]
    spare = room - sum(least)
    lack = [w - m for w, m in zip(wants, least)]
    return [m + spare * x / sum(lack) for m, x in zip(least, lack)]


def _spaced(line: list[Run]) -> list[Run]:
    """A continuation line of a list item, joined to the previous one by a space."""
    if not line:
        return line
    first = line[0]
    return [Run(" " + first.text, first.src - 1, first.bold, first.code, first.url), *line[1:]]


# --------------------------------------------------------------------------------------
# HTML
# --------------------------------------------------------------------------------------


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _html_runs(runs: list[Run]) -> str:
    out = []
    for r in runs:
        t = html.escape(r.text, quote=False)
        if r.code:
            t = f"<code>{t}</code>"
        if r.bold:
            t = f"<strong>{t}</strong>"
        if r.url:
            t = f'<a href="{html.escape(r.url)}">{t}</a>'
        out.append(t)
    return "".join(out)


def _html_body(blocks: list[Block]) -> str:
    out: list[str] = []
    open_list = ""
    for b in blocks:
        kind = b.kind if b.kind in ("bullet", "ordered") else ""
        if open_list and kind != open_list:
            out.append("</ul>" if open_list == "bullet" else "</ol>")
            open_list = ""
        if kind and not open_list:
            start = f' start="{b.level}"' if kind == "ordered" and b.level != 1 else ""
            out.append("<ul>" if kind == "bullet" else f"<ol{start}>")
            open_list = kind
        if b.kind == "heading":
            text = plain_text(b.lines[0])
            ident = f' id="{_slug(text)}"' if b.level > 1 else ""
            out.append(f"<h{b.level}{ident}>{_html_runs(b.lines[0])}</h{b.level}>")
        elif b.kind == "para":
            cls = ' class="doc-details"' if len(b.lines) > 1 else ""
            out.append(f"<p{cls}>" + "<br>\n".join(_html_runs(line) for line in b.lines) + "</p>")
        elif kind:
            out.append("  <li>" + " ".join(_html_runs(line) for line in b.lines) + "</li>")
        elif b.kind == "table":
            head, *body = b.rows
            out.append('<div class="table-wrap"><table>')
            out.append(
                "<thead><tr>" + "".join(f"<th>{_html_runs(c)}</th>" for c in head) + "</tr></thead>"
            )
            out.append("<tbody>")
            for row in body:
                out.append("<tr>" + "".join(f"<td>{_html_runs(c)}</td>" for c in row) + "</tr>")
            out.append("</tbody></table></div>")
        elif b.kind == "code":
            lang = f' class="language-{b.info}"' if b.info else ""
            code = "\n".join(html.escape(plain_text(line), quote=False) for line in b.lines)
            out.append(f"<pre><code{lang}>{code}</code></pre>")
    if open_list:
        out.append("</ul>" if open_list == "bullet" else "</ol>")
    return "\n".join(out)


_STYLE = """\
:root { --ink: #1d2733; --accent: #1f5f99; --muted: #5b6775; }
body { margin: 0; font-family: "Inter", "Segoe UI", system-ui, sans-serif; color: var(--ink); line-height: 1.55; }
.site-header { display: flex; align-items: center; gap: 2rem; padding: .8rem 2rem; border-bottom: 1px solid #dde3ea; }
.main-nav ul { display: flex; gap: 1.2rem; list-style: none; margin: 0; padding: 0; }
.layout { display: grid; grid-template-columns: 16rem minmax(0, 48rem); gap: 3rem; padding: 2rem; }
.sidebar { font-size: .9rem; position: sticky; top: 1rem; align-self: start; }
table { border-collapse: collapse; width: 100%; } th, td { border-bottom: 1px solid #dde3ea; padding: .4rem .6rem; text-align: left; }
pre { background: #f4f6f8; padding: .8rem 1rem; overflow-x: auto; }
.cookie-banner { position: fixed; bottom: 0; left: 0; right: 0; background: #10263d; color: #fff; padding: 1rem 2rem; }
.site-footer { border-top: 1px solid #dde3ea; padding: 1.5rem 2rem; color: var(--muted); font-size: .85rem; }
"""

_NAV = {
    "Kestrel Cloud Developer Docs": [
        "Get started",
        "API reference",
        "SDKs and libraries",
        "Webhooks",
        "Changelog",
        "Status page",
    ],
    "Kestrel Support Centre": [
        "Product manuals",
        "Firmware downloads",
        "Troubleshooting",
        "Warranty and returns",
        "Contact support",
        "Status page",
    ],
    "Kestrel Intranet": [
        "People hub",
        "Offices",
        "IT service desk",
        "Policies",
        "Company calendar",
        "Status page",
    ],
}


def render_page(blocks: list[Block], title: str, path: str) -> str:
    """A web page of one of Kestrel's sites: the document is the ``<article>``; around it
    a header menu, breadcrumb, cookie banner, sidebar, footer, scripts and styles."""
    site, crumbs = SITES[path]
    toc = "\n".join(
        f'        <li><a href="#{_slug(plain_text(b.lines[0]))}">{html.escape(plain_text(b.lines[0]), quote=False)}</a></li>'
        for b in blocks
        if b.kind == "heading" and b.level == 2
    )
    nav = "\n".join(
        f'        <li><a href="/{_slug(item)}/">{html.escape(item)}</a></li>' for item in _NAV[site]
    )
    crumb = ' <span aria-hidden="true">›</span> '.join(
        f'<a href="/{_slug(c)}/">{html.escape(c)}</a>' for c in crumbs
    )
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>{html.escape(title)} · {html.escape(site)}</title>
  <meta name="description" content="{html.escape(title)} — {html.escape(site)}">
  <link rel="stylesheet" href="/assets/site.css">
  <style>
{_STYLE}  </style>
  <script>
    window.dataLayer = window.dataLayer || [];
    function gtag() {{ dataLayer.push(arguments); }}
    gtag("consent", "default", {{ analytics_storage: "denied" }});
  </script>
  <script async src="/assets/analytics.js"></script>
</head>
<body>
  <a class="skip-link" href="#content">Skip to content</a>
  <div id="cookie-consent" class="cookie-banner" role="dialog" aria-label="Cookie consent">
    <p>We use cookies to remember your preferences and to understand how these pages are used.
    Read our <a href="/privacy/#cookies">Privacy notice</a> for details.</p>
    <button type="button" data-consent="all">Accept all cookies</button>
    <button type="button" data-consent="necessary">Only necessary cookies</button>
  </div>
  <header class="site-header">
    <a class="logo" href="/"><img src="/assets/kestrel-logo.svg" alt="Kestrel Labs" width="120" height="28"></a>
    <nav class="main-nav" aria-label="Main">
      <ul>
{nav}
      </ul>
    </nav>
    <form class="search" action="/search/" role="search">
      <input type="search" name="q" placeholder="Search this site" aria-label="Search this site">
    </form>
  </header>
  <div class="layout">
    <aside class="sidebar" aria-label="Section navigation">
      <h2>On this page</h2>
      <ul>
{toc}
      </ul>
      <div class="feedback">
        <p>Was this page helpful?</p>
        <button type="button">Yes</button> <button type="button">No</button>
      </div>
    </aside>
    <main id="content">
      <nav class="breadcrumb" aria-label="Breadcrumb">{crumb}</nav>
      <article>
{_html_body(blocks)}
      </article>
    </main>
  </div>
  <footer class="site-footer">
    <p>© 2026 Kestrel Labs. All rights reserved.</p>
    <p>Kestrel Labs, Rua da Prata 80, 1100-415 Lisboa, Portugal · 1550 Wynkoop St, Denver, CO 80202, USA</p>
    <ul class="footer-links">
      <li><a href="/privacy/">Privacy notice</a></li>
      <li><a href="/terms/">Terms of use</a></li>
      <li><a href="https://status.kestrelcloud.io/">Status page</a></li>
    </ul>
  </footer>
  <script>
    document.querySelectorAll("[data-consent]").forEach(function (button) {{
      button.addEventListener("click", function () {{
        document.getElementById("cookie-consent").hidden = true;
        var granted = button.dataset.consent === "all" ? "granted" : "denied";
        gtag("consent", "update", {{ analytics_storage: granted }});
      }});
    }});
  </script>
</body>
</html>
"""


# --------------------------------------------------------------------------------------
# DOCX (python-docx)
# --------------------------------------------------------------------------------------


def render_docx(blocks: list[Block], title: str) -> bytes:
    """A Word document in the default template: Heading 1-3, List Bullet, List Number
    (restarting at each list), Table Grid tables with a bold header row, a page header."""
    import docx
    from docx.oxml.ns import qn
    from docx.shared import Pt

    document = docx.Document()
    core = document.core_properties
    core.title = title
    core.author = "Kestrel Labs"
    core.last_modified_by = "Kestrel Labs"
    core.created = MADE.replace(tzinfo=None)
    core.modified = MADE.replace(tzinfo=None)
    core.last_printed = MADE.replace(tzinfo=None)
    core.revision = 1
    core.subject = ""
    core.comments = ""
    core.keywords = ""
    core.category = ""
    header = document.sections[0].header.paragraphs[0]
    header.text = "Kestrel Labs — " + title

    numbering = document.part.numbering_part.element
    list_number_num = document.styles["List Number"].element.pPr.numPr.numId.val
    abstract = next(n for n in numbering.num_lst if n.numId == list_number_num).abstractNumId.val

    def restart_numbering() -> int:
        num = numbering.add_num(abstract)
        num.add_lvlOverride(ilvl=0).add_startOverride(1)
        return num.numId

    def add_runs(par, runs: list[Run], bold: bool = False) -> None:
        for r in runs:
            run = par.add_run(r.text)
            run.bold = r.bold or bold or None
            if r.code:
                run.font.name = "Consolas"
                run.font.size = Pt(10)

    previous = ""
    num_id = 0
    for b in blocks:
        if b.kind == "heading":
            par = document.add_paragraph(style=f"Heading {min(b.level, 3)}")
            add_runs(par, b.lines[0])
        elif b.kind == "para":
            for line in b.lines:
                add_runs(document.add_paragraph(), line)
        elif b.kind == "bullet":
            add_runs(
                document.add_paragraph(style="List Bullet"),
                [r for line in b.lines for r in _spaced(line)],
            )
        elif b.kind == "ordered":
            par = document.add_paragraph(style="List Number")
            if previous != "ordered":
                num_id = restart_numbering()
            num_pr = par._p.get_or_add_pPr().get_or_add_numPr()
            num_pr.get_or_add_ilvl().val = 0
            num_pr.get_or_add_numId().val = num_id
            add_runs(par, [r for line in b.lines for r in _spaced(line)])
        elif b.kind == "table":
            ncol = max(len(r) for r in b.rows)
            table = document.add_table(rows=len(b.rows), cols=ncol)
            table.style = "Table Grid"
            for i, row in enumerate(b.rows):
                for k, cell in enumerate(row):
                    add_runs(table.cell(i, k).paragraphs[0], cell, bold=i == 0)
            # the header row repeats on every page, as Word users mark it
            tr_pr = table.rows[0]._tr.get_or_add_trPr()
            tr_pr.append(tr_pr.makeelement(qn("w:tblHeader"), {}))
            document.add_paragraph()
        elif b.kind == "code":
            for line in b.lines:
                add_runs(document.add_paragraph(style="No Spacing"), line)
        previous = b.kind
    buf = io.BytesIO()
    document.save(buf)
    return _fixed_zip(buf.getvalue())


def _fixed_zip(data: bytes) -> bytes:
    """The same zip with fixed timestamps and permissions (python-docx stamps the current time)."""
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            fixed = zipfile.ZipInfo(info.filename, date_time=MADE.timetuple()[:6])
            fixed.compress_type = zipfile.ZIP_DEFLATED
            fixed.external_attr = 0o644 << 16
            dst.writestr(fixed, src.read(info.filename), compresslevel=9)
    return out.getvalue()


# --------------------------------------------------------------------------------------
# reStructuredText (read as it is, like Markdown)
# --------------------------------------------------------------------------------------


def rst_runs(runs: list[Run]) -> str:
    out = []
    for r in runs:
        t = r.text
        if r.code:
            t = f"``{t}``"
        elif r.bold:
            t = f"**{t}**"
        if r.url:
            t = f"`{t} <{r.url}>`__"
        out.append(t)
    return "".join(out)


def render_rst(blocks: list[Block]) -> str:
    """reST: over- and underlined title, ``=`` and ``-`` section underlines, ``-`` and
    ``1.`` lists, grid tables, ``code-block`` directives."""
    out: list[str] = []
    previous = ""
    for b in blocks:
        if b.kind == "heading":
            text = rst_runs(b.lines[0])
            bar = {1: "=", 2: "=", 3: "-"}.get(b.level, "~") * len(text)
            out.append(f"{bar}\n{text}\n{bar}" if b.level == 1 else f"{text}\n{bar}")
        elif b.kind == "para":
            out.append("\n".join(rst_runs(line) for line in b.lines))
        elif b.kind in ("bullet", "ordered"):
            marker = "- " if b.kind == "bullet" else f"{b.level}. "
            item = marker + ("\n" + " " * len(marker)).join(rst_runs(line) for line in b.lines)
            if previous == b.kind:  # items of one list are not separated by blank lines
                out[-1] += "\n" + item
            else:
                out.append(item)
        elif b.kind == "table":
            cells = [[rst_runs(c) for c in row] for row in b.rows]
            widths = [max(len(r[k]) for r in cells) for k in range(len(cells[0]))]
            sep = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
            head = "+" + "+".join("=" * (w + 2) for w in widths) + "+"
            lines = [sep]
            for i, row in enumerate(cells):
                lines.append("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |")
                lines.append(head if i == 0 else sep)
            out.append("\n".join(lines))
        elif b.kind == "code":
            body = "\n".join("   " + plain_text(line) for line in b.lines)
            out.append(f".. code-block:: {b.info or 'text'}\n\n{body}")
        previous = b.kind
    return "\n\n".join(out) + "\n"


# --------------------------------------------------------------------------------------
# Quotes: kestrel evidence as a reader of the new format shows it
# --------------------------------------------------------------------------------------

# How each format's readers join what they show: the cells of a table row, and two
# paragraphs (whitespace runs are normalised when locating, so only exactness depends on it).
CELL_SEP = {"pdf": " ", "html": " | ", "docx": " | ", "rst": " | "}
PARA_SEP = {"pdf": "\n", "html": "\n", "docx": "\n\n", "rst": "\n\n"}


def _block_parts(b: Block, start: int, end: int, fmt: str) -> list[str]:
    """The visible text of block ``b`` within source ``[start, end)``: one string per
    row for a table, else one string."""
    show = rst_runs if fmt == "rst" else plain_text

    def clip(runs: list[Run]) -> list[Run]:
        return [c for r in runs if (c := r.clip(start, end))]

    if b.kind == "table":
        rows = []
        for row in b.rows:
            cells = [show(clip(c)) for c in row]
            cells = [c for c in cells if c.strip()]
            if cells:
                rows.append(CELL_SEP[fmt].join(cells))
        return rows
    if b.kind in ("bullet", "ordered"):
        text = " ".join(t for line in b.lines if (t := show(clip(line))))
    else:
        text = "\n".join(t for line in b.lines if (t := show(clip(line))))
    return [text.strip()] if text.strip() else []


# Evidence over several list items, rows or a heading and its text keeps one block; by
# default the longest, and for these questions the block that answers them (the
# longest of "Low | 3 days", "Medium | 7 days", "High | 15 days" is the wrong one for a
# contract manufacturer). Each phrase picks the block that contains it.
#: Questions asked again with their evidence named by page (see the module's docstring).
PAGE_COPIES = (
    "people-001",
    "people-007",
    "people-016",
    "platform-006",
    "platform-014",
    "products-001",
    "products-004",
    "products-017",
)
#: PDFs whose pages carry labels (``/PageLabels``) other than their numbers: prefix.
PAGE_LABELS = {"platform/information-security-policy.pdf": "ISP-"}

KEEP = {
    "operations-005": "15 business days",  # a contract manufacturer is High risk
    "operations-022": "15 business days",  # a vendor processing customer data is High risk
    "operations-015": "accepted only through the supplier portal",
    "people-017": "Lisbon and Porto",  # the hotel cap for Porto
    "platform-002": "valid for 24 hours",
    "platform-004": "more than 5 minutes older",  # the replay check
    "platform-011": "Critical (9.0",  # CVSS 9.3 is Critical; the intro has no deadline
    "platform-015": "within 30 days of receiving",  # "how long we have"
    "products-005": "is at least 0.80",  # the pass criteria
    "products-021": "Press and hold the SETUP button",  # how to enter access point mode
}


def quote_for(
    blocks: list[Block], source: str, start: int, end: int, fmt: str, keep: str = ""
) -> str:
    """The kestrel evidence ``source[start:end]`` as the new format shows it (see the module
    docstring). Markdown keeps it as written. Evidence over several blocks keeps plain
    paragraphs whole; otherwise one block: the one containing ``keep`` when given,
    else the longest (a table's header row only when the evidence is only the header)."""
    if fmt == "md":
        return source[start:end]
    hit = [
        (b, parts)
        for b in blocks
        if b.start < end and b.end > start and (parts := _block_parts(b, start, end, fmt))
    ]
    if len(hit) == 1 and len(hit[0][1]) == 1:
        return hit[0][1][0]
    if all(b.kind == "para" for b, _ in hit):
        return PARA_SEP[fmt].join(p for _, parts in hit for p in parts)
    candidates = []
    for b, parts in hit:
        header_in = b.kind == "table" and any(
            r.clip(start, end) for cell in b.rows[0] for r in cell
        )
        if header_in and len(parts) > 1:
            parts = parts[1:]  # the header row, when body rows are part of the evidence too
        candidates.extend(parts)
    if keep:
        chosen = [c for c in candidates if keep in c]
        if len(chosen) != 1:
            raise ValueError(
                f"KEEP phrase {keep!r} is in {len(chosen)} blocks of the evidence, not 1"
            )
        return chosen[0]
    return max(candidates, key=len)


# --------------------------------------------------------------------------------------
# Building
# --------------------------------------------------------------------------------------


def build_corpus() -> tuple[dict[str, bytes], bytes, list[dict]]:
    """Every file of the example as bytes (``docs/``-relative path -> bytes), the bytes of
    ``queries.jsonl`` and its rows."""
    files: dict[str, bytes] = {}
    parsed: dict[str, tuple[str, list[Block]]] = {}
    for src, dst in SELECTION.items():
        text = (KESTREL / "docs" / src).read_text(encoding="utf-8")
        blocks = parse(text)
        parsed[src] = (text, blocks)
        title = plain_text(blocks[0].lines[0])
        fmt = dst.rsplit(".", 1)[1]
        if fmt == "pdf":
            files[dst] = render_pdf(blocks, title, PAGE_LABELS.get(dst))
        elif fmt == "html":
            files[dst] = render_page(blocks, title, dst).encode("utf-8")
        elif fmt == "docx":
            files[dst] = render_docx(blocks, title)
        elif fmt == "rst":
            files[dst] = render_rst(blocks).encode("utf-8")
        else:
            files[dst] = text.encode("utf-8")

    rows = []
    for raw in (KESTREL / "queries.jsonl").read_text(encoding="utf-8").splitlines():
        q = json.loads(raw)
        if not q["relevant"]:
            if q["query_id"] in UNANSWERABLE:
                rows.append(
                    {
                        "query_id": q["query_id"],
                        "query": q["query"],
                        "type": q["type"],
                        "relevant": [],
                    }
                )
            continue
        if not all(r["doc_id"] in SELECTION for r in q["relevant"]):
            continue
        relevant = []
        for r in q["relevant"]:
            text, blocks = parsed[r["doc_id"]]
            dst = SELECTION[r["doc_id"]]
            keep = KEEP.get(q["query_id"], "")
            if keep and keep not in r["quote"]:
                keep = ""  # the phrase is for another evidence item of the question
            quote = quote_for(blocks, text, r["start"], r["end"], dst.rsplit(".", 1)[1], keep)
            item = {"doc_id": dst, "quote": quote}
            if "grade" in r:
                item["grade"] = r["grade"]
            relevant.append(item)
        rows.append(
            {
                "query_id": q["query_id"],
                "query": q["query"],
                "type": q["type"],
                "relevant": relevant,
            }
        )
    rows += page_copies(rows, files)
    queries = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode("utf-8")
    return files, queries, rows


def page_copies(rows: list[dict], files: dict[str, bytes]) -> list[dict]:
    """The questions of :data:`PAGE_COPIES` again, their evidence named by the page of the
    default PDF reader's text that holds the quote (by label where the PDF has labels)."""
    from sweep.datasets.quotes import QuoteIndex
    from sweep.datasets.readers import registry

    reader = registry.reader_for("pdf", registry.DEFAULT_READERS["pdf"])
    read: dict[str, object] = {}
    copies = []
    by_id = {row["query_id"]: row for row in rows}
    for query_id in PAGE_COPIES:
        row = by_id[query_id]
        relevant = []
        for r in row["relevant"]:
            extracted = read.get(r["doc_id"])
            if extracted is None:
                extracted = read[r["doc_id"]] = reader.read(files[r["doc_id"]], r["doc_id"])
            found = QuoteIndex(extracted.text).locate(r["quote"])
            if not found:
                raise SystemExit(f"{query_id}: {found.message()}")
            pages = [
                n
                for n, (a, b) in enumerate(extracted.pages, 1)
                if a < found.end and found.start < b
            ]
            if len(pages) != 1:
                raise SystemExit(f"{query_id}: the quote lies on pages {pages}, not on one")
            item: dict = {"doc_id": r["doc_id"]}
            if r["doc_id"] in PAGE_LABELS:
                item["page_label"] = f"{PAGE_LABELS[r['doc_id']]}{pages[0]}"
            else:
                item["page"] = pages[0]
            if "grade" in r:
                item["grade"] = r["grade"]
            relevant.append(item)
        copies.append(
            {
                "query_id": f"{query_id}-page",
                "query": row["query"],
                "type": "page",
                "relevant": relevant,
            }
        )
    return copies


def write(files: dict[str, bytes], queries: bytes) -> None:
    for old in sorted(DOCS.rglob("*"), reverse=True):  # a file renamed since the last build
        if old.is_file() and old.relative_to(DOCS).as_posix() not in files:
            old.unlink()
    for rel, data in files.items():
        path = DOCS / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    QUERIES.write_bytes(queries)


# --------------------------------------------------------------------------------------
# Checking: every quote located by every reader
# --------------------------------------------------------------------------------------


def _readers() -> dict[str, dict[str, tuple[object, bool]]]:
    """Every reader sweep has for each suffix of the example: name -> (reader, is default)."""
    from sweep.datasets.readers import registry

    out: dict[str, dict[str, tuple[object, bool]]] = {}
    for suffix in ("pdf", "html", "docx", "md", "rst"):
        fmt = registry.format_of(f"x.{suffix}")
        out[suffix] = {
            name: (registry.reader_for(fmt, name), name == registry.DEFAULT_READERS[fmt])
            for name in registry.READERS[fmt]
        }
    return out


def check_corpus(files: dict[str, bytes], queries: bytes, rows: list[dict], verbose: bool) -> int:
    """Compare a fresh build with the folder, then read every file with every reader sweep
    has and locate every quote in each text (as ``dataset.fuzzy=null`` would). Returns the
    number of problems: a stale folder, and any quote a *default* reader does not locate
    once or any boilerplate in its text. Other readers are reported, not failed."""
    from sweep.datasets.quotes import QuoteIndex

    problems = 0
    on_disk = {
        p.relative_to(DOCS).as_posix(): p.read_bytes() for p in DOCS.rglob("*") if p.is_file()
    }
    stale = sorted(k for k in set(files) | set(on_disk) if files.get(k) != on_disk.get(k))
    if not QUERIES.exists() or QUERIES.read_bytes() != queries:
        stale.append("queries.jsonl")
    if stale:
        problems += 1
        print(f"stale: {', '.join(stale)} differ from a fresh build (run build.py)")
    else:
        print(
            f"up to date: {len(files)} documents and queries.jsonl are byte-identical to a fresh build"
        )

    by_doc: dict[str, list[tuple[str, str]]] = {}
    for row in rows:
        for r in row["relevant"]:
            if "quote" in r:  # a page copy names no quote (its page was found by one)
                by_doc.setdefault(r["doc_id"], []).append((row["query_id"], r["quote"]))
    readers = _readers()
    total: dict[tuple[str, str, bool], Counter] = {}
    for doc_id, data in sorted(files.items()):
        suffix = doc_id.rsplit(".", 1)[1]
        for name, (reader, default) in readers[suffix].items():
            counts = total.setdefault((suffix, name, default), Counter())
            try:
                text = reader.read(data, doc_id).text
            except Exception as e:  # noqa: BLE001 - any failure of a reader is a finding here
                counts["unreadable"] += len(by_doc.get(doc_id, []))
                print(f"  {doc_id} [{name}]: cannot read: {type(e).__name__}: {e}")
                continue
            leaks = [m for m in BOILERPLATE if m in text] + PAGE_FOOTER.findall(text)[:1]
            if suffix in ("pdf", "docx") and "Kestrel Labs — " in text:
                leaks.append("page header 'Kestrel Labs — …'")
            if leaks:
                counts["boilerplate"] += 1
                print(
                    f"  {doc_id} [{name}]: boilerplate in the text: {', '.join(map(repr, leaks))}"
                )
            index = QuoteIndex(text)
            for query_id, quote in by_doc.get(doc_id, []):
                found = index.locate(quote)
                counts[found.how if found else found.reason] += 1
                if not found and (verbose or default):
                    print(f"  {doc_id} [{name}] {query_id}: {found.message()[:240]}")
    print()
    print(
        f"{'format':6} {'reader':22} {'exact':>6} {'normalised':>10} {'not found':>9} {'ambiguous':>9}"
        f" {'unreadable':>10} {'boilerplate':>11}"
    )
    for (suffix, name, default), c in sorted(total.items()):
        label = f"{name} (default)" if default else name
        print(
            f"{suffix:6} {label:22} {c['exact']:6} {c['normalised']:10} {c['not found']:9} {c['ambiguous']:9}"
            f" {c['unreadable']:10} {c['boilerplate']:11}"
        )
        if default and (c["not found"] or c["ambiguous"] or c["unreadable"] or c["boilerplate"]):
            problems += 1
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--check", action="store_true", help="verify the folder and the quotes; write nothing"
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="list every quote a reader did not locate"
    )
    args = parser.parse_args(argv)
    files, queries, rows = build_corpus()
    if not args.check:
        write(files, queries)
        answerable = sum(1 for r in rows if r["relevant"])
        size = sum(len(b) for b in files.values()) + len(queries)
        print(
            f"wrote {len(files)} documents and {len(rows)} queries ({answerable} answerable, "
            f"{len(rows) - answerable} unanswerable), {size / 1024:.0f} KiB, to {HERE}"
        )
        return 0
    return 1 if check_corpus(files, queries, rows, args.verbose) else 0


if __name__ == "__main__":
    sys.exit(main())
