"""Ctrl-C twice: the second one leaves quietly.

After a first Ctrl-C a command says what it kept and exits. Python then
still waits for the threads that are running (requests in flight), and
objects are finalized; a second Ctrl-C lands in that wait or in a finalizer,
where Python can only print it as ``Exception ignored in ...`` with a
traceback. :func:`quiet_second_interrupt` turns that into one line (or
nothing); every other ignored exception is printed as Python would.
"""

from __future__ import annotations

import signal
import sys
from contextlib import contextmanager
from typing import Any, Iterator

__all__ = ["deaf_to_interrupts", "quiet_second_interrupt"]


def quiet_second_interrupt(note: str = "") -> None:
    """From now on, a Ctrl-C that Python would report as "ignored" prints ``note`` once
    (to stderr; nothing when empty) instead of a traceback."""
    said = False

    def hook(unraisable: Any) -> None:
        nonlocal said
        if not issubclass(unraisable.exc_type, KeyboardInterrupt):
            sys.__unraisablehook__(unraisable)
        elif note and not said:
            said = True
            print(note, file=sys.stderr, flush=True)

    sys.unraisablehook = hook


@contextmanager
def deaf_to_interrupts() -> Iterator[None]:
    """Ctrl-C is ignored inside the block (a message that must not be cut short)."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
