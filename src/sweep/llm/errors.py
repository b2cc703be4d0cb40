"""Errors of the LLM client: one line each, and never a secret.

Whatever the server sends back is masked before it is shortened, so a cut
can never leave part of a key behind.
"""

from __future__ import annotations

import re
from typing import Iterable

from sweep.core.messages import one_line

__all__ = ["MASK", "LLMConfigError", "LLMError", "clean", "clip", "mask"]

MASK = "***"
#: Keys this long are masked wherever they occur. Shorter ones are often
#: placeholders for local servers (``x``, ``1``, ``ollama``), which also occur
#: inside ordinary words: those are masked where they stand alone, not inside
#: a longer word, so "next" stays "next" with the key ``x``.
_MASK_EVERYWHERE_FROM = 8
_WORD_CHAR = "A-Za-z0-9"
#: What precedes a credential a server quotes back: "Bearer k1", "Authorization: k1",
#: '"api_key": "k1"', "password=k1" (the names in any letter case).
_CREDENTIAL = (r"(?i:\b(?:bearer|basic|token|authorization|api[_-]?key|password|secret)\b"
               r"[\"']?\s*[:=]?\s*[\"']?\s*(?:bearer\s+)?)")


class LLMError(RuntimeError):
    """A problem that stops the run (unreachable endpoint, rejected key, unknown model).

    ``str()`` is one line. Any secret passed in ``secrets`` is masked, because
    servers echo keys back in their error bodies.
    """

    def __init__(self, message: str, *, secrets: Iterable[str | None] = ()) -> None:
        super().__init__(clean(message, secrets))


class LLMConfigError(ValueError):
    """A bad ``llm.*`` setting; ``str()`` names the key and the problem on one line."""


def mask(text: str, secrets: Iterable[str | None], *, short: str = "alone") -> str:
    """``text`` with every non-empty secret replaced by :data:`MASK`.

    A secret shorter than 8 characters is masked where it stands alone
    (``short="alone"``, for messages), or only where it follows a credential's
    name, as a server quoting a header does (``short="credential"``, for a model's
    answers, where a key such as ``4`` or ``ollama`` is also an ordinary word: masking
    it there would rewrite ``{"score": 4}`` and every cached answer with it)."""
    # Longest first: a password that is part of the key must not split the key's mask.
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        if len(secret) >= _MASK_EVERYWHERE_FROM:
            text = text.replace(secret, MASK)
        elif short == "credential":
            text = re.sub(rf"({_CREDENTIAL}){re.escape(secret)}(?![{_WORD_CHAR}])",
                          rf"\g<1>{MASK}", text)
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


