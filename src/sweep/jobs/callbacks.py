"""Hydra callback: check the grid before the first job, print the table when the sweep ends.

Before a parallel sweep's first job it also embeds the grid's texts once
(``sweep.jobs.prewarm``), so that jobs running side by side only read the cache.

It runs in the process that launches the jobs (whatever the launcher), so it
also tells the command's :class:`SweepRun` what its exit status and its Ctrl-C handler
need to know.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf

from sweep.core import progress
from sweep.core.errors import BadInput
from sweep.core.messages import one_line
from sweep.datasets.loading import DatasetError
from sweep.embedding.cache import resolve_cache_dir
from sweep.hydrakit import devices
from sweep.hydrakit.config import made_here
from sweep.hydrakit.overrides import expand_grid
from sweep.jobs import preflight
from sweep.jobs.diskfull import stop_if_disk_full
from sweep.jobs.prewarm import (
    REPORT_NAME,
    Grid,
    choose_backends,
    collect_grid,
    plan_of,
    prewarm_grid,
)
from sweep.reporting.alerts import ALERTS_NAME, write_alerts
from sweep.reporting.figurecache import FIGURES_DIR, FigureCache
from sweep.reporting.sweepreport import SweepReport
from sweep.reporting.write import write_report
from sweep.store.row import load_rows

log = logging.getLogger("sweep")


@dataclass
class SweepRun:
    """What the command ``python -m sweep`` learns of its sweep as it runs: its folder, and
    at its end the table. The command owns one (``sweep.__main__.main``) and hands it to its
    jobs and to its exit status and Ctrl-C handlers (``sweep.jobs.entry``)."""

    sweep_dir: Path | None = None
    report: SweepReport | None = None
    finished: bool = False
    #: The folder was made by this sweep (else it was there, empty, and stays).
    own_folder: bool = False
    #: Model loads before the first job: ``embed.backend=auto`` measuring the runtimes.
    probe_loads: int = 0

    def fail(self, message: str, folder: Path | None = None) -> NoReturn:
        """Bad input before any job ran: one line per problem, exit 2, and no folder the
        sweep made left behind (an empty folder that was there before stays)."""
        for line in message.splitlines() or [""]:  # one problem a line; data in it escaped
            print(f"sweep: error: {one_line(line, squeeze=False)}", file=sys.stderr)
        if folder is not None:
            preflight.discard_if_unused(folder, remove_folder=self.own_folder)
        raise SystemExit(2)

    @contextmanager
    def running(self) -> Iterator[SweepRun]:
        """While the command runs Hydra, the :class:`SweepCallback` Hydra makes reports to
        this run. (Hydra builds callbacks from the config, so it cannot be given one as an
        argument; the context variable is set only inside this block.)"""
        token = _current.set(self)
        try:
            yield self
        finally:
            _current.reset(token)


#: The run of the command running now (:meth:`SweepRun.running`); unset outside it.
_current: ContextVar[SweepRun] = ContextVar("sweep_run")


def _check_start(
    run: SweepRun, folder: Path, config_name: str, jobs: list[list[str]]
) -> dict[tuple[str, ...], DictConfig]:
    from omegaconf.errors import OmegaConfBaseException

    run.own_folder = made_here(folder) or not folder.exists()
    try:
        preflight.check_folder(folder)
    except preflight.ConfigError as e:  # not this sweep's folder: nothing in it is touched
        run.fail(str(e))
    try:
        return preflight.check_grid(config_name, jobs)
    except DatasetError as e:
        run.fail(_every_problem(e), folder)
    except (BadInput, OmegaConfBaseException) as e:
        run.fail(str(e), folder)


#: How many problems of a dataset a sweep lists before it sends you to sweep.validate.
_LISTED = 20


def _every_problem(e: DatasetError) -> str:
    """All of a dataset's problems, one line each (the unreadable files of a folder are
    seen together, not one per run); beyond :data:`_LISTED`, the count of the rest."""
    if len(e.problems) == 1:
        return str(e)
    lines = [str(p) for p in e.problems[:_LISTED]]
    if len(e.problems) > _LISTED:
        lines.append(
            f"... and {len(e.problems) - _LISTED} more; python -m sweep.validate lists them all"
        )
    return "\n".join(lines)


def log_model_use(folder: Path, probe_loads: int = 0) -> None:
    """Say whether the sweep loaded an embedding model at all: a warm rerun, whose
    vectors and query timings all come from the cache, loads none (``probe_loads``: the
    loads of ``embed.backend=auto``'s probe before the first job)."""
    try:
        rows = [r for r in load_rows(folder) if r.status == "ok"]
    except Exception as e:  # a damaged row: the tables, written next, name it
        log.debug("model use not counted: %s", e)
        return
    if not rows:
        return
    loads = probe_loads + sum(1 for r in rows if (r.stats.model_load_s or 0) > 0)
    embedded = sum(int(r.stats.embedded or 0) for r in rows)
    try:
        prewarm = json.loads((folder / REPORT_NAME).read_text(encoding="utf-8"))
        groups = prewarm.get("groups", []) if isinstance(prewarm, dict) else []
        loads += sum(int(g.get("model_loads") or 0) for g in groups if isinstance(g, dict))
        embedded += int(prewarm.get("embedded") or 0)
    except (OSError, ValueError, TypeError, AttributeError):
        pass
    if loads:
        log.info(
            "embedding: %d text(s) embedded; an embedding model was loaded %d time(s)",
            embedded,
            loads,
        )
    else:
        log.info(
            "embedding: %d text(s) embedded; no embedding model loaded (vectors and "
            "query timings came from the cache)",
            embedded,
        )


def figure_cache(config: DictConfig) -> FigureCache | None:
    """The pictures kept beside the embedding cache (``runtime.cache_dir``); None when it is off."""
    try:
        root = resolve_cache_dir(OmegaConf.select(config, "runtime.cache_dir", default=None))
    except Exception:  # an unresolvable value: its jobs said so; the pictures are drawn
        return None
    return None if root is None else FigureCache(root / FIGURES_DIR)


def _plan(
    config_name: str,
    jobs: list[list[str]],
    launch: devices.Launch,
    composed: dict[tuple[str, ...], DictConfig],
    folder: Path,
) -> tuple[Grid, int]:
    """Chunk the grid and say what the sweep is about to do, before its first job: the jobs,
    their dataset and the overrides they share (which job lines then leave out), the texts
    to embed, the share cached and how long the rest should take; the model ``embed=auto``
    chose, and a model that cannot read the corpus's language (kept in the folder for the
    report, which shows it beside the recommendation)."""
    grid = collect_grid(config_name, jobs, launch, composed=composed)
    probe_loads = choose_backends(grid)  # embed.backend=auto: measured once per model and CPU
    plan = plan_of(grid)
    progress.set_shared(plan.shared)
    for line in plan.lines():
        log.info("%s", line)
    for line in grid.embed_choices:
        log.info("%s", line)
    for line in grid.language_warnings:
        log.warning("%s", line)
    try:
        write_alerts(folder, grid.language_warnings)
    except OSError as e:
        stop_if_disk_full(e, folder / ALERTS_NAME)
        raise
    return grid, probe_loads


class SweepCallback(Callback):
    """Reports to the command's :class:`SweepRun` (:meth:`SweepRun.running`), or to one
    of its own when Hydra runs it outside the command (or a test gives it one)."""

    def __init__(self, run: SweepRun | None = None) -> None:
        self._own = run

    @property
    def run(self) -> SweepRun:
        if self._own is None:
            self._own = _current.get(None) or SweepRun()
        return self._own

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        overrides = list(config.hydra.overrides.task)
        params = OmegaConf.select(config, "hydra.sweeper.params") or {}
        given = {o.split("=", 1)[0].lstrip("+~") for o in overrides}
        # Sweeper params from an experiment apply unless the command line names the key.
        overrides += [f"{k}={v}" for k, v in params.items() if k not in given]
        folder = Path(
            config.hydra.sweep.dir
        )  # a fresh folder, made now (sweep.hydrakit.config.fresh_dir)
        self.run.sweep_dir = folder
        jobs = expand_grid(overrides)
        progress.set_total(len(jobs))
        composed = _check_start(self.run, folder, config.hydra.job.config_name, jobs)
        # Hydra's sweeper writes this file next, and a full disk would give its traceback
        # there: written first here (the same file), a full disk is one line.
        try:
            folder.mkdir(parents=True, exist_ok=True)
            OmegaConf.save(config, folder / "multirun.yaml")
        except OSError as e:
            stop_if_disk_full(e, folder / "multirun.yaml")
            raise
        log.info("sweep: %d setting(s) -> %s", len(jobs), folder)
        # Workers (joblib, submitit processes, a local Ray) inherit it: how many jobs share
        # their machine, for their device and thread count (sweep.hydrakit.devices).
        os.environ[devices.JOBS_ENV] = str(len(jobs))
        launch = devices.launch_of(config.hydra)
        try:
            grid, self.run.probe_loads = _plan(
                config.hydra.job.config_name, jobs, launch, composed, folder
            )
            prewarm_grid(config.hydra.job.config_name, jobs, launch, folder, grid=grid)
        except preflight.ConfigError as e:  # a bad runtime.prewarm value
            self.run.fail(str(e), folder)
        except OSError as e:  # its report, in the sweep folder, on a full disk
            stop_if_disk_full(e, folder)
            raise

    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        folder = Path(config.hydra.run.dir)
        self.run.sweep_dir = folder
        progress.set_total(1)
        os.environ[devices.JOBS_ENV] = "1"
        jobs = [list(config.hydra.overrides.task)]
        composed = _check_start(self.run, folder, config.hydra.job.config_name, jobs)
        try:
            _, self.run.probe_loads = _plan(
                config.hydra.job.config_name,
                jobs,
                devices.launch_of(config.hydra),
                composed,
                folder,
            )
        except preflight.ConfigError as e:  # a bad runtime.prewarm value
            self.run.fail(str(e), folder)

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        self._end(Path(config.hydra.sweep.dir), figure_cache(config))

    def on_run_end(self, config: DictConfig, **kwargs: Any) -> None:
        self._end(Path(config.hydra.run.dir), figure_cache(config))

    def _end(self, folder: Path, figures: FigureCache | None) -> None:
        run = self.run
        run.finished = True
        log_model_use(folder, run.probe_loads)
        try:
            run.report = write_report(folder, quiet=False, figures=figures)
        except OSError as e:  # the tables and pictures are made again where they fit
            stop_if_disk_full(e, folder)
            raise
        if run.report is None:
            print(f"sweep: no setting finished; nothing to report in {folder}", file=sys.stderr)
