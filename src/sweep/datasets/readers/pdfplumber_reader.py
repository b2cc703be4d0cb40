"""PDF text with pdfplumber: lines rebuilt from character positions.

pypdf returns text in the order the producer wrote it into the page, which is
reading order for most documents but not for all (a footer written first, a
sidebar interleaved with the body, two columns written row by row). pdfplumber
(pdfminer underneath) groups characters into lines by where they are on the
page, and measures each line: the vertical gap above it, where it ends and its
font size. Those measurements feed :func:`~sweep.datasets.readers.pdf.clean_pdf_pages`,
which otherwise has to guess paragraph breaks from character counts, and short
lines set larger than the body text become ``#`` headings (the largest size
``#``, the next ``##``...), so ``chunk=markdown`` and heading prefixes work on them. It is slower;
sweeping ``dataset.reader.pdf=pypdf,pdfplumber`` shows whether it pays.

Tables ruled with horizontal lines split at the cell edges (what fpdf2 and most report
writers draw, with or without vertical rules) are read row by row: grouping a page's
characters into lines would interleave the wrapped lines of neighbouring cells ("Lisbo
Monthly, 14 25th of each"), so each row becomes one line holding its cells in reading
order, each cell's lines joined with a space and the cells separated by a space (as pypdf
reads them, cell after cell). Text outside such tables is read as before.
"""

from __future__ import annotations

import bisect
import io
import itertools
import statistics
from collections.abc import Sequence
from typing import Any

from sweep.datasets.readers.base import Extracted, UnreadableFile
from sweep.datasets.readers.pdf import (
    PdfLine,
    corrupt_reason,
    finish,
    library_version,
    metadata_title,
    pdf_page_labels,
    quiet_pdf_logs,
)

__all__ = ["PdfplumberReader"]

# 4: page labels
_RECIPE = 4
# Characters closer than this (PDF points) are one word: pdfplumber's default of 3 glues
# words of tightly set text together, and 1.5 still keeps kerned letters of a word apart
# from nothing.
_X_TOLERANCE = 1.5
# Characters whose tops differ by less than this (points) are on one line (superscripts,
# mixed fonts on a baseline).
_Y_TOLERANCE = 3
# A line set this many times larger than the body text, and this short, is a heading.
_HEADING_SIZE = 1.15
_HEADING_WORDS = 15


class PdfplumberReader:
    """PDF text from character positions (pdfplumber), with measured line gaps and widths."""

    name = "pdfplumber"

    @property
    def version(self) -> str:
        return f"{library_version('pdfplumber', 'pdfminer.six', 'pypdf')}+recipe{_RECIPE}"

    def read(self, data: bytes, filename: str) -> Extracted:
        import pdfplumber
        from pdfminer.pdfdocument import PDFEncryptionError, PDFPasswordIncorrect

        if not data.strip():
            raise UnreadableFile("empty file")
        with quiet_pdf_logs():
            try:
                with pdfplumber.open(io.BytesIO(data)) as pdf:
                    raw = []
                    for page in pdf.pages:
                        raw.append(_page_lines(page))
                        # pdfplumber keeps every object of every page it read: at 1.5 GB per
                        # MB of page content, a document would not fit. One page at a time.
                        page.close()
                    title = metadata_title((pdf.metadata or {}).get("Title"))
            except Exception as e:  # noqa: BLE001 - pdfminer's own error on a damaged file, of many types
                cause = e.args[0] if type(e).__name__ == "PdfminerException" and e.args else e
                if isinstance(cause, PDFPasswordIncorrect):
                    raise UnreadableFile("encrypted PDF: password required") from None
                if isinstance(cause, PDFEncryptionError):
                    raise UnreadableFile(f"encrypted PDF: cannot decrypt ({cause})") from None
                raise UnreadableFile(
                    corrupt_reason(cause if isinstance(cause, BaseException) else e, data)
                ) from None
        # (labels by pypdf, as the default reader reads them: a label names one page whatever
        # reader made the text)
        return finish(_measured(raw), title, filename, pdf_page_labels(data))


# Rule ends and rule heights closer than this (points) are the same edge.
_EDGE_TOLERANCE = 1.5


