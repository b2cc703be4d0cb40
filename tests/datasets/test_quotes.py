"""Placing a quoted passage in a document's text: exact, normalised, fuzzy, and failing well."""

from __future__ import annotations

import json
import re
import unicodedata
from itertools import accumulate

import pytest
import regex
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from paths import ROOT
from sweep.datasets.quotes import (
    NotLocated,
    QuoteIndex,
    QuoteLocation,
    describe_difference,
    locate,
    normalise,
)

KESTREL = ROOT / "src" / "sweep" / "corpora" / "kestrel"

POLICY = (
    "Badges\r\n\r\n"
    "A replacement photo badge is printed within one working day. The first replacement\n"
    "is free; each further replacement in the same calendar year costs €15, deduc-\n"
    "ted from the next payroll. Lost laptops are reported to IT within 24 hours.\n"
)


def _span(text: str, found: QuoteLocation | NotLocated) -> str:
    assert isinstance(found, QuoteLocation), found.message()
    return text[found.start : found.end]


def check_span(text: str, found: QuoteLocation | NotLocated) -> None:
    """The invariants of every span: inside the text, not empty, whole grapheme clusters,
    no space at either end (but for one in a cluster: a space that carries a mark)."""
    assert isinstance(found, QuoteLocation), found.message()
    assert 0 <= found.start < found.end <= len(text)
    bounds = cluster_boundaries(text)
    assert {found.start, found.end} <= bounds
    span = text[found.start : found.end]
    lead, trail = len(span) - len(span.lstrip()), len(span) - len(span.rstrip())
    assert lead == 0 or found.start + lead not in bounds
    assert trail == 0 or found.end - trail not in bounds


def cluster_boundaries(text: str) -> set[int]:
    """Where the grapheme clusters of ``text`` begin and end, by the regex module's ``\\X``:
    an implementation of UAX #29 other than the one under test."""
    return set(accumulate(map(len, regex.findall(r"\X", text)), initial=0))


# regex's \X joins a virama to a following consonant after any letter (UAX #29 rule GB9c
# asks for a consonant before it): texts with one are left out where \X is the oracle
_LINKER = regex.compile(r"\p{InCB=Linker}")


def quoted_strings(message: str) -> list[str]:
    """Every string a message shows in double quotes, decoded."""
    return [json.loads(m) for m in re.findall(r'"(?:[^"\\]|\\.)*"', message)]


# --- exact ------------------------------------------------------------------------------


def test_an_exact_quote_gives_its_offsets():
    quote = "The first replacement"
    found = locate(POLICY, quote)
    assert found == QuoteLocation(
        POLICY.index(quote), POLICY.index(quote) + len(quote), "exact", 1.0
    )
    assert found.message() == "exact" and found


def test_the_quotes_surrounding_whitespace_is_ignored_and_the_span_is_trimmed():
    found = locate(POLICY, "  \n The first replacement\t ")
    assert _span(POLICY, found) == "The first replacement" and found.how == "exact"


def test_one_exact_match_wins_over_more_normalised_ones():
    text = "Cost: 15 EUR. cost: 15 eur."
    found = locate(text, "cost: 15 eur")
    assert (found.start, found.how) == (14, "exact")


# --- each normalisation alone ----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "quote", "span", "needed"),
    [
        # NFKC: a ligature and full-width forms
        ("the ﬁrst one", "the first one", "the ﬁrst one", ("unicode",)),
        ("code ＡＢ１２ here", "code AB12 here", "code ＡＢ１２ here", ("unicode",)),
        ("wait… what", "wait... what", "wait… what", ("unicode",)),
        # a combining accent in the text, the composed letter in the quote
        ("cafe\u0301 au lait", "café au lait", "cafe\u0301 au lait", ("unicode",)),
        # whitespace: CRLF, NBSP, tabs, runs
        ("one\r\ntwo  three", "one two three", "one\r\ntwo  three", ("whitespace",)),
        (
            "costs €15\u00a0per\tyear",
            "costs €15 per year",
            "costs €15\u00a0per\tyear",
            ("whitespace",),
        ),
        # a word hyphenated at a line end, and the other way round
        ("an exam-\nple here", "an example here", "an exam-\nple here", ("hyphenation",)),
        ("an example here", "an exam-\nple here", "an example here", ("hyphenation",)),
        ("a well-\n  known fact", "a well-known fact", "a well-\n  known fact", ("hyphenation",)),
        # curly quotes and apostrophes, dashes
        ("it’s “free”", 'it\'s "free"', "it’s “free”", ("quotes/dashes",)),
        ("pages 10–20 only", "pages 10-20 only", "pages 10–20 only", ("quotes/dashes",)),
        ("yes — no", "yes - no", "yes — no", ("quotes/dashes",)),
        # case
        ("The First Replacement", "the first replacement", "The First Replacement", ("case",)),
        ("Straße", "STRASSE", "Straße", ("case",)),
    ],
)
def test_each_normalisation_alone(text, quote, span, needed):
    found = locate(f"before {text} after", quote)
    assert found.how == "normalised"
    assert _span(f"before {text} after", found) == span
    assert found.normalisations == needed
    assert found.message() == f"normalised ({', '.join(needed)})"


