"""What tells one sweep setting from another: the config keys that become a row's first columns.

One table (:data:`SETTINGS`) names every key a row records and the column label
it gets; a setting that varies in a sweep but is not in the table still gets a
column, labelled by its key. :data:`MOVED_KEYS` maps the config keys that moved to their
new place: a row keeps the old key (results.csv and saved rows stay as they were),
and a saved config of the old layout is read in the new one (:func:`upgrade_config`).
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sweep.core.tokenization import DEFAULT_TOKENIZER

__all__ = [
    "MOVED_KEYS",
    "SETTINGS",
    "Setting",
    "format_value",
    "job_settings",
    "label",
    "setting_label",
    "upgrade_config",
    "varied_settings",
]


@dataclass(frozen=True)
class Setting:
    """A config key (``chunk.size``) or a config group whose choice is the setting (``index``)."""

    key: str
    label: str
    group: bool = False


SETTINGS: tuple[Setting, ...] = (
    Setting("chunk.strategy", "strategy"),
    Setting("chunk.size", "size"),
    Setting("chunk.unit", "unit"),
    Setting("chunk.overlap", "overlap"),
    Setting("chunk.prefix", "prefix"),
    Setting("chunk.tokenizer", "tokenizer"),
    Setting("chunk.context", "context"),
    Setting("embed", "embedder", group=True),
    Setting("embed.model", "model"),
    Setting("embed.backend", "backend"),
    Setting("embed.late", "late"),
    Setting("index", "index", group=True),
    Setting("retrieve", "retriever", group=True),
    Setting("retrieve.parent", "parent"),
    Setting("retrieve.parent_size", "parent size"),
    Setting("rerank", "reranker", group=True),
    Setting("dataset", "dataset", group=True),
    Setting("dataset.reader.pdf", "pdf reader"),
    Setting("dataset.reader.html", "html reader"),
    Setting("dataset.reader.docx", "docx reader"),
)
_BY_KEY = {s.key: s for s in SETTINGS}
#: Config keys that moved, old -> new. The old key stays the row's key and results.csv's
#: column (a column derived from a config key keeps its name); the command line's old key
#: is told the new one (sweep.hydrakit.overrides); a saved config is read in the new layout.
#: Contextual headers and parent retrieval left the chunk and retrieve nodes for nodes of
#: their own (the arguments of ContextSpec and ParentSpec).
MOVED_KEYS: dict[str, str] = {
    "chunk.context": "context.mode",
    "chunk.context_prompt": "context.prompt",
    "chunk.context_max_tokens": "context.max_tokens",
    "chunk.context_confirm": "context.confirm",
    "chunk.context_confirm_above": "context.confirm_above",
    "retrieve.parent": "parent.mode",
    "retrieve.parent_size": "parent.size",
}
_ROW_KEY = {new: old for old, new in MOVED_KEYS.items()}
#: rerank=none's target, whose node held cross_encoder's keys, unused, before it had none.
_NO_RERANKER = "sweep.retrieval.rerank.no_reranker"
#: Override keys that change where or how loudly a job runs, not what it measures.
_NOT_SETTINGS = ("hydra.", "runtime.", "name", "experiment")
#: Always columns, even when they do not vary: the size x overlap grid people read.
_ALWAYS = ("chunk.size", "chunk.overlap")
#: Keys a framework preset shows as ``chunk.size`` / ``chunk.overlap`` (its splitter's own):
#: swept, they would repeat those columns.
_SHOWN_AS = {
    "chunk.splitter.chunk_size": "chunk.size",
    "chunk.splitter.chunk_overlap": "chunk.overlap",
    "chunk.call.overlap": "chunk.overlap",
}


def label(key: str) -> str:
    """Column label of a setting key (the key itself for keys outside the table)."""
    s = _BY_KEY.get(key)
    return s.label if s else key


def job_settings(cfg: Any, overrides: Iterable[str], choices: Mapping[str, Any]) -> dict[str, Any]:
    """A job's settings: every key of the table, then any other key its overrides set.

    ``cfg`` is the job's config, ``choices`` Hydra's group choices
    (``hydra.runtime.choices``): a group's setting is the option chosen
    (``index=hnsw``), not the class it builds.
    """
    from omegaconf import OmegaConf

    settings: dict[str, Any] = {}
    for s in SETTINGS:
        settings[s.key] = (
            choices.get(s.key)
            if s.group
            else OmegaConf.select(cfg, MOVED_KEYS.get(s.key, s.key), default=None)
        )
    for override in overrides:
        where = override.split("=", 1)[0].lstrip("+~")
        key = _ROW_KEY.get(where, where)
        if key in settings or key.startswith(_NOT_SETTINGS):
            continue
        shown = _SHOWN_AS.get(key)
        if shown is not None and settings.get(shown) == OmegaConf.select(cfg, key, default=None):
            continue
        if "." not in key:  # another group choice, e.g. rerank=cross_encoder
            settings[key] = choices.get(key, override.split("=", 1)[1] if "=" in override else None)
            continue
        value = OmegaConf.select(cfg, where, default=None)
        if OmegaConf.is_config(value):
            value = OmegaConf.to_container(value, resolve=True)
        settings[key] = value
    return settings


#: Settings a row names by what ran, whose value stays the request where nothing of it ran:
#: ``embed.backend`` stays ``auto`` in a BM25 row (no model embedded anything). Such a row
#: says nothing against the others' value, so it never makes the setting a column.
_UNRESOLVED = {"embed.backend": "auto"}


def varied_settings(settings: Sequence[Mapping[str, Any]]) -> list[str]:
    """Keys whose value differs between rows, in table order, always with size and overlap."""
    keys = list(_ALWAYS)
    known = [s.key for s in SETTINGS]
    extra = sorted({k for s in settings for k in s} - set(known))
    for key in [*known, *extra]:
        values = {json.dumps(s.get(key), sort_keys=True, default=str) for s in settings}
        if key in _UNRESOLVED and len(values) > 1:
            values.discard(json.dumps(_UNRESOLVED[key]))
        if len(values) > 1 and key not in keys:
            keys.insert(0 if key == "chunk.strategy" else len(keys), key)
    # The unit stands next to the size, and a size in characters is never read as tokens:
    # it is shown even when every row shares it (tokens of the default tokenizer go
    # without saying; a model's own tokens do not).
    units = {s.get("chunk.unit") for s in settings}
    if "chunk.unit" in keys:
        keys.remove("chunk.unit")
    if len(units) > 1 or units - {None, "tokens", f"tokens ({DEFAULT_TOKENIZER})"}:
        keys.insert(keys.index("chunk.size") + 1, "chunk.unit")
    return keys


def format_value(value: Any) -> str:
    """A setting as a table cell: a model path by its last folder, a class by its name."""
    if isinstance(value, str):
        if "/" in value:
            return value.rstrip("/").rsplit("/", 1)[-1]
        return value.rsplit(".", 1)[-1] if value.count(".") and " " not in value else value
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return str(value)


def setting_label(settings: Mapping[str, Any], keys: Sequence[str], sep: str = " ") -> str:
    """``size=256 overlap=64`` (plus any other setting that varies in the sweep)."""
    return sep.join(f"{label(k)}={format_value(settings.get(k))}" for k in keys)


def upgrade_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """A job's saved config (``resolved_config.yaml``) in the current layout: each key of
    :data:`MOVED_KEYS` taken from its old node to its new one, and the unused keys rerank=none
    used to carry dropped. A config of the current layout comes back as it was (a copy)."""
    out = copy.deepcopy(dict(config))
    for old, new in MOVED_KEYS.items():
        node, key = old.split(".", 1)
        source = out.get(node)
        if not isinstance(source, dict) or key not in source:
            continue
        value = source.pop(key)
        node, key = new.split(".", 1)
        target = out.setdefault(node, {})
        if isinstance(target, dict):
            target.setdefault(key, value)
    rerank = out.get("rerank")
    if isinstance(rerank, dict) and rerank.get("_target_") == _NO_RERANKER:
        out["rerank"] = {"_target_": _NO_RERANKER}
    return out