def _page_lines(page: Any) -> list[dict[str, Any]]:
    # (No page.dedupe_chars(): it would repair the doubled letters of fake bold, but it
    # more than doubles the time of a page, and such files are rare.)
    tables = _ruled_tables(page)
    if not tables:
        return _text_lines(page)
    # Tables are runs of rules one below the other, so their boxes come top to bottom and
    # (but for a continued last row) share no height: the boxes that may hold a point are
    # found by its height, not by trying them all (a page of thousands of small tables
    # would cost thousands of times a page's characters).
    boxes = _table_boxes(tables)
    tops = [box[1] for box in boxes]
    reach = list(itertools.accumulate((box[3] for box in boxes), max))

    def outside(obj: dict[str, Any]) -> bool:
        if obj.get("object_type") != "char":
            return True
        y = (obj["top"] + obj["bottom"]) / 2
        at = bisect.bisect_right(tops, y) - 1
        while at >= 0 and reach[at] >= y:
            if _centre_in(obj, boxes[at]):
                return False
            at -= 1
        return True

    lines = _text_lines(page.filter(outside))
    rows = [
        row
        for table, chars in zip(tables, _chars_within(page, boxes))
        for row in _table_rows(table, chars)
    ]
    # Each row where its top puts it among the other lines, which keep their order: before
    # the first line lower than it (the first whose top passes the highest top so far).
    highest = list(itertools.accumulate((line["top"] for line in lines), max))
    merged: list[dict[str, Any]] = []
    taken = 0
    for row in sorted(rows, key=lambda r: r["top"]):
        at = bisect.bisect_right(highest, row["top"])
        merged += lines[taken:at]
        merged.append(row)
        taken = max(taken, at)
    return merged + lines[taken:]


def _chars_within(
    page: Any, boxes: list[tuple[float, float, float, float]]
) -> list[list[dict[str, Any]]]:
    """The characters wholly within each box (``page.within_bbox(box).chars``), in the page's
    order, the page's characters looked through once (the boxes share no height)."""
    chars = page.chars
    order = sorted(range(len(chars)), key=lambda i: chars[i]["top"])
    tops = [chars[i]["top"] for i in order]
    within = []
    for x0, top, x1, bottom in boxes:
        start, end = bisect.bisect_left(tops, top), bisect.bisect_right(tops, bottom)
        # (pdfplumber's test: the part of the character within the box is the character, and
        # not a point)
        within.append(
            [
                c
                for c in (chars[i] for i in sorted(order[start:end]))
                if c["bottom"] <= bottom
                and x0 <= c["x0"]
                and c["x1"] <= x1
                and (c["x1"] - c["x0"]) + (c["bottom"] - c["top"]) > 0
            ]
        )
    return within


def _text_lines(page: Any) -> list[dict[str, Any]]:
    lines = page.extract_text_lines(
        strip=True, return_chars=True, x_tolerance=_X_TOLERANCE, y_tolerance=_Y_TOLERANCE
    )
    out = []
    for line in lines:
        chars = [c for c in line["chars"] if c["text"].strip()]
        first_end = line["x1"]
        for c, nxt in zip(line["chars"], line["chars"][1:]):
            if not nxt["text"].strip() or nxt["x0"] - c["x1"] > _X_TOLERANCE:
                first_end = c["x1"]
                break
        out.append(
            {
                "text": line["text"],
                "x0": line["x0"],
                "x1": line["x1"],
                "top": line["top"],
                "bottom": line["bottom"],
                "first_end": first_end,
                "size": statistics.median(c["size"] for c in chars) if chars else 0.0,
            }
        )
    return out


def _measured(pages: Sequence[list[dict[str, Any]]]) -> list[list[PdfLine]]:
    """The lines as :class:`PdfLine`: widths against the document's text column (its
    leftmost start and its usual right end), gaps against each page's usual line pitch."""
    all_lines = [line for page in pages for line in page]
    if not all_lines:
        return [[] for _ in pages]
    left = min(line["x0"] for line in all_lines)
    ends = sorted(line["x1"] for line in all_lines)
    right = ends[int(0.9 * (len(ends) - 1))]  # the right margin, a wide table row aside
    width = max(right - left, 1.0)
    levels = _heading_levels(all_lines)
    out: list[list[PdfLine]] = []
    for page in pages:
        pitches = [b["top"] - a["top"] for a, b in itertools.pairwise(page) if b["top"] > a["top"]]
        pitch = statistics.median(pitches) if pitches else None
        usual = max(_usual_size(page), 1.0)
        lines: list[PdfLine] = []
        for i, line in enumerate(page):
            gap = None
            if i and pitch:
                step = line["top"] - page[i - 1]["top"]
                # A bigger font (a heading) needs a bigger step: measure in its own size.
                scale = max(line["size"], page[i - 1]["size"]) / usual
                gap = max(0.0, step / (pitch * max(scale, 1.0)) - 1.0)
            lines.append(
                PdfLine(
                    line["text"],
                    gap=gap,
                    fill=(line["x1"] - left) / width,
                    # a space is about a quarter of the font size wide
                    first_word=(line["first_end"] - line["x0"] + 0.25 * line["size"]) / width,
                    heading=levels(line),
                )
            )
        out.append(lines)
    return out


