"""PDF text as a reader reads it: lines joined into paragraphs, page furniture gone.

A PDF holds positioned lines, not paragraphs. Chunked as extracted, a paragraph
would be cut by a newline at every line end, a word hyphenated at the margin
would be two tokens (``exam-`` ``ple``) that neither BM25 nor an embedder knows,
and every chunk near a page break would carry the running header and ``Page 3 of
9``. :func:`clean_pdf_pages` repairs that, from lines alone, so it is one pure
function that every PDF reader shares and that is tested on plain strings:

- **Page furniture.** A line among the first or last three of a page is dropped
  when it is a bare page number (``3``, ``- 3 -``, ``Page 3``, ``3 / 9``, ``iv``)
  or when the same line (digits aside, so ``Page 3 of 9`` matches ``Page 4 of 9``)
  sits in that zone on at least half the pages, and on two at least, and never
  elsewhere on a page (a sentence the text repeats is not a running header).
  Books' running headers change with the chapter (``Chapter 2: Syntax 14``, then
  ``Chapter 3: Utilities 21``), so the page number in them is what repeats: a line
  at a page's edge that starts or ends with the page's printed number is dropped,
  where the printed numbers follow the page order (page ``i`` printed ``i + d``,
  the same ``d``) on a third of the pages, and on two at least.
- **Hyphenation.** ``exam-`` at a line end followed by ``ple`` (lowercase) is
  ``example``, unless the document writes ``exam-ple`` inside a line elsewhere
  and never ``example`` (then the hyphen was real). Before an uppercase letter or a
  digit the hyphen stays and no space is added (``AQ-`` ``200`` is ``AQ-200``). A
  soft hyphen at a line end always joins.
- **Paragraphs.** A line continues the one before with a space, unless

  1. a blank line, or an extra vertical gap when the extractor measures one (more
     than ``PARAGRAPH_GAP`` of the page's usual line pitch), comes between;
  2. the line before had room to spare for this line's first word, so the break
     was not the margin's doing, and it ended a sentence (``.``, ``?``, ``:``...) or
     was a short heading-like line of its own before a capitalised one;
  3. this line is such a heading-like line and the line before ended a sentence
     (a heading after a paragraph whose last line happens to be full);
  4. this line starts a list item: ``•`` always; ``-``, ``1.``, ``(a)`` only after a
     line with room to spare, since ``(10) people`` may also wrap to a line start;
  5. the line before is a table-of-contents entry (a dot leader and a page number:
     ``2.1 Syntax . . . . 14``), which always ends its line.

  Widths come from the extractor when it measures them, else they are estimated
  from character counts against the document's usual line length. Paragraphs are
  separated by ``\\n\\n``, list items by ``\\n``.
- **Pages** are joined with ``\\n\\n``, except where a sentence runs on over the
  page break (rule 2 fails across it): then with a space, or with nothing for a
  hyphenated word. ``pages[i]`` is the range of page ``i + 1``'s own text; the
  separator between two pages belongs to neither.

- **Headings.** A PDF does not say which lines are headings. A line an extractor
  marks as one (``PdfLine.heading``, from its font size) is written as a ``#``
  line of its own, a wrapped heading's lines joined; unmarked text gets no ``#``,
  since a guess would add text the document does not have.

:class:`PypdfReader` (the default) reads lines in content-stream order with
pypdf and marks no headings; :mod:`~sweep.datasets.readers.pdfplumber_reader`
reads lines by position and marks headings by font size.
"""

from __future__ import annotations

import io
import logging
import math
import re
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import cache

from sweep.core.text.sentences import SENTENCE_RULES
from sweep.datasets.readers.base import Extracted, ExtractedHeading, UnreadableFile

__all__ = [
    "NO_TEXT_LAYER",
    "PARAGRAPH_GAP",
    "PdfLine",
    "PypdfReader",
    "clean_pdf_pages",
    "corrupt_reason",
    "metadata_title",
    "pdf_page_labels",
    "quiet_pdf_logs",
]

