"""Where the sweep is: job i of n for log lines, and progress bars for a terminal only."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from typing import Any

_total: int | None = None
#: The overrides every job of the sweep has, as a JSON list: said once before the first
#: job, left out of each job's line. In the environment, so worker processes inherit it.
SHARED_ENV = "SWEEP_SHARED_OVERRIDES"


def set_total(n: int | None) -> None:
    global _total
    _total = n


def job_label(job_num: int) -> str:
    return f"[{job_num + 1}/{_total}]" if _total else f"[{job_num + 1}]"


def set_shared(overrides: Sequence[str]) -> None:
    os.environ[SHARED_ENV] = json.dumps(list(overrides))


def job_overrides(overrides: Sequence[str]) -> str:
    """A job's overrides for its log line, without those every job shares (the plan said
    them): ``chunk.size=256 chunk.overlap=64``."""
    try:
        shared = set(json.loads(os.environ.get(SHARED_ENV) or "[]"))
    except ValueError:
        shared = set()
    own = [o for o in overrides if o not in shared]
    if own:
        return " ".join(own)
    return "(the settings above)" if overrides else "(defaults)"


def on_terminal() -> bool:
    """Whether stderr is a terminal: a bar redrawn in a log file or a CI log is noise."""
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced or closed stderr
        return False


def bar(total: int, desc: str, unit: str, *, show: bool = True, **kwargs: Any) -> Any:
    """A tqdm bar on stderr, drawn only when ``show`` and stderr is a terminal."""
    from tqdm import tqdm

    return tqdm(
        total=total,
        desc=desc,
        unit=unit,
        file=sys.stderr,
        leave=False,
        disable=not (show and on_terminal()),
        **kwargs,
    )