def _usual_size(page: list[dict[str, Any]]) -> float:
    sizes = [line["size"] for line in page if line["size"]]
    return statistics.median(sizes) if sizes else 1.0


def _heading_levels(lines: list[dict[str, Any]]):
    """A function giving a line its heading level: lines of at most ``_HEADING_WORDS`` words
    set in a font ``_HEADING_SIZE`` times the body's size or more are headings, the largest
    size level 1, the next level 2, and so on; other lines 0."""
    by_size: dict[float, int] = {}
    for line in lines:
        size = round(line["size"] * 2) / 2
        by_size[size] = by_size.get(size, 0) + len(line["text"])
    if not by_size:
        return lambda line: 0
    body = max(by_size, key=by_size.__getitem__)  # the size most characters are set in

    def is_heading(line: dict[str, Any]) -> bool:
        return line["size"] >= body * _HEADING_SIZE and len(line["text"].split()) <= _HEADING_WORDS

    sizes = sorted(
        {round(line["size"] * 2) / 2 for line in lines if is_heading(line)}, reverse=True
    )
    rank = {size: min(i + 1, 6) for i, size in enumerate(sizes)}
    return lambda line: rank[round(line["size"] * 2) / 2] if is_heading(line) else 0


def _centre_in(obj: dict[str, Any], box: tuple[float, float, float, float]) -> bool:
    x, y = (obj["x0"] + obj["x1"]) / 2, (obj["top"] + obj["bottom"]) / 2
    return box[0] <= x <= box[2] and box[1] <= y <= box[3]


def _table_boxes(
    tables: list[tuple[list[float], list[float]]],
) -> list[tuple[float, float, float, float]]:
    return [(xs[0], ys[0], xs[-1], ys[-1]) for xs, ys in tables]


def _ruled_tables(page: Any) -> list[tuple[list[float], list[float]]]:
    """The page's tables as ``(column edges, row edges)``, left to right and top to bottom:
    runs of two or more horizontal rules each split into the same two or more abutting
    segments (one a cell), the segments' ends giving the columns. A rule across the page
    in one piece (under a header, under a heading) is no table's."""
    levels: list[tuple[float, list[tuple[float, float]]]] = []
    for edge in sorted(page.horizontal_edges, key=lambda e: e["top"]):
        if levels and edge["top"] - levels[-1][0] <= _EDGE_TOLERANCE:
            levels[-1][1].append((edge["x0"], edge["x1"]))
        else:
            levels.append((edge["top"], [(edge["x0"], edge["x1"])]))
    tables: list[tuple[list[float], list[float]]] = []
    current: tuple[list[float], list[float]] | None = None
    for top, segments in levels:
        xs = _split_points(segments)
        if xs is not None and current is not None and _same_columns(xs, current[0]):
            current[1].append(top)
            continue
        if current is not None and len(current[1]) >= 2:
            tables.append(current)
        current = (xs, [top]) if xs is not None else None
    if current is not None and len(current[1]) >= 2:
        tables.append(current)
    if tables:
        words = sorted(
            page.extract_words(
                x_tolerance=_X_TOLERANCE, y_tolerance=_Y_TOLERANCE, extra_attrs=["size"]
            ),
            key=lambda w: w["top"],
        )
        word_tops = [w["top"] for w in words]
        level_tops = [top for top, _ in levels]
        for xs, ys in tables:
            below = level_tops[bisect.bisect_right(level_tops, ys[-1] + _EDGE_TOLERANCE) :]
            limit = below[0] if below else float(page.bbox[3])
            # (only the words between the table's last rule and the next)
            nearby = words[
                bisect.bisect_right(word_tops, ys[-1]) : bisect.bisect_left(word_tops, limit)
            ]
            bottom = _open_row_bottom(nearby, xs, ys[-1], limit)
            if bottom is not None:
                ys.append(bottom)
    return tables


