"""End to end: the retriever, the re-ranker and the embedding preset as sweep axes
(`python -m sweep` in a subprocess on the tiny corpus)."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from crossencoder import build_cross_encoder
from paths import ROOT

pytestmark = pytest.mark.e2e


def _sweep(tmp_path: Path, *overrides: str, env: dict | None = None, name: str = "sweep"):
    cmd = [
        sys.executable,
        "-m",
        "sweep",
        "dataset=tiny",
        f"runtime.cache_dir={tmp_path / 'cache'}",
        f"hydra.sweep.dir={tmp_path / name}",
        "runtime.show_progress=false",
        "eval.n_boot=200",
        *overrides,
    ]
    return subprocess.run(
        cmd,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=600,
    )


def _rows(sweep_dir: Path) -> list[dict]:
    with open(sweep_dir / "results.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_a_sweep_over_retrievers_and_sizes(tmp_path):
    proc = _sweep(tmp_path, "retrieve=dense,bm25,hybrid", "chunk.size=32,64")
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = _rows(tmp_path / "sweep")
    assert [(r["retrieve"], r["chunk.size"]) for r in rows] == [
        ("dense", "32"),
        ("dense", "64"),
        ("bm25", "32"),
        ("bm25", "64"),
        ("hybrid", "32"),
        ("hybrid", "64"),
    ]
    assert all(r["status"] == "ok" and r["vs_best"] for r in rows)
    for r in rows:
        assert 0.0 <= float(r["span.recall@5"]) <= 1.0
        lexical = r["retrieve"] == "bm25"
        assert (float(r["max_seq_length"]) == 0) == lexical  # BM25 truncates nothing
        assert r["rerank"] == "none" and "first_stage.span.recall@5" not in r
        # The analyzer that read the text, and the questions BM25 found no term of.
        dense = r["retrieve"] == "dense"
        assert r["bm25_analyzer"] == ("" if dense else "english")
        assert (r["bm25_unmatched_share"] == "") == dense
    # Same chunks whatever the retriever: the chunk counts agree per size.
    assert len({(r["chunk.size"], r["n_chunks"]) for r in rows}) == 2
    for job in (2, 3):
        stats = json.loads((tmp_path / "sweep" / str(job) / "row.json").read_text())["stats"]
        assert stats["embedded"] == 0 and stats["model_load_s"] == 0 and stats["cache_hits"] == 0
    # The table and the recommendation span the retrievers; the heatmaps get a panel each.
    assert "retriever" in proc.stdout and "Recommendation" in proc.stdout
    assert "retriever=" in proc.stdout.split("Recommendation", 1)[1]
    assert (tmp_path / "sweep" / "plots" / "heatmap_span_recall_5.png").exists()
    traces = [
        json.loads(line)
        for line in (tmp_path / "sweep" / "4" / "hits.jsonl").read_text().splitlines()
    ]
    scores = [h["score"] for h in traces[0]["hits"]]
    assert scores == sorted(scores, reverse=True) and scores[0] > 0  # fused RRF score


def test_a_bm25_sweep_never_imports_the_embedding_model(tmp_path):
    code = (
        "import runpy, sys\n"
        f"sys.argv = ['sweep', 'dataset=tiny', 'retrieve=bm25', 'chunk.size=32,64',\n"
        f"            'runtime.cache_dir={tmp_path / 'cache'}', 'hydra.sweep.dir={tmp_path / 'sweep'}']\n"
        "try:\n"
        "    runpy.run_module('sweep', run_name='__main__', alter_sys=True)\n"
        "except SystemExit as e:\n"
        "    assert not e.code, e.code\n"
        "print('IMPORTED', [m for m in ('torch', 'sentence_transformers', 'transformers')"
        " if m in sys.modules])\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "IMPORTED []" in proc.stdout
    assert [r["status"] for r in _rows(tmp_path / "sweep")] == ["ok", "ok"]
    # Nothing embedded, so nothing cached but the report's pictures.
    assert [p.name for p in (tmp_path / "cache").iterdir()] == ["figures"]


def test_reranking_reports_both_stages_and_reruns_from_its_cache(tmp_path):
    model = build_cross_encoder(tmp_path / "cross-encoder")
    # rerank=none has no settings, so the model and top_n go in a preset of the user's own
    # (docs/configuration.md, "Presets of your own").
    (tmp_path / "myconf" / "rerank").mkdir(parents=True)
    (tmp_path / "myconf" / "rerank" / "mine.yaml").write_text(
        f"defaults: [cross_encoder, _self_]\nmodel: {model}\ntop_n: 6\n"
    )
    args = (
        f"hydra.searchpath=[file://{tmp_path / 'myconf'}]",
        "retrieve=bm25",
        "rerank=none,mine",
        "chunk.size=32",
    )
    proc = _sweep(tmp_path, *args)
    assert proc.returncode == 0, proc.stderr[-3000:]
    plain, reranked = _rows(tmp_path / "sweep")
    assert (plain["rerank"], reranked["rerank"]) == ("none", "mine")
    assert plain["first_stage.span.recall@5"] == "" and float(plain["rerank_candidates"]) == 0
    assert float(reranked["rerank_candidates"]) == 6 and int(reranked["rerank_computed"]) > 0
    # The first stage of the re-ranked row is the plain BM25 row, scored again.
    assert reranked["first_stage.span.recall@5"] == plain["span.recall@5"]
    # Its ceiling: recall at the re-ranked depth, and re-ranking inside the top 6 changes
    # nothing at 10.
    assert reranked["first_stage.span.recall@6"] != "" and "span.recall@6" not in reranked
    assert reranked["first_stage.span.recall@10"] == reranked["span.recall@10"]
    md = (tmp_path / "sweep" / "results.md").read_text()
    assert "1st stage span recall@5" in md and "1st stage span recall@6" in md
    again = _sweep(tmp_path, *args, name="again")
    assert again.returncode == 0, again.stderr[-3000:]
    assert int(_rows(tmp_path / "again")[1]["rerank_computed"]) == 0


def test_embedding_presets_that_are_not_on_disk_are_invalid_rows_that_say_how_to_get_them(tmp_path):
    env = {"HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")}
    proc = _sweep(
        tmp_path, "retrieve=bm25", "embed=minilm,bge-small,e5-small,gte-small,nomic", env=env
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = _rows(tmp_path / "sweep")
    assert [r["embed"] for r in rows] == ["minilm", "bge-small", "e5-small", "gte-small", "nomic"]
    assert rows[0]["status"] == "ok"
    for r, model in zip(
        rows[1:],
        [
            "BAAI/bge-small-en-v1.5",
            "intfloat/e5-small-v2",
            "thenlper/gte-small",
            "nomic-ai/nomic-embed-text-v1.5",
        ],
    ):
        assert r["status"] == "invalid" and r["embed.model"] == model
        assert f"huggingface-cli download {model}" in r["error"] and "\n" not in r["error"]
    cfg = (tmp_path / "sweep" / "2" / "resolved_config.yaml").read_text()
    assert "query_prefix: 'query: '" in cfg and "document_prefix: 'passage: '" in cfg
    assert "cache_dir:" in cfg and "batch_size: 32" in cfg  # inherited from minilm.yaml
