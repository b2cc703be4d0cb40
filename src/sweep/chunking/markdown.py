"""The markdown strategy: one chunk per heading section, long sections split recursively."""

from __future__ import annotations

from typing import Any

from sweep.chunking.base import BaseChunker, chunker
from sweep.chunking.boundaries import RECURSIVE_LEVELS, Span
from sweep.chunking.headings import markdown_sections
from sweep.core.types import Document

__all__ = ["MarkdownChunker"]


@chunker(
    "markdown", overlap="as recursive, but only between chunks of one section longer than `size`"
)
class MarkdownChunker(BaseChunker):
    """One chunk per Markdown section; sections over ``size`` are split recursively."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.overlap:
            self.notes = (
                f"overlap ({self.overlap}) applies only inside sections longer than size "
                "(strategy 'markdown')",
            )

    def spans(self, doc: Document) -> list[Span]:
        tools = self._tools(doc.text)
        out: list[Span] = []
        for a, b in markdown_sections(doc.text):
            out.extend(tools.recursive(a, b, RECURSIVE_LEVELS, self.overlap))
        return out
