"""Run files: any retriever's output, one ``{"query_id", "hits"}`` line per query, checked against a corpus.

A hit is a doc_id string or an object ``{"doc_id", "start", "end", "n_tokens"?}``
with offsets into the document's text (``score``, ``chunk_id`` and ``text`` may
ride along; ``text`` must then equal the document's characters at those offsets).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sweep.core.checks import is_int
from sweep.core.errors import BadInput
from sweep.core.files import read_regular_bytes
from sweep.core.tokenization import DEFAULT_TOKENIZER, count_tokens
from sweep.core.types import Document, Hit

__all__ = ["RunFile", "RunFileError", "fill_token_counts", "read_run"]

_HIT_KEYS = frozenset({"doc_id", "start", "end", "n_tokens", "score", "chunk_id", "text"})
#: Bound for counts read from a run file: beyond it NumPy's int64 sums could wrap around.
_MAX_INT = 2**31 - 1


class RunFileError(ValueError, BadInput):
    """A malformed run file; ``str()`` is ``file:line: problem`` (plus a count of further problems)."""

    def __init__(self, problems: Sequence[str]):
        self.problems = list(problems)
        message = self.problems[0]
        if len(self.problems) > 1:
            more = len(self.problems) - 1
            message += f" (and {more} more problem{'s' if more > 1 else ''})"
        super().__init__(message)


@dataclass(frozen=True)
class RunFile:
    """A parsed run: hits of the queries it names, and the ids it names that no query has."""

    path: str
    hits: Mapping[str, tuple[Hit, ...]]
    unknown_query_ids: tuple[str, ...] = ()
    lines: Mapping[str, int] = field(default_factory=dict)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return {
        int: "a number",
        float: "a number",
        str: "a string",
        list: "an array",
        dict: "an object",
    }.get(type(value), type(value).__name__)


def _show(value: Any) -> str:
    """A JSON value as it reads in the file, for messages: ``NaN``, ``1.5``, ``string "3"``, ``null``."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else "Infinity" if value > 0 else "-Infinity"
    if value is None or isinstance(value, (bool, int, float)):
        return json.dumps(value)
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        return "string " + (text if len(text) <= 40 else text[:36] + '..."')
    return _kind(value)


def _parse_hit(item: Any, texts: Mapping[str, str]) -> tuple[Hit | None, str | None]:
    """A hit of a run line, or the problem with it."""
    if isinstance(item, str):
        if item not in texts:
            return None, f"unknown doc_id {item!r} (not in the corpus)"
        return Hit(item), None
    if not isinstance(item, dict):
        return None, f"expected a doc_id string or an object, got {_kind(item)}"
    extra = sorted(set(item) - _HIT_KEYS)
    if extra:
        return None, f"unknown key {extra[0]!r} (a hit has {', '.join(sorted(_HIT_KEYS))})"
    doc_id = item.get("doc_id")
    if not isinstance(doc_id, str):
        return (
            None,
            "missing key 'doc_id'"
            if doc_id is None
            else f"doc_id must be a string, got {_kind(doc_id)}",
        )
    if doc_id not in texts:
        return None, f"unknown doc_id {doc_id!r} (not in the corpus)"
    text = texts[doc_id]
    has_start, has_end = "start" in item, "end" in item
    start = end = None
    if has_start != has_end:
        return None, f"{'start' if has_start else 'end'} without {'end' if has_start else 'start'}"
    if has_start:
        start, end = item["start"], item["end"]
        bad = [
            f"{key} must be an integer, got {_show(value)}"
            for key, value in (("start", start), ("end", end))
            if not is_int(value)
        ]
        if bad:
            return None, "; ".join(bad)
        if not 0 <= start < end <= len(text):
            return (
                None,
                f"span {start}:{end} is not a non-empty span inside {doc_id!r} ({len(text)} characters)",
            )
        if "text" in item and item["text"] != text[start:end]:
            return (
                None,
                f"text does not match {doc_id!r} at {start}:{end} (run made against another corpus version?)",
            )
    n_tokens = item.get("n_tokens")
    if n_tokens is not None and not (is_int(n_tokens) and 0 <= n_tokens <= _MAX_INT):
        return None, f"n_tokens must be an integer from 0 to {_MAX_INT}, got {_show(n_tokens)}"
    return Hit(doc_id, start, end, n_tokens), None