def _open_row_bottom(
    words: list[dict[str, Any]], xs: list[float], rule: float, limit: float
) -> float | None:
    """Where the row under a table's last rule ends, when the table goes on below it with
    no rule of its own (the last row of a table continued from the page before): the
    lines right under the rule, one line's height apart, that put words in two columns or
    more and no word across a column's edge. None when there is no such row."""
    inside = sorted(
        (
            w
            for w in words
            if xs[0] - _EDGE_TOLERANCE <= w["x0"]
            and w["x1"] <= xs[-1] + _EDGE_TOLERANCE
            and rule < w["top"] < limit
        ),
        key=lambda w: w["top"],
    )
    lines: list[list[dict[str, Any]]] = []
    for word in inside:
        if lines and word["top"] - lines[-1][0]["top"] < _Y_TOLERANCE:
            lines[-1].append(word)
        else:
            lines.append([word])
    edges = xs[1:-1]
    bottom, last, columns = None, rule, set()
    for line in lines:
        size = max(w["size"] for w in line)
        if line[0]["top"] - last > 1.6 * size:
            break
        if any(
            w["x0"] < x - _EDGE_TOLERANCE and w["x1"] > x + _EDGE_TOLERANCE
            for w in line
            for x in edges
        ):
            break
        columns.update(sum(1 for x in edges if (w["x0"] + w["x1"]) / 2 > x) for w in line)
        bottom, last = max(w["bottom"] for w in line), line[0]["top"]
    return bottom + 1 if bottom is not None and len(columns) >= 2 else None


def _split_points(segments: list[tuple[float, float]]) -> list[float] | None:
    """The ends of a rule made of abutting segments, left to right, or None when the
    segments (duplicates merged) are fewer than two or leave a gap."""
    ends: list[list[float]] = []
    for x0, x1 in sorted(segments):
        if (
            ends
            and abs(x0 - ends[-1][0]) <= _EDGE_TOLERANCE
            and abs(x1 - ends[-1][1]) <= _EDGE_TOLERANCE
        ):
            continue  # the same segment twice (a line over a filled cell's edge)
        if ends and abs(x0 - ends[-1][1]) > _EDGE_TOLERANCE:
            return None  # a gap, or overlapping rules: not one table's rule
        ends.append([x0, x1])
    if len(ends) < 2:
        return None
    return [ends[0][0]] + [x1 for _, x1 in ends]


def _same_columns(a: list[float], b: list[float]) -> bool:
    return len(a) == len(b) and all(abs(x - y) <= _EDGE_TOLERANCE for x, y in zip(a, b))


def _table_rows(
    table: tuple[list[float], list[float]], chars: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """One line per row of ``table``, whose characters are ``chars``: its cells' text left to
    right, each cell's lines (top to bottom) joined with a space, measured as
    :func:`_text_lines` measures."""
    from pdfplumber.utils import extract_words

    xs, ys = table
    words = extract_words(
        chars, x_tolerance=_X_TOLERANCE, y_tolerance=_Y_TOLERANCE, extra_attrs=["size"]
    )
    cells: dict[tuple[int, int], list[dict[str, Any]]] = {}
    for word in words:
        x, y = (word["x0"] + word["x1"]) / 2, (word["top"] + word["bottom"]) / 2
        col = next((k for k in range(len(xs) - 1) if x <= xs[k + 1]), len(xs) - 2)
        row = next((k for k in range(len(ys) - 1) if y <= ys[k + 1]), len(ys) - 2)
        cells.setdefault((row, col), []).append(word)
    out = []
    for r in range(len(ys) - 1):
        parts = [_cell_text(cells[(r, c)]) for c in range(len(xs) - 1) if (r, c) in cells]
        row_words = [w for c in range(len(xs) - 1) for w in cells.get((r, c), [])]
        if not row_words:
            continue
        first = min(row_words, key=lambda w: (round(w["top"] / _Y_TOLERANCE), w["x0"]))
        out.append(
            {
                "text": " ".join(parts),
                "x0": min(w["x0"] for w in row_words),
                "x1": max(w["x1"] for w in row_words),
                "top": min(w["top"] for w in row_words),
                "bottom": max(w["bottom"] for w in row_words),
                "first_end": first["x1"],
                "size": statistics.median(w["size"] for w in row_words),
            }
        )
    return out


def _cell_text(words: list[dict[str, Any]]) -> str:
    lines: list[list[dict[str, Any]]] = []
    for word in sorted(words, key=lambda w: w["top"]):
        if lines and word["top"] - lines[-1][0]["top"] < _Y_TOLERANCE:
            lines[-1].append(word)
        else:
            lines.append([word])
    return " ".join(w["text"] for line in lines for w in sorted(line, key=lambda w: w["x0"]))
