"""A setting's Hydra config, to rerun it: sweep's own config with the job's group choices
and its resolved values on top.

Its values are the job's, literally: a string that looks like an interpolation
(``${oc.env:KEY}``, which the user escaped) is written escaped, so the rerun reads the same
string and resolves nothing. Its comment lines show data (the folder, the output path, the
setting's label) with line breaks and control characters escaped, so each stays one
comment line.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any, Mapping, Sequence

from omegaconf.errors import OmegaConfBaseException

from sweep.core.configfiles import config_yaml
from sweep.core.messages import visible
from sweep.exporting.selection import ExportError

__all__ = ["hydra_yaml"]

_GROUPS = ("dataset", "chunk", "embed", "index", "retrieve", "rerank", "eval")
#: where a job runs and what it shows, not what it measures
_LEFT_OUT = ("runtime", "hydra", "experiment")


def hydra_yaml(config: Mapping[str, Any], choices: Mapping[str, str], out: Path,
               header: Sequence[str], deleted: Sequence[str] = ()) -> str:
    """The YAML text; ``out`` is where it will be written (the rerun command names it);
    ``header`` the lines of its opening comment. ``deleted`` are the job's ``~key``
    overrides: a config file cannot delete a key its defaults bring, so the rerun command
    does."""
    defaults: list[Any] = ["config"]
    defaults += [{f"override {g}": choices[g]} for g in _GROUPS if choices.get(g)]
    defaults.append("_self_")
    body = {"defaults": defaults}
    body.update({k: v for k, v in config.items() if k not in _LEFT_OUT})
    command = " ".join(["python -m sweep --config-dir", shlex.quote(str(out.parent.resolve())),
                        "--config-name", shlex.quote(out.stem),
                        *(shlex.quote(d) for d in deleted)])
    lines = [f"# {visible(line)}" for line in [*header, f"Rerun it: {command}"]]
    try:
        text = config_yaml(body)
    except OmegaConfBaseException as e:  # a key no config can have (null, say)
        raise ExportError(f"the job's config cannot be written as a Hydra config: "
                          f"{type(e).__name__}: {e}") from None
    except RecursionError:
        raise ExportError("the job's config is nested too deeply to be written as a Hydra "
                          "config") from None
    return "\n".join(lines) + "\n" + text
