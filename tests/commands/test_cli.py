"""``python -m sweep`` as a command: folders, exit status, checks before the first job.

No model loads here: every sweep below stops before embedding (bad settings,
bad datasets), so these run in seconds.
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

from paths import ROOT

BROKEN = ROOT / "tests" / "fixtures" / "broken" / "bad_json"
TINY = ROOT / "corpora" / "tiny"


def _cmd(tmp_path: Path, *overrides: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "sweep",
        "dataset=tiny",
        f"runtime.cache_dir={tmp_path / 'cache'}",
        "runtime.show_progress=false",
        *overrides,
    ]


def _run(tmp_path: Path, *overrides: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    return subprocess.run(
        _cmd(tmp_path, *overrides),
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _rows(sweep_dir: Path) -> list[dict]:
    with open(sweep_dir / "results.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_two_sweeps_started_in_the_same_second_never_share_a_folder(tmp_path):
    # Both ask for the same timestamped folder, as two sweeps in one second do by default.
    base = f"hydra.sweep.dir=${{fresh_dir:{tmp_path}/out/2026-12-01_10-00-00}}"
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    procs = [
        subprocess.Popen(
            _cmd(tmp_path, base, sizes),
            cwd=tmp_path,
            env=env,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for sizes in ("embed.model=/nonexistent-a,/nonexistent-b", "embed.model=/nonexistent-c")
    ]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [1, 1], [e[-1500:] for _, e in outs]
    folders = sorted((tmp_path / "out").iterdir())
    assert [f.name for f in folders] == ["2026-12-01_10-00-00", "2026-12-01_10-00-00-2"]
    models = sorted(sorted(r["embed.model"] for r in _rows(f)) for f in folders)
    # each table holds its own sweep's rows only
    assert models == [["/nonexistent-a", "/nonexistent-b"], ["/nonexistent-c"]]


def test_the_default_folder_is_fresh_for_every_sweep(tmp_path):
    first = _run(tmp_path, "embed.model=/nonexistent-a")
    second = _run(tmp_path, "embed.model=/nonexistent-b")
    assert first.returncode == second.returncode == 1
    folders = sorted((tmp_path / "outputs" / "sweep").iterdir())
    assert len(folders) == 2 and [len(_rows(f)) for f in folders] == [1, 1]


def test_reusing_a_folder_on_purpose_is_refused_and_keeps_the_old_rows(tmp_path):
    out = tmp_path / "collide"
    first = _run(
        tmp_path,
        f"hydra.sweep.dir={out}",
        "embed.model=/nonexistent-1,/nonexistent-2,/nonexistent-3",
    )
    assert first.returncode == 1 and len(_rows(out)) == 3
    second = _run(tmp_path, f"hydra.sweep.dir={out}", "embed.model=/nonexistent-4")
    assert second.returncode == 2 and "Traceback" not in second.stderr
    (line,) = [ln for ln in second.stderr.splitlines() if ln.startswith("sweep: error:")]
    assert f"{out} already holds a sweep (3 row(s))" in line
    assert sorted(r["embed.model"] for r in _rows(out)) == [f"/nonexistent-{i}" for i in (1, 2, 3)]


def test_bad_input_never_touches_files_that_were_in_the_folder_before(tmp_path):
    # A folder of the user's: a sweep may neither clean it up nor write its jobs into it.
    out = tmp_path / "mine"
    theirs = {
        "2023/app.log": "a",
        "0/mylog.log": "b",
        "7/resolved_config.yaml": "c",
        "prewarm.json": "d",
    }
    for name, text in theirs.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(text)
    dup = ROOT / "tests" / "fixtures" / "broken" / "duplicate_query_id"
    proc = _run(tmp_path, f"hydra.sweep.dir={out}", f"dataset.path={dup}", "chunk.size=-1,-2")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    (line,) = [ln for ln in proc.stderr.splitlines() if ln.startswith("sweep: error:")]
    assert f"{out} is not empty (0/, 2023/, 7/ and 1 more)" in line
    assert {str(p.relative_to(out)): p.read_text() for p in out.rglob("*") if p.is_file()} == theirs
    assert sorted(p.name for p in out.iterdir()) == ["0", "2023", "7", "prewarm.json"]


def test_bad_input_leaves_an_empty_folder_it_was_given_as_it_was(tmp_path):
    out = tmp_path / "given"
    out.mkdir()
    dup = ROOT / "tests" / "fixtures" / "broken" / "duplicate_query_id"
    proc = _run(tmp_path, f"hydra.sweep.dir={out}", f"dataset.path={dup}", "chunk.size=-1,-2")
    assert proc.returncode == 2 and "duplicate" in proc.stderr
    assert out.is_dir() and not any(out.iterdir())  # the user's folder: kept, and empty


def test_bad_input_removes_the_folder_the_sweep_made(tmp_path):
    dup = ROOT / "tests" / "fixtures" / "broken" / "duplicate_query_id"
    proc = _run(tmp_path, f"hydra.sweep.dir={tmp_path / 'new'}", f"dataset.path={dup}")
    assert proc.returncode == 2 and not (tmp_path / "new").exists()


def test_a_sweep_where_nothing_ran_exits_1_and_says_so(tmp_path):
    proc = _run(tmp_path, "embed.model=/nonexistent-a,/nonexistent-b", "chunk.overlap=0")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "2 setting(s): 0 ok, 2 invalid" in proc.stdout
    statuses = [r["status"] for r in _rows(next((tmp_path / "outputs" / "sweep").iterdir()))]
    assert statuses == ["invalid", "invalid"]


def _error_line(proc: subprocess.CompletedProcess) -> str:
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    (line,) = [ln for ln in proc.stderr.splitlines() if ln.startswith("sweep: error:")]
    return line


def test_a_mistyped_chunk_setting_stops_the_sweep_before_the_first_job(tmp_path):
    proc = _run(tmp_path, "chunk.strategy=token,sentance", "hydra.sweep.dir=a")
    assert proc.returncode == 2
    assert "unknown chunk strategy 'sentance' (did you mean 'sentence'?)" in _error_line(proc)
    assert "(chunk.strategy=sentance)" in _error_line(proc)
    proc = _run(tmp_path, "+chunk.sise=128", "hydra.sweep.dir=b")
    assert proc.returncode == 2
    line = _error_line(proc)
    assert "unknown chunk setting 'sise' (did you mean 'size'?)" in line
    assert "overlap" in line and "size" in line  # the valid keys include the common ones
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_a_mistyped_key_is_named_before_hydra_runs(tmp_path):
    proc = _run(tmp_path, "chunk.sise=128")
    assert proc.returncode == 2
    assert "unknown setting chunk.sise (did you mean chunk.size?)" in _error_line(proc)
    assert "+chunk.sise" not in proc.stderr  # not Hydra's advice to add the key
    assert not (tmp_path / "outputs").exists()


def test_a_sweep_in_which_no_setting_can_run_stops_before_the_first_job(tmp_path):
    proc = _run(tmp_path, "chunk.overlap=300", "chunk.size=256", "hydra.sweep.dir=a")
    assert proc.returncode == 2
    assert (
        "no setting of this sweep can run: chunk.overlap (300) must be smaller than "
        "chunk.size (256)"
    ) in _error_line(proc)
    assert not (tmp_path / "a").exists()


def test_a_grid_with_some_cells_that_cannot_run_goes_ahead_and_says_so_first(tmp_path):
    proc = _run(
        tmp_path,
        "chunk.size=32,64",
        "chunk.overlap=0,48",
        "embed.model=/nonexistent",
        "hydra.sweep.dir=a",
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert (
        "1 of 4 settings cannot run and get an invalid row, e.g. chunk.size=32 "
        "chunk.overlap=48" in proc.stdout + proc.stderr
    )
    assert [r["status"] for r in _rows(tmp_path / "a")] == ["invalid"] * 4


def test_a_cell_with_an_unknown_tokenizer_gets_an_invalid_row_and_the_grid_goes_ahead(tmp_path):
    proc = _run(
        tmp_path,
        "chunk.tokenizer=cl100k_base,no-such-tok",
        "embed.model=/nonexistent",
        "hydra.sweep.dir=a",
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "1 of 2 settings cannot run" in proc.stderr
    assert [r["status"] for r in _rows(tmp_path / "a")] == ["invalid", "invalid"]


def test_a_setting_that_fails_in_its_job_gets_an_invalid_row_and_exit_1(tmp_path):
    proc = _run(tmp_path, "embed.model=/nonexistent", "hydra.sweep.dir=c")
    assert proc.returncode == 1 and "/nonexistent" in proc.stdout + proc.stderr


def test_a_broken_dataset_anywhere_in_the_grid_stops_the_sweep_before_the_first_job(tmp_path):
    proc = _run(tmp_path, f"dataset.path={TINY},{BROKEN},{TINY}", "chunk.size=-1")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    (line,) = [ln for ln in proc.stderr.splitlines() if ln.startswith("sweep: error:")]
    assert "bad_json" in line and "queries.jsonl:" in line
    # No job ran, and no folder holding only multirun.yaml is left behind.
    assert not any((tmp_path / "outputs" / "sweep").iterdir())


def test_a_bad_eval_value_stops_the_sweep_with_one_line(tmp_path):
    proc = _run(tmp_path, "eval.budgets=[0]", "chunk.size=-1")
    assert proc.returncode == 2
    (line,) = [ln for ln in proc.stderr.splitlines() if ln.startswith("sweep: error:")]
    assert "eval.budgets must be a list of positive integers, e.g. [256,512,1024]" in line
    assert not any((tmp_path / "outputs" / "sweep").iterdir())


def test_a_link_out_of_the_dataset_folder_is_read_only_with_dataset_follow_links(tmp_path):
    # A link under docs/ to a file outside the dataset (the trial linked /etc/passwd) was read
    # as a document without a word. Now it is skipped, said in one log line, and read only
    # when dataset.follow_links=true says so.
    ds = tmp_path / "set"
    (ds / "docs").mkdir(parents=True)
    (ds / "docs" / "notes.md").write_text("# Notes\n\nNotes live in the wiki.\n")
    (tmp_path / "private.md").write_text("# Private\n\nThe safe code is 1234.\n")
    (ds / "docs" / "private.md").symlink_to(tmp_path / "private.md")
    (ds / "queries.jsonl").write_text(
        '{"query_id": "q1", "query": "code?", "relevant": [{"doc_id": "private.md", '
        '"quote": "The safe code is 1234."}]}\n'
    )
    refused = _run(tmp_path, f"dataset.path={ds}", "hydra.sweep.dir=a")
    assert refused.returncode == 2, refused.stderr[-2000:]
    (warning,) = [ln for ln in refused.stderr.splitlines() if "[WARNING]" in ln]
    assert warning.endswith(
        f"{ds / 'docs'}: skipped 1 file: 1 link leaving the dataset folder "
        "(private.md); only text, Markdown, reST, PDF, HTML, DOCX, PPTX or "
        "XLSX files are read; dataset.follow_links=true (--follow-links) "
        "follows links that leave the dataset folder"
    )
    assert "unknown doc_id 'private.md'" in refused.stderr
    # Followed, the dataset is valid: the sweep goes on to its jobs (which fail on the model).
    followed = _run(
        tmp_path,
        f"dataset.path={ds}",
        "dataset.follow_links=true",
        "embed.model=/nonexistent",
        "hydra.sweep.dir=b",
    )
    assert followed.returncode == 1 and "/nonexistent" in followed.stdout + followed.stderr
    bad = _run(
        tmp_path, f"dataset.path={ds}", "dataset.follow_links=sometimes", "hydra.sweep.dir=c"
    )
    assert bad.returncode == 2
    assert "dataset.follow_links must be true or false, got 'sometimes'" in bad.stderr