#: Extra vertical space above a line, in usual line pitches, from which it starts a paragraph.
PARAGRAPH_GAP = 0.4
#: The reason a PDF without a text layer (a scan) is refused.
NO_TEXT_LAYER = "no text layer: OCR is not supported; convert it first"
_NO_TEXT_LEFT = "no text: only page numbers and running headers"

# A line "has room" for the next word when its end plus that word stays under this
# share of the column: measured widths are exact, estimates from characters are not
# (proportional fonts), so they need a wider margin.
_ROOM_MEASURED = 0.98
_ROOM_ESTIMATED = 0.9
_ZONE = 3  # lines at the top and at the bottom of a page where furniture is looked for

_LIGATURES = str.maketrans(
    {"ﬀ": "ff", "ﬁ": "fi", "ﬂ": "fl", "ﬃ": "ffi", "ﬄ": "ffl", "ﬅ": "st", "ﬆ": "st"}
)
_SPACES = re.compile(r"[ \t\u00a0\u2000-\u200a\u202f\u205f\u3000]+")
_ROMAN = r"(?=[ivxlc])c{0,3}(?:xc|xl|l?x{0,3})(?:ix|iv|v?i{0,3})"  # i to cccxcix
_PAGE_NUMBER = re.compile(
    rf"^(?:(?:page|p\.|pg\.?|seite|página|pagina)\s*)?[-–—(\[]?\s*(?:\d{{1,4}}|{_ROMAN})\s*[-–—)\]]?"
    r"(?:\s*(?:/|of|von|de|sur)\s*\d{1,4})?$",
    re.IGNORECASE,
)
_DIGITS = re.compile(r"\d+")
_BULLET = re.compile(r"^[•◦▪▫●○■□‣⁃∙·]\s*\S")
# Markers that also occur in running text at a line start: "(10) of them", "— and".
_MARKER = re.compile(r"^(?:[*–—-]|\(?\d{1,3}[.)]|\(?[a-z]\))\s+\S")
_HYPHEN_END = re.compile(r"([^\W\d_]+)-$")
# A number at either end of a line, set off by a space: the page number of a running header.
_EDGE_NUMBERS = re.compile(r"^(\d{1,4})(?=\s)|(?<=\s)(\d{1,4})$")
# A table-of-contents entry's end: a dot leader (". . . ." or "....") and a page number.
_LEADER = re.compile(r"(?:\.\s?){4,}\s*(?:\d{1,4}|[ivxlc]{1,6})$", re.IGNORECASE)
_WORD = re.compile(r"[^\W_](?:[\w'’-]*[^\W_])?")


def _ends_sentence(line: str) -> bool:
    """Whether ``line`` ends with a finished sentence or a lead-in by the rule of any
    language (``.`` and ``»``, ``。`` and ``」``): lines are joined before the page's
    language is known."""
    return any(rule.ends_line(line) for rule in SENTENCE_RULES.values())


@dataclass(frozen=True)
class PdfLine:
    """One line of a page as an extractor saw it, with what it measured (None: not measured).

    ``gap``: vertical space above the line beyond the page's usual line pitch, in pitches
    (0 for a line right under the one before). ``fill``: where the line ends, as a share
    of the text column's width. ``first_word``: the width of the line's first word and a
    space, as a share of the column's width. ``heading``: the line's heading level (1 for
    the largest), 0 for text.
    """

    text: str
    gap: float | None = None
    fill: float | None = None
    first_word: float | None = None
    heading: int = 0


def clean_pdf_pages(
    pages: Sequence[Sequence[str | PdfLine]], *, title: str = "", fallback_title: str = ""
) -> Extracted:
    """The text of a PDF whose page ``i`` has the lines ``pages[i]`` (strings or
    :class:`PdfLine`; a string holding newlines is several lines), cleaned as the module
    says. The title is ``title`` (the PDF's metadata), else the text's first line when it
    reads as a heading, else ``fallback_title``."""
    lines = [_page_lines(page) for page in pages]
    _drop_furniture(lines)
    text, ranges, headings = _Document(lines).join()
    first = next((h.title for h in headings if h.level == min(h.level for h in headings)), "")
    return Extracted(
        text=text,
        title=title.strip() or first or _heading_title(text) or fallback_title,
        headings=headings,
        pages=ranges,
    )