def test_normalisations_combined():
    quote = (
        "THE FIRST REPLACEMENT is free; each further replacement in the same calendar "
        "year costs €15, deducted"
    )
    found = locate(POLICY, quote)
    span = _span(POLICY, found)
    assert span.startswith("The first replacement\nis free") and span.endswith("deduc-\nted")
    assert found.normalisations == ("whitespace", "hyphenation", "case")


def test_a_normalised_span_covers_exactly_the_characters_that_matched():
    text = "x ﬁne\u00a0\u00a0day y"
    # "fi" folds from one ligature: the span is that character, no more
    assert _span(text, locate(text, "fi")) == "ﬁ"
    # "ne day" ends before the space after "day", and starts inside the ligature's word
    assert _span(text, locate(text, "NE DAY")) == "ne\u00a0\u00a0day"


def test_invisible_format_characters_are_ignored():
    text = "a soft\u00adhy\u200bphen"
    assert _span(text, locate(text, "softhyphen")) == "soft\u00adhy\u200bphen"


# --- case folding and grapheme clusters (issue 41, item 13) -----------------------------


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        # the dotted capital I folds to "i" and a combining dot in Unicode's rules
        ("İstanbul office", "istanbul office"),
        ("İstanbul office", "ISTANBUL OFFICE"),
        ("ISTANBUL OFFICE", "İstanbul office"),
        ("I\u0307stanbul office", "istanbul office"),  # the same "İ", decomposed
        ("i\u0307stanbul office", "ISTANBUL OFFICE"),  # "İ".lower()
        # the dotless i's capital is I
        ("KIRIK cam", "kırık cam"),
        ("kırık cam", "KIRIK CAM"),
        # length-changing folds
        ("Straße", "STRASSE"),
        ("the ﬁrst one", "THE FIRST ONE"),
    ],
)
def test_case_folds_by_unicode_rules_with_the_turkish_i(text, quote):
    found = locate(f"before {text} after", quote)
    assert found.how == "normalised", found.message()
    assert _span(f"before {text} after", found) == text


@pytest.mark.parametrize(
    ("text", "quote", "span"),
    [
        # an emoji with and without its presentation selector: the same picture
        ("I ❤\ufe0f you", "I ❤ you", "I ❤\ufe0f you"),
        ("I ❤ you", "I ❤\ufe0f you", "I ❤ you"),
        # a kana and a combining voicing mark compose, as do half-width forms
        ("か\u3099ga", "が", "か\u3099"),
        ("ｶﾞ", "ガ", "ｶﾞ"),
    ],
)
def test_a_cluster_folds_as_a_whole(text, quote, span):
    found = locate(text, quote)
    assert found.how == "normalised", found.message()
    assert _span(text, found) == span


