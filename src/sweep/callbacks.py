"""Hydra callback: count the jobs when the sweep starts, print the table when it ends."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf

from sweep import progress
from sweep.report import write_report

log = logging.getLogger("sweep")


class SweepReport(Callback):
    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        overrides = list(config.hydra.overrides.task)
        params = OmegaConf.select(config, "hydra.sweeper.params") or {}
        given = {o.split("=", 1)[0].lstrip("+~") for o in overrides}
        # Sweeper params from an experiment apply unless the command line names the key.
        overrides += [f"{k}={v}" for k, v in params.items() if k not in given]
        try:
            total = progress.count_jobs(overrides)
        except Exception:  # counting is cosmetic; Hydra reports bad overrides itself
            total = None
        progress.set_total(total)
        log.info("sweep: %s setting(s) -> %s", total or "?", config.hydra.sweep.dir)

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        write_report(Path(config.hydra.sweep.dir), quiet=False)

    def on_run_end(self, config: DictConfig, **kwargs: Any) -> None:
        write_report(Path(config.hydra.run.dir), quiet=False)
