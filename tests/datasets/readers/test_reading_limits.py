"""Files that cost far more to read than their size (decompression bombs) are refused
before a reader parses them, on one line naming the limit to raise, and skipped or
listed like any unreadable file; files within the limits read as before.

The bombs are real files built here in well under a second (a compressed block written
many times over); whether one was unpacked is told by the memory the command used,
with a wide margin, and by its finishing at all, never by timing it."""

from __future__ import annotations

import logging
import os
import re
import struct
import subprocess
import sys
import tracemalloc
import zipfile
import zlib
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from documents import (
    pdf_stream,
    write_docx,
    write_pdf,
    write_pptx,
    write_raw_pdf,
    write_xlsx,
    write_zip_bomb,
)
from sweep.datasets import extraction
from sweep.datasets.loading import DatasetError, check_dataset, load_corpus
from sweep.datasets.readers.base import UnreadableFile
from sweep.datasets.readers.limits import LIMIT_KEYS, ReadLimits, check_limits, read_document
from sweep.hydrakit.config import CONF_DIR, register
from sweep.jobs.job import load_job_dataset

MB = 1024 * 1024
ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def _fresh_memo():
    extraction._memo.clear()
    yield
    extraction._memo.clear()


def _command(module: str, *args: str) -> tuple[subprocess.CompletedProcess, float]:
    """``python -m module args`` run for real, and the most memory it held (MB)."""
    # VmHWM is this process's own peak: ru_maxrss would carry over the peak of the pytest
    # process it was forked from (Linux keeps it across exec), which grows as the suite runs.
    probe = (
        f"import re, sys; from {module}.__main__ import main; code = main(sys.argv[1:]); "
        "status = open('/proc/self/status').read(); "
        r"print(re.search(r'VmHWM:\s+(\d+) kB', status).group(1), file=sys.stderr); sys.exit(code)"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "HF_HUB_OFFLINE": "1"}
    result = subprocess.run(
        [sys.executable, "-c", probe, *args], capture_output=True, text=True, env=env, timeout=600
    )
    *lines, peak = result.stderr.splitlines()
    result.stderr = "".join(line + "\n" for line in lines)
    return result, int(peak) / 1024


# --------------------------------------------------------------------------- the bombs


def _docx_bomb(path: Path, megabytes: int) -> Path:
    """A real DOCX whose document.xml holds ``megabytes`` MB of paragraphs."""
    template = write_docx(path.with_name("template.docx"), ["# Template", "One paragraph."])
    xml = zipfile.ZipFile(template).read("word/document.xml")
    paragraphs = b"<w:p><w:r><w:t>A paragraph of the bomb.</w:t></w:r></w:p>" * 20_000
    start = xml.index(b"<w:body>") + len(b"<w:body>")
    bomb = write_zip_bomb(
        path,
        template,
        "word/document.xml",
        xml[:start],
        paragraphs,
        megabytes * MB // len(paragraphs),
        xml[xml.index(b"<w:sectPr") :],
    )
    template.unlink()
    return bomb