def _page_lines(page: Sequence[str | PdfLine]) -> list[PdfLine]:
    out: list[PdfLine] = []
    for item in page:
        if isinstance(item, str):
            out.extend(PdfLine(_tidy(t)) for t in item.splitlines() or [""])
        else:
            out.append(
                PdfLine(_tidy(item.text), item.gap, item.fill, item.first_word, item.heading)
            )
    return out


def _tidy(text: str) -> str:
    return _SPACES.sub(" ", text.translate(_LIGATURES).replace("\n", " ")).strip()


def _furniture_key(text: str) -> str:
    return _DIGITS.sub("#", text.casefold())


def _zone(page: list[PdfLine]) -> tuple[list[int], list[int]]:
    content = [i for i, line in enumerate(page) if line.text]
    return content[:_ZONE], content[::-1][:_ZONE]


def _drop_furniture(pages: list[list[PdfLine]]) -> None:
    """Takes running headers, footers and page numbers out of ``pages``, in place."""
    top: dict[str, int] = {}
    bottom: dict[str, int] = {}
    body: set[str] = set()  # lines seen outside the zones: text, whatever its repeats
    for page in pages:
        head, foot = _zone(page)
        for counts, zone in ((top, head), (bottom, foot)):
            for key in {_furniture_key(page[i].text) for i in zone}:
                counts[key] = counts.get(key, 0) + 1
        edges = set(head) | set(foot)
        body.update(
            _furniture_key(line.text) for i, line in enumerate(page) if line.text and i not in edges
        )
    for key in body:
        top.pop(key, None)
        bottom.pop(key, None)
    needed = max(2, math.ceil(len(pages) / 2))
    side, shift = _numbered_edge(pages)
    for number, page in enumerate(pages):
        head, foot = _zone(page)
        dropped: set[int] = set()
        for counts, zone, edge in ((top, head, "top"), (bottom, foot, "bottom")):
            for i in zone:  # from the page's edge inwards, stopping at the first content line
                line = page[i].text
                if not (
                    _PAGE_NUMBER.match(line)
                    or counts.get(_furniture_key(line), 0) >= needed
                    or (edge == side and number + shift in _edge_numbers(line))
                ):
                    break
                dropped.add(i)
        page[:] = [line for i, line in enumerate(page) if i not in dropped]


def _edge_numbers(line: str) -> set[int]:
    return {int(a or b) for a, b in _EDGE_NUMBERS.findall(line)}


def _numbered_edge(pages: list[list[PdfLine]]) -> tuple[str, int]:
    """``("top", d)`` when the first line of a third of the pages (two at least) starts or
    ends with the number ``i + d`` on page ``i``, the printed page numbers; ``("bottom", d)``
    for the last lines; ``("", 0)`` when neither edge is numbered so."""
    support: dict[tuple[str, int], int] = {}
    for number, page in enumerate(pages):
        head, foot = _zone(page)
        for side, edge in (("top", head[:1]), ("bottom", foot[:1])):
            for n in {n for i in edge for n in _edge_numbers(page[i].text)}:
                support[side, n - number] = support.get((side, n - number), 0) + 1
    if not support:
        return "", 0
    best, pages_with_it = max(support.items(), key=lambda item: (item[1], -abs(item[0][1])))
    return best if pages_with_it >= max(2, math.ceil(len(pages) / 3)) else ("", 0)


