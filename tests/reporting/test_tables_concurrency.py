"""The sweep's tables when jobs finish out of order, fail, or rebuild them all at once.

Under a parallel launcher every job saves its row and then rebuilds results.csv,
results.md and per_query.csv; the folder lock (sweep.core.folderlock) makes those
rebuilds take turns. The reference is always a rebuild from scratch of the
same rows.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import signal
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from sweep.core.folderlock import LOCK_NAME, locked
from sweep.reporting.write import write_report

sys.path.insert(0, str(Path(__file__).parents[1]))
from sweepdirs import base, make_job

GRID = [(s, o) for s in (64, 128, 256, 512) for o in (0, 16)]


def _job(sweep: Path, job: int) -> None:
    size, overlap = GRID[job]
    if job == 3:
        make_job(sweep, job, size, overlap, None, status="failed", error="RuntimeError: boom")
    elif job == 6:
        make_job(sweep, job, size, overlap, None, status="invalid", error="overlap >= size")
    else:
        make_job(sweep, job, size, overlap, base(40, seed=job))


def _from_scratch(sweep: Path, tmp: Path) -> tuple[pd.DataFrame, str]:
    """The tables of the same rows, rebuilt in a fresh copy of the folder."""
    copy = tmp / "scratch"
    shutil.rmtree(copy, ignore_errors=True)
    copy.mkdir()
    for job_dir in sweep.iterdir():
        if job_dir.is_dir() and (job_dir / "row.json").exists():
            shutil.copytree(job_dir, copy / job_dir.name)
    write_report(copy, quiet=True)
    return _tables(copy)


def _tables(sweep: Path) -> tuple[pd.DataFrame, str]:
    results = pd.read_csv(sweep / "results.csv").drop(columns=["total_s"])
    return results, (sweep / "per_query.csv").read_text()


def _assert_same(sweep: Path, tmp: Path) -> None:
    got, got_pq = _tables(sweep)
    want, want_pq = _from_scratch(sweep, tmp)
    pd.testing.assert_frame_equal(got, want)
    assert got_pq == want_pq


def test_jobs_that_finish_out_of_order_or_fail_get_the_same_tables(tmp_path):
    sweep = tmp_path / "sweep"
    sweep.mkdir()
    order = [5, 0, 3, 7, 1, 6, 2, 4]  # 3 fails, 6 is invalid
    for n, job in enumerate(order, 1):
        _job(sweep, job)
        write_report(sweep, quiet=True)
        _assert_same(sweep, tmp_path)
        assert len(pd.read_csv(sweep / "results.csv")) == n
    pq = pd.read_csv(sweep / "per_query.csv")
    # Every ok job once, in job order, whatever order they finished in.
    assert list(dict.fromkeys(pq["job"])) == [0, 1, 2, 4, 5, 7]
    assert not pq.duplicated().any()


def _finish(sweep: str, job: int, start, rounds: int) -> None:
    """A job of a parallel sweep: save its row, then rebuild the tables with the others."""
    start.wait()
    _job(Path(sweep), job)
    for _ in range(rounds):
        write_report(Path(sweep), quiet=True)


def test_jobs_rebuilding_the_tables_at_the_same_time_take_turns(tmp_path):
    sweep = tmp_path / "sweep"
    sweep.mkdir()
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Barrier(len(GRID))
    procs = [
        ctx.Process(target=_finish, args=(str(sweep), job, start, 4)) for job in range(len(GRID))
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(300)
    assert [p.exitcode for p in procs] == [0] * len(GRID)
    _assert_same(sweep, tmp_path)
    pq = pd.read_csv(sweep / "per_query.csv")
    assert not pq.duplicated().any() and sorted(pq["job"].unique()) == [0, 1, 2, 4, 5, 7]
    assert sorted(pd.read_csv(sweep / "results.csv")["job"]) == list(range(len(GRID)))


def _rebuild_forever(sweep: str) -> None:
    while True:
        write_report(Path(sweep), quiet=True)


def test_a_job_killed_while_rebuilding_leaves_the_folder_usable(tmp_path):
    sweep = tmp_path / "sweep"
    sweep.mkdir()
    for job in range(5):
        _job(sweep, job)
    ctx = multiprocessing.get_context("spawn")
    victim = ctx.Process(target=_rebuild_forever, args=(str(sweep),))
    victim.start()
    deadline = time.monotonic() + 60
    while not (sweep / "results.csv").exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(float(np.random.default_rng().uniform(0.05, 0.5)))
    os.kill(victim.pid, signal.SIGKILL)
    victim.join(30)
    # Its lock died with it: the next rebuild does not wait for it, and the tables are whole.
    for job in range(5, 8):
        _job(sweep, job)
    write_report(sweep, quiet=True)
    _assert_same(sweep, tmp_path)


def test_the_lock_is_exclusive_and_released_on_exit(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    stamp = tmp_path / "acquired"
    with locked(tmp_path):
        assert (tmp_path / LOCK_NAME).exists()
        p = ctx.Process(target=_hold_briefly, args=(str(tmp_path), str(stamp)))
        p.start()
        time.sleep(1.5)
        released = time.time()
    p.join(60)
    assert p.exitcode == 0
    assert float(stamp.read_text()) >= released  # it got the lock only once this one let go


def _hold_briefly(folder: str, stamp: str) -> None:
    with locked(Path(folder)):
        Path(stamp).write_text(repr(time.time()))