def read_run(path: str | Path, documents: Sequence[Document], query_ids: Sequence[str]) -> RunFile:
    """Parse and check a run file against the corpus; lines naming unknown queries are set aside."""
    path = Path(path).expanduser()
    texts = {d.doc_id: d.text for d in documents}
    known = set(query_ids)
    problems: list[str] = []
    try:
        data = read_regular_bytes(path)  # a FIFO is refused, never waited on
    except OSError as e:
        raise RunFileError([f"{path}: cannot read run file: {e.strerror or e}"]) from None
    hits: dict[str, tuple[Hit, ...]] = {}
    lines: dict[str, int] = {}
    unknown: dict[str, None] = {}
    blank = True
    for lineno, raw in enumerate(data.split(b"\n"), 1):
        where = f"{path}:{lineno}"
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            problems.append(f"{where}: not valid UTF-8")
            continue
        if lineno == 1:
            line = line.removeprefix("\ufeff")
        if not line.strip():
            continue
        blank = False
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            problems.append(f"{where}: bad JSON: {e.msg} (column {e.colno})")
            continue
        except RecursionError:
            problems.append(f"{where}: bad JSON: nested too deeply")
            continue
        if not isinstance(row, dict):
            problems.append(f"{where}: expected a JSON object, got {_kind(row)}")
            continue
        qid = row.get("query_id")
        if not isinstance(qid, str):
            problems.append(
                f"{where}: "
                + (
                    "missing key 'query_id'"
                    if qid is None
                    else f"query_id must be a string, got {_kind(qid)}"
                )
            )
            continue
        if qid in lines or qid in unknown:
            first = lines.get(qid)
            problems.append(
                f"{where}: duplicate query_id {qid!r}"
                + (f" (first at line {first})" if first else "")
            )
            continue
        items = row.get("hits")
        if not isinstance(items, list):
            problems.append(
                f"{where}: "
                + (
                    "missing key 'hits'"
                    if items is None
                    else f"hits must be an array, got {_kind(items)}"
                )
            )
            continue
        parsed: list[Hit] = []
        for rank, item in enumerate(items, 1):
            hit, problem = _parse_hit(item, texts)
            if problem is not None:
                problems.append(f"{where}: hit {rank}: {problem}")
                break
            parsed.append(hit)  # type: ignore[arg-type]
        else:
            if qid in known:
                hits[qid] = tuple(parsed)
                lines[qid] = lineno
            else:
                unknown[qid] = None
    if problems:
        raise RunFileError(problems)
    if blank:
        # Scoring it would give every query 0, which looks like a result.
        raise RunFileError([f"{path}: empty run file: no line with a query_id and its hits"])
    return RunFile(str(path), hits, tuple(unknown), lines)


def fill_token_counts(
    hits: Mapping[str, Sequence[Hit]],
    documents: Sequence[Document],
    tokenizer: str = DEFAULT_TOKENIZER,
) -> dict[str, tuple[Hit, ...]]:
    """Hits with ``n_tokens`` counted where missing: the span's text, or the whole document's."""
    texts = {d.doc_id: d.text for d in documents}

    def filled(h: Hit) -> Hit:
        if h.n_tokens is not None:
            return h
        text = texts[h.doc_id] if h.start is None else texts[h.doc_id][h.start : h.end]
        return Hit(h.doc_id, h.start, h.end, count_tokens(tokenizer, text))

    return {qid: tuple(map(filled, hs)) for qid, hs in hits.items()}
