"""Every command's ``--help`` starts with what it does, examples and the other commands."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from sweep.cli.commands import COMMANDS, help_text

NAMES = [c.name for c in COMMANDS]


def _help(tmp_path, name: str, flag: str = "--help") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", name, flag],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, HF_HUB_OFFLINE="1"),
    )


@pytest.mark.parametrize("name", NAMES)
def test_help_starts_with_what_the_command_does(tmp_path, name):
    done = _help(tmp_path, name)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert done.stdout.startswith(f"python -m {name}")
    assert done.stdout.startswith(help_text(name))
    examples = done.stdout.split("Examples:\n")[1].split("\n\n")[0].splitlines()
    assert len(examples) == 3 and all(e.startswith(f"  python -m {name} ") for e in examples)
    others = done.stdout.split("Other commands (each has --help):")[1]
    assert all(f"python -m {other} " in others for other in NAMES if other != name)
    assert "_target_" not in done.stdout  # no config dump


@pytest.mark.parametrize("name", ["sweep", "sweep.generate", "sweep.answers"])
def test_hydras_own_help_stays_reachable(tmp_path, name):
    done = _help(tmp_path, name, "--hydra-help")
    assert done.returncode == 0 and "Hydra (" in done.stdout


def test_every_example_names_its_own_command():
    for command in COMMANDS:
        assert len(command.examples) == 3
        assert all(e.startswith(f"python -m {command.name} ") for e in command.examples)
