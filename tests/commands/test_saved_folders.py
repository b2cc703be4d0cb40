"""A sweep folder is untrusted input: sweep.check, sweep.export and sweep.report on tampered,
damaged and killed folders (issue 41, items 5-11).

Each command runs as a subprocess, as CI runs it: bad input is exit 2 and exactly one line
on stderr, never a traceback, and never a result for another job than the one asked for.
The folders are written through sweep's own types (tests/sweepdirs.py, no model); a FIFO
is a real FIFO, and every run has a timeout, so a command that blocks on one fails the
test instead of hanging the suite.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from markdown_it import MarkdownIt

from sweep.reporting.write import write_report
from sweepdirs import base, make_grid

#: job 1 (size 256) is best and recommended; 0 and 2 are significantly worse
SCORES = {(128, 0): base(), (256, 0): np.ones(60), (512, 0): base(seed=3)}
RECOMMENDED = 1


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> Path:
    """A finished sweep folder: rows, per-query scores, traces and its report's tables."""
    folder = tmp_path_factory.mktemp("saved") / "sweep"
    make_grid(folder, SCORES)
    write_report(folder, quiet=True)
    return folder


def _copy(saved: Path, tmp_path: Path, name: str = "new") -> Path:
    return Path(shutil.copytree(saved, tmp_path / name))


def _run(*args, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *map(str, args)], capture_output=True,
                          text=True, timeout=60, env=env or _env())


def _env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"}
    return {**env, **extra}


def _refused(proc: subprocess.CompletedProcess, *names: str) -> str:
    """The one line of a bad-input refusal, checked to name each of ``names``."""
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr and all(n in lines[0] for n in names), lines[0]
    return lines[0]


def _check(folder: Path, baseline: Path, *more: str) -> subprocess.CompletedProcess:
    return _run("sweep.check", folder, "--baseline", baseline, *more)


def _export(folder: Path, out: Path, *which: str) -> subprocess.CompletedProcess:
    return _run("sweep.export", folder, *(which or ("--recommended",)), "--to", "chunks", out)


# -- item 5: the recommended job, recorded in results.csv ------------------------------------

def test_results_csv_records_the_recommended_job_and_check_takes_it(saved):
    with open(saved / "results.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [(r["job"], r["recommended"]) for r in rows] == [("0", "False"), ("1", "True"),
                                                            ("2", "False")]
    proc = _check(saved, saved, "--json")
    assert proc.returncode == 0, proc.stderr
    assert f"job {RECOMMENDED} of" in json.loads(proc.stdout)["new"]


def test_without_the_recommended_jobs_row_check_and_export_refuse(saved, tmp_path):
    new = _copy(saved, tmp_path)
    row = new / str(RECOMMENDED) / "row.json"
    row.unlink()  # job 0 is now the best of the rows left: it must not be taken instead
    _refused(_check(new, saved), f"{row}: missing", f"results.csv recommends job {RECOMMENDED}")
    out = tmp_path / "chunks.jsonl"
    _refused(_export(new, out), f"{row}: missing")
    assert not out.exists()


