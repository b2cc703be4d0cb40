"""The strategies that cut at one kind of boundary: token windows, sentences,
paragraphs, and the recursive separator hierarchy."""

from __future__ import annotations

from typing import Any

from sweep.chunking.base import BaseChunker, chunker
from sweep.chunking.boundaries import (
    PARAGRAPH_LEVELS,
    RECURSIVE_LEVELS,
    SENTENCE_LEVELS,
    Span,
    sentence_cuts,
)
from sweep.chunking.fitting import DocTools
from sweep.core.types import Document

__all__ = [
    "ParagraphChunker",
    "RecursiveChunker",
    "SentenceChunker",
    "TokenChunker",
    "sentence_units",
]


@chunker(
    "token", overlap="exactly `overlap` tokens shared by consecutive chunks (stride size - overlap)"
)
class TokenChunker(BaseChunker):
    """Fixed windows of ``size`` tokens, consecutive windows sharing ``overlap`` tokens."""

    def windows(self, doc: Document) -> list[tuple[int, int, Span]]:
        """All token windows ``(first_token, stop_token, (start, end))``, blank ones included."""
        return self._tools(doc.text).token_windows(0, len(doc.text), self.overlap)

    def spans(self, doc: Document) -> list[Span]:
        # Windows keep their exact token edges (no stripping), so overlap stays
        # exact. Dropped: windows with nothing but whitespace, and a window
        # whose characters equal the previous one's (tokens inside a
        # multi-byte character own no characters).
        out: list[Span] = []
        for _, _, span in self.windows(doc):
            if doc.text[span[0] : span[1]].strip() and (not out or out[-1] != span):
                out.append(span)
        return out


@chunker(
    "sentence",
    overlap="up to `overlap` tokens of whole sentences repeated from the end of the previous chunk",
)
class SentenceChunker(BaseChunker):
    """Whole sentences packed up to ``size``; overlap in whole sentences."""

    def spans(self, doc: Document) -> list[Span]:
        tools = self._tools(doc.text)
        units = sentence_units(tools, 0, len(doc.text))
        return tools.pack(units, self.overlap)


def sentence_units(tools: DocTools, a: int, b: int) -> list[Span]:
    """Sentences of ``[a, b)``; a sentence over ``size`` is cut at spaces, then tokens."""
    return tools.units(a, b, (sentence_cuts, *SENTENCE_LEVELS))


@chunker("paragraph", overlap="ignored: chunks never overlap")
class ParagraphChunker(BaseChunker):
    """Whole paragraphs (blank-line separated) packed up to ``size``, no overlap."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.overlap:
            self.notes = (f"overlap is ignored by strategy 'paragraph' (got {self.overlap})",)
        self.settings["overlap"] = 0

    def spans(self, doc: Document) -> list[Span]:
        return self._tools(doc.text).recursive(0, len(doc.text), PARAGRAPH_LEVELS, 0)


@chunker(
    "recursive",
    overlap="up to `overlap` tokens of whole pieces (lines, sentences, words) "
    "repeated from the previous chunk",
)
class RecursiveChunker(BaseChunker):
    """Separator hierarchy (blank line, line, sentence end, space, tokens), merged up to ``size``."""

    def spans(self, doc: Document) -> list[Span]:
        return self._tools(doc.text).recursive(0, len(doc.text), RECURSIVE_LEVELS, self.overlap)
