"""The diagnosis of one query's end-to-end trace: where does a failure come from?

| context relevant | faithful | answer relevant | diagnosis |
|---|---|---|---|
| yes | yes | no | the generator attended to the wrong section |
| yes | no | – | hallucination or misreading of what was retrieved |
| no | – | – | a retrieval problem: fix chunking, embedding or query preprocessing |

Context relevance comes from retrieval, not from an LLM: whether the chunks
handed to the model cover the gold evidence (every relevance unit credited
within the top k, at ``eval.min_coverage`` for spans). Unanswerable questions
(``relevant: []``) test whether the model declines.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["CONTEXTS", "DIAGNOSES", "context_relevance", "diagnose_answer"]

#: How much of the gold evidence the context holds.
CONTEXTS = ("complete", "partial", "none", "unanswerable")

#: code -> what it means, in the order reports list them.
DIAGNOSES = {
    "ok": "context relevant, answer faithful and relevant",
    "incorrect": "context relevant, answer faithful and relevant, but not what the reference says",
    "wrong_section": "context relevant and answer faithful, but it does not answer the question: "
    "the generator attended to the wrong section",
    "unfaithful": "context relevant, answer unfaithful: hallucination or misreading of what was "
    "retrieved",
    "declined_with_evidence": "the context holds the answer, but the model declined",
    "retrieval": "context not relevant (the evidence is missing from the chunks, or only part of "
    "it): a retrieval problem; fix chunking, embedding or query preprocessing",
    "correctly_declined": "unanswerable, and the model declined",
    "answered_without_evidence": "unanswerable: answered although nothing relevant was retrieved",
    "no_answer": "the model's answer could not be read (or the request failed)",
    "judge_failed": "a judge's reply could not be read (or the request failed)",
}


def context_relevance(unit_ranks: Sequence[int | None] | None, k: int) -> str:
    """``complete`` / ``partial`` / ``none`` from each gold unit's credit rank (None: never);
    ``unanswerable`` when the query has no unit."""
    if not unit_ranks:
        return "unanswerable"
    inside = sum(1 for r in unit_ranks if r is not None and r <= k)
    return "complete" if inside == len(unit_ranks) else "partial" if inside else "none"


def diagnose_answer(
    context: str,
    declined: bool | None,
    faithful: bool | None,
    relevant: bool | None,
    correct: bool | None = None,
) -> str:
    """The diagnosis code of one query; ``None`` verdicts are replies that could not be read.

    ``declined`` None: the answer itself is missing. ``correct`` None: no reference answer
    (or no verdict), not counted against the answer.
    """
    if declined is None:
        return "no_answer"
    if context == "unanswerable":
        return "correctly_declined" if declined else "answered_without_evidence"
    if context != "complete":
        return "retrieval"
    if declined:
        return "declined_with_evidence"
    if faithful is None or relevant is None:
        return "judge_failed"
    if not faithful:
        return "unfaithful"
    if not relevant:
        return "wrong_section"
    return "incorrect" if correct is False else "ok"
