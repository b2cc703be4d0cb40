"""Content-addressed on-disk cache of Chat Completions answers.

Layout under ``root``::

    v1/<key[:2]>/<key>.json     {"format", "key", "request", "text", "usage"}

``key`` is the SHA-256 of the canonical JSON of the request: model, every
message, temperature, token limit and response format. The endpoint's URL
and the API key are not part of it (a proxy in front of the same model gives
the same answers, and a key must never reach a file). An entry is written to
a unique temporary file and renamed into place, so concurrent writers and a
kill mid-write leave either no entry or a whole one. An unreadable or
mismatched entry counts as a miss and is asked again, and so does an empty
answer (see :func:`sweep.llm.completion.completion_text`): earlier versions
cached what a proxy's error page turned into.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sweep.core import cachedirs

log = logging.getLogger(__name__)

FORMAT = 1
_FORMAT_DIR = "v1"
_TMP_PREFIX = ".tmp-"
# A temporary file this old belongs to a writer that was killed.
_STALE_TMP_SECONDS = 24 * 3600


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens the API reported for one answer (0 when it reported none)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    def to_dict(self) -> dict[str, int]:
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens}

    @classmethod
    def from_dict(cls, data: Any) -> Usage:
        if not isinstance(data, Mapping):
            return cls()
        return cls(*(_count(data.get(k)) for k in ("prompt_tokens", "completion_tokens")))


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


@dataclass(frozen=True, slots=True)
class CachedAnswer:
    text: str
    usage: Usage


def request_key(request: Mapping[str, Any]) -> str:
    """SHA-256 of the request's canonical JSON (sorted keys, no whitespace, UTF-8)."""
    canonical = json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


class ResponseCache:
    """Answers by request key; ``get`` and ``put`` are safe from many threads and processes."""

    def __init__(self, root: str | os.PathLike) -> None:
        self.root = Path(root)
        self._dir = self.root / _FORMAT_DIR
        self._remove_stale_temporaries()

    def path(self, key: str) -> Path:
        return self._dir / key[:2] / f"{key}.json"

    def get(self, key: str) -> CachedAnswer | None:
        path = self.path(key)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, RecursionError) as e:  # (RecursionError: nested too deeply)
            log.warning(
                "ignoring unreadable LLM cache entry %s (%s); asking again", path, type(e).__name__
            )
            return None
        if not (
            isinstance(data, dict)
            and data.get("format") == FORMAT
            and data.get("key") == key
            and isinstance(data.get("text"), str)
        ):
            log.warning("ignoring malformed LLM cache entry %s; asking again", path)
            return None
        if not data["text"].strip():
            log.debug("ignoring empty LLM cache entry %s; asking again", path)
            return None
        return CachedAnswer(data["text"], Usage.from_dict(data.get("usage")))

    def put(self, key: str, request: Mapping[str, Any], text: str, usage: Usage) -> None:
        if not text.strip():  # never an answer (get reads it as a miss): nothing to keep
            return
        path = self.path(key)
        entry = {
            "format": FORMAT,
            "key": key,
            "request": request,
            "text": text,
            "usage": usage.to_dict(),
            "created": round(time.time(), 3),
        }
        # A lone surrogate (a prompt's text from a damaged PDF, say) has no UTF-8: it is
        # written as the JSON escape \ud800, which reads back as the same string.
        payload = json.dumps(entry, ensure_ascii=False, indent=1).encode(
            "utf-8", "backslashreplace"
        )
        if cachedirs.read_only(self.root):
            return
        # Unique per writer: two processes storing the same answer never share a temp file.
        tmp = path.with_name(f"{_TMP_PREFIX}{uuid.uuid4().hex}")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(tmp, "wb") as f:
                f.write(payload)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except OSError as e:
            # A read-only or full cache: the answer is still good, only a rerun pays again.
            # Said once, and not tried again (sweep.core.cachedirs).
            cachedirs.note_unwritable("LLM", self.root, e)
        finally:
            if tmp.exists():
                tmp.unlink(missing_ok=True)

    def __contains__(self, key: str) -> bool:
        return self.get(key) is not None

    def entries(self) -> int:
        if not self._dir.is_dir():
            return 0
        return sum(1 for p in self._dir.glob("*/*.json"))

    def _remove_stale_temporaries(self) -> None:
        if not self._dir.is_dir():
            return
        now = time.time()
        for tmp in self._dir.glob(f"*/{_TMP_PREFIX}*"):
            try:
                if now - tmp.stat().st_mtime > _STALE_TMP_SECONDS:
                    tmp.unlink()
            except OSError:
                pass
