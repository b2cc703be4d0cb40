"""Passages to write questions from, independent of any chunk setting.

A passage is a window of about ``window_tokens`` tokens (cl100k_base) of
whole sentences. Windows never depend on ``chunk.size``, so the evidence of
the generated questions favours no chunk size over another. Which passages
a run uses is a weighted sample, without replacement, in proportion to their
length, so long documents get more questions than short ones; the order is
fixed by the seed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from sweep.chunking import build_chunker
from sweep.core.tokenization import DEFAULT_TOKENIZER
from sweep.core.types import Document

__all__ = ["SentenceWindow", "cut_passages", "sampling_order"]

WINDOW_TOKENIZER = DEFAULT_TOKENIZER


@dataclass(frozen=True, slots=True)
class SentenceWindow:
    """A passage questions are written from: whole sentences up to ``window_tokens``, cut by
    the sentence chunker (not the evidence tool's :class:`~sweep.core.text.passages.Passage`,
    whose size is in words and whose ends are headings and blank lines).
    ``text == document.text[start:end]``; ``position`` counts passages within the document."""

    index: int
    doc_id: str
    title: str
    position: int
    start: int
    end: int
    text: str
    n_tokens: int

    @property
    def location(self) -> dict[str, object]:
        return {"doc_id": self.doc_id, "start": self.start, "end": self.end}


def cut_passages(documents: Sequence[Document], window_tokens: int) -> tuple[SentenceWindow, ...]:
    """Every document cut into sentence-aligned windows of at most ``window_tokens``.

    Windows much shorter than asked (a document's last few lines) are dropped
    unless they are all their document has: a question needs some context.
    """
    chunker = build_chunker(
        strategy="sentence", size=window_tokens, overlap=0, tokenizer=WINDOW_TOKENIZER
    )
    min_tokens = max(10, window_tokens // 5)
    out: list[SentenceWindow] = []
    for doc in documents:
        chunks = [c for c in chunker.chunk(doc) if c.text.strip()]
        usable = [c for c in chunks if c.n_tokens >= min_tokens] or chunks[:1]
        for position, c in enumerate(usable):
            out.append(
                SentenceWindow(
                    index=len(out),
                    doc_id=doc.doc_id,
                    title=doc.title,
                    position=position,
                    start=c.start,
                    end=c.end,
                    text=c.text,
                    n_tokens=c.n_tokens,
                )
            )
    return tuple(out)


def sampling_order(passages: Sequence[SentenceWindow], seed: int, salt: str) -> list[int]:
    """Passage indices in a seeded random order, longer passages earlier on average.

    Efraimidis-Spirakis keys ``u ** (1 / weight)``: taking the first m is a
    weighted sample of m without replacement. ``salt`` (the question kind)
    gives each kind its own order from one seed.
    """
    if not passages:
        return []
    digest = hashlib.sha256(f"{seed}\0{salt}".encode()).digest()
    rng = np.random.default_rng(int.from_bytes(digest[:8], "little"))
    weights = np.array([max(p.n_tokens, 1) for p in passages], dtype=np.float64)
    u = rng.random(len(passages))
    keys = np.log(np.maximum(u, 1e-300)) / weights  # log of u ** (1/w): same order, no underflow
    return [int(i) for i in np.argsort(-keys, kind="stable")]
