"""What a reader cannot keep as the file says is never lost quietly: it is kept (better
parsing), or it is a warning that names the file, logged once per read (also when the
text comes from the cache). And no reader's text holds a lone surrogate, which no later
stage (a cache file, a tokenizer) could take."""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from documents import pdf_stream, replace_member, write_docx, write_pptx, write_raw_pdf, write_xlsx
from sweep.datasets import extraction
from sweep.datasets.loading import load_corpus
from sweep.datasets.readers.html import HtmlReader, MarkitdownHtmlReader, decode_html
from sweep.datasets.readers.markdown import PLAIN_TEXT_FALLBACK
from sweep.datasets.readers.office import OfficeReader

ROOT = Path(__file__).resolve().parents[3]
HTML_READERS = [HtmlReader(), MarkitdownHtmlReader()]


@pytest.fixture(autouse=True)
def _fresh_memo():
    extraction._memo.clear()
    yield
    extraction._memo.clear()


def _warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


# --------------------------------------------------------------------------- lone surrogates


def _surrogate_pdf(path: Path) -> Path:
    """A PDF whose font maps the glyph ``B`` to U+D800 (a surrogate, no character)."""
    cmap = (
        b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /Broken def\n"
        b"1 begincodespacerange <00> <FF> endcodespacerange\n"
        b"2 beginbfchar <41> <0041> <42> <D800> endbfchar\n"
        b"endcmap CMapName currentdict /CMap defineresource pop end end"
    )
    return write_raw_pdf(
        path,
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
            b"/Resources << /Font << /F1 5 0 R >> >> >>",
            pdf_stream(b"BT /F1 24 Tf 72 700 Td (AAB AA) Tj ET"),
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /ToUnicode 6 0 R >>",
            pdf_stream(cmap),
        ],
    )


def test_a_glyph_mapped_to_a_lone_surrogate_reads_as_a_replacement_character_with_a_warning(
    tmp_path, caplog
):
    docs = tmp_path / "docs"
    docs.mkdir()
    pdf = _surrogate_pdf(docs / "glyphs.pdf")
    cache = tmp_path / "cache"
    for _ in range(2):  # read, then from the cache: the same text, the same warning
        extraction._memo.clear()
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            (document,) = load_corpus(docs, cache_dir=cache)
        assert document.text == "AA\ufffd AA"
        document.text.encode("utf-8")  # what a tokenizer and a cache file need
        assert _warnings(caplog) == [
            f"{pdf}: 1 lone surrogate code point (U+D800 to U+DFFF, no character; "
            "a font's broken Unicode map) read as U+FFFD"
        ]


