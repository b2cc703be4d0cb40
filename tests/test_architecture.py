"""The import contract: packages are layered (``lint-imports`` reads ``pyproject.toml``),
and no module reaches into another module's private names."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from paths import ROOT

SRC = ROOT / "src" / "sweep"


def _module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def private_imports(root: Path) -> list[str]:
    """``file:line: from M import _x`` for every import of a private name from another module."""
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        here = _module_name(path, root)
        modules = _imported_modules(tree, root)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    if alias.name.startswith("_") and not alias.name.startswith("__") \
                            and node.module != here:
                        found.append(f"{path.relative_to(root.parent)}:{node.lineno}: "
                                     f"from {node.module} import {alias.name}")
            elif isinstance(node, ast.Attribute) and node.attr.startswith("_") \
                    and not node.attr.startswith("__") and isinstance(node.value, ast.Name) \
                    and node.value.id in modules:
                found.append(f"{path.relative_to(root.parent)}:{node.lineno}: "
                             f"{node.value.id}.{node.attr}")
    return found


def _imported_modules(tree: ast.Module, root: Path) -> set[str]:
    """Local names bound to a sweep module (``from sweep.hydrakit import devices``, ``import sweep.x as y``)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("sweep"):
            for alias in node.names:
                candidate = f"{node.module}.{alias.name}"
                where = root.parent / Path(*candidate.split("."))
                if where.with_suffix(".py").exists() or where.is_dir():
                    names.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("sweep") and alias.asname:
                    names.add(alias.asname)
    return names


def test_no_module_imports_another_modules_private_names():
    assert private_imports(SRC) == []


def test_the_check_finds_a_private_import(tmp_path):
    pkg = tmp_path / "sweep"
    (pkg / "a").mkdir(parents=True)
    (pkg / "b").mkdir()
    (pkg / "b" / "y.py").write_text("_secret = 1\npublic = 2\n")
    (pkg / "a" / "x.py").write_text("from sweep.b.y import _secret\nfrom sweep.b.y import public\n"
                                    "from sweep.b import y\nprint(y._secret, y.public)\n")
    assert [line.split(": ", 1)[1] for line in private_imports(pkg)] == [
        "from sweep.b.y import _secret", "y._secret"]


def test_the_layers_hold():
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")
    if lint is None:
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    done = subprocess.run([lint, "--config", str(ROOT / "pyproject.toml")], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def _lint_imports() -> str:
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")
    if lint is None:
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    return lint


def _contract(name: str) -> dict:
    import tomllib

    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    return next(c for c in contracts if c["name"] == name)


def test_every_command_is_a_package_that_no_other_command_imports():
    # `python -m sweep.X` runs sweep/X/__main__.py, and every command's package is in the
    # contract that keeps commands apart (sweep.jobs is python -m sweep's package).
    from sweep.cli.commands import COMMANDS

    # sweep.embedding is a shared stage whose __main__ only checks that a model loads
    named = {c.name for c in COMMANDS} - {"sweep", "sweep.embedding"}
    assert all((SRC.parent / Path(*n.split(".")) / "__main__.py").is_file() for n in named)
    assert not [p.name for p in SRC.glob("*.py") if p.name not in ("__init__.py", "__main__.py")]
    assert set(_contract("Commands never import each other")["modules"]) == named | {"sweep.jobs"}


def test_a_command_importing_another_breaks_the_contract(tmp_path):
    # The contract must catch it: a copy of the package where generation reads the answers
    # command's code fails lint-imports on "Commands never import each other".
    lint = _lint_imports()
    shutil.copytree(SRC, tmp_path / "sweep", ignore=shutil.ignore_patterns("__pycache__", "conf",
                                                                           "corpora"))
    run = tmp_path / "sweep" / "generate" / "run.py"
    run.write_text(run.read_text() + "\nfrom sweep.answers import prompts as _answers_prompts\n")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    env = {**__import__("os").environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run([lint, "--config", str(tmp_path / "pyproject.toml")], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode != 0
    assert "Commands never import each other BROKEN" in done.stdout, done.stdout[-3000:]
