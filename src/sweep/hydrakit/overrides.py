"""Command-line overrides checked before Hydra runs: a key the config does not have is a
typo, answered with the closest key instead of Hydra's advice to add it with ``+``.

``chunk.sise=128`` would make Hydra suggest ``+chunk.sise=128``, which composes,
and then every job fails on an option its chunker does not know. Here the
config is composed with the first choice of every group the command line
selects, and every plain ``key=value`` must name a key it has.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from omegaconf import DictConfig

from sweep.core.configfiles import read_yaml
from sweep.core.errors import BadInput
from sweep.core.settings import MOVED_KEYS
from sweep.core.suggest import closest

__all__ = [
    "UnknownKey",
    "check_command_line",
    "check_overrides",
    "command_overrides",
    "expand_grid",
]

#: Flags after which Hydra does something other than compose this config and run it
#: (help, printing the config, another config): nothing to check.
_NOT_A_RUN = (
    "-h",
    "--help",
    "--hydra-help",
    "--version",
    "-c",
    "--cfg",
    "-i",
    "--info",
    "-sc",
    "--shell-completion",
    "-cp",
    "--config-path",
    "-cn",
    "--config-name",
    "-cd",
    "--config-dir",
    "--experimental-rerun",
    "-p",
    "--package",
)
_SHOWN_KEYS = 12
#: A value that is another key's (``${..size}``): that key is the one to set.
_RELATIVE = re.compile(r"\$\{(\.+)([\w.]+)\}")
#: Keys that moved, so that a command line written for the old place is told the new one:
#: old key -> new key (the runtime's, and those of sweep.core.settings.MOVED_KEYS).
MOVED = {
    "embed.cache_dir": "runtime.cache_dir",
    "embed.show_progress": "runtime.show_progress",
    "embed.prewarm": "runtime.prewarm",
    **MOVED_KEYS,
}
#: Why a key moved, by the node it moved to.
_WHY_MOVED = {
    "runtime": "it says how the command runs, not what it measures",
    "context": "contextual headers are a node of their own, not the chunker's",
    "parent": "parent retrieval is a node of its own, not the retriever's",
}


class UnknownKey(ValueError, BadInput):
    """A ``key=value`` whose key no composed config has; ``str()`` is one line."""


def command_overrides(args: Sequence[str]) -> list[str] | None:
    """The overrides among ``args``, or None when the flags ask Hydra for something else."""
    if any(a.split("=", 1)[0] in _NOT_A_RUN for a in args):
        return None
    return [a for a in args if not a.startswith("-")]


def expand_grid(overrides: Sequence[str]) -> list[list[str]]:
    """The override list of every job Hydra's basic sweeper makes of ``overrides``."""
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parsed = OverridesParser.create().parse_overrides(list(overrides))
    return [job for batch in BasicSweeper.split_arguments(parsed, None) for job in batch]


def _check_choice(override: Any, options: Sequence[str]) -> None:
    """An option of a config group (``chunk=sematic``) that the group does not have."""
    if not options:
        return  # not a group after all (hydra.job.name=...) or one Hydra fills itself
    try:
        values = (
            list(override.sweep_string_iterator())
            if override.is_sweep_override()
            else [override.get_value_element_as_str()]
        )
    except Exception:  # a range over a group, say: Hydra's message is the right one
        return
    for value in values:
        if value not in options and value != "null":
            match = closest(value, options)
            hint = f" (did you mean {override.key_or_group}={match}?)" if match else ""
            raise UnknownKey(
                f"unknown {override.key_or_group} option {value!r}{hint}; "
                f"the options are: {', '.join(sorted(options))}"
            )


def _key_names(node: DictConfig) -> list[str]:
    return [str(k) for k in node]


def _missing(cfg: DictConfig, key: str) -> tuple[str, str, list[str]] | None:
    """``(missing key, its parent, the parent's keys)`` when ``cfg`` lacks ``key``."""
    node = cfg
    parts = key.split(".")
    for i, part in enumerate(parts):
        if not isinstance(node, DictConfig):
            return None  # into a list or a value: Hydra's own check says what is wrong
        names = _key_names(node)
        if part not in names:
            return ".".join(parts[: i + 1]), ".".join(parts[:i]), names
        node = node._get_node(part)  # not resolved: ${...} values are not evaluated here
    return None


def _fed_by(cfg: DictConfig, key: str) -> str | None:
    """The key whose value ``key`` takes (``chunk.splitter.chunk_size: ${..size}`` is fed by
    ``chunk.size``), or None when ``key`` holds its own value."""
    parts = key.split(".")
    node: Any = cfg
    for part in parts:
        if not isinstance(node, DictConfig) or part not in _key_names(node):
            return None
        node = node._get_node(part)
    found = _RELATIVE.fullmatch(str(node._value())) if node._is_interpolation() else None
    if found is None:
        return None
    dots, name = found.groups()
    container = parts[:-1]
    up = len(dots) - 1  # "." is the key's own node, each further dot one node up
    return ".".join(container[: len(container) - up] + [name]) if up <= len(container) else None


def _leaf_keys(node: DictConfig, prefix: str = "") -> Iterable[str]:
    for name in _key_names(node):
        child = node._get_node(name)
        full = f"{prefix}{name}"
        yield full
        if isinstance(child, DictConfig):
            yield from _leaf_keys(child, full + ".")


