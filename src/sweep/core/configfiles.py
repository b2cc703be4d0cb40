"""The config files of a sweep folder: written so that a literal stays literal, read back
as data and nothing more.

A job saves its resolved config (``<job>/resolved_config.yaml``), and ``sweep.export``
writes a setting's config for Hydra to rerun. A value the user escaped
(``\\${oc.env:OPENAI_API_KEY}``, a literal string) resolves to ``${oc.env:OPENAI_API_KEY}``:
written as it is, the next reader (OmegaConf, Hydra) would take it for an interpolation
and put the key in its place. So every ``${`` of a string is written escaped, and
OmegaConf, Hydra and :func:`read_yaml` all read back the string the job used.

A sweep folder is untrusted input: people commit one as a CI baseline, mail it, open it
from a pull request. So :func:`read_yaml` reads plain YAML values only (no tags, so no
object is built), never resolves an interpolation, refuses aliases (sweep writes none,
and a few lines of them expand to gigabytes: "billion laughs") and refuses a file larger
than any config sweep writes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from omegaconf import OmegaConf

from sweep.core.errors import BadInput
from sweep.core.files import NotRegularFile, not_utf8, read_regular_bytes, regular_file

__all__ = [
    "MAX_CONFIG_BYTES",
    "ConfigFileError",
    "config_yaml",
    "escape_interpolations",
    "read_yaml",
    "unescape_interpolations",
]

#: The largest config file read back: a job's resolved config and Hydra's record of it are
#: a few KB.
MAX_CONFIG_BYTES = 16 * 1024 * 1024

#: ``${`` and the backslashes before it (OmegaConf reads ``\${`` as a literal ``${`` and
#: ``\\`` before it as one backslash).
_OPENING = re.compile(r"(\\*)\$\{")


class ConfigFileError(ValueError, BadInput):
    """A config file that cannot be read as sweep writes it: one line naming the file."""


def escape_interpolations(value: Any) -> Any:
    """``value`` (plain lists, dicts, scalars) with every ``${`` of its strings escaped, so
    that OmegaConf and Hydra read each string back as written, never as an interpolation."""
    if isinstance(value, str):
        if "${" not in value:  # OmegaConf reads such a string as it is, backslashes too
            return value
        return _OPENING.sub(lambda m: m.group(1) * 2 + "\\${", value)
    if isinstance(value, Mapping):
        return {k: escape_interpolations(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [escape_interpolations(v) for v in value]
    return value


def unescape_interpolations(text: str) -> str:
    """The string OmegaConf reads from ``text`` written by :func:`escape_interpolations`. An
    unescaped ``${`` (an interpolation, to OmegaConf) is kept as written: never resolved."""
    if "${" not in text:
        return text

    def one(m: re.Match) -> str:
        backslashes = m.group(1)
        if len(backslashes) % 2 == 0:  # an interpolation: its text, not its value
            return m.group(0)
        return backslashes[: len(backslashes) // 2] + "${"

    return _OPENING.sub(one, text)


def config_yaml(config: Any) -> str:
    """The YAML text of ``config`` (an OmegaConf config, resolved here, or plain lists and
    dicts), each string escaped so that it reads back as the same string."""
    if OmegaConf.is_config(config):
        config = OmegaConf.to_container(config, resolve=True, enum_to_str=True)
    return OmegaConf.to_yaml(escape_interpolations(config))


class _Refused(yaml.MarkedYAMLError):
    """YAML that is valid, but not what sweep writes: refused unread."""


class _PlainLoader(yaml.SafeLoader):
    """YAML as OmegaConf reads it (its floats, no timestamps, no duplicate keys), with plain
    values only and no aliases."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise _Refused(
                None,
                None,
                f"a YAML alias (*{event.anchor}): sweep writes none, "
                "and aliases can expand a small file to gigabytes",
                event.start_mark,
            )
        return super().compose_node(parent, index)

    def construct_undefined(self, node: Any) -> Any:
        raise _Refused(
            None,
            None,
            f"a value tagged {node.tag}: sweep writes plain values only",
            node.start_mark,
        )

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        seen = set()
        for key_node, _ in node.value:
            if key_node.tag == yaml.resolver.BaseResolver.DEFAULT_SCALAR_TAG:
                if key_node.value in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"the key {key_node.value!r} twice", key_node.start_mark
                    )
                seen.add(key_node.value)
        return super().construct_mapping(node, deep=deep)


_PLAIN_TAGS = {
    f"tag:yaml.org,2002:{t}" for t in ("null", "bool", "int", "float", "str", "seq", "map")
}
# Any other tag (!!binary, !!set, !!timestamp, !!python/...) is refused: sweep writes none.
_PlainLoader.yaml_constructors = {
    tag: make for tag, make in yaml.SafeLoader.yaml_constructors.items() if tag in _PLAIN_TAGS
}
_PlainLoader.yaml_constructors[None] = _PlainLoader.construct_undefined
_PlainLoader.add_implicit_resolver(  # OmegaConf's: 1e3 is a float, as it reads it
    "tag:yaml.org,2002:float",
    re.compile(
        r"""^(?:[-+]?[0-9]+(?:_[0-9]+)*\.[0-9_]*(?:[eE][-+]?[0-9]+)?
                   |[-+]?[0-9]+(?:_[0-9]+)*(?:[eE][-+]?[0-9]+)
                   |\.[0-9]+(?:_[0-9]+)*(?:[eE][-+][0-9]+)?
                   |[-+]?[0-9]+(?:_[0-9]+)*(?::[0-5]?[0-9])+\.[0-9_]*
                   |[-+]?\.(?:inf|Inf|INF)
                   |\.(?:nan|NaN|NAN))$""",
        re.X,
    ),
    list("-+0123456789."),
)
_PlainLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in _PlainLoader.yaml_implicit_resolvers.items()
}


def _unescaped(value: Any) -> Any:
    if isinstance(value, str):
        return unescape_interpolations(value)
    if isinstance(value, dict):
        return {k: _unescaped(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unescaped(v) for v in value]
    return value


def read_yaml(path: Path, inside: Path | None = None) -> Any:
    """The plain data of a YAML config file sweep wrote (dicts, lists, strings, numbers,
    booleans, None), each string as the job used it; :class:`ConfigFileError` otherwise,
    naming the file and the line. Only a regular file is read (a FIFO is refused, never
    waited on); with ``inside`` (the sweep folder the file belongs to) only one in that
    folder, never a link's target outside it (:func:`~sweep.core.files.regular_file`)."""
    path = Path(path)
    try:
        if regular_file(path, inside=inside) is None:
            raise ConfigFileError(f"{path}: missing")
        data = read_regular_bytes(path, limit=MAX_CONFIG_BYTES + 1)
    except NotRegularFile as e:
        raise ConfigFileError(str(e)) from None
    except OSError as e:
        raise ConfigFileError(f"{path}: cannot be read ({e.strerror or e})") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigFileError(
            f"{path}: larger than {MAX_CONFIG_BYTES // 2**20} MB (the configs "
            "sweep writes are a few KB)"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigFileError(not_utf8(path, data)) from None
    try:
        return _unescaped(yaml.load(text, Loader=_PlainLoader))  # noqa: S506 - plain values only
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        problem = getattr(e, "problem", None) or type(e).__name__
        if isinstance(e, _Refused):
            raise ConfigFileError(f"{where}: {problem}") from None
        raise ConfigFileError(f"{where}: not valid YAML ({problem})") from None
    except RecursionError:
        raise ConfigFileError(f"{path}: nested too deeply to be a config") from None
