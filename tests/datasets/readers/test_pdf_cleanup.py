"""clean_pdf_pages: the PDF text repair every PDF reader shares, on plain lines."""

from __future__ import annotations

import itertools
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from documents import check_invariants
from sweep.datasets.readers.pdf import PdfLine, clean_pdf_pages

FULL = "the quick brown fox jumps over the lazy dog near the river bank at dawn"  # a full line


def clean(*pages: list[str | PdfLine], **kw):
    extracted = clean_pdf_pages(list(pages), **kw)
    check_invariants(extracted)
    return extracted


# --------------------------------------------------------------------------- joining lines


def test_wrapped_lines_join_with_a_space() -> None:
    text = clean([FULL, FULL, "and it ends here."]).text
    assert text == f"{FULL} {FULL} and it ends here."


def test_a_hyphen_at_a_line_end_before_lowercase_joins_the_word() -> None:
    assert clean([f"{FULL} exam-", "ple of joining."]).text == f"{FULL} example of joining."


def test_a_hyphen_before_uppercase_or_a_digit_stays_without_a_space() -> None:
    assert clean([f"{FULL} the AQ-", "200 and Wi-", "Fi."]).text == f"{FULL} the AQ-200 and Wi-Fi."


def test_a_hyphen_the_document_writes_inside_lines_is_kept() -> None:
    lines = [
        "a well-known fact, and the quick brown fox jumps over the lazy dog again",
        f"{FULL} well-",
        "known to all.",
    ]
    assert "well-known to all." in clean(lines).text


def test_a_soft_hyphen_always_joins() -> None:
    assert clean([f"{FULL} exam\u00ad", "ple."]).text == f"{FULL} example."


def test_blank_lines_are_paragraph_breaks() -> None:
    assert clean([FULL, "", FULL]).text == f"{FULL}\n\n{FULL}"


def test_a_short_line_ending_a_sentence_ends_its_paragraph() -> None:
    text = clean([FULL, FULL, "It ends.", FULL, "and more."]).text
    assert text == f"{FULL} {FULL} It ends.\n\n{FULL} and more."


def test_a_full_line_ending_a_sentence_does_not() -> None:
    # The next word would not have fitted: the margin broke the line, not the author.
    text = clean([FULL, FULL + ".", "Then more words follow here."]).text
    assert "\n" not in text


def test_a_short_heading_like_line_stands_alone() -> None:
    full = FULL.capitalize()
    text = clean(["Installation", full, FULL + ".", "Mounting", "The bracket fits poles."]).text
    assert text.split("\n\n") == [
        "Installation",
        f"{full} {FULL}.",
        "Mounting",
        "The bracket fits poles.",
    ]


def test_a_measured_gap_is_a_paragraph_break() -> None:
    lines = [
        PdfLine(FULL, gap=0.0, fill=0.99, first_word=0.05),
        PdfLine("ends without punctuation", gap=0.0, fill=0.4, first_word=0.1),
        PdfLine("next paragraph", gap=0.9, fill=0.3, first_word=0.1),
    ]
    assert clean(lines).text == f"{FULL} ends without punctuation\n\nnext paragraph"


def test_measured_widths_decide_room() -> None:
    # "ends." would look short by characters, but it reaches the margin (wide glyphs).
    lines = [
        PdfLine("WWWW WWWW ends.", fill=0.99, first_word=0.1),
        PdfLine("Next words.", fill=0.3, first_word=0.1),
    ]
    assert clean(lines).text == "WWWW WWWW ends. Next words."


def test_list_items_are_lines_of_their_own() -> None:
    text = clean(
        ["Bring:", "• the meter", "• spare caps that are described in", "the appendix", "Then go."]
    ).text
    assert (
        text == "Bring:\n\n• the meter\n• spare caps that are described in the appendix\n\nThen go."
    )


def test_a_wrapped_parenthesis_or_dash_is_not_a_list_item() -> None:
    text = clean(
        [f"{FULL} Tejo and Douro", "(10) have screens, and the dog", FULL, "— which is fine."]
    ).text
    assert "\n" not in text


def test_lines_marked_as_headings_become_heading_lines() -> None:
    extracted = clean(
        [
            PdfLine("Field Calibration", heading=1),
            PdfLine("Guide", heading=1),
            PdfLine(FULL),
            PdfLine("and the end."),
            PdfLine("Preparing", heading=2),
            PdfLine("Switch the station off."),
        ]
    )
    assert extracted.text == (
        f"# Field Calibration Guide\n\n{FULL} and the end.\n\n## Preparing\n\n"
        "Switch the station off."
    )
    assert [(h.level, h.title) for h in extracted.headings] == [
        (1, "Field Calibration Guide"),
        (2, "Preparing"),
    ]
    assert extracted.title == "Field Calibration Guide"


