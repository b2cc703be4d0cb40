"""The ``openvino`` backend: the plain ONNX export converted to OpenVINO's format and run
by OpenVINO on the CPU at its default inference precision: bfloat16 where the CPU
computes it natively (AVX-512 BF16, AMX), float32 on other x86 CPUs. The precision is
part of the cache namespace, the identity and the export's folder name, since a cache
folder may be shared by machines that differ in it.
"""

from __future__ import annotations

import functools
from typing import Any

from sweep.core.messages import first_line
from sweep.embedding import encoders
from sweep.embedding.errors import EmbedderError
from sweep.embedding.onnx_backend import ExportedBackend

__all__ = ["OpenVinoBackend", "cpu_precision"]


@functools.lru_cache(maxsize=1)
def cpu_precision() -> str:
    """OpenVINO's default precision on this CPU (``bf16`` or ``f32``), asked once."""
    return encoders.openvino_precision()


class OpenVinoBackend(ExportedBackend):
    """The export run by OpenVINO at the CPU's default precision."""

    @property
    def precision(self) -> str:
        """OpenVINO's choice for this CPU (``bf16`` or ``f32``)."""
        if self.encoder is not None:
            return self.encoder.precision
        try:
            return cpu_precision()
        except Exception as exc:
            raise EmbedderError(
                f"embed.backend=openvino: cannot query OpenVINO's CPU device: {first_line(exc)}"
            ) from None

    def _export_precision(self) -> str | None:
        return self.precision

    def identity(self) -> dict[str, Any]:
        return {"precision": self.precision}
