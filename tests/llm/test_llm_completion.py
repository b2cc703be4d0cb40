"""Telling a chat completion from the other things a server answers 200 with."""

from __future__ import annotations

import json

import openai
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sweep.llm.completion import completion_text, describe_body


def parsed(data):
    """What the openai package makes of a JSON body (it validates nothing by default)."""
    return openai.types.chat.ChatCompletion.construct(**data) if isinstance(data, dict) else data


def test_only_a_non_empty_message_content_is_an_answer():
    ok = {"choices": [{"message": {"role": "assistant", "content": "{}"}}]}
    assert (
        completion_text(
            openai.types.chat.ChatCompletion.model_validate(
                {
                    "id": "x",
                    "object": "chat.completion",
                    "created": 0,
                    "model": "m",
                    "choices": [
                        {
                            "index": 0,
                            "finish_reason": "stop",
                            "message": {"role": "assistant", "content": "{}"},
                        }
                    ],
                }
            )
        )
        == "{}"
    )
    for bad in (
        {},
        {"choices": []},
        {"choices": "x"},
        {"choices": [{"message": None}]},
        {"choices": [{"message": {"content": None}}]},
        [ok],
        "<html>",
        None,
    ):
        assert completion_text(parsed(bad)) is None, bad


@pytest.mark.parametrize(
    "content_type, body, words",
    [
        ("text/html; charset=utf-8", "<html>502</html>", "an HTML page"),
        ("application/json", "  <!doctype html>", "an HTML page"),
        ("application/json", "", "an empty body"),
        (
            "text/event-stream",
            "data: {}\n\n",
            "a stream of server-sent events, which was not asked for",
        ),
        ("text/plain", "upstream connect error", "text/plain that is not JSON"),
        ("text/plain; charset=x", "oops", "text/plain that is not JSON"),
        ("text/plain sk-secret-in-header", "oops", "a body that is not JSON"),
        ("application/json", "[]", "a JSON list"),
        ("application/json", '"hello"', "a JSON str"),
        ("application/json", "null", "a JSON null"),
        ("application/json", "{}", "an empty JSON object"),
        ("application/json", '{"error": "busy"}', "a JSON object without choices"),
        ("application/json", '{"choices": []}', "no choices"),
        (
            "application/json",
            '{"choices": [{"message": {"content": null}, "finish_reason": "length"}]}',
            "no message content, finish_reason length",
        ),
        (
            "application/json",
            '{"choices": [{"message": {"content": ""}, "finish_reason": "stop"}]}',
            "an empty message",
        ),
        (
            "application/json",
            '{"choices": [{"message": {"content": 3}, "finish_reason": "sk-abc"}]}',
            "message content that is not text",
        ),
    ],
)
def test_a_body_that_is_not_a_completion_is_named_in_a_few_words(content_type, body, words):
    assert describe_body(content_type, body) == words


@given(st.text(max_size=200), st.text(max_size=40))
def test_the_description_never_quotes_the_body_or_its_type(body, content_type):
    secret = "sk-QUOTED-7f3a"
    words = describe_body(content_type + secret, body + secret)
    assert secret not in words and len(words) < 80
    assert json.dumps(words)  # one plain string
