"""``embed=auto``, the default: MiniLM for a corpus in English (or another language in Latin
letters), the multilingual model when most of the corpus is not in Latin letters.

``conf/embed/auto.yaml`` is MiniLM's node with ``choice: auto`` and, under ``other``,
the ``multilingual`` node; the choice is made from the dataset's language mix
(``sweep.pipeline.languages.choose_embedder``), the same in every job of a sweep, and the
job runs the chosen node as if it had been named: its row's ``embed`` and ``embed.model``
are the model that ran, and ``embed.choice`` says that ``auto`` picked it.

A model named on the command line (``embed.model=...``) is a choice already: auto keeps it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from omegaconf import DictConfig, OmegaConf

from sweep.embedding.models import BUNDLED_ALIASES
from sweep.pipeline.languages import CorpusLanguages, choose_embedder

__all__ = ["AUTO", "EmbedResolution", "is_auto", "resolve_embed"]

log = logging.getLogger("sweep")

#: ``embed.choice`` of the ``auto`` node.
AUTO = "auto"
#: The config group options auto chooses between (conf/embed/<name>.yaml).
_ENGLISH, _OTHER = "minilm", "multilingual"


@dataclass(frozen=True)
class EmbedResolution:
    """What ``embed=auto`` made of a job's config."""

    #: The config group option that runs: ``minilm`` or ``multilingual``.
    name: str
    #: ``embed auto → multilingual: the corpus is 93% Japanese``.
    line: str


def is_auto(cfg: DictConfig) -> bool:
    """Whether the config's ``embed`` node is ``embed=auto``, not resolved yet."""
    node = cfg.get("embed")
    return node is not None and OmegaConf.is_dict(node) and node.get("choice") == AUTO


def resolve_embed(
    cfg: DictConfig, languages: CorpusLanguages
) -> tuple[DictConfig, EmbedResolution | None]:
    """The job's config with ``embed=auto`` resolved for a dataset of ``languages`` (a
    copy), and what was chosen; ``cfg`` itself and None when its ``embed`` node is not
    ``auto``."""
    if not is_auto(cfg):
        return cfg, None
    node = cfg.embed
    body = OmegaConf.to_container(node, resolve=True)
    body.pop("choice", None)
    other = body.pop("other", None)
    model = str(body.get("model") or "")
    if model not in BUNDLED_ALIASES:
        resolution = EmbedResolution(_ENGLISH, f"embed auto → {model}: embed.model names it")
        chosen = body
    else:
        pick = choose_embedder(languages.documents, english=_ENGLISH, other=_OTHER)
        if pick.node == "other" and other is None:
            # Its package or preset is not installed: MiniLM runs, and the warning before
            # the first job says what that means.
            resolution = EmbedResolution(
                _ENGLISH, f"{pick.line}, but conf/embed/{_OTHER}.yaml is missing: {_ENGLISH} runs"
            )
            chosen = body
        elif pick.node == "other":
            resolution, chosen = EmbedResolution(_OTHER, pick.line), other
        else:
            resolution, chosen = EmbedResolution(_ENGLISH, pick.line), body
    out = cfg.copy()
    OmegaConf.set_struct(out, False)
    out.embed = OmegaConf.create(chosen)
    return out, resolution
