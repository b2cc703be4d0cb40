"""``sweep.joblib_launcher``'s pure parts; the launcher itself runs in test_launchers."""

import pytest

from sweep.joblib_launcher import _exit_codes, worker_count


def test_worker_count_follows_joblib_conventions():
    assert worker_count(2, 6, cpus=8) == 2
    assert worker_count(-1, 6, cpus=4) == 4   # every core
    assert worker_count(-2, 6, cpus=4) == 3   # all but one
    assert worker_count(-8, 6, cpus=4) == 1   # never below one
    assert worker_count(16, 3, cpus=4) == 3   # never more workers than jobs
    assert worker_count(None, 6, cpus=2) == 2
    with pytest.raises(ValueError, match="must not be 0"):
        worker_count(0, 6)
    with pytest.raises(ValueError, match="must be an integer, got 'x'"):
        worker_count("x", 6)


def test_how_a_worker_ended_reads_as_words():
    loky = "A worker process managed by the executor was unexpectedly terminated. " \
           "The exit codes of the workers are {%s}"
    assert _exit_codes(RuntimeError(loky % "SIGKILL(-9)")) == "killed by SIGKILL"
    assert _exit_codes(RuntimeError(loky % "EXIT(137)")) == "exit code 137"
    assert _exit_codes(RuntimeError("something else")) == ""
