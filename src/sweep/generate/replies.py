"""The answer contracts of the prompts, checked.

A reply that is not JSON raises ``ReplyError`` (counted as ``bad_json``); JSON
of the wrong shape raises :class:`ShapeError` (``bad_shape``). Keys the
contract does not name are ignored.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sweep.core.errors import ServiceFailure
from sweep.core.text.languages import is_cjk
from sweep.llm.jsonreply import parse_json_object

__all__ = ["DraftQuestion", "ShapeError", "parse_check_verdict", "parse_draft", "parse_rating"]

_MIN_QUESTION_CHARS = 8
_MAX_QUESTION_CHARS = 600
# A Japanese or Chinese character carries what two or three Latin letters do: "有給は何日？"
# (six characters) is a whole question. Each counts this many characters.
_CJK_CHAR_WEIGHT = 2


class ShapeError(ValueError, ServiceFailure):
    """JSON that does not follow the contract."""


@dataclass(frozen=True, slots=True)
class DraftQuestion:
    """A question as the model wrote it, with its quotes (not yet located)."""

    question: str
    quotes: tuple[str, ...]
    fact: str | None = None


def _text(obj: Mapping[str, Any], key: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ShapeError(f"{key!r} must be a non-empty string")
    return value.strip()


def _question(obj: Mapping[str, Any]) -> str:
    q = " ".join(_text(obj, "question").split())
    length = len(q) + (_CJK_CHAR_WEIGHT - 1) * sum(is_cjk(c) for c in q)
    if (
        length < _MIN_QUESTION_CHARS
        or length > _MAX_QUESTION_CHARS
        or not any(c.isalpha() for c in q)
    ):
        raise ShapeError(f"question of {len(q)} characters is not a question")
    return q


def parse_draft(kind: str, answer: str) -> DraftQuestion:
    """The question (and quotes) of a generation answer of ``kind``."""
    obj = parse_json_object(answer)
    question = _question(obj)
    if kind == "fact":
        fact = obj.get("fact")
        return DraftQuestion(
            question, (_text(obj, "quote"),), fact.strip() if isinstance(fact, str) else None
        )
    if kind == "adversarial":
        return DraftQuestion(question, (_text(obj, "quote"),))
    if kind == "multi":
        quotes = obj.get("quotes")
        if (
            not isinstance(quotes, list)
            or len(quotes) != 2
            or not all(isinstance(q, str) and q.strip() for q in quotes)
        ):
            raise ShapeError("'quotes' must be a list of two non-empty strings")
        return DraftQuestion(question, tuple(q.strip() for q in quotes))
    if kind == "unanswerable":
        return DraftQuestion(question, ())
    raise ValueError(f"unknown kind {kind!r}")


def parse_rating(answer: str) -> int:
    """The 1-5 realism score of a rating answer."""
    obj = parse_json_object(answer)
    score = obj.get("score")
    if isinstance(score, str) and score.strip().isdigit():
        score = int(score.strip())
    if isinstance(score, float) and math.isfinite(score) and score.is_integer():
        score = int(score)
    if isinstance(score, bool) or not isinstance(score, int) or not 1 <= score <= 5:
        raise ShapeError(f"'score' must be an integer from 1 to 5, got {score!r}")
    return score


def parse_check_verdict(answer: str) -> bool:
    """The ``answerable`` verdict of a check answer."""
    obj = parse_json_object(answer)
    value = obj.get("answerable")
    if isinstance(value, str) and value.strip().lower() in ("true", "yes", "false", "no"):
        value = value.strip().lower() in ("true", "yes")
    if not isinstance(value, bool):
        raise ShapeError(f"'answerable' must be true or false, got {value!r}")
    return value
