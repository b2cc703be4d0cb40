"""End to end: `python -m sweep` in a subprocess, the real model, the tiny corpus."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from interrupting import INTERRUPTED
from paths import ROOT

pytestmark = pytest.mark.e2e


def _sweep(tmp_path: Path, *overrides: str, timeout: int = 600) -> subprocess.CompletedProcess:
    # No HF_HUB_OFFLINE: the default model must load without any network as it is.
    env = {k: v for k, v in os.environ.items() if k != "HF_HUB_OFFLINE"}
    cmd = [
        sys.executable,
        "-m",
        "sweep",
        "dataset=tiny",
        f"runtime.cache_dir={tmp_path / 'cache'}",
        f"hydra.sweep.dir={tmp_path / 'sweep'}",
        "runtime.show_progress=false",
        "eval.n_boot=200",
        *overrides,
    ]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)


def _rows(sweep_dir: Path) -> list[dict]:
    with open(sweep_dir / "results.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_grid_sweep_writes_and_prints_the_table(tmp_path):
    proc = _sweep(tmp_path, "chunk.size=32,64", "chunk.overlap=0,8")
    assert proc.returncode == 0, proc.stderr[-3000:]
    sweep_dir = tmp_path / "sweep"
    rows = _rows(sweep_dir)
    assert [(r["chunk.size"], r["chunk.overlap"]) for r in rows] == [
        ("32", "0"),
        ("32", "8"),
        ("64", "0"),
        ("64", "8"),
    ]
    assert all(r["status"] == "ok" for r in rows)
    for r in rows:
        for col in (
            "doc.recall@5",
            "span.recall@5",
            "span.ndcg@5",
            "span.cov_iou@5",
            "span.precision_omega",
            "doc.recall@512t",
            "span.n_excluded",
        ):
            assert col in r and r[col] != "", col
        assert 0.0 <= float(r["span.recall@5"]) <= 1.0
        assert (
            float(r["span.recall@5.lo"])
            <= float(r["span.recall@5"])
            <= float(r["span.recall@5.hi"])
        )
        assert int(r["n_chunks"]) > 0 and float(r["truncated_share"]) == 0.0
        # Cost columns (issue 18): the index's vectors and bytes, the tokens to embed the corpus.
        assert int(r["n_vectors"]) == int(r["n_chunks"]) and int(r["index_bytes"]) >= 384 * 4 * int(
            r["n_chunks"]
        )
        assert int(r["embed_tokens"]) > int(r["n_chunks"])
        assert 0 < float(r["latency_p50_ms"]) <= float(r["latency_p95_ms"])
        # When and under what load the latency was measured; the job's own peak memory
        # (the model alone holds more than 100 MB).
        assert r["latency_measured_at"].startswith("20") and int(r["latency_cpus"]) >= 1
        assert float(r["latency_load"]) >= 0 and float(r["peak_rss_mb"]) > 100
    # Smaller chunks with overlap make more chunks; the table must show that.
    assert int(rows[1]["n_chunks"]) > int(rows[0]["n_chunks"]) > int(rows[2]["n_chunks"])
    # Queries: 7, one unanswerable (excluded everywhere), one doc-level only (excluded at span).
    assert rows[0]["doc.n_queries"] == "6" and rows[0]["doc.n_excluded"] == "1"
    assert rows[0]["span.n_queries"] == "5" and rows[0]["span.n_excluded"] == "2"
    # Printed table and markdown: one line per setting.
    md = (sweep_dir / "results.md").read_text()
    assert md.count("\n| 32 ") + md.count("\n| 64 ") == 4
    costs = md[md.index("## What each setting costs") : md.index("## Chunk health")]
    assert "latency p50 ms" in costs and costs.count("\n| size=") == 4
    assert "latency measured 20" in costs and "CPU" in costs and "peak MB" in costs
    health = md[md.index("## Chunk health") :]
    assert "mid-sentence %" in health and health.count("\n| size=") == 4
    assert "span recall@5" in proc.stdout and str(sweep_dir) in proc.stdout
    # The printed table fits a terminal; the full one is in results.md.
    table = proc.stdout[proc.stdout.index("size  overlap") :].split("\n\n")[0].splitlines()
    assert len(table) == 6 and max(map(len, table)) <= 120
    assert "4 setting(s): 4 ok" in proc.stdout
    # The notebook view of the same folder.
    import sweep.reporting.frames as results

    grid = results.grid(results.load(sweep_dir), "span.recall@5")
    assert grid.shape == (2, 2) and float(grid.loc[32, 0]) == float(rows[0]["span.recall@5"])
    traces = [
        json.loads(line) for line in (sweep_dir / "0" / "hits.jsonl").read_text().splitlines()
    ]
    answerable = [t for t in traces if t["gold"]]
    assert all(
        len(t["hits"]) == 10 and all(h["text"] and h["score"] is not None for h in t["hits"])
        for t in traces
    )  # the top max(eval.k) chunks, all with their text (15 in the index)
    assert all(set(t["credits"]) >= {"doc"} for t in answerable)
    # Diagnostics (issue 12): two-hop classes of the multi-hop query, abstention of the unanswerable one.
    assert rows[0]["span.twohop_n@5"] == "1" and rows[0]["abstain.n_unanswerable"] == "1"
    assert (
        sum(
            float(rows[0][f"span.twohop_{c}@5"])
            for c in ("complete", "ranked_out", "hop1_missed", "hop2_missed", "both_missed")
        )
        == 1.0
    )
    assert 0.0 <= float(rows[0]["abstain.auroc.lo"]) <= float(rows[0]["abstain.auroc"]) <= 1.0
    assert next(t["twohop"] for t in traces if t["twohop"])["5"] in (
        "complete",
        "ranked_out",
        "hop1_missed",
        "hop2_missed",
        "both_missed",
    )
    diag = (sweep_dir / "diagnostics.md").read_text()
    assert "Two-hop failures at k=5" in diag and "Only 1 unanswerable question" in diag
    assert "Each type on its own metric" in (sweep_dir / "by_type.md").read_text()
    assert "two-hop@5" in (sweep_dir / "worst_queries.md").read_text()
    html = (sweep_dir / "report.html").read_text(encoding="utf-8")
    assert "latency measured 20" in html and "peak MB" in html
    assert "Retrieval diagnostics" in html and (sweep_dir / "plots" / "top_score.png").exists()
    for job in range(4):
        assert (sweep_dir / str(job) / "resolved_config.yaml").exists()
        row = json.loads((sweep_dir / str(job) / "row.json").read_text())
        assert (
            row["status"] == "ok"
            and row["summary"]["levels"]["span"]["metrics"]["recall@5"]["mean"] >= 0
        )
    header = (sweep_dir / "per_query.csv").read_text().splitlines()[0]
    assert header == "job,query_id,level,metric,value"
    # The second sweep over the same settings hits the cache for every string.
    again = _sweep(
        tmp_path, "chunk.size=32", "chunk.overlap=0", f"hydra.sweep.dir={tmp_path / 'again'}"
    )
    assert again.returncode == 0, again.stderr[-3000:]
    (row,) = _rows(tmp_path / "again")
    assert row["embedded"] == "0" and int(row["cache_hits"]) > 0
    assert row["span.recall@5"] == rows[0]["span.recall@5"]


def test_invalid_setting_leaves_a_row_and_the_sweep_goes_on(tmp_path):
    proc = _sweep(tmp_path, "chunk.size=32", "chunk.overlap=32,0")
    assert proc.returncode == 0, proc.stderr[-3000:]
    bad, good = _rows(tmp_path / "sweep")
    assert bad["status"] == "invalid" and "overlap" in bad["error"]
    assert good["status"] == "ok"
    assert "Traceback" not in proc.stdout + proc.stderr


def test_bad_dataset_fails_before_embedding_with_one_line(tmp_path):
    data = tmp_path / "data"
    (data / "docs").mkdir(parents=True)
    (data / "docs" / "a.md").write_text("# A\n\nSome text about sensors.\n")
    (data / "queries.jsonl").write_text(
        '{"query_id": "q1", "query": "x", "relevant": [{"doc_id": "a.md"}]}\n'
        '{"query_id": "q2", "query": "y", "relevant": [{"doc_id": "missing.md"}]}\n'
    )
    proc = _sweep(tmp_path, f"dataset.path={data}")
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    err = [line for line in proc.stderr.splitlines() if "error" in line.lower()]
    assert err and "queries.jsonl:2" in err[0] and "missing.md" in err[0]
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").rglob("*.npy"))


def test_ctrl_c_keeps_finished_rows(tmp_path):
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    cmd = [
        sys.executable,
        "-m",
        "sweep",
        "dataset=tiny",
        f"runtime.cache_dir={tmp_path / 'cache'}",
        f"hydra.sweep.dir={tmp_path / 'sweep'}",
        "runtime.show_progress=false",
        "eval.n_boot=100",
        "chunk.size=16,24,32,40,48,56,64,72",
    ]
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    first_row = tmp_path / "sweep" / "0" / "row.json"
    deadline = time.time() + 300
    while not first_row.exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.2)
    assert first_row.exists()
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=120)
    rows = _rows(tmp_path / "sweep")
    assert proc.returncode in INTERRUPTED, err[-2000:]
    assert 1 <= len(rows) < 8
    assert all(r["status"] == "ok" for r in rows)
    assert "interrupted" in err and "Traceback" not in err
    assert (tmp_path / "sweep" / "results.md").exists()
    assert "finished before the interrupt" in err and "no setting had finished" not in err


def _start(tmp_path, *overrides):
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    cmd = [
        sys.executable,
        "-m",
        "sweep",
        "dataset=tiny",
        f"runtime.cache_dir={tmp_path / 'cache'}",
        f"hydra.sweep.dir={tmp_path / 'sweep'}",
        "runtime.show_progress=false",
        "eval.n_boot=100",
        *overrides,
    ]
    return subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _wait_for(path, proc, timeout=300):
    deadline = time.time() + timeout
    while not path.exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert path.exists(), proc.stderr.read()[-2000:] if proc.poll() is not None else "timeout"


def test_a_second_ctrl_c_during_the_interrupt_report_still_keeps_the_tables(tmp_path):
    # Issue 17: a second Ctrl-C landed in the matplotlib import: two tracebacks, no table, -2.
    proc = _start(tmp_path, "chunk.size=16,24,32,40,48,56,64,72")
    _wait_for(tmp_path / "sweep" / "1" / "row.json", proc)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.4)
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode in INTERRUPTED, err[-2000:]
    assert "Traceback" not in err
    rows = _rows(tmp_path / "sweep")
    assert len(rows) >= 2 and (tmp_path / "sweep" / "results.md").exists()


def test_ctrl_c_in_the_first_job_says_nothing_finished(tmp_path):
    # Issue 17: it said "no finished rows in DIR" and then "finished rows are kept in DIR".
    proc = _start(tmp_path, "chunk.size=16,24")
    _wait_for(tmp_path / "sweep" / "0" / "resolved_config.yaml", proc)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode in INTERRUPTED, err[-2000:]
    assert "no setting had finished" in err and "kept" not in err and "Traceback" not in err


@pytest.mark.parametrize(
    "how, finished",
    [
        ("mangle", ["0"]),  # the job whose library turned Ctrl-C into an error leaves no row
        ("swallow", ["0", "1"]),  # the job that could not hear it ends, and no other job starts
    ],
)
def test_a_ctrl_c_a_library_mishandles_still_interrupts_the_sweep(tmp_path, how, finished):
    ready = tmp_path / "ready"
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
        f"runtime.cache_dir={tmp_path / 'cache'}",
        f"hydra.sweep.dir={tmp_path / 'sweep'}",
        "runtime.show_progress=false",
        "eval.n_boot=100",
        "eval.latency_queries=0",
        "chunk._target_=mishandling.build_mishandling_chunker",
        "+chunk.at=24",
        f"+chunk.how={how}",
        f"+chunk.ready={ready}",
        "chunk.size=16,24,32",
    ]
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    _wait_for(ready, proc)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode in INTERRUPTED, err[-2000:]
    assert "sweep: interrupted" in err and "Traceback" not in err
    rows = _rows(tmp_path / "sweep")
    assert [r["job"] for r in rows] == finished and all(r["status"] == "ok" for r in rows)
    assert not (tmp_path / "sweep" / "1" / "error.txt").exists()


def test_a_sweep_that_crashes_everywhere_exits_1(tmp_path):
    # Issue 17: embed.device=cuda on a CPU machine printed failed rows and exited 0.
    proc = _sweep(tmp_path, "embed.device=cuda", "chunk.size=32,64")
    assert proc.returncode == 1, proc.stderr[-2000:]
    rows = _rows(tmp_path / "sweep")
    assert [r["status"] for r in rows] == ["failed", "failed"]
    assert "2 setting(s): 0 ok, 2 failed" in proc.stdout and "Traceback" not in proc.stderr


def test_sweep_over_two_strategies_with_heading_prefixes(tmp_path):
    proc = _sweep(
        tmp_path,
        "chunk.strategy=token,markdown",
        "chunk.size=48",
        "chunk.prefix=none,title+headings",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = _rows(tmp_path / "sweep")
    assert [(r["chunk.strategy"], r["chunk.prefix"]) for r in rows] == [
        ("token", "none"),
        ("token", "title+headings"),
        ("markdown", "none"),
        ("markdown", "title+headings"),
    ]
    assert all(r["status"] == "ok" for r in rows)
    # The prefix changes what is embedded, never the chunks themselves.
    assert rows[0]["n_chunks"] == rows[1]["n_chunks"]
    assert float(rows[1]["mean_model_tokens"]) > float(rows[0]["mean_model_tokens"])
    assert rows[0]["n_chunks"] != rows[2]["n_chunks"]
    assert "strategy" in (tmp_path / "sweep" / "results.md").read_text()


@pytest.mark.parametrize(
    "override, words",
    [
        ("eval.primary=span/recal@5", "recal"),
        ("eval.primary=span/recall@7", "k=7 is not in eval.k"),
        ("eval.k=[0,5]", "positive"),
        ("eval.k=5", "eval.k must be a list"),
        ("eval.table_k=[7]", "eval.table_k"),
        ("eval.n_perm=-5", "eval.n_perm"),
        ("eval.alpha=2", "eval.alpha"),
        ("eval.n_boot=0", "eval.n_boot"),
        ("eval.gain=cubic", "gain"),
        ("eval.latency_queries=-1", "eval.latency_queries"),
        ("dataset.path=/nonexistent/eval-set", "/nonexistent/eval-set"),
    ],
)
def test_bad_config_fails_with_one_line_before_any_work(tmp_path, override, words):
    proc = _sweep(tmp_path, override)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    (line,) = [ln for ln in proc.stderr.splitlines() if ln.startswith("sweep: error:")]
    assert words in line
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").rglob("*.npy"))


def test_document_level_dataset_falls_back_to_a_doc_level_primary(tmp_path):
    beir = ROOT / "tests" / "fixtures" / "beir"
    proc = _sweep(tmp_path, f"dataset.path={beir}", "chunk.size=32,64")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "no evidence spans" in proc.stderr + proc.stdout
    rows = _rows(tmp_path / "sweep")
    assert {r["vs_best"] for r in rows} <= {"best", "tie", "worse"}
    assert any(r["vs_best"] == "best" for r in rows)
    assert "Recommendation" in (tmp_path / "sweep" / "results.md").read_text()


def test_nothing_to_score_is_an_error(tmp_path):
    data = tmp_path / "data"
    (data / "docs").mkdir(parents=True)
    (data / "docs" / "a.md").write_text("# A\n\nSome text about sensors.\n")
    (data / "queries.jsonl").write_text('{"query_id": "q1", "query": "x", "relevant": []}\n')
    proc = _sweep(tmp_path, f"dataset.path={data}")
    assert proc.returncode == 2 and "nothing to score" in proc.stderr
    assert "Traceback" not in proc.stderr


# -- an embedding cache that cannot be written (issue 41, items 8 and 11) -----------------------
# Real filesystems (tests/mounts.py): a read-only bind mount, a tmpfs too small for the vectors.


def _cannot_write(proc: subprocess.CompletedProcess, what: str) -> list[str]:
    return [line for line in proc.stderr.splitlines() if f"{what} cache: cannot write" in line]


def test_a_warm_read_only_cache_serves_the_sweep_and_says_once_it_is_not_written(tmp_path):
    # Every job failed on <cache>/.encode-times.lock although every vector and time was cached.
    from mounts import read_only

    warm = _sweep(tmp_path, "chunk.size=64")
    assert warm.returncode == 0, warm.stderr[-3000:]
    cache = tmp_path / "cache"
    (cache / ".encode-times.lock").unlink()  # as a cache copied or shared without it comes
    with read_only(cache):
        proc = _sweep(tmp_path, "chunk.size=64", f"hydra.sweep.dir={tmp_path / 'again'}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    (row,) = _rows(tmp_path / "again")
    assert row["status"] == "ok" and row["embedded"] == "0"
    assert row["span.recall@5"] == _rows(tmp_path / "sweep")[0]["span.recall@5"]
    assert float(row["latency_p50_ms"]) > 0  # the query encode times, read from the cache
    (said,) = _cannot_write(proc, "embedding") + _cannot_write(proc, "figure")
    assert said.endswith(
        f"[WARNING] embedding cache: cannot write {cache} (Read-only file "
        "system); it is read, not written, for the rest of this run"
    )
    assert "no embedding model loaded" in proc.stderr


def test_a_full_cache_warns_once_naming_its_folder_and_every_job_runs(tmp_path):
    # The job failed with "No space left on device" (the cache's write), naming no folder.
    from mounts import tmpfs

    with tmpfs(tmp_path / "cache", "64k") as cache:
        proc = _sweep(tmp_path, "chunk.size=32,64")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert [r["status"] for r in _rows(tmp_path / "sweep")] == ["ok", "ok"]
    (said,) = _cannot_write(proc, "embedding") + _cannot_write(proc, "figure")
    assert f"embedding cache: cannot write {cache} (No space left on device)" in said
    assert "Traceback" not in proc.stderr
