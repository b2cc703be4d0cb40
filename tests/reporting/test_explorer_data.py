"""What report.html's explorer draws from: prepared from a sweep folder alone."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sweep.core.types import Chunk, Dataset, Document
from sweep.reporting.explorer import (
    SIDECAR_NAME,
    explorer_data,
    explorer_page_parts,
    write_sidecar,
)
from sweep.reporting.sweepreport import build_report
from sweep.store.chunkfile import write_chunk_offsets
from sweep.store.corpus import keep_documents
from sweepdirs import GRID, base, make_grid, make_job

FP = "f" * 16


def _grid(tmp_path, n=30):
    scores = {key: np.roll(base(n), i) for i, key in enumerate(GRID[:4])}
    make_grid(tmp_path, scores)
    return scores


def test_every_question_with_its_outcome_in_every_setting(tmp_path):
    scores = _grid(tmp_path)
    rep = build_report(tmp_path)
    data = explorer_data(rep)
    assert data["format"] == "sweep-explorer" and data["primary"]["label"] == "span recall@5"
    assert [j["job"] for j in data["jobs"]] == [0, 1, 2, 3]
    assert sum(j["pick"] for j in data["jobs"]) == 1
    assert [q["id"] for q in data["questions"]] == [f"q{i}" for i in range(30)]
    for job, values in enumerate(scores.values()):
        assert [q["outcome"][job] for q in data["questions"]] == list(values)
    q = data["questions"][3]
    assert q["text"] == "Question number 3 & <more>?" and q["answerable"]
    # No kept documents (a folder from before they were kept): the page still shows the
    # evidence and the hits, from the texts the traces hold.
    (gold,) = q["gold"]
    assert data["docs"][gold["doc"]]["id"] == "doc3.md" and gold["text"] == "gold evidence 3"
    hits = data["hits"]["0"]
    first = data["passages"]["0"]
    i = hits["p"][3][0]
    # one passage per chunk id, its text as a trace holds it (the same in every trace)
    assert first["id"][i] == "doc4.md#0" and first["text"][i] == "chunk text 0-4 <about> travel"
    assert hits["s"][3][:2] == [0.95, 0.9] and hits["first"] is None and hits["via"] is None


def test_the_table_sorts_by_the_numbers_it_shows(tmp_path):
    _grid(tmp_path)
    rep = build_report(tmp_path)
    table = explorer_data(rep)["table"]
    names = [c["name"] for c in table["columns"]]
    kinds = dict(zip(names, (c["kind"] for c in table["columns"])))
    assert kinds["size"] == "setting" and kinds["span recall@5"] == "metric"
    assert kinds["chunks"] == "number" and kinds["status"] == "text"
    col = names.index("span recall@5")
    for r, row in zip(rep.rows, table["rows"]):
        m = row["values"][col]
        assert m == round(r.interval("span", "recall@5").mean, 3)
        assert row["low"][col] <= m <= row["high"][col]
        assert row["cells"][col].startswith(f"{m:.3f} [")
    assert any("pick" in row["class"] for row in table["rows"])


def test_kept_documents_give_the_text_once(tmp_path):
    _grid(tmp_path)
    docs = tuple(Document(f"doc{i}.md", f"Document {i}. " + "word " * 20) for i in range(45))
    keep_documents(tmp_path, Dataset("d", docs, ()), FP)
    chunks = [Chunk(f"doc{i}.md", 0, 0, 60, docs[i].text[:60], 12) for i in range(45)]
    write_chunk_offsets(tmp_path / "0" / "chunks.csv", chunks)
    data = explorer_data(build_report(tmp_path))
    by_id = {d["id"]: d for d in data["docs"]}
    assert by_id["doc7.md"]["text"] == docs[7].text
    q = data["questions"][3]
    assert "text" not in q["gold"][0]  # cut from the document by the page
    p = data["passages"]["0"]
    assert p["n_chunks"] == 45 and p["id"][:2] == ["doc0.md#0", "doc1.md#0"]
    assert all(t is None for t in p["text"])
    # a hit is the chunk of chunks.csv, not a second copy of it
    assert data["hits"]["0"]["p"][3][0] == 4 and len(p["id"]) == 45


def test_inline_data_cannot_close_its_script_element():
    hostile = {"questions": [{"text": "</script><script>window.x=1</script><!--", "id": "<b>"}]}
    parts = explorer_page_parts(hostile)
    assert parts.sidecar is None
    data = re.search(r'id="sweep-explorer-data">(.*?)</script>', parts.body, re.S)[1]
    assert "<" not in data
    assert json.loads(data) == hostile


@settings(max_examples=60, deadline=None)
@given(st.recursive(st.text() | st.integers() | st.none(), lambda x: st.lists(x, max_size=4)))
def test_any_data_survives_the_page_unchanged(value):
    parts = explorer_page_parts({"v": value})
    data = re.search(r'id="sweep-explorer-data">(.*)</script><script>', parts.body, re.S)[1]
    assert "<" not in data and "</" not in data
    assert json.loads(data) == {"v": value}


def test_large_data_goes_beside_the_page(tmp_path):
    parts = explorer_page_parts({"text": "x" * 500}, inline_bytes=100)
    assert f'<script src="{SIDECAR_NAME}"></script>' in parts.body
    assert 'id="sweep-explorer-data">null</script>' in parts.body
    path = write_sidecar(tmp_path, parts)
    text = path.read_text(encoding="utf-8")
    assert text.startswith("window.sweepExplorerData = ") and text.endswith(";\n")
    assert json.loads(text[len("window.sweepExplorerData = ") : -2]) == {"text": "x" * 500}


def test_unanswerable_questions_are_never_scored(tmp_path):
    _grid(tmp_path, n=6)
    path = tmp_path / "0" / "hits.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    obj = json.loads(lines[2])
    obj["gold"] = []
    lines[2] = json.dumps(obj)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    q = explorer_data(build_report(tmp_path))["questions"][2]
    assert q["answerable"] is False and q["gold"] == [] and q["outcome"] == [None] * 4


def test_a_failed_setting_has_no_outcomes_and_is_marked(tmp_path):
    scores = {key: base(10) for key in GRID[:2]}
    rows = make_grid(tmp_path, scores)
    make_job(tmp_path, len(rows), 512, 0, None, status="failed", error="boom")
    data = explorer_data(build_report(tmp_path))
    job = data["jobs"][-1]
    assert not job["ok"] and job["status"] == "failed: boom"
    assert all(q["outcome"][-1] is None for q in data["questions"])
    assert data["table"]["rows"][-1]["class"] == "bad" and "2" not in data["hits"]


def test_a_large_sweep_writes_its_data_beside_the_page(tmp_path, monkeypatch):
    from sweep.reporting import explorer
    from sweep.reporting.write import ReportError, write_report

    _grid(tmp_path, n=8)
    monkeypatch.setattr(explorer, "INLINE_BYTES", 1000)
    write_report(tmp_path, quiet=True, html=True)
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert f'<script src="{SIDECAR_NAME}"></script>' in page
    assert (
        (tmp_path / SIDECAR_NAME)
        .read_text(encoding="utf-8")
        .startswith("window.sweepExplorerData = {")
    )
    # Not a file of sweep's in its place: left as it is, and the error names it.
    (tmp_path / SIDECAR_NAME).unlink()
    (tmp_path / SIDECAR_NAME).mkdir()
    (tmp_path / SIDECAR_NAME / "mine.txt").write_text("mine")
    with pytest.raises((ReportError, OSError), match=SIDECAR_NAME):
        write_report(tmp_path, quiet=True, html=True)
    assert (tmp_path / SIDECAR_NAME / "mine.txt").read_text() == "mine"


def test_a_parent_is_its_own_passage_and_names_the_chunk_that_brought_it(tmp_path):
    """Parents and chunks both count ids from #0 per document: a parent ``doc4.md#0``
    (0-200) is not the chunk ``doc4.md#0`` (0-60), which is the one that brought it."""
    _grid(tmp_path, n=6)
    docs = tuple(Document(f"doc{i}.md", "word " * 60) for i in range(20))
    keep_documents(tmp_path, Dataset("d", docs, ()), FP)
    chunks = [Chunk(f"doc{i}.md", 0, 0, 60, docs[i].text[:60], 12) for i in range(20)]
    write_chunk_offsets(tmp_path / "0" / "chunks.csv", chunks)
    path = tmp_path / "0" / "hits.jsonl"
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    hit = lines[3]["hits"][0]
    assert hit["chunk_id"] == "doc4.md#0"
    hit.update(end=200, first_rank=7, via="doc4.md#0", via_start=0, via_end=60)
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    data = explorer_data(build_report(tmp_path))
    p, hits = data["passages"]["0"], data["hits"]["0"]
    parent = hits["p"][3][0]
    assert parent >= p["n_chunks"] and (p["id"][parent], p["end"][parent]) == ("doc4.md#0", 200)
    child = hits["via"][3][0]
    assert child == 4 and (p["start"][child], p["end"][child]) == (0, 60)
    assert hits["first"][3][0] == 7 and hits["first"][3][1] == 0
    assert hits["via"][3][1] == -1


