"""Where a framework's chunk texts lie in the document they came from.

Splitters return strings, and the offsets some of them offer are not reliable
(LangChain's ``add_start_index`` searches from the previous chunk's start plus
its length minus the overlap, and gives -1 when whitespace stripping moved the
chunk). Span credit needs exact offsets, so sweep finds every returned text in
the document itself, with a cursor that only moves forward:

- chunks are in document order, each starts after the previous one starts and
  ends after it ends (an overlap repeats the previous chunk's tail, never a
  whole chunk), and starts no later than where the previous one ended (past
  whitespace): of the occurrences that do all this, the last is tried first, so
  text that repeats (a boilerplate paragraph, a table of like rows) is placed
  where the chunks continue and not at an earlier repeat. A splitter that drops
  a separator between chunks leaves a gap: then the first occurrence after it.
  When a later chunk then fits nowhere, the earlier chunks' other places are
  tried (a depth-first search that never retries a failed state);
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
from sweep.core.textspans import strip_span

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


def _candidates(occurrences: Iterable[Span], prev_end: int, limit: int,
                most: int = 16) -> list[Span]:
    """The occurrences that could continue the previous chunk, most likely first: those
    that end after it and start by ``limit`` (where the previous chunk ends, past
    whitespace), the latest first; then those that start later (a splitter that dropped a
    separator), the earliest first."""
    within: list[Span] = []
    beyond: list[Span] = []
    for start, end in occurrences:
        if end <= prev_end:
            continue
        if start > limit:
            beyond.append((start, end))
            if len(beyond) >= most:
                break
        else:
            within.append((start, end))
    return (within[::-1] + beyond)[:most]


def _options(text: str, piece: str, prev_start: int, prev_end: int) -> tuple[list[Span], bool]:
    """Where ``piece`` may lie after a chunk at ``(prev_start, prev_end)``, and whether only
    up to whitespace."""
    limit = prev_end
    while limit < len(text) and text[limit].isspace():
        limit += 1
    stripped = piece.strip()
    for finder, needle in ((_occurrences, piece), (_occurrences, stripped),
                           (_loose_occurrences, stripped)):
        found = _candidates(finder(text, needle, prev_start + 1), prev_end, limit)
        if found:
            return found, finder is _loose_occurrences
    return [], False


def _present(text: str, piece: str) -> bool:
    stripped = piece.strip()
    return stripped in text or next(_loose_occurrences(text, stripped, 0), None) is not None


@dataclass
class _Frame:
    i: int
    prev_start: int
    prev_end: int
    options: list[Span]
    loose: bool
    next: int = 0


def _search(text: str, pieces: Sequence[str]) -> tuple[list[Span], int] | None:
    """Places for all ``pieces`` that obey the order, most likely first, found depth-first;
    a state that failed once is never tried again, so the search stays polynomial. None
    when no placement exists within the budget."""
    n = len(pieces)
    failed: set[tuple[int, int, int]] = set()
    budget = 64 * n + 1024

    def frame(i: int, prev_start: int, prev_end: int) -> _Frame:
        options, loose = (_options(text, pieces[i], prev_start, prev_end) if i < n
                          else ([], False))
        return _Frame(i, prev_start, prev_end, options, loose)

    stack: list[_Frame] = []
    current = frame(0, -1, 0)
    while current.i < n:
        if current.next < len(current.options) and budget > 0:
            budget -= 1
            raw = current.options[current.next]
            current.next += 1
            key = (current.i + 1, raw[0], strip_span(text, *raw)[1])
            if key in failed:
                continue
            stack.append(current)
            current = frame(*key)
            continue
        failed.add((current.i, current.prev_start, current.prev_end))
        if not stack:
            return None
        current = stack.pop()
    spans = [strip_span(text, *f.options[f.next - 1]) for f in stack]
    return spans, sum(f.loose for f in stack)


def _greedy(text: str, pieces: Sequence[str]) -> tuple[list[Span], int, list[str]]:
    """Each piece where it most likely continues the previous one; a piece that fits
    nowhere after that is missing."""
    spans: list[Span] = []
    missing: list[str] = []
    loose = 0
    prev_start, prev_end = -1, 0
    for piece in pieces:
        options, is_loose = _options(text, piece, prev_start, prev_end)
        if not options:
            missing.append(piece)
            continue
        prev_start = options[0][0]
        spans.append(strip_span(text, *options[0]))  # edge whitespace is no content
        prev_end = spans[-1][1]
        loose += is_loose
    return spans, loose, missing


def locate_pieces(text: str, pieces: Sequence[str]) -> Located:
    """Find every piece in ``text``; pieces that are empty or only whitespace are skipped.

    Pieces that occur nowhere in the text are missing. The others are placed in order,
    each where it most likely continues the previous one; when a later piece then fits
    nowhere (periodic text, where an overlap looks like the next chunk), earlier pieces'
    other places are tried. If no order-keeping placement exists (a splitter that
    reorders), each piece goes where it first fits and the rest are missing.
    """
    kept = [p for p in pieces if p.strip()]
    here = [_present(text, p) for p in kept]
    present = [p for p, h in zip(kept, here) if h]
    absent = [p for p, h in zip(kept, here) if not h]
    found = _search(text, present)
    if found is not None:
        spans, loose = found
        return Located(tuple(spans), loose, tuple(absent))
    spans, loose, unplaced = _greedy(text, present)
    return Located(tuple(spans), loose, tuple(p for p in kept if p in absent or p in unplaced))
