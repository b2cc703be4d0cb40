"""Where sweep keeps its caches: ``$XDG_CACHE_HOME/sweep/<kind>``, or a folder the user names.

One rule for every cache (embeddings, ONNX exports, LLM replies), so ``off`` means
the same thing in ``runtime.cache_dir`` and ``llm.cache_dir``.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["DISABLED_VALUES", "default_cache_dir", "resolve_cache_dir"]

#: Values of a ``cache_dir`` setting that turn the cache off.
DISABLED_VALUES = ("", "none", "off", "false", "no", "0")


def default_cache_dir(kind: str) -> Path:
    """``$XDG_CACHE_HOME/sweep/<kind>`` (an absolute XDG path only), else ``~/.cache/sweep/<kind>``."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "sweep" / kind


def resolve_cache_dir(cache_dir: str | os.PathLike | None, kind: str) -> Path | None:
    """The folder a configured ``cache_dir`` names; None when it turns the cache off.

    ``None`` is :func:`default_cache_dir` of ``kind``; ``~`` is expanded.
    """
    if cache_dir is None:
        return default_cache_dir(kind)
    text = os.fspath(cache_dir)
    if text.strip().lower() in DISABLED_VALUES:
        return None
    return Path(os.path.expanduser(text))
