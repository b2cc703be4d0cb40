"""The documents a sweep keeps in its folder for the report's explorer."""

from __future__ import annotations

import json
import os

import pytest

from sweep.core.types import Dataset, Document, Judgment, Query
from sweep.store import corpus
from sweep.store.corpus import CorpusError, keep_documents, kept_documents_path, read_kept_documents

FP = "0123456789abcdef"


def _dataset() -> Dataset:
    docs = (
        Document("a.md", "This is the text of it. " * 5),
        Document(
            "b.pdf", "第一頁の本文。" * 5 + "Second page.", metadata={"pages": [(0, 35), (35, 47)]}
        ),
        Document("c.md", "Gamma " * 30),
    )
    queries = (Query("q1", "where?", (Judgment("c.md", 0, 5),)),)
    return Dataset("d", docs, queries)


def test_kept_documents_round_trip_with_pages_and_language(tmp_path):
    path = keep_documents(tmp_path, _dataset(), FP)
    assert path == tmp_path / "corpus" / f"{FP}.jsonl"
    docs = read_kept_documents(path, inside=tmp_path)
    assert [d.doc_id for d in docs] == ["a.md", "b.pdf", "c.md"]
    assert docs[0].text == "This is the text of it. " * 5 and docs[0].n_chars == 120
    assert docs[1].pages == ((0, 35), (35, 47)) and docs[1].language == "ja"
    assert docs[0].language == "en" and docs[0].pages is None


def test_written_once_per_fingerprint(tmp_path):
    path = keep_documents(tmp_path, _dataset(), FP)
    before = path.read_bytes()
    assert keep_documents(tmp_path, Dataset("d", (Document("x", "y"),), ()), FP) is None
    assert path.read_bytes() == before


def test_past_the_budget_documents_with_evidence_are_kept_first(tmp_path, monkeypatch):
    monkeypatch.setattr(corpus, "KEPT_CHARS", 250)
    docs = {d.doc_id: d for d in read_kept_documents(keep_documents(tmp_path, _dataset(), FP))}
    assert docs["c.md"].text is not None  # the evidence's document (180), though listed last
    assert docs["a.md"].text is None and docs["a.md"].n_chars == 120  # 180 + 120 > 250
    assert docs["b.pdf"].text is not None  # 180 + 47 fits


@pytest.mark.parametrize("fingerprint", ["../../etc/passwd", "", "ABC", "0123/4567abcd", "x" * 16])
def test_a_fingerprint_from_a_row_is_never_a_path(tmp_path, fingerprint):
    assert kept_documents_path(tmp_path, fingerprint) is None
    assert keep_documents(tmp_path, _dataset(), fingerprint) is None
    assert not (tmp_path / "corpus").exists()


def test_a_damaged_line_is_named(tmp_path):
    path = keep_documents(tmp_path, _dataset(), FP)
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[1] = '{"doc_id": "b.pdf", "text": 3'
    path.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(CorpusError, match=rf"{FP}\.jsonl:2: bad JSON"):
        read_kept_documents(path)
    path.write_text(json.dumps({"text": "x"}) + "\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r":1: missing key 'doc_id'"):
        read_kept_documents(path)
    path.write_text(json.dumps({"doc_id": "a", "text": ["x"]}) + "\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r":1: malformed document"):
        read_kept_documents(path)
    path.write_bytes(b'{"doc_id": "a", "text": "\xff"}\n')
    with pytest.raises(CorpusError, match="UTF-8"):
        read_kept_documents(path)


def test_a_link_out_of_the_folder_is_refused_and_not_read(tmp_path):
    sweep = tmp_path / "sweep"
    (sweep / "corpus").mkdir(parents=True)
    secret = tmp_path / "secret.jsonl"
    secret.write_text(json.dumps({"doc_id": "s", "text": "private"}) + "\n")
    os.symlink(secret, sweep / "corpus" / f"{FP}.jsonl")
    with pytest.raises(OSError, match="out of the sweep folder"):
        read_kept_documents(kept_documents_path(sweep, FP), inside=sweep)


def test_a_folder_without_kept_documents_reads_as_none(tmp_path):
    assert read_kept_documents(kept_documents_path(tmp_path, FP), inside=tmp_path) == []


def test_a_link_in_place_of_the_corpus_folder_is_never_written_through(tmp_path):
    sweep, elsewhere = tmp_path / "sweep", tmp_path / "elsewhere"
    sweep.mkdir()
    elsewhere.mkdir()
    os.symlink(elsewhere, sweep / "corpus")
    with pytest.raises(OSError, match="not a folder"):
        keep_documents(sweep, _dataset(), FP)
    assert list(elsewhere.iterdir()) == []