def _shared_stream_pdf(
    path: Path, pages: int, megabytes: float, *, broken_first: bool = False
) -> Path:
    """A PDF of ``pages`` pages that all draw one content stream of ``megabytes`` MB
    (``broken_first``: but the first, whose stream no reader can decode)."""
    line = b"BT /F1 12 Tf 72 700 Td (Every page draws this one stream.) Tj ET\n" * 1000
    kids = b" ".join(b"%d 0 R" % (6 + i) for i in range(pages))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, pages),
        pdf_stream(b"", repeat=line, times=int(megabytes * MB // len(line))),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        pdf_stream(b"not a flate stream", b" /Filter /FlateDecode"),
    ]
    page = (
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
        b"/Resources << /Font << /F1 4 0 R >> >> >>"
    )
    objects += [page % (5 if broken_first and i == 0 else 3) for i in range(pages)]
    return write_raw_pdf(path, objects)


def _sheet_at_row(path: Path, row: int) -> Path:
    """A real XLSX of one small sheet plus one cell on row ``row``."""
    template = write_xlsx(
        path.with_name("template.xlsx"), {"Prices": [["item", "price"], ["badge", 15]]}
    )
    with (
        zipfile.ZipFile(template) as source,
        zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out,
    ):
        for info in source.infolist():
            data = source.read(info)
            if info.filename == "xl/worksheets/sheet1.xml":
                data = data.replace(
                    b"</sheetData>",
                    b'<row r="%d"><c r="A%d"><v>1</v></c></row></sheetData>' % (row, row),
                )
            out.writestr(info, data)
    template.unlink()
    return path


# --------------------------------------------------------------------------- refused, on one line


def test_sweep_extract_refuses_a_docx_unpacking_to_a_gigabyte_without_unpacking_it(tmp_path):
    docs = tmp_path / "set" / "docs"
    docs.mkdir(parents=True)
    bomb = _docx_bomb(docs / "bomb.docx", megabytes=1024)
    assert bomb.stat().st_size < 4 * MB
    write_docx(
        docs / "travel.docx", ["# Travel", "Flights inside the EU are booked 14 days ahead."]
    )
    result, peak = _command("sweep.extract", str(tmp_path / "set"), str(tmp_path / "out"))
    assert result.returncode == 2
    assert result.stderr == (
        f"sweep.extract: error: {bomb}: expands by more than 32 MB when unpacked "
        "(to 1,024 MB): raise dataset.max_expanded_mb (--max-expanded-mb) to read "
        "it (reader markitdown)\n"
    )
    # Unpacked, the XML alone would be a gigabyte; a parsed tree of it many more.
    assert peak < 600, f"{peak:.0f} MB"
    # Skipped like any unreadable file; the other document is read.
    result, _ = _command(
        "sweep.extract", str(tmp_path / "set"), str(tmp_path / "out"), "--skip-unreadable"
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out" / "travel.docx.txt").is_file()
    assert not (tmp_path / "out" / "bomb.docx.txt").exists()
    assert (
        "skipped 1 unreadable file" in result.stderr
        and "expands by more than 32 MB" in result.stderr
    )


@pytest.mark.parametrize("reader", ["pypdf", "pdfplumber"])
def test_a_pdf_whose_pages_all_draw_one_big_stream_is_refused(tmp_path, reader):
    # The trial's file: 1000 pages, each drawing the same stream; a reader parses it 1000 times.
    docs = tmp_path / "set"
    docs.mkdir()
    bomb = _shared_stream_pdf(docs / "bomb.pdf", pages=1000, megabytes=8)
    assert bomb.stat().st_size < MB
    result, peak = _command(
        "sweep.extract", str(docs), str(tmp_path / "out"), "--reader", f"pdf={reader}"
    )
    assert result.returncode == 2
    assert result.stderr == (
        f"sweep.extract: error: {bomb}: page 1 draws more than 0.5 MB of content "
        f"(decoded; {reader} reads at most 1/64 of dataset.max_expanded_mb on one page): "
        f"raise dataset.max_expanded_mb (--max-expanded-mb) to read it (reader {reader})\n"
    )
    assert peak < 600, f"{peak:.0f} MB"


def test_a_stream_that_cannot_be_measured_does_not_let_a_pdf_through(tmp_path):
    # A first page no reader decodes does not stop the others from being counted...
    bomb = _shared_stream_pdf(tmp_path / "bomb.pdf", pages=50, megabytes=0.25, broken_first=True)
    with pytest.raises(UnreadableFile, match="^expands to more than 4 MB of page content"):
        check_limits(bomb.read_bytes(), "pdf", ReadLimits(), "pypdf")
    # ...and one stream larger than pypdf decodes (75 MB) is larger than the limit: pdfminer,
    # under pdfplumber, would decode all of it.
    one = _shared_stream_pdf(tmp_path / "one.pdf", pages=1, megabytes=200)
    with pytest.raises(UnreadableFile, match="^page 1 draws more than 0.5 MB of content"):
        check_limits(one.read_bytes(), "pdf", ReadLimits(), "pdfplumber")
    check_limits(
        _shared_stream_pdf(tmp_path / "fine.pdf", pages=5, megabytes=0.25).read_bytes(),
        "pdf",
        ReadLimits(),
        "pypdf",
    )


def test_a_form_drawn_many_times_counts_each_time(tmp_path):
    # One page drawing a 20 KB form 100 times: readers parse the form's content each time.
    line = b"BT /F1 12 Tf 72 700 Td (The form says this.) Tj ET\n" * 400
    form = pdf_stream(
        b"",
        b" /Type /XObject /Subtype /Form /BBox [0 0 612 792] "
        b"/Resources << /Font << /F1 4 0 R >> >>",
        repeat=line,
        times=1,
    )

    def drawn(times: int) -> Path:
        return write_raw_pdf(
            tmp_path / f"form{times}.pdf",
            [
                b"<< /Type /Catalog /Pages 2 0 R >>",
                b"<< /Type /Pages /Kids [5 0 R] /Count 1 >>",
                form,
                b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
                b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 6 0 R "
                b"/Resources << /XObject << /Fm1 3 0 R >> >> >>",
                pdf_stream(b"q /Fm1 Do Q\n" * times),
            ],
        )

    with pytest.raises(UnreadableFile, match="^page 1 draws more than 0.5 MB of content"):
        check_limits(drawn(100).read_bytes(), "pdf", ReadLimits(), "pypdf")
    check_limits(drawn(10).read_bytes(), "pdf", ReadLimits(), "pypdf")


def test_pdfplumber_holds_one_page_at_a_time(tmp_path):
    # It kept the objects of every page read (a 1 MB file took 2 GB): memory grew with pages.
    from sweep.datasets.readers.pdfplumber_reader import PdfplumberReader

    paragraph = (
        "Badges are printed at the front desk; the first replacement is free of charge. " * 12
    )

    def peak(pages: int) -> int:
        data = write_pdf(tmp_path / f"{pages}.pdf", [[paragraph] * 3] * pages).read_bytes()
        tracemalloc.start()
        try:
            PdfplumberReader().read(data, "manual.pdf")
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    peak(1)  # (pdfplumber imported)
    assert peak(6) < 1.5 * peak(2)


def test_a_docx_of_millions_of_paragraphs_is_refused_by_its_size_when_unpacked(tmp_path):
    # 3,000,000 paragraphs took 5.5 GB and died; a tenth of that is 170 MB unpacked.
    bomb = _docx_bomb(tmp_path / "bomb.docx", megabytes=170)
    with pytest.raises(
        UnreadableFile,
        match=r"^expands by more than 32 MB when unpacked \(to 170 MB\): "
        r"raise dataset\.max_expanded_mb \(--max-expanded-mb\)",
    ):
        check_limits(bomb.read_bytes(), "docx", ReadLimits())


def test_a_sheet_with_one_cell_on_row_five_million_is_refused(tmp_path):
    # The converter writes every empty row above the cell: 200,000 of them took minutes.
    bomb = _sheet_at_row(tmp_path / "bomb.xlsx", 5_000_000)
    assert bomb.stat().st_size < 10_000
    with pytest.raises(UnreadableFile) as refused:
        extraction.extract(bomb.read_bytes(), str(bomb), _reader("xlsx"), None)
    assert str(refused.value) == (
        "its sheets span more than 100,000 cells (xl/worksheets/sheet1.xml: "
        "5,000,000 rows by 2 columns, or more): raise dataset.max_blocks "
        "(--max-blocks) to read it"
    )
    fine = _sheet_at_row(tmp_path / "fine.xlsx", 1000)
    assert "badge" in extraction.extract(fine.read_bytes(), str(fine), _reader("xlsx"), None).text
    # A part's name from the file is shown escaped: it can neither split the line nor reach
    # the terminal as control codes; its accents stay (they were all escaped with the rest).
    with zipfile.ZipFile(fine, "a") as archive:
        archive.writestr(
            "xl/feuille-été\x1b[2J\n9.xml", b'<row r="9000000"><c r="B9000000"/></row>'
        )
    with pytest.raises(UnreadableFile) as refused:
        check_limits(fine.read_bytes(), "xlsx", ReadLimits())
    assert "(xl/feuille-été\\x1b[2J\\n9.xml: 9,000,000 rows by 2 columns, or more)" in str(
        refused.value
    )


def test_counts_of_pages_slides_and_blocks_are_limited(tmp_path):
    pdf = write_pdf(tmp_path / "three.pdf", [["Page one."], ["Page two."], ["Page three."]])
    deck = write_pptx(tmp_path / "three.pptx", [("One", ["a"]), ("Two", ["b"]), ("Three", ["c"])])
    docx = write_docx(
        tmp_path / "three.docx", ["First paragraph.", "Second paragraph.", "Third one."]
    )
    sheet = write_xlsx(tmp_path / "wide.xlsx", {"S": [["a", "b", "c"], [1, 2, 3]]})
    for file, fmt, tight, words in (
        (pdf, "pdf", ReadLimits(max_pages=2), "has 3 pages, more than 2: raise dataset.max_pages"),
        (deck, "pptx", ReadLimits(max_pages=2), "has more than 2 slides: raise dataset.max_pages"),
        (
            docx,
            "docx",
            ReadLimits(max_blocks=20),
            r"takes more than 20 blocks to read \(XML elements: "
            "paragraphs, runs, table cells and the rest",
        ),
        (
            sheet,
            "xlsx",
            ReadLimits(max_blocks=40),
            r"takes more than 40 blocks to read \(the cells its "
            "sheets span and an eighth of its XML elements",
        ),
    ):
        with pytest.raises(UnreadableFile, match=f"^{words}"):
            check_limits(file.read_bytes(), fmt, tight)
        check_limits(file.read_bytes(), fmt, ReadLimits(max_pages=3))


def test_a_file_larger_than_max_file_mb_is_refused_before_it_is_read(tmp_path, caplog):
    docs = tmp_path / "docs"
    docs.mkdir()
    write_pdf(docs / "manual.pdf", [["The manual is short."]])
    (docs / "big.txt").write_bytes(b"Too long a text. " * 80_000)  # 1.3 MB
    problems = check_dataset(tmp_path, cache_dir="off", max_file_mb=1)
    assert [str(p) for p in problems if "big.txt" in p.path] == [
        f"{docs / 'big.txt'}: larger than 1 MB (1.3 MB): raise dataset.max_file_mb (--max-file-mb) "
        "to read it"
    ]
    with caplog.at_level(logging.WARNING):
        documents = load_corpus(docs, cache_dir="off", max_file_mb=1, skip_unreadable=True)
    assert [d.doc_id for d in documents] == ["manual.pdf"]
    assert "skipped 1 unreadable file" in caplog.text
    with pytest.raises(UnreadableFile, match="larger than 0.5 MB"):
        read_document(docs / "big.txt", ReadLimits(max_file_mb=0.5))


# --------------------------------------------------------------------------- the settings


def test_the_limits_are_dataset_settings_a_sweep_can_change(tmp_path):
    docs = tmp_path / "set" / "docs"
    docs.mkdir(parents=True)
    write_pptx(docs / "deck.pptx", [("One", ["a"]), ("Two", ["b"]), ("Three", ["c"])])
    register()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose(
            config_name="config",
            overrides=[
                f"dataset.path={tmp_path / 'set'}",
                "dataset.max_pages=2",
                "dataset.cache_dir=off",
            ],
        )
    assert cfg.dataset.max_pages == 2 and cfg.dataset.max_expanded_mb is None
    with pytest.raises(
        DatasetError, match=r"deck\.pptx: has more than 2 slides: raise dataset\.max_pages"
    ):
        load_job_dataset(cfg.dataset)


def test_sweep_generate_reads_the_documents_within_the_limits(tmp_path):
    from sweep.generate.generating import run_generate

    register()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose(
            config_name="generate",
            overrides=[
                "dataset=tiny",
                "dataset.max_file_mb=0.0001",
                "dataset.cache_dir=off",
                "llm.model=stand-in",
                "llm.base_url=http://127.0.0.1:9/v1",
                f"llm.cache_dir={tmp_path / 'llm'}",
                f"generate.out={tmp_path / 'out'}",
                "generate.dry_run=true",
            ],
        )
    with pytest.raises(
        DatasetError, match=r"larger than 0\.0001 MB \(0\.0 MB\): raise dataset\.max_file_mb"
    ):
        run_generate(cfg)


@pytest.mark.parametrize(
    ("setting", "words"),
    [
        ({"max_pages": 0}, "dataset.max_pages must be a positive whole number, got 0"),
        ({"max_blocks": 2.5}, "dataset.max_blocks must be a positive whole number, got 2.5"),
        ({"max_file_mb": "big"}, "dataset.max_file_mb must be a positive number of MB, got 'big'"),
        (
            {"max_expanded_mb": True},
            "dataset.max_expanded_mb must be a positive number of MB, got True",
        ),
        (
            {"max_expanded_mb": float("inf")},
            "dataset.max_expanded_mb must be a positive number of MB, got inf",
        ),
        ({"max_pagez": 3}, "unknown setting dataset.max_pagez"),
        # (a terabyte and more: a typo, and what read() was asked for failed with OverflowError)
        ({"max_file_mb": 1e13}, "dataset.max_file_mb must be at most 1,000,000 MB, got 1e+13"),
        ({"max_blocks": 10**12}, "dataset.max_blocks must be at most 1,000,000,000, got 1e+12"),
    ],
)
def test_a_bad_limit_is_one_line_naming_it(tmp_path, setting, words):
    with pytest.raises(DatasetError) as refused:
        load_corpus(tmp_path, **setting)
    assert words in str(refused.value) and "\n" not in str(refused.value)


def test_the_largest_limit_reads_a_small_file_without_setting_aside_that_much(tmp_path):
    # read() was asked for max_file_mb of bytes, which Python sets aside first: MemoryError.
    limits = ReadLimits.of(max_file_mb=1_000_000, max_pages=3.0)
    assert (limits.max_file_mb, limits.max_pages) == (1_000_000.0, 3)
    assert isinstance(limits.max_file_mb, float) and isinstance(limits.max_pages, int)
    (tmp_path / "small.txt").write_bytes(b"A small text.")
    assert read_document(tmp_path / "small.txt", limits) == b"A small text."


def test_a_command_takes_the_limits_as_options(tmp_path):
    docs = tmp_path / "set"
    docs.mkdir()
    write_pdf(docs / "three.pdf", [["Page one."], ["Page two."], ["Page three."]])
    from sweep.extract.__main__ import main

    assert main([str(docs), str(tmp_path / "out"), "--max-pages", "2"]) == 2
    assert main([str(docs), str(tmp_path / "out"), "--max-pages", "3"]) == 0


def test_the_docs_give_the_defaults_the_code_declares():
    defaults = ReadLimits()
    configuration = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    documents = (ROOT / "docs" / "documents.md").read_text(encoding="utf-8")
    for key in LIMIT_KEYS:
        value = f"{getattr(defaults, key):g}"
        assert f"`{key}` {value}" in configuration, key
        assert f"| `dataset.{key}` (`--{key.replace('_', '-')}`) | {value} |" in documents, key


def _reader(fmt: str):
    from sweep.datasets.readers.registry import reader_for

    return reader_for(fmt, "markitdown")


# --------------------------------------------------------------------------- what the defaults let through
#
# The defaults bound what a reader may spend (bench/reading_costs.py measures the costliest
# files they let through). Each file below was let through before, and cost minutes or
# gigabytes to read: a piece the limits did not count, or a part read many times over.


def _docx_body(
    path: Path,
    head: bytes,
    unit: bytes,
    times: int,
    tail: bytes,
    *,
    extra: dict[str, bytes] | None = None,
) -> Path:
    """A real DOCX whose body holds ``head``, ``unit`` ``times`` times and ``tail`` (and the
    members ``extra``)."""
    template = write_docx(
        path.with_name(f"{path.stem}-template.docx"), ["# Template", "One paragraph."]
    )
    xml = zipfile.ZipFile(template).read("word/document.xml")
    start = xml.index(b"<w:body>") + len(b"<w:body>")
    block = min(times, 1000)
    bomb = write_zip_bomb(
        path,
        template,
        "word/document.xml",
        xml[:start] + head + unit * (times % block),
        unit * block,
        times // block,
        tail + xml[xml.index(b"<w:sectPr") :],
    )
    if extra:
        with zipfile.ZipFile(bomb, "a") as archive:
            for name, data in extra.items():
                archive.writestr(name, data)
    return bomb


def test_a_docx_of_one_paragraph_holding_a_million_runs_is_refused(tmp_path):
    # One paragraph of 30 MB of runs (161 KB): the paragraphs were counted, not the runs, and
    # markitdown took 206 s and 2.4 GB.
    bomb = _docx_body(
        tmp_path / "runs.docx", b"<w:p>", b"<w:r><w:t>ab</w:t></w:r>", 1_300_000, b"</w:p>"
    )
    assert bomb.stat().st_size < 300_000
    with pytest.raises(UnreadableFile) as refused:
        check_limits(bomb.read_bytes(), "docx", ReadLimits())
    assert str(refused.value) == (
        "takes more than 100,000 blocks to read (XML elements: paragraphs, runs, table cells and the "
        "rest, a note or comment once for each reference to it): raise dataset.max_blocks (--max-blocks) "
        "to read it"
    )


def test_each_reference_to_a_footnote_counts_the_footnote_again(tmp_path):
    # mammoth renders a note once for each reference to it: a note of 1200 elements referenced
    # 200 times is 240,000 elements rendered, from a file of a few thousand.
    note = (
        b'<w:footnotes xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
        b'<w:footnote w:id="1">'
        + b"<w:p><w:r><w:t>note</w:t></w:r></w:p>" * 400
        + b"</w:footnote></w:footnotes>"
    )

    def referenced(times: int) -> bytes:
        return _docx_body(
            tmp_path / f"notes{times}.docx",
            b"<w:p>",
            b'<w:r><w:footnoteReference w:id="1"/></w:r>',
            times,
            b"</w:p>",
            extra={"word/footnotes.xml": note},
        ).read_bytes()

    with pytest.raises(UnreadableFile, match="^takes more than 100,000 blocks to read"):
        check_limits(referenced(200), "docx", ReadLimits())
    check_limits(referenced(20), "docx", ReadLimits())
    # (mammoth reads the note from there, and renders it for each reference)
    text = _reader("docx").read(referenced(3), "notes.docx").text
    assert text.count("note") >= 3 * 400


def _listed(
    path: Path,
    template: Path,
    member: str,
    pattern: bytes,
    entries: bytes,
    edits: dict[str, bytes] | None = None,
) -> Path:
    """A copy of ``template`` whose ``member`` has ``pattern`` replaced by ``entries``."""
    with (
        zipfile.ZipFile(template) as source,
        zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out,
    ):
        for info in source.infolist():
            data = (edits or {}).get(info.filename) or source.read(info)
            if info.filename == member:
                data = re.sub(pattern, entries, data, flags=re.DOTALL)
            out.writestr(info, data)
    return path


_TEXT_BOX = (
    b'<p:sp><p:nvSpPr><p:cNvPr id="9" name="b"/><p:cNvSpPr txBox="1"/><p:nvPr/></p:nvSpPr>'
    b"<p:spPr/><p:txBody><a:bodyPr/><a:p><a:r><a:t>w</a:t></a:r></a:p></p:txBody></p:sp>"
)


def test_a_slide_the_deck_lists_many_times_counts_each_time(tmp_path):
    # python-pptx reads a slide once for each entry of the deck's list: one slide of 50 text
    # boxes listed 20 times took 34 s; listed 5000 times (the most slides allowed), hours.
    template = write_pptx(tmp_path / "template.pptx", [("Title", ["x"])])
    slide = (
        zipfile.ZipFile(template)
        .read("ppt/slides/slide1.xml")
        .replace(b"</p:spTree>", _TEXT_BOX * 50 + b"</p:spTree>")
    )

    def listed(times: int) -> bytes:
        entries = b"".join(b'<p:sldId id="%d" r:id="rId7"/>' % (256 + i) for i in range(times))
        return _listed(
            tmp_path / f"deck{times}.pptx",
            template,
            "ppt/presentation.xml",
            rb"<p:sldIdLst>.*</p:sldIdLst>",
            b"<p:sldIdLst>" + entries + b"</p:sldIdLst>",
            {"ppt/slides/slide1.xml": slide},
        ).read_bytes()

    with pytest.raises(
        UnreadableFile,
        match="^takes more than 100,000 blocks to read .*a slide once for "
        "each time the deck lists it",
    ):
        check_limits(listed(200), "pptx", ReadLimits())
    check_limits(listed(2), "pptx", ReadLimits())
    assert len(_reader("pptx").read(listed(2), "deck.pptx").pages) == 2  # (each entry is read)


def test_placeholders_count_the_placeholders_they_look_through(tmp_path):
    # Each placeholder of a slide makes python-pptx look through those of its layout: 200
    # placeholders on a layout of 1000 took 64 s; the shapes alone are a few thousand elements.
    template = write_pptx(tmp_path / "template.pptx", [("Title", ["x"])])
    layout = (
        zipfile.ZipFile(template)
        .read("ppt/slideLayouts/slideLayout2.xml")
        .replace(
            b"</p:spTree>",
            b"".join(
                b'<p:sp><p:nvSpPr><p:cNvPr id="9" name="b"/><p:cNvSpPr/><p:nvPr>'
                b'<p:ph idx="%d"/></p:nvPr></p:nvSpPr><p:spPr/></p:sp>' % (1000 + i)
                for i in range(1000)
            )
            + b"</p:spTree>",
        )
    )
    placeholder = (
        b'<p:sp><p:nvSpPr><p:cNvPr id="9" name="b"/><p:cNvSpPr/><p:nvPr><p:ph idx="7"/>'
        b"</p:nvPr></p:nvSpPr><p:spPr/></p:sp>"
    )
    deck = _listed(
        tmp_path / "deck.pptx",
        template,
        "ppt/slides/slide1.xml",
        rb"</p:spTree>",
        placeholder * 200 + b"</p:spTree>",
        {"ppt/slideLayouts/slideLayout2.xml": layout},
    )
    with pytest.raises(
        UnreadableFile,
        match="^takes more than 100,000 blocks to read .*the placeholders "
        "each placeholder looks through",
    ):
        check_limits(deck.read_bytes(), "pptx", ReadLimits())
    check_limits(deck.read_bytes(), "pptx", ReadLimits(max_blocks=400_000))


def test_a_sheet_the_workbook_lists_many_times_counts_each_time(tmp_path):
    # openpyxl reads a sheet once for each entry of the workbook's list.
    template = write_xlsx(
        tmp_path / "template.xlsx", {"S": [[f"v{r}x{c}" for c in range(10)] for r in range(500)]}
    )
    sheets = b"".join(
        b'<sheet xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" '
        b'name="S%d" sheetId="%d" r:id="rId1"/>' % (i, i + 1)
        for i in range(20)
    )
    book = _listed(
        tmp_path / "book.xlsx",
        template,
        "xl/workbook.xml",
        rb"<sheets>.*</sheets>",
        b"<sheets>" + sheets + b"</sheets>",
    )
    with pytest.raises(UnreadableFile) as refused:
        check_limits(book.read_bytes(), "xlsx", ReadLimits())
    assert str(refused.value).startswith(
        "its sheets span more than 100,000 cells "
        "(xl/worksheets/sheet1.xml, listed 20 times: 500 rows by 10 columns"
    )
    check_limits(template.read_bytes(), "xlsx", ReadLimits())


def test_a_shared_string_counts_once_for_each_cell_that_shows_it(tmp_path):
    # A cell shows a shared string by its index: 100 cells showing one 1 MB string, from a
    # 6 KB file, made 100 MB of text (33 s, 900 MB).
    template = write_xlsx(tmp_path / "template.xlsx", {"S": [["x"] * 10] * 2})
    strings = (
        b'<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><si><t>short</t></si>'
        b"<si><t>" + b"word " * (MB // 5) + b"</t></si></sst>"
    )

    def showing(cells: int, index: int) -> bytes:
        rows = b"".join(
            b'<row r="%d">' % (r + 1)
            + b"".join(
                b'<c r="%s%d" t="s"><v>%d</v></c>' % (bytes([65 + c]), r + 1, index)
                for c in range(10)
            )
            + b"</row>"
            for r in range(cells // 10)
        )
        types = (
            zipfile.ZipFile(template)
            .read("[Content_Types].xml")
            .replace(
                b"</Types>",
                (
                    b'<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-'
                    b'officedocument.spreadsheetml.sharedStrings+xml"/></Types>'
                ),
            )
        )
        book = _listed(
            tmp_path / f"shown{cells}-{index}.xlsx",
            template,
            "xl/worksheets/sheet1.xml",
            rb"<sheetData>.*</sheetData>",
            b"<sheetData>" + rows + b"</sheetData>",
            {"[Content_Types].xml": types},
        )
        with zipfile.ZipFile(book, "a", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("xl/sharedStrings.xml", strings)
        return book.read_bytes()

    assert len(showing(100, 1)) < 20_000
    with pytest.raises(UnreadableFile) as refused:
        check_limits(showing(100, 1), "xlsx", ReadLimits())
    assert str(refused.value) == (
        "its cells show more than 32 MB of text (100 MB: a shared string once "
        "for each cell that shows it): raise dataset.max_expanded_mb "
        "(--max-expanded-mb) to read it"
    )
    check_limits(showing(10, 1), "xlsx", ReadLimits())
    check_limits(showing(10_000, 0), "xlsx", ReadLimits())  # (a short string, shown many times)
    assert _reader("xlsx").read(showing(10, 1), "shown.xlsx").text.count("word") >= 10 * (MB // 5)


@pytest.mark.parametrize(
    "row",
    [
        "&#51;00000",
        "&#x33;00000",
        "3e5",
        "300000.0",
        "+300000",
        "300_000",
        " 300000 ",
        "\u0663\u0660\u0660\u0660\u0660\u0660",
    ],
)
def test_a_row_number_is_read_as_openpyxl_reads_it(tmp_path, row):
    # The limits read r="&#51;00000" as no number; openpyxl decodes it to row 300,000 (and
    # reads a row's 3e5, +300000, 300_000 and Arabic-Indic digits as Python's int and float do).
    template = write_xlsx(
        tmp_path / "template.xlsx", {"Prices": [["item", "price"], ["badge", 15]]}
    )
    for what, tag in (
        ("row", f'<row r="{row}"><c><v>1</v></c></row>'),
        ("cell", f'<row><c r="A{row}"><v>1</v></c></row>'),
    ):
        if what == "cell" and not row.startswith("&"):
            continue  # (openpyxl reads a cell's r as letters and ASCII digits only)
        bomb = _listed(
            tmp_path / f"{what}.xlsx",
            template,
            "xl/worksheets/sheet1.xml",
            rb"</sheetData>",
            tag.encode() + b"</sheetData>",
        )
        with pytest.raises(
            UnreadableFile,
            match=r"^its sheets span more than 100,000 cells "
            r"\(xl/worksheets/sheet1.xml: 300,000 rows",
        ):
            check_limits(bomb.read_bytes(), "xlsx", ReadLimits())


def test_an_office_part_in_utf16_is_measured_as_its_parser_reads_it(tmp_path):
    # A part in UTF-16 holds no "<w:p" byte string: the paragraphs were not counted.
    template = write_docx(tmp_path / "template.docx", ["# Template", "One paragraph."])
    xml = zipfile.ZipFile(template).read("word/document.xml").decode("utf-8")
    xml = xml.replace("<?xml version='1.0' encoding='UTF-8' standalone='yes'?>", "")

    def utf16(paragraphs: int) -> bytes:
        body = xml.replace(
            "<w:body>", "<w:body>" + "<w:p><w:r><w:t>utf-16 text</w:t></w:r></w:p>" * paragraphs
        )
        return _with_member(
            tmp_path / f"utf16-{paragraphs}.docx",
            template,
            "word/document.xml",
            ('<?xml version="1.0" encoding="UTF-16"?>' + body).encode("utf-16"),
        )

    assert "utf-16 text" in _reader("docx").read(utf16(2), "small.docx").text  # (mammoth reads it)
    with pytest.raises(UnreadableFile, match="^takes more than 100,000 blocks to read"):
        check_limits(utf16(40_000), "docx", ReadLimits())


def _with_member(path: Path, template: Path, member: str, data: bytes) -> bytes:
    with (
        zipfile.ZipFile(template) as source,
        zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out,
    ):
        for info in source.infolist():
            out.writestr(info, data if info.filename == member else source.read(info))
    return path.read_bytes()


def test_an_image_shown_many_times_costs_nothing_more(tmp_path):
    # mammoth wrote an image as a data URI each time the document showed it: a 2 MB image
    # shown 100 times took 1.1 GB. The text keeps only its alt text.
    import io

    import docx
    from docx.shared import Inches

    def png(size: int) -> bytes:
        def chunk(kind: bytes, data: bytes) -> bytes:
            return (
                struct.pack(">I", len(data))
                + kind
                + data
                + struct.pack(">I", zlib.crc32(kind + data))
            )

        return (
            b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
            + chunk(b"tEXt", b"c\x00" + os.urandom(size))
            + chunk(b"IDAT", zlib.compress(b"\x00" * 4))
            + chunk(b"IEND", b"")
        )

    document = docx.Document()
    document.add_paragraph("A picture follows.")
    document.add_picture(io.BytesIO(png(2 * MB)), width=Inches(1))
    document.save(str(tmp_path / "one.docx"))
    with zipfile.ZipFile(tmp_path / "one.docx") as source:
        xml = source.read("word/document.xml")
    shown = re.search(rb"<w:p>(?:(?!<w:p>).)*?<w:drawing>.*?</w:p>", xml, re.DOTALL)
    data = _with_member(
        tmp_path / "many.docx",
        tmp_path / "one.docx",
        "word/document.xml",
        xml[: shown.start()] + shown.group(0) * 100 + xml[shown.end() :],
    )
    check_limits(data, "docx", ReadLimits())
    _reader("docx").read(data, "warm.docx")
    tracemalloc.start()
    try:
        text = _reader("docx").read(data, "many.docx").text
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "A picture follows." in text
    assert peak < 100 * MB, f"{peak / MB:.0f} MB"


def test_pdfplumber_reads_a_smaller_share_of_page_content_than_pypdf(tmp_path):
    # A 7 KB PDF drawing 2 MB on one page took pdfplumber 166 s and 2.2 GB; pypdf's time grows
    # faster than a page's content. Three pages of 0.3 MB: within pypdf's share, not pdfplumber's.
    one = _shared_stream_pdf(tmp_path / "one.pdf", pages=1, megabytes=2).read_bytes()
    assert len(one) < 20_000
    for reader in ("pypdf", "pdfplumber"):
        with pytest.raises(UnreadableFile) as refused:
            check_limits(one, "pdf", ReadLimits(), reader)
        assert str(refused.value) == (
            f"page 1 draws more than 0.5 MB of content (decoded; {reader} reads at most 1/64 of "
            "dataset.max_expanded_mb on one page): raise dataset.max_expanded_mb (--max-expanded-mb) to "
            "read it"
        )
    three = _shared_stream_pdf(tmp_path / "three.pdf", pages=3, megabytes=0.3).read_bytes()
    check_limits(three, "pdf", ReadLimits(), "pypdf")
    with pytest.raises(UnreadableFile) as refused:
        check_limits(three, "pdf", ReadLimits(), "pdfplumber")
    assert str(refused.value).startswith(
        "expands to more than 0.5 MB of page content (decoded, for each page that draws it; pdfplumber "
        "reads at most 1/64 of dataset.max_expanded_mb)"
    )
    check_limits(three, "pdf", ReadLimits(max_expanded_mb=64), "pdfplumber")
    # Every PDF reader has its share.
    from sweep.datasets.readers.limits import PDF_SHARES
    from sweep.datasets.readers.registry import READERS

    assert set(READERS["pdf"]) <= set(PDF_SHARES)


def test_a_font_map_counts_toward_the_content_a_reader_parses(tmp_path):
    # pdfminer parses a font's /ToUnicode map once, at about 3 s per MB: 2 MB of it, from a
    # 72 KB file, took 6 s.
    block = b"100 beginbfchar\n" + b"<0041> <0042>\n" * 100 + b"endbfchar\n"
    pdf = write_raw_pdf(
        tmp_path / "map.pdf",
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [5 0 R] /Count 1 >>",
            pdf_stream(b"BT /F1 12 Tf 72 700 Td (A page of text.) Tj ET"),
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /ToUnicode 6 0 R >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 3 0 R "
            b"/Resources << /Font << /F1 4 0 R >> >> >>",
            pdf_stream(
                b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n",
                repeat=block,
                times=MB // len(block),
                tail=b"endcmap end end",
            ),
        ],
    )
    with pytest.raises(UnreadableFile, match="^expands to more than 0.5 MB of page content"):
        check_limits(pdf.read_bytes(), "pdf", ReadLimits(), "pdfplumber")
    check_limits(pdf.read_bytes(), "pdf", ReadLimits(), "pypdf")  # (pypdf stops at 100,000 entries)


def test_the_pdf_limit_holds_without_the_configuration_of_recent_pypdf(tmp_path, monkeypatch):
    # The check imported pypdf.get_configuration (pypdf 7) where an ImportError was taken for
    # a damaged stream: with pypdf 6 every page counted nothing.
    import pypdf

    monkeypatch.delattr(pypdf, "get_configuration", raising=False)
    bomb = _shared_stream_pdf(tmp_path / "bomb.pdf", pages=200, megabytes=8)
    with pytest.raises(UnreadableFile, match="^page 1 draws more than 0.5 MB of content"):
        check_limits(bomb.read_bytes(), "pdf", ReadLimits(), "pypdf")
    # What the check uses exists from the pypdf the project requires.
    from importlib.metadata import version

    from pypdf.errors import LimitReachedError  # noqa: F401

    pin = re.search(r'"pypdf>=([\d.]+)"', (ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert pin is not None and tuple(int(p) for p in pin.group(1).split(".")) >= (6, 0)
    assert tuple(int(p) for p in version("pypdf").split(".")[:2]) >= (6, 0)


def test_a_web_page_of_many_tags_or_much_text_is_refused(tmp_path):
    # 2 MB of "<b>a</b> " took trafilatura 40 s and 700 MB: a web page had no limit but its size.
    tags = b"<html><body><main>" + b"<b>a</b> " * 150_000 + b"</main></body></html>"
    with pytest.raises(
        UnreadableFile, match="^has more than 100,000 tags: raise dataset.max_blocks"
    ):
        check_limits(tags, "html", ReadLimits())
    # Tags are counted as the reader decodes the page (UTF-7 writes "<" as "+ADw-").
    utf7 = (
        b'<html><head><meta charset="utf-7"></head><body>' + b"+ADw-b+AD4-a+ADw-/b+AD4- " * 150_000
    )
    with pytest.raises(UnreadableFile, match="^has more than 100,000 tags"):
        check_limits(utf7, "html", ReadLimits())
    text = b"<html><body><p>" + b"word and more words. " * (34 * MB // 21) + b"</p></body></html>"
    with pytest.raises(
        UnreadableFile,
        match=r"^holds more than 32 MB of text \(34 MB\): "
        r"raise dataset.max_expanded_mb",
    ):
        check_limits(text, "html", ReadLimits())
    check_limits(
        b"<html><body>" + b"<p>A paragraph.</p>" * 10_000 + b"</body></html>", "html", ReadLimits()
    )


def test_the_bundled_documents_pass_the_defaults_with_a_wide_margin():
    # Legitimate documents are far from every limit: each bundled one passes with a tenth of
    # the defaults (a third for pdfplumber, whose share is small: see docs/documents.md).
    from sweep.datasets.readers.registry import READERS, format_of

    documents = sorted(
        p
        for folder in ("src/sweep/corpora", "tests/fixtures")
        for p in (ROOT / folder).rglob("*")
        if p.is_file() and format_of(p.name) not in (None, "text")
    )
    assert len(documents) >= 10
    defaults = ReadLimits()
    for path in documents:
        fmt = format_of(path.name)
        for reader in READERS[fmt]:
            part = 3 if reader == "pdfplumber" else 10
            check_limits(
                path.read_bytes(),
                fmt,
                ReadLimits(
                    max_file_mb=defaults.max_file_mb / part,
                    max_expanded_mb=defaults.max_expanded_mb / part,
                    max_pages=defaults.max_pages // part,
                    max_blocks=defaults.max_blocks // part,
                ),
                reader,
            )


def test_pdfplumber_finds_a_pages_table_for_a_character_without_trying_every_table(
    tmp_path, monkeypatch
):
    # Each character was tried against every ruled table of its page, and each table looked
    # through every object of it: 150 small tables and 10,000 characters (38 KB of content)
    # took 8 s, thousands of tables on a tall page hours. Counted, not timed.
    from sweep.datasets.readers import pdfplumber_reader

    tables, rules, text = 300, [], []
    for t in range(tables):  # (pdfplumber measures from the top, a PDF from the bottom: 10000)
        top, x = 20 + 12 * t, 72 + (t % 2) * 5  # (neighbouring tables differ in their columns)
        for rule in (10_000 - top, 10_000 - top - 10):
            rules.append(
                b"%d %d m %d %d l S %d %d m %d %d l S"
                % (x, rule, x + 90, rule, x + 90, rule, x + 180, rule)
            )
        text.append(b"BT /F1 6 Tf %d %d Td (cell%d) Tj ET" % (x + 2, 10_000 - top - 8, t))
    text += [
        b"BT /F1 8 Tf 300 %d Td (Beside them, line %d.) Tj ET" % (10_000 - 20 - 12 * i, i)
        for i in range(600)
    ]
    pdf = write_raw_pdf(
        tmp_path / "tables.pdf",
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [5 0 R] /Count 1 >>",
            pdf_stream(b"\n".join(rules + text)),
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 10000] /Contents 3 0 R "
            b"/Resources << /Font << /F1 4 0 R >> >> >>",
        ],
    ).read_bytes()
    check_limits(pdf, "pdf", ReadLimits(), "pdfplumber")
    tried = []
    centre_in = pdfplumber_reader._centre_in
    monkeypatch.setattr(
        pdfplumber_reader, "_centre_in", lambda obj, box: tried.append(1) or centre_in(obj, box)
    )
    text = pdfplumber_reader.PdfplumberReader().read(pdf, "tables.pdf").text
    assert "cell7" in text and "line 599." in text
    characters = sum(len(line) for line in text.split())
    assert len(tried) < 2 * characters, f"{len(tried):,} tries for {characters:,} characters"