@pytest.mark.parametrize(
    ("text", "quote", "closest"),
    [
        # NFD: "e" and a combining acute are one "é"
        ("Cafe\u0301 au lait", "Cafe", "Cafe\u0301"),
        # one flag of a pair, and the second half of one with the first of the next
        ("Flags: 🇩🇪🇫🇷 here", "🇪🇫", "🇩🇪🇫🇷"),
        # part of an emoji ZWJ sequence
        ("👨\u200d👩\u200d👧 family", "👨\u200d👩", "👨\u200d👩\u200d👧"),
        # Hangul jamo: 하 is the start of 한
        ("\u1112\u1161\u11ab is han", "\u1112\u1161", "\u1112\u1161\u11ab"),
        # the first "s" of the "ss" that "ß" folds to
        ("Straße", "stras", "Straße"),
    ],
)
def test_a_match_that_would_cut_a_grapheme_cluster_is_no_match(text, quote, closest):
    found = locate(text, quote)
    assert isinstance(found, NotLocated) and found.reason == "not found", found
    # the closest passage is whole clusters of the text too
    assert found.closest == closest
    assert {found.closest_start, found.closest_start + len(closest)} <= cluster_boundaries(text)


@pytest.mark.parametrize(
    ("quote", "span"),
    [
        ("We sey 🇩🇪🇫", "We say 🇩🇪🇫🇷"),
        ("and 👨\u200d👩 twise", "and 👨\u200d👩\u200d👧"),
        ("We sey 🇩🇪🇫🇷 and 👨", "We say 🇩🇪🇫🇷 and 👨\u200d👩\u200d👧"),
    ],
)
def test_a_fuzzy_span_is_widened_to_whole_clusters(quote, span):
    text = "We say 🇩🇪🇫🇷 and 👨\u200d👩\u200d👧 twice."
    found = locate(text, quote, fuzzy=0.5)
    assert found.how == "fuzzy"
    assert _span(text, found) == span
    check_span(text, found)


@pytest.mark.parametrize(
    ("text", "quote", "differs"),
    [
        # issue 41: "İ" folded to two tokens and was shown twice, "İ İ stanbul"
        ("İstanbul office", "Istanbul ofice", 'a word: quote has "ofice", text has "office"'),
        # "½" folds to "1⁄2", three tokens: shown once, as written
        (
            "the dose is ½ a tablet",
            "the dose is 1/3 a tablet",
            'words: quote has "1/3", text has "½"',
        ),
        # the words as written, not re-spaced: "€ 15" and a line break stay as they are
        ("costs €15 a\nyear", "costs €15", 'only in the text: "a\\nyear"'),
        ("costs €15 per year", "costs 15 per year", 'only in the text: "€"'),
    ],
)
def test_the_difference_quotes_the_texts_as_written(text, quote, differs):
    assert describe_difference(quote, text) == differs
    for shown in quoted_strings(differs):
        assert shown in text or shown in quote


def test_a_message_shows_the_text_verbatim_not_its_folded_form():
    found = locate("Address: İstanbul office, 3rd floor", "istanbul ofice 3rd floor")
    assert isinstance(found, NotLocated)
    assert found.closest == "İstanbul office, 3rd floor"
    message = found.message()
    assert "İ İ" not in message and "i\u0307" not in message
    for shown in quoted_strings(message):
        assert shown in "Address: İstanbul office, 3rd floor" or shown in "istanbul ofice 3rd floor"


def test_any_character_folds_like_its_upper_and_lower_case_and_its_normal_forms():
    # every assigned code point: a case change or a Unicode normal form of a character
    # never makes it fold differently (title case aside: Greek "ᾷ" titles oddly)
    changes = (
        str.upper,
        str.lower,
        str.casefold,
        lambda c: unicodedata.normalize("NFKC", c),
        lambda c: unicodedata.normalize("NFD", c),
    )
    differ = [
        (char, changed)
        for char in map(chr, range(0x110000))
        if unicodedata.category(char) not in ("Cn", "Co", "Cs")
        for changed in {change(char) for change in changes} - {char}
        if normalise(changed) != normalise(char)
    ]
    assert differ == []


# --- several matches -------------------------------------------------------------------


TWICE = (
    "Lisbon office: the badge costs 15 euros. "
    "Denver office: parking is free. The badge costs 15 euros."
)


def test_ambiguous_without_a_hint():
    found = locate(TWICE, "badge costs 15 euros")
    assert isinstance(found, NotLocated) and not found
    assert (found.reason, found.occurrences, found.how) == ("ambiguous", 2, "exact")
    assert found.positions == (19, 77)
    assert found.closest == "badge costs 15 euros"
    assert "found 2 times (exact) at offsets 19, 77" in found.message()
    assert "occurrence=1..2" in found.message()