@pytest.mark.parametrize("damage, says", [
    ("missing", "results.csv: missing"),
    ("another job", "its rows recommend job 1, its results.csv job 2"),
    ("no job", "its rows recommend job 1, its results.csv none"),
    ("not a flag", "results.csv:3: job '1', recommended 'yes'"),
])
def test_a_results_csv_that_cannot_say_or_disagrees_is_refused(saved, tmp_path, damage, says):
    new = _copy(saved, tmp_path)
    path = new / "results.csv"
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    if damage == "missing":
        path.unlink()
    else:
        for r in rows:
            flag = {"another job": "2", "no job": None, "not a flag": "1"}[damage]
            r["recommended"] = str(r["job"] == flag)
            if damage == "not a flag" and r["job"] == "1":
                r["recommended"] = "yes"
        with open(path, "w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    _refused(_check(new, saved), says)
    out = tmp_path / "chunks.jsonl"
    _refused(_export(new, out), says)
    assert not out.exists()


def _as_an_older_sweep_wrote_it(path: Path) -> None:
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        del r["recommended"]
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def test_a_baseline_an_older_sweep_wrote_is_checked_when_every_job_it_lists_is_there(
        saved, tmp_path):
    # A results.csv without the recommended column (a baseline committed before sweep kept
    # one): the pick is recomputed from the rows, said once, as long as every job the table
    # lists still has its row; a deleted row is refused, never replaced by another job.
    old = _copy(saved, tmp_path, "old")
    _as_an_older_sweep_wrote_it(old / "results.csv")
    proc = _check(saved, old, "--json")
    assert proc.returncode == 0, proc.stderr
    assert f"job {RECOMMENDED} of" in json.loads(proc.stdout)["baseline"]
    assert proc.stderr.splitlines() == [
        f"sweep.check: warning: {old / 'results.csv'} has no recommended column (an older "
        f"sweep wrote it): the recommendation is recomputed from its rows; python -m "
        f"sweep.report {old} records it"]
    row = old / str(RECOMMENDED) / "row.json"
    row.unlink()
    _refused(_check(saved, old), f"{row}: missing", f"results.csv lists job {RECOMMENDED}")


# -- item 6: per-query values that are not scores ---------------------------------------------

def _line_of(path: Path, query: str, level: str = "span", metric: str = "recall@5") -> int:
    lines = path.read_text().splitlines()
    return next(i for i, line in enumerate(lines) if line.startswith(f"{query},{level},{metric},"))


@pytest.mark.parametrize("value", ["-5", "inf", "1e308", "duplicate"])
def test_a_per_query_value_that_is_not_a_score_is_refused_by_file_and_line(saved, tmp_path,
                                                                           value):
    new = _copy(saved, tmp_path)
    path = new / str(RECOMMENDED) / "per_query.csv"
    lines = path.read_text().splitlines(keepends=True)
    i = _line_of(path, "q7")
    if value == "duplicate":  # q7 twice: one value of 0 beside the real 1
        lines.append(lines[i].rsplit(",", 1)[0] + ",0\n")
        where, says = f"{path}:{len(lines)}:", f"a second span recall@5 value for query 'q7'"
    else:
        lines[i] = lines[i].rsplit(",", 1)[0] + f",{value}\n"
        where, says = f"{path}:{i + 1}:", f"value '{value}' of query 'q7' is not a score"
    path.write_text("".join(lines))
    _refused(_check(new, saved), where, says)
    _refused(_check(new, saved, "--job", str(RECOMMENDED)), where, says)


def _without_questions(path: Path, gone: set[str]) -> None:
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(line for line in lines if line.split(",", 1)[0] not in gone))


def test_per_query_scores_the_row_does_not_summarize_are_refused(saved, tmp_path):
    # Deleting the questions a setting got wrong raised its mean over the questions left:
    # check passed a regression. The per-query scores must be the row's.
    new = _copy(saved, tmp_path)
    path = new / str(RECOMMENDED) / "per_query.csv"
    _without_questions(path, {f"q{i}" for i in range(30)})
    _refused(_check(new, saved), f"{path}: 30 questions with span recall@5",
             "counts 60", "the per-query scores are not the ones this job's row summarizes")


def test_settings_scored_on_different_questions_of_one_set_are_refused(saved, tmp_path):
    # Both files agree with their rows, but not with each other: the same evaluation set
    # scores the same questions, so one of them was cut.
    new = _copy(saved, tmp_path)
    job = new / str(RECOMMENDED)
    _without_questions(job / "per_query.csv", {f"q{i}" for i in range(30)})
    row = json.loads((job / "row.json").read_text())
    for level in row["summary"]["levels"].values():
        level["n_queries"] = 30
    (job / "row.json").write_text(json.dumps(row))
    _refused(_check(new, saved), "scored on different questions (30 in one only",
             "a per_query.csv is damaged")


def test_a_binary_per_query_file_names_the_file_and_line(saved, tmp_path):
    new = _copy(saved, tmp_path)
    path = new / str(RECOMMENDED) / "per_query.csv"
    lines = path.read_bytes().splitlines(keepends=True)
    lines[5] = b"q\xff\xfe\x00," + lines[5]
    path.write_bytes(b"".join(lines))
    line = _refused(_check(new, saved, "--job", str(RECOMMENDED)), f"{path}:6: not UTF-8 text")
    assert "codec" not in line


# -- item 7: a row nested too deeply ----------------------------------------------------------

