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
    return subprocess.run(
        [sys.executable, "-m", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env or _env(),
    )


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
    assert [(r["job"], r["recommended"]) for r in rows] == [
        ("0", "False"),
        ("1", "True"),
        ("2", "False"),
    ]
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


@pytest.mark.parametrize(
    "damage, says",
    [
        ("missing", "results.csv: missing"),
        ("another job", "its rows recommend job 1, its results.csv job 2"),
        ("no job", "its rows recommend job 1, its results.csv none"),
        ("not a flag", "results.csv:3: job '1', recommended 'yes'"),
    ],
)
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
    saved, tmp_path
):
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
        f"sweep.report {old} records it"
    ]
    row = old / str(RECOMMENDED) / "row.json"
    row.unlink()
    _refused(_check(saved, old), f"{row}: missing", f"results.csv lists job {RECOMMENDED}")


# -- item 6: per-query values that are not scores ---------------------------------------------


def _line_of(path: Path, query: str, level: str = "span", metric: str = "recall@5") -> int:
    lines = path.read_text().splitlines()
    return next(i for i, line in enumerate(lines) if line.startswith(f"{query},{level},{metric},"))


@pytest.mark.parametrize("value", ["-5", "inf", "1e308", "duplicate"])
def test_a_per_query_value_that_is_not_a_score_is_refused_by_file_and_line(saved, tmp_path, value):
    new = _copy(saved, tmp_path)
    path = new / str(RECOMMENDED) / "per_query.csv"
    lines = path.read_text().splitlines(keepends=True)
    i = _line_of(path, "q7")
    if value == "duplicate":  # q7 twice: one value of 0 beside the real 1
        lines.append(lines[i].rsplit(",", 1)[0] + ",0\n")
        where, says = f"{path}:{len(lines)}:", "a second span recall@5 value for query 'q7'"
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
    _refused(
        _check(new, saved),
        f"{path}: 30 questions with span recall@5",
        "counts 60",
        "the per-query scores are not the ones this job's row summarizes",
    )


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
    _refused(
        _check(new, saved),
        "scored on different questions (30 in one only",
        "a per_query.csv is damaged",
    )


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
    proc = _run("sweep.check", new, "--baseline", saved, env=_env(GITHUB_STEP_SUMMARY=str(summary)))
    assert proc.returncode == 0, proc.stderr
    html = MarkdownIt("commonmark").enable("table").render(summary.read_text(encoding="utf-8"))
    assert "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    rows = re.findall(r"<tr>(.*?)</tr>", html, flags=re.S)
    assert len(rows) == 3 and all(row.count("<t") == 3 for row in rows), html


# -- item 10: special files in place of a sweep folder's files --------------------------------


@pytest.mark.parametrize("name", ["1/per_query.csv", "1/row.json", "results.csv", "1/hits.jsonl"])
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
    _refused(
        _export(new, tmp_path / "o.jsonl", "--job", "0"),
        f"{new / '0' / 'chunks.csv'}: is a FIFO, not a regular file",
    )


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
        "or is still running), so they are not in the table"
    ]
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
        f"sweep.report: error: {manifest}: is a FIFO: only a regular file is replaced"
    ]
    assert stat.S_ISFIFO(os.lstat(manifest).st_mode)


# -- links: nothing outside a sweep folder is read, nothing outside it written ----------------

SECRET = "sk-proj-secret0123456789"


def _outside(tmp_path: Path, saved: Path, name: str) -> Path:
    """A copy of the saved folder's file ``name`` outside the folder: a link to it would be
    read as the folder's own, were links followed out of the folder."""
    target = tmp_path / "elsewhere" / name
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(saved / name, target)
    return target


