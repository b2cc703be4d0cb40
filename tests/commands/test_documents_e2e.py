"""End to end on the bundled folder of PDFs, web pages and Word files: a sweep over two
PDF readers scores both on the same quote-only questions, and the rows are paired."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys

import pytest

from paths import ROOT

pytestmark = pytest.mark.e2e


def test_a_sweep_over_two_pdf_readers_compares_them_on_the_same_questions(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "HF_HUB_OFFLINE"}
    cmd = [
        sys.executable,
        "-m",
        "sweep",
        "dataset=documents",
        "dataset.reader.pdf=pypdf,pdfplumber",
        "chunk.size=256",
        "chunk.overlap=0",
        f"runtime.cache_dir={tmp_path / 'cache'}",
        f"dataset.cache_dir={tmp_path / 'extract'}",
        f"hydra.sweep.dir={tmp_path / 'sweep'}",
        "runtime.show_progress=false",
        "eval.n_boot=200",
        "eval.latency_queries=0",
    ]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(tmp_path / "sweep" / "results.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [r["dataset.reader.pdf"] for r in rows] == ["pypdf", "pdfplumber"]
    assert all(r["status"] == "ok" for r in rows)
    # One group: both rows are tested against the best, none is left untested.
    assert {r["vs_best"] for r in rows} <= {"best", "tie", "worse"} and "best" in {
        r["vs_best"] for r in rows
    }
    infos = [
        json.loads((tmp_path / "sweep" / str(j) / "row.json").read_text())["dataset"]
        for j in (0, 1)
    ]
    assert infos[0]["evaluation"] == infos[1]["evaluation"]
    assert infos[0]["fingerprint"] != infos[1]["fingerprint"]  # the texts differ
    assert [i["readers"] for i in infos] == [
        "docx=markitdown, html=trafilatura, pdf=pypdf",
        "docx=markitdown, html=trafilatura, pdf=pdfplumber",
    ]
    # Retrieved chunks hold no markup, script or page furniture, and say their pages.
    hits = [
        json.loads(line)
        for line in (tmp_path / "sweep" / "0" / "hits.jsonl")
        .read_text(encoding="utf-8")
        .splitlines()
    ]
    texts = [h["text"] for q in hits for h in q["hits"]]
    assert texts and not any(("<div" in t or "<script" in t or "Page 1 of" in t) for t in texts)
    assert any(h.get("pages") for q in hits for h in q["hits"] if h["doc_id"].endswith(".pdf"))
    assert len(list((tmp_path / "extract").rglob("*.json"))) >= 11  # each file parsed once, cached


def test_pages_as_chunks_and_as_evidence_on_the_bundled_documents(tmp_path):
    """token, markdown and page chunking on the same questions: page and span recall,
    paired tests and budget columns in every row; the page row says how many pages the
    cap split; a question asked by page finds its document exactly as when asked by quote;
    the page setting exported --to sweep makes the chunks that were scored."""
    env = {k: v for k, v in os.environ.items() if k != "HF_HUB_OFFLINE"}
    sweep_dir = tmp_path / "sweep"
    cmd = [
        sys.executable,
        "-m",
        "sweep",
        "dataset=documents",
        "chunk.strategy=token,markdown,page",
        "chunk.size=256",
        "chunk.overlap=0",
        f"runtime.cache_dir={tmp_path / 'cache'}",
        f"dataset.cache_dir={tmp_path / 'extract'}",
        f"hydra.sweep.dir={sweep_dir}",
        "runtime.show_progress=false",
        "eval.n_boot=200",
        "eval.latency_queries=0",
    ]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(sweep_dir / "results.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [r["chunk.strategy"] for r in rows] == ["token", "markdown", "page"]
    assert all(r["status"] == "ok" and r["vs_best"] in ("best", "tie", "worse") for r in rows)
    for r in rows:  # both levels and the budgets, on the same questions
        assert 0 < float(r["page.recall@5"]) <= 1 and 0 < float(r["span.recall@5"]) <= 1
        assert r["span.recall@512t"] != "" and r["page.recall@512t"] != ""
        assert r["page.n_queries"] == rows[0]["page.n_queries"] != ""
    token, _, page = rows
    assert token["n_pages"] == "" and int(page["n_pages"]) > 0
    assert 0 < int(page["pages_split"]) <= int(page["n_pages"])
    assert int(page["docs_without_pages"]) > 0
    md = (sweep_dir / "results.md").read_text(encoding="utf-8")
    assert f"{page['pages_split']} of {page['n_pages']} pages were longer than" in md
    assert "page recall@5" in md

    # Every "-page" question repeats a quote question with its evidence named by page:
    # the same document is found at the same rank, in every setting.
    with open(sweep_dir / "per_query.csv", newline="", encoding="utf-8") as f:
        doc = {
            (r["job"], r["query_id"]): r["value"]
            for r in csv.DictReader(f)
            if r["level"] == "doc" and r["metric"] == "recall@5"
        }
    copies = [(job, q) for job, q in doc if q.endswith("-page")]
    assert len(copies) == 3 * 8
    assert all(doc[job, q] == doc[job, q.removesuffix("-page")] for job, q in copies)

    # The page setting, exported as sweep's own chunker, is the setting that was scored.
    out = tmp_path / "page_splitter.py"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "sweep.export",
            str(sweep_dir),
            "--job",
            "2",
            "--to",
            "sweep",
            str(out),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "identical chunks on 14 of 14 documents, 100% of chunks the same" in proc.stdout
    assert "WARNING" not in proc.stderr
