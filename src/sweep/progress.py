"""Where the sweep is: job i of n, for log lines."""

from __future__ import annotations

from typing import Iterable

_total: int | None = None


def count_jobs(overrides: Iterable[str]) -> int:
    """Number of jobs Hydra's basic sweeper expands these overrides into."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    n = 1
    for o in OverridesParser.create().parse_overrides(list(overrides)):
        if o.is_sweep_override():
            n *= len(list(o.sweep_iterator()))
    return n


def set_total(n: int | None) -> None:
    global _total
    _total = n


def job_label(job_num: int) -> str:
    return f"[{job_num + 1}/{_total}]" if _total else f"[{job_num + 1}]"