def test_ambiguous_in_the_normalised_step():
    found = locate(TWICE, "THE BADGE costs 15 euros")
    assert (found.reason, found.how, found.positions) == ("ambiguous", "normalised", (15, 73))


def test_an_occurrence_picks_one_of_the_matches():
    found = locate(TWICE, "badge costs 15 euros", occurrence=2)
    assert (found.start, found.how, found.occurrences) == (77, "exact", 2)
    found = locate(TWICE, "THE BADGE costs 15 euros", occurrence=2)
    assert (found.start, found.how) == (73, "normalised")
    assert _span(TWICE, found) == "The badge costs 15 euros"


def test_an_occurrence_counts_in_the_step_that_has_enough_matches():
    # exact finds "badge costs" twice; asking for a third hands over to no one: too few
    found = locate(TWICE, "badge costs", occurrence=3)
    assert (found.reason, found.occurrences, found.asked) == ("occurrence", 2, 3)
    assert found.message() == "occurrence 3 asked, quote found 2 times (exact)"
    # exact finds "The badge" once; normalised finds it twice, so occurrence 2 is the second
    assert locate(TWICE, "The badge", occurrence=2).start == 73


def test_a_context_picks_the_match_it_is_near():
    assert locate(TWICE, "badge costs 15 euros", context="parking is free").start == 77
    assert locate(TWICE, "badge costs 15 euros", context="LISBON office").start == 19


def test_a_context_near_none_of_the_matches_is_still_ambiguous():
    found = locate(TWICE, "badge costs 15 euros", context="Singapore")
    assert found.reason == "ambiguous"
    assert 'context "Singapore" does not single one out' in found.message()


def test_a_context_near_both_matches_picks_the_nearer_one():
    text = "target one. filler filler marker. target one."
    assert locate(text, "target one", context="marker").start == text.rindex("target one")
    assert locate(text, "target one", context="filler").start == 0


def test_a_context_too_far_away_does_not_count():
    text = "target one. " + "x" * 250 + " marker " + "y" * 250 + " target one."
    assert locate(text, "target one", context="marker").reason == "ambiguous"
    text = "target one. " + "x" * 250 + " marker target one."
    assert locate(text, "target one", context="marker").start == text.rindex("target one")


def test_a_bad_occurrence_or_threshold_is_a_value_error():
    with pytest.raises(ValueError, match="occurrence must be an integer >= 1"):
        locate(TWICE, "badge", occurrence=0)
    with pytest.raises(ValueError, match=r"fuzzy must be a threshold in \(0, 1\]"):
        locate(TWICE, "badge", fuzzy=1.5)


# --- fuzzy -----------------------------------------------------------------------------


TYPO = "each further replacment in the same calendar year costs"


def test_fuzzy_is_off_by_default():
    found = locate(POLICY, TYPO)
    assert found.reason == "not found"


def test_fuzzy_above_the_threshold_locates_the_passage():
    found = locate(POLICY, TYPO, fuzzy=0.9)
    assert found.how == "fuzzy" and 0.9 <= found.score < 1
    assert _span(POLICY, found) == "each further replacement in the same calendar year costs"
    assert re.fullmatch(r"fuzzy 0\.9\d", found.message())


def test_fuzzy_below_the_threshold_is_not_located():
    found = locate(POLICY, "each further replacement in the same fiscal year costs", fuzzy=0.95)
    assert found.reason == "not found" and found.similarity < 0.95
    assert found.closest == "each further replacement in the same calendar year costs"


def test_a_typo_in_the_first_word_keeps_that_word_in_the_span():
    found = locate(POLICY, "eahc further replacement in the same calendar year", fuzzy=0.9)
    assert _span(POLICY, found) == "each further replacement in the same calendar year"


def test_fuzzy_works_on_the_normalised_text():
    found = locate(
        POLICY, "EACH FURTHER REPLACMENT in the same calendar year costs €15, deducted", fuzzy=0.9
    )
    assert _span(POLICY, found).endswith("€15, deduc-\nted")


# --- not found -------------------------------------------------------------------------


