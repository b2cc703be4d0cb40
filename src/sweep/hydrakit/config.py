"""Hydra/OmegaConf glue that must exist before any config is composed."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from sweep.datasets.bundled import bundled_corpus

#: The package's own folder: conf/ and corpora/ are shipped in it (the checkout's top-level
#: conf/ and corpora/ are links to them).
PACKAGE_DIR = Path(__file__).resolve().parent.parent
CONF_DIR = PACKAGE_DIR / "conf"


def fresh_dir(path: str) -> str:
    """``path``, or ``path-2``, ``path-3``... : the first that did not exist, created now.

    The default sweep folder is a timestamp to the second; two sweeps started in
    the same second would otherwise share it and mix their rows. ``mkdir`` is
    atomic, so of two processes racing for one name exactly one gets it.
    (Registered with ``use_cache``: every resolution in a sweep, and every job
    config Hydra derives from it, gets the same answer.)
    """
    base = Path(path)
    base.parent.mkdir(parents=True, exist_ok=True)
    for n in range(1, 10_000):
        candidate = base if n == 1 else base.with_name(f"{base.name}-{n}")
        try:
            os.mkdir(candidate)
        except FileExistsError:
            continue
        _made.add(candidate.resolve())
        return str(candidate)
    raise RuntimeError(f"no free folder name next to {base}")


_made: set[Path] = set()


def made_here(path: str | os.PathLike) -> bool:
    """Whether :func:`fresh_dir` made ``path`` in this process (so it is the sweep's own)."""
    return Path(path).resolve() in _made


def _register_resolvers() -> None:
    if not OmegaConf.has_resolver("bundled"):
        OmegaConf.register_new_resolver("bundled", bundled_corpus)
    if not OmegaConf.has_resolver("sweep_help"):
        OmegaConf.register_new_resolver("sweep_help", _help)
    if not OmegaConf.has_resolver("fresh_dir"):
        OmegaConf.register_new_resolver("fresh_dir", fresh_dir, use_cache=True)


def _help(name: str) -> str:
    """``--help`` of a Hydra command; sweep's own also lists the chunk strategies and their
    options' defaults, as the strategies declare them (sweep.chunking.base.strategies)."""
    from sweep.cli.commands import hydra_help_template

    text = hydra_help_template(name)
    if name != "sweep":
        return text
    from sweep.chunking.factory import strategies_help

    # A string.Template: a literal $ is written $$.
    return text + "\n" + strategies_help().replace("$", "$$") + "\n"


def register() -> None:
    """What must exist before any sweep config is composed: the resolvers conf/ uses."""
    _register_resolvers()


def cause(e: BaseException) -> BaseException:
    """The user's error inside Hydra's InstantiationException wrapper."""
    from hydra.errors import InstantiationException

    while isinstance(e, InstantiationException) and e.__cause__ is not None:
        e = e.__cause__
    return e


def build_node(node: Any, **kwargs: Any) -> Any:
    """``instantiate(node)`` (containers converted to plain lists and dicts), raising the
    user's own error (a ``ValueError`` naming the key) instead of Hydra's wrapper."""
    from hydra.errors import InstantiationException
    from hydra.utils import instantiate

    try:
        return instantiate(node, _convert_="all", **kwargs)
    except InstantiationException as e:
        raise cause(e) from None


def embedder_node(cfg: DictConfig, device: str | None = None) -> dict[str, Any]:
    """What the embedder is built from: the ``embed`` node, the ``runtime`` keys it is
    handed (its cache folder, its progress bars) and ``device`` (an ``auto`` resolved by
    ``sweep.hydrakit.devices``) when given."""
    node = OmegaConf.to_container(cfg.embed, resolve=True)
    runtime = cfg.get("runtime") or {}
    node["cache_dir"] = runtime.get("cache_dir")
    node["show_progress"] = runtime.get("show_progress", True)
    if device is not None and "device" in node:
        node["device"] = device
    return node
