"""Every ``pip install`` sweep tells a person to run installs what it means to.

sweep's distribution is ``chunk-sweep``: ``sweep`` on PyPI is an unrelated project, so a
line that installs ``sweep`` (with or without extras) installs someone else's code. The
lines are read where people meet them (README.md, docs/, the strings and config comments
of src/, the headers of exported modules) and parsed as pip reads them: options, local
paths, wheels (by their file name) and requirement specifiers (``packaging``).

The dependencies are checked as the pip of Python 3.11's venv (23.2) resolves them: it
matches an extra by its exact spelling, so a dependency asking for an extra its target
spells otherwise gets a warning and nothing installed for it.
"""

from __future__ import annotations

import ast
import re
import shlex
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import pytest
import tomllib
from packaging.markers import default_environment
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name, parse_wheel_filename

from paths import ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PROJECT = PYPROJECT["project"]
NAME = canonicalize_name(PROJECT["name"])
EXTRAS = set(PROJECT["optional-dependencies"])
#: what sweep may tell a person to install: itself, its dependencies, and pip
THIRD_PARTY = {
    canonicalize_name(Requirement(r).name)
    for r in [
        *PROJECT["dependencies"],
        *(r for rs in PROJECT["optional-dependencies"].values() for r in rs),
    ]
} | {"pip"}
#: stands in for a value an f-string fills in (a package or an extra named at run time)
HOLE = "\N{WHITE SQUARE}"
#: pip options followed by a value that is not a requirement
_VALUED = {
    "-i",
    "--index-url",
    "--extra-index-url",
    "-f",
    "--find-links",
    "-t",
    "--target",
    "-c",
    "--constraint",
    "-r",
    "--requirement",
    "--prefix",
    "--root",
    "--python",
    "--platform",
    "--python-version",
    "--implementation",
    "--abi",
    "--progress-bar",
    "--report",
    "--src",
    "--upgrade-strategy",
    "--cache-dir",
    "--log",
}
#: where a shell command ends (or the prose around it resumes)
_COMMAND = re.compile(r"pip install([^`\n&;|()]*)")


@dataclass(frozen=True)
class Line:
    where: str
    command: str


def _markdown() -> list[Line]:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return [
        Line(f"{p.relative_to(ROOT)}:{i}", text)
        for p in pages
        for i, text in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
    ]


def _literal(node: ast.AST) -> str | None:
    """A string constant, or an f-string with :data:`HOLE` for each value it fills in."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else HOLE for v in node.values)
    return None


def _source_strings() -> list[Line]:
    lines = []
    for path in sorted((ROOT / "src").rglob("*")):
        where = str(path.relative_to(ROOT))
        if path.suffix == ".py":
            tree = ast.parse(path.read_text(encoding="utf-8"))
            pieces = {
                id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values
            }  # an f-string is read whole, not piece by piece
            lines += [
                Line(f"{where}:{n.lineno}", _literal(n))
                for n in ast.walk(tree)
                if id(n) not in pieces and _literal(n) is not None
            ]
        elif path.suffix in (".yaml", ".md", ".txt"):
            lines += [
                Line(f"{where}:{i}", text)
                for i, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            ]
    return lines


def _exported_headers() -> list[Line]:
    """The notes the export writes into a module's header, for a module of every kind."""
    from sweep.export.modules import render_module

    own = {
        "chunk": {
            "_target_": "sweep.chunking.build_chunker",
            "strategy": "token",
            "size": 64,
            "overlap": 0,
            "tokenizer": "cl100k_base",
            "prefix": "none",
        }
    }
    return [
        Line(f"export --to {to}", note)
        for to in ("langchain", "llamaindex", "chonkie")
        for note in render_module(own, to).notes
    ]


def commands(lines: list[Line]) -> list[tuple[str, str]]:
    """``(where, arguments)`` of each ``pip install`` in ``lines``."""
    return [(line.where, m.group(1)) for line in lines for m in _COMMAND.finditer(line.command)]


def problems(arguments: str) -> list[str]:
    """What is wrong with the things ``pip install <arguments>`` installs (empty: nothing)."""
    lexer = shlex.shlex(arguments.replace(HOLE, "HOLE"), posix=True)
    lexer.whitespace_split = True
    found: list[str] = []
    skip = False
    first = True
    while True:
        try:
            word = lexer.get_token()
        except ValueError:  # a quote the prose after the command opens ("sweep's")
            break
        if word is None:
            break
        if skip:
            skip = False
            continue
        if word in _VALUED:
            skip = True
            continue
        if word.startswith("-") and word != "-e":
            continue
        if word == "-e":
            continue
        if not first and not _installable(word):
            break  # the prose after the command: "pip install x for all of them"
        first = False
        found += _target_problems(word)
    return found


def _installable(word: str) -> bool:
    """Whether a word after the first target is another one rather than prose."""
    return (
        any(c in word for c in "[]=<>@/.")
        or "HOLE" in word
        or canonicalize_name(word) in THIRD_PARTY | {NAME, "sweep"}
    )


