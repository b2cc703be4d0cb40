"""Checks before a sweep's first job: its folder is its own, and every dataset and eval config
of the grid is valid.

A sweep whose third dataset is broken must fail before it embeds anything for
the first; a folder that already holds another sweep must never take this
one's rows (the table would mix them).
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Iterable, Sequence

from omegaconf import DictConfig

from sweep.folderlock import LOCK_NAME
from sweep.job import ConfigError, build_eval, load_dataset, scoring_config
from sweep.latency import ENCODE_TIMES_LOCK, ENCODE_TIMES_NAME
from sweep.prewarm import REPORT_NAME as PREWARM_REPORT

__all__ = ["check_folder", "check_grid", "discard_if_unused", "expand_grid"]

log = logging.getLogger("sweep")

#: Files by which a folder is known to hold a sweep already.
_SWEEP_MARKS = ("multirun.yaml", "results.csv", "results.md")
#: Files the sweep itself puts in its folder before any row: Hydra's, prewarm's, the query
#: encode times and the locks.
_SWEEP_FILES = ("multirun.yaml", PREWARM_REPORT, LOCK_NAME, ENCODE_TIMES_NAME, ENCODE_TIMES_LOCK)
#: Override keys whose values change what is loaded or how it is scored.
_CHECKED = ("dataset", "eval", "experiment")


def expand_grid(overrides: Sequence[str]) -> list[list[str]]:
    """The override list of every job Hydra's basic sweeper makes of ``overrides``."""
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parsed = OverridesParser.create().parse_overrides(list(overrides))
    return [job for batch in BasicSweeper.split_arguments(parsed, None) for job in batch]


def holds_a_sweep(folder: Path) -> bool:
    return folder.is_dir() and (any((folder / m).exists() for m in _SWEEP_MARKS)
                                or any(folder.glob("*/row.json")))


def check_folder(folder: Path) -> None:
    """Refuse a folder that already holds a sweep (its rows would land in this one's table)
    or anything else: a sweep writes job folders ``0/``, ``1/``... and its files there, and
    would overwrite, or on bad input clean up, files that are not its own."""
    if holds_a_sweep(folder):
        n = len(list(folder.glob("*/row.json")))
        raise ConfigError(f"{folder} already holds a sweep ({n} row(s)); a table must only show "
                          "its own sweep's rows: choose another hydra.sweep.dir (or leave it "
                          "unset for a new timestamped folder), or delete that folder")
    if folder.is_dir():
        found = sorted(p.name + ("/" if p.is_dir() else "") for p in folder.iterdir())
        if found:
            shown = ", ".join(found[:3]) + (f" and {len(found) - 3} more" if len(found) > 3 else "")
            raise ConfigError(f"{folder} is not empty ({shown}); a sweep writes its job folders "
                              "and files there and must not mix them with yours: choose a new or "
                              "empty hydra.sweep.dir (or leave it unset for a new timestamped "
                              "folder)")


def _key(override: str) -> str:
    return override.split("=", 1)[0].lstrip("+~")


def check_grid(config_name: str, jobs: Iterable[Sequence[str]]) -> None:
    """Compose one job per distinct dataset/eval choice of the grid and check it:
    the eval config builds, the dataset loads and has something to score.

    Loaded datasets are kept for the jobs of this process (``sweep.job.load_dataset``).
    """
    from hydra import compose

    seen: set[tuple[str, ...]] = set()
    for overrides in jobs:
        key = tuple(o for o in overrides if _key(o).split(".", 1)[0].split("/", 1)[0] in _CHECKED)
        if key in seen:
            continue
        seen.add(key)
        cfg: DictConfig = compose(config_name=config_name, overrides=list(overrides))
        ev = build_eval(cfg)
        scoring_config(load_dataset(cfg.dataset), ev, warn=False)


def discard_if_unused(folder: Path) -> None:
    """Remove a sweep folder in which no job saved a row: only what sweep and Hydra put
    there (``_SWEEP_FILES``, job folders with their resolved config and logs), nothing
    else. Call it only for a folder that ``check_folder`` passed, i.e. one this sweep
    made or found empty: then whatever is in it of those kinds is this run's."""
    if not folder.is_dir() or any(folder.glob("*/row.json")):
        return
    for path in folder.iterdir():
        if path.name in _SWEEP_FILES:
            path.unlink()
        elif path.is_dir() and path.name.isdigit() and all(
                p.name in ("resolved_config.yaml", ".hydra") or p.suffix == ".log"
                for p in path.iterdir()):
            shutil.rmtree(path)
    try:
        folder.rmdir()
    except OSError:  # something else is in there: leave it
        log.debug("kept %s: not empty", folder)
