"""Every exception the embedding stage raises, in one place.

- :class:`EmbedderError`: a model cannot be loaded or an input or setting is unusable
  (``sweep.embedding`` exits 2 on it; a sweep's job fails with its one line).
- :class:`LateChunkingUnsupported`: ``embed.late=true`` with a model late chunking cannot
  be done with, an invalid setting rather than a crash.
- :class:`BackendExportError`: the model could not be exported for an ONNX or OpenVINO
  backend, or the export does not compute the model's own vectors.
- :class:`CacheError`: a cache directory or a ``sweep.cache`` command is unusable.
"""

from __future__ import annotations

from sweep.core.errors import BadInput, InvalidSetting

__all__ = ["BackendExportError", "CacheError", "EmbedderError", "LateChunkingUnsupported"]


class EmbedderError(ValueError, BadInput):
    """A one-line message: the model cannot be loaded or an input is unusable."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(str(message).split()))


class LateChunkingUnsupported(EmbedderError, InvalidSetting):
    """``embed.late=true`` with a model it cannot be done with: a bad setting, not a crash."""


# Bad input, not an invalid setting: an export that fails while the model runs keeps the
# row `failed`, as before.
class BackendExportError(RuntimeError, BadInput):
    """The model could not be exported or the export does not match the model."""


class CacheError(ValueError, BadInput):
    """A one-line message about a cache directory or a cache command."""
