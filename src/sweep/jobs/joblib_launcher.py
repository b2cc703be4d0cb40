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
but one) is its one key.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from pathlib import Path
from typing import Any

from hydra.core.singleton import Singleton
from hydra.core.utils import JobReturn, JobStatus, configure_log, setup_globals

from sweep.hydrakit import devices
from sweep.hydrakit.devices import Launch

__all__ = ["launch"]

log = logging.getLogger("sweep")


def launch(
    launcher: Any, job_overrides: Sequence[Sequence[str]], initial_job_idx: int
) -> Sequence[JobReturn]:
    """Run the jobs on as many slots as ``hydra.launcher.n_jobs`` says (joblib's
    convention, on this process's cores); a job whose worker dies gets a ``failed`` row
    and the others run on."""
    try:
        from hydra_plugins.hydra_joblib_launcher._core import execute_job
        from joblib.externals.loky.process_executor import BrokenProcessPool, TerminatedWorkerError
    except ImportError:
        raise ImportError(
            "hydra/launcher=joblib needs Hydra's joblib launcher: "
            "pip install hydra-joblib-launcher (in sweep's checkout: "
            'pip install -e ".[joblib]")'
        ) from None

    setup_globals()
    assert launcher.config is not None and launcher.task_function is not None
    assert launcher.hydra_context is not None
    configure_log(launcher.config.hydra.hydra_logging, launcher.config.hydra.verbose)
    sweep_dir = Path(str(launcher.config.hydra.sweep.dir))
    sweep_dir.mkdir(parents=True, exist_ok=True)
    n_workers = devices.concurrent_jobs(
        Launch("joblib", dict(launcher.joblib), len(job_overrides)), devices.cores()
    )
    singleton_state = Singleton.get_state()
    todo = list(enumerate(job_overrides))[::-1]
    slots: list[Any] = [None] * n_workers
    running: dict[Future, tuple[int, int, Sequence[str]]] = {}
    returns: list[JobReturn | None] = [None] * len(job_overrides)
    requeued: set[int] = set()
    try:
        while todo or running:
            busy = {slot for slot, _, _ in running.values()}
            for slot in range(n_workers):
                if not todo or slot in busy:
                    continue
                i, overrides = todo.pop()
                args = (
                    execute_job,
                    initial_job_idx + i,
                    overrides,
                    launcher.hydra_context,
                    launcher.config,
                    launcher.task_function,
                    singleton_state,
                )
                try:
                    future = _executor(slots, slot).submit(*args)
                except BrokenProcessPool:  # its worker died while idle: the job never ran
                    _discard(slots, slot)
                    future = _executor(slots, slot).submit(*args)
                running[future] = (slot, i, overrides)
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                slot, i, overrides = running.pop(future)
                try:
                    returns[i] = future.result()
                except TerminatedWorkerError as e:  # a worker died; other breakage is raised
                    _discard(slots, slot)
                    job = initial_job_idx + i
                    if i not in requeued and not _job_config(launcher, job, overrides)[1].exists():
                        # It died idle, before this job began (loky had not noticed): once more.
                        requeued.add(i)
                        todo.append((i, overrides))
                    else:
                        returns[i] = _worker_died(launcher, job, overrides, e)
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


def _discard(slots: list[Any], slot: int) -> None:
    """Drop a slot's broken executor (its dead worker's siblings, if any, killed)."""
    slots[slot].shutdown(wait=False, kill_workers=True)
    slots[slot] = None


def _job_config(launcher: Any, job_num: int, overrides: Sequence[str]) -> tuple[Any, Path]:
    """The job's full config (as its worker composed it) and its folder."""
    from omegaconf import open_dict

    assert launcher.hydra_context is not None and launcher.config is not None
    cfg = launcher.hydra_context.config_loader.load_sweep_config(launcher.config, list(overrides))
    with open_dict(cfg):
        cfg.hydra.job.num = job_num
    return cfg, Path(str(cfg.hydra.sweep.dir)) / str(cfg.hydra.sweep.subdir)


def _worker_died(
    launcher: Any, job_num: int, overrides: Sequence[str], error: BaseException
) -> JobReturn:
    """A ``failed`` row for the job whose worker died, and a return Hydra accepts (the
    sweep goes on; the row says what happened). A row the job saved before its worker
    died is kept."""
    from hydra.core.hydra_config import HydraConfig
    from omegaconf import open_dict

    from sweep.jobs.job import save_failed_row

    cfg, job_dir = _job_config(launcher, job_num, overrides)
    hc = cfg.hydra
    task_cfg = cfg.copy()
    with open_dict(task_cfg):
        del task_cfg["hydra"]
    if not (job_dir / "row.json").exists():  # died after saving its row: the row stands
        codes = _exit_codes(error)
        reason = (
            "its worker process died"
            + (f" ({codes})" if codes else "")
            + ", e.g. killed by the system for lack of memory; the other settings ran on"
        )
        log.error("job %s (%s): %s", job_num, " ".join(overrides), reason)
        # The job's own Hydra config while its row is made (``${hydra:...}`` in the config
        # reads it), then the launching process's again.
        saved = HydraConfig.instance().cfg
        HydraConfig.instance().set_config(cfg)
        try:
            save_failed_row(
                task_cfg, job_dir, job_num, list(overrides), dict(hc.runtime.choices), reason
            )
        finally:
            if saved is not None:
                HydraConfig.instance().set_config(saved)
    ret = JobReturn(
        overrides=list(overrides),
        cfg=task_cfg,
        hydra_cfg=cfg,
        working_dir=str(job_dir),
        task_name=str(hc.job.name),
        status=JobStatus.COMPLETED,
    )
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
