"""What ``python -m sweep`` does around Hydra: run the job it hands over, and end the
sweep however it ends (every job done, Ctrl-C, a launcher that gave up, a full disk) with
the finished rows' table and the exit status.
"""

from __future__ import annotations

import logging
import signal
import sys
from pathlib import Path
from typing import NoReturn

from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig
from omegaconf.errors import InterpolationResolutionError

from sweep.core import interrupts, progress
from sweep.core.errors import BadInput
from sweep.core.folderlock import locked
from sweep.core.interrupts import quiet_second_interrupt
from sweep.core.messages import first_line
from sweep.hydrakit.devices import launch_of
from sweep.jobs.callbacks import SweepRun
from sweep.jobs.diskfull import DiskFull, guard_job_setup, stop_if_disk_full
from sweep.jobs.job import run_job
from sweep.reporting.sweepreport import build_report
from sweep.reporting.tables import terminal_text
from sweep.reporting.write import summary_line, write_html, write_report, write_tables

__all__ = [
    "end_sweep",
    "on_disk_full",
    "on_interrupt",
    "on_launcher_failure",
    "run_hydra_job",
    "sweep_exit_status",
]

log = logging.getLogger("sweep")

# Here, because the launching process and every worker process of a parallel launcher
# import this module before their first job: a full disk in Hydra's own job setup stops
# the sweep in one line too.
guard_job_setup()


def run_hydra_job(cfg: DictConfig, state: SweepRun) -> None:
    """The job Hydra hands this process: where it writes, which job it is, then its row and
    the rebuilt table. ``state`` is the command's run, told where the sweep writes."""
    # A Ctrl-C while Hydra prepared this job was held (it would have left Hydra's config
    # half set, and Hydra would report that as a crash); one that Python could not raise
    # (it landed in a finalizer) was remembered. Either ends the sweep here.
    interrupts.release()
    hc = HydraConfig.get()
    if hc.mode == RunMode.RUN:  # hydra.mode=RUN: one job, laid out like a sweep of one
        sweep_dir = Path(hc.run.dir)
        job_dir = sweep_dir / "0"
    else:
        sweep_dir = Path(hc.sweep.dir)
        job_dir = Path(hc.runtime.output_dir)
    state.sweep_dir = sweep_dir
    job_num = int(hc.job.num) if hc.job.get("num") is not None else 0
    launch = launch_of(hc)
    if launch.n_jobs and launch.separate_processes:  # a worker: "[3/6]" in its log lines too
        progress.set_total(launch.n_jobs)
    try:
        run_job(cfg, job_dir, job_num, list(hc.overrides.task), dict(hc.runtime.choices), launch)
    except (BadInput, InterpolationResolutionError) as e:
        # Bad input the checks before the sweep could not see: one line, no traceback.
        state.fail(str(e), sweep_dir)
    except OSError as e:  # its folder's disk is full: every later job would fail alike
        stop_if_disk_full(e, job_dir)
        raise
    # Rebuilt after every job, so a crash or Ctrl-C later never loses this row; after the
    # last job of this process the sweep's end, right after it, writes the tables.
    ends_here = not launch.separate_processes and (
        hc.mode == RunMode.RUN or job_num + 1 == launch.n_jobs
    )
    if not ends_here:
        try:
            write_report(sweep_dir, quiet=True)
        except Exception as e:  # the row is saved; the table can be rebuilt with sweep.report
            stop_if_disk_full(e, sweep_dir)
            log.warning(
                "could not update the sweep table (%s); rows are kept in %s",
                first_line(e, with_type=True),
                sweep_dir,
            )
    interrupts.hold()


