"""Candidate evidence for unlabelled questions: the passages BM25 ranks best for each.

Every document is cut into :mod:`passages <sweep.core.text.passages>`, each indexed
with the headings it is under, and searched with
:class:`~sweep.retrieval.lexical.BM25Retriever` (each text read in its own language by
the ``auto`` analyzer: Japanese words by Sudachi, English stems without stopwords...). A
question's candidates are its best passages in score order (ties: the earlier
passage), leaving out passages that share no term with it, that overlap one already
chosen, or whose text (spacing and case aside) is one already chosen: the same
paragraph copied into two documents is proposed once.

A passage is proposed as the one sentence that carries what it matched when exactly one
of its sentences holds every question term the passage's text holds: the evidence a
person keeps is that sentence, and a whole passage would credit a chunk for covering its
other sentences. Otherwise (the terms are spread over sentences, or several sentences
hold them all) the passage is proposed whole.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from sweep.core.checks import is_int
from sweep.core.text.passages import Passage, passages_of, sentences_of
from sweep.core.types import Chunk, Document
from sweep.retrieval.lexical import BM25Retriever, Tokenizer

if TYPE_CHECKING:
    from sweep.evidence.questions import Question

__all__ = ["EvidenceCandidate", "Proposal", "propose", "propose_from"]

# Scores for this many questions at a time: a (batch, n_passages) float32 array.
_BATCH = 128


@dataclass(frozen=True, slots=True)
class EvidenceCandidate:
    """A passage proposed as evidence and its BM25 score for the question."""

    passage: Passage
    score: float

    def as_json(self) -> dict[str, Any]:
        """``{"doc_id", "quote", "score", "start", "end", "keep": false}``: a person sets
        ``keep`` to true on the right ones (``sweep.evidence --accept`` takes those)."""
        p = self.passage
        return {
            "doc_id": p.doc_id,
            "quote": p.text,
            "score": round(self.score, 3),
            "start": p.start,
            "end": p.end,
            "keep": False,
        }


@dataclass(frozen=True, slots=True)
class Proposal:
    """A question's candidates, best first; empty when no passage shares a term with it."""

    query_id: str
    query: str
    candidates: tuple[EvidenceCandidate, ...]


def propose(
    documents: Sequence[Document], questions: Sequence[Question], top: int = 3
) -> list[Proposal]:
    """Up to ``top`` candidate passages of ``documents`` for each of ``questions``
    (anything with ``query_id`` and ``query``), in their order."""
    return propose_from(
        [p for d in documents for p in passages_of(d)],
        questions,
        top,
        texts={d.doc_id: d.text for d in documents},
    )


def propose_from(
    passages: Sequence[Passage],
    questions: Sequence[Question],
    top: int = 3,
    *,
    texts: Mapping[str, str] | None = None,
) -> list[Proposal]:
    """:func:`propose` over passages already cut; ``texts`` (doc_id -> the document's text)
    lets a passage be narrowed to the sentence that carries its match."""
    if not is_int(top) or top < 1:
        raise ValueError(f"top must be an integer >= 1, got {top!r}")
    retriever = BM25Retriever()
    retriever.index(
        [
            Chunk(
                p.doc_id,
                p.index,
                p.start,
                p.end,
                p.text,
                n_tokens=p.n_words,
                embed_text=p.indexed_text,
            )
            for p in passages
        ]
    )
    proposals: list[Proposal] = []
    for first in range(0, len(questions), _BATCH):
        batch = questions[first : first + _BATCH]
        scores = retriever.scores([q.query for q in batch])
        for question, row in zip(batch, scores):
            terms = set(retriever.tokenize(question.query))
            candidates = _best(
                row,
                passages,
                top,
                lambda p: _narrowed(
                    p, terms, retriever.tokenize, texts.get(p.doc_id) if texts else None
                ),
            )
            proposals.append(Proposal(question.query_id, question.query, candidates))
    return proposals


def _narrowed(passage: Passage, terms: set[str], tokenize: Tokenizer, text: str | None) -> Passage:
    """The one sentence of ``passage`` holding every term of ``terms`` the passage's text
    holds, else the passage (the rule: this module's docstring)."""
    held = terms & set(tokenize(passage.text))
    if text is None or not held:  # matched by its headings only: no sentence carries it
        return passage
    carrying = [s for s in sentences_of(passage, text) if held <= set(tokenize(s.text))]
    return carrying[0] if len(carrying) == 1 else passage


def _best(
    scores: np.ndarray, passages: Sequence[Passage], top: int, narrow: Callable[[Passage], Passage]
) -> tuple[EvidenceCandidate, ...]:
    matching = np.flatnonzero(scores > 0)
    order = matching[np.lexsort((matching, -scores[matching].astype(np.float64)))]
    chosen: list[EvidenceCandidate] = []
    texts: set[str] = set()
    for i in order:
        passage = narrow(passages[i])
        text = " ".join(passage.text.split()).casefold()
        if text in texts or any(_overlap(passage, c.passage) for c in chosen):
            continue
        chosen.append(EvidenceCandidate(passage, float(scores[i])))
        texts.add(text)
        if len(chosen) == top:
            break
    return tuple(chosen)


def _overlap(a: Passage, b: Passage) -> bool:
    return a.doc_id == b.doc_id and a.start < b.end and b.start < a.end
