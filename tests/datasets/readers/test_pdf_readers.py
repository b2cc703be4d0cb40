"""The PDF readers (pypdf, pdfplumber) on PDFs that fpdf2 wrote."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pypdf
import pytest

from documents import (
    check_invariants,
    corrupt,
    sentences,
    write_encrypted_pdf,
    write_image_only_pdf,
    write_pdf,
)
from paths import ROOT
from sweep.datasets.readers.base import Extracted, UnreadableFile
from sweep.datasets.readers.pdf import NO_TEXT_LAYER, PypdfReader
from sweep.datasets.readers.pdfplumber_reader import PdfplumberReader

#: A document of the bundled corpus, four pages long as a PDF.
CORPUS_DOC = (
    ROOT
    / "src"
    / "sweep"
    / "corpora"
    / "kestrel"
    / "docs"
    / "people"
    / "remote-hybrid-work-policy.md"
)

#: Three pages whose paragraphs are known, so the page of each sentence is known.
PAGES = [
    [
        "# Field Calibration Guide",
        (
            "Calibration keeps the gas cells of every sensor honest: a cell drifts by up to two percent a "
            "month, and a technician who skips the quarterly recalibration will publish readings that no "
            "auditor accepts. This guide is the procedure for the AQ-200 and the WX-10 stations."
        ),
        (
            "Before you start, check that the reference cylinder is within its certification date and that "
            "the regulator shows at least twenty bar of pressure."
        ),
    ],
    [
        "## Preparing the station",
        (
            "Switch the station to maintenance mode from Kestrel Cloud, so that readings taken during the "
            "procedure are flagged and kept out of the public dashboards and the monthly reports."
        ),
        "- Remove the inlet cap and the particulate filter.",
        "- Connect the calibration hood to the inlet with the quick-release clamp.",
        (
            "Wait until the status ring pulses blue, which takes between forty and ninety seconds on a "
            "station that has been running for more than an hour."
        ),
    ],
    [
        "## Recording the results",
        (
            "Write the zero and span values into the maintenance log, together with the cylinder's serial "
            "number, and return the station to normal operation before you leave the site."
        ),
        "The last step is the one most often forgotten.",
    ],
]
HEADER = "Kestrel Labs — Field Calibration Guide — Internal"
#: Words the builder breaks with a hyphen at a line end, wherever they fall.
HYPHENATED = {"recalibration", "certification", "maintenance", "dashboards"}

READERS = [PypdfReader(), PdfplumberReader()]

CONTENTS = [
    "1 Calibration . . . . . . . . . . . . . . . . . . . . . . . . . . . . 1",
    "1.1 Preparing the station . . . . . . . . . . . . . . . . . . . . . . 1",
    "2 Recording . . . . . . . . . . . . . . . . . . . . . . . . . . . . . 3",
]
BOOK = [
    ["Contents", *CONTENTS],
    [
        "# Calibration",
        "Every station is calibrated against a reference gas once a quarter.",
        "Connect the calibration hood to the inlet with the quick-release clamp.",
    ],
    ["Wait until the status ring pulses blue.", "Cylinders in the van: 2"],
    ["# Recording", "Write the zero and span values into the maintenance log."],
    ["Return the station to normal operation before you leave the site."],
]
BOOK_CHAPTERS = {
    2: "Chapter 1: Calibration",
    3: "Chapter 1: Calibration",
    4: "Chapter 2: Recording",
    5: "Chapter 2: Recording",
}


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("pdf")
    return {
        "guide": write_pdf(
            folder / "guide.pdf",
            PAGES,
            header=HEADER,
            hyphenate=HYPHENATED,
            title="Field Calibration Guide (rev. 4)",
        ),
        "corpus": write_pdf(
            folder / "remote-work.pdf",
            CORPUS_DOC.read_text(encoding="utf-8"),
            header="Kestrel Labs — People Policies",
            page_numbers="- {page} -",
            hyphenate=True,
            paragraph_gap=False,
        ),
        # A book: a contents page, then the chapter's name and the page number (1 from the
        # second page) at the top of every page.
        "book": write_pdf(
            folder / "book.pdf",
            BOOK,
            page_numbers=None,
            header=lambda n: (BOOK_CHAPTERS.get(n, ""), str(n - 1) if n in BOOK_CHAPTERS else ""),
        ),
        "encrypted": write_encrypted_pdf(folder / "locked.pdf"),
        "owner-only": write_encrypted_pdf(
            folder / "restricted.pdf", "Printing is restricted here.", user_password=""
        ),
        "scan": write_image_only_pdf(folder / "scan.pdf"),
    }


@pytest.fixture(scope="module", params=READERS, ids=lambda r: r.name)
def read(request, files):
    reader = request.param
    cache: dict[str, Extracted] = {}

    def read(name: str) -> Extracted:
        if name not in cache:
            cache[name] = reader.read(files[name].read_bytes(), files[name].name)
            check_invariants(cache[name])
        return cache[name]

    read.reader = reader
    return read


def raw_lines(path: Path) -> list[str]:
    return [
        line for page in pypdf.PdfReader(path).pages for line in page.extract_text().splitlines()
    ]


def test_the_test_pdfs_have_wraps_hyphens_and_page_furniture(files) -> None:
    lines = raw_lines(files["guide"])
    assert sum(bool(re.search(r"[a-z]-$", line)) for line in lines) >= 3
    assert lines.count(HEADER) == 3 and "Page 2 of 3" in lines
    corpus = raw_lines(files["corpus"])
    assert sum(bool(re.search(r"[a-z]-$", line)) for line in corpus) >= 5 and "- 2 -" in corpus
    assert len(pypdf.PdfReader(files["corpus"]).pages) >= 3


@pytest.mark.parametrize("name", ["guide", "corpus"])
def test_every_sentence_reads_back_verbatim(read, files, name: str) -> None:
    # Wrapped over lines, hyphenated at a line end, running over a page break: all joined.
    source = PAGES if name == "guide" else [[CORPUS_DOC.read_text(encoding="utf-8")]]
    text = read(name).text
    expected = [s for page in source for s in sentences(page)]
    assert len(expected) > 5
    assert [s for s in expected if s not in text] == []


def test_hyphenated_words_are_whole(read) -> None:
    text = read("guide").text
    for word in HYPHENATED:
        assert word in text
    assert not re.search(r"[a-z]- ?\n?[a-z]", text.replace("quick-release", ""))


@pytest.mark.parametrize("name", ["guide", "corpus"])
def test_no_running_header_or_page_number_is_left(read, name: str) -> None:
    text = read(name).text
    assert "Kestrel Labs —" not in text
    assert not re.search(r"Page \d+ of \d+|- \d+ -", text)
    assert not any(re.fullmatch(r"\d+", line.strip()) for line in text.split("\n"))


def test_a_books_running_headers_and_contents_read_as_a_reader_reads_them(read, files) -> None:
    assert {"Chapter 1: Calibration 1", "Chapter 2: Recording 4"} <= set(raw_lines(files["book"]))
    text = read("book").text
    assert "Chapter" not in text
    assert "\n".join(CONTENTS) in text  # one entry per line, none run together
    expected = [s for page in BOOK[1:] for s in sentences(page)]
    assert [s for s in expected if s not in text] == [] and "Cylinders in the van: 2" in text


def test_pages_map_a_sentence_to_its_page(read) -> None:
    extracted = read("guide")
    assert len(extracted.pages) == 3
    for number, page in enumerate(PAGES, 1):
        for sentence in sentences(page):
            start = extracted.text.index(sentence)
            assert extracted.page_of(start) == number, sentence
            assert extracted.page_of(start + len(sentence) - 1) == number, sentence


def test_paragraphs_and_list_items_are_kept_apart(read) -> None:
    text = read("guide").text
    assert "\n\n- Remove the inlet cap" in text or "\n\n• Remove the inlet cap" in text
    assert re.search(r"particulate filter\.\n[•-] Connect", text)
    assert re.search(r"(^|\n)(## )?Preparing the station\n\n", text)


def test_pdfplumber_makes_headings_of_larger_lines_and_pypdf_none(read) -> None:
    extracted = read("guide")
    if read.reader.name == "pypdf":
        assert extracted.headings == () and "#" not in extracted.text
        return
    assert [(h.level, h.title) for h in extracted.headings] == [
        (1, "Field Calibration Guide"),
        (2, "Preparing the station"),
        (2, "Recording the results"),
    ]
    source = CORPUS_DOC.read_text(encoding="utf-8")
    titles = [
        line.lstrip("#").strip() for line in source.splitlines() if re.match(r"#{1,3} ", line)
    ]
    assert [h.title for h in read("corpus").headings] == titles


def test_title_is_the_metadata_title_else_the_first_heading_like_line(
    read, files, tmp_path
) -> None:
    assert read("guide").title == "Field Calibration Guide (rev. 4)"
    assert read("corpus").title == "Remote and Hybrid Work Policy"
    plain = write_pdf(tmp_path / "notes.pdf", ["This file starts with a sentence.", "And more."])
    assert read.reader.read(plain.read_bytes(), "notes.pdf").title == "notes"


def test_an_owner_password_alone_does_not_stop_reading(read) -> None:
    assert read("owner-only").text == "Printing is restricted here."


def test_bad_pdfs_are_refused_on_one_line(read, files) -> None:
    reader = read.reader
    good = files["guide"].read_bytes()
    cases = {
        "encrypted": (files["encrypted"].read_bytes(), "encrypted PDF: password required"),
        "scan": (files["scan"].read_bytes(), NO_TEXT_LAYER),
        "not a pdf": (b"<html>not a pdf</html>", "corrupt PDF: no %PDF header (not a PDF file)"),
        "empty": (b"", "empty file"),
        "blank": (b"  \n", "empty file"),
    }
    for case, (data, reason) in cases.items():
        with pytest.raises(UnreadableFile) as e:
            reader.read(data, "case.pdf")
        assert str(e.value) == reason, case
    with pytest.raises(UnreadableFile) as e:
        reader.read(corrupt(good), "half.pdf")
    message = str(e.value)
    assert message.startswith("corrupt PDF: ") and "\n" not in message and "half.pdf" not in message


def test_no_warning_noise_while_reading(read, files, caplog) -> None:
    data = files["guide"].read_bytes()
    # A wrong cross-reference offset: pypdf warns "incorrect startxref pointer" and reads on.
    damaged = re.sub(rb"startxref\s+\d+", b"startxref\n99", data)
    with caplog.at_level(logging.WARNING):
        text = read.reader.read(damaged, "damaged.pdf").text
    assert "Field Calibration Guide" in text
    assert [
        r for r in caplog.records if r.name.split(".")[0] in ("pypdf", "pdfminer", "pdfplumber")
    ] == []
    assert logging.getLogger("pypdf").level == logging.NOTSET  # restored


@pytest.mark.parametrize("reader", READERS, ids=lambda r: r.name)
def test_a_table_row_reads_as_its_cells_one_after_another(reader, tmp_path) -> None:
    # A table as fpdf2 rules it (horizontal lines only, split at the cells' edges), whose
    # cells wrap onto lines of their own: read line by line across the page, the lines of
    # neighbouring cells would interleave.
    from fpdf.fonts import FontFace

    from documents import _fpdf

    rows = [
        ["Office", "Pay schedule", "Pay day", "Extra payments"],
        [
            "Lisbon",
            "Monthly, 14 payments a year",
            "25th of each month",
            "Holiday allowance paid with June salary; Christmas allowance paid with November salary",
        ],
        ["Denver", "Semi-monthly, 24 payments a year", "15th and last day of each month", "None"],
    ]
    pdf = _fpdf(None, None, None)
    pdf.add_page()
    pdf.set_font("DejaVu", "", 11)
    pdf.multi_cell(
        0, 6, "Salaries are paid as the table below says.", new_x="LMARGIN", new_y="NEXT"
    )
    pdf.ln(2)
    pdf.set_font("DejaVu", "", 9.5)
    with pdf.table(
        col_widths=(18, 30, 26, 56),
        width=pdf.epw,
        text_align="LEFT",
        line_height=4.2,
        padding=(1.2, 1.6),
        borders_layout="HORIZONTAL_LINES",
        headings_style=FontFace(emphasis="BOLD", fill_color=(228, 234, 242)),
    ) as table:
        for row in rows:
            cells = table.row()
            for text in row:
                cells.cell(text)
    pdf.ln(3)
    pdf.set_font("DejaVu", "", 11)
    pdf.multi_cell(
        0,
        6,
        "Payslips are published in the HR portal two days before pay day.",
        new_x="LMARGIN",
        new_y="NEXT",
    )
    path = tmp_path / "pay.pdf"
    pdf.output(str(path))

    extracted = reader.read(path.read_bytes(), path.name)
    check_invariants(extracted)
    text = " ".join(extracted.text.split())
    for row in rows:
        assert text.count(" ".join(row)) == 1, row
    assert "Salaries are paid as the table below says." in text
    assert "Payslips are published in the HR portal two days before pay day." in text
