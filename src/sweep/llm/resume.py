"""What the LLM commands say about requests that got no answer, and how a rerun resumes.

Answers are cached as they arrive (``sweep.llm.cache``), so the same command run
again sends only what is still unanswered; ``sweep.generate`` and
``sweep.answers`` say so in the same words.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from sweep.core.interrupts import deaf_to_interrupts, quiet_second_interrupt

__all__ = ["ResumeInfo", "failure_counts", "rerun_hint", "stop_interrupted"]


@dataclass
class ResumeInfo:
    """What an LLM command's run tells the command for after a Ctrl-C: where its answers
    are cached (None while its client is not open, or with the cache off). The command
    owns it and hands it to the run; :func:`stop_interrupted` reads it."""

    cache_root: Path | None = None


def failure_counts(reasons: Mapping[str, int]) -> str:
    """``"9 HTTP 500, 2 timed out"``: the reasons, most frequent first."""
    return ", ".join(f"{n} {r}" for r, n in sorted(reasons.items(), key=lambda item: -item[1]))


def rerun_hint(cache_root: Path | None) -> str:
    """Why running the same command again costs only what is still unanswered (or not)."""
    if cache_root is None:
        return "llm.cache_dir is off, so every request is sent again"
    return "the answers received are cached, so only the requests still unanswered are sent"


def stop_interrupted(prog: str, cache_root: Path | None) -> NoReturn:
    """After Ctrl-C: one line on what is kept, exit 130. Python still waits for the
    requests in flight (they finish and are cached); a second Ctrl-C stops that wait
    with one line instead of a threading traceback."""
    quiet_second_interrupt(
        f"{prog}: interrupted again: the requests in flight are dropped; a rerun asks them again"
    )
    with deaf_to_interrupts():
        where = (
            f"the answers received so far are cached in {cache_root}: run the same "
            "command again to continue without asking for them again"
            if cache_root is not None
            else "llm.cache_dir is off: a rerun asks again"
        )
        print(f"\n{prog}: interrupted; {where}", file=sys.stderr)
    raise SystemExit(130)
