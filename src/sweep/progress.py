"""Where the sweep is: job i of n, for log lines."""

from __future__ import annotations

_total: int | None = None


def set_total(n: int | None) -> None:
    global _total
    _total = n


def job_label(job_num: int) -> str:
    return f"[{job_num + 1}/{_total}]" if _total else f"[{job_num + 1}]"
