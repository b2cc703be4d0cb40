"""The ``torch`` backend: sentence-transformers runs the model itself, on any torch device.

Importing sentence-transformers costs ~10 s of CPU, more than a whole warm sweep, so
the model is loaded only when something must actually be embedded, and once per
process (keyed by folder and device): the jobs of a Hydra multirun share it. The
exported backends load it too, to export it once and to check the export.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from sweep.core.messages import first_line
from sweep.embedding.errors import EmbedderError
from sweep.embedding.models import MEMO_LOCK

__all__ = ["TorchBackend", "quiet_transformers"]

log = logging.getLogger(__name__)

_MODEL_MEMO: dict[tuple[str, str], Any] = {}


@contextmanager
def quiet_transformers() -> Iterator[None]:
    """Hide transformers' "Loading weights" bar: it says nothing the log line about the
    model does not, and in a log file it is a line of control characters."""
    from transformers.utils import logging as hf_logging

    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()


def _load_sentence_transformer(source: str, device: str, display: str) -> Any:
    """Load (once per process) a SentenceTransformer from a folder or Hub id."""
    key = (source, device)
    with MEMO_LOCK:
        model = _MODEL_MEMO.get(key)
        if model is not None:
            return model
        local = os.path.isdir(source)
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise EmbedderError(
                f"cannot load embedding model '{display}': sentence-transformers "
                f"is not installed ({exc}); pip install sentence-transformers"
            ) from None
        with quiet_transformers():
            try:
                model = SentenceTransformer(source, device=device, local_files_only=local)
            except Exception as exc:
                raise EmbedderError(
                    f"cannot load embedding model '{display}': {first_line(exc)}"
                ) from None
        model.eval()
        _MODEL_MEMO[key] = model
        return model


class TorchBackend:
    """The model in sentence-transformers on ``device``; ``threads`` caps torch's CPU threads
    (None: all cores)."""

    name = "torch"
    #: torch computes in float32 (what ``precision`` reports of this backend).
    precision = "fp32"

    def __init__(
        self, source: str, device: str, model_name: str, label: str, threads: int | None
    ) -> None:
        self.source = source
        self.device = device
        self.model_name = model_name
        self.label = label
        self.threads = threads
        self.model: Any = None

    def load(self) -> float | None:
        """Load the model (once per process); the seconds it took when this call loaded it,
        None when it was loaded already."""
        if self.model is not None:
            return None
        start = time.perf_counter()
        fresh = (self.source, self.device) not in _MODEL_MEMO
        if fresh:  # the first load takes a while (importing torch alone takes seconds)
            log.info("loading embedding model %s on %s", self.label, self.device)
        self.model = _load_sentence_transformer(self.source, self.device, self.model_name)
        return time.perf_counter() - start if fresh else None

    def namespace(self) -> dict[str, Any]:
        """What this backend adds to the cache namespace: nothing, so torch's namespace stays
        as it was before backends existed and vectors cached then are still found."""
        return {}

    def identity(self) -> dict[str, Any]:
        """What this backend adds to the embedder's identity beyond its name: nothing."""
        return {}

    def default_max_seq_length(self) -> int:
        return int(self.model.max_seq_length)

    def dim(self) -> int:
        return int(self.model.get_embedding_dimension())

    def encode(
        self, texts: Sequence[str], batch_size: int, max_seq_length: int, normalize: bool
    ) -> np.ndarray:
        """float32 (len(texts), dim), the model loaded."""
        self.load()
        with MEMO_LOCK:
            # The memoized model is shared by embedders that may want
            # another max_seq_length or thread count.
            self.model.max_seq_length = max_seq_length
            if self.threads is not None:
                import torch

                torch.set_num_threads(self.threads)
            return self.model.encode(
                list(texts),
                batch_size=batch_size,
                show_progress_bar=False,
                convert_to_numpy=True,
                normalize_embeddings=normalize,
            )
