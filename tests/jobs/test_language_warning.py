"""End to end: a model that cannot read the corpus's language is said before the first job,
in one line that names the fix, and again beside the recommendation; an English sweep says
nothing; ``embed=auto`` names its choice."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from japanese_corpus import write_japanese_dataset
from paths import ROOT

pytestmark = pytest.mark.e2e

WARNING = "warning: 100% of the corpus is Japanese and all-MiniLM-L6-v2 reads it as "
FIX = "use embed=multilingual (offline) or a multilingual preset"


def _sweep(tmp: Path, name: str, *overrides: str) -> subprocess.CompletedProcess:
    cmd = [
        sys.executable,
        "-m",
        "sweep",
        f"runtime.cache_dir={tmp / 'cache'}",
        f"hydra.sweep.dir={tmp / name}",
        "runtime.show_progress=false",
        "eval.n_boot=100",
        "eval.latency_queries=0",
        "chunk.size=32,64",
        *overrides,
    ]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def _rows(folder: Path) -> list[dict[str, str]]:
    with open(folder / "results.csv", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_an_english_sweep_says_no_language_warning(tmp_path):
    proc = _sweep(tmp_path, "en", "dataset=tiny")
    assert "embed auto → minilm: the corpus is 100% in Latin letters" in proc.stderr
    assert "warning: " not in proc.stderr.lower() + proc.stdout.lower()
    assert not (tmp_path / "en" / "warnings.json").exists()
    rows = _rows(tmp_path / "en")
    assert {r["embed"] for r in rows} == {"minilm"}
    assert {r["embed.choice"] for r in rows} == {"auto"}
    assert {r["corpus.languages"] for r in rows} == {"en 1.00"}


def test_minilm_on_a_japanese_corpus_warns_once_before_the_first_job_and_in_the_report(tmp_path):
    data = write_japanese_dataset(tmp_path)
    proc = _sweep(tmp_path, "ja", f"dataset.path={data}", "embed=minilm")
    lines = proc.stderr.splitlines()
    said = [i for i, line in enumerate(lines) if WARNING in line]
    first_job = next(i for i, line in enumerate(lines) if "job 0:" in line)
    assert len(said) == 1 and said[0] < first_job
    line = lines[said[0]]
    assert "[UNK] tokens" in line and FIX in line
    warning = line[line.index("warning: ") :]
    folder = tmp_path / "ja"
    assert json.loads((folder / "warnings.json").read_text(encoding="utf-8")) == [warning]
    # Beside the recommendation: in the printed table's prose, results.md and report.html.
    assert warning in proc.stdout
    assert warning in (folder / "results.md").read_text(encoding="utf-8")
    html = (folder / "report.html").read_text(encoding="utf-8")
    assert "reads it as" in html and html.index("reads it as") < html.index("Comparison table")
    rows = _rows(folder)
    assert {r["corpus.languages"] for r in rows} == {"ja 1.00"}
    assert {r["embed"] for r in rows} == {"minilm"} and "embed.choice" not in rows[0]
    assert all(0 < float(r["hub.share"]) <= 1 for r in rows)


def test_auto_on_a_japanese_corpus_names_its_choice(tmp_path):
    data = write_japanese_dataset(tmp_path)
    proc = _sweep(tmp_path, "auto", f"dataset.path={data}")
    assert "embed auto → multilingual: the corpus is 100% Japanese" in proc.stderr
    rows = _rows(tmp_path / "auto")
    assert {r["embed.choice"] for r in rows} == {"auto"}
    if (ROOT / "conf" / "embed" / "multilingual.yaml").exists():
        # The row names the model that ran, never MiniLM, and no warning is needed.
        assert {r["embed"] for r in rows} == {"multilingual"}
        assert not any("MiniLM" in r["embed.model"] for r in rows)
        assert WARNING not in proc.stderr
    else:  # before the multilingual model's config exists: MiniLM runs, and says so
        assert "multilingual.yaml is missing: minilm runs" in proc.stderr
        assert WARNING in proc.stderr
        assert {r["embed"] for r in rows} == {"minilm"}