def _two_datasets(tmp_path, evaluation: tuple[str, str]) -> list:
    """Jobs 0-1 read the set one way (fingerprint f...), jobs 2-3 another (e...), as a
    reader sweep does; the evaluation keys say whether they answered the same questions."""
    from dataclasses import replace

    from sweep.store.row import load_rows

    rows = [
        make_job(tmp_path, job, size, 0, base(6), fingerprint=fp)
        for job, (size, fp) in enumerate(
            [(64, "f" * 16), (128, "f" * 16), (64, "e" * 16), (128, "e" * 16)]
        )
    ]
    for r in load_rows(tmp_path):
        key = evaluation[0] if r.dataset.fingerprint == "f" * 16 else evaluation[1]
        replace(r, dataset=replace(r.dataset, evaluation=key)).save(r.path)
    for fp, word, job in (("f" * 16, "pypdf ", 0), ("e" * 16, "pdfplumber ", 2)):
        docs = tuple(Document(f"doc{i}.md", f"{word}{i} " * 20) for i in range(20))
        keep_documents(tmp_path, Dataset("d", docs, ()), fp)
        chunks = [Chunk(f"doc{i}.md", 0, 0, 30, docs[i].text[:30], 6) for i in range(20)]
        write_chunk_offsets(tmp_path / str(job) / "chunks.csv", chunks)
    return rows


