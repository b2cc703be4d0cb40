"""Which device a job embeds on and how many CPU threads it gets, from its launcher.

Jobs that run side by side on one machine must share it: under ``joblib`` with
two jobs on two cores each job gets one torch thread (two jobs with two threads
each fight over the cores and run slower than one after the other), and with
``embed.device=auto`` job ``i`` of a parallel sweep gets GPU ``i mod n``.
Schedulers that give each job its own resources (Ray tasks, SLURM allocations)
already isolate them: a job then uses what it was given.

The rules are pure functions of a :class:`Launch` and the machine's counts;
:func:`machine` and :func:`apply_threads` are the two places that look at or
change the process.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "JOBS_ENV",
    "Launch",
    "Machine",
    "Placement",
    "apply_threads",
    "concurrent_jobs",
    "cpu_threads",
    "is_parallel",
    "launch_of",
    "machine",
    "pick_device",
    "place",
]

#: Set by the launching process to the number of jobs in the sweep, so that a
#: worker (a joblib or submitit process) knows how many jobs can share its machine.
JOBS_ENV = "SWEEP_JOBS"
#: Launchers whose jobs run as processes on the launching machine.
_LOCAL = ("joblib", "submitit_local")
#: Launchers whose jobs run wherever a scheduler puts them, with resources of their own.
_SCHEDULED = ("ray", "ray_aws", "submitit_slurm")


@dataclass(frozen=True)
class Launch:
    """How a sweep's jobs run: the ``hydra/launcher`` choice, its settings, the grid's size."""

    launcher: str = "basic"
    params: Mapping[str, Any] = field(default_factory=dict)
    #: Jobs in the sweep, when known (None: not said).
    n_jobs: int | None = None

    @property
    def separate_processes(self) -> bool:
        """Jobs run outside the launching process (and so load their own model)."""
        return self.launcher != "basic"


@dataclass(frozen=True)
class Machine:
    cores: int
    cuda: int = 0
    mps: bool = False


@dataclass(frozen=True)
class Placement:
    device: str
    #: CPU threads for torch and FAISS; None leaves their defaults alone.
    threads: int | None


def _int(value: Any) -> int | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _ray_cpus(params: Mapping[str, Any]) -> int:
    remote = (params.get("ray") or {}).get("remote") or {}
    cpus = _int(remote.get("num_cpus"))
    return cpus if cpus and cpus > 0 else 1  # Ray reserves one CPU per task unless told


def concurrent_jobs(launch: Launch, cores: int) -> int:
    """How many of the sweep's jobs run at once on one machine's cores."""
    cores = max(1, cores)
    if launch.launcher == "joblib":
        n = _int(launch.params.get("n_jobs"))
        if n is None or n == 0:
            n = 1
        elif n < 0:  # joblib's convention: -1 all cores, -2 all but one...
            n = max(1, cores + 1 + n)
    elif launch.launcher == "submitit_local":
        n = launch.n_jobs or 1  # submitit's local executor starts every job at once
    elif launch.launcher in ("ray", "ray_aws"):
        n = max(1, cores // _ray_cpus(launch.params))
    else:  # basic runs one job at a time; a SLURM job has its allocation to itself
        n = 1
    if launch.n_jobs:
        n = min(n, launch.n_jobs)
    return max(1, n)


def is_parallel(launch: Launch, cores: int) -> bool:
    """Jobs run side by side: several at once on this machine, or on a scheduler's nodes."""
    if launch.launcher in _SCHEDULED:
        return (launch.n_jobs or 2) > 1
    return concurrent_jobs(launch, cores) > 1


def cpu_threads(launch: Launch, cores: int) -> int | None:
    """Threads per job: the cores split between the jobs that share them.

    None for the basic launcher (one job at a time: torch's default uses every core)
    and for a SLURM job that did not ask for a CPU count (its allocation decides).
    """
    if launch.launcher in ("ray", "ray_aws"):
        return _ray_cpus(launch.params)  # what Ray reserved for the task
    if launch.launcher == "submitit_slurm":
        cpus = _int(launch.params.get("cpus_per_task"))
        return cpus if cpus and cpus > 0 else None
    if launch.launcher in _LOCAL:
        return max(1, max(1, cores) // concurrent_jobs(launch, cores))
    return None


def pick_device(requested: str, job_num: int, concurrent: int, machine: Machine) -> str:
    """``auto``: GPU ``job_num mod n`` when jobs run side by side, the first GPU when
    they run one at a time, else Apple's ``mps``, else ``cpu``. Any other value is kept."""
    if requested != "auto":
        return requested
    if machine.cuda > 0:
        return f"cuda:{job_num % machine.cuda}" if concurrent > 1 else "cuda:0"
    return "mps" if machine.mps else "cpu"


def place(requested: str, job_num: int, launch: Launch, machine: Machine) -> Placement:
    """Device and thread count of job ``job_num``."""
    concurrent = concurrent_jobs(launch, machine.cores)
    if launch.launcher in _SCHEDULED:
        concurrent = 1  # the scheduler gave this job its own GPUs: the first visible one
    return Placement(
        pick_device(requested, job_num, concurrent, machine), cpu_threads(launch, machine.cores)
    )


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))  # a cgroup or SLURM allocation, not the whole box
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def machine(*, probe_gpus: bool = True) -> Machine:
    """This process's cores and accelerators.

    Importing torch takes seconds, which a job whose vectors are all cached never
    pays otherwise; on Linux without a GPU driver it is not imported at all.
    """
    n_cores = cores()
    if not probe_gpus:
        return Machine(n_cores)
    if sys.platform.startswith("linux") and not (
        os.path.exists("/proc/driver/nvidia/version") or os.path.exists("/dev/kfd")
    ):
        return Machine(n_cores)
    try:
        import torch
    except ImportError:
        return Machine(n_cores)
    cuda = torch.cuda.device_count() if torch.cuda.is_available() else 0
    mps = bool(getattr(torch.backends, "mps", None) and torch.backends.mps.is_available())
    return Machine(n_cores, cuda, mps)


_THREAD_ENV = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def apply_threads(threads: int | None) -> None:
    """Use ``threads`` CPU threads in this process for torch and FAISS (None: leave as is).

    Torch and FAISS read the environment when they are imported, so it is set for a
    later import too; if they are loaded already, their own setters apply it now.
    """
    if threads is None:
        return
    for name in _THREAD_ENV:
        os.environ[name] = str(threads)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(threads)
    faiss = sys.modules.get("faiss")
    if faiss is not None:
        faiss.omp_set_num_threads(threads)


def launch_of(hydra_cfg: Any) -> Launch:
    """The :class:`Launch` of a running sweep, from Hydra's config and :data:`JOBS_ENV`."""
    from omegaconf import OmegaConf

    choices = OmegaConf.select(hydra_cfg, "runtime.choices", default=None) or {}
    launcher = str(choices.get("hydra/launcher") or "basic")
    node = OmegaConf.select(hydra_cfg, "launcher", default=None)
    params = OmegaConf.to_container(node, resolve=False) if node is not None else {}
    return Launch(launcher, params, _int(os.environ.get(JOBS_ENV)))
