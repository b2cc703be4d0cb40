"""Whether an HTTP 200 answer is a chat completion, and what it is when it is not.

Proxies and overloaded servers answer 200 with an HTML error page, an empty
body, ``{}``, a list, a completion without choices or without content, or a
stream nobody asked for. The ``openai`` package reads most of these without
complaint (text/html comes back as a plain string, ``{}`` as a completion
whose fields are all None), so the client checks the result itself. The
description never quotes the body: it may hold anything, a key included.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["completion_text", "describe_body"]

# Only plain words the server sent are repeated; anything else stays unquoted.
_FINISH = re.compile(r"[a-z_]{1,30}")
_MEDIA_TYPE = re.compile(r"[a-z0-9.+-]{1,40}/[a-z0-9.+-]{1,40}")


def completion_text(parsed: Any) -> str | None:
    """``choices[0].message.content`` of what the ``openai`` package parsed, or None.

    An empty or blank content is None too: every sweep prompt asks for a JSON
    object, so an empty answer is never usable, and caching it would make
    every rerun repeat the failure instead of asking again.
    """
    choices = getattr(parsed, "choices", None)
    if not isinstance(choices, (list, tuple)) or not choices:
        return None
    content = getattr(getattr(choices[0], "message", None), "content", None)
    return content if isinstance(content, str) and content.strip() else None


def describe_body(content_type: str, body: str) -> str:
    """A few words on a 200 body that holds no answer, e.g. ``an HTML page``."""
    kind = content_type.split(";")[0].strip().lower()
    stripped = body.strip()
    if not stripped:
        return "an empty body"
    try:
        data = json.loads(stripped)
    except ValueError:
        if "event-stream" in kind or stripped.startswith(("data:", "event:")):
            return "a stream of server-sent events, which was not asked for"
        if "html" in kind or stripped.startswith("<"):
            return "an HTML page"
        return f"{kind if _MEDIA_TYPE.fullmatch(kind) else 'a body'} that is not JSON"
    if isinstance(data, list):
        return "a JSON list"
    if not isinstance(data, dict):
        return f"a JSON {'null' if data is None else type(data).__name__}"
    if not data:
        return "an empty JSON object"
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        return "no choices" if "choices" in data else "a JSON object without choices"
    choice = choices[0] if isinstance(choices[0], dict) else {}
    message = choice.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    finish = choice.get("finish_reason")
    # "stop" says nothing; "length" or "content_filter" say why there is no text.
    why = (
        f", finish_reason {finish}"
        if isinstance(finish, str) and finish != "stop" and _FINISH.fullmatch(finish)
        else ""
    )
    if content is None:
        return f"no message content{why}"
    if not isinstance(content, str):
        return f"message content that is not text{why}"
    if not content.strip():
        return f"an empty message{why}"
    return "a chat completion the openai package could not read"