def check_overrides(config_dir: str, config_name: str, args: Sequence[str]) -> None:
    """Raise :class:`UnknownKey` for a group option the group lacks, or a plain
    ``key=value`` override whose key the config (composed with the first choice of each
    group given) lacks; anything Hydra reports better itself (syntax errors, ``hydra.*``
    keys, ``+``/``~`` overrides) is left to it."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    overrides = command_overrides(args)
    if not overrides:
        return
    try:
        parsed = OverridesParser.create().parse_overrides(overrides)
    except HydraException:
        return
    if any(o.key_or_group.startswith("hydra.searchpath") for o in parsed):
        return  # configs of the user's own: Hydra knows their groups and keys, we do not
    with initialize_config_dir(config_dir=config_dir, version_base="1.3"):
        loader = GlobalHydra.instance().config_loader()
        groups = set(loader.list_groups(""))
        selects = [o for o in parsed if o.key_or_group.split("/", 1)[0] in groups]
        for o in selects:
            if not (o.is_delete() or o.package):
                _check_choice(o, loader.get_group_options(o.key_or_group))
        plain = [
            o
            for o in parsed
            if o not in selects
            and not o.is_hydra_override()
            and not (o.is_add() or o.is_force_add() or o.is_delete())
            and o.package is None
        ]
        if not plain:
            return
        choices = [o.input_line for o in selects if not o.is_hydra_override()]
        first = expand_grid(choices)[0]
        swept = {o.key_or_group for o in selects if o.is_sweep_override()}
        options = {
            p.key_or_group.split(".", 1)[0]: loader.get_group_options(
                p.key_or_group.split(".", 1)[0]
            )
            for p in plain
            if p.key_or_group.split(".", 1)[0] in groups
        }
        try:
            # One combination is enough: Hydra applies every key to every job, so a key
            # this one lacks fails a job anyway.
            cfg = compose(config_name=config_name, overrides=first)
        except HydraException:
            return  # a bad group choice: Hydra names the valid ones
    for override in plain:
        source = _fed_by(cfg, override.key_or_group)
        if source is not None:
            # One name per setting: a framework's chunk_size is chunk.size, and setting it
            # under the splitter would leave the row showing the preset's size.
            raise UnknownKey(
                f"{override.key_or_group} is set through {source} (the config "
                f"hands {source} to it): write {source}=... instead"
            )
        found = _missing(cfg, override.key_or_group)
        if found is None:
            continue
        missing, parent, names = found
        leaves = sorted(_leaf_keys(cfg))
        moved = MOVED.get(override.key_or_group)
        if moved in leaves:
            raise UnknownKey(
                f"{override.key_or_group} is now {moved}: {_WHY_MOVED[moved.split('.', 1)[0]]}"
            )
        elsewhere = _of_other_options(
            Path(config_dir),
            first,
            override.key_or_group,
            options.get(override.key_or_group.split(".", 1)[0], ()),
            swept,
        )
        if elsewhere is not None:
            raise UnknownKey(elsewhere)
        match = closest(override.key_or_group, leaves)
        hint = f" (did you mean {match}?)" if match else ""
        names = [n for n in names if not n.startswith("_")]
        shown = ", ".join(sorted(names)[:_SHOWN_KEYS]) + (
            ", ..." if len(names) > _SHOWN_KEYS else ""
        )
        where = f"{parent} has" if parent else "the top-level keys are"
        # The key only, never its value: it may be a key or a URL with a password in it.
        raise UnknownKey(f"unknown setting {missing}{hint}; {where}: {shown}")


def _has(conf_dir: Path, group: str, option: str, parts: Sequence[str], seen: set[str]) -> bool:
    """Whether the option file ``group/option.yaml`` (or one its defaults bring from the same
    group) has the key ``parts``: read as files, not composed (composing every option of
    a group would make each typo cost seconds)."""
    path = conf_dir / group / f"{option}.yaml"
    if str(path) in seen or not path.is_file():
        return False
    seen.add(str(path))
    try:
        node: Any = read_yaml(path)
    except Exception:  # a file Hydra will report itself
        return False
    if _holds(node, parts):
        return True
    for entry in (node.get("defaults") or []) if isinstance(node, dict) else []:
        name = entry.split("@", 1)[0] if isinstance(entry, str) else None
        if name and name != "_self_" and _has(conf_dir, group, name, parts, seen):
            return True
    return False


def _holds(node: Any, parts: Sequence[str]) -> bool:
    for part in parts:
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def _of_other_options(
    conf_dir: Path, first: Sequence[str], key: str, options: Sequence[str], swept: set[str]
) -> str | None:
    """Why ``key`` (``rerank.model``) cannot be set when the first job's option of its group
    (``rerank=none``) lacks it but other options (``cross_encoder``) have it; else None."""
    group, _, rest = key.partition(".")
    have = [o for o in sorted(options) if _has(conf_dir, group, o, rest.split("."), set())]
    if not have:
        return None
    now = dict(o.split("=", 1) for o in first if "=" in o).get(group)
    which = f"{group}={now}" if now else f"{group}'s default option"
    owners = ", ".join(f"{group}={o}" for o in have)
    if group not in swept:
        choose = owners if len(have) == 1 else "one of those"
        return f"{key} is a setting of {owners}, which {which} does not have: choose {choose}"
    return (
        f"{key} is a setting of {owners}, which {which} does not have; a key on the "
        f"command line is set for every {group} option swept, so give it in a preset of "
        'your own instead (docs/configuration.md, "Presets of your own")'
    )


def check_command_line(config_name: str, prog: str) -> None:
    """:func:`check_overrides` on this process's command line, for a command's ``main``:
    a typo is ``PROG: error: ...`` on stderr and exit 2, before Hydra runs."""
    import sys

    from sweep.hydrakit.config import CONF_DIR

    try:
        check_overrides(str(CONF_DIR), config_name, sys.argv[1:])
    except UnknownKey as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        raise SystemExit(2) from None
