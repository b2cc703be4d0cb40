"""The reply contracts of the answer and judge prompts, checked.

A reply that is not JSON, or JSON of the wrong shape, raises :class:`BadReply`
with a short reason: the caller counts it (a malformed judge reply is a
counted failure, never a crash). Keys the contract does not name are ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sweep.core.errors import ServiceFailure
from sweep.llm.jsonreply import ReplyError, parse_json_object

__all__ = [
    "CATEGORIES",
    "BadReply",
    "GeneratedAnswer",
    "JudgeVerdict",
    "parse_answer",
    "parse_judge_verdict",
]

CATEGORIES = ("hallucination", "omission", "misinterpretation", "none")


class BadReply(ValueError, ServiceFailure):
    """A reply the contract cannot read; ``reason`` is ``bad_json`` or ``bad_shape``."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason


@dataclass(frozen=True)
class GeneratedAnswer:
    text: str
    declined: bool


@dataclass(frozen=True)
class JudgeVerdict:
    """One binary judgment: ``passed`` is faithful / relevant / correct."""

    passed: bool
    reason: str
    category: str | None = None  # faithfulness only


def _object(text: str) -> Mapping[str, Any]:
    try:
        return parse_json_object(text)
    except ReplyError as e:
        raise BadReply("bad_json", str(e)) from None


def _bool(obj: Mapping[str, Any], key: str) -> bool:
    value = obj.get(key)
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"  # some models quote their booleans
    if not isinstance(value, bool):
        raise BadReply("bad_shape", f"{key!r} must be true or false, got {value!r}")
    return value


def parse_answer(text: str) -> GeneratedAnswer:
    obj = _object(text)
    declined = _bool(obj, "declined") if "declined" in obj else False
    answer = obj.get("answer")
    if answer is None and declined:
        answer = ""
    if not isinstance(answer, str):
        raise BadReply("bad_shape", f"'answer' must be a string, got {answer!r}")
    if not declined and not answer.strip():
        raise BadReply("bad_shape", "an empty answer that is not declined")
    return GeneratedAnswer(answer.strip(), declined)


def parse_judge_verdict(text: str, key: str) -> JudgeVerdict:
    """``{"<key>": bool, "reason": str}`` (+ ``category`` when ``key`` is ``faithful``)."""
    obj = _object(text)
    passed = _bool(obj, key)
    reason = obj.get("reason")
    reason = reason.strip() if isinstance(reason, str) else ""
    category = None
    if key == "faithful":
        raw = obj.get("category")
        category = raw.strip().lower() if isinstance(raw, str) else raw
        if category not in CATEGORIES:
            raise BadReply(
                "bad_shape", f"'category' must be one of {', '.join(CATEGORIES)}, got {raw!r}"
            )
        if not passed and category == "none":
            raise BadReply("bad_shape", "unfaithful with category 'none'")
        category = "none" if passed else category
    return JudgeVerdict(passed, reason, category)
