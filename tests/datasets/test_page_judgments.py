"""Evidence by page: a judgment naming a page (or its printed label) of a real PDF, deck or
workbook is that page's text; every span on a paged document carries the pages it
overlaps; each wrong page is one file:line problem."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from documents import write_pdf, write_pptx, write_xlsx
from sweep.core.types import Dataset, Document, Judgment, Query
from sweep.datasets.loading import (
    DatasetError,
    check_dataset,
    load_corpus,
    load_dataset,
    load_queries,
)
from sweep.datasets.pages import document_page_labels, document_pages, pages_of_span
from sweep.datasets.readers.pdf import PypdfReader
from sweep.datasets.readers.pdfplumber_reader import PdfplumberReader

# A book: two front-matter pages numbered i and ii, then pages 1 to 3, the 4th of the file
# blank (a picture page), and a sentence that runs on from page 1 onto page 2 of the body.
BOOK = [
    ["# Foreword", "Этот отчёт подготовлен отделом финансов для совета директоров."],
    ["# Contents", "Revenue and costs are discussed in the chapters that follow."],
    [
        "# Revenue",
        "Revenue grew by twelve percent in the third quarter, driven by the new depots",
    ],
    [],
    ["opened in Lisbon and Porto, which together served four thousand customers."],
]


def _label(path: Path, ranges: list[tuple[int, int, str, str | None, int]]) -> Path:
    """``path`` rewritten with page labels: ``(first, last, style, prefix, start)`` each."""
    from pypdf import PdfWriter

    writer = PdfWriter(clone_from=str(path))
    for first, last, style, prefix, start in ranges:
        writer.set_page_label(first, last, style, prefix, start)
    with open(path, "wb") as f:
        writer.write(f)
    return path


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("paged")
    docs = root / "docs"
    docs.mkdir()
    _label(
        write_pdf(docs / "book.pdf", BOOK, page_numbers=None),
        [(0, 1, "/r", None, 1), (2, 4, "/D", None, 1)],
    )
    write_pdf(
        docs / "plain.pdf",
        [["Page one says the depot opens at eight."], ["Page two says it closes at six."]],
        page_numbers=None,
    )
    _label(  # labels in other scripts: an annex's "Прил-1", a Japanese appendix's "付録-2"
        write_pdf(
            docs / "annex.pdf",
            [["Приложение: тарифы на доставку."], ["Вторая страница приложения."]],
            page_numbers=None,
        ),
        [(0, 0, "/D", "Прил-", 1), (1, 1, "/D", "付録-", 2)],
    )
    write_xlsx(
        docs / "finance.xlsx",
        {
            "Продажи": [["месяц", "сумма"], ["март", 1200]],
            "売上": [["月", "金額"], ["三月", 3400]],
            "Summary": [["total"], [4600]],
        },
    )
    write_pptx(docs / "deck.pptx", [("Plan", ["Open two depots"]), ("Costs", ["Rent rises"])])
    (docs / "notes.md").write_text("# Notes\n\nThe depot opens at eight.\n", encoding="utf-8")
    (root / "queries.jsonl").write_text("", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def documents(folder) -> dict[str, Document]:
    return {d.doc_id: d for d in load_corpus(folder, cache_dir="off")}


def _with_questions(folder: Path, tmp_path: Path, *relevant: list[dict]) -> Path:
    """A copy of the dataset (its documents linked) with one question per ``relevant``."""
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "docs").symlink_to(folder / "docs")
    rows = [
        {"query_id": f"q{i}", "query": "Where?", "relevant": items}
        for i, items in enumerate(relevant, 1)
    ]
    (tmp_path / "queries.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )
    return tmp_path


def _load(folder: Path, tmp_path: Path, *relevant: list[dict], **read) -> Dataset:
    return load_dataset(
        _with_questions(folder, tmp_path, *relevant), cache_dir="off", follow_links=True, **read
    )


# --------------------------------------------------------------------------- readers


def test_a_pdf_keeps_its_page_labels_and_every_pdf_reader_reads_the_same(folder, documents):
    book = documents["book.pdf"]
    assert document_page_labels(book) == ("i", "ii", "1", "2", "3")
    assert book.metadata["page_labels"] == ["i", "ii", "1", "2", "3"]
    data = (folder / "docs" / "book.pdf").read_bytes()
    assert PdfplumberReader().read(data, "book.pdf").page_labels == ("i", "ii", "1", "2", "3")
    # Without /PageLabels a PDF's pages are just 1 to n: no labels are recorded.
    plain = documents["plain.pdf"]
    assert len(document_pages(plain)) == 2
    assert "page_labels" not in plain.metadata and document_page_labels(plain) == ()
    assert (
        PypdfReader().read((folder / "docs" / "plain.pdf").read_bytes(), "p.pdf").page_labels == ()
    )


def test_a_workbooks_sheets_are_its_pages_labelled_with_their_names(documents):
    book = documents["finance.xlsx"]
    pages = document_pages(book)
    assert document_page_labels(book) == ("Продажи", "売上", "Summary")
    assert [book.text[a:b].split("\n")[0] for a, b in pages] == [
        "## Продажи",
        "## 売上",
        "## Summary",
    ]
    assert "三月" in book.text[pages[1][0] : pages[1][1]]
    deck = documents["deck.pptx"]
    assert len(document_pages(deck)) == 2 and document_page_labels(deck) == ()


def test_page_labels_survive_the_extraction_cache(folder, tmp_path, monkeypatch):
    from sweep.datasets import extraction

    data = (folder / "docs" / "book.pdf").read_bytes()
    first = extraction.extract(data, "book.pdf", PypdfReader(), tmp_path)
    monkeypatch.setattr(extraction, "_memo", {})
    again = extraction.extract(data, "book.pdf", PypdfReader(), tmp_path)
    assert again == first and again.page_labels == ("i", "ii", "1", "2", "3")
    (entry,) = tmp_path.rglob("*.json")
    assert json.loads(entry.read_text(encoding="utf-8"))["page_labels"] == list(first.page_labels)


def test_labels_must_be_one_per_page():
    from sweep.datasets.readers.base import Extracted

    with pytest.raises(ValueError, match="2 page labels for 1 pages"):
        Extracted("text", pages=((0, 4),), page_labels=("i", "ii"))


# --------------------------------------------------------------------------- judgments


def test_a_page_is_its_text_and_a_label_names_the_page_it_prints(folder, documents, tmp_path):
    dataset = _load(
        folder,
        tmp_path,
        [{"doc_id": "book.pdf", "page": 3, "grade": 2}],
        [{"doc_id": "book.pdf", "page_label": "ii"}],
        [{"doc_id": "finance.xlsx", "page_label": "売上"}, {"doc_id": "deck.pptx", "page": 2}],
        [
            {"doc_id": "annex.pdf", "page_label": "付録-2"},
            {"doc_id": "annex.pdf", "page_label": "Прил-1"},
        ],
    )
    book, finance, deck = (
        document_pages(documents[d]) for d in ("book.pdf", "finance.xlsx", "deck.pptx")
    )
    (s, e) = book[2]
    assert dataset.queries[0].relevant == (
        Judgment("book.pdf", s, e, grade=2, page=3, page_label=None, pages=((3, s, e),)),
    )
    assert documents["book.pdf"].text[s:e].startswith("Revenue\n\nRevenue grew")
    (s, e) = book[1]
    assert dataset.queries[1].relevant == (
        Judgment("book.pdf", s, e, page=2, page_label="ii", pages=((2, s, e),)),
    )
    (s, e), (s2, e2) = finance[1], deck[1]
    assert dataset.queries[2].relevant == (
        Judgment("finance.xlsx", s, e, page=2, page_label="売上", pages=((2, s, e),)),
        Judgment("deck.pptx", s2, e2, page=2, pages=((2, s2, e2),)),
    )
    annex = document_pages(documents["annex.pdf"])
    assert [(j.page, j.page_label, j.pages) for j in dataset.queries[3].relevant] == [
        (2, "付録-2", ((2, *annex[1]),)),
        (1, "Прил-1", ((1, *annex[0]),)),
    ]
    assert documents["annex.pdf"].text[slice(*annex[1])] == "Вторая страница приложения."
    assert all(q.has_unit("page") and q.has_unit("span") for q in dataset.queries)


def test_every_span_carries_the_pages_it_overlaps(folder, documents, tmp_path):
    book = documents["book.pdf"]
    pages = document_pages(book)
    # The sentence that runs on from the 3rd page of the file over the blank 4th onto the 5th.
    quote = "driven by the new depots opened in Lisbon"
    start = book.text.index(quote)
    assert start < pages[2][1] and start + len(quote) > pages[4][0]
    dataset = _load(
        folder,
        tmp_path,
        [{"doc_id": "book.pdf", "quote": quote}],
        [{"doc_id": "book.pdf", "start": pages[0][0], "end": pages[0][0] + 5}],
        [{"doc_id": "book.pdf"}, {"doc_id": "notes.md", "quote": "opens at eight"}],
        [{"doc_id": "finance.xlsx", "quote": "март"}],
    )
    across, offsets, whole = (q.relevant for q in dataset.queries[:3])
    assert across[0].pages == ((3, *pages[2]), (5, *pages[4]))  # the blank page holds nothing
    assert across[0].page is None and across[0].located == "exact"
    assert offsets[0].pages == ((1, *pages[0]),)
    assert whole[0].pages == () and whole[1].pages == ()  # a whole document; no pages
    assert dataset.queries[3].relevant[0].pages == (
        (1, *document_pages(documents["finance.xlsx"])[0]),
    )
    assert not dataset.queries[2].has_unit("page")


def _problem(folder: Path, tmp_path: Path, judgment: dict) -> str:
    problems = check_dataset(
        _with_questions(folder, tmp_path, [judgment]), cache_dir="off", follow_links=True
    )
    assert len(problems) == 1, problems
    (problem,) = problems
    assert problem.line == 1 and "\n" not in str(problem)
    assert str(problem).startswith(f"{tmp_path / 'queries.jsonl'}:1: relevant[0]: ")
    return problem.message


@pytest.mark.parametrize(
    ("judgment", "words"),
    [
        (
            {"doc_id": "notes.md", "page": 1},
            "'notes.md' has no pages (a .md file); use a quote or offsets",
        ),
        ({"doc_id": "book.pdf", "page": 0}, "page must be an integer >= 1 (the first page is 1"),
        ({"doc_id": "book.pdf", "page": -2}, "got number -2"),
        ({"doc_id": "book.pdf", "page": 2.5}, "got number 2.5"),
        ({"doc_id": "book.pdf", "page": "3"}, "got string '3'"),
        ({"doc_id": "book.pdf", "page": True}, "got true"),
        (
            {"doc_id": "book.pdf", "page": 14},
            "page 14 of 'book.pdf' is past its last page (5 pages)",
        ),
        (
            {"doc_id": "book.pdf", "page_label": "IV"},
            "page_label 'IV' is none of the page labels of 'book.pdf' "
            "(labels 'i', 'ii', '1', '2', '3')",
        ),
        ({"doc_id": "book.pdf", "page_label": "II"}, "(did you mean 'ii'?)"),
        (
            {"doc_id": "finance.xlsx", "page_label": "Продажа"},
            "(labels 'Продажи', '売上', 'Summary') (did you mean 'Продажи'?)",
        ),
        (
            {"doc_id": "plain.pdf", "page_label": "1"},
            "page_label '1': 'plain.pdf' has no page labels; use \"page\": N (1 to 2)",
        ),
        (
            {"doc_id": "deck.pptx", "page_label": "Costs"},
            "'deck.pptx' has no page labels",
        ),
        (
            {"doc_id": "book.pdf", "page": 4},
            "page 4 of 'book.pdf' has no text (its reader found none on it",
        ),
        (
            {"doc_id": "book.pdf", "page_label": "2"},
            "page 4 (labelled '2') of 'book.pdf' has no text",
        ),
        ({"doc_id": "book.pdf", "page_label": ""}, "page_label must be the label a page prints"),
        (
            {"doc_id": "book.pdf", "page": 1, "page_label": "i"},
            "give page or page_label, not both",
        ),
        (
            {"doc_id": "book.pdf", "page": 1, "start": 0, "end": 4},
            "page names a whole page: leave out start, end (a span inside the page",
        ),
        (
            {"doc_id": "book.pdf", "page_label": "i", "quote": "Foreword"},
            "page_label names a whole page: leave out quote",
        ),
        (
            {"doc_id": "book.pdf", "page": 2, "occurrence": 1, "context": "x"},
            "page names a whole page: leave out occurrence, context",
        ),
        (
            {"doc_id": "book.pdf", "pgae": 1},
            "unknown key 'pgae' (allowed: doc_id, start, end, grade, quote, occurrence, context, page, page_label)",
        ),
    ],
)
def test_each_wrong_page_is_one_line_naming_the_question(folder, tmp_path, judgment, words):
    assert words in _problem(folder, tmp_path, judgment)


def _queries_problem(tmp_path: Path, doc: Document, judgment: dict) -> str:
    """The one problem of a question with ``judgment`` on the in-memory document ``doc``."""
    row = {"query_id": "q", "query": "?", "relevant": [{"doc_id": doc.doc_id, **judgment}]}
    (tmp_path / "queries.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError) as e:
        load_queries(tmp_path, [doc])
    (problem,) = e.value.problems
    return problem.message


def test_long_label_lists_are_shortened(tmp_path):
    # (a corpus.jsonl row may carry pages and labels as a reader records them)
    doc = Document(
        "long.pdf",
        "x" * 40,
        metadata={
            "pages": [[i, i + 1] for i in range(40)],
            "page_labels": [f"A-{i}" for i in range(1, 41)],
        },
    )
    message = _queries_problem(tmp_path, doc, {"page_label": "B-7"})
    assert (
        "labels 'A-1', 'A-2', 'A-3', 'A-4', 'A-5', 'A-6', ..., 'A-39', 'A-40' (40 pages)" in message
    )
    assert message.endswith("(did you mean 'A-7'?)")


def test_a_label_on_two_pages_names_them(tmp_path):
    doc = Document(
        "twice.pdf", "abcd", metadata={"pages": [[0, 2], [2, 4]], "page_labels": ["x", "x"]}
    )
    assert _queries_problem(tmp_path, doc, {"page_label": "x"}) == (
        "relevant[0]: page_label 'x' is on pages 1 and 2 of 'twice.pdf'; use \"page\": N"
    )


def test_pages_a_document_cannot_have_are_no_pages(tmp_path):
    # Ranges out of order or past the text: the row's "pages" are not a reader's.
    doc = Document("odd.pdf", "abcd", metadata={"pages": [[2, 4], [0, 2]]})
    assert _queries_problem(tmp_path, doc, {"page": 1}) == (
        "relevant[0]: 'odd.pdf' has no pages (a corpus.jsonl document without \"pages\"); "
        "use a quote or offsets"
    )
    assert document_pages(Document("x", "ab", metadata={"pages": [[0, 5]]})) == ()
    assert (
        document_page_labels(
            Document("x", "ab", metadata={"pages": [[0, 2]], "page_labels": ["a", "b"]})
        )
        == ()
    )


# --------------------------------------------------------------------------- hashes and validate


def test_page_judgments_are_the_same_questions_under_every_pdf_reader(folder, tmp_path):
    relevant = [{"doc_id": "book.pdf", "page": 3}, {"doc_id": "book.pdf", "page_label": "ii"}]
    folder_ = _with_questions(folder, tmp_path, relevant)
    read = {"cache_dir": "off", "follow_links": True}
    pypdf_ = load_dataset(folder_, **read)
    plumber = load_dataset(folder_, reader={"pdf": "pdfplumber"}, **read)
    assert pypdf_.evaluation_key() == plumber.evaluation_key()
    # (offsets into one reader's text are that reader's own question)
    (tmp_path / "queries.jsonl").write_text(
        json.dumps(
            {
                "query_id": "q",
                "query": "?",
                "relevant": [{"doc_id": "book.pdf", "start": 0, "end": 3}],
            }
        )
        + "\n",
        encoding="utf-8",
    )
    assert (
        load_dataset(folder_, **read).evaluation_key()
        != load_dataset(folder_, reader={"pdf": "pdfplumber"}, **read).evaluation_key()
    )


def test_a_page_judgment_is_keyed_by_its_page_not_its_offsets():
    doc = Document("a.pdf", "one\n\ntwo", metadata={"reader": "pypdf", "pages": [[0, 3], [5, 8]]})

    def key(*relevant: Judgment) -> str:
        return Dataset("d", (doc,), (Query("q", "?", relevant),)).evaluation_key()

    by_page = Judgment("a.pdf", 5, 8, page=2, pages=((2, 5, 8),))
    assert key(by_page) == key(Judgment("a.pdf", 0, 3, page=2, pages=((2, 0, 3),)))
    assert key(by_page) != key(Judgment("a.pdf", 5, 8, pages=((2, 5, 8),)))
    assert key(by_page) != key(Judgment("a.pdf", 5, 8, page=2, page_label="ii"))


def test_the_fingerprint_of_a_set_without_page_judgments_is_unchanged():
    """Pinned before judgments could name pages: old sweeps stay comparable with new ones."""
    docs = (
        Document(
            "report.pdf",
            "Выручка выросла на 12%.\n\n売上は増加した。",
            "Отчёт",
            {
                "format": "pdf",
                "reader": "pypdf",
                "source_sha256": "ab" * 32,
                "pages": [[0, 23], [25, 33]],
            },
        ),
        Document("notes.md", "# Notes\n\nPlain text.", "Notes"),
    )
    queries = (
        Query(
            "q1",
            "На сколько выросла выручка?",
            (Judgment("report.pdf", 0, 23, 2, quote="Выручка выросла на 12%.", located="exact"),),
        ),
        Query("q2", "売上は?", (Judgment("report.pdf", 25, 33), Judgment("notes.md", grade=0))),
        Query("q3", "notes", (Judgment("notes.md", 9, 20),)),
    )
    dataset = Dataset("pinned", docs, queries)
    assert (dataset.fingerprint(), dataset.evaluation_key()) == (
        "8f2b2c58dded6049",
        "eec166c641f50b05",
    )
    # A span's pages are derived from its range, which the fingerprint already holds.
    with_pages = Dataset(
        "pinned",
        docs,
        tuple(
            Query(q.query_id, q.query, tuple(_with_units(j, docs[0]) for j in q.relevant))
            for q in queries
        ),
    )
    assert with_pages.fingerprint() == "8f2b2c58dded6049"


def _with_units(j: Judgment, doc: Document) -> Judgment:
    from dataclasses import replace

    if j.doc_id != doc.doc_id or not j.is_span:
        return j
    return replace(j, pages=pages_of_span(document_pages(doc), j.start, j.end))


def test_validate_counts_the_judgments_by_page(folder, tmp_path, capsys, monkeypatch):
    from sweep.validate.__main__ import main as validate_main

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))

    dataset = _with_questions(
        folder,
        tmp_path / "set",
        [{"doc_id": "book.pdf", "page": 3}],
        [{"doc_id": "finance.xlsx", "page_label": "Summary"}],
        [{"doc_id": "notes.md", "quote": "opens at eight"}],
        [{"doc_id": "plain.pdf", "quote": "closes at six"}],
    )
    assert validate_main([str(dataset), "--follow-links"]) == 0
    printed = capsys.readouterr().out
    assert (
        "pages: 2 judgments by page (1 by its label); 3 of 4 spans lie on a paged "
        "document's pages (3 queries have a page to find)"
    ) in printed
    assert "judgments   4   (4 spans, of which 2 by page, 0 whole-document; grade 1: 4)" in printed


# --------------------------------------------------------------------------- pages_of_span


def test_a_span_between_pages_is_on_the_page_before_it():
    pages = [(0, 10), (12, 12), (14, 20), (22, 30)]
    assert pages_of_span(pages, 10, 12) == ((1, 0, 10),)  # in the separator
    assert pages_of_span(pages, 9, 15) == ((1, 0, 10), (3, 14, 20))  # the empty page holds nothing
    assert pages_of_span([(5, 10)], 0, 3) == ((1, 5, 10),)  # before the first page's text
    assert pages_of_span([(0, 0)], 0, 3) == ()


@st.composite
def _paged(draw):
    """Pages as a reader makes them: in order, separated, some empty; and a span."""
    pages, position = [], 0
    for _ in range(draw(st.integers(1, 6))):
        position += draw(st.integers(0, 3))
        length = draw(st.integers(0, 9))
        pages.append((position, position + length))
        position += length
    start = draw(st.integers(0, position + 2))
    return pages, start, draw(st.integers(start + 1, position + 3))


@given(_paged())
def test_a_span_is_on_every_page_it_overlaps_and_never_on_an_empty_one(case):
    pages, start, end = case
    found = pages_of_span(pages, start, end)
    overlapped = [n for n, (a, b) in enumerate(pages, 1) if a < b and a < end and start < b]
    assert all(a < b and (a, b) == pages[n - 1] for n, a, b in found)
    if overlapped:
        assert [n for n, _, _ in found] == overlapped
    else:
        assert len(found) == (1 if any(a < b for a, b in pages) else 0)


# --------------------------------------------------------------------------- the kept corpus


def test_a_sweep_folder_keeps_the_page_labels(tmp_path):
    from sweep.store.corpus import CorpusError, keep_documents, read_kept_documents

    docs = (
        Document(
            "b.xlsx",
            "## Продажи\nмарт\n\n## 売上\n三月\n",
            metadata={"pages": [[0, 15], [17, 26]], "page_labels": ["Продажи", "売上"]},
        ),
        Document("a.md", "Plain text."),
    )
    path = keep_documents(tmp_path, Dataset("d", docs, ()), "0123456789abcdef")
    kept = read_kept_documents(path, inside=tmp_path)
    assert [d.page_labels for d in kept] == [("Продажи", "売上"), ()]
    assert "page_labels" not in path.read_text(encoding="utf-8").splitlines()[1]
    row = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    path.write_text(json.dumps({**row, "page_labels": ["one"]}) + "\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r":1: malformed document: page_labels is not one"):
        read_kept_documents(path, inside=tmp_path)


def test_extract_lists_each_documents_page_labels(tmp_path, documents):
    from sweep.datasets.texts import INDEX_FILE, write_texts

    write_texts(list(documents.values()), tmp_path / "out")
    rows = {
        r["doc_id"]: r
        for r in map(json.loads, (tmp_path / "out" / INDEX_FILE).read_text("utf-8").splitlines())
    }
    assert rows["book.pdf"]["page_labels"] == ["i", "ii", "1", "2", "3"]
    assert rows["finance.xlsx"]["page_labels"] == ["Продажи", "売上", "Summary"]
    assert "page_labels" not in rows["plain.pdf"] and "page_labels" not in rows["notes.md"]


class _LoneSurrogateLabels:
    """A reader whose file maps a label's glyph to a lone surrogate, as a broken font does."""

    name = "broken-labels"
    version = "1"

    def read(self, data: bytes, filename: str):
        from sweep.datasets.readers.base import Extracted

        return Extracted("one\n\ntwo", pages=((0, 3), (5, 8)), page_labels=("i\ud800", "ii"))