class _Document:
    """Joins the lines of all pages; one instance per call (it holds the document's words)."""

    def __init__(self, pages: list[list[PdfLine]]) -> None:
        self.pages = pages
        lengths = sorted(len(line.text) for page in pages for line in page if line.text)
        # The usual length of a full line: most lines of running text are full ones.
        # (at least 60 characters: in a short document the longest line may be a short one)
        self.typical = max(60, lengths[int(0.8 * (len(lengths) - 1))]) if lengths else 80
        self.words: set[str] = set()
        for page in pages:
            for line in page:
                self.words.update(w.casefold() for w in _WORD.findall(line.text))

    def join(self) -> tuple[str, tuple[tuple[int, int], ...], tuple[ExtractedHeading, ...]]:
        # (page, line, a blank line or a measured gap comes before it on its page)
        flow: list[tuple[int, PdfLine, bool]] = []
        for number, page in enumerate(self.pages):
            blank = False
            for line in page:
                if not line.text:
                    blank = True
                    continue
                first_on_page = not flow or flow[-1][0] != number
                # (blank lines and the top margin above a page's first line say nothing)
                spaced = not first_on_page and (
                    blank or (line.gap is not None and line.gap > PARAGRAPH_GAP)
                )
                flow.append((number, line, spaced))
                blank = False
        # Segments of text with the page they belong to (None: a separator), so that a
        # hyphen taken back from the page before still leaves exact page ranges.
        segments: list[list] = []
        in_list = False  # the block being written is a list item
        # (each line ends a table-of-contents entry: a dot leader and a page number)
        leader = [bool(_LEADER.search(line.text)) for _, line, _ in flow] + [False]
        for i, (number, line, spaced) in enumerate(flow):
            previous = flow[i - 1][1] if i else None
            following = flow[i + 1][1] if i + 1 < len(flow) else None
            after_entry = previous is not None and leader[i - 1]
            # A contents entry: after one, the next (or the first line of a wrapped one; anything
            # else ends the contents); after a short line, the first of several.
            entry = (
                (leader[i] or leader[i + 1])
                if after_entry
                else (
                    previous is not None
                    and leader[i]
                    and leader[i + 1]
                    and self._has_room(previous, line)
                )
            )
            item = (
                entry
                or bool(_BULLET.match(line.text))
                or (
                    bool(_MARKER.match(line.text))
                    and previous is not None
                    and self._has_room(previous, line)
                )
            )
            if previous is None:
                how = "start"
            elif after_entry and not entry:
                how = "paragraph"
            elif line.heading and previous.heading == line.heading and not spaced:
                how = "space"  # the next line of a wrapped heading
            elif (
                line.heading
                or previous.heading
                or spaced
                or self._stands_alone(previous, line, following)
            ):
                how = "paragraph"
            elif item:
                how = "break"
            else:
                how = self._continuation(previous, line)
            if how in ("hyphen", "soft"):
                segments[-1][0] = segments[-1][0][:-1]
            elif how == "space":
                segments.append([" ", None, 0])
            elif how == "paragraph" or (how == "break" and not (item and in_list)):
                segments.append(["\n\n", None, 0])
            elif how == "break":
                segments.append(["\n", None, 0])  # the next item of a list
            if how in ("start", "break", "paragraph"):
                in_list = item
            if line.heading and how != "space":
                segments.append([f"{'#' * min(line.heading, 6)} {line.text}", number, line.heading])
            else:
                segments.append([line.text, number, -1 if line.heading else 0])
        return _assemble(segments, len(self.pages))

    def _stands_alone(self, previous: PdfLine, line: PdfLine, following: PdfLine | None) -> bool:
        """A heading-like line between a finished sentence and a new block: it starts a
        paragraph even when the sentence before it filled its line (rule 3 of the module)."""
        return (
            bool(_ends_sentence(previous.text))
            and not _ends_sentence(line.text)
            and (line.text[0].isupper() or line.text[0].isdigit())
            and (
                following is None
                or (self._has_room(line, following) and _heading_like(line.text, following.text))
            )
        )

    def _continuation(self, previous: PdfLine, line: PdfLine) -> str:
        before, text = previous.text, line.text
        if before.endswith("\u00ad"):
            return "soft"
        hyphen = _HYPHEN_END.search(before)
        if hyphen is not None and len(before) > 1:
            if not text[0].islower():
                return "nospace"
            head = hyphen.group(1).casefold()
            tail = (_WORD.match(text) or [""])[0].casefold()
            if f"{head}-{tail}" in self.words and f"{head}{tail}" not in self.words:
                return "nospace"
            return "hyphen"
        if self._has_room(previous, line) and (
            _ends_sentence(before) or _heading_like(before, text)
        ):
            return "break"
        return "space"

    def _has_room(self, previous: PdfLine, line: PdfLine) -> bool:
        first = line.text.split(" ", 1)[0]
        if previous.fill is not None and line.first_word is not None:
            return previous.fill + line.first_word < _ROOM_MEASURED
        fill = previous.fill if previous.fill is not None else len(previous.text) / self.typical
        word = line.first_word if line.first_word is not None else (len(first) + 1) / self.typical
        return fill + word < _ROOM_ESTIMATED


