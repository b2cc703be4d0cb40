"""``sweep.core.interrupts``: a Ctrl-C is remembered, held while a library works, and raised
when it is released."""

from __future__ import annotations

import os
import signal
import time

import pytest

from sweep.core import interrupts


@pytest.fixture
def listening():
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    interrupts.forget()
    interrupts.listen()
    yield
    interrupts.forget()
    signal.signal(signal.SIGINT, previous)


def _ctrl_c() -> None:
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(0.05)  # the handler runs at the next bytecode of the main thread


def test_a_ctrl_c_raises_and_is_remembered(listening):
    assert not interrupts.requested()
    with pytest.raises(KeyboardInterrupt):
        _ctrl_c()
    assert interrupts.requested()
    interrupts.forget()
    assert not interrupts.requested()


def test_a_held_ctrl_c_raises_when_released(listening):
    interrupts.hold()
    _ctrl_c()  # only remembered: the library's code runs on
    assert interrupts.requested()
    with pytest.raises(KeyboardInterrupt):
        interrupts.release()
    interrupts.forget()
    interrupts.hold()
    interrupts.release()  # nothing came: nothing raised


def test_a_process_that_ignores_ctrl_c_keeps_ignoring_it():
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        interrupts.listen()
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)
