"""``python -m sweep chunk.size=128,256,512 chunk.overlap=0,64``: sweep chunking settings.

Hydra composes the config (``conf/``) and expands the grid; ``sweep.jobs.callbacks``
checks the grid before the first job, each job runs ``sweep.jobs.job.run_job`` and
saves its row, and the table is rebuilt after every job and printed at the end.

Exit status: 0 when at least one setting ran (``ok``), 1 when none did (every
row ``invalid`` or ``failed``) or the disk filled (the finished rows are kept), 2 for
bad input found before any work (the dataset, the eval config, a folder that holds
another sweep), 130 on Ctrl-C.
"""

from __future__ import annotations

from collections.abc import Callable

import hydra
from omegaconf import DictConfig

from sweep.cli.exits import quiet_broken_pipe
from sweep.core import interrupts
from sweep.hydrakit.config import CONF_DIR, register
from sweep.hydrakit.overrides import check_command_line
from sweep.jobs.callbacks import SweepRun
from sweep.jobs.diskfull import DiskFull
from sweep.jobs.entry import (
    end_sweep,
    on_disk_full,
    on_interrupt,
    on_launcher_failure,
    run_hydra_job,
)


def _hydra_main(state: SweepRun) -> Callable[[], None]:
    """Hydra's entry, running each job for the command's ``state`` (joblib's workers get
    it pickled with the task function)."""

    @hydra.main(version_base="1.3", config_path=str(CONF_DIR), config_name="config")
    def _entry(cfg: DictConfig) -> None:
        run_hydra_job(cfg, state)

    return _entry


def main() -> None:
    register()  # resolvers and code-defined nodes, before any config is composed
    check_command_line("config", "sweep")
    # What the jobs, the callback and the handlers below learn of this sweep.
    state = SweepRun()
    # Ctrl-C can land inside a job or in Hydra between jobs; either way the
    # finished rows get their table. Between jobs it is held until the next job starts
    # (Hydra, cut short there, reports a crash); one that Python could not raise is
    # remembered (sweep.core.interrupts).
    interrupts.listen()
    with state.running():
        try:
            _hydra_main(state)()
        except KeyboardInterrupt:
            on_interrupt(state)
        except DiskFull as e:  # a file could not be written for lack of space
            on_disk_full(e, state)
        except BrokenPipeError:  # ``sweep --help | head``
            raise SystemExit(quiet_broken_pipe()) from None
        except SystemExit as e:
            if interrupts.requested():
                end_sweep(state)
            if e.code == 1:  # Hydra's way out after an exception it reported
                on_launcher_failure(state)
            raise
        end_sweep(state)


if __name__ == "__main__":
    main()
