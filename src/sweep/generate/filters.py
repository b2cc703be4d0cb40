"""Filters that need no model call: copied wording and near-duplicate questions."""

from __future__ import annotations

import re

import numpy as np

__all__ = ["longest_copied_run", "near_duplicates"]

_WORD = re.compile(r"\w+")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def longest_copied_run(question: str, passage: str) -> int:
    """Length, in words, of the longest run of consecutive words the question shares
    with the passage (case and punctuation ignored).

    A question that repeats a long stretch of its passage is found by any
    lexical or dense retriever and tells nothing about chunking.
    """
    q, p = _words(question), _words(passage)
    if not q or not p:
        return 0
    best = 0
    previous = [0] * (len(p) + 1)
    for a in q:
        current = [0] * (len(p) + 1)
        for j, b in enumerate(p, 1):
            if a == b:
                current[j] = previous[j - 1] + 1
                if current[j] > best:
                    best = current[j]
        previous = current
    return best


def near_duplicates(
    vectors: np.ndarray, threshold: float, earlier: np.ndarray | None = None
) -> list[int | None]:
    """For each row of ``vectors`` (unit length), the index of the question it
    duplicates, or None.

    A row duplicates an ``earlier`` row (index ``-1 - i`` for ``earlier[i]``) or
    an earlier row of ``vectors`` that was itself kept, when their cosine is at
    least ``threshold``.
    """
    kept: list[int] = []
    out: list[int | None] = []
    for i in range(len(vectors)):
        v = vectors[i]
        found: int | None = None
        if earlier is not None and len(earlier):
            sims = earlier @ v
            j = int(np.argmax(sims))
            if sims[j] >= threshold:
                found = -1 - j
        if found is None and kept:
            sims = vectors[kept] @ v
            j = int(np.argmax(sims))
            if sims[j] >= threshold:
                found = kept[j]
        out.append(found)
        if found is None:
            kept.append(i)
    return out