def on_interrupt(state: SweepRun) -> None:
    """Ctrl-C: the finished rows of the command's run get their table, then exit 130."""
    # Deaf to a second Ctrl-C before anything else: the tables take a moment and are what
    # matters.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # A second Ctrl-C that lands in a finalizer has done its job (skipping the pictures)
    # and says nothing more.
    quiet_second_interrupt()
    print("\nsweep: interrupted", file=sys.stderr)
    folder = state.sweep_dir
    rep = None
    if folder is not None and folder.is_dir():
        rep = write_report(folder, quiet=True, html=False)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if rep is None:
        where = f" in {folder}" if folder is not None else ""
        print(f"sweep: no setting had finished; nothing to report{where}", file=sys.stderr)
        raise SystemExit(130)
    # A second Ctrl-C may land in a C extension's import (matplotlib's), which turns it
    # into an ImportError: remember it, so that it is known for what it was.
    interrupts.forget()
    interrupts.listen()
    try:
        write_html(rep)
    except (KeyboardInterrupt, Exception) as e:
        if isinstance(e, KeyboardInterrupt) or interrupts.requested():
            print(
                "sweep: interrupted again: pictures and report.html skipped "
                f"(python -m sweep.report {folder} draws them)",
                file=sys.stderr,
            )
        else:  # the tables are written; only the pictures failed
            print(
                f"sweep: could not draw the pictures and report.html "
                f"({first_line(e, with_type=True)}); python -m sweep.report {folder} draws "
                "them",
                file=sys.stderr,
            )
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    print("\n" + terminal_text(rep) + "\n")
    print(
        f"sweep: {summary_line(rep)} finished before the interrupt; they are kept in "
        f"{folder}/ (results.md, results.csv)",
        file=sys.stderr,
    )
    raise SystemExit(130)


def on_launcher_failure(state: SweepRun) -> None:
    """The launcher raised (a joblib worker killed, a Ray node lost) and Hydra has said
    so: the rows that finished get their table all the same."""
    folder = state.sweep_dir
    if state.finished or folder is None or not folder.is_dir():
        return
    try:
        rep = write_report(folder, quiet=True, html=False)
    except Exception as e:  # the rows are on disk; sweep.report can try again
        log.warning("could not update the sweep table (%s)", first_line(e, with_type=True))
        return
    if rep is not None:
        print(
            f"sweep: the launcher stopped before every job ended; {summary_line(rep)} "
            f"finished and are kept in {folder}/ (results.md, results.csv)",
            file=sys.stderr,
        )


def on_disk_full(error: DiskFull, state: SweepRun) -> NoReturn:
    """A file of the sweep could not be written for lack of space: one line naming it, then
    the finished rows' table, and their tables and report.html where they still fit; exit 1."""
    print(f"sweep: error: {error}", file=sys.stderr)
    folder = state.sweep_dir
    if folder is None or not folder.is_dir():
        raise SystemExit(1)
    again = f"python -m sweep.report {folder} writes them once there is room"
    try:
        rep = build_report(folder)  # reading needs no room (and no job runs any more)
    except Exception as e:  # a damaged row: sweep.report names it
        print(f"sweep: could not read the finished rows ({_why(e)}); {again}", file=sys.stderr)
        raise SystemExit(1) from None
    if rep is None:
        print(f"sweep: no setting had finished; nothing to report in {folder}", file=sys.stderr)
        raise SystemExit(1)
    written, missed, why = [], [], ""
    for names, write in (("results.md and results.csv", write_tables), ("report.html", write_html)):
        try:
            with locked(folder):
                write(rep)
            written.append(names)
        except Exception as e:
            # Tables that an earlier job's update wrote stay: they lack only the last rows.
            missed.append(
                f"{names} could not be "
                + (
                    "updated"
                    if write is write_tables and (folder / "results.csv").exists()
                    else "written"
                )
            )
            why = why or _why(e)
    print("\n" + terminal_text(rep) + "\n")
    line = (
        f"sweep: {summary_line(rep)} finished before the disk filled; they are kept in "
        f"{folder}/ ({', '.join(written + ['<job>/row.json'])})"
    )
    if missed:
        line += f"; {', '.join(missed)} ({why}): {again}"
    print(line, file=sys.stderr)
    raise SystemExit(1)


def _why(error: BaseException) -> str:
    """``path: reason`` of a failed write, else its first line."""
    if isinstance(error, OSError) and error.strerror:
        return f"{error.filename}: {error.strerror}" if error.filename else error.strerror
    return first_line(error, with_type=True)


def sweep_exit_status(state: SweepRun) -> int:
    """0 when a sweep ended with at least one ok setting (or ran none: --help, --cfg), else 1."""
    if not state.finished:
        return 0
    return 0 if state.report is not None and state.report.ok else 1


def end_sweep(state: SweepRun) -> NoReturn:
    """Exit once Hydra has returned. A Ctrl-C that was held while Hydra worked, or that
    Python could not raise, is an interrupt when it came before the last table (the table
    of the finished rows, exit 130); after it, it only makes the exit status 130."""
    if interrupts.requested():
        if not state.finished:
            on_interrupt(state)
        raise SystemExit(130)
    raise SystemExit(sweep_exit_status(state))