def test_a_link_to_the_environment_never_shows_it(saved, tmp_path):
    # The review's reproducer: per_query.csv -> /proc/self/environ printed the environment
    # (the API key) in check's "expected header ..., got '<first line>'".
    new = _copy(saved, tmp_path)
    link = new / str(RECOMMENDED) / "per_query.csv"
    link.unlink()
    link.symlink_to("/proc/self/environ")
    env = _env(OPENAI_API_KEY=SECRET)
    says = f"{link}: is a link leading out of the sweep folder"
    for proc in (
        _run("sweep.check", saved, "--baseline", new, env=env),
        _run("sweep.check", new, "--baseline", saved, "--job", str(RECOMMENDED), env=env),
        _run("sweep.export", new, "--recommended", "--to", "chunks", tmp_path / "o.jsonl", env=env),
        _run("sweep.report", "--no-html", new, env=env),
    ):
        _refused(proc, says)
        assert SECRET not in proc.stdout + proc.stderr


@pytest.mark.parametrize("name", ["1/per_query.csv", "1/row.json", "results.csv"])
def test_a_file_linked_from_outside_the_folder_is_refused_by_check_and_export(
    saved, tmp_path, name
):
    # The target is a good copy of the file: followed, it would be read as the folder's own.
    new = _copy(saved, tmp_path)
    target = _outside(tmp_path, saved, name)
    (new / name).unlink()
    (new / name).symlink_to(target)
    says = f"{new / name}: is a link leading out of the sweep folder"
    _refused(_check(new, saved), says)
    out = tmp_path / "o.jsonl"
    _refused(_export(new, out), says)
    assert not out.exists()


def test_traces_linked_from_outside_the_folder_are_refused_by_the_report(saved, tmp_path):
    new = _copy(saved, tmp_path)
    target = _outside(tmp_path, saved, "1/hits.jsonl")
    (new / "1" / "hits.jsonl").unlink()
    (new / "1" / "hits.jsonl").symlink_to(target)
    _refused(
        _run("sweep.report", "--no-html", new),
        f"{new / '1' / 'hits.jsonl'}: is a link leading out of the sweep folder",
    )


def test_a_job_folder_linked_from_outside_is_refused(saved, tmp_path):
    # A link in the job folder's place: every file under it leads out of the sweep folder.
    new = _copy(saved, tmp_path)
    elsewhere = Path(shutil.copytree(saved / str(RECOMMENDED), tmp_path / "elsewhere"))
    shutil.rmtree(new / str(RECOMMENDED))
    (new / str(RECOMMENDED)).symlink_to(elsewhere)
    says = f"{new / str(RECOMMENDED) / 'row.json'}: leads out of the sweep folder through a link"
    _refused(_check(new, saved), says)
    _refused(_check(new, saved, "--job", str(RECOMMENDED)), says)


def test_a_sweep_folder_named_through_a_link_is_read(saved, tmp_path):
    # outputs/latest -> the sweep: the folder the user named may be a link; inside it, links
    # that stay inside are fine too.
    new = _copy(saved, tmp_path)
    (new / "0" / "per_query.csv").rename(new / "0" / "scores.csv")
    (new / "0" / "per_query.csv").symlink_to("scores.csv")
    latest = tmp_path / "latest"
    latest.symlink_to(new)
    proc = _check(latest, saved, "--json")
    assert proc.returncode == 0, proc.stderr
    assert _check(latest, saved, "--job", "0").returncode in (0, 1)
    assert _run("sweep.report", "--no-html", latest).returncode == 0


def test_a_per_query_file_that_is_not_one_is_refused_without_quoting_it(saved, tmp_path):
    new = _copy(saved, tmp_path)
    path = new / str(RECOMMENDED) / "per_query.csv"
    path.write_text(f"OPENAI_API_KEY={SECRET}\nquery_id,level,metric,value\n")
    line = _refused(
        _check(new, saved, "--job", str(RECOMMENDED)),
        f"{path}:1: expected header query_id,level,metric,value; the first line is "
        "something else (39 characters)",
    )
    assert SECRET not in line


