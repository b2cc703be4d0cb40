"""Files that cost far more to read than their size (decompression bombs) are refused
before a reader parses them, on one line naming the limit to raise, and skipped or
listed like any unreadable file; files within the limits read as before.

The bombs are real files built here in well under a second (a compressed block written
many times over); whether one was unpacked is told by the memory the command used,
with a wide margin, and by its finishing at all, never by timing it."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import tracemalloc
import zipfile
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from documents import (pdf_stream, write_docx, write_pdf, write_pptx, write_raw_pdf, write_xlsx,
                       write_zip_bomb)
from sweep.datasets import extraction
from sweep.datasets.loading import DatasetError, check_dataset, load_corpus
from sweep.datasets.readers.base import UnreadableFile
from sweep.datasets.readers.limits import LIMIT_KEYS, ReadLimits, check_limits, read_document
from sweep.jobs.config import CONF_DIR, register
from sweep.jobs.job import load_dataset

MB = 1024 * 1024
ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def _fresh_memo():
    extraction._memo.clear()
    yield
    extraction._memo.clear()


def _command(module: str, *args: str) -> tuple[subprocess.CompletedProcess, float]:
    """``python -m module args`` run for real, and the most memory it held (MB)."""
    probe = (f"import resource, sys; from {module} import main; code = main(sys.argv[1:]); "
             "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr); sys.exit(code)")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "HF_HUB_OFFLINE": "1"}
    result = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True,
                            env=env, timeout=600)
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
    bomb = write_zip_bomb(path, template, "word/document.xml", xml[:start], paragraphs,
                          megabytes * MB // len(paragraphs), xml[xml.index(b"<w:sectPr"):])
    template.unlink()
    return bomb


def _shared_stream_pdf(path: Path, pages: int, megabytes: int, *, broken_first: bool = False) -> Path:
    """A PDF of ``pages`` pages that all draw one content stream of ``megabytes`` MB
    (``broken_first``: but the first, whose stream no reader can decode)."""
    line = b"BT /F1 12 Tf 72 700 Td (Every page draws this one stream.) Tj ET\n" * 10_000
    kids = b" ".join(b"%d 0 R" % (6 + i) for i in range(pages))
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>",
               b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, pages),
               pdf_stream(b"", repeat=line, times=megabytes * MB // len(line)),
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
               pdf_stream(b"not a flate stream", b" /Filter /FlateDecode")]
    page = (b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
            b"/Resources << /Font << /F1 4 0 R >> >> >>")
    objects += [page % (5 if broken_first and i == 0 else 3) for i in range(pages)]
    return write_raw_pdf(path, objects)


def _sheet_at_row(path: Path, row: int) -> Path:
    """A real XLSX of one small sheet plus one cell on row ``row``."""
    template = write_xlsx(path.with_name("template.xlsx"), {"Prices": [["item", "price"], ["badge", 15]]})
    with zipfile.ZipFile(template) as source, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for info in source.infolist():
            data = source.read(info)
            if info.filename == "xl/worksheets/sheet1.xml":
                data = data.replace(b"</sheetData>", b'<row r="%d"><c r="A%d"><v>1</v></c></row></sheetData>'
                                    % (row, row))
            out.writestr(info, data)
    template.unlink()
    return path


# --------------------------------------------------------------------------- refused, on one line


def test_sweep_extract_refuses_a_docx_unpacking_to_a_gigabyte_without_unpacking_it(tmp_path):
    docs = tmp_path / "set" / "docs"
    docs.mkdir(parents=True)
    bomb = _docx_bomb(docs / "bomb.docx", megabytes=1024)
    assert bomb.stat().st_size < 4 * MB
    write_docx(docs / "travel.docx", ["# Travel", "Flights inside the EU are booked 14 days ahead."])
    result, peak = _command("sweep.extract", str(tmp_path / "set"), str(tmp_path / "out"))
    assert result.returncode == 2
    assert result.stderr == (f"sweep.extract: error: {bomb}: expands by more than 64 MB when unpacked "
                             "(to 1,024 MB): raise dataset.max_expanded_mb (--max-expanded-mb) to read "
                             "it (reader markitdown)\n")
    # Unpacked, the XML alone would be a gigabyte; a parsed tree of it many more.
    assert peak < 600, f"{peak:.0f} MB"
    # Skipped like any unreadable file; the other document is read.
    result, _ = _command("sweep.extract", str(tmp_path / "set"), str(tmp_path / "out"),
                         "--skip-unreadable")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out" / "travel.docx.txt").is_file()
    assert not (tmp_path / "out" / "bomb.docx.txt").exists()
    assert "skipped 1 unreadable file" in result.stderr and "expands by more than 64 MB" in result.stderr


@pytest.mark.parametrize("reader", ["pypdf", "pdfplumber"])
def test_a_pdf_whose_pages_all_draw_one_big_stream_is_refused(tmp_path, reader):
    # The trial's file: 1000 pages, each drawing the same stream; a reader parses it 1000 times.
    docs = tmp_path / "set"
    docs.mkdir()
    bomb = _shared_stream_pdf(docs / "bomb.pdf", pages=1000, megabytes=8)
    assert bomb.stat().st_size < MB
    result, peak = _command("sweep.extract", str(docs), str(tmp_path / "out"), "--reader", f"pdf={reader}")
    assert result.returncode == 2
    assert result.stderr == (f"sweep.extract: error: {bomb}: expands to more than 64 MB of page content "
                             "(decoded, for each page that draws it): raise dataset.max_expanded_mb "
                             f"(--max-expanded-mb) to read it (reader {reader})\n")
    assert peak < 600, f"{peak:.0f} MB"


def test_a_stream_that_cannot_be_measured_does_not_let_a_pdf_through(tmp_path):
    # A first page no reader decodes does not stop the others from being counted...
    bomb = _shared_stream_pdf(tmp_path / "bomb.pdf", pages=50, megabytes=8, broken_first=True)
    with pytest.raises(UnreadableFile, match="^expands to more than 64 MB of page content"):
        check_limits(bomb.read_bytes(), "pdf", ReadLimits())
    # ...and one stream larger than pypdf decodes (75 MB) is larger than the limit: pdfminer,
    # under pdfplumber, would decode all of it.
    one = _shared_stream_pdf(tmp_path / "one.pdf", pages=1, megabytes=200)
    with pytest.raises(UnreadableFile, match="^expands to more than 64 MB of page content"):
        check_limits(one.read_bytes(), "pdf", ReadLimits())
    check_limits(_shared_stream_pdf(tmp_path / "fine.pdf", pages=5, megabytes=1).read_bytes(), "pdf",
                 ReadLimits())


def test_a_form_drawn_many_times_counts_each_time(tmp_path):
    # One page drawing a 1 MB form 100 times: readers parse the form's content each time.
    line = b"BT /F1 12 Tf 72 700 Td (The form says this.) Tj ET\n" * 10_000
    form = pdf_stream(b"", b" /Type /XObject /Subtype /Form /BBox [0 0 612 792] "
                           b"/Resources << /Font << /F1 4 0 R >> >>", repeat=line, times=MB // len(line))

    def drawn(times: int) -> Path:
        return write_raw_pdf(tmp_path / f"form{times}.pdf", [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [5 0 R] /Count 1 >>",
            form,
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 6 0 R "
            b"/Resources << /XObject << /Fm1 3 0 R >> >> >>",
            pdf_stream(b"q /Fm1 Do Q\n" * times)])

    with pytest.raises(UnreadableFile, match="^expands to more than 64 MB of page content"):
        check_limits(drawn(100).read_bytes(), "pdf", ReadLimits())
    check_limits(drawn(10).read_bytes(), "pdf", ReadLimits())


def test_pdfplumber_holds_one_page_at_a_time(tmp_path):
    # It kept the objects of every page read (a 1 MB file took 2 GB): memory grew with pages.
    from sweep.datasets.readers.pdfplumber_reader import PdfplumberReader

    paragraph = "Badges are printed at the front desk; the first replacement is free of charge. " * 12

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
    with pytest.raises(UnreadableFile, match=r"^expands by more than 64 MB when unpacked \(to 170 MB\): "
                                             r"raise dataset\.max_expanded_mb \(--max-expanded-mb\)"):
        check_limits(bomb.read_bytes(), "docx", ReadLimits())


def test_a_sheet_with_one_cell_on_row_five_million_is_refused(tmp_path):
    # The converter writes every empty row above the cell: 200,000 of them took minutes.
    bomb = _sheet_at_row(tmp_path / "bomb.xlsx", 5_000_000)
    assert bomb.stat().st_size < 10_000
    with pytest.raises(UnreadableFile) as refused:
        extraction.extract(bomb.read_bytes(), str(bomb), _reader("xlsx"), None)
    assert str(refused.value) == ("its sheets span more than 200,000 cells (xl/worksheets/sheet1.xml: "
                                  "5,000,000 rows by 2 columns, or more): raise dataset.max_blocks "
                                  "(--max-blocks) to read it")
    fine = _sheet_at_row(tmp_path / "fine.xlsx", 1000)
    assert "badge" in extraction.extract(fine.read_bytes(), str(fine), _reader("xlsx"), None).text
    # A part's name from the file is shown escaped: it can neither split the line nor reach
    # the terminal as control codes.
    with zipfile.ZipFile(fine, "a") as archive:
        archive.writestr("xl/\x1b[2Jsheet\n9.xml", b'<row r="9000000"><c r="B9000000"/></row>')
    with pytest.raises(UnreadableFile) as refused:
        check_limits(fine.read_bytes(), "xlsx", ReadLimits())
    assert "('xl/\\x1b[2Jsheet\\n9.xml': 9,000,000 rows by 2 columns" in str(refused.value)


def test_counts_of_pages_slides_paragraphs_and_cells_are_limited(tmp_path):
    pdf = write_pdf(tmp_path / "three.pdf", [["Page one."], ["Page two."], ["Page three."]])
    deck = write_pptx(tmp_path / "three.pptx", [("One", ["a"]), ("Two", ["b"]), ("Three", ["c"])])
    docx = write_docx(tmp_path / "three.docx", ["First paragraph.", "Second paragraph.", "Third one."])
    sheet = write_xlsx(tmp_path / "wide.xlsx", {"S": [["a", "b", "c"], [1, 2, 3]]})
    tight = ReadLimits(max_pages=2, max_blocks=2)
    for file, fmt, words in ((pdf, "pdf", "has 3 pages, more than 2: raise dataset.max_pages"),
                             (deck, "pptx", "has more than 2 slides: raise dataset.max_pages"),
                             (docx, "docx", "has more than 2 paragraphs: raise dataset.max_blocks"),
                             (sheet, "xlsx", "its sheets span more than 2 cells")):
        with pytest.raises(UnreadableFile, match=f"^{words}"):
            check_limits(file.read_bytes(), fmt, tight)
        check_limits(file.read_bytes(), fmt, ReadLimits(max_pages=3, max_blocks=6))


def test_a_file_larger_than_max_file_mb_is_refused_before_it_is_read(tmp_path, caplog):
    docs = tmp_path / "docs"
    docs.mkdir()
    write_pdf(docs / "manual.pdf", [["The manual is short."]])
    (docs / "big.txt").write_bytes(b"Too long a text. " * 80_000)  # 1.3 MB
    problems = check_dataset(tmp_path, cache_dir="off", max_file_mb=1)
    assert [str(p) for p in problems if "big.txt" in p.path] == [
        f"{docs / 'big.txt'}: larger than 1 MB (1.3 MB): raise dataset.max_file_mb (--max-file-mb) "
        "to read it"]
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
        cfg = compose(config_name="config", overrides=[f"dataset.path={tmp_path / 'set'}",
                                                       "dataset.max_pages=2", "dataset.cache_dir=off"])
    assert cfg.dataset.max_pages == 2 and cfg.dataset.max_expanded_mb is None
    with pytest.raises(DatasetError, match=r"deck\.pptx: has more than 2 slides: raise dataset\.max_pages"):
        load_dataset(cfg.dataset)


def test_sweep_generate_reads_the_documents_within_the_limits(tmp_path):
    from sweep.jobs.generating import run

    register()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose(config_name="generate", overrides=[
            "dataset=tiny", "dataset.max_file_mb=0.0001", "dataset.cache_dir=off", "llm.model=stand-in",
            "llm.base_url=http://127.0.0.1:9/v1", f"llm.cache_dir={tmp_path / 'llm'}",
            f"generate.out={tmp_path / 'out'}", "generate.dry_run=true"])
    with pytest.raises(DatasetError, match=r"larger than 0\.0001 MB \(0\.0 MB\): raise dataset\.max_file_mb"):
        run(cfg)


@pytest.mark.parametrize(("setting", "words"), [
    ({"max_pages": 0}, "dataset.max_pages must be a positive whole number, got 0"),
    ({"max_blocks": 2.5}, "dataset.max_blocks must be a positive whole number, got 2.5"),
    ({"max_file_mb": "big"}, "dataset.max_file_mb must be a positive number of MB, got 'big'"),
    ({"max_expanded_mb": True}, "dataset.max_expanded_mb must be a positive number of MB, got True"),
    ({"max_expanded_mb": float("inf")}, "dataset.max_expanded_mb must be a positive number of MB, got inf"),
    ({"max_pagez": 3}, "unknown setting dataset.max_pagez"),
])
def test_a_bad_limit_is_one_line_naming_it(tmp_path, setting, words):
    with pytest.raises(DatasetError) as refused:
        load_corpus(tmp_path, **setting)
    assert words in str(refused.value) and "\n" not in str(refused.value)


def test_a_command_takes_the_limits_as_options(tmp_path):
    docs = tmp_path / "set"
    docs.mkdir()
    write_pdf(docs / "three.pdf", [["Page one."], ["Page two."], ["Page three."]])
    from sweep.extract import main

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
