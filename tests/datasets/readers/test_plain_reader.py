"""PlainTextReader: UTF-8 exactly as stored, Markdown headings, one-line refusals."""

from __future__ import annotations

import pytest

from documents import check_invariants
from sweep.datasets.readers.base import ExtractedHeading, UnreadableFile
from sweep.datasets.readers.plain import TEXT_SUFFIXES, PlainTextReader

READER = PlainTextReader()


def read(data: bytes, filename: str = "notes.md"):
    extracted = READER.read(data, filename)
    check_invariants(extracted)
    return extracted


def test_text_is_the_bytes_decoded_with_crlf_and_bom_kept() -> None:
    data = "\ufeff# Título\r\n\r\nCafé costs €3.\r\n".encode("utf-8")
    extracted = read(data)
    assert extracted.text == data.decode("utf-8")
    assert extracted.text.startswith("\ufeff# ") and "\r\n" in extracted.text
    assert extracted.title == "Título"
    # Where the heading's line starts, as the chunkers place it: the BOM is on that line.
    assert extracted.headings == (ExtractedHeading(1, "Título", 0),)
    assert extracted.pages == ()


def test_title_is_a_first_heading_line_else_the_stem() -> None:
    assert read(b"# Travel policy\n\ntext", "a/travel.md").title == "Travel policy"
    assert read(b"Intro first.\n\n# Later heading\n", "a/travel.md").title == "travel"
    assert read(b"#hashtag, not a heading\n", "notes.txt").title == "notes"


def test_headings_are_atx_lines_outside_fenced_code() -> None:
    text = (
        "# One\n\ntext\n\n```bash\n# a shell comment\n```\n\n## Two ##\n\n"
        "~~~\n# also code\n~~~\n   ### Three\n####\n#+TITLE: org\n"
    )
    extracted = read(text.encode())
    assert [(h.level, h.title) for h in extracted.headings] == [
        (1, "One"),
        (2, "Two"),
        (3, "Three"),
    ]
    for heading in extracted.headings:
        assert text[heading.start :].lstrip(" ").startswith("#" * heading.level + " ")


def test_setext_headings_are_headings_as_the_chunkers_read_them() -> None:
    text = "Guide\n=====\n\nIntro.\n\nSetup\n-----\n\n- a list item\n---\n"
    extracted = read(text.encode())
    assert [(h.level, h.title, h.start) for h in extracted.headings] == [
        (1, "Guide", 0),
        (2, "Setup", text.index("Setup")),
    ]


def test_heading_starts_count_crlf() -> None:
    text = "intro\r\n\r\n## Second\r\nbody\r\n"
    extracted = read(text.encode())
    assert extracted.headings == (ExtractedHeading(2, "Second", text.index("## Second")),)


def test_invalid_utf8_names_the_byte_and_line() -> None:
    with pytest.raises(UnreadableFile) as e:
        READER.read(b"line one\nline two \xe9t\xe9\n", "legacy.txt")
    assert str(e.value) == "not valid UTF-8 (byte 0xe9 on line 2)"


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "empty file"),
        (b" \n\t\r\n", "document is empty"),
        ("\ufeff\n".encode(), "document is empty"),
    ],
)
def test_empty_files_are_refused(data: bytes, reason: str) -> None:
    with pytest.raises(UnreadableFile, match=f"^{reason}$"):
        READER.read(data, "empty.md")


def test_text_suffixes_are_lower_case_and_dotted() -> None:
    assert all(s.startswith(".") and s == s.lower() for s in TEXT_SUFFIXES)
    assert {".md", ".txt", ".rst"} <= set(TEXT_SUFFIXES)
