"""The launcher class Hydra instantiates for ``hydra/launcher=joblib`` in a sweep.

Only the shell lives here, light to import (Hydra imports every plugin module
at start-up); the work is in :mod:`sweep.jobs.joblib_launcher`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hydra.core.utils import JobReturn
from hydra.plugins.launcher import Launcher
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig


class IsolatingJoblibLauncher(Launcher):
    """Parallel jobs in loky workers, one executor per slot (see sweep.jobs.joblib_launcher)."""

    def __init__(self, **kwargs: Any) -> None:
        self.config: DictConfig | None = None
        self.task_function: TaskFunction | None = None
        self.hydra_context: HydraContext | None = None
        self.joblib = kwargs

    def setup(
        self, *, hydra_context: HydraContext, task_function: TaskFunction, config: DictConfig
    ) -> None:
        self.config = config
        self.task_function = task_function
        self.hydra_context = hydra_context

    def launch(
        self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int
    ) -> Sequence[JobReturn]:
        from sweep.jobs.joblib_launcher import launch

        return launch(self, job_overrides, initial_job_idx)
