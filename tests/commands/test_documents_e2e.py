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