def test_a_reader_sweep_shows_each_job_its_own_text(tmp_path):
    """Two readers of the same files: one question list, each job's chunks and evidence
    in the text its reader made (the same doc ids, other texts and offsets)."""
    _two_datasets(tmp_path, ("k1", "k1"))
    data = explorer_data(build_report(tmp_path))
    assert len(data["datasets"]) == 2 and [j["dataset"] for j in data["jobs"]] == [0, 0, 1, 1]
    assert len(data["questions"]) == 6
    docs = data["docs"]
    twins = [d for d in docs if d["id"] == "doc3.md"]
    assert {d["dataset"] for d in twins} == {0, 1}
    assert {d["text"].split()[0] for d in twins} == {"pypdf", "pdfplumber"}
    p = data["passages"]["2"]
    assert docs[p["doc"][3]]["dataset"] == 1 and docs[p["doc"][3]]["text"].startswith("pdfplumber")
    q = data["questions"][3]
    assert sorted(docs[g["doc"]]["dataset"] for g in q["gold"]) == [0, 1]
    assert all(v is not None for v in q["outcome"])


def test_questions_of_two_evaluation_sets_are_kept_apart(tmp_path):
    """Two sets whose question ids collide: each question once per set, scored only by
    the jobs that answered it."""
    _two_datasets(tmp_path, ("k1", "k2"))
    data = explorer_data(build_report(tmp_path))
    assert [q["id"] for q in data["questions"]] == [f"q{i}" for i in range(6)] * 2
    first, second = data["questions"][3], data["questions"][9]
    assert first["dataset"] == 0 and second["dataset"] == 1
    assert first["outcome"][2:] == [None, None] and second["outcome"][:2] == [None, None]
    assert data["hits"]["0"]["p"][9] == [] and data["hits"]["2"]["p"][3] == []
    assert data["hits"]["2"]["p"][9] != []
