"""Errors of the LLM client: one line each, and never a secret.

Whatever the server sends back is masked before it is shortened, so a cut
can never leave part of a key behind.
"""

from __future__ import annotations

import re
from typing import Iterable

__all__ = ["MASK", "LLMConfigError", "LLMError", "clean", "clip", "mask", "one_line"]

MASK = "***"
#: Keys this long are masked wherever they occur. Shorter ones are often
#: placeholders for local servers (``x``, ``1``, ``ollama``), which also occur
#: inside ordinary words: those are masked where they stand alone, not inside
#: a longer word, so "next" stays "next" with the key ``x``.
_MASK_EVERYWHERE_FROM = 8
_WORD_CHAR = "A-Za-z0-9"


class LLMError(RuntimeError):
    """A problem that stops the run (unreachable endpoint, rejected key, unknown model).

    ``str()`` is one line. Any secret passed in ``secrets`` is masked, because
    servers echo keys back in their error bodies.
    """

    def __init__(self, message: str, *, secrets: Iterable[str | None] = ()) -> None:
        super().__init__(clean(message, secrets))


class LLMConfigError(ValueError):
    """A bad ``llm.*`` setting; ``str()`` names the key and the problem on one line."""


def mask(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every non-empty secret replaced by :data:`MASK`."""
    # Longest first: a password that is part of the key must not split the key's mask.
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        if len(secret) >= _MASK_EVERYWHERE_FROM:
            text = text.replace(secret, MASK)
        else:
            alone = rf"(?<![{_WORD_CHAR}]){re.escape(secret)}(?![{_WORD_CHAR}])"
            text = re.sub(alone, MASK, text)
    return text


def clip(text: str, limit: int) -> str:
    """At most ``limit`` characters, an ellipsis marking a cut."""
    return text if len(text) <= limit else text[:max(limit - 1, 0)].rstrip() + "…"


def clean(text: str, secrets: Iterable[str | None], limit: int | None = None) -> str:
    """One line, secrets masked, then (only then) cut to ``limit`` characters."""
    secrets = tuple(secrets)
    # Masked before and after joining lines: a key with a space in it matches either way.
    text = mask(one_line(mask(str(text), secrets)), secrets)
    return text if limit is None else clip(text, limit)


def one_line(text: str) -> str:
    return " ".join(str(text).split())
