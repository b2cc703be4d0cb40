"""The presets of sentence-transformers models people have by name or folder
(``conf/embed/multilingual-e5-small.yaml``, ``bge-m3.yaml``, ...): a preset's model loads
from a local folder or the local Hugging Face cache only, never from the network, and
when it is not on this machine one line says which preset, which model and how to get it.
"""

from __future__ import annotations

from sweep.embedding.errors import EmbedderError
from sweep.embedding.models import local_model

__all__ = ["preset_source"]


def preset_source(preset: str, model: str) -> str:
    """Where preset ``preset``'s ``model`` loads from on this machine (a folder, or its
    snapshot in the Hugging Face cache); a one-line EmbedderError when it is not here."""
    found = local_model(model)
    if found is None:
        raise EmbedderError(
            f"embed={preset}: its model {model} is not on this machine (no such folder, not "
            "in the Hugging Face cache) and a preset never downloads; get it with "
            f"`huggingface-cli download {model}` on a machine with internet and copy the "
            "Hugging Face cache (~/.cache/huggingface) here, or set embed.model=/path/to/it"
        )
    return found
