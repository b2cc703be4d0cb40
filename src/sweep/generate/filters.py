"""Filters that need no model call: copied wording and near-duplicate questions."""

from __future__ import annotations

import re

import numpy as np

from sweep.core.text.languages import CJK_CLASS, is_cjk, nfkc

__all__ = ["CJK_CHARS_PER_WORD", "longest_copied_run", "near_duplicates"]

#: Characters of Japanese, Chinese or Korean that carry about what one English word does
#: (a text translated from English has about 2.5 CJK characters per English word): a
#: copied run of 20 such characters weighs 8 words.
CJK_CHARS_PER_WORD = 2.5

# A unit is a word of a spaced script, or one CJK character (CJK text has no spaces).
_UNIT = re.compile(f"[{CJK_CLASS}]|(?:(?![{CJK_CLASS}])\\w)+")


def _units(text: str) -> list[str]:
    # NFKC: a full-width "ＶＰＮ" in the question is the passage's "VPN".
    return _UNIT.findall(nfkc(text).casefold())


def _weight(unit: str) -> float:
    return 1 / CJK_CHARS_PER_WORD if is_cjk(unit) else 1.0


def longest_copied_run(question: str, passage: str) -> float:
    """Length, in words, of the longest run of consecutive words the question shares
    with the passage (case, width and punctuation ignored). In Japanese, Chinese and
    Korean every character is a unit, weighing ``1 / CJK_CHARS_PER_WORD`` of a word.

    A question that repeats a long stretch of its passage is found by any
    lexical or dense retriever and tells nothing about chunking.
    """
    q, p = _units(question), _units(passage)
    if not q or not p:
        return 0
    weights = [_weight(a) for a in q]
    best = 0.0
    previous = [0.0] * (len(p) + 1)
    for a, w in zip(q, weights, strict=True):
        current = [0.0] * (len(p) + 1)
        for j, b in enumerate(p, 1):
            if a == b:
                current[j] = previous[j - 1] + w
                if current[j] > best:
                    best = current[j]
        previous = current
    return round(best, 6)


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
