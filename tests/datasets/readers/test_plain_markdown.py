"""plain_markdown: the Markdown that HTML and Office converters write, without its inline markup."""

from __future__ import annotations

from sweep.datasets.readers.markdown import markdown_headings, plain_markdown


def test_inline_markup_links_and_escapes_are_taken_out() -> None:
    text = plain_markdown(
        "Set **`max_len`** to *20*; see [the guide](https://x.org/g) and snake\\_case."
    )
    assert text == "Set max_len to 20; see the guide and snake_case."


def test_a_linked_image_leaves_its_alt_text_only() -> None:
    assert (
        plain_markdown("[![Red Hat logo](../redhat.gif)](http://www.redhat.com) Sponsors")
        == "Red Hat logo Sponsors"
    )


def test_code_fences_keep_their_lines_as_they_are() -> None:
    source = "Run:\n\n```\nmake **all**\n    --jobs 2\n```\n"
    assert plain_markdown(source) == "Run:\n\n```\nmake **all**\n    --jobs 2\n```"


def test_tables_keep_their_rows_and_lose_rows_of_empty_cells() -> None:
    # A Word table has no header row: the converter writes an empty one, which the first row replaces.
    word = "| | |\n| --- | --- |\n| Risk | Days |\n| High | 15 |"
    assert plain_markdown(word) == "| Risk | Days |\n| --- | --- |\n| High | 15 |"
    # A page laid out with tables has spacer rows: they hold no text.
    layout = "| Menu | Text |\n| --- | --- |\n|  |  |\n| Home | Welcome |\n| | |"
    assert plain_markdown(layout) == "| Menu | Text |\n| --- | --- |\n| Home | Welcome |"


def test_headings_are_the_hash_lines_outside_code() -> None:
    text = plain_markdown("# Guide\n\n```\n# not a heading\n```\n\n## **Setup**\nText.")
    assert [(h.level, h.title) for h in markdown_headings(text)] == [(1, "Guide"), (2, "Setup")]
    assert text[markdown_headings(text)[1].start :].startswith("## Setup")