def test_unmarked_text_gets_no_heading() -> None:
    extracted = clean(
        ["# not a heading, a line that starts with a hash sign", "Installation", "Text."]
    )
    assert extracted.headings == ()


def test_ligatures_and_space_runs_are_normalised() -> None:
    assert clean(["the ﬁrst   ﬂoor\u00a0is here."]).text == "the first floor is here."


# --------------------------------------------------------------------------- page furniture


def paged(
    bodies: list[list[str]],
    header: str | None = "ACME Corp — Handbook",
    footer: str | None = "Page {n} of {total}",
) -> list[list[str]]:
    pages = []
    for n, body in enumerate(bodies, 1):
        lines = ([header] if header else []) + body
        if footer:
            lines.append(footer.format(n=n, total=len(bodies)))
        pages.append(lines)
    return pages


BODIES = [[f"Section {c} starts here.", FULL, f"The {c} part ends."] for c in "ABC"]


def test_running_headers_and_footers_are_dropped() -> None:
    text = clean(*paged(BODIES)).text
    assert "ACME" not in text and "Page" not in text
    assert text.startswith("Section A starts here.")


def test_footers_differing_only_in_digits_match() -> None:
    text = clean(*paged(BODIES, header=None, footer="Handbook v2, printed 2026-03-0{n}")).text
    assert "Handbook" not in text


def test_a_line_the_text_repeats_mid_page_is_not_a_header() -> None:
    bodies = [
        ["Safety first.", FULL, FULL, FULL, "Safety first.", FULL, FULL, "More text here."],
        ["Safety first.", FULL, FULL, FULL, FULL, FULL, "Other text here."],
    ]
    text = clean(*paged(bodies, header=None, footer=None)).text
    assert text.count("Safety first.") == 3


def test_a_header_on_one_page_only_stays() -> None:
    text = clean(["Only page heading", "Body sentence here."], ["Body of the second page."]).text
    assert text.startswith("Only page heading")


def test_bare_page_numbers_are_dropped_at_the_page_edges_only() -> None:
    for number in ("3", "- 3 -", "Page 3", "3 / 9", "p. 3", "iv", "[3]"):
        text = clean(["Some text here.", number], [number, "More text there."]).text
        assert text == "Some text here.\n\nMore text there.", number
    assert "42" in clean(["Count:", "42", "Next line here.", "Last line here.", "End of it."]).text


def book(chapters: list[tuple[str, list[str]]], front_matter: int = 1) -> list[list[str]]:
    """Pages with a book's running header: the chapter's name and the printed page number,
    which starts at 1 after ``front_matter`` unnumbered pages."""
    pages = [[f"Front matter page {n}."] for n in range(front_matter)]
    for chapter, body in chapters:
        pages.append([f"{chapter} {len(pages) - front_matter + 1}", *body])
    return pages


CHAPTERS = [
    ("Chapter 1: Calibration", ["Calibration starts with a cold station.", FULL, "Then the hood."]),
    ("Chapter 1: Calibration", ["The hood is clamped to the inlet.", FULL, "Wait for blue."]),
    ("Chapter 2: Recording", ["Values go into the log.", FULL, "The log is signed."]),
    ("Appendix A: Parts", ["The van carries spare filters.", FULL, "Filters are counted."]),
]


def test_a_books_running_headers_that_change_by_chapter_are_dropped_by_their_page_numbers() -> None:
    text = clean(*book(CHAPTERS)).text
    assert "Chapter" not in text and "Appendix" not in text
    assert text.startswith("Front matter page 0.\n\nCalibration starts with a cold station.")
    # Without front matter, and as footers.
    pages = [list(reversed(page)) for page in book(CHAPTERS, front_matter=0)]
    assert "Chapter" not in clean(*pages).text


def test_a_number_at_a_page_edge_that_is_not_the_page_number_stays() -> None:
    # Page i is printed i: a last line ending with its own number (on half the pages) is not
    # furniture when the numbers are in the headers (on all of them).
    last = [
        "Spare filters in the van: 1",
        "Cylinders on the shelf: 12",
        "Hoods in stock: 3",
        "Clamps left over: 40",
    ]
    chapters = [(c, [*body, end]) for (c, body), end in zip(CHAPTERS, last)]
    text = clean(*book(chapters)).text
    assert "Chapter" not in text and all(end in text for end in last)
    # Numbers that follow the pages on too few of them are not page numbers.
    lone = clean(
        [FULL, "Section 1"], [FULL, "Something else"], [FULL, "More text"], [FULL, "End"]
    ).text
    assert "Section 1" in lone


