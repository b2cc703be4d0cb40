"""Which runtime computes the vectors: one backend per file, picked here by name.

- ``torch``: sentence-transformers runs the model (``sweep.embedding.torch_backend``).
- ``onnx``, ``onnx-int8``: the model exported to ONNX, run by ONNX Runtime
  (``sweep.embedding.onnx_backend``).
- ``openvino``: the export run by OpenVINO (``sweep.embedding.openvino_backend``).
- ``auto``: one of these, chosen per model and CPU by measuring them
  (``sweep.embedding.autobackend``).

A backend offers ``name``, ``precision``, ``load``, ``namespace`` and ``identity`` (what
it adds to the cache namespace and the embedder's identity), ``default_max_seq_length``,
``dim`` and ``encode``; the embedder asks it and never tests the backend's name.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from sweep.embedding.autobackend import AUTO
from sweep.embedding.encoders import (
    MANIFEST_FILE,
    MODEL_FILE,
    OPENVINO_FILE,
    TOKENIZER_FILE,
    export_kind,
)
from sweep.embedding.onnx_backend import ExportedBackend, OnnxBackend
from sweep.embedding.openvino_backend import OpenVinoBackend

__all__ = [
    "BACKENDS",
    "MANIFEST_FILE",
    "MODEL_FILE",
    "OPENVINO_FILE",
    "TOKENIZER_FILE",
    "check_backend",
    "export_kind",
    "exported_backend",
]

#: The backends that compute vectors; ``embed.backend`` also takes ``auto``.
BACKENDS = ("torch", "onnx", "onnx-int8", "openvino")
#: Modules each backend needs besides torch, and the package each comes in. All are in the
#: core install; an environment that removed one (or a platform without its wheel) is told
#: which.
_NEEDS = {
    "onnx": ("onnxruntime", "onnx"),
    "onnx-int8": ("onnxruntime", "onnx", "onnx_ir"),
    "openvino": ("openvino", "onnx"),
}
_PACKAGE = {"onnx_ir": "onnx-ir"}
#: The class of each exported backend (torch is the model itself, always at hand).
_EXPORTED: dict[str, type[ExportedBackend]] = {
    "onnx": OnnxBackend,
    "onnx-int8": OnnxBackend,
    "openvino": OpenVinoBackend,
}


def check_backend(backend: Any) -> str:
    """The backend name if it is known and its packages are importable; else a one-line
    ``ValueError`` naming the config key or the extra to install."""
    if backend == AUTO:
        return backend
    if not isinstance(backend, str) or backend not in BACKENDS:
        raise ValueError(
            f"embed.backend must be one of {AUTO}, {', '.join(BACKENDS)}, got {backend!r}"
        )
    for module in _NEEDS.get(backend, ()):
        if not _importable(module):
            package = _PACKAGE.get(module, module)
            raise ValueError(
                f"embed.backend={backend} needs the '{package}' package, which is not "
                f"installed: pip install {package}"
            )
    return backend


def exported_backend(
    name: str, model_name: str, label: str, threads: int | None, root: Path
) -> ExportedBackend:
    """The exported backend ``name`` (checked by :func:`check_backend`, not ``torch``)."""
    return _EXPORTED[name](name, model_name, label, threads, root)


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # ValueError: sys.modules[module] is None
        return False
