"""A chunker whose process dies at one size, as one killed for lack of memory does.

``chunk._target_=dying.build_dying_chunker +chunk.die_at=48``: building the
chunker for size 48 ends the process with ``os._exit`` (no exception, no
cleanup), every other size is sweep's own chunker. Tests put this folder on
``PYTHONPATH`` so that launcher workers can import it.
"""

from __future__ import annotations

import os
from typing import Any

from sweep.chunking import build_chunker


def build_dying_chunker(*, die_at: int, size: int, **options: Any) -> Any:
    if size == die_at:
        os._exit(137)
    return build_chunker(size=size, **options)
