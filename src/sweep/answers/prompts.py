"""The prompts ``sweep.answers`` sends: the RAG answer and three binary judges.

Every system message starts with ``Task: <kind>`` (the contract the reply
must follow; the tests' stand-in server routes on it). Changing any wording
changes the requests, so cached replies of the old wording are not reused;
bump ``PROMPT_VERSION`` with it: it is recorded with every trace.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "ANSWER",
    "CORRECTNESS",
    "FAITHFULNESS",
    "PROMPT_VERSION",
    "RELEVANCE",
    "answer",
    "correctness",
    "faithfulness",
    "relevance",
]

PROMPT_VERSION = "1"

ANSWER = "rag-answer"
FAITHFULNESS = "judge-faithfulness"
RELEVANCE = "judge-relevance"
CORRECTNESS = "judge-correctness"

Messages = list[dict[str, str]]


def _messages(task: str, system: str, user: str) -> Messages:
    return [
        {"role": "system", "content": f"Task: {task}\n{system}"},
        {"role": "user", "content": user},
    ]


def _context(chunks: Sequence[str]) -> str:
    if not chunks:
        return "<context>\n(nothing was retrieved)\n</context>"
    return (
        "<context>\n"
        + "\n".join(f'<chunk rank="{i}">\n{text}\n</chunk>' for i, text in enumerate(chunks, 1))
        + "\n</context>"
    )


def answer(question: str, chunks: Sequence[str]) -> Messages:
    """The RAG prompt: answer from the retrieved chunks only, or decline."""
    return _messages(
        ANSWER,
        (
            "You answer questions about a company's documents using only the context retrieved "
            "for the question. Answer with one JSON object and nothing else."
        ),
        f"""\
Answer the question using only the information in the context below. Do not use anything you
know from elsewhere. If the context does not contain the answer, decline: do not guess.

{_context(chunks)}

<question>{question}</question>

Return one JSON object:
{{"answer": "your answer, in one to three sentences", "declined": false}}
or, when the context does not contain the answer:
{{"answer": "", "declined": true}}""",
    )


_JUDGE = (
    "You are a strict evaluator of answers produced by a retrieval-augmented system. "
    "Answer with one JSON object and nothing else."
)


def faithfulness(question: str, chunks: Sequence[str], reply: str) -> Messages:
    """Is every claim of the answer supported by the context? (hallucination, omission, misinterpretation)"""
    return _messages(
        FAITHFULNESS,
        _JUDGE,
        f"""\
Decide whether the answer is faithful to the context: every claim in it must be stated in, or
follow directly from, the context. Information that may be true but is not in the context
counts as a hallucination.

{_context(chunks)}

<question>{question}</question>
<answer>{reply}</answer>

Categories: "hallucination" (information not in the context), "omission" (relevant
information in the context that the answer leaves out, so it misleads), "misinterpretation"
(information from the context stated wrongly), "none" (faithful).

Return one JSON object:
{{"faithful": true or false, "category": "hallucination" | "omission" | "misinterpretation" | "none", "reason": "one sentence"}}""",
    )


def relevance(question: str, reply: str) -> Messages:
    """Does the answer address the question that was asked?"""
    return _messages(
        RELEVANCE,
        _JUDGE,
        f"""\
Decide whether the answer addresses the question that was asked (whether or not it is
correct): an answer about something else, or one that evades the question, is not relevant.

<question>{question}</question>
<answer>{reply}</answer>

Return one JSON object:
{{"relevant": true or false, "reason": "one sentence"}}""",
    )


def correctness(question: str, reply: str, reference: str) -> Messages:
    """Does the answer agree with the reference answer of the evaluation set?"""
    return _messages(
        CORRECTNESS,
        _JUDGE,
        f"""\
Decide whether the answer is correct: it must state what the reference answer states (other
wording is fine; missing or contradicting the key facts is not).

<question>{question}</question>
<reference>{reference}</reference>
<answer>{reply}</answer>

Return one JSON object:
{{"correct": true or false, "reason": "one sentence"}}""",
    )
