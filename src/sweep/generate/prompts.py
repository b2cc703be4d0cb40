"""Every prompt ``sweep.generate`` sends, and the version that names them.

Each system message starts with ``Task: <kind>``: it tells the model (and a
test's stand-in server) which contract the answer must follow. Passages,
questions and evidence are wrapped in tags so that a model, or a parser,
can tell them from the instructions. Changing any wording here changes
the requests, so cached answers of the old wording are not reused; bump
``PROMPT_VERSION`` with it, because the version is recorded with every
generated question.
"""

from __future__ import annotations

from collections.abc import Sequence

from sweep.core.text.languages import detect_language
from sweep.generate.passages import SentenceWindow

__all__ = [
    "PROMPT_VERSION",
    "adversarial",
    "evidence_check",
    "fact",
    "multi",
    "realism",
    "retrieval_check",
    "unanswerable",
]

# 2: questions asked for in the passage's language (prompts of English passages unchanged).
PROMPT_VERSION = "2"

Messages = list[dict[str, str]]

_SYSTEM = (
    "You write and review evaluation questions for a document search system. "
    "Answer with one JSON object and nothing else."
)

_QUOTE_RULE = (
    "copied exactly from the passage, character for character: the shortest "
    "sentence or sentences that state the answer"
)


def _messages(task: str, user: str) -> Messages:
    return [
        {"role": "system", "content": f"Task: {task}\n{_SYSTEM}"},
        {"role": "user", "content": user},
    ]


def _attr(text: str) -> str:
    return " ".join(text.replace('"', "'").split())


def _passage(p: SentenceWindow, label: str | None = None) -> str:
    ident = f' id="{label}"' if label else ""
    return f'<passage{ident} document="{_attr(p.title or p.doc_id)}">\n{p.text}\n</passage>'


# The languages the detector names; Latin-script text it cannot tell apart (German,
# French...) and other scripts are asked for as "the language of the passage".
_LANGUAGE_NAMES = {"ja": "Japanese", "zh": "Chinese", "ko": "Korean", "ru": "Russian"}


def _language(p: SentenceWindow) -> str:
    """The instruction to write in the passage's language: a question translated from
    English reads like no question a user of these documents would type. Empty for English
    passages, whose prompts (and cached answers) stay as they were."""
    language = detect_language(p.text)
    if language == "en":
        return ""
    name = _LANGUAGE_NAMES.get(language)
    if name is None:
        return (
            "\nWrite the question in the language of the passage, as its readers would type it.\n"
        )
    return (
        f"\nWrite the question in {name}, as a {name}-speaking employee would type it into a "
        f"search box: natural {name}, not a translation from English.\n"
    )


def _variant(variant: int) -> str:
    # A passage used again gets a differently worded request: a different
    # cache entry, and a nudge away from the question it already produced.
    if variant <= 0:
        return ""
    return (
        f"\nVariant {variant + 1}: questions were already written from this material; "
        "choose a different fact than the most prominent one.\n"
    )


def fact(p: SentenceWindow, variant: int = 0) -> Messages:
    return _messages(
        "fact-question",
        f"""\
Given a passage of a document, extract one specific, self-contained fact from it.
Then write a question that is directly and unambiguously answered by that fact alone.
Write the question the way a user who has not read the passage would ask it: in your own
words, without copying long phrases, and without mentioning "the passage", "the text" or
"the document".
{_language(p)}{_variant(variant)}
Return one JSON object:
{{"fact": "...", "question": "...", "quote": "..."}}
where "quote" is the evidence, {_QUOTE_RULE}.

{_passage(p)}""",
    )


def adversarial(
    target: SentenceWindow, distractors: Sequence[SentenceWindow], variant: int = 0
) -> Messages:
    others = "\n\n".join(_passage(d, label) for d, label in zip(distractors, "BCDEF"))
    return _messages(
        "adversarial-question",
        f"""\
Write a hard question for a search system. Passage A contains a clear fact. Passages B and C
come from the same collection and share vocabulary with A, but do not contain that fact.
Write a question that uses the vocabulary of B and C (their names, terms and topics), so that
a search system could be drawn to them, but that only passage A answers.

Example: A says "In April 2020 the company reported a 17% drop in quarterly revenue, its
largest since 2008." B says "The company suffered heavy losses during the 2008 financial
crisis." A good question: "When did the company's revenue fall the most since the 2008
financial crisis?" Only A answers it; B is a plausible wrong answer.

Do not mention "passage A" or any passage in the question.
{_language(target)}{_variant(variant)}
Return one JSON object:
{{"question": "...", "quote": "..."}}
where "quote" is the evidence in passage A, {_QUOTE_RULE}.

{_passage(target, "A")}

{others}""",
    )