def test_not_found_shows_the_closest_passage_verbatim_and_the_number_that_differs():
    quote = "each further replacement in the same calendar year costs €25, deducted"
    found = locate(POLICY, quote)
    assert found.reason == "not found"
    assert found.closest == POLICY[found.closest_start : found.closest_start + len(found.closest)]
    assert found.closest == (
        "each further replacement in the same calendar year costs €15, deduc-\nted"
    )
    assert found.differs == 'a number: quote has "25", text has "15"'
    message = found.message()
    assert "\n" not in message
    assert message.startswith("quote not found; closest passage (similarity 0.9")
    assert message.endswith(
        ': "each further replacement in the same calendar year costs €15, deduc-\\nted"'
    )
    # the quoted passage in the message reads back as the passage itself
    assert json.loads(message[message.index(': "') + 2 :]) == found.closest


def test_not_found_names_the_word_that_differs():
    found = locate(POLICY, "Lost notebooks are reported to IT within 24 hours.")
    assert found.closest == "Lost laptops are reported to IT within 24 hours."
    assert found.differs == 'a word: quote has "notebooks", text has "laptops"'


def test_not_found_with_several_words_changed_counts_them():
    found = locate(POLICY, "Lost phones are reported to HR within 24 hours.")
    assert found.closest == "Lost laptops are reported to IT within 24 hours."
    assert found.differs == "2 words differ"


def test_a_quote_longer_than_the_document():
    found = locate("Short text.", "Short text. And a lot more that the document never had.")
    assert found.reason == "not found" and found.closest == "Short text."
    assert found.differs == "the quote is longer than any passage"


@pytest.mark.parametrize(
    ("quote", "passage", "phrase"),
    [
        ("note book", "notebook", "whitespace only"),
        ("The Badge", "the badge", "case only"),
        ("The Badge", "the  badge", "whitespace and case only"),
        ("costs €15", "costs €15 a year", 'only in the text: "a year"'),
        ("costs €15 a year", "costs €15", 'only in the quote: "a year"'),
        ("costs €15; free", "costs €15, free", 'a character: quote has ";", text has ","'),
    ],
)
def test_describe_difference(quote, passage, phrase):
    assert describe_difference(quote, passage) == phrase


def test_an_empty_quote():
    for quote in ("", "  \n\t"):
        found = locate(POLICY, quote)
        assert found.reason == "empty" and found.message() == "the quote is empty"


def test_an_empty_document():
    found = locate("", "anything")
    assert (found.reason, found.closest, found.closest_start) == ("not found", "", 0)
    assert found.message() == "quote not found; the document is empty"
    assert locate(" \n ", "anything", fuzzy=0.5).closest == ""


def test_one_index_places_many_quotes():
    index = QuoteIndex(POLICY)
    assert index.locate("The first replacement").how == "exact"
    assert index.locate("THE FIRST REPLACEMENT").how == "normalised"
    assert index.locate(TYPO, fuzzy=0.9).how == "fuzzy"


# --- invariants, for any text ----------------------------------------------------------


@st.composite
def text_and_cut(draw, alphabet):
    text = draw(st.text(alphabet=alphabet, min_size=1, max_size=120))
    i = draw(st.integers(0, len(text) - 1))
    j = draw(st.integers(i + 1, len(text)))
    return text, i, j


@st.composite
def text_and_slice(draw, alphabet):
    text, i, j = draw(text_and_cut(alphabet))
    return text, text[i:j]


ANY = st.characters(codec="utf-8", exclude_categories=("Cs",))


@settings(max_examples=300, deadline=None)
@given(text_and_slice(st.one_of(st.sampled_from("ab \n"), ANY)))
def test_an_exact_slice_is_found_at_its_first_occurrence(case):
    text, quote = case
    assume(not _LINKER.search(text))
    wanted = quote.strip()
    if not wanted:
        assert locate(text, quote).reason == "empty"
        return
    found = locate(text, quote, occurrence=1)
    # only occurrences that cut no grapheme cluster are exact ones
    bounds = cluster_boundaries(text)
    starts = [
        s
        for s in range(len(text))
        if text.startswith(wanted, s) and s in bounds and s + len(wanted) in bounds
    ]
    if not starts:
        assert found.how != "exact"
        if found:
            check_span(text, found)
        return
    assert found.how == "exact"
    assert found.start == starts[0] and _span(text, found) == wanted
    check_span(text, found)
    assert (
        (locate(text, quote) == found)
        if len(starts) == 1
        else (locate(text, quote).reason == "ambiguous")
    )


