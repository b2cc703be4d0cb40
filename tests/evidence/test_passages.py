"""Passages (``sweep.core.text.passages``): exact slices, in order, covering the text but headings."""

from __future__ import annotations

import re
from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from sweep.core.text.headings import parse_headings
from sweep.core.text.passages import MAX_WORDS, MIN_WORDS, passages_of, sentences_of, split_passages
from sweep.core.types import Document

MANUAL = """# AQ-200 Manual

The AQ-200 sensor measures air quality indoors and reports it every minute to the app.

## Maintenance
Steps:

Clean the filter weekly with a soft brush. Replace the filter every year, or when the sensor
reports a clogged filter. Never wash the sensor head with water: it damages the optics.

## Warranty

The warranty lasts two years from the date of purchase.
"""


def check(text: str) -> tuple[tuple[int, int], ...]:
    """The invariants of every split, and the spans."""
    spans = split_passages(text)
    for start, end in spans:
        piece = text[start:end]
        assert piece.strip("\ufeff \t\r\n\f\v") == piece and piece, (start, end)
    assert all(a[1] <= b[0] for a, b in pairwise(spans)), "in order, no overlap"
    heading_lines = set()
    for h in parse_headings(text):  # its lines: one, or two for a setext heading
        heading_lines.update(range(h.start, h.body_start))
    covered = set().union(*(range(s, e) for s, e in spans)) if spans else set()
    for i, ch in enumerate(text):
        if i in heading_lines:
            assert i not in covered, f"heading character {i} in a passage"
        elif not (ch.isspace() or ch == "\ufeff"):
            assert i in covered, f"character {i} {ch!r} in no passage"
    return spans


def test_passages_are_exact_slices_under_their_headings():
    passages = passages_of(Document("manual.md", MANUAL, title="AQ-200 Manual"))
    check(MANUAL)
    for p in passages:
        assert MANUAL[p.start : p.end] == p.text and p.text.strip()
        assert not p.text.lstrip().startswith("#")
    assert [p.index for p in passages] == list(range(len(passages)))
    texts = [p.text for p in passages]
    # the short "Steps:" joins the paragraph after it; never the heading before it
    assert texts[1].startswith("Steps:\n\nClean the filter weekly")
    assert texts[2] == "The warranty lasts two years from the date of purchase."
    assert passages[2].headings == ("AQ-200 Manual", "Warranty")
    assert passages[2].indexed_text == "AQ-200 Manual\nWarranty\n" + texts[2]


def test_a_title_that_is_no_heading_is_indexed_with_every_passage():
    passages = passages_of(Document("notes.txt", "Pay rent on the first.", title="notes"))
    assert passages[0].headings == ("notes",)


def test_a_short_block_never_joins_across_a_heading():
    text = "Intro line.\n\n# Next\n\nA body paragraph."
    assert [text[s:e] for s, e in check(text)] == ["Intro line.", "A body paragraph."]


def test_a_short_last_block_joins_the_passage_before_it():
    body = " ".join(["word"] * 30)
    text = f"{body}\n\nSee also: the FAQ."
    assert [text[s:e] for s, e in check(text)] == [text]


def test_a_lead_in_ending_with_a_colon_joins_what_it_introduces():
    lead = (
        "Payment fraud most often starts with a convincing email asking us to update a "
        "supplier's bank account, so every change is checked twice. Therefore:"
    )
    items = "- Changes are accepted only through the supplier portal.\n- Never by email."
    text = (
        f"{lead}\n\n{items}\n\nAn unrelated paragraph that is long enough to stand on its own "
        "as a passage of evidence, with more than twenty words in it, for sure."
    )
    pieces = [text[s:e] for s, e in check(text)]
    assert pieces[0] == f"{lead}\n\n{items}" and len(pieces) == 2
    long_list = "\n".join(f"- step {i} of the procedure is done." for i in range(30))  # 240 words
    text = f"Steps:\n\n{long_list}"
    pieces = [text[s:e] for s, e in check(text)]
    assert pieces[0].startswith("Steps:\n\n- step 0") and len(pieces) == 4


def test_a_long_paragraph_is_cut_at_sentence_ends_into_even_windows():
    sentences = [f"Sentence {i} has exactly six words." for i in range(30)]  # 180 words
    text = " ".join(sentences)
    spans = check(text)
    words = [len(text[s:e].split()) for s, e in spans]
    assert len(spans) == 3 and max(words) <= MAX_WORDS and min(words) >= 50
    assert all(text[s:e].endswith(".") for s, e in spans)


def test_a_sentence_longer_than_a_window_is_cut_between_words():
    text = " ".join(f"w{i}" for i in range(200))
    spans = check(text)
    assert all(len(text[s:e].split()) <= MAX_WORDS for s, e in spans) and len(spans) == 3


def test_a_list_of_one_line_items_is_kept_together_until_it_has_enough_words():
    text = "\n\n".join(f"- item {i} here" for i in range(12))  # 4 words each
    spans = check(text)
    assert all(len(text[s:e].split()) >= MIN_WORDS for s, e in spans[:-1])


