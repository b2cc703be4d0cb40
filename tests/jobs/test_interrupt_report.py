"""Ctrl-C's report: the tables are kept whatever happens while the pictures are drawn."""

from __future__ import annotations

import os
import signal

import pytest

from sweep.core import interrupts
from sweep.jobs import entry
from sweep.jobs.callbacks import SweepRun


@pytest.fixture
def interrupted(tmp_path, monkeypatch):
    monkeypatch.setattr(entry, "write_report", lambda folder, **kw: "report")
    monkeypatch.setattr(entry, "terminal_text", lambda rep: "the table")
    monkeypatch.setattr(entry, "summary_line", lambda rep: "2 settings")
    before = signal.getsignal(signal.SIGINT)
    yield SweepRun(sweep_dir=tmp_path)
    signal.signal(signal.SIGINT, before)
    interrupts.forget()


def _second_ctrl_c_in_a_c_extension(rep):
    # matplotlib's ft2font, imported while a Ctrl-C arrives, reports ImportError instead
    try:
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(1000):  # the handler runs between two bytecodes
            pass
        raise AssertionError("no KeyboardInterrupt")
    except KeyboardInterrupt as e:
        raise ImportError("initialization failed") from e


def _broken_drawing(rep):
    raise ValueError("no fonts")


@pytest.mark.parametrize(
    "draw,says",
    [
        (_second_ctrl_c_in_a_c_extension, "interrupted again: pictures and report.html skipped"),
        (_broken_drawing, "could not draw the pictures and report.html (ValueError: no fonts)"),
    ],
)
def test_the_tables_are_printed_and_the_exit_is_130_whatever_the_pictures_do(
    interrupted, monkeypatch, capsys, draw, says
):
    monkeypatch.setattr(entry, "write_html", draw)
    with pytest.raises(SystemExit) as e:
        entry.on_interrupt(interrupted)
    out, err = capsys.readouterr()
    assert e.value.code == 130 and "the table" in out
    assert says in err and "2 settings finished before the interrupt" in err
