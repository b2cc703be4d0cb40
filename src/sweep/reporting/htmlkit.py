"""Self-contained HTML pages: one file, inline CSS, pictures embedded as base64 PNG.

The kit knows tables, pictures, sections and pages, nothing of sweep's own types:
the pages (``sweep.reporting.html``, ``comparison``, ``worstqueries``, the answers
page) build their content with it.

A report is mailed, attached to a ticket or opened from an archive; it must
not depend on the sweep directory or on anything fetched from the network.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path

from sweep.core.files import write_text_atomic

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:1400px;
 padding:0 1rem;color:#222;line-height:1.4}
h1{font-size:1.5rem;margin-bottom:.2rem} h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ddd}
h3{font-size:1rem;margin:1.2rem 0 .3rem}
details.section>summary{cursor:pointer;list-style:none} details.section>summary::-webkit-details-marker{display:none}
details.section>summary h2{display:inline-block;width:100%} details.section>summary h2::before{content:"▸ ";color:#888}
details.section[open]>summary h2::before{content:"▾ "}
.sub{color:#666;margin-top:0}
table{border-collapse:collapse;font-size:.85rem;margin:.5rem 0}
th,td{border:1px solid #ddd;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#f4f4f4;position:sticky;top:0}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap} td.short{white-space:nowrap}
tr.best td{background:#e3f4e1;font-weight:600} tr.tie td{background:#f3faf2}
tr.bad td{background:#fbeaea;color:#7a2e2e}
tr.pick td{background:#dcebfa;border-top:2px solid #3b75af;border-bottom:2px solid #3b75af}
tr.pick td:first-child{border-left:5px solid #3b75af}
tr.best.pick td{background:#e3f4e1}
.badge{display:inline-block;background:#3b75af;color:#fff;border-radius:3px;padding:0 .35rem;
 margin-left:.35rem;font-size:.75rem;font-weight:600}
.legend{font-size:.8rem;color:#444;margin:.3rem 0} .legend span.sw{display:inline-block;width:1.6rem;
 height:.8rem;vertical-align:middle;margin:0 .3rem 0 .9rem;border:1px solid #ccc}
.rec{background:#eef5fc;border-left:4px solid #3b75af;padding:.6rem 1rem;margin:1rem 0}
.rec.warn{background:#fff6e0;border-left-color:#c98a00}
.note{color:#555;font-size:.85rem} figure{margin:1rem 0} figcaption{color:#555;font-size:.85rem}
img{max-width:100%;height:auto;border:1px solid #eee} .scroll{overflow-x:auto;max-width:100%}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(420px,1fr));gap:1rem}
.grid .picture.wide{grid-column:1/-1}
figure.zoom>a{cursor:zoom-in} figure.zoom .close{display:none}
figure.zoom:target{position:fixed;inset:0;z-index:10;margin:0;padding:2.5rem 1rem 1rem;overflow:auto;
 background:rgba(25,25,25,.97);text-align:center}
figure.zoom:target img{max-width:none;background:#fff} figure.zoom:target figcaption{color:#eee}
figure.zoom:target .hint{display:none}
figure.zoom:target .close{display:block;position:fixed;inset:0;z-index:-1}
figure.zoom:target .close::after{content:"× close";position:fixed;top:.6rem;right:1.2rem;color:#fff;
 font-size:1rem}
.q{border:1px solid #e2e2e2;border-radius:4px;padding:.5rem 1rem;margin:.8rem 0}
.chunk{white-space:pre-wrap;background:#fafafa;border:1px solid #eee;padding:.4rem;max-height:14rem;
 overflow:auto;font-size:.85rem} mark{background:#ffe28a}
.rel{color:#1d7a1d} .irr{color:#999}
"""


@dataclass(frozen=True)
class Table:
    """A rendered table: text cells, and optionally CSS classes per row (best, tie, pick, bad).

    On a row of class ``pick``, a cell that is ``badge`` or ends in ``", " + badge`` shows
    it as a badge.
    """

    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    classes: tuple[str, ...] = ()
    badge: str = ""

    @classmethod
    def of(cls, df, classes: Sequence[str] = (), badge: str = "") -> Table:
        """A pandas DataFrame of display strings, with a CSS class per row."""
        return cls(
            tuple(str(c) for c in df.columns),
            tuple(tuple(str(v) for v in row) for row in df.itertuples(index=False)),
            tuple(classes),
            badge,
        )


@dataclass(frozen=True)
class Picture:
    path: Path
    caption: str


@dataclass(frozen=True)
class Section:
    """A titled part of a page; ``body`` is HTML built with this module's functions."""

    title: str
    body: str
    #: folded when the page opens (a section read less often than the table)
    open: bool = True


@dataclass(frozen=True)
class Script:
    """What a page's script brings: CSS for its head, its data and code for the end of
    its body, and the text of a file beside the page (``sidecar``) when its data does
    not ride inside."""

    css: str
    body: str
    sidecar: str | None = None


def _numeric(text: str) -> bool:
    head = text.split(" ", 1)[0].replace("%", "")
    try:
        float(head)
    except ValueError:
        return False
    return True


#: Cells up to this long never wrap: a squeezed wide table would break a verdict such as
#: "worse (p<0.001)" over two lines; longer prose (a failed row's reason) may wrap.
SHORT_CELL = 30