def test_a_row_nested_too_deeply_is_one_line_in_check_export_and_report(saved, tmp_path):
    new = _copy(saved, tmp_path)
    row = new / str(RECOMMENDED) / "row.json"
    row.write_text("[" * 100_000 + "]" * 100_000)
    says = f"{row}: nested too deeply to be a row"
    _refused(_check(new, saved), says)
    _refused(_check(new, saved, "--job", str(RECOMMENDED)), says)
    _refused(_export(new, tmp_path / "o.jsonl", "--job", str(RECOMMENDED)), says)
    report = _run("sweep.report", "--no-html", new)  # the other rows still get their table
    assert report.returncode == 0 and "Traceback" not in report.stderr
    assert report.stderr.strip().splitlines() == [f"sweep.report: warning: skipped a row: {says}"]


# -- item 9: names in Markdown ----------------------------------------------------------------

def test_a_hostile_folder_name_adds_no_column_and_no_tag_to_the_step_summary(saved, tmp_path):
    new = _copy(saved, tmp_path, "new|<img src=x onerror=alert(1)>")
    summary = tmp_path / "summary.md"
    proc = _run("sweep.check", new, "--baseline", saved,
                env=_env(GITHUB_STEP_SUMMARY=str(summary)))
    assert proc.returncode == 0, proc.stderr
    html = MarkdownIt("commonmark").enable("table").render(summary.read_text(encoding="utf-8"))
    assert "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    rows = re.findall(r"<tr>(.*?)</tr>", html, flags=re.S)
    assert len(rows) == 3 and all(row.count("<t") == 3 for row in rows), html


# -- item 10: special files in place of a sweep folder's files --------------------------------

@pytest.mark.parametrize("name", ["1/per_query.csv", "1/row.json", "results.csv",
                                  "1/hits.jsonl"])
def test_a_fifo_in_a_sweep_folder_is_refused_not_waited_on(saved, tmp_path, name):
    new = _copy(saved, tmp_path)
    fifo = new / name
    fifo.unlink()
    os.mkfifo(fifo)
    says = f"{fifo}: is a FIFO, not a regular file"
    if name == "1/hits.jsonl":  # only the report reads traces
        _refused(_run("sweep.report", "--no-html", new), says)
        return
    _refused(_check(new, saved), says)
    out = tmp_path / "o.jsonl"
    _refused(_export(new, out), says)
    assert not out.exists()
    if name == "1/per_query.csv":
        _refused(_run("sweep.report", "--no-html", new), says)


def test_a_fifo_as_the_chunks_of_the_exported_job_is_refused(saved, tmp_path):
    new = _copy(saved, tmp_path)
    os.mkfifo(new / "0" / "chunks.csv")
    _refused(_export(new, tmp_path / "o.jsonl", "--job", "0"),
             f"{new / '0' / 'chunks.csv'}: is a FIFO, not a regular file")


# -- item 11: a killed sweep ------------------------------------------------------------------

def test_the_report_of_a_killed_sweep_names_the_jobs_that_never_finished(saved, tmp_path):
    new = _copy(saved, tmp_path)
    for job in (3, 4):  # started (Hydra's folder, the resolved config), killed before the row
        (new / str(job) / ".hydra").mkdir(parents=True)
        (new / str(job) / "resolved_config.yaml").write_text("chunk:\n  size: 1024\n")
    proc = _run("sweep.report", "--no-html", new)
    assert proc.returncode == 0 and "3 setting(s): 3 ok" in proc.stdout
    assert proc.stderr.strip().splitlines() == [
        "sweep.report: warning: jobs 3, 4 never finished (no row.json: the sweep was killed, "
        "or is still running), so they are not in the table"]
    assert "- jobs 3, 4 never finished" in (new / "results.md").read_text(encoding="utf-8")
    shutil.rmtree(new / "4")
    assert "job 3 never finished" in _run("sweep.report", "--no-html", new).stderr


def test_a_fifo_as_the_reports_own_manifest_is_refused_not_waited_on(saved, tmp_path):
    new = _copy(saved, tmp_path)
    manifest = new / "per_query.jobs.json"  # the report's own bookkeeping, a FIFO put there
    manifest.unlink()
    os.mkfifo(manifest)
    proc = _run("sweep.report", "--no-html", new)
    # Only a regular file is ever replaced: a FIFO is no file of sweep's, so it stays.
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines() == [
        f"sweep.report: error: {manifest}: is a FIFO: only a regular file is replaced"]
    assert stat.S_ISFIFO(os.lstat(manifest).st_mode)
