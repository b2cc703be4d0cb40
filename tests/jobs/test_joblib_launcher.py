"""``sweep.jobs.joblib_launcher``'s pure parts; the launcher itself runs in test_launchers."""

from sweep.jobs.joblib_launcher import _exit_codes


def test_how_a_worker_ended_reads_as_words():
    loky = (
        "A worker process managed by the executor was unexpectedly terminated. "
        "The exit codes of the workers are {%s}"
    )
    assert _exit_codes(RuntimeError(loky % "SIGKILL(-9)")) == "killed by SIGKILL"
    assert _exit_codes(RuntimeError(loky % "EXIT(137)")) == "exit code 137"
    assert _exit_codes(RuntimeError("something else")) == ""
