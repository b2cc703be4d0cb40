"""Shared test setup."""

from __future__ import annotations

import signal


def pytest_configure(config) -> None:
    # A shell without job control starts background commands with SIGINT ignored, and
    # the commands the Ctrl-C tests start would inherit that and never see their Ctrl-C.
    # A Python handler is reset to the default in a child, so they get theirs back.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
