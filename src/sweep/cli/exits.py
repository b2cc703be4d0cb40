"""How a command ends: each kind of error is one line on stderr and an exit status.

Every command maps its errors the same way, so ``sweep.report: error: ...`` and
``generate: error: ...`` look alike and no traceback reaches the user.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Callable, Mapping

from sweep.core.messages import VisibleFormatter, one_line, visible

__all__ = ["BAD_INPUT", "FAILED", "SIGPIPE_STATUS", "log_warnings", "quiet_broken_pipe",
           "report_error", "run_with_exits"]

#: Bad input found before any work was done.
BAD_INPUT = 2
#: The work could not be done (an endpoint down, nothing kept).
FAILED = 1
#: stdout's reader went away: 128 + SIGPIPE (13), what a shell reports for ``| head``.
SIGPIPE_STATUS = 141

ErrorTypes = type[BaseException] | tuple[type[BaseException], ...]


def report_error(prog: str, error: BaseException | str) -> None:
    """``prog: error: message`` on one line of stderr, control and bidi characters escaped
    (a file name's line break as ``\\n``)."""
    if isinstance(error, OSError) and error.strerror:  # not "[Errno 2] ...": the file, then why
        error = (f"{visible(error.filename)}: {error.strerror}" if error.filename
                 else error.strerror)
    print(f"{prog}: error: {one_line(error)}", file=sys.stderr)


def log_warnings(prog: str) -> None:
    """Warnings (a file skipped, a link refused) as ``prog: warning: message`` lines on
    stderr, names in them escaped as in every message. Does nothing when logging is set up
    already (a test's capture, an embedding program's own handlers)."""
    handler = logging.StreamHandler()
    handler.setFormatter(VisibleFormatter(f"{prog}: warning: %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])


def quiet_broken_pipe() -> int:
    """The exit status after stdout's reader went away (``| head``): the output was not
    wanted, so no message either, and the status a shell gives a process ended by SIGPIPE."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())  # (else flushing stdout at exit fails again)
    return SIGPIPE_STATUS


def run_with_exits(prog: str, call: Callable[[], int | None],
                   errors: Mapping[ErrorTypes, int]) -> int:
    """``call()``'s exit status; an error of a type in ``errors`` is reported and becomes
    its status (the first entry that matches wins). Other errors propagate: they are bugs."""
    try:
        return call() or 0
    except BrokenPipeError:
        return quiet_broken_pipe()
    except tuple(t for types in errors for t in (types if isinstance(types, tuple) else (types,))) as e:
        for types, status in errors.items():
            if isinstance(e, types):
                report_error(prog, e)
                return status
        raise  # pragma: no cover - the except clause matched one of them
