"""Chunk health: tiny chunks, chunks that stop inside a sentence, tables and code blocks cut."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from sweep.chunking import build_chunker
from sweep.chunking.base import build_chunks
from sweep.chunking.health import chunk_health, markdown_blocks
from sweep.core.tokenization import get_encoding
from sweep.core.types import Document

TEXT = (
    "# Title\n\nThe first sentence ends here. The second one runs on and on.\n\n"
    "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n\n"
    "```python\nx = 1\n\ny = 2\n```\n\nLast words."
)
DOC = Document("d.md", TEXT)


def _chunks(spans):
    return build_chunks(DOC, spans, get_encoding("cl100k_base"), "none", "test")


def test_tables_and_fenced_code_are_found_whole():
    blocks = markdown_blocks(TEXT)
    assert [TEXT[a:b] for a, b in blocks] == [
        "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |",
        "```python\nx = 1\n\ny = 2\n```",
    ]


def test_a_block_split_between_two_chunks_is_cut_and_one_held_whole_is_not():
    table, _code = markdown_blocks(TEXT)
    mid = (table[0] + table[1]) // 2
    h = chunk_health([DOC], _chunks([(0, mid), (mid, len(TEXT))]))
    assert h.n_blocks == 2 and h.blocks_cut_share == 0.5


def test_a_chunk_that_stops_inside_a_sentence_counts_and_one_at_a_sentence_or_line_end_does_not():
    inside = TEXT.index("runs on") + 4  # "...one runs| on and on."
    sentence = TEXT.index("here.") + 5  # "...ends here.| The second"
    line_end = TEXT.index("# Title") + 7  # "# Title|\n\n"
    assert chunk_health([DOC], _chunks([(0, inside), (inside, len(TEXT))])).midsentence_share == 0.5
    assert (
        chunk_health([DOC], _chunks([(0, sentence), (sentence, len(TEXT))])).midsentence_share == 0
    )
    assert (
        chunk_health([DOC], _chunks([(0, line_end), (line_end, len(TEXT))])).midsentence_share == 0
    )


def test_tiny_is_a_quarter_of_the_target_in_the_chunkers_own_units():
    spans = [(0, 7), (9, len(TEXT))]
    assert chunk_health([DOC], _chunks(spans), 40, len).tiny_share == 0.5  # 7 < 10 chars
    assert chunk_health([DOC], _chunks(spans), 20, len).tiny_share == 0.0  # 7 >= 5 chars
    assert chunk_health([DOC], _chunks(spans)).tiny_share is None


def test_no_blocks_no_share():
    doc = Document("p.md", "Plain text only.")
    chunks = build_chunks(doc, [(0, 16)], get_encoding("cl100k_base"), "none", "t")
    h = chunk_health([doc], chunks, 8)
    assert h.n_blocks == 0 and h.blocks_cut_share is None and h.midsentence_share == 0


@settings(max_examples=60, deadline=None)
@given(st.integers(8, 64), st.integers(0, 7))
def test_shares_are_shares_for_every_token_setting(size, overlap):
    chunker = build_chunker("token", size=size, overlap=overlap)
    chunks = chunker.chunk(DOC)
    h = chunk_health([DOC], chunks, chunker.target_size, chunker.length)
    for share in (h.tiny_share, h.midsentence_share, h.blocks_cut_share):
        assert share is not None and 0 <= share <= 1 and not math.isnan(share)
    # a chunk size that holds the whole document cuts nothing
    whole = build_chunker("token", size=512).chunk(DOC)
    assert chunk_health([DOC], whole, 512).blocks_cut_share == 0


def test_chinese_and_japanese_sentence_ends_are_sentence_ends():
    doc = Document("zh.md", "第一句话。他说「好。」第三句")
    a, b = doc.text.index("他"), doc.text.index("第三")
    chunks = build_chunks(
        doc, [(0, a), (a, b), (b, len(doc.text))], get_encoding("cl100k_base"), "none", "t"
    )
    # "。" ends a sentence, so does "。」"; the last chunk ends the document
    assert chunk_health([doc], chunks).midsentence_share == 0
    inside = build_chunks(
        doc, [(0, 2), (2, len(doc.text))], get_encoding("cl100k_base"), "none", "t"
    )
    assert chunk_health([doc], inside).midsentence_share == 0.5