def test_table_of_contents_entries_are_lines_of_their_own() -> None:
    entries = [
        "1 Introduction . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . 1",
        "2 Calibrating the station on site . . . . . . . . . . . . . . . . . . . . . . . . 3",
        "2.1 Preparing the hood, the reference cylinder and the inlet clamp for a",
        "calibration run in the field ........................................ 4",
        "Index . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . 9",
    ]
    text = clean(
        ["Contents", *entries, "The guide starts on the next page, with the safety rules."]
    ).text
    assert text.split("\n")[2:6] == [
        entries[0],
        entries[1],
        f"{entries[2]} {entries[3]}",
        entries[4],
    ]
    assert text.endswith(
        f"{entries[4]}\n\nThe guide starts on the next page, with the safety rules."
    )


# --------------------------------------------------------------------------- pages


def test_pages_are_joined_by_a_blank_line_and_ranged() -> None:
    extracted = clean(["First page text."], ["Second page text."])
    assert extracted.text == "First page text.\n\nSecond page text."
    assert extracted.pages == ((0, 16), (18, 35))
    assert extracted.page_of(extracted.text.index("Second")) == 2
    assert extracted.page_of(16) is None  # the separator belongs to no page


def test_a_sentence_running_over_a_page_break_is_joined() -> None:
    extracted = clean(*paged([[FULL, FULL], ["and so it goes on.", "Done."]]))
    assert f"{FULL} and so it goes on." in extracted.text
    first, second = extracted.pages
    assert extracted.text[first[1] : second[0]] == " "


def test_a_word_hyphenated_over_a_page_break_is_joined() -> None:
    extracted = clean(*paged([[FULL, f"{FULL} exam-"], ["ple, and done."]]))
    assert "example, and done." in extracted.text
    (_, end), (start, _) = extracted.pages
    assert end == start and extracted.text[:end].endswith("exam")


def test_a_page_without_text_has_an_empty_range() -> None:
    extracted = clean(["First page."], ["3"], ["Third page."])
    assert extracted.pages[1][0] == extracted.pages[1][1]
    assert extracted.page_of(extracted.text.index("Third")) == 3


def test_title_is_the_metadata_then_a_heading_like_first_line_then_the_fallback() -> None:
    assert clean(["Guide", "Body text."], title="Meta", fallback_title="stem").title == "Meta"
    assert clean(["Field Guide", "Body text."], fallback_title="stem").title == "Field Guide"
    assert clean(["This is a sentence.", "Body."], fallback_title="stem").title == "stem"


# --------------------------------------------------------------------------- properties

# Words of letters only, and each line with a word of its own: no line is a page number
# or a running header, so every letter of the input must reach the text.
WORD = st.text("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=1, max_size=9)
ENDING = st.sampled_from(["", "", ".", ",", "-", ":"])


@st.composite
def page_lines(draw) -> list[list[str]]:
    pages = []
    counter = 0
    for _ in range(draw(st.integers(1, 4))):
        lines = []
        for _ in range(draw(st.integers(0, 8))):
            counter += 1
            if draw(st.booleans()) and draw(st.booleans()):
                lines.append("")
                continue
            # (no letter of a roman numeral, nor of "p." / "pg": never a page number)
            unique = "".join("bfhjknqrtw"[int(d)] for d in str(counter))
            words = [unique] + draw(st.lists(WORD, max_size=12))
            lines.append(" ".join(words) + draw(ENDING))
        pages.append(lines)
    return pages


def letters(text: str) -> str:
    return re.sub(r"[^A-Za-z.,:]", "", text)


@settings(max_examples=150, deadline=None)
@given(page_lines())
def test_pages_cover_the_text_in_order(pages: list[list[str]]) -> None:
    extracted = clean(*pages)
    assert len(extracted.pages) == len(pages)
    for (_, end), (start, _) in itertools.pairwise(extracted.pages):
        assert end <= start and not extracted.text[end:start].strip()
    for (a, b), lines in zip(extracted.pages, pages):
        assert (a == b) == (not any(line.strip() for line in lines))


@settings(max_examples=150, deadline=None)
@given(page_lines())
def test_no_letter_is_lost_or_invented(pages: list[list[str]]) -> None:
    extracted = clean(*pages)
    joined = [line for page in pages for line in page]
    # A hyphen that joined a word is gone; every other character is kept in order.
    assert letters(extracted.text) == letters("".join(joined))


@settings(max_examples=150, deadline=None)
@given(page_lines())
def test_no_joined_hyphen_is_left_dangling(pages: list[list[str]]) -> None:
    lines = clean(*pages).text.split("\n")
    for line, following in itertools.pairwise(lines):
        assert not (re.search(r"[A-Za-z]-$", line) and following[:1].islower()), (line, following)


@settings(max_examples=150, deadline=None)
@given(page_lines())
def test_cleaning_the_text_again_changes_nothing(pages: list[list[str]]) -> None:
    # The text is paragraphs separated by blank lines: nothing left to join or drop.
    # (Only without list items: "- " lines are lettered here only after a hyphen.)
    text = clean(*pages).text
    assert clean(text.split("\n")).text == text
