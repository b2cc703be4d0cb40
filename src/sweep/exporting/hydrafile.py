"""A setting's Hydra config, to rerun it: sweep's own config with the job's group choices
and its resolved values on top."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any, Mapping, Sequence

from omegaconf import OmegaConf

__all__ = ["hydra_yaml"]

_GROUPS = ("dataset", "chunk", "embed", "index", "retrieve", "rerank", "eval")
#: where a job runs and what it shows, not what it measures
_LEFT_OUT = ("runtime", "hydra", "experiment")


def hydra_yaml(config: Mapping[str, Any], choices: Mapping[str, str], out: Path,
               header: str, deleted: Sequence[str] = ()) -> str:
    """The YAML text; ``out`` is where it will be written (the rerun command names it).
    ``deleted`` are the job's ``~key`` overrides: a config file cannot delete a key its
    defaults bring, so the rerun command does."""
    defaults: list[Any] = ["config"]
    defaults += [{f"override {g}": choices[g]} for g in _GROUPS if choices.get(g)]
    defaults.append("_self_")
    body = {"defaults": defaults}
    body.update({k: v for k, v in config.items() if k not in _LEFT_OUT})
    command = " ".join(["python -m sweep --config-dir", shlex.quote(str(out.parent.resolve())),
                        "--config-name", shlex.quote(out.stem),
                        *(shlex.quote(d) for d in deleted)])
    lines = [f"# {line}" for line in header.splitlines()]
    lines.append(f"# Rerun it: {command}")
    return "\n".join(lines) + "\n" + OmegaConf.to_yaml(OmegaConf.create(body))
