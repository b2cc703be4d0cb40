"""A user's own embedder runs a whole sweep (`python -m sweep ... embed._target_=...`):
one with the three members sweep asks for, and one written to the seven it asked for
before."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

from paths import ROOT


def _sweep(tmp_path: Path, target: str) -> tuple[subprocess.CompletedProcess, list[dict]]:
    env = dict(
        os.environ,
        HF_HUB_OFFLINE="1",
        PYTHONPATH=os.pathsep.join([str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")]),
    )
    cmd = [
        sys.executable,
        "-m",
        "sweep",
        "dataset=tiny",
        f"embed._target_=embedders.{target}",
        f"runtime.cache_dir={tmp_path / 'cache'}",
        f"hydra.sweep.dir={tmp_path / 'sweep'}",
        "runtime.show_progress=false",
        "eval.n_boot=50",
        "chunk.size=32,64",
    ]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(tmp_path / "sweep" / "results.csv", newline="", encoding="utf-8") as f:
        return proc, list(csv.DictReader(f))


def test_an_embedder_with_three_members_runs_a_sweep(tmp_path):
    proc, rows = _sweep(tmp_path, "ThreeMembers")
    assert [r["status"] for r in rows] == ["ok", "ok"], proc.stderr[-3000:]
    for r in rows:
        assert 0.0 < float(r["doc.recall@5"]) <= 1.0
        # No token counts, no stats: none reported truncated, every chunk and query embedded.
        assert float(r["truncated_share"]) == 0.0 and int(r["cache_hits"]) == 0
        assert int(r["embedded"]) > int(r["n_chunks"])
        # The latency columns time a one-query embed_queries.
        assert float(r["latency_p50_ms"]) > 0
    # Its vectors are no model's: nothing was loaded, so no model cache was written.
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").rglob("*.npy"))
    assert "Traceback" not in proc.stderr


def test_an_embedder_written_to_the_seven_members_still_runs_a_sweep(tmp_path):
    proc, rows = _sweep(tmp_path, "SevenMembers")
    assert [r["status"] for r in rows] == ["ok", "ok"], proc.stderr[-3000:]
    for r in rows:
        assert 0.0 < float(r["doc.recall@5"]) <= 1.0
        # Its own max_seq_length of 8 tokens: most chunks are longer.
        assert float(r["truncated_share"]) > 0.5 and r["max_seq_length"] == "8"
        assert int(r["embedded"]) == int(r["n_chunks"])
