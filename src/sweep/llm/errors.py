"""Errors of the LLM client: one line each, and never the API key."""

from __future__ import annotations

from typing import Iterable


class LLMError(RuntimeError):
    """A problem that stops the run (unreachable endpoint, rejected key, unknown model).

    ``str()`` is one line. Any secret passed in ``secrets`` is masked, because
    servers echo keys back in their error bodies.
    """

    def __init__(self, message: str, *, secrets: Iterable[str | None] = ()) -> None:
        super().__init__(one_line(scrub(message, secrets)))


class LLMConfigError(ValueError):
    """A bad ``llm.*`` setting; ``str()`` names the key and the problem on one line."""


def scrub(text: str, secrets: Iterable[str | None]) -> str:
    for secret in secrets:
        # Short values are not secrets worth masking and would garble the text.
        if secret and len(secret) >= 8:
            text = text.replace(secret, "***")
    return text


def one_line(text: str) -> str:
    return " ".join(str(text).split())