def test_sweep_extract_writes_a_pdf_with_a_surrogate_glyph_and_names_it(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    pdf = _surrogate_pdf(docs / "glyphs.pdf")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    result = subprocess.run(
        [sys.executable, "-m", "sweep.extract", str(docs), str(tmp_path / "out")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert (
        f"{pdf}: 1 lone surrogate code point" in result.stderr and "Traceback" not in result.stderr
    )
    assert (tmp_path / "out" / "glyphs.pdf.txt").read_text(encoding="utf-8") == "AA\ufffd AA"


# --------------------------------------------------------------------------- Office: entities


def _with_entity(fmt: str, path: Path, template: Path, member: str) -> Path:
    """``template`` whose ``member`` declares an external entity and uses it mid-text."""

    def edit(xml: str) -> str:
        root = xml.index("<", xml.index("?>") + 2 if xml.startswith("<?xml") else 0)
        name = xml[root + 1 :].split(None, 1)[0]
        doctype = f'<!DOCTYPE {name} [<!ENTITY secret SYSTEM "file:///etc/hostname">]>'
        return xml[:root] + doctype + xml[root:].replace("ENTITY_HERE", "&secret;")

    return replace_member(path, template, member, edit)


@pytest.mark.parametrize(
    ("fmt", "member"),
    [
        ("pptx", "ppt/slides/slide1.xml"),
        ("docx", "word/document.xml"),
        ("xlsx", "xl/worksheets/sheet1.xml"),
    ],
)
def test_text_after_an_unexpanded_entity_is_kept_and_the_entity_named(
    tmp_path, caplog, fmt, member
):
    line = "Badges cost ENTITY_HERE fifteen euros each"
    if fmt == "pptx":
        template = write_pptx(tmp_path / "t.pptx", [("Badges", [line])])
    elif fmt == "docx":
        template = write_docx(tmp_path / "t.docx", ["# Badges", line])
    else:
        template = write_xlsx(tmp_path / "t.xlsx", {"Badges": [["note"], [line]]})
    docs = tmp_path / "docs"
    docs.mkdir()
    file = _with_entity(fmt, docs / f"deck.{fmt}", template, member)
    extracted = OfficeReader(fmt).read(file.read_bytes(), str(file))
    assert re.search(
        r"Badges cost\s+fifteen euros each", extracted.text
    )  # none of the file's own text lost
    assert (
        "hostname" not in extracted.text and "secret" not in extracted.text
    )  # and nothing expanded
    assert extracted.warnings == (
        f"{member} declares a DTD, which is not read: entity &secret; left out "
        "(entities are never expanded)",
    )
    with caplog.at_level(logging.WARNING):
        load_corpus(docs, cache_dir="off")
    assert _warnings(caplog) == [f"{file}: {extracted.warnings[0]}"]


# --------------------------------------------------------------------------- HTML


def _nested(depth: int) -> bytes:
    return (
        "<html><body><p>The page starts with this sentence.</p>"
        + "<div>" * depth
        + "<p>The deepest sentence of the page matters too.</p>"
        + "</div>" * depth
        + "<p>The page ends with this sentence.</p></body></html>"
    ).encode()


@pytest.mark.parametrize("reader", HTML_READERS, ids=lambda r: r.name)
def test_html_nested_past_256_levels_is_read_whole(reader):
    # libxml2 stops at 256 levels by default, and the rest of the page was gone unsaid.
    extracted = reader.read(_nested(300), "deep.html")
    for sentence in ("starts with this", "deepest sentence", "ends with this"):
        assert sentence in extracted.text
    assert extracted.warnings == ()


@pytest.mark.parametrize("reader", HTML_READERS, ids=lambda r: r.name)
def test_html_nested_past_the_parsers_limit_says_what_is_lost(reader):
    extracted = reader.read(_nested(3000), "deep.html")
    assert "starts with this" in extracted.text and "ends with this" not in extracted.text
    # (markitdown, given the 2048 levels read, also falls back to plain text, and says so)
    assert extracted.warnings[0] == (
        "elements nested more than 2,048 deep: the page's text from there on is not read"
    )


def test_markitdown_reading_a_page_as_plain_text_says_so():
    # Past Python's recursion limit markitdown drops the Markdown (headings, lists) silently.
    extracted = MarkitdownHtmlReader().read(_nested(1500), "deep.html")
    assert "deepest sentence" in extracted.text
    assert extracted.warnings == (PLAIN_TEXT_FALLBACK,)


@pytest.mark.parametrize("reader", HTML_READERS, ids=lambda r: r.name)
def test_the_depth_warning_does_not_hang_on_the_parsers_wording(reader, monkeypatch):
    # The warning matched libxml2's "Excessive depth in document": reworded (or said in
    # another log), the loss went unsaid. The reader measures the tree the parser built.
    import lxml.html

    class Unsaid(lxml.html.HTMLParser):
        error_log = ()  # (what a libxml2 that words it otherwise would leave to match)

    monkeypatch.setattr(lxml.html, "HTMLParser", Unsaid)
    extracted = reader.read(_nested(3000), "deep.html")
    assert "ends with this" not in extracted.text
    assert extracted.warnings[0] == (
        "elements nested more than 2,048 deep: the page's text from there on is not read"
    )
    # (a page within the parser's depth is read whole: markitdown may still fall back to text)
    assert not any("deep:" in w for w in reader.read(_nested(2000), "deep.html").warnings)


def test_markitdowns_plain_text_fallback_does_not_hang_on_its_wording(monkeypatch):
    # The warning matched markitdown's "too deeply nested"; the reader now has markitdown raise
    # (strict) and falls back itself. Reworded, the real library's warning says nothing here.
    import warnings as python_warnings

    from markitdown.converters import _html_converter

    class Reworded:
        @staticmethod
        def warn(message, *args, **kwargs):
            python_warnings.warn("Maximum nesting exceeded; using text.", *args, **kwargs)

    monkeypatch.setattr(_html_converter, "warnings", Reworded)
    extracted = MarkitdownHtmlReader().read(_nested(1500), "deep.html")
    assert "deepest sentence" in extracted.text and "ends with this" in extracted.text
    assert extracted.warnings == (PLAIN_TEXT_FALLBACK,)


XHTML = (
    '<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html [\n  <!ENTITY company "Kestrel Labs">\n]>\n'
    '<html xmlns="http://www.w3.org/1999/xhtml"><head><title>Badges</title></head><body>'
    "<h1>Badges</h1><p>Badges of &company; are printed at the front desk, in one working day.</p>"
    "</body></html>"
)


@pytest.mark.parametrize("reader", HTML_READERS, ids=lambda r: r.name)
def test_an_xhtml_internal_dtd_is_no_text_and_its_entities_are_named(reader):
    extracted = reader.read(XHTML.encode(), "badges.xhtml")
    assert extracted.text == (
        "# Badges\n\nBadges of &company; are printed at the front desk, in one working day.\n"
    )
    assert extracted.warnings == (
        "entities declared in the page's DTD are not expanded: &company; left as written",
    )


@pytest.mark.parametrize("reader", HTML_READERS, ids=lambda r: r.name)
def test_a_utf16_declaration_on_ascii_bytes_is_read_as_utf8(reader):
    page = (
        '<html><head><meta charset="utf-16"><title>Hours</title></head><body>'
        "<p>The office opens at 08:00 and closes at 19:00 on weekdays – café included.</p>"
        "</body></html>"
    )
    extracted = reader.read(page.encode("utf-8"), "hours.html")
    assert (
        "The office opens at 08:00 and closes at 19:00 on weekdays – café included."
        in extracted.text
    )
    assert extracted.warnings == ()
    assert decode_html(page.encode("utf-16")) == page  # a real UTF-16 page has its byte-order mark


@pytest.mark.parametrize("reader", HTML_READERS, ids=lambda r: r.name)
def test_bytes_not_valid_in_the_declared_encoding_are_counted(reader):
    page = (
        b'<html><head><meta charset="utf-8"></head><body><p>The price is \xff\xfe15 per badge, '
        b"printed at the front desk.</p></body></html>"
    )
    extracted = reader.read(page, "price.html")
    assert "The price is \ufffd\ufffd15 per badge" in extracted.text
    assert extracted.warnings == ("2 byte sequences not valid utf-8 read as U+FFFD",)
    assert (
        decode_html("<p>Kept: \ufffd</p>".encode()) == "<p>Kept: \ufffd</p>"
    )  # its own U+FFFD is no loss
