"""The JSON object inside a model's answer.

Models asked for JSON still wrap it in a code fence or a sentence of
preamble now and then; those answers are accepted. Anything else is a
:class:`ReplyError`, which callers count as a rejection.
"""

from __future__ import annotations

import json
import re
from typing import Any

from sweep.core.errors import ServiceFailure

__all__ = ["ReplyError", "parse_json_object"]

_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n?(.*?)```", re.DOTALL)


class ReplyError(ValueError, ServiceFailure):
    """The answer holds no JSON object (``reason`` is short, for counting)."""


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _loads(text: str) -> Any:
    return json.loads(text, parse_constant=_reject_constant)


def parse_json_object(text: str) -> dict[str, Any]:
    """The first JSON object in ``text``: the whole answer, a fenced block, or the
    first ``{...}`` that parses. Raises :class:`ReplyError`."""
    if not isinstance(text, str) or not text.strip():
        raise ReplyError("empty answer")
    candidates = [text.strip()]
    candidates += [m.group(1).strip() for m in _FENCE.finditer(text)]
    for candidate in candidates:
        try:
            value = _loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
        raise ReplyError(f"expected a JSON object, got {type(value).__name__}")
    decoder = json.JSONDecoder(parse_constant=_reject_constant)
    for m in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, m.start())
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    raise ReplyError("no JSON object in the answer")
