"""The registry: formats by suffix, readers by name, defaults, one-line errors."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from sweep.datasets.readers.base import Reader
from sweep.datasets.readers.registry import (
    DEFAULT_READERS,
    FORMATS,
    READERS,
    format_of,
    reader_for,
    resolve_readers,
)


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("report.pdf", "pdf"),
        ("Report.PDF", "pdf"),
        ("a/b/page.htm", "html"),
        ("x.XHTML", "html"),
        ("memo.docx", "docx"),
        ("deck.pptx", "pptx"),
        ("book.xlsx", "xlsx"),
        ("notes.md", "text"),
        ("README.rst", "text"),
        ("paper.tex", "text"),
        ("archive.tar.gz", None),
        ("Makefile", None),
        ("old.doc", None),
        (".md", None),
    ],
)
def test_format_of_goes_by_the_lower_cased_suffix(name: str, fmt: str | None) -> None:
    assert format_of(name) == fmt


def test_every_format_has_readers_and_a_default() -> None:
    assert set(FORMATS) == set(READERS) == set(DEFAULT_READERS)
    assert DEFAULT_READERS == {
        "pdf": "pypdf",
        "html": "trafilatura",
        "docx": "markitdown",
        "pptx": "markitdown",
        "xlsx": "markitdown",
        "text": "text",
    }
    suffixes = [s for group in FORMATS.values() for s in group]
    assert len(suffixes) == len(set(suffixes))


def test_every_reader_follows_the_protocol_and_versions_its_recipe() -> None:
    for fmt, readers in READERS.items():
        for name in readers:
            reader = reader_for(fmt, name)
            assert isinstance(reader, Reader)
            assert reader.name == name
            assert re.fullmatch(r"([\w.-]+==[\w.]+\+)*([\w-]+\+)*recipe\d+", reader.version), (
                reader.version
            )


def test_resolve_fills_in_the_defaults() -> None:
    readers = resolve_readers({"pdf": "pdfplumber"})
    assert set(readers) == set(FORMATS)
    assert readers["pdf"].name == "pdfplumber" and readers["html"].name == "trafilatura"
    assert {fmt: r.name for fmt, r in resolve_readers(None).items()} == DEFAULT_READERS


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: reader_for("pdf", "pdfplumbr"),
            "unknown pdf reader 'pdfplumbr' (did you mean 'pdfplumber'?); pdf readers: pypdf, pdfplumber",
        ),
        (
            lambda: reader_for("htm", "trafilatura"),
            "unknown format 'htm' (did you mean 'html'?); formats: pdf, html, docx, pptx, xlsx, text",
        ),
        (
            lambda: resolve_readers({"pfd": "pypdf"}),
            "unknown format 'pfd' (did you mean 'pdf'?); formats: pdf, html, docx, pptx, xlsx, text",
        ),
        (
            lambda: resolve_readers({"html": "readability"}),
            "unknown html reader 'readability'; html readers: trafilatura, markitdown",
        ),
        (
            lambda: resolve_readers({"pdf": 3}),
            "the pdf reader must be a name (pypdf, pdfplumber), got 3",
        ),
    ],
)
def test_unknown_names_fail_on_one_line_with_the_valid_ones(call, message: str) -> None:
    with pytest.raises(ValueError) as e:
        call()
    assert str(e.value) == message


def test_importing_the_registry_loads_no_parser() -> None:
    heavy = (
        "pypdf",
        "pdfplumber",
        "pdfminer",
        "trafilatura",
        "lxml",
        "markitdown",
        "bs4",
        "mammoth",
    )
    code = (
        "import sys, sweep.datasets.readers.registry as r; r.resolve_readers(None); "
        f"print([m for m in sys.modules if m.split('.')[0] in {heavy!r}])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
