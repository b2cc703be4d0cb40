"""``sweep.chunking.pages``: one chunk per page of real PDFs, slides and sheets read by the
real readers; the cap splits a long page at sentence ends inside it; documents without
pages fall back; the counts and the note say what happened."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from documents import write_pdf, write_pptx, write_xlsx
from sweep.chunking import PageChunker, UnknownChunkSetting, build_chunker
from sweep.chunking.pages import UnreadablePages, fallback_strategies, page_units
from sweep.core.errors import BadInput, InvalidSetting
from sweep.core.text.sentences import sentence_cuts, sentence_rule
from sweep.core.tokenization import count_tokens, get_encoding
from sweep.core.types import Chunk, Document
from sweep.datasets.loading import load_corpus

ENC = get_encoding("cl100k_base")

#: Sentences of a page longer than any small cap: English, Japanese and Russian prose.
LONG_EN = " ".join(
    f"Pump {i} is checked every morning before the shift begins, and its log is signed."
    for i in range(20)
)
LONG_JA = "".join(f"ポンプ{i}は毎朝、作業の前に点検し、記録に署名します。" for i in range(12))
LONG_RU = " ".join(
    f"Насос {i} проверяют каждое утро перед сменой и подписывают журнал." for i in range(12)
)


def read(folder: Path) -> dict[str, Document]:
    """The documents of ``folder``, as the real readers give them."""
    return {d.doc_id: d for d in load_corpus(folder, cache_dir="off")}


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """A PDF with a one-line page, an empty page, two pages longer than a small cap (one
    English, one Russian), a short page and a blank one; a deck whose second slide is
    longer than the cap (Japanese: the PDF font has no CJK glyphs), a workbook and a
    Markdown note."""
    root = tmp_path_factory.mktemp("paged")
    docs = root / "docs"
    docs.mkdir()
    write_pdf(
        docs / "manual.pdf",
        [
            ["# Manual", "One line."],
            [],
            [LONG_EN],
            [LONG_RU],
            ["Short page."],
            [" "],
        ],
    )
    write_pptx(
        docs / "deck.pptx",
        [
            ("Intro", ["a first bullet", "a second one"]),
            ("点検", [LONG_JA]),
            ("Costs", ["120 EUR"]),
        ],
    )
    write_xlsx(docs / "book.xlsx", {"Costs": [["item", "eur"], ["pump", 120]]})
    (docs / "note.md").write_text(
        "# Notes\n\nA short note.\n\n## More\n\nIts second section.\n", encoding="utf-8"
    )
    return root


def pages_of(doc: Document) -> list[list[int]]:
    return list(doc.metadata.get("pages") or [])


def check(doc: Document, chunks: list[Chunk], size: int) -> None:
    """The contract every strategy owes, and the page strategy's own: no chunk holds text
    of two pages (no page but the first starts strictly inside a chunk: text before the
    first page is chunked with it)."""
    covered = np.zeros(len(doc.text), dtype=bool)
    later = sorted({a for a, _ in pages_of(doc) if a < len(doc.text)})[1:]
    for i, c in enumerate(chunks):
        assert c.chunk_id == f"{doc.doc_id}#{i}" and c.text == doc.text[c.start : c.end]
        assert c.text.strip() and c.text == c.text.strip()
        assert c.n_tokens == count_tokens(ENC, c.text) and (c.n_tokens <= size or len(c.text) == 1)
        assert i == 0 or c.start >= chunks[i - 1].start
        covered[c.start : c.end] = True
        assert not [a for a in later if c.start < a < c.end], (c, pages_of(doc))
    assert all(doc.text[k].isspace() for k in np.flatnonzero(~covered))


def on_page(doc: Document, c: Chunk) -> list[int]:
    """The pages (1-based) whose range the chunk overlaps."""
    return [n for n, (a, b) in enumerate(pages_of(doc), 1) if a < c.end and c.start < b]


def test_a_page_that_fits_is_one_chunk_and_blank_pages_give_none(folder):
    pdf = read(folder)["manual.pdf"]
    pages = pages_of(pdf)
    assert len(pages) == 6 and pdf.metadata["reader"] == "pypdf"
    chunker = build_chunker("page", 1024)
    chunks = chunker.chunk_documents([pdf])
    check(pdf, chunks, 1024)
    # Pages 2 and 6 are blank; every other page is one chunk: its text, stripped.
    assert [on_page(pdf, c) for c in chunks] == [[1], [3], [4], [5]]
    assert [c.text for c in chunks] == [
        pdf.text[a:b].strip() for n, (a, b) in enumerate(pages, 1) if n not in (2, 6)
    ]
    assert chunks[0].text == "Manual\n\nOne line." and chunks[-1].text == "Short page."
    assert dict(chunker.tally) == {"n_pages": 4, "pages_split": 0, "docs_without_pages": 0}
    assert chunker.tally_notes == (
        "page: no page is longer than chunk.size=1024 (4 pages, each one chunk); "
        "2 blank pages gave no chunk",
    )


@pytest.mark.parametrize("overlap", [0, 32])  # a Russian sentence here is 29 tokens
def test_a_page_over_the_cap_is_split_at_its_sentence_ends_and_never_with_another_page(
    folder, overlap
):
    pdf = read(folder)["manual.pdf"]
    size = 64
    chunker = build_chunker("page", size, overlap)
    chunks = chunker.chunk_documents([pdf])
    check(pdf, chunks, size)
    by_page: dict[int, list[Chunk]] = {}
    for c in chunks:
        (page,) = on_page(pdf, c)  # never two pages
        by_page.setdefault(page, []).append(c)
    assert sorted(by_page) == [1, 3, 4, 5]
    for page in (3, 4):  # the long pages: several chunks, each ending a sentence
        a, b = pages_of(pdf)[page - 1]
        ends = {a + len(pdf.text[a:b].rstrip())} | set(
            sentence_cuts(pdf.text, a, b, sentence_rule(pdf.text))
        )
        pieces = by_page[page]
        assert len(pieces) > 1
        for c in pieces:
            rest = pdf.text[c.end : b]
            assert c.end in ends or (c.end + len(rest) - len(rest.lstrip())) in ends, c.text
        shared = [p for p, q in pairwise(pieces) if q.start < p.end]
        assert bool(shared) == (overlap > 0)  # sentences repeated inside the page only
    assert [len(by_page[p]) for p in (1, 5)] == [1, 1]
    assert dict(chunker.tally) == {"n_pages": 4, "pages_split": 2, "docs_without_pages": 0}
    assert chunker.tally_notes[0] == (
        "page: 2 of 4 pages were longer than chunk.size=64 and were split at sentence ends; "
        "2 blank pages gave no chunk"
    )


def test_slides_are_pages_and_documents_without_pages_fall_back(folder):
    docs = read(folder)
    chunker = build_chunker("page", 256, 16)
    chunks = chunker.chunk_documents(list(docs.values()))
    mine = {d: [c for c in chunks if c.doc_id == d] for d in docs}
    for doc_id, doc in docs.items():
        check(doc, mine[doc_id], 256)
    deck = docs["deck.pptx"]
    slides = [on_page(deck, c) for c in mine["deck.pptx"]]
    assert slides[0] == [1] and slides[-1] == [3] and len(slides) > 3  # the long slide: split
    assert all(s == [2] for s in slides[1:-1])
    # Without pages (Markdown): the fallback's chunks, as that strategy alone makes them.
    without = [d for d in docs.values() if not pages_of(d)]
    assert without == [docs["note.md"]]
    for doc in without:
        assert mine[doc.doc_id] == build_chunker("paragraph", 256, 16).chunk(doc)
    sheets = pages_of(docs["book.xlsx"])  # a workbook's sheet is a page
    assert len(sheets) == 1
    assert [on_page(docs["book.xlsx"], c) for c in mine["book.xlsx"]] == [[1]]
    n_pages = 4 + 3 + len(sheets)
    assert dict(chunker.tally) == {
        "n_pages": n_pages,
        "pages_split": 3,
        "docs_without_pages": len(without),
    }
    assert chunker.tally_notes == (
        f"page: 3 of {n_pages} pages were longer than chunk.size=256 and were split at "
        "sentence ends; 2 blank pages gave no chunk; 1 document has no pages and was "
        "chunked by paragraph",
        "documents without pages: overlap is ignored by strategy 'paragraph' (got 16)",
    )
    # Another fallback: the Markdown note cut at its headings.
    by_markdown = build_chunker("page", 256, page_fallback="markdown")
    note = docs["note.md"]
    assert by_markdown.chunk(note) == build_chunker("markdown", 256).chunk(note)
    assert [c.text for c in by_markdown.chunk(note)] == [
        "# Notes\n\nA short note.",
        "## More\n\nIts second section.",
    ]


def test_a_corpus_without_pages_says_so_and_counts_no_page():
    chunker = build_chunker("page", 64, page_fallback="sentence")
    docs = [Document("a.md", "Первое предложение. Второе."), Document("b.txt", "日本語の文です。")]
    assert chunker.chunk_documents(docs) == build_chunker("sentence", 64).chunk_documents(docs)
    assert dict(chunker.tally) == {"n_pages": 0, "pages_split": 0, "docs_without_pages": 2}
    assert chunker.tally_notes == ("page: 2 documents have no pages and were chunked by sentence",)
    one = build_chunker("page", 64)
    one.chunk_documents(docs[:1])
    assert one.tally_notes == ("page: 1 document has no pages and was chunked by paragraph",)


def test_the_tally_is_of_the_last_run_and_empty_before():
    chunker = build_chunker("page", 64)
    assert dict(chunker.tally) == {} and chunker.tally_notes == ()
    paged = Document("p.pdf", "One.\n\nTwo.", metadata={"pages": [[0, 4], [6, 10]]})
    chunker.chunk_documents([paged, paged])
    assert chunker.tally["n_pages"] == 4
    chunker.chunk_documents([paged])
    assert chunker.tally["n_pages"] == 2
    with pytest.raises(TypeError):
        chunker.tally["n_pages"] = 0  # read-only
    blank = Document("b.pdf", " \n ", metadata={"pages": [[0, 1], [2, 3]]})
    assert chunker.chunk_documents([blank]) == []
    assert chunker.tally_notes == ("page: no page has text; 2 blank pages gave no chunk",)
    chunker.chunk_documents([Document("o.pdf", "Only.", metadata={"pages": [[0, 5]]})])
    assert chunker.tally_notes == (
        "page: no page is longer than chunk.size=64 (1 page, each one chunk)",
    )


@pytest.mark.parametrize("value", ["semantic", "page", "paragrph", "", 3])
def test_a_bad_fallback_is_one_line_naming_the_valid_ones(value):
    with pytest.raises(UnknownChunkSetting) as e:
        build_chunker("page", 64, page_fallback=value)
    message = str(e.value)
    assert "\n" not in message and isinstance(e.value, InvalidSetting)
    assert message.startswith(f"chunk.page_fallback={value!r} cannot chunk documents without")
    assert message.endswith("; valid: token, sentence, paragraph, recursive, markdown")
    assert fallback_strategies() == ("token", "sentence", "paragraph", "recursive", "markdown")
    if value == "paragrph":
        assert "(did you mean 'paragraph'?)" in message
    if value == "semantic":
        assert "(semantic embeds text to cut it)" in message


def test_page_ranges_that_are_not_offsets_are_one_line():
    for pages, said in (
        ("0-10", "metadata pages is str"),
        ([[0, 4], [5]], "metadata pages[1] is [5]"),
        ([[0, "4"]], "metadata pages[0] is [0, '4']"),
    ):
        with pytest.raises(UnreadablePages) as e:
            build_chunker("page", 64).chunk(
                Document("x.pdf", "Some text.", metadata={"pages": pages})
            )
        assert str(e.value).startswith("document 'x.pdf': " + said) and isinstance(
            e.value, BadInput
        )


def test_text_outside_every_page_goes_with_the_page_before_it():
    # A reader's separators are whitespace; text outside the ranges (a corpus file's own
    # pages) is still chunked: before page 1 with page 1, between pages with the earlier one.
    text = "Cover. First page. Between. Second page. Tail."
    doc = Document("d", text, metadata={"pages": [[7, 18], [28, 40]]})
    chunks = build_chunker("page", 64).chunk(doc)
    check(doc, chunks, 64)
    assert [c.text for c in chunks] == ["Cover. First page. Between.", "Second page. Tail."]
    # Offsets past the text, a page listed twice, pages out of order: still one cut each.
    odd = Document("e", text, metadata={"pages": [[28, 99], [7, 18], [7, 18], [500, 600]]})
    assert build_chunker("page", 64).chunk(odd) == build_chunker("page", 64).chunk(
        Document("e", text, metadata={"pages": [[7, 18], [28, 40]]})
    )
    assert page_units(Document("n", "", metadata={"pages": [[0, 0]]})) == ([], 1)
    assert page_units(Document("n", "text")) is None


FRAGMENTS = [
    "The sensor is calibrated every 180 days. ",
    "Is it? ",
    "日本語の文です。",
    "Насос проверяют утром. ",
    "\n\n",
    "\n",
    " ",
    "x" * 120,
    "word " * 30,
]


@st.composite
def paged_documents(draw) -> Document:
    text = "".join(draw(st.lists(st.sampled_from(FRAGMENTS), max_size=25)))
    n = len(text)
    bounds = draw(st.lists(st.tuples(st.integers(0, n + 5), st.integers(0, n + 5)), max_size=8))
    return Document("d.pdf", text, metadata={"pages": [[a, b] for a, b in bounds]})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=paged_documents(), size=st.integers(1, 80), overlap_share=st.floats(0, 0.9))
def test_the_contract_holds_for_any_page_ranges(doc: Document, size: int, overlap_share):
    overlap = int(size * overlap_share)
    chunker = build_chunker("page", size, overlap, prefix="title+headings")
    assert isinstance(chunker, PageChunker)
    chunks = chunker.chunk_documents([doc])
    check(doc, chunks, size)
    assert chunker.chunk(doc) == chunks  # the same chunks however they are asked for
    units, listed = page_units(doc) or ([], 0)
    assert listed == len(pages_of(doc))
    # the units tile the text, cut at every page's start inside it but the first's
    starts = sorted({a for a, _ in pages_of(doc) if a < len(doc.text)})[1:]
    assert [a for a, _ in units[1:]] == starts
    assert [b for _, b in units[:-1]] == starts
    assert (
        (units[0][0], units[-1][1]) == (0, len(doc.text)) if units else not doc.text or not listed
    )
    tally = chunker.tally
    assert tally["docs_without_pages"] == (0 if pages_of(doc) else 1)
    assert 0 <= tally["pages_split"] <= tally["n_pages"] <= max(listed, 1)
