"""The ``sweep`` command as pip installs it: a wheel (not the checkout), run from elsewhere.

The console script imports ``sweep.__main__`` as a module of an installed
package, which is not how ``python -m sweep`` in the checkout finds its
configs; a command that only works from the source tree fails every user who
installs it. The wheel goes into a folder of its own (``pip install --target``)
and is put first on the path, so the checkout's editable install is not used.
"""

from __future__ import annotations

import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from paths import ROOT as CHECKOUT


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    target = tmp_path_factory.mktemp("site")
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--disable-pip-version-check",
            "--target",
            str(target),
            str(CHECKOUT),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert build.returncode == 0, build.stderr[-2000:]
    return target


def _env(site: Path) -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(site), HF_HUB_OFFLINE="1")


def _sweep(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(site / "bin" / "sweep"), *args],
        cwd=cwd,
        env=_env(site),
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_wheel_is_what_runs(installed, tmp_path):
    where = subprocess.run(
        [sys.executable, "-c", "import sweep; print(sweep.__file__)"],
        cwd=tmp_path,
        env=_env(installed),
        capture_output=True,
        text=True,
    )
    assert Path(where.stdout.strip()).is_relative_to(installed), where


def test_the_wheel_installs_as_chunk_sweep(installed):
    """pip knows sweep as chunk-sweep: ``sweep`` on PyPI is an unrelated project."""
    (info,) = installed.glob("*.dist-info")
    assert metadata.PathDistribution(info).metadata["Name"] == "chunk-sweep"


def test_installed_help_runs_outside_the_checkout(installed, tmp_path):
    done = _sweep(installed, tmp_path, "--help")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert done.stdout.startswith("python -m sweep (installed as the command `sweep` too)")


@pytest.mark.e2e
def test_installed_sweep_runs_the_bundled_tiny_corpus_outside_the_checkout(installed, tmp_path):
    done = _sweep(
        installed,
        tmp_path,
        "dataset=tiny",
        "chunk.size=128",
        f"runtime.cache_dir={tmp_path / 'cache'}",
        "runtime.show_progress=false",
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    (folder,) = (tmp_path / "outputs" / "sweep").iterdir()
    assert (folder / "results.csv").is_file() and (folder / "0" / "row.json").is_file()
