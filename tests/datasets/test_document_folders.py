"""A folder of real PDF, HTML, DOCX and Markdown files with quote-only questions: read,
located, chunked with exact offsets, cached, and every unreadable file reported together."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from documents import (corrupt, write_docx, write_encrypted_pdf, write_html, write_image_only_pdf,
                       write_pdf)
from sweep.chunking import build_chunker
from sweep.datasets import extraction
from sweep.datasets.loading import DatasetError, check_dataset, load_dataset
from sweep.datasets.quotes import normalise
from sweep.extract import main as extract_main

HANDBOOK = [
    "# Employee handbook",
    "Badges are printed at the front desk. The first replacement is free; each further "
    "replacement in the same calendar year costs €15, deducted from the next payroll, and "
    "takes one working day to print.",
    "Remote work is allowed on up to three days a week, agreed with your manager in "
    "writing before the quarter starts.",
]
WEB = [
    "# Office guide",
    "The office opens at 08:00 and closes at 19:00 on weekdays; on Saturdays the building "
    "is closed and the alarm is armed.",
]
WORD = [
    "# Travel policy",
    "Flights inside the EU must be booked at least 14 days before departure.",
    "- Economy class for flights under six hours",
]
QUESTIONS = [
    ("q1", "Is a second lost badge free?", "manual.pdf",
     "each further replacement in the same calendar year costs €15"),
    ("q2", "When does the office close?", "guide.html", "closes at 19:00 on weekdays"),
    ("q3", "How early must EU flights be booked?", "travel.docx",
     "Flights inside the EU must be booked at least 14 days before departure."),
    ("q4", "Where are notes?", "notes.md", "Notes live in the wiki."),
]


def _folder(root: Path) -> Path:
    docs = root / "docs"
    docs.mkdir(parents=True)
    write_pdf(docs / "manual.pdf", [HANDBOOK[:2], HANDBOOK[2:]], header="Kestrel Labs handbook",
              hyphenate={"replacement"}, title="Employee handbook")
    write_html(docs / "guide.html", "Office guide", WEB)
    write_docx(docs / "travel.docx", WORD)
    (docs / "notes.md").write_text("# Notes\n\nNotes live in the wiki.\n", encoding="utf-8")
    _questions(root, QUESTIONS)
    return root


def _questions(root: Path, questions) -> None:
    lines = [json.dumps({"query_id": q, "query": text,
                         "relevant": [{"doc_id": doc, "quote": quote}]}, ensure_ascii=False)
             for q, text, doc, quote in questions]
    (root / "queries.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture(autouse=True)
def _fresh_memo():
    extraction._memo.clear()
    yield
    extraction._memo.clear()


def test_every_quote_is_located_and_every_chunk_is_a_slice_of_the_extracted_text(tmp_path):
    ds = load_dataset(_folder(tmp_path), cache_dir="off")
    texts = {d.doc_id: d.text for d in ds.documents}
    assert sorted(texts) == ["guide.html", "manual.pdf", "notes.md", "travel.docx"]
    for q, (_, _, doc, quote) in zip(ds.queries, QUESTIONS):
        (j,) = q.relevant
        assert j.located in ("exact", "normalised")
        assert normalise(texts[doc][j.start:j.end]) == normalise(quote)
    # No markup, script or page furniture reaches the text a chunker sees.
    for doc, text in texts.items():
        for debris in ("<", "Page 1 of", "Kestrel Labs handbook", "cookie", "function("):
            assert debris not in text, (doc, debris)
    chunker = build_chunker(strategy="token", size=16, overlap=4)
    for d in ds.documents:
        for c in chunker.chunk(d):
            assert c.text == d.text[c.start:c.end]
    pdf = ds.by_id()["manual.pdf"]
    assert pdf.metadata["reader"] == "pypdf" and len(pdf.metadata["pages"]) == 2
    start, end = pdf.metadata["pages"][1]
    assert "Remote work" in pdf.text[start:end]


def test_two_pdf_readers_give_the_same_questions(tmp_path):
    folder = _folder(tmp_path)
    a = load_dataset(folder, cache_dir="off")
    b = load_dataset(folder, cache_dir="off", reader={"pdf": "pdfplumber"})
    assert a.evaluation_key() == b.evaluation_key()
    assert [q.query_id for q in a.queries] == [q.query_id for q in b.queries]
    assert b.by_id()["manual.pdf"].metadata["reader"] == "pdfplumber"


def test_extracted_texts_are_cached_as_json_and_reused(tmp_path, monkeypatch):
    folder = _folder(tmp_path / "set")
    cache = tmp_path / "cache"
    first = load_dataset(folder, cache_dir=cache)
    entries = list(cache.rglob("*.json"))
    assert len(entries) == 3  # pdf, html, docx; text files are read as they are
    assert all(json.loads(e.read_text(encoding="utf-8"))["format"] == extraction.CACHE_FORMAT
               for e in entries)
    extraction._memo.clear()
    from sweep.datasets.readers import pdf as pdf_module

    def never(*args, **kwargs):
        raise AssertionError("a cached PDF was parsed again")
    monkeypatch.setattr(pdf_module.PypdfReader, "read", never)
    assert load_dataset(folder, cache_dir=cache) == first


def test_unreadable_files_are_listed_together_and_can_be_skipped(tmp_path, caplog):
    folder = _folder(tmp_path)
    docs = folder / "docs"
    write_encrypted_pdf(docs / "secret.pdf")
    write_image_only_pdf(docs / "scan.pdf")
    (docs / "broken.docx").write_bytes(corrupt((docs / "travel.docx").read_bytes()))
    (docs / "empty.pdf").write_bytes(b"")
    (docs / "menu.html").write_text("<html><body><nav><a href='/'>Home</a></nav></body></html>",
                                    encoding="utf-8")
    _questions(folder, QUESTIONS + [("q5", "What is secret?", "secret.pdf", "A secret paragraph.")])
    problems = check_dataset(folder, cache_dir="off")
    by_file = {Path(p.path).name: p.message for p in problems}
    assert set(by_file) == {"secret.pdf", "scan.pdf", "broken.docx", "empty.pdf", "menu.html"}
    assert by_file["scan.pdf"].startswith("no text layer: OCR is not supported; convert it first")
    assert by_file["secret.pdf"].startswith("encrypted PDF")
    assert by_file["empty.pdf"] == "empty file"
    assert all("\n" not in str(p) for p in problems)
    with caplog.at_level(logging.WARNING, logger="sweep.datasets"):
        ds = load_dataset(folder, cache_dir="off", skip_unreadable=True)
    assert [q.query_id for q in ds.queries] == ["q1", "q2", "q3", "q4"]
    log = " ".join(r.getMessage() for r in caplog.records)
    assert "skipped 5 unreadable files" in log and "left out 1 question" in log


def test_a_repeated_quote_needs_a_hint_and_a_missing_one_shows_the_closest_passage(tmp_path):
    folder = _folder(tmp_path)
    (folder / "docs" / "notes.md").write_text("# Notes\n\nAsk Ana. Ask Ana.\n", encoding="utf-8")
    rows = [{"query_id": "q", "query": "Who?", "relevant": [{"doc_id": "notes.md", "quote": "Ask Ana."}]}]
    (folder / "queries.jsonl").write_text(json.dumps(rows[0]) + "\n", encoding="utf-8")
    (problem,) = check_dataset(folder, cache_dir="off")
    assert problem.line == 1 and "found 2 times" in problem.message
    rows[0]["relevant"][0]["occurrence"] = 2
    (folder / "queries.jsonl").write_text(json.dumps(rows[0]) + "\n", encoding="utf-8")
    (q,) = load_dataset(folder, cache_dir="off").queries
    assert (q.relevant[0].start, q.relevant[0].end) == (18, 26)
    _questions(folder, [("q", "Fee?", "manual.pdf", "each further replacement costs €25")])
    (problem,) = check_dataset(folder, cache_dir="off")
    assert "quote not located in 'manual.pdf'" in problem.message and "closest passage" in problem.message


def test_a_draft_question_says_how_to_confirm_it(tmp_path):
    folder = _folder(tmp_path)
    row = {"query_id": "q", "query": "Fee?", "proposed": [{"doc_id": "notes.md", "quote": "x"}]}
    (folder / "queries.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    (problem,) = check_dataset(folder, cache_dir="off")
    assert "move the right passages of 'proposed' into 'relevant'" in problem.message


def test_a_web_page_saved_as_text_is_flagged(tmp_path, caplog):
    folder = _folder(tmp_path)
    (folder / "docs" / "page.txt").write_text("<!DOCTYPE html><html><body><p>Hi</p></body></html>",
                                              encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="sweep.datasets"):
        load_dataset(folder, cache_dir="off")
    assert any("looks like HTML markup" in r.getMessage() for r in caplog.records)


def test_extract_writes_the_exact_texts_and_never_touches_a_foreign_folder(tmp_path, capsys):
    folder = _folder(tmp_path / "set")
    out = tmp_path / "out"
    assert extract_main([str(folder), str(out)]) == 0
    ds = load_dataset(folder, cache_dir="off")
    for d in ds.documents:
        assert (out / f"{d.doc_id}.txt").read_bytes().decode("utf-8") == d.text
    assert extract_main([str(folder), str(out)]) == 0  # its own folder is rewritten
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "keep.txt").write_text("mine")
    assert extract_main([str(folder), str(foreign)]) == 2
    assert (foreign / "keep.txt").read_text() == "mine" and len(list(foreign.iterdir())) == 1
    assert "was not written by sweep.extract" in capsys.readouterr().err


def test_a_bad_reader_name_is_one_line_with_a_suggestion(tmp_path):
    with pytest.raises(DatasetError, match=r"did you mean 'pdfplumber'"):
        load_dataset(_folder(tmp_path), reader={"pdf": "pdfplumbr"})


def test_validate_says_how_each_quote_was_located_and_writes_the_offsets(tmp_path, capsys):
    from sweep.validate import main as validate_main

    folder = _folder(tmp_path / "set")
    out = tmp_path / "with-offsets.jsonl"
    assert validate_main([str(folder), "--quotes", "--write-offsets", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "quotes: 4 located, " in printed
    assert f"{folder / 'queries.jsonl'}:1: relevant[0] in 'manual.pdf' at " in printed
    texts = {d.doc_id: d.text for d in load_dataset(folder, cache_dir="off").documents}
    for line in out.read_text(encoding="utf-8").splitlines():
        (item,) = json.loads(line)["relevant"]
        assert texts[item["doc_id"]][item["start"]:item["end"]] == item["quote"]
    with pytest.raises(SystemExit) as exit_:  # an existing file is never overwritten
        validate_main([str(folder), "--write-offsets", str(out)])
    assert exit_.value.code == 2
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_:  # checked before the dataset is read
        validate_main([str(folder), "--write-offsets", str(tmp_path / "no" / "such.jsonl")])
    assert exit_.value.code == 2
    assert f"--write-offsets {tmp_path / 'no' / 'such.jsonl'}: no folder" in capsys.readouterr().err


@pytest.mark.parametrize(("option", "words"), [
    ({"fuzzy": 1.5}, "dataset.fuzzy must be null or a similarity in (0, 1], got 1.5"),
    ({"fuzzy": True}, "dataset.fuzzy must be null or a similarity in (0, 1], got True"),
    ({"skip_unreadable": "yes"}, "dataset.skip_unreadable must be true or false, got 'yes'"),
    ({"reader": {"odt": "x"}}, "dataset.reader: "),
])
def test_a_bad_reading_setting_is_one_line_naming_it(tmp_path, option, words):
    with pytest.raises(DatasetError) as e:
        load_dataset(_folder(tmp_path), cache_dir="off", **option)
    assert words in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize(("judgment", "words"), [
    ({"quote": "Notes live in the wiki.", "occurrence": 0},
     "occurrence must be an integer >= 1 (1 is the first place the quote appears), got number 0"),
    ({"quote": "Notes live in the wiki.", "context": "  "},
     "context must be a few words near the quote, got string '  '"),
    ({"occurrence": 1}, "occurrence and context choose among the places a quote appears; give a quote"),
    ({"start": 9, "end": 32, "quote": "Notes live in the wiki.", "occurrence": 1},
     "occurrence and context are for a quote without offsets"),
    ({"quote": "   "}, "quote is empty"),
])
def test_a_bad_quote_hint_is_a_file_line_error(tmp_path, judgment, words):
    folder = _folder(tmp_path)
    row = {"query_id": "q", "query": "Where?", "relevant": [{"doc_id": "notes.md", **judgment}]}
    (folder / "queries.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    (problem,) = check_dataset(folder, cache_dir="off")
    assert problem.line == 1 and words in problem.message


def test_a_malformed_reader_option_is_refused_by_the_command(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        extract_main([str(_folder(tmp_path / "set")), str(tmp_path / "out"), "--reader", "pdfplumber"])
    assert exit_.value.code == 2
    assert "expected FORMAT=READER (e.g. pdf=pdfplumber), got 'pdfplumber'" in capsys.readouterr().err
