"""What report.html's explorer draws from: prepared from a sweep folder alone."""

from __future__ import annotations

import json
import re

import numpy as np
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