def test_documents_linked_from_outside_never_reach_the_report(saved, tmp_path):
    # corpus/ holds the documents' texts, which the report's explorer shows: a file from
    # elsewhere must not become part of report.html.
    from sweep.store.corpus import kept_documents_path
    from sweep.store.row import read_row

    new = _copy(saved, tmp_path)
    fingerprint = read_row(new / "1" / "row.json").dataset.fingerprint
    path = kept_documents_path(new, fingerprint)
    path.parent.mkdir(exist_ok=True)
    path.unlink(missing_ok=True)
    target = tmp_path / "elsewhere" / "corpus.jsonl"
    target.parent.mkdir()
    target.write_text(json.dumps({"doc_id": "doc0.md", "text": f"key {SECRET}"}) + "\n")
    path.symlink_to(target)
    _refused(_run("sweep.report", new), f"{path}: is a link leading out of the sweep folder")
    report = new / "report.html"
    assert not report.exists() or SECRET not in report.read_text(encoding="utf-8")


def test_plots_as_a_link_to_another_folder_is_refused_and_nothing_written_there(saved, tmp_path):
    new = _copy(saved, tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (new / "plots").symlink_to(elsewhere)
    _refused(_run("sweep.report", new), f"{new / 'plots'}: is a symbolic link, not a folder")
    assert list(elsewhere.iterdir()) == [] and (new / "plots").is_symlink()
    (new / "plots").unlink()
    (new / "plots").write_text("mine")  # a file in its place: left as it is
    _refused(_run("sweep.report", new), f"{new / 'plots'}: is a regular file, not a folder")
    assert (new / "plots").read_text() == "mine"


def test_a_link_planted_under_a_temporary_name_is_never_written_through(saved, tmp_path):
    # The pictures went through "<name>.tmp.png": a link under that name overwrote its target.
    new = _copy(saved, tmp_path)
    (new / "plots").mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("mine")
    names = ["top_score", "heatmap_span_recall_5", "budget_span_recall", "chunk_tokens"]
    for name in names:
        (new / "plots" / f"{name}.tmp.png").symlink_to(victim)
    proc = _run("sweep.report", new)
    assert proc.returncode == 0, proc.stderr
    assert victim.read_text() == "mine"
    assert (new / "plots" / "heatmap_span_recall_5.png").read_bytes().startswith(b"\x89PNG")
    assert all((new / "plots" / f"{n}.tmp.png").is_symlink() for n in names)  # not ours: kept


def test_a_picture_linked_from_outside_never_reaches_the_comparison_page(tmp_path):
    # One setting per sweep: no heatmap is drawn, so a heatmap planted as a link stays, and
    # the comparison page, which shows each sweep's heatmap, would embed its target.
    import base64

    from sweep.reporting.pictures import plot_name
    from sweepdirs import make_grid

    a, b = tmp_path / "a", tmp_path / "b"
    make_grid(a, {(128, 0): base()})
    make_grid(b, {(256, 0): base(seed=3)})
    secret = tmp_path / "secret.png"
    secret.write_bytes(f"\x89PNG {SECRET}".encode())
    (b / "plots").mkdir()
    picture = b / "plots" / plot_name("heatmap", "span", "recall@5")
    picture.symlink_to(secret)
    page = tmp_path / "page.html"
    proc = _run("sweep.report", a, b, "--out", page)
    assert proc.returncode == 2, proc.stderr
    assert f"{picture}: is a link leading out of the sweep folder" in proc.stderr
    assert not page.exists() or base64.b64encode(secret.read_bytes())[
        :16
    ].decode() not in page.read_text(encoding="utf-8")


@pytest.mark.parametrize("kind", ["dangling link", "FIFO"])
def test_a_lock_file_that_is_no_file_of_sweeps_is_refused_and_never_followed(saved, tmp_path, kind):
    new = _copy(saved, tmp_path)
    lock = new / ".sweep.lock"
    lock.unlink(missing_ok=True)
    target = tmp_path / "created_by_lock"
    if kind == "FIFO":
        os.mkfifo(lock)
    else:
        lock.symlink_to(target)  # opened, it created an empty file at the target
    what = "a FIFO" if kind == "FIFO" else "a symbolic link"
    _refused(_run("sweep.report", "--no-html", new), f"{lock}: is {what}, not a regular file")
    assert not target.exists()
