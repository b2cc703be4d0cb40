"""A setting's Hydra config, to rerun it: sweep's own config with the job's group choices
and its resolved values on top.

Its values are the job's, literally: a string that looks like an interpolation
(``${oc.env:KEY}``, which the user escaped) is written escaped, so the rerun reads the same
string and resolves nothing. Its comment lines show data (the folder, the output path, the
setting's label) with line breaks and control characters escaped, so each stays one
comment line.

A sweep folder is untrusted input, and the file's header prints the command that runs it.
So the file holds only what sweep's own configs hold (:class:`SweepConfigs`, read from
conf/ and the nodes defined in code, never a list kept by hand): their top-level keys,
their group options, and their ``_target_`` s, plus, at ``chunk.splitter``, one of the
framework's :data:`~sweep.chunking.frameworks.EXPORTABLE_SPLITTERS` or, for
``chunk=callable``, the user's own function, which the header and stderr name. Anything
else is refused in one line naming the key.
"""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omegaconf.errors import OmegaConfBaseException

from sweep.chunking.frameworks import EXPORTABLE_SPLITTERS, exportable_splitter
from sweep.core.configfiles import config_yaml, read_yaml
from sweep.core.messages import visible
from sweep.export.modules import framework_of
from sweep.reporting.selection import ExportError

__all__ = ["SweepConfigs", "hydra_yaml", "rerun_notes", "sweep_configs"]

#: where a job runs and what it shows, not what it measures
_LEFT_OUT = ("runtime", "hydra", "experiment")
#: Hydra's keys of a node it builds (hydra._internal.instantiate: _Keys), and the values
#: each may take; any other key of the node is an argument
_CONVERT = ("none", "partial", "object", "all")
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
#: Packages that hold no splitter of a user's but would run what a document's text says
#: (``hydra.utils.instantiate``, ``yaml.unsafe_load``) or are sweep itself; the standard
#: library (``os.system``, ``shutil.copyfile``, ``subprocess.run``) is refused as well.
_NOT_A_SPLITTER = ("sweep", "hydra", "omegaconf", "yaml")


@dataclass(frozen=True)
class SweepConfigs:
    """What sweep's own configs hold: the only things a Hydra file export writes may name.

    ``groups`` are the config groups in the order ``config.yaml`` lists them,
    ``options`` each group's option names, ``keys`` every top-level key a composed config
    has, and ``targets`` every ``_target_`` the configs name."""

    groups: tuple[str, ...]
    options: Mapping[str, frozenset[str]]
    keys: frozenset[str]
    targets: frozenset[str]


