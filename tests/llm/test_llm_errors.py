"""Masking secrets in what a server sends back: every non-empty key, before any cut."""

from __future__ import annotations

import base64
import html
import json
import re
from urllib.parse import quote, quote_plus

from hypothesis import assume, given, settings
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
    texted = text[: len(text) // 2] + key + text[len(text) // 2 :]
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
    assert (
        clean("you sent Authorization: Bearer Ab3xY9q", [key])
        == "you sent Authorization: Bearer ***"
    )
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


# --------------------------------------------------------------------------- written forms

#: Key characters: any ASCII (control characters too) and a few beyond it. No "*", whose
#: runs the masks themselves are made of.
SPECIAL_KEY_CHARS = st.one_of(
    st.characters(codec="ascii", exclude_characters="*"), st.sampled_from("é€😀\u2028\u00a0")
)
any_long_keys = st.one_of(long_keys, st.text(SPECIAL_KEY_CHARS, min_size=8, max_size=80))


def written_forms(key: str) -> dict[str, str]:
    """The key as servers, proxies, HTTP libraries and logs have written it."""
    raw = key.encode("utf-8")
    forms = {
        "as is": key,
        "repr": repr(key),
        "bytes repr": repr(raw),
        "json": json.dumps(key),
        "json, not ascii": json.dumps(key, ensure_ascii=False),
        "json of json": json.dumps(json.dumps(key)),
        "percent": quote(key, safe=""),
        "form": quote_plus(key),
        "html": html.escape(key),
        "base64": base64.b64encode(raw).decode(),
        "base64 url": base64.urlsafe_b64encode(raw).decode(),
        "basic auth": base64.b64encode(b"me:" + raw).decode(),
        "bearer in base64": base64.b64encode(b"Bearer " + raw).decode(),
        "hex": raw.hex(),
        "HEX": raw.hex().upper(),
        "split": "\n".join(key[i : i + 7] for i in range(0, len(key), 7)),
        "split, json": json.dumps(" \n ".join(key[i : i + 5] for i in range(0, len(key), 5))),
        "header error": f"Illegal header value {('Bearer ' + key).encode()!r}",
    }
    if len(key.upper()) == len(key) == len(key.lower()):
        forms |= {"upper": key.upper(), "lower": key.lower(), "swapped": key.swapcase()}
    if len(key) >= 18:  # a piece of two thirds holds half the key and 12 characters
        piece = -(-2 * len(key) // 3)
        forms |= {"cut": key[:piece], "cut in front": key[-piece:]}
    return forms


@settings(max_examples=200, deadline=None)
@given(
    key=any_long_keys,
    before=st.text(max_size=200),
    after=st.text(max_size=200),
    limit=st.integers(1, 600),
    form=st.sampled_from(sorted(written_forms("k" * 18))),
)
def test_no_written_form_of_a_long_key_survives_clean_at_any_cut(key, before, after, limit, form):
    forms = written_forms(key)
    assume(form in forms)
    text = before + forms[form] + after
    for shown in (
        clean(text, [key]),
        clean(text, [key], limit),
        str(LLMError(text, secrets=[key])),
        mask(text, [key], short="credential"),
    ):
        left = [name for name, f in forms.items() if f.strip() and f in shown]
        assert not left, (form, left, shown)


def test_the_issue_keys_forms_are_masked():
    key = "sk-proj-AAAA1111\nBBBB2222CCCC"
    message = "Illegal header value b'Bearer sk-proj-AAAA1111\\nBBBB2222CCCC'"
    assert clean(message, [key]) == "Illegal header value b'Bearer ***'"
    for name, form in written_forms(key).items():
        shown = clean(f"server said: {form}!", [key])
        assert "AAAA1111" not in shown and "BBBB2222" not in shown and MASK in shown, name
        assert shown.startswith("server said: ") and shown.endswith("!"), (name, shown)


def test_a_short_key_keeps_its_narrow_rules_in_every_form():
    # A key under 8 characters is masked as typed and standing alone, never its other
    # forms: "x" in upper case, base64 or hex is an ordinary piece of text or JSON.
    for key in ("x", "ollama", "k1"):
        text = (
            f'{{"a": "{key.upper()}", "b": "{base64.b64encode(key.encode()).decode()}", '
            f'"c": "{key.encode().hex()}"}}'
        )
        assert mask(text, [key]) == text and mask(text, [key], short="credential") == text


def test_a_piece_of_a_key_is_masked_only_when_it_holds_half_of_it():
    key = "password-of-the-office-proxy"
    assert mask("your password-of-the-off… was wrong", [key]) == "your ***… was wrong"
    assert mask("…the-office-proxy was wrong", [key]) == "…*** was wrong"
    # Ordinary words the key is made of stay: "password" and "office" are an eighth of it.
    assert mask("the password for the office", [key]) == "the password for the office"
