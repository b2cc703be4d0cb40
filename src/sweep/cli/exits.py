"""How a command ends: each kind of error is one line on stderr and an exit status.

Every command maps its errors the same way, so ``sweep.report: error: ...`` and
``generate: error: ...`` look alike and no traceback reaches the user. Which status an
error of sweep gets follows from its kind (``sweep.core.errors``) and is written once
here (:data:`KIND_EXITS`); a command names only the errors from outside sweep it
expects (an ``OSError`` reading its input).
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable, Mapping

from sweep.core.errors import BadInput, InvalidSetting, ServiceFailure, SweepError, kind_of
from sweep.core.messages import VisibleFormatter, one_line, visible

__all__ = [
    "BAD_INPUT",
    "FAILED",
    "KIND_EXITS",
    "SIGPIPE_STATUS",
    "exit_status",
    "log_warnings",
    "quiet_broken_pipe",
    "report_error",
    "run_with_exits",
]

#: Bad input found before any work was done.
BAD_INPUT = 2
#: The work could not be done (an endpoint down, nothing kept).
FAILED = 1
#: stdout's reader went away: 128 + SIGPIPE (13), what a shell reports for ``| head``.
SIGPIPE_STATUS = 141

#: The exit status of each kind of sweep's errors: the one place they are mapped.
KIND_EXITS: Mapping[type[SweepError], int] = {
    BadInput: BAD_INPUT,
    InvalidSetting: BAD_INPUT,  # a setting a command is given is input like any other
    ServiceFailure: FAILED,
}

ErrorTypes = type[BaseException] | tuple[type[BaseException], ...]


def exit_status(error: BaseException) -> int | None:
    """The exit status of a command that ``error`` ended: its kind's (:data:`KIND_EXITS`);
    None for an error that is not sweep's (a bug, unless the command expects it)."""
    kind = kind_of(error)
    return None if kind is None else KIND_EXITS[kind]


def report_error(prog: str, error: BaseException | str) -> None:
    """``prog: error: message`` on one line of stderr, control and bidi characters escaped
    (a file name's line break as ``\\n``)."""
    if isinstance(error, OSError) and error.strerror:  # not "[Errno 2] ...": the file, then why
        error = f"{visible(error.filename)}: {error.strerror}" if error.filename else error.strerror
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


def run_with_exits(
    prog: str, call: Callable[[], int | None], also: Mapping[ErrorTypes, int] | None = None
) -> int:
    """``call()``'s exit status; an error of sweep is reported in one line and becomes its
    kind's status (:func:`exit_status`). ``also`` maps the errors from outside sweep this
    command expects (``{OSError: BAD_INPUT}``) to their status; it is looked at first (the
    first entry that matches wins), so what an ``OSError`` means to the command holds for
    sweep's own OSErrors too (NotRegularFile). Other errors propagate: they are bugs."""
    also = also or {}
    try:
        return call() or 0
    except BrokenPipeError:
        return quiet_broken_pipe()
    except Exception as e:
        status = next(
            (status for types, status in also.items() if isinstance(e, types)), exit_status(e)
        )
        if status is None:
            raise
        report_error(prog, e)
        return status
