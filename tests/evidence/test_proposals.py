"""Candidate evidence (``sweep.evidence.proposals``): the answering passage first, no repeats."""

from __future__ import annotations

import pytest

from sweep.core.types import Document
from sweep.evidence.proposals import propose
from sweep.evidence.questions import Question

MANUAL = """# AQ-200 Manual

The AQ-200 sensor measures air quality indoors: particles, carbon dioxide and humidity.
It reports a reading every minute to the companion app over Wi-Fi.

## Maintenance

Clean the filter weekly with a soft brush. Replace the filter every year, or sooner
when the app reports a clogged filter.

## Calibration

Calibrate the carbon dioxide sensor every six months outdoors, in fresh air, for ten
minutes. The app guides you through the calibration.
"""

FAQ = """# Frequently asked questions

## Warranty

The warranty lasts two years from the date of purchase and covers the sensor and the fan.

## Returns

You can return the device within 30 days if it is unused and in its box.
"""

DOCUMENTS = (
    Document("manual.md", MANUAL, title="AQ-200 Manual"),
    Document("faq.md", FAQ, title="Frequently asked questions"),
)


def ask(*texts: str) -> list[Question]:
    return [
        Question(f"q{i}", text, {"query_id": f"q{i}", "query": text}, i)
        for i, text in enumerate(texts, 1)
    ]


@pytest.mark.parametrize(
    ("question", "doc_id", "answer"),
    [
        ("How often should I calibrate the CO2 sensor?", "manual.md", "every six months"),
        ("How long is the warranty?", "faq.md", "two years"),
        ("When do I replace the filter?", "manual.md", "Replace the filter every year"),
        ("Can I send the device back?", "faq.md", "return the device within 30 days"),
    ],
)
def test_the_passage_holding_the_answer_ranks_first(question, doc_id, answer):
    [proposal] = propose(DOCUMENTS, ask(question), top=3)
    best = proposal.candidates[0].passage
    assert (best.doc_id, answer in best.text) == (doc_id, True)
    scores = [c.score for c in proposal.candidates]
    assert scores == sorted(scores, reverse=True) and all(s > 0 for s in scores)
    text = {d.doc_id: d.text for d in DOCUMENTS}[best.doc_id]
    assert text[best.start : best.end] == best.text


def test_candidates_are_json_judgments_with_a_rounded_score():
    [proposal] = propose(DOCUMENTS, ask("warranty years"), top=1)
    [candidate] = proposal.candidates
    row = candidate.as_json()
    assert list(row) == ["doc_id", "quote", "score", "start", "end", "keep"]
    assert row["keep"] is False  # a person marks the right ones
    assert row["quote"] == candidate.passage.text and row["score"] == round(candidate.score, 3)


def test_top_n_distinct_passages_and_none_that_share_no_word():
    proposals = propose(DOCUMENTS, ask("sensor filter app", "zebra xylophone"), top=2)
    assert [p.query_id for p in proposals] == ["q1", "q2"]
    first = proposals[0].candidates
    assert len(first) == 2 and first[0].passage != first[1].passage
    assert proposals[1].candidates == ()


def test_the_same_paragraph_in_two_documents_is_proposed_once():
    para = "Keep the receipt: the warranty needs it."
    docs = (
        Document("a.txt", para),
        Document("b.txt", para),
        Document("c.txt", "A warranty claim is made in the app."),
    )
    [proposal] = propose(docs, ask("warranty receipt"), top=3)
    assert [c.passage.doc_id for c in proposal.candidates] == ["a.txt", "c.txt"]


def test_top_must_be_positive():
    with pytest.raises(ValueError, match="top must be an integer >= 1, got 0"):
        propose(DOCUMENTS, ask("x"), top=0)


@pytest.mark.parametrize(
    ("question", "sentence"),
    [
        # "filter" is in both sentences of the Maintenance passage, "clean" only in the first.
        ("How do I clean the filter?", "Clean the filter weekly with a soft brush."),
        (
            "How often do I calibrate the CO2 sensor?",
            "Calibrate the carbon dioxide sensor every six months outdoors, in fresh air, for ten\n"
            "minutes.",
        ),
    ],
)
def test_the_sentence_that_carries_the_match_is_proposed_not_its_passage(question, sentence):
    [proposal] = propose(DOCUMENTS, ask(question), top=1)
    best = proposal.candidates[0].passage
    assert best.text == sentence and MANUAL[best.start : best.end] == sentence


def test_a_russian_answer_sentence_is_proposed_and_spread_terms_keep_the_passage():
    text = (
        "Гарантия действует два года с даты покупки. Вентилятор тоже покрыт. "
        "Ремонт делает сервис.\n"
    )
    docs = (Document("ru.txt", text),)
    [sentence] = propose(docs, ask("Сколько действует гарантия?"), top=1)
    assert sentence.candidates[0].passage.text == "Гарантия действует два года с даты покупки."
    # "гарантия" and "сервис" are in two sentences: neither carries the match alone.
    [spread] = propose(docs, ask("гарантия сервис"), top=1)
    assert spread.candidates[0].passage.text == text.strip()


KITEI = """# 旅費規程

## 精算

出張旅費は、出張から戻った日の翌日から起算して十四日以内に経費精算システムで申請してください。
領収書の原本は経理部に郵送してください。

## 宿泊

宿泊費の上限は東京二十三区内で一泊一万二千円、その他の地域で一泊一万円です。

# 休暇規程

## 年次有給休暇

年次有給休暇は入社六か月後に十日付与されます。取得する場合は三営業日前までに申請してください。
"""


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("出張旅費の精算はいつまでに申請しますか", "十四日以内に経費精算システムで申請"),
        ("宿泊費の上限はいくらですか", "一泊一万二千円"),
        ("有給休暇は何日付与されますか", "十日付与されます"),
    ],
)
def test_japanese_questions_find_the_passage_that_answers_them(question, answer):
    """Read in Japanese words (a whole clause was one term to English rules: no match)."""
    pytest.importorskip("sudachipy")
    (proposal,) = propose([Document("kitei.md", KITEI, title="旅費規程")], ask(question))
    assert proposal.candidates and answer in proposal.candidates[0].passage.text