def test_crlf_a_byte_order_mark_and_fenced_code():
    text = (
        "\ufeff# Title\r\n\r\nFirst paragraph.\r\n\r\n```\r\n# a comment, not a heading\r\n```\r\n"
    )
    pieces = [text[s:e] for s, e in check(text)]
    assert pieces == ["First paragraph.\r\n\r\n```\r\n# a comment, not a heading\r\n```"]


def test_a_text_of_headings_and_blanks_has_no_passages():
    assert check("# One\n\n## Two\n\n   \n") == ()
    assert check("") == ()


_ALPHABET = st.sampled_from(
    [
        "a",
        "b",
        "Word",
        " ",
        "  ",
        "\n",
        "\n\n",
        "\r\n",
        "\t",
        ".",
        "!",
        "# ",
        "## ",
        "#",
        "```",
        "~~~",
        "-",
        "\ufeff",
        "é",
        "\u00a0",
        "\r",
        "\u2028",
        "\x0c",
        "\x85",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_ALPHABET, max_size=120).map("".join))
def test_any_text_splits_into_ordered_exact_slices_covering_it(text):
    check(text)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.sampled_from(["alpha", "beta.", "gamma!", " ", "\n", "\n\n", "## H\n"]),
        min_size=100,
        max_size=600,
    ).map("".join)
)
def test_long_texts_keep_windows_within_the_limit(text):
    for s, e in check(text):
        assert len(re.findall(r"[^\s\ufeff]+", text[s:e])) <= MAX_WORDS


def test_sentences_end_at_japanese_and_russian_stops_and_stay_exact_slices():
    text = (
        "# 保証\n\n保証期間は購入日から二年間です。ファンも対象です！交換は無料ですか？はい。\n\n"
        "# Гарантия\n\nГарантия действует два года. Вентилятор тоже покрыт! Замена бесплатна? "
        "Да, т.е. без доплаты.\n"
    )
    japanese, russian = passages_of(Document("doc.md", text))
    assert [s.text for s in sentences_of(japanese, text)] == [
        "保証期間は購入日から二年間です。",
        "ファンも対象です！",
        "交換は無料ですか？",
        "はい。",
    ]
    # "т.е. без": a stop before a lowercase letter is an abbreviation, not a sentence end.
    assert [s.text for s in sentences_of(russian, text)] == [
        "Гарантия действует два года.",
        "Вентилятор тоже покрыт!",
        "Замена бесплатна?",
        "Да, т.е. без доплаты.",
    ]
    for s in (*sentences_of(japanese, text), *sentences_of(russian, text)):
        assert text[s.start : s.end] == s.text and s.headings in (("保証",), ("Гарантия",))


def test_a_passage_of_one_sentence_is_its_own_sentence():
    passage = passages_of(Document("faq.md", MANUAL))[-1]
    assert sentences_of(passage, MANUAL) == (passage,)


def _words(n: int, word: str) -> str:
    return " ".join([word] * n)


def test_long_japanese_is_windowed_at_its_full_stops():
    # Japanese written with spaces between its words (the only way it has more than
    # MAX_WORDS words): 。 is a sentence end, so the windows are the two sentences, not two
    # halves of 45 words each cut inside the second sentence.
    first = _words(29, "フィルター") + " 掃除します。"
    text = f"{first} {_words(59, '交換')} です。"
    assert [text[s:e] for s, e in check(text)] == [first, text[len(first) + 1 :]]


def test_long_russian_is_windowed_at_whole_sentences():
    # "т. е." (an abbreviation: a lowercase letter follows) ends no window ...
    sentence = f"{_words(55, 'слово')} т. е. {_words(20, 'слово')} конец."
    text = f"{sentence} Дальше {_words(30, 'слово')} всё."
    assert next(text[s:e] for s, e in check(text)) == sentence
    # ... and a sentence closed by a guillemet ends where the guillemet does.
    quoted = f"{_words(45, 'слово')} сказал: «Замените фильтр.»"
    text = f"{quoted} Потом {_words(40, 'слово')} конец."
    assert [text[s:e] for s, e in check(text)] == [quoted, text[len(quoted) + 1 :]]


def test_an_english_abbreviation_ends_no_window():
    sentence = f"{_words(55, 'word')} e.g. {_words(20, 'word')} end."
    text = f"{sentence} Then {_words(30, 'word')} done."
    assert [text[s:e] for s, e in check(text)] == [sentence, text[len(sentence) + 1 :]]


def test_setext_and_untitled_headings_end_passages_and_are_no_text():
    text = (
        "Intro\n=====\n\nBody text here.\n\nA line above a rule\n---\n\nMore text.\n\n####\n\nLast."
    )
    passages = passages_of(Document("d.md", text))
    assert [p.text for p in passages] == ["Body text here.", "More text.", "Last."]
    # (an untitled heading ends a section but adds no title to the path)
    assert [p.headings for p in passages] == [
        ("Intro",),
        ("Intro", "A line above a rule"),
        ("Intro", "A line above a rule"),
    ]