def _heading_like(line: str, following: str) -> bool:
    # A short line of its own (a heading, a table row, a label) before a capitalised
    # line: a wrapped sentence would have taken the next word onto it.
    return (
        not line.endswith((",", "-", "–", "—"))
        and len(line.split()) <= 12
        and (following[0].isupper() or following[0].isdigit() or following[0] in '"“‘([')
    )


def _assemble(
    segments: list[list], n_pages: int
) -> tuple[str, tuple[tuple[int, int], ...], tuple[ExtractedHeading, ...]]:
    """The text of ``[text, page or None, heading]`` segments (heading: its level where a
    heading line starts, -1 on its continuation lines, else 0), each page's range and
    the headings."""
    parts: list[str] = []
    starts: list[int | None] = [None] * n_pages
    ends = [0] * n_pages
    headings: list[list] = []
    offset = 0
    for text, page, heading in segments:
        if page is not None:
            if starts[page] is None:
                starts[page] = offset
            ends[page] = offset + len(text)
        if heading > 0:
            headings.append([min(heading, 6), text.split(" ", 1)[1], offset])
        elif heading < 0 and headings:
            headings[-1][1] += f" {text}"
        parts.append(text)
        offset += len(text)
    ranges: list[tuple[int, int]] = []
    position = 0
    for start, end in zip(starts, ends):
        if start is None:  # a page without text: an empty range where it would have been
            ranges.append((position, position))
        else:
            ranges.append((start, end))
            position = end
    return (
        "".join(parts),
        tuple(ranges),
        tuple(ExtractedHeading(level, title, start) for level, title, start in headings),
    )


def _heading_title(text: str) -> str:
    first = text.split("\n", 1)[0].strip()
    if (
        first
        and len(first) <= 100
        and len(first.split()) <= 15
        and not first.endswith((".", ",", ";", ":"))
    ):
        return first
    return ""


# --------------------------------------------------------------------------- shared by PDF readers

_FILE_NAME_TITLE = re.compile(
    r"^(?:microsoft \w+ - .*|.*\.(?:docx?|pdf|indd|tex|odt|pptx?|rtf|xlsx?)|untitled.*)$",
    re.IGNORECASE,
)


def metadata_title(value: object) -> str:
    """A PDF's metadata title, or ``""`` when it has none worth showing (a producer's
    default such as ``Microsoft Word - report.docx`` or ``untitled``)."""
    if isinstance(value, bytes):
        value = (
            value.decode("utf-16")
            if value[:2] in (b"\xfe\xff", b"\xff\xfe")
            else value.decode("latin-1")
        )
    title = _SPACES.sub(" ", str(value or "")).strip().strip("\x00")
    return "" if not title or _FILE_NAME_TITLE.match(title) else title


def corrupt_reason(error: BaseException, data: bytes) -> str:
    """``corrupt PDF: <reason>`` on one line, for a parser's error on ``data``."""
    if b"%PDF-" not in data[:1024]:
        return "corrupt PDF: no %PDF header (not a PDF file)"
    reason = " ".join(str(error).split()) or type(error).__name__
    return f"corrupt PDF: {reason[:200]}"


@contextmanager
def quiet_pdf_logs() -> Iterator[None]:
    """pypdf and pdfminer log a WARNING for every small flaw of a file they read anyway
    (a missing EOF marker, a bad xref offset); a corpus of real PDFs would print hundreds.
    Their loggers are raised to ERROR while a reader runs."""
    loggers = [logging.getLogger(name) for name in ("pypdf", "pdfminer", "pdfplumber")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)


