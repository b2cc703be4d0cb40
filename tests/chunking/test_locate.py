"""Locating a framework's chunk texts in their document: exact offsets, in order, in text
that repeats, with whitespace or broken characters changed at the edges, and never a
guess for text that is not there."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sweep.chunking.locate import locate_pieces


def _placed_texts(text, located):
    return [text[a:b] for a, b in located.spans]


def _windows(text, data, most):
    """Chunks as a splitter makes them: in order, each starting after and ending after the
    last, over up to ``most`` cuts."""
    cuts = sorted(
        set(data.draw(st.lists(st.integers(0, len(text)), max_size=most))) | {0, len(text)}
    )
    spans = []
    for a, b in pairwise(cuts):
        back = data.draw(st.integers(0, a - spans[-1][0] - 1)) if spans and a > spans[-1][0] else 0
        spans.append((a - back, b))
    return spans


def _assert_whole_characters(text, a, b, piece):
    """``text[a:b]`` is the piece, with at most the one character it cut at either edge
    (and the whitespace between) in place of its U+FFFD."""
    core = piece.strip().strip("\ufffd").strip()
    at = text.find(core, a)
    assert a <= at and at + len(core) <= b, (text[a:b], piece)
    assert len(text[a:at].strip()) <= 1 and len(text[at + len(core) : b].strip()) <= 1
    assert "\ufffd" not in text[a:b]


def test_an_overlapping_chunk_is_found_where_it_continues_not_where_its_text_first_occurs():
    text = "alpha beta. alpha beta. gamma"
    located = locate_pieces(text, ["alpha beta.", "alpha beta. gamma"])
    assert located.spans == ((0, 11), (12, 29)) and not located.missing


def test_a_chunk_inside_the_previous_one_is_not_where_the_next_chunk_is():
    # "--" occurs inside the first chunk; the splitter's second chunk is the later one
    text = "a -- b\n\n--"
    assert locate_pieces(text, ["a -- b", "--"]).spans == ((0, 6), (8, 10))


def test_repeated_text_is_placed_where_the_chunks_continue_not_at_an_earlier_repeat():
    text = "same line\n" * 4
    located = locate_pieces(text, ["same line\nsame line", "same line\nsame line"])
    assert located.spans == ((0, 19), (20, 39))


def test_a_gap_the_splitter_left_is_skipped():
    # a splitter that drops its separator ("--") between chunks
    assert locate_pieces("one -- two", ["one", "two"]).spans == ((0, 3), (7, 10))


def test_stripped_and_whitespace_changed_chunks_get_the_documents_own_span():
    text = "  Title\n\nOne line\nwrapped here.  "
    located = locate_pieces(text, ["Title", "One line wrapped here."])
    assert located.spans == ((2, 7), (9, 31))
    assert located.loose == 1 and text[9:31] == "One line\nwrapped here."


def test_text_that_is_not_in_the_document_is_never_guessed():
    located = locate_pieces("one two three", ["one", "TWO", "three"])
    assert located.spans == ((0, 3), (8, 13)) and located.missing == ("TWO",)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab .\n", min_size=1, max_size=80), st.data())
def test_windows_with_overlap_are_located_exactly(text, data):
    wanted = [(a, b) for a, b in _windows(text, data, 8) if text[a:b].strip()]
    located = locate_pieces(text, [text[a:b] for a, b in wanted])
    assert not located.missing
    assert [text[a:b] for a, b in located.spans] == [text[a:b].strip() for a, b in wanted]
    starts = [a for a, _ in located.spans]
    assert starts == sorted(starts)


def test_a_chunk_may_start_where_the_previous_one_starts():
    located = locate_pieces("foo bar baz", ["foo bar", "foo bar baz"])
    assert located.spans == ((0, 7), (0, 11)) and not located.unordered


def test_pieces_that_differ_only_in_edge_whitespace_are_both_placed():
    located = locate_pieces("  aa ", ["  aa", "aa "])
    assert _placed_texts("  aa ", located) == ["aa", "aa"] and not located.unordered


def test_a_repeated_or_reordered_chunk_is_unordered_not_missing_and_only_it():
    located = locate_pieces("one two three", ["one", "two", "three", "one"])
    assert located.spans == ((0, 3), (4, 7), (8, 13))
    assert located.unordered == ("one",) and not located.missing
    located = locate_pieces("one two three", ["one", "three", "two"])
    assert located.unordered == ("two",) and located.spans == ((0, 3), (8, 13))


@pytest.mark.parametrize("size,overlap", [(1000, 200), (300, 0), (120, 60)])
def test_a_long_periodic_text_has_every_chunk_placed(size, overlap):
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    # every chunk has the same text, which occurs thousands of times
    text = "same line\n" * 20000
    pieces = RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=overlap).split_text(text)
    located = locate_pieces(text, pieces)
    assert not located.missing and not located.unordered
    assert _placed_texts(text, located) == [p.strip() for p in pieces]
    assert located.spans[0][0] == 0 and located.spans[-1][1] == len(text.rstrip())


def test_prose_around_a_long_table_of_identical_rows_is_placed_where_it_is():
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    prose = " ".join(f"Sentence {i} says something of its own." for i in range(300))
    text = f"{prose}\n\n| a | b |\n|---|---|\n" + "| x | 1 |\n" * 8000 + f"\n{prose} The end."
    pieces = RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=200).split_text(text)
    located = locate_pieces(text, pieces)
    assert not located.missing and not located.unordered
    assert _placed_texts(text, located) == [p.strip() for p in pieces]
    for (a, _), piece in zip(located.spans, pieces):  # unique text is where it occurs once
        if text.count(piece.strip()) == 1:
            assert text.find(piece.strip()) == a


def test_a_token_splitter_that_cuts_a_character_in_half_is_placed_with_the_whole_character():
    from langchain_text_splitters import TokenTextSplitter

    text = "Ünïcödé façade — naïve café 日本語のテキストです。 emoji 🎉🎊 " * 40
    pieces = TokenTextSplitter(
        encoding_name="cl100k_base", chunk_size=32, chunk_overlap=8
    ).split_text(text)
    assert any(p.strip().startswith("\ufffd") or p.strip().endswith("\ufffd") for p in pieces)
    located = locate_pieces(text, pieces)
    assert not located.missing and not located.unordered and len(located.spans) == len(pieces)
    for (a, b), piece in zip(located.spans, pieces):
        _assert_whole_characters(text, a, b, piece)
    starts = [a for a, _ in located.spans]
    assert starts == sorted(starts)


def test_a_whitespace_changing_splitter_over_a_long_document_is_placed_by_its_words():
    import re

    from langchain_text_splitters import RecursiveCharacterTextSplitter

    text = "\n\n".join(f"Paragraph {i}:\nline one of it,\n  line two of it." for i in range(3000))
    pieces = [
        re.sub(r"\s+", " ", p)
        for p in RecursiveCharacterTextSplitter(chunk_size=400, chunk_overlap=50).split_text(text)
    ]
    located = locate_pieces(text, pieces)
    assert not located.missing and len(located.spans) == len(pieces)
    assert [re.sub(r"\s+", " ", t) for t in _placed_texts(text, located)] == pieces
    assert located.loose == sum(p not in text for p in pieces)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab\n", min_size=1, max_size=60), st.data())
def test_windows_over_repetitive_text_are_all_placed_in_order(text, data):
    # text made of two letters and line breaks, where most chunk texts occur more than once
    pieces = [text[a:b] for a, b in _windows(text, data, 10) if text[a:b].strip()]
    located = locate_pieces(text, pieces)
    assert not located.missing and not located.unordered
    assert _placed_texts(text, located) == [p.strip() for p in pieces]
    ends = [b for _, b in located.spans]
    assert [a for a, _ in located.spans] == sorted(a for a, _ in located.spans)
    assert ends == sorted(ends)


@pytest.mark.parametrize(
    "text,size",
    [("Net 30, Gross 40. Net  30", 9), ("Net 30, Net  30", 6), ("Net  30 and Net 30", 6)],
)
def test_a_whitespace_changed_chunk_is_placed_where_its_words_continue_not_at_a_verbatim_copy(
    text, size
):
    from langchain_text_splitters import CharacterTextSplitter

    # CharacterTextSplitter(" ") joins words with one space: "Net  30" comes back "Net 30"
    pieces = CharacterTextSplitter(separator=" ", chunk_size=size, chunk_overlap=0).split_text(text)
    located = locate_pieces(text, pieces)
    assert not located.missing and not located.unordered
    assert [t.split() for t in _placed_texts(text, located)] == [p.split() for p in pieces]
    assert [b for _, b in located.spans][-1] == len(text)


def test_a_chunk_returned_twice_in_a_row_is_placed_twice_where_it_is():
    # LangChain's CharacterTextSplitter with overlap can return one window twice
    text = '}\n  { {\n\n\ndata\n  ok\n  \n "id":  \n\n\n is  "id": \n'
    pieces = [
        "}\n { {\n\n\ndata",
        "{\n\n\ndata\n ok",
        'ok\n \n "id":',
        '"id": \n\n\n is',
        'is "id":',
        'is "id":',
    ]
    located = locate_pieces(text, pieces)
    assert not located.unordered and located.spans[-1] == located.spans[-2]


@pytest.mark.parametrize("size,overlap", [(5, 4), (8, 7), (32, 31)])
def test_token_windows_that_differ_only_in_cut_characters_share_a_place(size, overlap):
    from langchain_text_splitters import TokenTextSplitter

    text = (
        "Kestrel Labs Pte.\u2003Ltd.\u2003uses the SGD column. 東京\u3000大阪\u3000名古屋 🎉 "
        "Prix\u202f: 10\u202f€ par mois."
    ) * 5
    pieces = TokenTextSplitter(
        encoding_name="cl100k_base", chunk_size=size, chunk_overlap=overlap
    ).split_text(text)
    located = locate_pieces(text, pieces)
    assert not located.missing and not located.unordered
    assert len(located.spans) == len([p for p in pieces if p.strip()])
    for (a, b), piece in zip(located.spans, [p for p in pieces if p.strip()]):
        _assert_whole_characters(text, a, b, piece)


@pytest.mark.parametrize(
    "text,piece,span",
    [
        ("東京\u3000大阪", "東京\ufffd", (0, 2)),  # the cut character is a space: nothing to take
        ("大阪\u3000名古屋", "\ufffd名古屋", (3, 6)),
        (
            "Prix\u202f: 10\u202f€ par",
            "10\u202f\ufffd",
            (7, 11),
        ),  # the cut character is the euro sign
    ],
)
def test_a_cut_character_is_the_one_next_to_the_text(text, piece, span):
    assert locate_pieces(text, [piece]).spans == (span,)


def test_a_document_that_holds_replacement_characters_itself_is_matched_as_it_is():
    assert locate_pieces("bad \ufffd\ufffd end", ["bad \ufffd\ufffd"]).spans == ((0, 6),)
    located = locate_pieces(
        "Caf\ufffd\ufffd au lait", ["Caf\ufffd\ufffd au", "\ufffd\ufffd au lait"]
    )
    assert located.spans == ((0, 8), (3, 13))
    text = "\ufffd  X  \ufffd"
    located = locate_pieces(text, [text, "\ufffd X \ufffd"])  # its words, whitespace changed
    assert located.spans == ((0, 7), (0, 7)) and located.loose == 1


def test_a_piece_of_nothing_but_a_cut_character_is_skipped_not_missing():
    from langchain_text_splitters import TokenTextSplitter

    # the last token window holds only the second half of the flamingo
    text = (
        "Thanks everyone for joining the offsite planning call today, see you all next "
        "week at the venue\U0001f9a9"
    )
    pieces = TokenTextSplitter(
        encoding_name="cl100k_base", chunk_size=10, chunk_overlap=0
    ).split_text(text)
    assert pieces[-1].strip("\ufffd") == ""
    located = locate_pieces(text, pieces)
    assert not located.missing and not located.unordered
    assert len(located.spans) == len(pieces) - 1 and located.spans[-1][1] == len(text)
    assert locate_pieces("x \ufffd\ufffd y", ["\ufffd\ufffd"]) == locate_pieces("x", [])


def test_the_tail_of_the_previous_chunk_stays_there_when_the_next_chunk_needs_it():
    located = locate_pieces("ok sat  sat sat", ["ok sat", "sat", "sat  sat"])
    assert located.spans == ((0, 6), (3, 6), (3, 11)) and located.loose == 0


def test_the_text_as_returned_is_preferred_to_the_same_words_with_other_whitespace():
    located = locate_pieces("a\na a", ["a\na", "a a"])
    assert located.spans == ((0, 3), (2, 5)) and located.loose == 0


def test_a_splitter_that_rewrites_everything_is_reported_without_scanning_for_each_chunk():
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    text = " ".join(f"word{i % 5000} and more text" for i in range(60000))
    pieces = [p.upper() for p in RecursiveCharacterTextSplitter(chunk_size=300).split_text(text)]
    located = locate_pieces(text, pieces)
    assert len(located.missing) == len(pieces) and not located.spans


def test_the_whitespace_set_is_pythons():
    import sys

    from sweep.chunking.locate import WHITESPACE

    assert set(WHITESPACE) == {chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()}


def test_where_the_splitter_says_a_chunk_starts_settles_a_repeat_when_the_chunk_is_there():
    text = "## 6. Client entertainment\n\nClient entertainment means meals."
    pieces = [
        "## 6. Client entertainment\n\n",
        "Client entertainment\n\n",
        "Client entertainment means meals.",
    ]
    assert locate_pieces(text, pieces).spans[1] == (28, 48)  # ambiguous: the later copy
    assert locate_pieces(text, pieces, [0, 6, 28]).spans == ((0, 26), (6, 26), (28, 61))
    # a start where the chunk is not, or one that breaks the order, is not taken
    assert locate_pieces(text, pieces, [0, 7, 28]).spans[1] == (28, 48)
    assert locate_pieces(text, pieces, [0, 6, 0]).spans == ((0, 26), (6, 26), (28, 61))


def test_chonkies_own_offsets_are_sweeps_on_a_document_with_repeated_headings():
    from pathlib import Path

    from chonkie import SentenceChunker

    from paths import ROOT
    from sweep.chunking.frameworks import read_chunks
    from sweep.core.textspans import strip_span

    text = (
        Path(ROOT) / "corpora" / "kestrel" / "docs" / "people" / "expense-reimbursement-policy.md"
    ).read_text(encoding="utf-8")
    chunks = SentenceChunker(chunk_size=128, chunk_overlap=32).chunk(text)
    located = locate_pieces(text, *read_chunks(chunks, "chonkie"))
    assert list(located.spans) == [strip_span(text, c.start_index, c.end_index) for c in chunks]
