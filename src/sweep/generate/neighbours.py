"""Which passages go together: distractors, multi-hop partners, retrieval for a question.

All similarities are cosines of the sweep embedder's vectors (of word
counts in a dry run, which loads no model). Ties break by passage index, so
the same corpus and seed always give the same prompts (and so the same
cache keys).
"""

from __future__ import annotations

import re
import zlib
from collections import Counter
from collections.abc import Sequence

import numpy as np

from sweep.core.text.languages import CJK_CLASS, nfkc
from sweep.generate.passages import SentenceWindow

__all__ = [
    "distractors",
    "entity_terms",
    "multi_partner",
    "normalize_rows",
    "top_k",
    "word_vectors",
]

#: A neighbour this close is a near copy of the target (a second version of a
#: manual, say) and most likely states the same fact: never a distractor.
NEAR_COPY = 0.97
# Capitalised words, product codes and numbers with letters: names a
# question can be about. Sentence-initial function words are filtered below.
_TERM = re.compile(r"\b(?:[A-Z][A-Za-z0-9]*(?:[-.][A-Za-z0-9]+)*|[A-Za-z]+-?\d[\w-]*)\b")
_NOT_NAMES = frozenset(
    [
        "A",
        "An",
        "The",
        "This",
        "That",
        "These",
        "Those",
        "It",
        "Its",
        "If",
        "In",
        "On",
        "At",
        "For",
        "To",
        "Of",
        "And",
        "Or",
        "But",
        "Not",
        "No",
        "Yes",
        "Do",
        "Does",
        "Did",
        "Is",
        "Are",
        "Was",
        "Were",
        "Be",
        "Can",
        "Could",
        "Should",
        "Would",
        "Will",
        "May",
        "Must",
        "We",
        "You",
        "Your",
        "Our",
        "They",
        "Their",
        "He",
        "She",
        "His",
        "Her",
        "I",
        "When",
        "Where",
        "What",
        "Which",
        "Who",
        "Why",
        "How",
        "After",
        "Before",
        "During",
        "All",
        "Any",
        "Each",
        "Every",
        "Some",
        "Most",
        "More",
        "Also",
        "Only",
        "Then",
        "There",
        "Here",
        "Note",
        "See",
        "Use",
        "With",
        "Without",
        "From",
        "By",
        "As",
        "Please",
        "Step",
        "Table",
        "Section",
        "Example",
        "Examples",
        "Yes",
        "Q",
        "A",
    ]
)


_WORDS = re.compile(r"[a-z0-9]{3,}")
# Text without spaces between words: its terms are runs of three or more katakana (loan
# words and product names: グローバルプロテクト) or Han characters (compounds: 年次有給休暇),
# and whatever stands in Japanese quotation brackets (「経費精算マニュアル」).
_CJK_TERM = re.compile(
    r"[\u30a0-\u30ff]{3,}|[\u3400-\u4dbf\u4e00-\u9fff々〆]{3,}|「([^「」\n]{2,30})」"
)
# Russian names and codes: a capitalised Cyrillic word that does not start a sentence
# (those are mostly ordinary words), or two or more capitals (ГОСТ, ООО).
_CYRILLIC_TERM = re.compile(r"(?<![.!?…\n]\s)(?<!^)\b[А-ЯЁ][а-яё]{2,}\b|\b[А-ЯЁ]{2,}\b")
_CJK_RUN = re.compile(f"[{CJK_CLASS}]+")


def word_vectors(texts: Sequence[str], dim: int = 256) -> np.ndarray:
    """Word counts hashed into ``dim`` buckets: a stand-in for embeddings where no model
    may load (a dry run), so that similar passages are those that share words. The
    same on every run (crc32, not Python's salted ``hash``)."""
    out = np.zeros((len(texts), dim), dtype=np.float32)
    for i, text in enumerate(texts):
        for word in _words(text):
            out[i, zlib.crc32(word.encode()) % dim] += 1.0
    return out


def _words(text: str) -> list[str]:
    """Latin words of three letters or more, and character pairs of text written without
    spaces (Japanese, Chinese): what two passages on the same subject share."""
    words = _WORDS.findall(text.lower())
    for run in _CJK_RUN.findall(nfkc(text)):
        words.extend(run[i : i + 2] for i in range(len(run) - 1))
    return words


def normalize_rows(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32)


def _ranked(similarities: np.ndarray, exclude: int) -> list[int]:
    order = np.lexsort((np.arange(len(similarities)), -similarities))
    return [int(j) for j in order if j != exclude]


def distractors(target: int, unit_vectors: np.ndarray, k: int = 2) -> list[int]:
    """The ``k`` passages most similar to ``target`` that are not near copies of it."""
    sims = unit_vectors @ unit_vectors[target]
    return [j for j in _ranked(sims, target) if sims[j] < NEAR_COPY][:k]


def entity_terms(text: str) -> frozenset[str]:
    """Names, product codes and other proper terms in ``text``: capitalised Latin and
    Cyrillic words and codes, and in Japanese or Chinese text katakana words, Han compounds
    and quoted titles (terms every passage shares are left out by :func:`multi_partner`)."""
    terms = {t for t in _TERM.findall(text) if t not in _NOT_NAMES and len(t) >= 3}
    terms.update(_CYRILLIC_TERM.findall(text))
    for match in _CJK_TERM.finditer(nfkc(text)):
        terms.add(match.group(1) or match.group(0))
    return frozenset(terms)


def term_frequencies(passages: Sequence[SentenceWindow]) -> tuple[list[frozenset[str]], Counter]:
    terms = [entity_terms(p.text) for p in passages]
    return terms, Counter(t for ts in terms for t in ts)


def multi_partner(
    target: int,
    passages: Sequence[SentenceWindow],
    unit_vectors: np.ndarray,
    terms: Sequence[frozenset[str]],
    df: Counter,
    used: set[frozenset[int]],
) -> tuple[int, str] | None:
    """A passage that shares a specific entity with ``target`` and sits in another
    document or at least two passages away in the same one: the most similar such
    passage, and the rarest shared term. None when there is none.

    A term found in more than a quarter of the passages (the company's name,
    say) ties everything to everything and is not used.
    """
    max_df = max(2, len(passages) // 4)
    p = passages[target]
    sims = unit_vectors @ unit_vectors[target]
    for j in _ranked(sims, target):
        q = passages[j]
        if q.doc_id == p.doc_id and abs(q.position - p.position) < 2:
            continue
        if frozenset((target, j)) in used or sims[j] >= NEAR_COPY:
            continue
        shared = [t for t in terms[target] & terms[j] if df[t] <= max_df]
        if shared:
            return j, min(shared, key=lambda t: (df[t], t))
    return None


def top_k(query: np.ndarray, unit_vectors: np.ndarray, k: int) -> list[int]:
    """Indices of the ``k`` passages most similar to the unit vector ``query``."""
    sims = unit_vectors @ query
    return _ranked(sims, -1)[:k]