def _target_problems(word: str) -> list[str]:
    path, _, extras = word.partition("[")
    wanted = set(filter(None, extras.rstrip("]").split(","))) - {"HOLE"}
    if path in (".", "./") or path.endswith(".whl") or "/" in path:
        if path.endswith(".whl"):
            name, version, _, _ = parse_wheel_filename(Path(path).name)
            if name != NAME:
                return [f"{word}: a wheel of {name}, not of {NAME}"]
            if str(version) != PROJECT["version"]:
                return [f"{word}: version {version}, but the project is {PROJECT['version']}"]
        elif path not in (".", "./"):
            return []  # a folder or URL of someone else's: not sweep's to judge
        unknown = sorted(wanted - EXTRAS)
        return [f"{word}: no extra {', '.join(unknown)}"] if unknown else []
    if "HOLE" in path:
        return []  # a package named at run time (a framework's, from its own table)
    try:
        requirement = Requirement(word.replace("HOLE", "x"))
    except InvalidRequirement as e:
        return [f"{word}: not a requirement ({e})"]
    name = canonicalize_name(requirement.name)
    if name == "sweep":
        return [f"{word}: `sweep` on PyPI is an unrelated project; this one is {NAME}"]
    if name == NAME:
        unknown = sorted(set(requirement.extras) - {"x"} - EXTRAS)
        return [f"{word}: no extra {', '.join(unknown)}"] if unknown else []
    if name not in THIRD_PARTY:
        return [f"{word}: {name} is neither {NAME} nor one of its dependencies"]
    return []


@pytest.mark.parametrize(
    "arguments, says",
    [
        ('"sweep[frameworks]"', "unrelated project"),
        ("'sweep'", "unrelated project"),
        ("-U sweep==0.1", "unrelated project"),
        (f"'sweep[{HOLE}]'", "unrelated project"),
        ('"chunk-sweep[nope]"', "no extra nope"),
        ('-e ".[nope]"', "no extra nope"),
        ('"dist/sweep-0.1.0-py3-none-any.whl[frameworks]"', "a wheel of sweep"),
        ('"dist/chunk_sweep-9.9.9-py3-none-any.whl"', "version 9.9.9"),
        ("requests", "neither"),
    ],
)
def test_the_check_catches_a_wrong_install_line(arguments, says):
    assert any(says in p for p in problems(arguments)), problems(arguments)


@pytest.mark.parametrize(
    "arguments",
    [
        '-e ".[frameworks]"',
        "-e .",
        "langchain-text-splitters",
        "torch --index-url https://download.pytorch.org/whl/cpu",
        '"./wheels/chunk_sweep-0.1.0-py3-none-any.whl[frameworks]"',
        f"{HOLE}",
    ],
)
def test_the_check_passes_the_right_ones(arguments):
    assert problems(arguments) == []


@pytest.mark.parametrize(
    "source",
    [_markdown, _source_strings, _exported_headers],
    ids=["docs", "src", "exported-headers"],
)
def test_every_install_line_installs_chunk_sweep_or_a_dependency(source):
    found = commands(source())
    assert found, f"no pip install line found in {source.__name__}: the reader is broken"
    wrong = [
        f"{where}: pip install{arguments}: {p}"
        for where, arguments in found
        for p in problems(arguments)
    ]
    assert not wrong, "\n".join(wrong)


def test_the_ci_recipes_install_the_wheel_a_checkout_builds():
    recipes = [
        (w, a)
        for w, a in commands(_markdown())
        if w.startswith(("README.md", "docs/deploying.md")) and ".whl" in a
    ]
    assert {w.split(":")[0] for w, _ in recipes} == {"README.md", "docs/deploying.md"}


def test_the_project_names_itself_by_its_distribution_name():
    for extra, requirements in PROJECT["optional-dependencies"].items():
        for r in requirements:
            assert canonicalize_name(Requirement(r).name) != "sweep", (extra, r)


def _closure(requirements: list[str]) -> list[tuple[str, Requirement]]:
    """``(who, requirement)`` of every requirement reached from ``requirements`` through the
    installed distributions (markers evaluated, extras followed)."""
    seen: set[tuple[str, frozenset[str]]] = set()
    found = []
    todo = [("pyproject.toml", Requirement(r), frozenset()) for r in requirements]
    while todo:
        who, requirement, _ = todo.pop()
        found.append((who, requirement))
        key = (canonicalize_name(requirement.name), frozenset(requirement.extras))
        if key in seen:
            continue
        seen.add(key)
        try:
            dist = metadata.distribution(requirement.name)
        except metadata.PackageNotFoundError:
            continue
        for line in dist.requires or []:
            nested = Requirement(line)
            envs = [dict(default_environment(), extra=e) for e in [""] + sorted(requirement.extras)]
            if nested.marker is None or any(nested.marker.evaluate(env) for env in envs):
                todo.append((dist.metadata["Name"], nested, frozenset()))
    return found


def test_every_extra_a_dependency_asks_for_is_matched_by_old_pip():
    own = [r for r in PROJECT["dependencies"]]
    spelled = {
        (canonicalize_name(Requirement(r).name), e) for r in own for e in Requirement(r).extras
    }
    unmatched = []
    for who, requirement in _closure(own):
        try:
            provided = set(
                metadata.distribution(requirement.name).metadata.get_all("Provides-Extra") or []
            )
        except metadata.PackageNotFoundError:
            continue
        for extra in requirement.extras:
            # the spelling asked first wins: pip 23.2 pins the distribution with it
            if extra not in provided and not any(
                (canonicalize_name(requirement.name), p) in spelled
                for p in provided
                if canonicalize_name(p) == canonicalize_name(extra)
            ):
                unmatched.append(
                    f"{who} asks for {requirement}, but {requirement.name} spells "
                    f"its extras {sorted(provided)}"
                )
    assert not unmatched, "\n".join(unmatched)