def _cell(text: str, badge: str) -> str:
    if badge and (text.endswith(", " + badge) or text == badge):
        head = text[: -len(badge)].rstrip(", ")
        return f'<td class="short">{escape(head)}<span class="badge">{escape(badge)}</span></td>'
    if _numeric(text):
        return f'<td class="num">{escape(text)}</td>'
    return (
        f'<td class="short">{escape(text)}</td>'
        if len(text) <= SHORT_CELL
        else f"<td>{escape(text)}</td>"
    )


def table_html(table: Table) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in table.header)
    body = []
    for i, row in enumerate(table.rows):
        cls = table.classes[i] if i < len(table.classes) and table.classes[i] else ""
        badge = table.badge if "pick" in cls.split() else ""
        tds = "".join(_cell(c, badge) for c in row)
        body.append(f'<tr class="{cls}">{tds}</tr>' if cls else f"<tr>{tds}</tr>")
    # Wide tables scroll inside their box instead of widening the page.
    return (
        f'<div class="scroll"><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


#: A picture wider than this (in pixels) takes a whole row of a grid: at a third of
#: the page, a figure of many panels cannot be read.
WIDE_PX = 900


def png_size(data: bytes) -> tuple[int, int] | None:
    """``(width, height)`` from a PNG's header; None when ``data`` is not a PNG."""
    if len(data) < 24 or data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", data[16:24])


def picture_html(picture: Picture) -> str:
    """The PNG embedded as a data URI, with its caption; a click opens it full size.

    Full size is the same ``<figure>`` restyled by CSS ``:target`` as an overlay, so
    the page needs no script and carries each picture once; a click outside the
    picture (or on "× close") returns to where it was on the page.
    """
    raw = Path(picture.path).read_bytes()
    data = base64.b64encode(raw).decode("ascii")
    key = "fig-" + hashlib.sha1(os.fsencode(picture.path)).hexdigest()[:12]  # any name
    size = png_size(raw)
    dims = f' width="{size[0]}" height="{size[1]}"' if size else ""
    wide = " wide" if size and size[0] > WIDE_PX else ""
    caption = escape(picture.caption)
    # The wrapper stays in the page when the figure becomes the overlay: closing returns to it.
    return (
        f'<div class="picture{wide}" id="{key}-at"><figure class="zoom" id="{key}">'
        f'<a href="#{key}" title="open full size"><img alt="{caption}"{dims} '
        f'src="data:image/png;base64,{data}"></a>'
        f'<a class="close" href="#{key}-at" aria-label="close"></a>'
        f'<figcaption>{caption}<span class="hint"> (click to enlarge)</span></figcaption>'
        "</figure></div>"
    )


def legend(items: Sequence[tuple[str, str]]) -> str:
    """A line of ``(CSS row class, meaning)`` swatches that says what a table's row marks mean."""
    swatch = {
        "best": "background:#e3f4e1",
        "tie": "background:#f3faf2",
        "pick": "background:#dcebfa;border:2px solid #3b75af;border-left-width:5px",
        "bad": "background:#fbeaea",
    }
    return (
        '<p class="legend">'
        + "".join(
            f'<span class="sw" style="{swatch.get(cls, "")}"></span>{escape(text)}'
            for cls, text in items
        )
        + "</p>"
    )


def paragraphs(texts: Sequence[str], cls: str = "note") -> str:
    return "".join(f'<p class="{cls}">{escape(t)}</p>' for t in texts)


def bullets(texts: Sequence[str], cls: str = "note") -> str:
    return f'<ul class="{cls}">' + "".join(f"<li>{escape(t)}</li>" for t in texts) + "</ul>"


def marked(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` escaped, with the gold parts in ``<mark>``."""
    out, pos = [], 0
    for a, b in sorted(spans):
        a, b = max(a, pos), min(b, len(text))
        if a >= b:
            continue
        out += [escape(text[pos:a]), f"<mark>{escape(text[a:b])}</mark>"]
        pos = b
    out.append(escape(text[pos:]))
    return "".join(out)


def _slug(title: str) -> str:
    return "s-" + (re.sub(r"[^0-9a-z]+", "-", title.lower()).strip("-") or "section")


def page(
    title: str,
    sections: Sequence[Section],
    *,
    subtitle: str = "",
    css: str = "",
    top: str = "",
    end: str = "",
) -> str:
    """A complete HTML document; nothing in it refers to another file (but a script
    ``end`` names). Each titled section folds (``<details>``): a long report reads as
    its headings. ``top`` comes right under the heading, ``end`` last in the body."""
    body = "".join(
        f'<details class="section" id="{_slug(s.title)}"{" open" if s.open else ""}>'
        f"<summary><h2>{escape(s.title)}</h2></summary>{s.body}</details>"
        if s.title
        else f"<section>{s.body}</section>"
        for s in sections
    )
    sub = f'<p class="sub">{escape(subtitle)}</p>' if subtitle else ""
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{_CSS}{css}</style></head>"
        f"<body><h1>{escape(title)}</h1>{sub}{top}{body}{end}</body></html>\n"
    )


def write_page(path: Path, html: str) -> Path:
    return write_text_atomic(path, html)
