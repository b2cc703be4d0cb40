"""How a chunker's cuts fall, measured beside the scores: the reasons a setting loses.

- ``tiny_share``: chunks under a quarter of the target size, in the units the size was
  set in (tokens for sweep's strategies, the splitter's own length for a framework's).
  They carry little context and crowd the top k.
- ``midsentence_share``: chunks that stop inside a sentence: the next character on the
  same line continues the text, and the chunk's last character is no sentence end.
  A chunk that ends at a line end (a heading, a list item, a table row) or at the end of
  its document is whole.
- ``blocks_cut_share``: Markdown tables and fenced code blocks that no single chunk
  holds whole. A block longer than the chunk size is always cut.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from sweep.core.text.sentences import SentenceEnds, sentence_rule
from sweep.core.types import Chunk, Document

__all__ = ["Health", "chunk_health", "markdown_blocks"]

_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
_NEXT = re.compile(r"[ \t]*(.?)", re.S)
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")


@dataclass(frozen=True)
class Health:
    tiny_share: float | None
    midsentence_share: float
    n_blocks: int
    blocks_cut_share: float | None

    def columns(self) -> dict[str, float | int | None]:
        return {
            "tiny_share": self.tiny_share,
            "midsentence_share": self.midsentence_share,
            "n_blocks": self.n_blocks,
            "blocks_cut_share": self.blocks_cut_share,
        }


def markdown_blocks(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of every fenced code block and every Markdown table (a header
    row, a ``|---|`` rule and body rows), trailing newline excluded."""
    blocks: list[tuple[int, int]] = []
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    i = 0
    while i < len(lines):
        fence = _FENCE.match(lines[i])
        if fence:
            mark = fence.group(1)[0] * 3
            j = i + 1
            while j < len(lines) and not lines[j].lstrip().startswith(mark):
                j += 1
            end_line = min(j, len(lines) - 1)
            blocks.append((starts[i], starts[end_line] + len(lines[end_line].rstrip("\r\n"))))
            i = end_line + 1
            continue
        if (
            "|" in lines[i]
            and i + 1 < len(lines)
            and _TABLE_RULE.match(lines[i + 1])
            and "|" in lines[i + 1]
        ):
            j = i + 2
            while j < len(lines) and "|" in lines[j] and lines[j].strip():
                j += 1
            last = j - 1
            blocks.append((starts[i], starts[last] + len(lines[last].rstrip("\r\n"))))
            i = j
            continue
        i += 1
    return blocks


def _ends_whole(text: str, chunk: Chunk, rule: SentenceEnds) -> bool:
    if chunk.text.rstrip(" \t").endswith(("\n", "\r")):  # a window that kept its line end
        return True
    # Only the next character after spaces and tabs matters: no copy of the rest of the text.
    after = _NEXT.match(text, chunk.end).group(1)
    if not after or after in "\r\n":
        return True
    return rule.ends_whole(chunk.text)


def _by_doc(chunks: Iterable[Chunk]) -> dict[str, list[Chunk]]:
    out: dict[str, list[Chunk]] = {}
    for c in chunks:
        out.setdefault(c.doc_id, []).append(c)
    return out


def chunk_health(
    documents: Sequence[Document],
    chunks: Sequence[Chunk],
    target_size: int | None = None,
    length: Callable[[str], int] | None = None,
) -> Health:
    """The health columns of one setting's chunks; ``tiny_share`` is None without a
    target size (a chunker of one's own that does not say it)."""
    if not chunks:
        return Health(None, math.nan, 0, None)
    tiny = None
    if target_size and target_size > 0:
        measure = length or (lambda t: len(t))
        tiny = sum(measure(c.text) < target_size / 4 for c in chunks) / len(chunks)
    texts = {d.doc_id: d.text for d in documents}
    # Each document's chunks are judged by the sentence rule of its language.
    rules = {d.doc_id: sentence_rule(d.text) for d in documents}
    mid = sum(
        not _ends_whole(texts[c.doc_id], c, rules[c.doc_id]) for c in chunks if c.doc_id in texts
    )
    n_blocks = cut = 0
    by_doc = _by_doc(chunks)
    for doc in documents:
        mine = by_doc.get(doc.doc_id, [])
        for a, b in markdown_blocks(doc.text):
            n_blocks += 1
            cut += not any(c.start <= a and b <= c.end for c in mine)
    return Health(tiny, mid / len(chunks), n_blocks, cut / n_blocks if n_blocks else None)
