"""A chunker that mishandles Ctrl-C at one size, as some libraries do.

``chunk._target_=mishandling.build_mishandling_chunker +chunk.at=24 +chunk.how=mangle
+chunk.ready=FILE``: building the chunker for size 24 touches ``FILE`` and waits for a
Ctrl-C; ``mangle`` turns it into an ``AttributeError`` (as a library whose state the
interrupt left half changed does), ``swallow`` goes on as if nothing happened (as Python
does with a Ctrl-C that lands in a finalizer). Every other size is sweep's own chunker.
Tests put this folder on ``PYTHONPATH``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from sweep.chunking import build_chunker


def build_mishandling_chunker(*, at: int, how: str, ready: str, size: int, **options: Any) -> Any:
    chunker = build_chunker(size=size, **options)
    if size != at:
        return chunker
    Path(ready).touch()
    try:
        time.sleep(120)
    except KeyboardInterrupt:
        if how == "mangle":
            raise AttributeError(
                "'NoneType' object has no attribute '_invalidate_flags_cache'"
            ) from None
    return chunker
