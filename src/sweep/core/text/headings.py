"""Markdown headings: where each starts and ends, and its path of parent titles.

The one heading parser of sweep. The chunkers cut sections at these headings, the
readers list them (:attr:`~sweep.datasets.readers.base.Extracted.headings`), the
evidence tool's passages end at them; all see the same headings of a text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["ATX_HEADING", "Heading", "parse_headings"]

_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
ATX_HEADING = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r" {0,3}(=+|-+)[ \t]*$")
_NOT_PARAGRAPH = re.compile(r"[ \t]*(?:[-*+]\s|\d{1,9}[.)]\s|>|\||#|$)")


@dataclass(frozen=True, slots=True)
class Heading:
    """A Markdown heading: ``start`` of its first line, ``body_start`` after its last
    (a setext heading has two lines: its title and its ``===`` or ``---`` underline)."""

    level: int
    title: str
    start: int
    body_start: int
    path: tuple[str, ...]


def parse_headings(text: str) -> list[Heading]:
    """ATX (``## x``) and setext headings outside fenced code, each with its heading path.

    Lines end at ``\\n`` only. An ATX heading may have no title (``####`` alone): it still
    starts a section, with ``""`` as its title.
    """
    headings: list[Heading] = []
    stack: list[tuple[int, str]] = []
    fence: str | None = None
    pos = 0
    prev: tuple[int, str] | None = (
        None  # (start, line) of a paragraph line that could be a setext title
    )

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
            if (
                fm
                and fm.group(1)[0] == fence[0]
                and len(fm.group(1)) >= len(fence)
                and not line[fm.end() :].strip()
            ):
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
        prev = (
            None if _NOT_PARAGRAPH.match(line) or line.startswith(("    ", "\t")) else (start, line)
        )
    return headings
