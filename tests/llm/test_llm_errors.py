"""Masking secrets in what a server sends back: every non-empty key, before any cut."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from sweep.llm.errors import MASK, LLMError, clean, clip, mask

# Characters API keys are made of, and text that shares none of them, so any key
# character left in the output can only come from the key.
KEY_CHARS = st.characters(codec="ascii", categories=("L", "Nd"), include_characters="-_.")
keys = st.text(KEY_CHARS, min_size=1, max_size=60)
long_keys = st.text(KEY_CHARS, min_size=8, max_size=60)
filler = st.text(st.sampled_from(" \n\t,;:!?()[]{}'\"/=é"), min_size=1, max_size=400)


@settings(max_examples=300)
@given(key=long_keys, text=st.text(max_size=300), limit=st.integers(1, 400))
def test_a_long_key_never_survives_in_any_text(key, text, limit):
    texted = text[: len(text) // 2] + key + text[len(text) // 2:]
    assert key not in mask(texted, [key])
    assert key not in clean(texted, [key])
    assert key not in clean(texted, [key], limit)


@settings(max_examples=300)
@given(key=keys, parts=st.lists(filler, min_size=1, max_size=6), limit=st.integers(1, 500))
def test_masked_then_cut_leaves_no_character_of_the_key_at_any_cut(key, parts, limit):
    # The key quoted between separators, as servers do ("Bearer KEY.", "key 'KEY'").
    text = key.join(parts)
    out = clean(text, [key], limit)
    assert not set(out) & set(key), out
    assert len(out) <= limit
    assert not set(str(LLMError(text, secrets=[key]))) & set(key)


@given(key=keys, parts=st.lists(filler, min_size=2, max_size=6))
def test_every_quoted_occurrence_of_any_key_is_masked(key, parts):
    out = mask(key.join(parts), [key])
    assert out == MASK.join(parts)


def test_the_issue_example_and_a_cut_after_the_key_started():
    key = "Ab3xY9q"
    assert clean("you sent Authorization: Bearer Ab3xY9q", [key]) == \
        "you sent Authorization: Bearer ***"
    text = "x" * 275 + " Bearer sk-live-0123456789abcdef0123 rest"
    shown = clean(text, ["sk-live-0123456789abcdef0123"], 300)
    assert "sk-" not in shown and shown.endswith("Bearer *** rest")
    # Cutting first, as before, would have left 'sk-live-0123' for the mask to miss.
    assert "sk-live-0123" in clip(text, 300)


def test_short_keys_are_not_masked_inside_longer_words():
    assert mask("next x, ax x-ray", ["x"]) == "next ***, ax ***-ray"
    assert mask("the ollama server says ollamas", ["ollama"]) == "the *** server says ollamas"


def test_a_password_inside_the_key_does_not_split_the_keys_mask():
    assert mask("k=abcdefgh12345678", ["abcdefgh", "abcdefgh12345678"]) == "k=***"


def test_nothing_to_mask_and_one_line():
    assert mask("a b", [None, ""]) == "a b"
    assert clean("a\n  b\tc", []) == "a b c"
    assert clip("abcdef", 4) == "abc…" and clip("abc", 4) == "abc"
    assert not re.search(r"\s{2}", str(LLMError("x\n\ny", secrets=["secret-key-1"])))
