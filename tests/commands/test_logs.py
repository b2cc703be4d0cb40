"""What the commands log: one format, one line per event, no bars when stderr is a file.

Runs with the real model on the tiny corpus (e2e). ``MPLCONFIGDIR`` points at an
empty folder so that matplotlib builds its font cache, as on a first run, and
would say so.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from llm_server import stand_in  # noqa: F401  (fixture)
from paths import ROOT

pytestmark = pytest.mark.e2e

LINE = re.compile(r"^\[\d\d:\d\d:\d\d\]\[(DEBUG|INFO|WARNING|ERROR|CRITICAL)\] \S")
NOISE = ("Loading weights", "fontManager", "HTTP Request:", "#0 :", "#1 :", "[HYDRA]")


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY",)}
    return dict(
        env,
        HF_HUB_OFFLINE="1",
        MPLCONFIGDIR=str(tmp_path / "mpl"),
        XDG_CACHE_HOME=str(tmp_path / "xdg"),
    )


def assert_one_format(text: str) -> None:
    assert "\r" not in text, "a progress bar was drawn into a file"
    for noise in NOISE:
        assert noise not in text, noise
    lines = [ln for ln in text.splitlines() if ln.strip()]
    assert lines
    for line in lines:
        # Log lines in one format; the rest are the command's own "sweep: ..." messages.
        assert LINE.match(line) or line.startswith(("sweep:", "generate:")), line


def test_a_sweep_logs_one_format_to_stderr_and_its_job_folders(tmp_path):
    out = tmp_path / "sweep"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "sweep",
            "dataset=tiny",
            "chunk.size=64,128",
            f"hydra.sweep.dir={out}",
            f"runtime.cache_dir={tmp_path / 'cache'}",
        ],
        cwd=tmp_path,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert_one_format(proc.stderr)
    # What every job shares is said once, in the plan before the first job.
    assert "plan: 2 job(s) on tiny; every job with dataset=tiny runtime.cache_dir=" in proc.stderr
    assert "[1/2] job 0: chunk.size=64\n" in proc.stderr
    assert "[INFO]" not in proc.stdout  # stdout holds the table, not the log
    for log in out.glob("*/*.log"):
        assert_one_format(log.read_text())


def test_generate_logs_no_line_per_request(tmp_path, stand_in):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "sweep.generate",
            "dataset=tiny",
            "llm.model=stand-in",
            f"llm.base_url={stand_in.url}",
            "llm.api_key_env=null",
            f"llm.cache_dir={tmp_path / 'llm'}",
            f"runtime.cache_dir={tmp_path / 'emb'}",
            "generate.n=4",
            "generate.window_tokens=60",
            f"generate.out={tmp_path / 'out'}",
        ],
        cwd=ROOT,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert len(stand_in.requests) > 1
    assert_one_format(proc.stderr)
