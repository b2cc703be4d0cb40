"""The code passes ``ruff check`` (lint, import order) and ``ruff format --check``, both
configured in ``pyproject.toml`` (``[tool.ruff]``)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from paths import ROOT

#: the folders of Python code, as many of them as the checkout has
FOLDERS = [name for name in ("src", "tests", "bench", "tools") if (ROOT / name).is_dir()]


def ruff(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    # Run from the checkout, so pyproject.toml is the configuration and paths are relative.
    try:
        import ruff as _  # noqa: F401  (only to tell a missing install from a failure)
    except ImportError:
        pytest.fail("ruff is not installed: pip install -e '.[test]'")
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args],
        cwd=ROOT,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_ruff_check_passes():
    proc = ruff("check", "--no-fix", "--output-format", "concise", *FOLDERS)
    assert proc.returncode == 0, (
        "ruff check found problems (ruff check --fix fixes most):\n" + proc.stdout + proc.stderr
    )


def test_ruff_format_leaves_the_code_as_it_is():
    proc = ruff("format", "--check", *FOLDERS)
    assert proc.returncode == 0, (
        "ruff format would change files (run ruff format):\n" + proc.stdout + proc.stderr
    )


def test_the_configuration_sorts_sweep_as_first_party():
    # sweep's imports are a group of their own after the third-party ones, wherever it is
    # installed (pyproject: src and known-first-party), so every checkout sorts them alike.
    text = "import os\n\nimport sweep\nimport numpy\n"
    proc = ruff(
        "check",
        "--no-fix",
        "--output-format",
        "concise",
        "--select",
        "I",
        "--stdin-filename",
        "src/sweep/example.py",
        "-",
        stdin=text,
    )
    assert "I001" in proc.stdout, proc.stdout + proc.stderr
    fixed = ruff(
        "check",
        "--fix-only",
        "--select",
        "I",
        "--stdin-filename",
        "src/sweep/example.py",
        "-",
        stdin=text,
    )
    assert fixed.stdout == "import os\n\nimport numpy\n\nimport sweep\n", fixed.stderr


def test_ruff_reads_python_files_only():
    # ruff also formats the code blocks of Markdown files; the Markdown in src/ and tests/ is
    # data (the bundled corpora, fixtures) whose bytes the results and cache keys depend on.
    proc = ruff("check", "--show-files", *FOLDERS)
    assert proc.returncode == 0, proc.stderr
    files = [line for line in proc.stdout.splitlines() if line.strip()]
    assert files and all(f.endswith((".py", ".pyi", "pyproject.toml")) for f in files), [
        f for f in files if not f.endswith((".py", ".pyi", "pyproject.toml"))
    ][:10]
