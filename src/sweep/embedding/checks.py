"""The ``embed.*`` settings checked before anything loads: the first unusable one is
named in a one-line :class:`~sweep.embedding.errors.EmbedderError`. :func:`embed_problem`
is what a sweep checks of its ``embed`` nodes before its first job."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sweep.core.checks import is_int, positive_int
from sweep.embedding.errors import EmbedderError
from sweep.embedding.models import DEVICE_PATTERN

__all__ = ["check_settings", "embed_problem"]

#: The ``_target_`` of ``embed=multilingual``.
_USE_TARGET = "sweep.embedding.multilingual.UseEmbedder"


def check_settings(
    backend: str,
    device: Any,
    batch_size: Any,
    normalize: Any,
    max_seq_length: Any,
    query_prefix: Any,
    document_prefix: Any,
    threads: Any,
    onnx_dir: Any,
    late: Any,
    late_overlap: Any,
) -> None:
    """A one-line EmbedderError naming the first ``embed.*`` setting that is unusable."""
    positive_int("embed.threads", threads, error=EmbedderError, allow_null=True)
    positive_int("embed.batch_size", batch_size, error=EmbedderError)
    positive_int("embed.max_seq_length", max_seq_length, error=EmbedderError, allow_null=True)
    if not isinstance(device, str) or not DEVICE_PATTERN.fullmatch(device):
        raise EmbedderError(
            f"embed.device must be a torch device name like cpu, cuda, "
            f"cuda:1 or mps, got {device!r}"
        )
    if backend != "torch" and device != "cpu":
        raise EmbedderError(
            f"embed.backend={backend} runs on the CPU only; set embed.device=cpu (got {device!r})"
        )
    if not isinstance(normalize, bool):
        raise EmbedderError(f"embed.normalize must be true or false, got {normalize!r}")
    if not isinstance(late, bool):
        raise EmbedderError(f"embed.late must be true or false, got {late!r}")
    if not is_int(late_overlap) or late_overlap < 0:
        raise EmbedderError(f"embed.late_overlap must be an integer >= 0, got {late_overlap!r}")
    if late and backend != "torch":
        raise EmbedderError(
            f"embed.late=true needs embed.backend=torch (got {backend}): "
            "late chunking reads the model's token embeddings"
        )
    if onnx_dir is not None and (not isinstance(onnx_dir, str) or not onnx_dir.strip()):
        raise EmbedderError(f"embed.onnx_dir must be a folder path or null, got {onnx_dir!r}")
    for label, prefix in (("query_prefix", query_prefix), ("document_prefix", document_prefix)):
        if not isinstance(prefix, str):
            raise EmbedderError(f"embed.{label} must be a string, got {prefix!r}")


def embed_problem(node: Mapping[str, Any]) -> EmbedderError | None:
    """What stops an ``embed`` node (plain containers) before anything loads: a preset
    whose model is not on this machine (``sweep.embedding.presets``), or a setting
    ``embed=multilingual`` cannot take (another backend, a GPU, late chunking); None for
    a sound node or one only its job can try (another embedder's model loads there)."""
    from sweep.embedding.multilingual import UseEmbedder
    from sweep.embedding.presets import preset_source

    try:
        if node.get("preset"):
            preset_source(str(node["preset"]), str(node.get("model") or ""))
        elif node.get("_target_") == _USE_TARGET:
            settings = {k: v for k, v in node.items() if k not in ("_target_", "cache_dir")}
            UseEmbedder(**settings, cache_dir="off")
    except EmbedderError as e:
        return e
    except TypeError:  # a key it does not take: its job says so
        return None
    return None