def test_a_label_with_a_lone_surrogate_is_cached_with_the_replacement_character(tmp_path):
    from sweep.datasets.extraction import extract

    extracted = extract(b"%PDF-1.7 labels", "x.pdf", _LoneSurrogateLabels(), tmp_path)
    assert extracted.page_labels == ("i\ufffd", "ii")
    assert any("lone surrogate" in w for w in extracted.warnings)
    (entry,) = tmp_path.rglob("*.json")
    assert json.loads(entry.read_text(encoding="utf-8"))["page_labels"] == ["i\ufffd", "ii"]


def test_a_corpus_row_that_lists_its_pages_takes_page_judgments(tmp_path):
    rows = [
        {"doc_id": "a", "text": "Первая.\n\n二ページ目。", "pages": [[0, 7], [9, 15]]},
        {  # as sweep.generate writes a document a reader read: its metadata nested
            "doc_id": "b",
            "text": "one\n\ntwo",
            "metadata": {"pages": [[0, 3], [5, 8]], "page_labels": ["i", "ii"]},
        },
    ]
    (tmp_path / "corpus.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )
    question = {
        "query_id": "q",
        "query": "?",
        "relevant": [{"doc_id": "a", "page": 2}, {"doc_id": "b", "page_label": "ii"}],
    }
    (tmp_path / "queries.jsonl").write_text(json.dumps(question) + "\n", encoding="utf-8")
    (query,) = load_dataset(tmp_path).queries
    assert query.relevant == (
        Judgment("a", 9, 15, page=2, pages=((2, 9, 15),)),
        Judgment("b", 5, 8, page=2, page_label="ii", pages=((2, 5, 8),)),
    )
