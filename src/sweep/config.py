"""Hydra/OmegaConf glue that must exist before any config is composed."""

from __future__ import annotations

from pathlib import Path

from omegaconf import OmegaConf

#: The source checkout's root: conf/ and corpora/ live there.
ROOT = Path(__file__).resolve().parents[2]
CONF_DIR = Path(__file__).resolve().parent / "conf"


def bundled_corpus(name: str) -> str:
    """Path of a corpus shipped in ``corpora/`` (``${bundled:kestrel}`` in configs)."""
    path = ROOT / "corpora" / name
    if not path.is_dir():
        raise ValueError(f"no bundled corpus {name!r} at {path}; set dataset.path=DIR")
    return str(path)


def register_resolvers() -> None:
    if not OmegaConf.has_resolver("bundled"):
        OmegaConf.register_new_resolver("bundled", bundled_corpus)