def _targets(node: Any) -> set[str]:
    if isinstance(node, Mapping):
        found = {node["_target_"]} if isinstance(node.get("_target_"), str) else set()
        return found.union(*(_targets(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_targets(v) for v in node))
    return set()


def sweep_configs(conf_dir: Path) -> SweepConfigs:
    """:class:`SweepConfigs` of the config folder ``conf_dir`` (sweep's ``conf/``)."""
    primary = read_yaml(conf_dir / "config.yaml")
    groups: list[str] = []
    keys = {k for k in primary if k != "defaults"}
    for entry in primary.get("defaults") or []:
        if isinstance(entry, Mapping):
            (group,) = entry
            group = group.removeprefix("override ").strip()
            if "/" not in group:  # hydra/job_logging... are Hydra's
                groups.append(group)
        elif entry != "_self_":  # a config file beside config.yaml: runtime.yaml
            keys.update(read_yaml(conf_dir / f"{entry}.yaml"))
    keys.update(groups)
    options: dict[str, set[str]] = {
        g: {p.stem for p in (conf_dir / g).glob("*.yaml")} for g in groups
    }
    targets = set()
    for path in sorted(conf_dir.rglob("*.yaml")):
        targets |= _targets(read_yaml(path))
    targets.discard("???")  # chunk=callable's: the user's function, set on the command line
    return SweepConfigs(
        tuple(groups),
        {g: frozenset(o) for g, o in options.items()},
        frozenset(keys),
        frozenset(targets),
    )


def _user_function(target: Any) -> str | None:
    """Why ``target`` cannot be the user's own splitter of ``chunk=callable``, or None."""
    if not isinstance(target, str) or not _DOTTED.fullmatch(target):
        return "not a dotted Python name (mypackage.split)"
    top = target.split(".", 1)[0]
    if top in sys.stdlib_module_names or top.startswith("_"):
        return (
            "in Python's standard library, which holds no splitter of yours (the rerun "
            "would call it with each document's text)"
        )
    if top in _NOT_A_SPLITTER:
        return (
            f"in {top}, which holds no splitter of yours (the rerun would call it with "
            "each document's text)"
        )
    return None


def _node_problem(
    node: Mapping[str, Any], where: str, config: Mapping[str, Any], own: SweepConfigs
) -> str | None:
    """Why the Hydra file cannot hold the node at ``where`` (it has a ``_target_``)."""
    target = node["_target_"]
    chunk = config.get("chunk")
    framework = framework_of(chunk) if isinstance(chunk, Mapping) else None
    if where == "chunk.splitter" and framework == "callable":
        problem = _user_function(target)
        if problem is not None:
            return f"{where}._target_ is {target!r}, {problem}"
    elif where == "chunk.splitter" and framework is not None:
        if exportable_splitter(framework, target) is None:
            module, names = EXPORTABLE_SPLITTERS.get(framework, ("", ()))
            allowed = (
                f"{framework}'s splitters in {module} ({', '.join(names)})"
                if names
                else f"no splitter for chunk.framework {framework!r}"
            )
            return (
                f"{where}._target_ is {target!r}, which --to hydra does not write: it "
                f"writes only {allowed}; --to chunks writes its chunks"
            )
    elif target not in own.targets:
        return (
            f"{where}._target_ is {target!r}, which none of sweep's own configs builds; "
            "--to hydra writes only those"
        )
    if not isinstance(node.get("_args_", []), list):
        return f"{where}._args_ is {node['_args_']!r}, not a list of arguments"
    for key in ("_partial_", "_recursive_"):
        if not isinstance(node.get(key, False), bool):
            return f"{where}.{key} is {node[key]!r}, not true or false"
    convert = node.get("_convert_", "none")
    if not isinstance(convert, str) or convert.lower() not in _CONVERT:
        return f"{where}._convert_ is {convert!r}, not one of {', '.join(_CONVERT)}"
    return None


def _problem(value: Any, where: str, config: Mapping[str, Any], own: SweepConfigs) -> str | None:
    """The first node under ``value`` (at ``where``) the Hydra file cannot hold, said in
    one line; nodes inside lists (``_args_``) and mappings included."""
    if isinstance(value, Mapping):
        if "_target_" in value:
            problem = _node_problem(value, where, config, own)
            if problem is not None:
                return problem
        items = ((f"{where}.{k}", v) for k, v in value.items())
    elif isinstance(value, list):
        items = ((f"{where}[{i}]", v) for i, v in enumerate(value))
    else:
        return None
    return next((p for w, v in items if (p := _problem(v, w, config, own)) is not None), None)


def _checked(
    config: Mapping[str, Any],
    choices: Mapping[str, str],
    own: SweepConfigs,
    config_file: Path,
    choices_file: Path,
) -> None:
    for key in config:
        if key not in own.keys:
            raise ExportError(
                f"{config_file}: the key {visible(repr(key))} is none of sweep's "
                f"own config keys ({', '.join(sorted(own.keys))}); --to hydra "
                "writes only those"
            )
    for group in own.groups:
        choice = choices.get(group)
        if group not in _LEFT_OUT and choice is not None and choice not in own.options[group]:
            raise ExportError(
                f"{choices_file}: {group}={visible(repr(choice))} is none of "
                f"sweep's own {group} configs "
                f"({', '.join(sorted(own.options[group]))}); --to hydra writes "
                "only those"
            )
    for key, value in config.items():
        problem = None if key in _LEFT_OUT else _problem(value, str(key), config, own)
        if problem is not None:
            raise ExportError(f"{config_file}: {visible(problem)}")


def rerun_notes(config: Mapping[str, Any]) -> list[str]:
    """What the rerun does that the user must know before running a file from a folder
    that is not theirs: which function of theirs it calls (``chunk=callable``), and where
    it sends the documents, with which key (``context.mode=llm``). The header holds them,
    and ``sweep.export`` prints them."""
    chunk = config.get("chunk")
    if not isinstance(chunk, Mapping):
        return []
    notes = []
    splitter = chunk.get("splitter")
    target = splitter.get("_target_") if isinstance(splitter, Mapping) else None
    if framework_of(chunk) == "callable" and isinstance(target, str):
        notes.append(
            f"NOTE: the rerun calls {target}, this setting's own splitter: read it "
            "before you run it."
        )
    llm, context = config.get("llm"), config.get("context")
    if isinstance(context, Mapping) and context.get("mode") == "llm" and isinstance(llm, Mapping):
        key = f" with the key in ${llm['api_key_env']}" if llm.get("api_key_env") else ""
        notes.append(
            f"NOTE: the rerun sends each document and chunk to {llm.get('base_url')}"
            f"{key} (context.mode=llm): check that address before you run it."
        )
    return notes


def hydra_yaml(
    config: Mapping[str, Any],
    choices: Mapping[str, str],
    out: Path,
    header: Sequence[str],
    own: SweepConfigs,
    deleted: Sequence[str] = (),
    *,
    config_file: Path = Path("resolved_config.yaml"),
    choices_file: Path = Path(".hydra/hydra.yaml"),
) -> str:
    """The YAML text; ``out`` is where it will be written (the rerun command names it);
    ``header`` the lines of its opening comment; ``own`` what sweep's configs hold, the
    only keys, group options and ``_target_`` s the file may have (an
    :class:`ExportError` naming ``config_file`` or ``choices_file`` otherwise).
    ``deleted`` are the job's ``~key`` overrides: a config file cannot delete a key its
    defaults bring, so the rerun command does."""
    try:
        _checked(config, choices, own, config_file, choices_file)
    except RecursionError:
        raise ExportError(
            f"{config_file}: nested too deeply to be written as a Hydra config"
        ) from None
    defaults: list[Any] = ["config"]
    defaults += [
        {f"override {g}": choices[g]} for g in own.groups if g not in _LEFT_OUT and choices.get(g)
    ]
    defaults.append("_self_")
    body = {"defaults": defaults}
    body.update({k: v for k, v in config.items() if k not in _LEFT_OUT})
    command = " ".join(
        [
            "python -m sweep --config-dir",
            shlex.quote(str(out.parent.resolve())),
            "--config-name",
            shlex.quote(out.stem),
            *(shlex.quote(d) for d in deleted),
        ]
    )
    lines = [
        f"# {visible(line)}" for line in [*header, *rerun_notes(config), f"Rerun it: {command}"]
    ]
    try:
        text = config_yaml(body)
    except OmegaConfBaseException as e:  # a key no config can have (null, say)
        raise ExportError(
            f"the job's config cannot be written as a Hydra config: {type(e).__name__}: {e}"
        ) from None
    except RecursionError:
        raise ExportError(
            "the job's config is nested too deeply to be written as a Hydra config"
        ) from None
    return "\n".join(lines) + "\n" + text
