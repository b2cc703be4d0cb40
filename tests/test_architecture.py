"""The import contract: packages are layered (``lint-imports`` reads ``pyproject.toml``),
no module reaches into another module's private names, no two public names mean different
things, and no module keeps state that changes at run time."""

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
                    if (
                        alias.name.startswith("_")
                        and not alias.name.startswith("__")
                        and node.module != here
                    ):
                        found.append(
                            f"{path.relative_to(root.parent)}:{node.lineno}: "
                            f"from {node.module} import {alias.name}"
                        )
            elif (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and isinstance(node.value, ast.Name)
                and node.value.id in modules
            ):
                found.append(
                    f"{path.relative_to(root.parent)}:{node.lineno}: {node.value.id}.{node.attr}"
                )
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
    (pkg / "a" / "x.py").write_text(
        "from sweep.b.y import _secret\nfrom sweep.b.y import public\n"
        "from sweep.b import y\nprint(y._secret, y.public)\n"
    )
    assert [line.split(": ", 1)[1] for line in private_imports(pkg)] == [
        "from sweep.b.y import _secret",
        "y._secret",
    ]


def test_the_layers_hold():
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which(
        "lint-imports"
    )
    if lint is None:
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    done = subprocess.run(
        [lint, "--config", str(ROOT / "pyproject.toml")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


# --------------------------------------------------------------------------- unique names

#: Every command's entry point is ``main`` (``python -m``, the console scripts): which one
#: is meant is always said by its module.
ENTRY_POINTS = {"main"}


def duplicate_names(root: Path) -> dict[str, list[str]]:
    """Each public class or function name defined at the top of more than one module, with
    those modules. ``from m import Name`` re-exports, it does not define."""
    defined: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in tree.body:
            if isinstance(
                node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
            ) and not node.name.startswith("_"):
                defined.setdefault(node.name, []).append(_module_name(path, root))
    return {name: where for name, where in sorted(defined.items()) if len(where) > 1}


def test_no_two_public_classes_or_functions_share_a_name():
    found = {
        name: where for name, where in duplicate_names(SRC).items() if name not in ENTRY_POINTS
    }
    assert found == {}, "\n".join(f"{name}: {', '.join(where)}" for name, where in found.items())


def test_the_check_finds_a_name_defined_twice_but_not_a_reexport(tmp_path):
    pkg = tmp_path / "sweep"
    (pkg / "a").mkdir(parents=True)
    (pkg / "a" / "x.py").write_text("class Agreement: ...\ndef load(): ...\ndef _own(): ...\n")
    (pkg / "a" / "y.py").write_text("def Agreement(): ...\nclass _own: ...\n")
    (pkg / "a" / "__init__.py").write_text("from sweep.a.x import Agreement, load\n")
    assert duplicate_names(pkg) == {"Agreement": ["sweep.a.x", "sweep.a.y"]}


# --------------------------------------------------------------------------- module state

#: Calls that change the object they are called on.
MUTATORS = {
    "append",
    "extend",
    "insert",
    "add",
    "update",
    "setdefault",
    "pop",
    "popitem",
    "clear",
    "remove",
    "discard",
    "sort",
    "reverse",
    "__setitem__",
    "__delitem__",
}

#: Process-wide state still kept in a module, by ``(file, name)``: each a memo of a pure
#: load (the same answer every time, kept so that a process loads it once), or a fact about
#: the process itself (signals heard, folders it found unwritable). None carries what one
#: part of a run tells another. Issue 43 item 7 left these for later: each goes when its
#: owner (a run, a job) can hold it instead.
ALLOWED_STATE = {
    # the strategy registry: filled by @chunker as each chunking module is imported, read after
    ("sweep/chunking/base.py", "_REGISTERED"),
    ("sweep/core/cachedirs.py", "_read_only"),  # cache folders this process found unwritable
    ("sweep/core/interrupts.py", "_heard"),  # the Ctrl-C the signal handler heard
    ("sweep/core/progress.py", "_total"),  # the sweep's job count, for "[3/6]" in log lines
    ("sweep/core/text/analyzers.py", "_TOOLS"),  # memo: segmenters loaded, fallbacks said
    ("sweep/core/text/analyzers.py", "_TERMS_MEMO"),  # memo: a text's segmented words
    ("sweep/core/tokenization.py", "_by_name"),  # memo: tokenizers loaded
    ("sweep/core/tokenization.py", "_byte_length_tables"),  # memo
    ("sweep/core/tokenization.py", "_cache"),  # memo: token counts
    ("sweep/core/tokenization.py", "_cache_tokens"),  # the memo's size
    ("sweep/datasets/extraction.py", "_memo"),  # memo: extracted documents
    ("sweep/datasets/readers/html.py", "_CONFIG"),  # memo: the HTML reader's settings
    ("sweep/embedding/models.py", "_FILES_MEMO"),  # memos: models, tokenizers, exports
    ("sweep/embedding/torch_backend.py", "_MODEL_MEMO"),
    ("sweep/embedding/models.py", "_TOKENIZER_MEMO"),
    ("sweep/embedding/onnx_backend.py", "_EXPORT_MEMO"),
    ("sweep/embedding/autobackend.py", "_CHOICES"),  # memo: backend auto's choices
    ("sweep/embedding/autobackend.py", "_SAID"),  # each choice's line said once a process
    ("sweep/embedding/inputs.py", "_TOKEN_MEMO"),
    ("sweep/embedding/multilingual.py", "_MODEL_MEMO"),  # memo: USE loaded per thread count
    ("sweep/embedding/multilingual.py", "_TOKEN_MEMO"),  # memo: USE token counts
    ("sweep/hydrakit/config.py", "_made"),  # sweep folders the fresh_dir resolver made
    ("sweep/jobs/job.py", "_datasets"),  # memo: datasets loaded by this process's jobs
    ("sweep/retrieval/rerank.py", "_MODELS"),  # memo: cross-encoders loaded
}


def module_state(root: Path) -> list[tuple[str, str, int]]:
    """``(file, name, line)`` for every ``global`` statement, and every module-level name
    (assigned at the top of a module, or imported from sweep) that a function changes: an
    item or attribute set or deleted, or a call such as ``append`` or ``update``. A
    container that nothing changes is a constant, and fine."""
    found = set()
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        where = path.relative_to(root.parent).as_posix()
        shared = _top_level_names(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Global):
                found |= {(where, name, node.lineno) for name in node.names}
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                local = _local_names(node)
                for inner in ast.walk(node):
                    name = _changed_name(inner)
                    if name in shared and name not in local:
                        found.add((where, name, inner.lineno))
    return sorted(found)


def _top_level_names(tree: ast.Module) -> set[str]:
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sweep"):
            names |= {alias.asname or alias.name for alias in node.names}
    return names


def _local_names(func: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> set[str]:
    args = func.args
    names = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    names |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    return names | {
        n.id for n in ast.walk(func) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }


def _changed_name(node: ast.AST) -> str | None:
    """The name whose object ``node`` changes in place, if it does."""
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
        targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
        for target in targets:
            if isinstance(target, (ast.Attribute, ast.Subscript)):
                while isinstance(target, (ast.Attribute, ast.Subscript)):
                    target = target.value
                return target.id if isinstance(target, ast.Name) else None
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in MUTATORS
        and isinstance(node.func.value, ast.Name)
    ):
        return node.func.value.id
    return None


def test_no_module_keeps_state_that_changes_at_run_time():
    found = [
        f"{where}:{line}: {name}"
        for where, name, line in module_state(SRC)
        if (where, name) not in ALLOWED_STATE
    ]
    assert found == [], "\n".join(found)


def test_the_check_finds_globals_and_changed_containers_not_constants(tmp_path):
    pkg = tmp_path / "sweep"
    pkg.mkdir()
    (pkg / "x.py").write_text(
        "from sweep.y import state\n"
        "KINDS = {'a': 1}\nseen = []\ncount = 0\n"
        "def f(seen_here):\n    global count\n    count += 1\n    seen.append(1)\n"
        "    state.done = True\n    seen_here.append(KINDS['a'])\n"
        "def g():\n    seen = []\n    seen.append(1)\n    return KINDS.get('a')\n"
    )
    assert [(name, line) for _, name, line in module_state(pkg)] == [
        ("count", 6),
        ("seen", 8),
        ("state", 9),
    ]


def _lint_imports() -> str:
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which(
        "lint-imports"
    )
    if lint is None:
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    return lint


def _contract(name: str) -> dict:
    import tomllib

    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"][
        "contracts"
    ]
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
    shutil.copytree(
        SRC, tmp_path / "sweep", ignore=shutil.ignore_patterns("__pycache__", "conf", "corpora")
    )
    run = tmp_path / "sweep" / "generate" / "run.py"
    run.write_text(run.read_text() + "\nfrom sweep.answers import prompts as _answers_prompts\n")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    env = {**__import__("os").environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run(
        [lint, "--config", str(tmp_path / "pyproject.toml")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert done.returncode != 0
    assert "Commands never import each other BROKEN" in done.stdout, done.stdout[-3000:]
