"""Quotes to exact offsets: exact, normalised, or not found."""

from __future__ import annotations

from hypothesis import assume, given
from hypothesis import strategies as st

from sweep.generate.spans import match_span, normalize

TEXT = (
    "# Travel\n\nThe daily allowance for meals is €45 within Portugal\nand €60 elsewhere.\n\n"
    "IT emails you about **eight weeks before your refresh date** with a link.\n"
    "Staff say “don’t book late” – it costs more.\n"
)


def test_exact_quote():
    quote = "The daily allowance for meals is €45"
    found = match_span(quote, TEXT)
    assert found.exact and TEXT[found.start : found.end] == quote


def test_line_breaks_and_case_are_normalised_and_mapped_back():
    found = match_span(
        "the DAILY allowance for meals is €45 within portugal and €60 elsewhere.", TEXT
    )
    assert found is not None and not found.exact
    assert TEXT[found.start : found.end] == (
        "The daily allowance for meals is €45 within Portugal\nand €60 elsewhere."
    )


def test_markdown_emphasis_and_typographic_marks():
    found = match_span("IT emails you about eight weeks before your refresh date", TEXT)
    assert (
        TEXT[found.start : found.end]
        == "IT emails you about **eight weeks before your refresh date"
    )
    found = match_span('Staff say "don\'t book late" - it costs more.', TEXT)
    assert TEXT[found.start : found.end] == "Staff say “don’t book late” – it costs more."


def test_a_quote_not_in_the_text_is_not_found():
    assert match_span("The daily allowance for meals is €50", TEXT) is None
    assert match_span("   ", TEXT) is None


def test_the_passage_is_preferred_over_the_rest_of_the_document():
    text = "Refunds take 5 days. " * 3
    found = match_span("Refunds take 5 days.", text, 21, 42)
    assert (found.start, found.end) == (21, 41)
    # Not in the passage: found elsewhere in the document, unless told not to look.
    assert match_span("Refunds take 5 days.", text, 43, 60).start == 0
    assert match_span("Refunds take 5 days.", text, 43, 60, anywhere=False) is None


def test_normalize():
    assert normalize("  A  **Bold**\n\tmove ") == "a bold move"


# Text with the characters that trip normalisation: case-changing letters
# (some fold to two characters), whitespace of every kind, marks that are
# dropped or folded.
alphabet = st.sampled_from(list("abcXYZ ßİ\n\t  *`’“–-.éÉ") + ["\u00a0"])
texts = st.text(alphabet, min_size=1, max_size=60)


@given(text=texts, data=st.data())
def test_offsets_always_map_back_to_text_that_normalises_to_the_quote(text, data):
    i = data.draw(st.integers(0, len(text) - 1))
    j = data.draw(st.integers(i + 1, len(text)))
    quote = text[i:j]
    # How a model mangles a quote: case, and whitespace runs.
    quote = data.draw(st.sampled_from([quote, quote.upper(), quote.lower(), quote.swapcase()]))
    quote = data.draw(st.sampled_from([quote, " ".join(quote.split()), quote.replace(" ", "\n")]))
    found = match_span(quote, text)
    if found is not None:
        assert 0 <= found.start < found.end <= len(text)
        span = text[found.start : found.end]
        assert normalize(span) == normalize(quote)
        if found.exact:
            assert span == quote.strip()


@given(
    prefix=st.text(st.sampled_from("ab \n."), max_size=20),
    words=st.lists(st.sampled_from(["alpha", "Beta", "gamma", "delta"]), min_size=1, max_size=6),
    suffix=st.text(st.sampled_from("ab \n."), max_size=20),
    data=st.data(),
)
def test_a_reflowed_quote_of_words_is_always_found(prefix, words, suffix, data):
    seps = [data.draw(st.sampled_from([" ", "  ", "\n", " \n\t"])) for _ in words[1:]]
    original = words[0] + "".join(s + w for s, w in zip(seps, words[1:]))
    text = prefix + " " + original + " " + suffix
    quote = " ".join(original.split()).upper()
    assume(quote.strip())
    found = match_span(quote, text)
    assert found is not None
    assert normalize(text[found.start : found.end]) == normalize(quote)