def multi(first: SentenceWindow, second: SentenceWindow, entity: str, variant: int = 0) -> Messages:
    return _messages(
        "multi-hop-question",
        f"""\
Two passages, from different documents or from distant parts of one document, both mention
"{entity}". Write one question that needs information from both passages: neither passage
alone answers it completely. Write it the way a real user would ask, without mentioning the
passages.
{_language(first)}{_variant(variant)}
Return one JSON object:
{{"question": "...", "quotes": ["...", "..."]}}
where the first quote is the evidence in passage 1 and the second the evidence in passage 2,
each {_QUOTE_RULE}.

{_passage(first, "1")}

{_passage(second, "2")}""",
    )


def unanswerable(context: Sequence[SentenceWindow], variant: int = 0) -> Messages:
    passages = "\n\n".join(_passage(p, str(i)) for i, p in enumerate(context, 1))
    return _messages(
        "unanswerable-question",
        f"""\
Below are passages from a document collection. Write one question that a user of this
collection would plausibly ask (the same domain, the same kind of names and vocabulary)
but that these documents do not answer: the answer is not in these passages and would not be
in documents like them. Do not ask about something the passages state; do not ask for
opinions or predictions; do not mention the passages.
{_language(context[0]) if context else ""}{_variant(variant)}
Return one JSON object:
{{"question": "..."}}

{passages}""",
    )


_REALISM_EXAMPLES = """\
<question>
How many days of annual leave do new employees get in their first year?
</question>
{"score": 5, "reason": "Specific and natural; exactly what an employee would ask."}

<question>
My sensor shows a red light after the firmware update, what should I do?
</question>
{"score": 5, "reason": "A real user's situation in their own words."}

<question>
What is the meal allowance?
</question>
{"score": 4, "reason": "Realistic, though short and missing where or for whom."}

<question>
What does the procedure described in section 3.2 state regarding the submission of forms?
</question>
{"score": 2, "reason": "Written from the document's structure; a user would not know section 3.2."}

<question>
According to the passage, what is mentioned?
</question>
{"score": 1, "reason": "Refers to a passage the user never saw; has no real information need."}"""


def realism(question: str) -> Messages:
    return _messages(
        "realism-rating",
        f"""\
Rate how realistic a question is: would a real user of a document search system ask it, in
these words? Use a 1 to 5 scale:
5 = natural and specific, a question real users ask
4 = realistic, slightly stiff, short or over-specified
3 = plausible but awkward, or visibly written from the document's wording
2 = unlikely: uses the document's structure or wording a user would not know, or asks
    several unrelated things at once
1 = not a real question: vague, meaningless, or about "the passage" or "the text"

Examples:

{_REALISM_EXAMPLES}

Return one JSON object: {{"score": <1-5>, "reason": "..."}}

<question>
{question}
</question>""",
    )


def evidence_check(question: str, quotes: Sequence[str]) -> Messages:
    evidence = "\n\n".join(f"<evidence>\n{q}\n</evidence>" for q in quotes)
    return _messages(
        "evidence-check",
        f"""\
Can the question be answered from the evidence below alone, without any other knowledge?
Answer true only if the evidence states the answer; if it is missing, partial or only
suggested, answer false.

Return one JSON object: {{"answerable": true or false, "reason": "..."}}

<question>
{question}
</question>

{evidence}""",
    )


def retrieval_check(question: str, passages: Sequence[SentenceWindow]) -> Messages:
    found = "\n\n".join(_passage(p, str(i)) for i, p in enumerate(passages, 1))
    return _messages(
        "retrieval-check",
        f"""\
Do any of these passages answer the question, fully or in part? Answer true if any passage
states the answer or a substantial part of it; false if none does.

Return one JSON object: {{"answerable": true or false, "reason": "..."}}

<question>
{question}
</question>

{found}""",
    )
