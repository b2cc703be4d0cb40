"""A document's text cut into passages a person would accept as evidence for a question:
the one passage cutter of sweep (the evidence tool proposes these passages).

The rules, in order:

1. **Blocks.** The text is cut at blank lines and at Markdown headings (as
   :func:`~sweep.core.text.headings.parse_headings` finds them: ``#`` lines and setext
   headings, outside fenced code). Heading lines are never part of a passage: they only
   end one section and start the next.
2. **Short blocks join the next.** A block of fewer than :data:`MIN_WORDS` words
   (a one-line list item, a caption) is joined with the blocks after it, within
   its section, until the passage has :data:`MIN_WORDS` words or one more block
   would take it past :data:`MAX_WORDS`; a short block left at the end of a
   section joins the passage before it when that fits. A block ending with a
   colon (a lead-in: "When the alarm sounds:") always joins the block after it.
   Never across a heading.
3. **Long passages are cut into windows.** Joined blocks of more than
   :data:`MAX_WORDS` words are cut at sentence ends (the rule of the document's language,
   :func:`~sweep.core.text.sentences.sentence_rule`) and line breaks into windows of at most :data:`MAX_WORDS` words, of about equal size
   (a lead-in then starts the first window); a single sentence longer than that is cut
   between words.

Every passage is the exact slice ``text[start:end]``, trimmed of the whitespace
around it, never empty; the passages of a text are in order and do not overlap,
and together they hold every non-blank character that is not on a heading line.
A word is a run of characters other than whitespace.

:func:`sentences_of` cuts a passage into its sentences where the chunkers cut them
(:func:`~sweep.core.text.sentences.sentence_cuts` with the rule of the passage's
language), so a proposal can be the one sentence that answers rather than the passage
around it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass

from sweep.core.text.headings import parse_headings
from sweep.core.text.sentences import SentenceEnds, sentence_cuts, sentence_rule
from sweep.core.textspans import pieces
from sweep.core.types import Document

__all__ = ["MAX_WORDS", "MIN_WORDS", "Passage", "passages_of", "sentences_of", "split_passages"]

#: A block shorter than this joins the next one.
MIN_WORDS = 20
#: No passage is longer.
MAX_WORDS = 80

# A byte-order mark is blank here: the text keeps it (offsets count it), a passage does not.
_WORD = re.compile(r"[^\s\ufeff]+")
_NONBLANK = re.compile(r"[^\s\ufeff]")
_NEWLINE = re.compile("\n")


@dataclass(frozen=True, slots=True)
class Passage:
    """``text == document.text[start:end]``; ``headings``: the document's title and the
    headings the passage is under, outermost first (they are indexed with it, not quoted)."""

    doc_id: str
    index: int
    start: int
    end: int
    text: str
    headings: tuple[str, ...] = ()

    @property
    def n_words(self) -> int:
        return len(_WORD.findall(self.text))

    @property
    def indexed_text(self) -> str:
        """What a search reads: the headings above the passage, then the passage."""
        return "\n".join((*self.headings, self.text))


@dataclass(frozen=True, slots=True)
class _Span:
    start: int
    end: int
    words: int


def passages_of(document: Document) -> tuple[Passage, ...]:
    """The passages of ``document`` (the rules: this module's docstring)."""
    text = document.text
    passages: list[Passage] = []
    for (start, end), headings in _spans_with_headings(text, sentence_rule(text)):
        if document.title and (not headings or headings[0] != document.title):
            headings = (document.title, *headings)
        passages.append(
            Passage(document.doc_id, len(passages), start, end, text[start:end], headings)
        )
    return tuple(passages)


def sentences_of(
    passage: Passage, text: str, rule: SentenceEnds | None = None
) -> tuple[Passage, ...]:
    """The sentences of ``passage``, each a :class:`Passage` of the same document (same
    ``index`` and headings), trimmed of whitespace and in order; ``text`` is the
    document's text, ``rule`` the sentence rule (by default, of the passage's language).
    A passage of one sentence is itself."""
    rule = rule if rule is not None else sentence_rule(passage.text)
    cuts = sentence_cuts(text, passage.start, passage.end, rule)
    spans = [
        _trimmed(text, a, b)
        for a, b in pieces(passage.start, passage.end, cuts)
        if _NONBLANK.search(text, a, b) is not None
    ]
    if len(spans) < 2:
        return (passage,)
    return tuple(
        Passage(
            passage.doc_id, passage.index, s.start, s.end, text[s.start : s.end], passage.headings
        )
        for s in spans
    )


def split_passages(text: str) -> tuple[tuple[int, int], ...]:
    """``(start, end)`` of every passage of ``text``, in order."""
    return tuple(span for span, _ in _spans_with_headings(text, sentence_rule(text)))


def _spans_with_headings(
    text: str, rule: SentenceEnds
) -> Iterator[tuple[tuple[int, int], tuple[str, ...]]]:
    for blocks, headings in _sections(text):
        for group in _groups(text, blocks):
            for span in _windows(text, group, rule):
                yield (span.start, span.end), headings


def _sections(text: str) -> Iterator[tuple[list[_Span], tuple[str, ...]]]:
    """The blocks between two headings, with the titles of the headings they are under."""
    headings = {h.start: h for h in parse_headings(text)}
    path: list[tuple[int, str]] = []  # (level, title) of the headings above, outermost first
    blocks: list[_Span] = []
    run: tuple[int, int] | None = None  # first and last line of the block being read
    heading_end = 0  # where the lines of the last heading end

    def close_run() -> None:
        nonlocal run
        if run is not None:
            blocks.append(_trimmed(text, *run))
            run = None

    def titles() -> tuple[str, ...]:
        return tuple(title for _, title in path if title)  # ("####" alone names nothing)

    offset = 0
    # Blank lines as str.splitlines sees them ("\r" and U+2028 end a line too); a heading
    # starts after a "\n", which always starts one of these lines.
    for line in text.splitlines(keepends=True):
        start, end = offset, offset + len(line)
        offset = end
        heading = headings.get(start)
        if heading is not None:
            close_run()
            if blocks:
                yield blocks, titles()
                blocks = []
            path = [(level, title) for level, title in path if level < heading.level]
            path.append((heading.level, heading.title))
            heading_end = heading.body_start
        elif start < heading_end:
            continue  # a heading's underline (setext), or its line cut by "\r"
        elif _NONBLANK.search(line) is None:
            close_run()
        else:
            run = (run[0] if run is not None else start, end)
    close_run()
    if blocks:
        yield blocks, titles()


def _trimmed(text: str, start: int, end: int) -> _Span:
    words = list(_WORD.finditer(text, start, end))
    return _Span(words[0].start(), words[-1].end(), len(words))


def _join(a: _Span, b: _Span) -> _Span:
    return _Span(a.start, b.end, a.words + b.words)


def _groups(text: str, blocks: list[_Span]) -> list[list[_Span]]:
    """The blocks of one section, in groups that become one passage each (or windows)."""
    groups: list[list[_Span]] = []
    current: list[_Span] = []
    words = 0
    for block in blocks:
        if current and (
            text[current[-1].end - 1] in ":："
            or (words < MIN_WORDS and words + block.words <= MAX_WORDS)
        ):
            current.append(block)
            words += block.words
        else:
            if current:
                groups.append(current)
            current, words = [block], block.words
    if current:
        last = sum(b.words for b in groups[-1]) if groups else MAX_WORDS
        if words < MIN_WORDS and last + words <= MAX_WORDS:
            groups[-1] += current
        else:
            groups.append(current)
    return groups


def _windows(text: str, group: list[_Span], rule: SentenceEnds) -> list[_Span]:
    """One passage from the first block of ``group`` to its last when it fits, else windows
    of at most MAX_WORDS words, cut at sentence ends and line breaks (between words inside
    a sentence too long for one)."""
    total = sum(b.words for b in group)
    if total <= MAX_WORDS:
        return [_Span(group[0].start, group[-1].end, total)]
    units: list[_Span] = []
    for block in group:
        start = block.start
        for cut in (*_cuts(text, block.start, block.end, rule), block.end):
            if _NONBLANK.search(text, start, cut) is not None:
                unit = _trimmed(text, start, cut)
                units.extend(_between_words(text, unit) if unit.words > MAX_WORDS else [unit])
            start = cut
    return _pack(units, total)


def _cuts(text: str, start: int, end: int, rule: SentenceEnds) -> list[int]:
    """Where a long block may be cut: after a sentence's end, and at every line break."""
    breaks = (m.end() for m in _NEWLINE.finditer(text, start, end))
    return sorted({*rule.ends(text, start, end), *breaks})


def _between_words(text: str, unit: _Span) -> list[_Span]:
    words = list(_WORD.finditer(text, unit.start, unit.end))
    size = math.ceil(len(words) / math.ceil(len(words) / MAX_WORDS))
    return [
        _Span(
            words[i].start(), words[min(i + size, len(words)) - 1].end(), min(size, len(words) - i)
        )
        for i in range(0, len(words), size)
    ]


def _pack(units: list[_Span], total: int) -> list[_Span]:
    # Aim at equal windows (ceil(total / n) words each) rather than full ones and a stub.
    target = math.ceil(total / math.ceil(total / MAX_WORDS))
    windows: list[_Span] = []
    current: _Span | None = None
    for unit in units:
        if current is None:
            current = unit
        elif current.words >= target or current.words + unit.words > MAX_WORDS:
            windows.append(current)
            current = unit
        else:
            current = _join(current, unit)
    assert current is not None  # a long block has words
    windows.append(current)
    return windows
