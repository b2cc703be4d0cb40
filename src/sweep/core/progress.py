"""Where the sweep is: job i of n for log lines, and progress bars for a terminal only."""

from __future__ import annotations

import sys
from typing import Any

_total: int | None = None


def set_total(n: int | None) -> None:
    global _total
    _total = n


def job_label(job_num: int) -> str:
    return f"[{job_num + 1}/{_total}]" if _total else f"[{job_num + 1}]"


def on_terminal() -> bool:
    """Whether stderr is a terminal: a bar redrawn in a log file or a CI log is noise."""
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced or closed stderr
        return False


def bar(total: int, desc: str, unit: str, *, show: bool = True, **kwargs: Any) -> Any:
    """A tqdm bar on stderr, drawn only when ``show`` and stderr is a terminal."""
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, leave=False,
                disable=not (show and on_terminal()), **kwargs)