# Letters (with a ligature, ß and a full-width digit), whitespace of several kinds,
# straight and curly quotes, punctuation. No hyphens or combining marks: a slice that
# starts between a letter and a hyphen, or between a letter and its accent, is a
# different string once folded (the documented limit of folding a quote on its own).
FOLDABLE = "abcXYZßﬁ２ \n\t\u00a0\r'\"‘’“”.,;"
STRAIGHT_TO_CURLY = {"'": "’", '"': "“", "‘": "'", "’": "'", "“": '"', "”": '"'}


@st.composite
def disguised(draw, quote: str) -> str:
    """``quote`` with its whitespace runs, letter case and quote marks changed at random."""
    pieces = re.findall(r"\s+|\S", quote)
    out = []
    for piece in pieces:
        if piece.isspace():
            out.append(draw(st.sampled_from([" ", "\n", "\r\n", "\t ", "\u00a0", "  "])))
        elif draw(st.booleans()):
            out.append(STRAIGHT_TO_CURLY.get(piece, piece.swapcase()))
        else:
            out.append(piece)
    return "".join(out)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_a_disguised_slice_is_found_normalised(data):
    text, quote = data.draw(text_and_slice(st.sampled_from(FOLDABLE)))
    if not normalise(quote):
        return
    changed = data.draw(disguised(quote))
    found = locate(text, changed, occurrence=1)
    assert found.how in ("exact", "normalised"), found.message()
    check_span(text, found)
    assert normalise(text[found.start : found.end]) == normalise(changed)


@settings(max_examples=100, deadline=None)
@given(text_and_slice(st.sampled_from(FOLDABLE)), st.text(max_size=30))
def test_whatever_is_asked_the_answer_is_a_span_or_a_one_line_reason(case, quote):
    text, _ = case
    found = locate(text, quote, fuzzy=0.8)
    if isinstance(found, QuoteLocation):
        check_span(text, found)
        assert found.how != "fuzzy" or found.score >= 0.8
    else:
        assert "\n" not in found.message() and "\r" not in found.message()
        assert found.closest == text[found.closest_start : found.closest_start + len(found.closest)]


# Pieces that fold or cluster in unusual ways: Turkish i's, ß, a ligature, "½", an accent
# to combine with the letter before it (NFD), emoji with skin tones, presentation
# selectors and ZWJ sequences, regional indicators (flags), Hangul jamo and syllables,
# kana and a voicing mark, a Devanagari vowel sign; plus ASCII, spaces and line breaks.
TRICKY = [
    "a",
    "b",
    "I",
    "i",
    "İ",
    "ı",
    "ß",
    "S",
    "ﬁ",
    "½",
    "e",
    "\u0301",
    "\u0308",
    " ",
    " ",
    "\n",
    "\u00a0",
    "👍",
    "\U0001f3fd",
    "❤",
    "\ufe0f",
    "\u200d",
    "👨",
    "👩",
    "\U0001f1e9",
    "\U0001f1ea",
    "\U0001f1eb",
    "\u1112",
    "\u1161",
    "\u11ab",
    "한",
    "か",
    "\u3099",
    "\u0915",
    "\u093f",
    "’",
    ".",
]
CHANGES = {
    "as is": lambda q: q,
    "upper": str.upper,
    "lower": str.lower,
    "casefold": str.casefold,
    "NFKC": lambda q: unicodedata.normalize("NFKC", q),
    "NFD": lambda q: unicodedata.normalize("NFD", q),
    "NFC": lambda q: unicodedata.normalize("NFC", q),
}


