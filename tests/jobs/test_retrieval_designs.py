"""End to end: parent retrieval and contextual chunk headers as sweep axes (the stand-in LLM)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from llm_server import ContextResponders, Fault, StandInLLM
from paths import ROOT

pytestmark = pytest.mark.e2e


def _sweep(tmp: Path, name: str, *overrides: str) -> subprocess.CompletedProcess:
    cmd = [
        sys.executable,
        "-m",
        "sweep",
        "dataset=tiny",
        f"runtime.cache_dir={tmp / 'cache'}",
        f"hydra.sweep.dir={tmp / name}",
        "runtime.show_progress=false",
        "eval.n_boot=200",
        "chunk.size=48",
        *overrides,
    ]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)


def _llm(server: StandInLLM, tmp: Path) -> list[str]:
    return [
        f"llm.base_url={server.url}",
        "llm.model=stand-in",
        "llm.api_key_env=null",
        f"llm.cache_dir={tmp / 'llm'}",
        "llm.max_retries=0",
        "llm.backoff_s=0",
    ]


def _rows(folder: Path) -> pd.DataFrame:
    return pd.read_csv(folder / "results.csv").sort_values("job").reset_index(drop=True)


@pytest.fixture
def server():
    with ContextResponders().install(StandInLLM()) as s:
        yield s


def test_a_contextual_sweep_is_compared_paired_and_a_rerun_sends_nothing(server, tmp_path):
    run = _sweep(tmp_path, "a", "context.mode=none,llm", *_llm(server, tmp_path))
    assert run.returncode == 0, run.stderr[-3000:]
    assert "chunk contexts for this sweep:" in run.stderr and "requests to stand-in" in run.stderr
    plain, ctx = _rows(tmp_path / "a").to_dict("records")
    assert (plain["chunk.context"], ctx["chunk.context"]) == ("none", "llm")
    assert plain["status"] == ctx["status"] == "ok"
    # Same chunks, compared by a paired test against the best.
    assert plain["n_chunks"] == ctx["n_chunks"] and plain["tokens@5"] == ctx["tokens@5"]
    assert {plain["vs_best"], ctx["vs_best"]} & {"best", "best, recommended"}
    sent = len(server.requests)
    assert ctx["context_requests"] == sent > 0 and plain["context_requests"] == 0
    assert ctx["context_prompt_tokens"] > 0
    costs = (tmp_path / "a" / "results.md").read_text()
    assert "context LLM tokens" in costs
    again = _sweep(tmp_path, "b", "context.mode=none,llm", *_llm(server, tmp_path))
    assert again.returncode == 0, again.stderr[-3000:]
    assert len(server.requests) == sent  # every context came from the cache
    rerun = _rows(tmp_path / "b").to_dict("records")[1]
    assert rerun["context_requests"] == 0 and rerun["context_cached"] == sent
    assert rerun["span.recall@5"] == ctx["span.recall@5"]


def test_more_requests_than_allowed_stop_the_sweep_before_any_is_sent(server, tmp_path):
    run = _sweep(
        tmp_path, "a", "context.mode=llm", "context.confirm_above=2", *_llm(server, tmp_path)
    )
    assert run.returncode == 2
    last = run.stderr.strip().splitlines()[-1]
    assert "context.confirm=true" in last and "requests to stand-in" in last
    assert "Traceback" not in run.stderr and server.requests == []
    assert not (tmp_path / "a").exists()


def test_failed_contexts_fail_that_setting_only(server, tmp_path):
    server.always = Fault(status=500)
    run = _sweep(tmp_path, "a", "context.mode=none,llm", *_llm(server, tmp_path))
    assert run.returncode == 0, run.stderr[-3000:]
    plain, ctx = _rows(tmp_path / "a").to_dict("records")
    assert plain["status"] == "ok" and ctx["status"] == "failed"
    assert "chunk contexts got no answer" in ctx["error"]


def test_parent_rows_score_parents_and_keep_the_chunks_beside(tmp_path):
    run = _sweep(
        tmp_path, "a", "parent.mode=none,section,window", "parent.size=96", "chunk.size=32"
    )
    assert run.returncode == 0, run.stderr[-3000:]
    none, section, window = _rows(tmp_path / "a").to_dict("records")
    assert [r["retrieve.parent"] for r in (none, section, window)] == ["none", "section", "window"]
    for r in (section, window):
        # The chunks' own ranking is the plain row's; the parents are what is read.
        assert r["child.span.recall@5"] == none["span.recall@5"]
        assert r["tokens@5"] > none["tokens@5"] and r["n_parents"] > 0
    assert pd.isna(none["child.span.recall@5"])
    md = (tmp_path / "a" / "results.md").read_text()
    assert "child span recall@5" in md and "parent retrieval (parent.mode)" in md
    # The export carries the chunks only, and says so.
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "sweep.export",
            str(tmp_path / "a"),
            "--job",
            "1",
            "--to",
            "chunks",
            str(tmp_path / "chunks.jsonl"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert "handed the LLM each hit's parent (section" in out.stderr


def test_late_chunking_rows_embed_documents_whole_and_rerun_from_the_cache(tmp_path):
    run = _sweep(tmp_path, "a", "embed.late=false,true", "chunk.prefix=title+headings")
    assert run.returncode == 0, run.stderr[-3000:]
    assert "late-chunking" in run.stderr
    plain, late = _rows(tmp_path / "a").to_dict("records")
    assert (str(plain["embed.late"]), str(late["embed.late"])) == ("False", "True")
    assert plain["status"] == late["status"] == "ok" and late["embedded"] > 0
    assert late["truncated_share"] == 0 and plain["n_chunks"] == late["n_chunks"]
    again = _sweep(tmp_path, "b", "embed.late=true")
    assert again.returncode == 0, again.stderr[-3000:]
    rerun = _rows(tmp_path / "b").to_dict("records")[0]
    assert rerun["embedded"] == 0 and rerun["span.recall@5"] == late["span.recall@5"]
    # Late chunking needs the model's token vectors: another backend is an invalid row.
    bad = _sweep(tmp_path, "c", "embed.late=true", "embed.backend=onnx,torch")
    assert bad.returncode == 0, bad.stderr[-3000:]
    rows = _rows(tmp_path / "c").to_dict("records")
    assert rows[0]["status"] == "invalid" and "embed.backend=torch" in rows[0]["error"]
    assert rows[1]["status"] == "ok"


@pytest.mark.parametrize(
    "overrides,says",
    [
        (("context.mode=llm", "llm=local"), "context.mode=llm: llm.model is required"),
        (("parent.mode=sectoin",), "parent.mode must be one of none, section, window"),
        (("context.mode=gpt",), "context.mode must be one of none, llm"),
    ],
)
def test_a_design_setting_no_cell_can_run_stops_the_sweep_in_one_line(tmp_path, overrides, says):
    run = _sweep(tmp_path, "a", *overrides)
    assert run.returncode == 2, run.stderr[-2000:]
    last = run.stderr.strip().splitlines()[-1]
    assert says in last and "Traceback" not in run.stderr


def test_contexts_a_dense_late_row_never_reads_are_said_in_its_notes():
    from types import SimpleNamespace

    from sweep.jobs.job import design_notes
    from sweep.retrieval.dense import DenseRetriever
    from sweep.retrieval.index import FlatIPIndex
    from sweep.retrieval.lexical import BM25Retriever

    late = SimpleNamespace(late_chunker=object())  # what MayChunkLate asks of a late embedder
    dense = SimpleNamespace(
        embedder=late, retriever=DenseRetriever(FlatIPIndex()), contexts=object(), reranker=None
    )
    assert "pays for contexts it never reads" in design_notes(dense)[0]
    assert design_notes(SimpleNamespace(**{**vars(dense), "retriever": BM25Retriever()})) == ()
    assert design_notes(SimpleNamespace(**{**vars(dense), "contexts": None})) == ()
    assert design_notes(SimpleNamespace(**{**vars(dense), "embedder": SimpleNamespace()})) == ()
