"""``hydra/launcher=joblib`` for sweeps: jobs in parallel worker processes, each job's
worker on its own, so one that dies takes only its own job with it.

Hydra's joblib launcher hands every job to one ``joblib.Parallel``: when the
operating system kills a worker (out of memory, say), loky breaks the whole
pool, kills the job running beside it, never starts the later ones and raises
``TerminatedWorkerError`` out of the sweep. Here each of ``n_jobs`` slots is a
loky executor of one worker: a dead worker breaks only its slot, its job gets
a ``failed`` row saying so, the slot gets a new worker and the sweep goes on.
A worker still runs job after job, so its imports and loaded models are reused.

``conf/hydra/launcher/joblib.yaml`` points ``hydra/launcher=joblib`` at the
Hydra plugin shell ``hydra_plugins.sweep_launchers.joblib`` (Hydra instantiates
launchers only from that namespace), which calls :func:`launch`, with the
joblib plugin's own keys; ``n_jobs`` (joblib's convention: -1 all cores, -2 all
but one) is what this launcher reads. The others only matter to
``joblib.Parallel``, which is not used.
"""

from __future__ import annotations

import logging
import os
import re
from concurrent.futures import FIRST_COMPLETED, Future, wait
from pathlib import Path
from typing import Any, Sequence

from hydra.core.singleton import Singleton
from hydra.core.utils import JobReturn, JobStatus, configure_log, setup_globals

__all__ = ["launch", "worker_count"]

log = logging.getLogger("sweep")


def worker_count(n_jobs: Any, n_tasks: int, cpus: int | None = None) -> int:
    """Workers for ``n_tasks`` jobs: joblib's ``n_jobs`` (negative counts back from the
    number of cores), at least 1, at most one per job."""
    cpus = cpus or os.cpu_count() or 1
    try:
        n = int(n_jobs) if n_jobs is not None else -1
    except (TypeError, ValueError):
        raise ValueError(f"hydra.launcher.n_jobs must be an integer, got {n_jobs!r}") from None
    if n == 0:
        raise ValueError("hydra.launcher.n_jobs must not be 0 (-1 uses every core)")
    if n < 0:
        n = cpus + 1 + n
    return max(1, min(n, n_tasks))


def launch(launcher: Any, job_overrides: Sequence[Sequence[str]],
           initial_job_idx: int) -> Sequence[JobReturn]:
    """Run the jobs on ``launcher.joblib["n_jobs"]`` slots; a job whose worker dies gets a
    ``failed`` row and the others run on."""
    try:
        from hydra_plugins.hydra_joblib_launcher._core import execute_job
        from joblib.externals.loky.process_executor import BrokenProcessPool
    except ImportError:
        raise ImportError("hydra/launcher=joblib needs Hydra's joblib launcher: "
                          "pip install 'sweep[joblib]'") from None

    setup_globals()
    assert launcher.config is not None and launcher.task_function is not None
    assert launcher.hydra_context is not None
    configure_log(launcher.config.hydra.hydra_logging, launcher.config.hydra.verbose)
    sweep_dir = Path(str(launcher.config.hydra.sweep.dir))
    sweep_dir.mkdir(parents=True, exist_ok=True)
    n_workers = worker_count(launcher.joblib.get("n_jobs"), len(job_overrides))
    singleton_state = Singleton.get_state()
    todo = list(enumerate(job_overrides))[::-1]
    slots: list[Any] = [None] * n_workers
    running: dict[Future, tuple[int, int, Sequence[str]]] = {}
    returns: list[JobReturn | None] = [None] * len(job_overrides)
    try:
        while todo or running:
            busy = {slot for slot, _, _ in running.values()}
            for slot in range(n_workers):
                if not todo or slot in busy:
                    continue
                i, overrides = todo.pop()
                args = (execute_job, initial_job_idx + i, overrides, launcher.hydra_context,
                        launcher.config, launcher.task_function, singleton_state)
                try:
                    future = _executor(slots, slot).submit(*args)
                except BrokenProcessPool:  # its worker died while idle: the job never ran
                    slots[slot] = None
                    future = _executor(slots, slot).submit(*args)
                running[future] = (slot, i, overrides)
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                slot, i, overrides = running.pop(future)
                try:
                    returns[i] = future.result()
                except BrokenProcessPool as e:
                    slots[slot].shutdown(wait=False, kill_workers=True)
                    slots[slot] = None
                    returns[i] = _worker_died(launcher, initial_job_idx + i, overrides, e)
    finally:
        for executor in slots:
            if executor is not None:
                # Ctrl-C or an error here: no worker is left running a job nobody waits for.
                executor.shutdown(wait=not running, kill_workers=bool(running))
    return returns  # type: ignore[return-value]  # every slot is filled


def _executor(slots: list[Any], slot: int) -> Any:
    from joblib.externals.loky import ProcessPoolExecutor

    if slots[slot] is None:
        slots[slot] = ProcessPoolExecutor(max_workers=1)
    return slots[slot]


def _worker_died(launcher: Any, job_num: int, overrides: Sequence[str],
                 error: BaseException) -> JobReturn:
    """A ``failed`` row for the job whose worker died, and a return Hydra accepts (the
    sweep goes on; the row says what happened)."""
    from hydra.core.hydra_config import HydraConfig
    from omegaconf import open_dict

    from sweep.job import save_failed_row

    assert launcher.hydra_context is not None and launcher.config is not None
    cfg = launcher.hydra_context.config_loader.load_sweep_config(launcher.config, list(overrides))
    with open_dict(cfg):
        cfg.hydra.job.num = job_num
    hc = cfg.hydra
    job_dir = Path(str(hc.sweep.dir)) / str(hc.sweep.subdir)
    codes = _exit_codes(error)
    reason = ("its worker process died" + (f" ({codes})" if codes else "")
              + ", e.g. killed by the system for lack of memory; the other settings ran on")
    log.error("job %s (%s): %s", job_num, " ".join(overrides), reason)
    task_cfg = cfg.copy()
    with open_dict(task_cfg):
        del task_cfg["hydra"]
    # The job's own Hydra config while its row is made (``${hydra:...}`` in the config
    # reads it), then the launching process's again.
    saved = HydraConfig.instance().cfg
    HydraConfig.instance().set_config(cfg)
    try:
        save_failed_row(task_cfg, job_dir, job_num, list(overrides),
                        dict(hc.runtime.choices), reason)
    finally:
        if saved is not None:
            HydraConfig.instance().set_config(saved)
    ret = JobReturn(overrides=list(overrides), cfg=task_cfg, hydra_cfg=cfg,
                    working_dir=str(job_dir), task_name=str(hc.job.name),
                    status=JobStatus.COMPLETED)
    ret.return_value = None
    return ret


def _exit_codes(error: BaseException) -> str:
    """How the worker ended, from loky's message: ``{EXIT(137)}`` is "exit code 137",
    ``{SIGKILL(-9)}`` is "killed by SIGKILL"."""
    found = re.search(r"exit codes of the workers are \{([^}]*)\}", str(error))
    if not found:
        return ""
    parts = []
    for name, code in re.findall(r"(\w+)\((-?\d+)\)", found.group(1)):
        parts.append(f"exit code {code}" if name == "EXIT" else f"killed by {name}")
    return ", ".join(parts)
