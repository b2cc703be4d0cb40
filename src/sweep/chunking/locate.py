"""Where a framework's chunk texts lie in the document they came from.

Splitters return strings, and the offsets some of them offer are not reliable
(LangChain's ``add_start_index`` searches from the previous chunk's start plus
its length minus the overlap, and gives -1 when whitespace stripping moved the
chunk). Span credit needs exact offsets, so sweep finds every returned text in
the document itself, with a cursor that only moves forward:

- chunks are in document order, each starts after the previous one starts and
  ends after it ends (an overlap repeats the previous chunk's tail, never a
  whole chunk), and starts no later than where the previous one ended (past
  whitespace): of the occurrences that do all this, the last is the one, so text
  that repeats (a boilerplate paragraph, a table of like rows) is placed where
  the chunks continue and not at an earlier repeat. A splitter that drops a
  separator between chunks leaves a gap: then the first occurrence after it;
- a text the splitter stripped is found as it is; one whose whitespace the
  splitter changed (joined lines with a space, collapsed runs) is found by its
  words with any whitespace between them, and counted as ``loose``;
- a text that is not in the document (a splitter that rewrites text) is never
  guessed: it is reported in ``missing``.

The located span's text is the document's own (``doc[start:end]``), so a loose
match credits exactly the characters the chunk covers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Sequence

from sweep.chunking.boundaries import Span

__all__ = ["Located", "locate_pieces"]


@dataclass(frozen=True)
class Located:
    """The spans of the pieces that were found, in order, and what was not."""

    spans: tuple[Span, ...]
    #: pieces found only up to whitespace (the splitter changed spaces or line breaks)
    loose: int
    #: texts of the pieces that are not in the document, in order
    missing: tuple[str, ...]


def _occurrences(text: str, piece: str, pos: int):
    i = text.find(piece, pos)
    while i != -1:
        yield i, i + len(piece)
        i = text.find(piece, i + 1)


def _loose_occurrences(text: str, piece: str, pos: int):
    words = piece.split()
    pattern = re.compile(r"\s+".join(re.escape(w) for w in words))
    m = pattern.search(text, pos)
    while m is not None:
        yield m.start(), m.end()
        m = pattern.search(text, m.start() + 1)


def _pick(occurrences: Iterable[Span], prev_end: int, limit: int) -> Span | None:
    """The occurrence that continues the previous chunk: of those that end after it, the
    last that starts by ``limit`` (where the previous chunk ends, past whitespace), else
    the first that starts later (a splitter that dropped a separator)."""
    best = None
    for start, end in occurrences:
        if end <= prev_end:
            continue
        if start > limit:
            return best if best is not None else (start, end)
        best = (start, end)
    return best


def locate_pieces(text: str, pieces: Sequence[str]) -> Located:
    """Find every piece in ``text``; pieces that are empty or only whitespace are skipped."""
    spans: list[Span] = []
    missing: list[str] = []
    loose = 0
    prev_start, prev_end = -1, 0
    for piece in pieces:
        stripped = piece.strip()
        if not stripped:
            continue
        limit = prev_end
        while limit < len(text) and text[limit].isspace():
            limit += 1
        found = None
        for finder, needle in ((_occurrences, piece), (_occurrences, stripped),
                               (_loose_occurrences, stripped)):
            found = _pick(finder(text, needle, prev_start + 1), prev_end, limit)
            if found is not None:
                loose += finder is _loose_occurrences
                break
        if found is None:
            missing.append(piece)
            continue
        start, end = found
        prev_start = start  # where the splitter's own text began: the next one begins after
        # A stripped span is what the splitter meant; leading or trailing
        # whitespace the splitter kept is not content and would only blur boundaries.
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        spans.append((start, end))
        prev_end = end
    return Located(tuple(spans), loose, tuple(missing))
