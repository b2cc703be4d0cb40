"""``sweep.core.progress``: job lines and progress bars."""

from __future__ import annotations

import os
import sys

import pytest

from sweep.core import progress


def test_a_job_line_leaves_out_what_every_job_shares(monkeypatch):
    monkeypatch.delenv(progress.SHARED_ENV, raising=False)
    job = ["dataset.path=/data/a/very/long/folder", "chunk.size=256", "chunk.overlap=64"]
    assert progress.job_overrides(job) == " ".join(job)
    progress.set_shared(["dataset.path=/data/a/very/long/folder"])
    assert progress.job_overrides(job) == "chunk.size=256 chunk.overlap=64"
    assert progress.job_overrides(job[:1]) == "(the settings above)"
    assert progress.job_overrides([]) == "(defaults)"
    monkeypatch.delenv(progress.SHARED_ENV)


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_a_bar_is_drawn_on_a_terminal_only(monkeypatch):
    main, child = os.openpty()
    with open(child, "w") as terminal:
        monkeypatch.setattr(sys, "stderr", terminal)
        with progress.bar(3, "embedding", "text") as bar:
            assert not bar.disable
    with open(os.devnull, "w") as file:  # a log file, a pipe: no bar
        monkeypatch.setattr(sys, "stderr", file)
        with progress.bar(3, "embedding", "text") as bar:
            assert bar.disable
    os.close(main)
