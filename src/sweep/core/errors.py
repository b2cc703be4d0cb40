"""The kinds of error sweep raises, and what each one does to a command and to a row.

Every exception class of sweep derives from one *kind*, besides the builtin it has
always had (``class DatasetError(BadInput, ValueError)``: ``except ValueError`` still
catches it). The kind alone says what happens when the error ends a command or a job;
no module keeps its own list of "which errors mean bad input" (scikit-learn's
``error_score``: one policy turns an exception into a result):

- :class:`BadInput`: a command says so in one line and exits 2; a job's row is
  ``failed``.
- :class:`InvalidSetting`: a command exits 2, as for any bad input; a sweep gives that
  setting an ``invalid`` row and the sweep goes on.
- :class:`ServiceFailure`: a command says so in one line and exits 1; a job's row is
  ``failed``.
- anything else is a bug: a command shows its traceback; a job's row is ``failed``, the
  traceback kept in ``<job>/error.txt``.

An invalid setting is bad input confined to one setting of a grid (overlap ≥ size, a
framework's splitter that rewrites the text): a command given it refuses it as bad
input, a sweep gives that setting an ``invalid`` row and runs the others. Bad input
the checks before a sweep find (the dataset, the ``eval`` node) stops it, exit 2,
before any job.

Exceptions that are not errors of sweep stay outside the family: ``DiskFull`` (a
``BaseException``, so that no ``except Exception`` swallows it: it stops the sweep) and
private ones a module raises and catches itself.
"""

from __future__ import annotations

from typing import Literal

__all__ = [
    "KINDS",
    "BadInput",
    "InvalidSetting",
    "ServiceFailure",
    "SweepError",
    "kind_of",
    "row_status",
]


class SweepError(Exception):
    """An error sweep raises on purpose, with a message meant for the user. Derive from
    one of its kinds, never from this class directly."""


class BadInput(SweepError):
    """The input cannot be used: a dataset, a config value, a file, a folder, a command
    line. A command says so in one line (``file:line: problem`` where there is a line)
    and exits 2."""


class InvalidSetting(BadInput):
    """One setting of the grid cannot run (a chunker's bad size, a splitter that rewrites
    the text): its row's status is ``invalid`` and the sweep goes on; a command exits 2,
    as for any bad input."""


class ServiceFailure(SweepError):
    """The work could not be done although the input is fine: an endpoint unreachable or
    refusing the key, answers that keep nothing. A command exits 1; a job's row is
    ``failed``."""


#: The kinds, the most specific first (an invalid setting is also bad input).
KINDS: tuple[type[SweepError], ...] = (InvalidSetting, BadInput, ServiceFailure)

RowStatus = Literal["invalid", "failed"]


def kind_of(error: BaseException | type[BaseException]) -> type[SweepError] | None:
    """The kind of an error (or an exception class), the most specific one; None for an
    error that is not sweep's (a library's, a bug)."""
    cls = error if isinstance(error, type) else type(error)
    return next((kind for kind in KINDS if issubclass(cls, kind)), None)


def row_status(error: BaseException) -> RowStatus:
    """The status of the row of a job that ``error`` ended: ``invalid`` for an invalid
    setting (the row says why and the sweep goes on), ``failed`` for anything else."""
    return "invalid" if kind_of(error) is InvalidSetting else "failed"
