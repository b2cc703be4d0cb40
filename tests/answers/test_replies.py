"""``sweep.answers.replies``: the reply contracts of the answer and judge prompts. A reply the
contract cannot read is a :class:`BadReply` with a short reason, never anything else."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sweep.answers.replies import (
    CATEGORIES,
    BadReply,
    GeneratedAnswer,
    JudgeVerdict,
    parse_answer,
    parse_judge_verdict,
)

texts = st.text(min_size=1, max_size=80).filter(lambda s: s.strip())
junk = st.dictionaries(
    st.sampled_from(["confidence", "notes", "sources", "x"]),
    st.one_of(st.integers(), st.text(max_size=5), st.none()),
    max_size=3,
)


@given(texts, junk)
def test_any_answer_text_comes_back_stripped_and_extra_keys_are_ignored(text, extra):
    reply = json.dumps({**extra, "answer": text, "declined": False})
    assert parse_answer(reply) == GeneratedAnswer(text.strip(), False)


@given(texts, st.sampled_from(["```json\n{}\n```", "Sure! Here it is: {}", "```\n{}```"]))
def test_a_fenced_or_introduced_reply_is_read_too(text, wrapper):
    obj = json.dumps({"answer": text, "declined": False})
    assert parse_answer(wrapper.format(obj) if "{}" in wrapper else obj).text == text.strip()


@pytest.mark.parametrize(
    "reply",
    [
        '{"answer": "", "declined": true}',
        '{"answer": null, "declined": true}',
        '{"declined": " TRUE "}',
    ],
)
def test_a_decline_needs_no_answer_text(reply):
    assert parse_answer(reply) == GeneratedAnswer("", True)


def test_a_missing_declined_means_answered_and_a_declined_answer_keeps_its_text():
    assert parse_answer('{"answer": "45 euros"}') == GeneratedAnswer("45 euros", False)
    assert parse_answer('{"answer": " not stated ", "declined": true}') == GeneratedAnswer(
        "not stated", True
    )


@pytest.mark.parametrize(
    "reply,reason,words",
    [
        ("", "bad_json", "empty"),
        ("the answer is 45 euros", "bad_json", "no JSON object"),
        ("[1, 2]", "bad_json", "expected a JSON object"),
        ('{"answer": 45}', "bad_shape", "'answer' must be a string"),
        ('{"declined": false}', "bad_shape", "'answer' must be a string"),
        ('{"answer": "   "}', "bad_shape", "empty answer that is not declined"),
        ('{"answer": "x", "declined": "maybe"}', "bad_shape", "'declined' must be true or false"),
        ('{"answer": "x", "declined": 1}', "bad_shape", "'declined' must be true or false"),
        ('{"answer": "x", "declined": null}', "bad_shape", "'declined' must be true or false"),
    ],
)
def test_unreadable_answers(reply, reason, words):
    with pytest.raises(BadReply) as e:
        parse_answer(reply)
    assert e.value.reason == reason and isinstance(e.value, ValueError)
    assert str(e.value).startswith(f"{reason}: ") and words in str(e.value)


@given(
    st.sampled_from(["relevant", "correct"]),
    st.booleans(),
    st.one_of(st.text(max_size=30), st.none(), st.integers()),
    junk,
)
def test_a_binary_verdict_reads_its_own_key_and_a_reason(key, passed, reason, extra):
    reply = json.dumps({**extra, key: passed, "reason": reason})
    v = parse_judge_verdict(reply, key)
    assert v.passed is passed and v.category is None
    assert v.reason == (reason.strip() if isinstance(reason, str) else "")


@pytest.mark.parametrize("raw", ["true", "True", " TRUE", "false", "False "])
def test_quoted_booleans_are_read(raw):
    assert parse_judge_verdict(json.dumps({"relevant": raw}), "relevant").passed is (
        raw.strip().lower() == "true"
    )


def test_a_verdict_under_another_key_is_not_this_judges():
    with pytest.raises(BadReply, match="'correct' must be true or false, got None"):
        parse_judge_verdict('{"relevant": true, "reason": "r"}', "correct")


@given(
    st.booleans(),
    st.sampled_from(CATEGORIES),
    st.sampled_from(["", " ", "\n"]),
    st.sampled_from([str.lower, str.upper, str.title]),
)
def test_faithfulness_categories(passed, category, pad, case):
    reply = json.dumps({"faithful": passed, "category": pad + case(category) + pad, "reason": "r"})
    if not passed and category == "none":
        with pytest.raises(BadReply, match="unfaithful with category 'none'"):
            parse_judge_verdict(reply, "faithful")
        return
    v = parse_judge_verdict(reply, "faithful")
    # A faithful answer has no failure category, whatever the judge wrote beside it.
    assert v == JudgeVerdict(passed, "r", "none" if passed else category)


@pytest.mark.parametrize("category", [None, "lies", 3, ""])
def test_an_unknown_category_is_a_bad_shape_even_for_a_faithful_answer(category):
    for passed in (True, False):
        with pytest.raises(BadReply) as e:
            parse_judge_verdict(json.dumps({"faithful": passed, "category": category}), "faithful")
        assert e.value.reason == "bad_shape" and "'category' must be one of" in str(e.value)
