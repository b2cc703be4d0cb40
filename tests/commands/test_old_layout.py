"""A sweep folder written before issue 43 moved contextual headers and parent retrieval into
nodes of their own (``chunk.context*`` and ``retrieve.parent*`` then, ``context.*`` and
``parent.*`` now, and rerank=none carrying cross_encoder's keys) is still read by
sweep.report, sweep.export, sweep.check and sweep.answers.

The folder is a real sweep (BM25, no model) whose saved configs are rewritten in the old
layout, key by key, as the old code wrote them.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from llm_server import AnswerResponders, StandInLLM
from paths import ROOT

#: new key -> where the old layout kept it (sweep.core.settings.MOVED_KEYS, read the other way)
OLD_PLACE = {
    ("parent", "mode"): ("retrieve", "parent"),
    ("parent", "size"): ("retrieve", "parent_size"),
    ("context", "mode"): ("chunk", "context"),
    ("context", "prompt"): ("chunk", "context_prompt"),
    ("context", "max_tokens"): ("chunk", "context_max_tokens"),
    ("context", "confirm"): ("chunk", "context_confirm"),
    ("context", "confirm_above"): ("chunk", "context_confirm_above"),
}
OLD_OVERRIDES = {"parent.mode": "retrieve.parent"}


def _run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    env = {
        k: v for k, v in os.environ.items() if k not in ("GITHUB_STEP_SUMMARY", "OPENAI_API_KEY")
    }
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


def _old_layout(config: dict) -> dict:
    for (node, key), (old_node, old_key) in OLD_PLACE.items():
        config.setdefault(old_node, {})[old_key] = config[node][key]
    del config["parent"], config["context"]
    if config["rerank"]["_target_"].endswith("no_reranker"):
        config["rerank"].update(model=None, top_n=None, batch_size=None, max_length=None)
    return config


def _old_overrides(overrides: list[str]) -> list[str]:
    return [
        f"{OLD_OVERRIDES.get(o.split('=', 1)[0], o.split('=', 1)[0])}={o.split('=', 1)[1]}"
        for o in overrides
    ]


@pytest.fixture(scope="module")
def old(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("old")
    folder = base / "sweep"
    proc = _run(
        "sweep",
        "dataset=tiny",
        "retrieve=bm25",
        "chunk.size=64,128",
        "parent.mode=section",
        f"runtime.cache_dir={base / 'cache'}",
        "runtime.show_progress=false",
        "eval.n_boot=200",
        f"hydra.sweep.dir={folder}",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    for job in (folder / "0", folder / "1"):
        for path in (job / "resolved_config.yaml", job / ".hydra" / "config.yaml"):
            config = yaml.safe_load(path.read_text())
            path.write_text(yaml.safe_dump(_old_layout(config), sort_keys=False))
        path = job / ".hydra" / "overrides.yaml"
        path.write_text(yaml.safe_dump(_old_overrides(yaml.safe_load(path.read_text()))))
        row = json.loads((job / "row.json").read_text())
        row["overrides"] = _old_overrides(row["overrides"])
        (job / "row.json").write_text(json.dumps(row))
    assert "retrieve.parent=section" in (folder / "0" / "row.json").read_text()
    assert "context_prompt" in (folder / "0" / "resolved_config.yaml").read_text()
    return folder


def _results(folder: Path) -> list[dict]:
    with open(folder / "results.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_report_rebuilds_the_same_table(old, tmp_path):
    before = _results(old)
    copy = Path(shutil.copytree(old, tmp_path / "copy"))
    proc = _run("sweep.report", str(copy), "--no-html")
    assert proc.returncode == 0, proc.stderr[-3000:]
    after = _results(copy)
    assert [r["retrieve.parent"] for r in after] == ["section", "section"]
    assert [r["retrieve.parent_size"] for r in after] == ["512", "512"]
    assert [r["chunk.context"] for r in after] == ["none", "none"]
    keep = [k for k in before[0] if k not in ("overrides",) and not k.endswith("_s")]
    assert [{k: r[k] for k in keep} for r in after] == [{k: r[k] for k in keep} for r in before]


def test_export_reads_the_old_config_and_writes_the_new_layout(old, tmp_path):
    chunks = tmp_path / "chunks.jsonl"
    proc = _run("sweep.export", str(old), "--job", "0", "--to", "chunks", str(chunks))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "parent (section, parent.size=512)" in proc.stderr and chunks.stat().st_size
    chosen = tmp_path / "chosen.yaml"
    proc = _run("sweep.export", str(old), "--job", "0", "--to", "hydra", str(chosen))
    assert proc.returncode == 0, proc.stderr[-3000:]
    written = yaml.safe_load(chosen.read_text())
    assert written["parent"]["mode"] == "section" and "parent" not in written["retrieve"]
    assert not any(k.startswith("context") for k in written["chunk"])
    assert set(written["rerank"]) == {"_target_"}
    proc = _run("sweep", "--config-dir", str(tmp_path), "--config-name", "chosen", "--cfg", "job")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "parent:\n  _target_: sweep.retrieval.parents.ParentSpec\n  mode: section" in proc.stdout


def test_check_compares_the_old_folder_with_itself(old):
    proc = _run("sweep.check", str(old), "--baseline", str(old), "--job", "0")
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_answers_reads_the_old_folder(old, tmp_path):
    with AnswerResponders().install(StandInLLM()) as server:
        proc = _run(
            "sweep.answers",
            str(old),
            f"llm.base_url={server.url}",
            "llm.model=stand-in",
            "llm.api_key_env=null",
            f"llm.cache_dir={tmp_path / 'llm'}",
            "answers.show_progress=false",
            "settings=all",
            "answers.k=2",
            "answers.dry_run=true",
        )
    assert proc.returncode == 0, proc.stderr[-3000:]
