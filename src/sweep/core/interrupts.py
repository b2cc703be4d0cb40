"""Ctrl-C: remembered wherever it lands, and a second one leaves quietly.

A Ctrl-C can land where Python cannot raise it (a finalizer: ``Exception ignored
in ...``, and the program goes on) or inside a library that turns the
``KeyboardInterrupt`` into another error. :func:`listen` remembers every Ctrl-C,
so a command can still end as interrupted (:func:`requested`) instead of going on
or reporting a crash.

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
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = [
    "deaf_to_interrupts",
    "forget",
    "hold",
    "listen",
    "quiet_second_interrupt",
    "release",
    "requested",
]


class _Heard:
    """Whether a Ctrl-C came, and whether one raises now or waits to be asked for."""

    def __init__(self) -> None:
        self.heard = False
        self.raising = True


_heard = _Heard()


def _remember(signum: int, frame: Any) -> None:
    _heard.heard = True
    if _heard.raising:
        raise KeyboardInterrupt


def listen() -> None:
    """From now on a Ctrl-C raises ``KeyboardInterrupt`` as usual and is remembered. A
    process that was started with Ctrl-C ignored (a background job) keeps ignoring it."""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _remember)


def requested() -> bool:
    """Whether a Ctrl-C came since :func:`listen` (or :func:`forget`)."""
    return _heard.heard


def forget() -> None:
    _heard.heard = False
    _heard.raising = True


def hold() -> None:
    """Until :func:`release`, a Ctrl-C is only remembered: for a library's own code between
    two steps of ours, where a ``KeyboardInterrupt`` would leave its state half changed."""
    _heard.raising = False


def release() -> None:
    """Ctrl-C raises again; one that came while held raises now."""
    _heard.raising = True
    if _heard.heard:
        raise KeyboardInterrupt


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
