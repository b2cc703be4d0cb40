"""Markdown sections and the title-and-headings prefix a chunk is embedded with (never
credited). The headings themselves are :mod:`sweep.core.text.headings`' (one parser for
every stage); this module re-exports them for the chunkers."""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from sweep.chunking.boundaries import Span
from sweep.core.text.headings import ATX_HEADING, Heading, parse_headings
from sweep.core.types import Document

__all__ = ["ATX_HEADING", "Heading", "Prefixer", "markdown_sections", "parse_headings", "title_of"]


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
