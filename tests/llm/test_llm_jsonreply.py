"""The JSON object inside a model's answer."""

from __future__ import annotations

import pytest

from sweep.llm.jsonreply import ReplyError, parse_json_object


@pytest.mark.parametrize(
    "text",
    [
        '{"question": "Why?", "quote": "Because."}',
        '  {"question": "Why?", "quote": "Because."}\n',
        '```json\n{"question": "Why?", "quote": "Because."}\n```',
        '```\n{"question": "Why?", "quote": "Because."}\n```',
        'Here is the JSON you asked for:\n```json\n{"question": "Why?", "quote": "Because."}\n```\nHope it helps.',
        'Sure. {"question": "Why?", "quote": "Because."} Anything else?',
    ],
)
def test_object_is_found_plain_fenced_or_inside_prose(text):
    assert parse_json_object(text) == {"question": "Why?", "quote": "Because."}


def test_braces_inside_strings_and_nested_objects():
    text = 'Result: {"question": "What does {x} mean?", "meta": {"a": [1, 2]}}'
    assert parse_json_object(text) == {"question": "What does {x} mean?", "meta": {"a": [1, 2]}}


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "no json here",
        "{question: unquoted}",
        '{"a": 1',
        '{"score": NaN}',
        "[1, 2, 3]",
        '"just a string"',
    ],
)
def test_anything_else_is_a_reply_error(text):
    with pytest.raises(ReplyError):
        parse_json_object(text)
