"""``sweep.cli.exits``: one line on stderr and an exit status per kind of error."""

from __future__ import annotations

import errno

import pytest

from sweep.cli.exits import BAD_INPUT, FAILED, KIND_EXITS, exit_status, report_error, run_with_exits
from sweep.core.errors import KINDS, BadInput, InvalidSetting, ServiceFailure


def test_an_error_is_one_line_naming_the_command(capsys):
    report_error("sweep.x", ValueError("bad\n  value"))
    assert capsys.readouterr().err == "sweep.x: error: bad value\n"


def test_an_os_error_names_its_file_then_why_and_no_errno(capsys):
    report_error("sweep.x", FileNotFoundError(errno.ENOENT, "No such file or directory", "/a/b"))
    report_error("sweep.x", OSError(errno.ENOSPC, "No space left on device"))
    assert capsys.readouterr().err.splitlines() == [
        "sweep.x: error: /a/b: No such file or directory",
        "sweep.x: error: No space left on device",
    ]


def test_a_file_name_with_a_line_break_or_an_escape_stays_one_visible_line(capsys):
    # A file name splitting the error in two, recolouring the terminal, or shown reversed
    # by a right-to-left override (U+202E).
    name = "docs/a\nsweep.x: error: fake\x1b[2J\u202egpj.exe"
    report_error("sweep.x", FileNotFoundError(errno.ENOENT, "No such file or directory", name))
    report_error("sweep.x", ValueError(f"{name}: bad"))
    assert capsys.readouterr().err.splitlines() == [
        "sweep.x: error: docs/a\\nsweep.x: error: fake\\x1b[2J\\u202egpj.exe: No such file or directory",
        "sweep.x: error: docs/a sweep.x: error: fake\\x1b[2J\\u202egpj.exe: bad",
    ]


def _raising(error):
    def call():
        raise error

    return call


def test_the_exit_status_of_each_kind_is_the_documented_one():
    assert (BAD_INPUT, FAILED) == (2, 1)
    assert {BadInput: 2, InvalidSetting: 2, ServiceFailure: 1} == KIND_EXITS
    assert set(KIND_EXITS) == set(KINDS)


def test_an_error_of_sweep_gets_its_kinds_status_and_any_other_propagates(capsys):
    from sweep.datasets.runfiles import RunFileError
    from sweep.llm import LLMError

    assert run_with_exits("p", _raising(BadInput("bad"))) == 2
    assert run_with_exits("p", _raising(InvalidSetting("overlap >= size"))) == 2
    assert run_with_exits("p", _raising(ServiceFailure("down"))) == 1
    assert run_with_exits("p", _raising(RunFileError(["run.trec:3: no score"]))) == 2
    assert run_with_exits("p", _raising(LLMError("unreachable"))) == 1
    assert exit_status(ValueError("x")) is None
    with pytest.raises(ValueError):  # not sweep's: a bug, with its traceback
        run_with_exits("p", _raising(ValueError("a bug")))
    assert capsys.readouterr().err.splitlines() == [
        "p: error: bad",
        "p: error: overlap >= size",
        "p: error: down",
        "p: error: run.trec:3: no score",
        "p: error: unreachable",
    ]


def test_what_a_command_says_an_os_error_means_holds_for_sweeps_own_os_errors(capsys):
    from sweep.core.files import NotRegularFile

    fifo = NotRegularFile(errno.EINVAL, "is a FIFO, not a regular file", "out.jsonl")
    assert run_with_exits("p", _raising(fifo)) == BAD_INPUT  # its kind
    assert run_with_exits("p", _raising(fifo), {OSError: FAILED}) == FAILED  # the command's
    assert run_with_exits("p", _raising(BadInput("x")), {OSError: FAILED}) == BAD_INPUT


def test_each_error_type_gets_its_status_and_others_propagate(capsys):
    def fail(e):
        def call():
            raise e

        return call

    errors = {(KeyError, ValueError): BAD_INPUT, RuntimeError: FAILED}
    assert run_with_exits("p", fail(ValueError("v")), errors) == BAD_INPUT
    assert run_with_exits("p", fail(RuntimeError("r")), errors) == FAILED
    assert run_with_exits("p", lambda: None, errors) == 0
    assert run_with_exits("p", lambda: 3, errors) == 3
    with pytest.raises(TypeError):
        run_with_exits("p", fail(TypeError("a bug")), errors)
    assert capsys.readouterr().err.splitlines() == ["p: error: v", "p: error: r"]


@pytest.mark.parametrize(
    "command", [("sweep.validate", "corpora/kestrel"), ("sweep", "--help")], ids=" ".join
)
def test_a_closed_pipe_ends_the_command_quietly(command):
    # `python -m sweep.validate DIR | head -1`, `sweep --help | head` (Hydra prints the
    # help): the reader has gone (here before the first line, so that the write fails for
    # certain).
    import subprocess
    import sys

    from paths import ROOT

    proc = subprocess.Popen(
        [sys.executable, "-m", *command], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    proc.stdout.close()
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 141 and err == b"", err.decode()
