"""The answer contracts: right shapes parse, extra keys are ignored, wrong shapes are errors."""

from __future__ import annotations

import json

import pytest

from sweep.generate.replies import (
    DraftQuestion,
    ShapeError,
    parse_check_verdict,
    parse_draft,
    parse_rating,
)
from sweep.llm.jsonreply import ReplyError


def j(**obj) -> str:
    return json.dumps(obj)


def test_fact_contract_with_extra_keys_ignored():
    draft = parse_draft(
        "fact",
        j(fact="F.", question="How  long is the\nwarranty?", quote=" Two years. ", confidence=0.3),
    )
    assert draft == DraftQuestion("How long is the warranty?", ("Two years.",), "F.")


def test_adversarial_multi_and_unanswerable_contracts():
    assert parse_draft("adversarial", j(question="Which one applies?", quote="Q")).quotes == ("Q",)
    assert parse_draft("multi", j(question="How do both compare?", quotes=["a", "b"])).quotes == (
        "a",
        "b",
    )
    assert parse_draft("unanswerable", j(question="Is there a gym?")).quotes == ()
    fenced = "```json\n" + j(question="Is there a gym?") + "\n```"
    assert parse_draft("unanswerable", fenced).question == "Is there a gym?"


@pytest.mark.parametrize(
    "kind, obj",
    [
        ("fact", {"fact": "f", "question": "What is it about?"}),  # no quote
        ("fact", {"fact": "f", "question": "", "quote": "q"}),
        ("fact", {"question": 3, "quote": "q"}),
        ("fact", {"question": "??", "quote": "q"}),  # too short
        ("fact", {"question": "1234567890?", "quote": "q"}),  # no letters
        ("adversarial", {"question": "What applies here?", "quote": ["q"]}),
        ("multi", {"question": "How do both compare?", "quotes": ["only one"]}),
        ("multi", {"question": "How do both compare?", "quotes": ["a", "b", "c"]}),
        ("multi", {"question": "How do both compare?", "quotes": ["a", ""]}),
        ("multi", {"question": "How do both compare?", "quote": "a"}),
        ("unanswerable", {"q": "Is there a gym?"}),
    ],
)
def test_wrong_shapes(kind, obj):
    with pytest.raises(ShapeError):
        parse_draft(kind, json.dumps(obj))


def test_not_json_is_a_reply_error():
    with pytest.raises(ReplyError):
        parse_draft("fact", "Sure! The question is: what is the warranty?")


@pytest.mark.parametrize(
    "answer, score",
    [(j(score=5, reason="r"), 5), (j(score=4.0), 4), (j(score="3"), 3), (j(score=1, extra=[1]), 1)],
)
def test_rating(answer, score):
    assert parse_rating(answer) == score


@pytest.mark.parametrize(
    "answer",
    [j(score=0), j(score=6), j(score=4.5), j(score=True), j(reason="no score"), j(score="four")],
)
def test_bad_rating(answer):
    with pytest.raises(ShapeError):
        parse_rating(answer)


@pytest.mark.parametrize(
    "answer, verdict",
    [
        (j(answerable=True), True),
        (j(answerable=False, reason="r"), False),
        (j(answerable="yes"), True),
        (j(answerable="False"), False),
    ],
)
def test_verdict(answer, verdict):
    assert parse_check_verdict(answer) is verdict


@pytest.mark.parametrize("answer", [j(answerable=1), j(answerable="maybe"), j(reason="none")])
def test_bad_verdict(answer):
    with pytest.raises(ShapeError):
        parse_check_verdict(answer)
