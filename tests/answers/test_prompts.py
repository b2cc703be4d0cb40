"""``sweep.answers.prompts``: what ``sweep.answers`` sends. Each prompt names its contract on its
system message's first line and carries the question, context, answer and reference it is about;
sent through the real client to the stand-in server, the replies meet the contracts of
``sweep.answers.replies``."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from llm_server import AnswerResponders, ChatRequest, StandInLLM
from sweep.answers import prompts
from sweep.answers.replies import parse_answer, parse_judge_verdict
from sweep.llm.client import Completion, LLMClient
from sweep.llm.config import LLMConfig

CHUNKS = [
    "The daily allowance for meals is 45 euros within Portugal.",
    "Rail is preferred for journeys under four hours.",
]
Q = "What is the daily meal allowance within Portugal?"


def _all():
    return {
        prompts.ANSWER: prompts.answer(Q, CHUNKS),
        prompts.FAITHFULNESS: prompts.faithfulness(Q, CHUNKS, "45 euros."),
        prompts.RELEVANCE: prompts.relevance(Q, "45 euros."),
        prompts.CORRECTNESS: prompts.correctness(Q, "45 euros.", "45 euros a day"),
    }


def test_every_prompt_is_a_system_then_a_user_message_naming_its_task():
    built = _all()
    assert len(set(built)) == 4
    for task, messages in built.items():
        assert [m["role"] for m in messages] == ["system", "user"]
        assert messages[0]["content"].splitlines()[0] == f"Task: {task}"
        assert ChatRequest({"messages": messages}, None).kind == task  # what the server routes on
        assert "JSON object" in messages[0]["content"] + messages[1]["content"]
    assert prompts.PROMPT_VERSION  # recorded with every trace


def test_the_context_is_every_chunk_in_rank_order():
    user = prompts.answer(Q, CHUNKS)[1]["content"]
    ranks = re.findall(r'<chunk rank="(\d+)">\n(.*?)\n</chunk>', user, re.DOTALL)
    assert ranks == [("1", CHUNKS[0]), ("2", CHUNKS[1])]
    assert f"<question>{Q}</question>" in user
    faithful = prompts.faithfulness(Q, CHUNKS, "45 euros.")[1]["content"]
    assert re.findall(r'<chunk rank="(\d+)">', faithful) == ["1", "2"]
    assert "<answer>45 euros.</answer>" in faithful


def test_an_empty_context_says_nothing_was_retrieved():
    user = prompts.answer(Q, [])[1]["content"]
    assert "<context>\n(nothing was retrieved)\n</context>" in user and "<chunk" not in user


def test_only_the_faithfulness_judge_sees_the_context_and_only_correctness_the_reference():
    built = _all()
    for task, messages in built.items():
        user = messages[1]["content"]
        assert ("<context>" in user) == (task in (prompts.ANSWER, prompts.FAITHFULNESS))
        assert ("<reference>45 euros a day</reference>" in user) == (task == prompts.CORRECTNESS)
        assert ("<answer>45 euros.</answer>" in user) == (task != prompts.ANSWER)
        assert f"<question>{Q}</question>" in user


@given(st.text(min_size=1, max_size=60), st.lists(st.text(max_size=40), max_size=5))
def test_the_question_and_chunks_are_carried_as_given(question, chunks):
    user = prompts.answer(question, chunks)[1]["content"]
    assert f"<question>{question}</question>" in user
    for i, text in enumerate(chunks, 1):
        assert f'<chunk rank="{i}">\n{text}\n</chunk>' in user
    # The same inputs always give the same requests: cached replies are found again.
    assert prompts.answer(question, chunks) == prompts.answer(question, chunks)


def test_the_prompts_ask_for_the_keys_the_reply_parsers_read():
    built = _all()
    assert '"declined": false' in built[prompts.ANSWER][1]["content"]
    assert '"faithful": true or false' in built[prompts.FAITHFULNESS][1]["content"]
    for category in ("hallucination", "omission", "misinterpretation", "none"):
        assert f'"{category}"' in built[prompts.FAITHFULNESS][1]["content"]
    assert '"relevant": true or false' in built[prompts.RELEVANCE][1]["content"]
    assert '"correct": true or false' in built[prompts.CORRECTNESS][1]["content"]


@pytest.fixture
def answering():
    with AnswerResponders().install(StandInLLM()) as server:
        yield server


def test_sent_to_a_server_each_prompt_gets_a_reply_its_parser_reads(answering):
    client = LLMClient(
        LLMConfig(base_url=answering.url, model="stand-in"), None, None, show_progress=False
    )
    built = _all()
    replies = client.complete_many(list(built.values()), desc="prompts")
    assert all(isinstance(r, Completion) for r in replies)
    got = dict(zip(built, (r.text for r in replies)))
    a = parse_answer(got[prompts.ANSWER])
    assert not a.declined and a.text == CHUNKS[0]  # the context sentence that answers it
    assert (
        parse_judge_verdict(got[prompts.FAITHFULNESS], "faithful").passed is False
    )  # not verbatim
    assert parse_judge_verdict(got[prompts.RELEVANCE], "relevant").passed is False
    assert parse_judge_verdict(got[prompts.CORRECTNESS], "correct").passed is True
    assert sorted(r.kind for r in answering.requests) == sorted(built)  # concurrent: any order
    # Faithful when the answer is said in the context; nothing to answer from: declined.
    faithful, declined = client.complete_many(
        [prompts.faithfulness(Q, CHUNKS, CHUNKS[0]), prompts.answer(Q, [])]
    )
    assert parse_judge_verdict(faithful.text, "faithful").passed is True
    assert parse_answer(declined.text).declined
