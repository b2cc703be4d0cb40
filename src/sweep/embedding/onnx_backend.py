"""The ``onnx`` and ``onnx-int8`` backends: the model exported once to ONNX (int8 weights
for ``onnx-int8``, see ``sweep.embedding.onnx_export``) and run by ONNX Runtime on the CPU,
with the model's own ``tokenizers`` tokenizer: once the export exists, embedding imports
neither torch nor sentence-transformers.

:class:`ExportedBackend` is what every exported backend shares (the export found or made,
its runtime loaded once per process); ``sweep.embedding.openvino_backend`` derives from it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sweep.core.messages import first_line
from sweep.embedding import onnx_export
from sweep.embedding.encoders import MANIFEST_FILE, ExportEncoder, encoder_for, export_kind
from sweep.embedding.errors import EmbedderError
from sweep.embedding.models import MEMO_LOCK, ModelFiles
from sweep.embedding.torch_backend import quiet_transformers

__all__ = ["ExportedBackend", "OnnxBackend"]

log = logging.getLogger(__name__)

#: Loaded exports (ONNX Runtime sessions, compiled OpenVINO models) per (folder, threads).
_EXPORT_MEMO: dict[tuple[str, int | None], ExportEncoder] = {}


class ExportedBackend:
    """A backend that runs an export of the model kept under ``root``, on the CPU."""

    def __init__(
        self, name: str, model_name: str, label: str, threads: int | None, root: Path
    ) -> None:
        self.name = name
        self.model_name = model_name
        self.label = label
        self.threads = threads
        self.root = root
        self.encoder: Any = None  # an ExportEncoder once loaded

    @property
    def precision(self) -> str:
        """What the export computes in (``fp32``, ``int8``)."""
        return export_kind(self.name)

    def _export_precision(self) -> str | None:
        """The precision that names the export's folder (OpenVINO's only)."""
        return None

    def namespace(self) -> dict[str, Any]:
        """What this backend adds to the cache namespace: its name, the precision it
        computes in and its export recipe's revision. Vectors of different backends are
        cached apart, and so are a changed recipe's (``onnx-int8`` went from dynamic to
        block-wise int8 weights) and a precision another machine sharing the folder
        computes in."""
        kind = export_kind(self.name)
        return {
            "backend": self.name,
            "precision": self.precision,
            "recipe": onnx_export.RECIPES[kind],
        }

    def identity(self) -> dict[str, Any]:
        """What this backend adds to the embedder's identity beyond its name."""
        return {}

    def folder(self, files: ModelFiles) -> Path:
        """Where this backend's export of the model is (or will be) kept."""
        return self.root / onnx_export.export_dirname(
            files.fingerprint, self.name, self._export_precision()
        )

    def load(self, files: ModelFiles) -> float | None:
        """Find or make the export and load its runtime (once per process); the seconds it
        took when this call loaded it, None when it was loaded already."""
        if self.encoder is not None:
            return None
        start = time.perf_counter()
        seconds = None
        with MEMO_LOCK:
            precision = self._export_precision()
            folder = self.folder(files)
            key = (str(folder), self.threads)
            encoder = _EXPORT_MEMO.get(key)
            if encoder is None:
                if not (folder / MANIFEST_FILE).is_file():
                    log.info(
                        "exporting %s for embed.backend=%s in %s; done once per model",
                        self.label,
                        self.name,
                        folder.parent,
                    )
                else:
                    log.info("loading embedding model %s (embed.backend=%s)", self.label, self.name)
                try:
                    with quiet_transformers():
                        folder = onnx_export.ensure_export(
                            files.path, files.fingerprint, self.name, self.root, precision
                        )
                    encoder = encoder_for(self.name, folder, threads=self.threads)
                except Exception as exc:
                    raise EmbedderError(
                        f"cannot run '{self.model_name}' with "
                        f"embed.backend={self.name}: {first_line(exc)}"
                    ) from None
                _EXPORT_MEMO[key] = encoder
                seconds = time.perf_counter() - start
        self.encoder = encoder
        return seconds

    def default_max_seq_length(self) -> int:
        return self.encoder.manifest.max_seq_length or 512

    def dim(self) -> int:
        return int(self.encoder.dim)

    def encode(
        self, texts: Sequence[str], batch_size: int, max_seq_length: int, normalize: bool
    ) -> np.ndarray:
        """float32 (len(texts), dim), the export loaded."""
        return self.encoder.encode(texts, batch_size, max_seq_length, normalize)


class OnnxBackend(ExportedBackend):
    """``onnx`` (the graph with ONNX Runtime's exact fusions) or ``onnx-int8`` (its weight
    matrices as int8 in blocks of 32 rows, each with its own scale)."""
