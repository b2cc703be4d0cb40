"""OfficeReader (markitdown) on DOCX, PPTX and XLSX files that python-docx, python-pptx and
openpyxl wrote."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import pytest

from documents import (
    check_invariants,
    corrupt,
    replace_member,
    sentences,
    write_docx,
    write_pptx,
    write_xlsx,
)
from sweep.datasets.readers import office
from sweep.datasets.readers.base import UnreadableFile
from sweep.datasets.readers.office import OfficeReader

MEMO = """# Travel Policy – EU

Employees book trips through **Fairway**, and snake_case codes like TRV_EU_3 stay as typed.

## Approval

- Trips up to €1,500 are approved by the line manager.
- Longer trips need the approval of the department head.

1. Submit the Travel Request form.
2. Wait for the approval email.

| Estimated cost | Approver |
| --- | --- |
| Up to €1,500 | Line manager |
| Above €1,500 | Department head |

## Booking

Flights are booked at least 14 days ahead; rail is the default below four hours.
"""


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("office")
    return {
        "docx": write_docx(folder / "travel.docx", MEMO, title="Travel Policy EU v3.3"),
        "untitled": write_docx(folder / "untitled.docx", "Just one paragraph of text, no heading."),
        "styled": write_docx(
            folder / "memo-2026-03.docx", MEMO, title_paragraph="Travel for the EU office"
        ),
        "both": write_docx(
            folder / "both.docx", MEMO, title="Template", title_paragraph="Travel for the EU office"
        ),
        "pptx": write_pptx(
            folder / "review.pptx",
            [
                ("Quarterly review", ["Revenue grew 12% on Q2.", "Churn fell."]),
                ("Next steps", ["Hire two field engineers."]),
            ],
        ),
        "xlsx": write_xlsx(
            folder / "prices.xlsx",
            {
                "Prices": [["Model", "EUR"], ["AQ-200", 1290], ["WX-10", 890]],
                "Notes": [["Note"], ["Valid from 1 January 2026"]],
            },
        ),
    }


def read(fmt: str, path: Path):
    extracted = OfficeReader(fmt).read(path.read_bytes(), path.name)
    check_invariants(extracted)
    return extracted


@pytest.fixture(params=[True, False], ids=["markitdown-path", "direct-path"])
def docx_path(request, monkeypatch):
    """Both ways a DOCX is converted: markitdown's own (when BeautifulSoup's XML parser keeps
    namespaces) and straight through mammoth."""
    if request.param and not office._xml_namespaces_survive():
        pytest.skip(
            "BeautifulSoup's XML parser drops namespaces here (lxml 6.2): markitdown's DOCX step fails"
        )
    monkeypatch.setattr(office, "_xml_namespaces_survive", lambda: request.param)
    return request.param


def test_docx_headings_lists_and_tables_are_markdown(files, docx_path) -> None:
    extracted = read("docx", files["docx"])
    assert [(h.level, h.title) for h in extracted.headings] == [
        (1, "Travel Policy – EU"),
        (2, "Approval"),
        (2, "Booking"),
    ]
    text = extracted.text
    assert "\n- Trips up to €1,500 are approved by the line manager.\n" in text
    assert "\n1. Submit the Travel Request form.\n2. Wait for the approval email.\n" in text
    assert re.search(
        r"^\| Estimated cost \| Approver \|\n\| -+ \| -+ \|\n\| Up to €1,500 \| Line manager \|$",
        text,
        re.MULTILINE,
    )


def test_docx_sentences_read_back_verbatim(files, docx_path) -> None:
    text = read("docx", files["docx"]).text
    assert [s for s in sentences(MEMO) if s not in text] == []
    assert "\\" not in text and "**" not in text


def test_docx_title_is_its_title_paragraph_else_its_property_else_its_first_heading_else_the_stem(
    files,
) -> None:
    assert (
        read("docx", files["styled"]).title == "Travel for the EU office"
    )  # (not the file's name)
    assert (
        read("docx", files["both"]).title == "Travel for the EU office"
    )  # (what the document shows)
    assert read("docx", files["docx"]).title == "Travel Policy EU v3.3"
    assert read("docx", files["untitled"]).title == "untitled"


def test_docx_title_paragraph_is_found_by_its_styles_name(files, tmp_path) -> None:
    # Word in another language stores the Title style under its own id ("Titel"); the
    # style's name stays "Title".
    path = replace_member(
        tmp_path / "titel.docx",
        files["styled"],
        "word/styles.xml",
        lambda xml: xml.replace('w:styleId="Title"', 'w:styleId="Titel"'),
    )
    with zipfile.ZipFile(path) as z:
        assert 'w:styleId="Titel"' in z.read("word/styles.xml").decode()
    path = replace_member(
        tmp_path / "titel2.docx",
        path,
        "word/document.xml",
        lambda xml: xml.replace('<w:pStyle w:val="Title"/>', '<w:pStyle w:val="Titel"/>'),
    )
    with zipfile.ZipFile(path) as z:
        assert '<w:pStyle w:val="Titel"/>' in z.read("word/document.xml").decode()
    assert read("docx", path).title == "Travel for the EU office"


def test_pptx_slides_are_sections_and_pages(files) -> None:
    extracted = read("pptx", files["pptx"])
    assert [h.title for h in extracted.headings] == ["Quarterly review", "Next steps"]
    assert "Slide number" not in extracted.text and "<!--" not in extracted.text
    assert len(extracted.pages) == 2
    assert extracted.page_of(extracted.text.index("Churn fell.")) == 1
    assert extracted.page_of(extracted.text.index("Hire two field engineers.")) == 2


def test_xlsx_sheets_are_tables_under_their_names(files) -> None:
    text = read("xlsx", files["xlsx"]).text
    assert "## Prices\n| Model | EUR |\n| --- | --- |\n| AQ-200 | 1290 |" in text
    assert "## Notes" in text and "Valid from 1 January 2026" in text


@pytest.mark.parametrize("fmt", ["docx", "pptx", "xlsx"])
def test_bad_files_are_refused_on_one_line(files, fmt: str) -> None:
    label = fmt.upper()
    other = files["xlsx" if fmt != "xlsx" else "docx"].read_bytes()
    member = office.OFFICE_FORMATS[fmt]
    cases = [
        (b"not a zip at all", f"corrupt {label}: not a zip file"),
        (corrupt(files[fmt].read_bytes()), f"corrupt {label}: not a zip file"),
        (other, f"corrupt {label}: no {member} in the archive (not a {label} file)"),
        (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(500), f"corrupt {label}: an OLE2 container"),
        (b"", "empty file"),
    ]
    for data, reason in cases:
        with pytest.raises(UnreadableFile) as e:
            OfficeReader(fmt).read(data, f"bad.{fmt}")
        assert str(e.value).startswith(reason) and "\n" not in str(e.value), str(e.value)


def test_an_unknown_format_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="OfficeReader reads docx, pptx, xlsx, not 'odt'"):
        OfficeReader("odt")