@cache
def library_version(*distributions: str) -> str:
    """``pypdf==7.1.1`` (several joined with ``+``) from the installed metadata, so a cached
    extraction is checked without importing the parser."""
    from importlib import metadata

    return "+".join(f"{d}=={metadata.version(d)}" for d in distributions)


# --------------------------------------------------------------------------- pypdf

# 3: page labels
_PYPDF_RECIPE = 3


class PypdfReader:
    """PDF text with pypdf: lines in content-stream order (the order the producer wrote
    them, which for one-column documents is reading order), cleaned by
    :func:`clean_pdf_pages`."""

    name = "pypdf"

    @property
    def version(self) -> str:
        return f"{library_version('pypdf')}+recipe{_PYPDF_RECIPE}"

    def read(self, data: bytes, filename: str) -> Extracted:
        import pypdf
        from pypdf.errors import DependencyError, FileNotDecryptedError

        if not data.strip():
            raise UnreadableFile("empty file")
        with quiet_pdf_logs():
            try:
                reader = pypdf.PdfReader(io.BytesIO(data))
                if reader.is_encrypted:
                    try:
                        # An owner password alone restricts printing, not reading: the empty
                        # user password opens such a file.
                        if not reader.decrypt(""):
                            raise UnreadableFile("encrypted PDF: password required")
                    except (DependencyError, NotImplementedError) as e:
                        raise UnreadableFile(
                            f"encrypted PDF: cannot decrypt ({_first_line(e)})"
                        ) from None
                pages = [page.extract_text() or "" for page in reader.pages]
                info = reader.metadata
                title = metadata_title(info.title if info is not None else None)
                labels = pdf_page_labels(reader)
            except UnreadableFile:
                raise
            except FileNotDecryptedError:
                raise UnreadableFile("encrypted PDF: password required") from None
            except Exception as e:  # noqa: BLE001 - pypdf's own error on a damaged file, of many types
                raise UnreadableFile(corrupt_reason(e, data)) from None
        return finish(pages, title, filename, labels)


def pdf_page_labels(pdf: bytes | object) -> tuple[str, ...]:
    """The label each page of a PDF prints (``i``, ``ii``, ``1``, ``A-3``), read with pypdf
    from the file's bytes or from an open ``pypdf.PdfReader``; empty when the document has
    no ``/PageLabels`` (its pages are then just 1 to n, which ``page`` already says) or
    they cannot be read. Every PDF reader takes them from here, so a page label names the
    same page whichever reader made the text."""
    import pypdf

    try:
        with quiet_pdf_logs():
            reader = pdf if isinstance(pdf, pypdf.PdfReader) else pypdf.PdfReader(io.BytesIO(pdf))
            if reader.is_encrypted and not reader.decrypt(""):
                return ()
            if "/PageLabels" not in reader.root_object:
                return ()
            # (a prefix written with spaces around it, "( A- )", is typed as "A-8")
            return tuple(" ".join(str(label).split()) for label in reader.page_labels)
    except Exception:  # noqa: BLE001 - a damaged label tree costs the labels, never the text
        return ()


def finish(
    pages: Sequence[Sequence[str | PdfLine]] | Sequence[str],
    title: str,
    filename: str,
    labels: Sequence[str] = (),
) -> Extracted:
    """:func:`clean_pdf_pages` of what a reader extracted, refusing a file without text;
    ``labels`` are its pages' labels (:func:`pdf_page_labels`), kept when there is one
    for every page."""
    from pathlib import PurePath

    as_lines = [[p] if isinstance(p, str) else p for p in pages]
    if not any(
        (line if isinstance(line, str) else line.text).strip() for page in as_lines for line in page
    ):
        raise UnreadableFile(NO_TEXT_LAYER)
    extracted = clean_pdf_pages(as_lines, title=title, fallback_title=PurePath(filename).stem)
    if not extracted.text.strip():
        raise UnreadableFile(_NO_TEXT_LEFT)
    if labels and len(labels) == len(extracted.pages):
        return replace(extracted, page_labels=tuple(labels))
    return extracted


def _first_line(error: BaseException) -> str:
    return " ".join(str(error).split())[:200] or type(error).__name__