@settings(max_examples=400, deadline=None)
@given(text_and_cut(st.sampled_from(TRICKY)), st.sampled_from(sorted(CHANGES)))
def test_a_changed_slice_is_found_on_whole_clusters_or_reported_verbatim(case, change):
    text, i, j = case
    piece = text[i:j]
    quote = CHANGES[change](piece)
    wanted = normalise(quote)
    assume(wanted)
    found = locate(text, quote, occurrence=1)
    bounds = cluster_boundaries(text)
    if isinstance(found, QuoteLocation):
        check_span(text, found)
        if found.how == "exact":
            assert text[found.start : found.end] == quote.strip()
        assert normalise(text[found.start : found.end]) == wanted
        return
    # a slice of whole clusters, however its case or form is changed, is always found
    assert not {i + len(piece) - len(piece.lstrip()), i + len(piece.rstrip())} <= bounds, (
        found.message()
    )
    assert found.reason == "not found"
    assert {found.closest_start, found.closest_start + len(found.closest)} <= bounds
    assert found.closest == text[found.closest_start : found.closest_start + len(found.closest)]
    message = found.message()
    assert "\n" not in message
    for shown in quoted_strings(message):
        assert shown in text or shown in quote.strip(), (shown, message)


@settings(max_examples=200, deadline=None)
@given(
    st.text(st.sampled_from(TRICKY), min_size=1, max_size=80),
    st.text(st.sampled_from(TRICKY), max_size=30),
)
def test_any_quote_gives_whole_clusters_and_a_verbatim_message(text, quote):
    found = locate(text, quote, fuzzy=0.5)
    if isinstance(found, QuoteLocation):
        check_span(text, found)
        return
    message = found.message()
    assert "\n" not in message
    if found.closest:
        end = found.closest_start + len(found.closest)
        assert found.closest == text[found.closest_start : end]
        assert {found.closest_start, end} <= cluster_boundaries(text)
    for shown in quoted_strings(message):
        assert shown in text or shown in quote, (shown, message)


# --- the bundled corpus ----------------------------------------------------------------


def test_every_kestrel_quote_is_found_exactly_at_its_offsets():
    indexes: dict[str, QuoteIndex] = {}
    for line in (KESTREL / "queries.jsonl").read_text(encoding="utf-8").splitlines():
        for item in json.loads(line).get("relevant", []):
            doc_id = item["doc_id"]
            if doc_id not in indexes:
                indexes[doc_id] = QuoteIndex((KESTREL / "docs" / doc_id).read_bytes().decode())
            found = indexes[doc_id].locate(item["quote"])
            assert (found.start, found.end, found.how) == (item["start"], item["end"], "exact")


# Text a reader garbled: trafilatura moved the <em> placeholders of Sphinx's :file: paths.
MOVED = (
    "The preferred interpreter is /usr/bin/python3 or /usr/bin/python3. if it requires Python 3.Y. "
    "Modules go to Y/usr/lib/python2., where Y is the minor version, and are byte-compiled by "
    "Y/dist-packagespy3compile at install time."
)


@pytest.mark.parametrize(
    ("quote", "reordered"),
    [
        (
            "The preferred interpreter is /usr/bin/python3 or /usr/bin/python3.Y if it requires Python 3.Y.",
            True,
        ),
        ("Modules go to /usr/lib/python2.Y/dist-packages, where Y is the minor version", True),
        ("byte-compiled by py3compile at install time", True),  # (a word glued to a moved one)
        ("Modules go to /usr/lib/python4.Y/dist-packages, where Y is the minor version", False),
        ("byte-compiled by pycompile at install time", False),
        ("it requires Python 3.9", False),
    ],
)
def test_a_quote_not_found_says_whether_its_words_are_there_in_another_order(quote, reordered):
    found = locate(MOVED, quote)
    assert not found and found.reordered is reordered
    assert ("every word of the quote, in another order" in found.message()) is reordered


def test_a_different_number_is_not_a_moved_one():
    text = "Each further replacement in the same calendar year costs €15. Badges are reissued since 2025."
    assert not locate(
        text, "each further replacement in the same calendar year costs €25"
    ).reordered


@pytest.mark.parametrize(
    ("quote", "reordered"),
    [
        ("Платёж проводится в пятницу, если счёт подтверждён.", True),
        ("ПЛАТЁЖ проводится в пятницу, если СЧЁТ подтверждён.", True),  # Ё folded as ё
        ("Платёж проводится в субботу, если счёт подтверждён.", False),
    ],
)
def test_a_russian_quote_whose_words_were_moved_is_told_so(quote, reordered):
    text = (
        "Отчёт сдаётся до пятницы. Платёж проводится в , если счёт подтверждён пятницу. "
        "Ёлка стоит в зале."
    )
    found = locate(text, quote)
    assert not found and found.reordered is reordered
