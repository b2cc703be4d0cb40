"""Markdown headings: where each starts, its path of parent titles, the sections they
open, and the title-and-headings prefix a chunk is embedded with (never credited)."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Sequence

from sweep.chunking.boundaries import Span
from sweep.core.types import Document

__all__ = ["ATX_HEADING", "Heading", "Prefixer", "markdown_sections", "parse_headings",
           "title_of"]

_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
ATX_HEADING = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r" {0,3}(=+|-+)[ \t]*$")
_NOT_PARAGRAPH = re.compile(r"[ \t]*(?:[-*+]\s|\d{1,9}[.)]\s|>|\||#|$)")


@dataclass(frozen=True, slots=True)
class Heading:
    """A Markdown heading: ``start`` of its first line, ``body_start`` after its last."""

    level: int
    title: str
    start: int
    body_start: int
    path: tuple[str, ...]


def parse_headings(text: str) -> list[Heading]:
    """ATX (``## x``) and setext headings outside fenced code, each with its heading path."""
    headings: list[Heading] = []
    stack: list[tuple[int, str]] = []
    fence: str | None = None
    pos = 0
    prev: tuple[int, str] | None = None  # (start, line) of a paragraph line that could be a setext title

    def add(level: int, title: str, start: int, body_start: int) -> None:
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        headings.append(Heading(level, title, start, body_start, tuple(t for _, t in stack)))

    for line in text.split("\n"):
        start, pos = pos, pos + len(line) + 1
        body_start = min(pos, len(text))
        if start == 0:
            line = line.removeprefix("\ufeff")  # a byte-order mark does not hide the first heading
        fm = _FENCE.match(line)
        if fence is not None:
            if fm and fm.group(1)[0] == fence[0] and len(fm.group(1)) >= len(fence) and not line[fm.end():].strip():
                fence = None
            continue
        if fm:
            fence = fm.group(1)
            prev = None
            continue
        atx = ATX_HEADING.match(line)
        if atx:
            add(len(atx.group(1)), (atx.group(2) or "").strip(), start, body_start)
            prev = None
            continue
        setext = _SETEXT.match(line)
        if setext and prev is not None:
            add(1 if setext.group(1)[0] == "=" else 2, prev[1].strip(), prev[0], body_start)
            prev = None
            continue
        prev = None if _NOT_PARAGRAPH.match(line) or line.startswith(("    ", "\t")) else (start, line)
    return headings


def title_of(doc: Document, headings: Sequence[Heading]) -> str:
    if doc.title and doc.title.strip():
        return doc.title.strip()
    return next((h.title for h in headings if h.level == 1 and h.title), "")


class Prefixer:
    """Builds the embed-time prefix of a chunk from the section it starts in."""

    def __init__(self, mode: str, doc: Document) -> None:
        self.mode = mode
        self.headings = parse_headings(doc.text) if mode != "none" else []
        self.starts = [h.start for h in self.headings]
        self.title = title_of(doc, self.headings) if mode != "none" else ""

    def __call__(self, start: int) -> str:
        if self.mode == "none":
            return ""
        if self.mode == "title":
            return self.title
        i = bisect.bisect_right(self.starts, start) - 1
        path = list(self.headings[i].path) if i >= 0 else []
        # The title usually is the H1; don't say it twice.
        if path and self.title and path[0] == self.title:
            path = path[1:]
        return " > ".join(p for p in [self.title, *path] if p)


def markdown_sections(text: str) -> list[Span]:
    """Spans of the text before the first heading and of each heading's section.

    A heading with nothing but whitespace before the next heading is joined
    to that next section, so no chunk is a bare heading.
    """
    headings = parse_headings(text)
    bounds = [0] + [h.start for h in headings] + [len(text)]
    sections: list[Span] = []
    pending: int | None = None
    for k in range(len(bounds) - 1):
        a, b = bounds[k], bounds[k + 1]
        if a >= b:
            continue
        head = headings[k - 1] if k > 0 else None
        start = a if pending is None else pending
        if head is not None and not text[head.body_start : b].strip() and k + 1 < len(bounds) - 1:
            pending = start
            continue
        pending = None
        sections.append((start, b))
    if pending is not None:
        sections.append((pending, len(text)))
    return sections
