"""Questions to label, read from a ``.jsonl`` file or a plain list, and the draft written back.

A ``.jsonl`` (or ``.json``) file has one JSON object per line, ``{"query_id"?, "query",
...}``; any other file has one question per line (blank lines skipped). A question
without ``query_id`` is given ``q001``, ``q002``, ... by its position (at least three
digits, more for a longer list), the next free number when that one is taken. Every
problem is a :class:`~sweep.datasets.loading.Problem` (``path:line: message``), all of
them raised together as one :class:`~sweep.datasets.loading.DatasetError`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sweep.core.files import read_regular_bytes
from sweep.datasets.loading import (
    BadJsonLine,
    DatasetError,
    Problem,
    describe_value,
    parse_json_line,
)

__all__ = ["Question", "draft_text", "read_questions"]

_JSON_SUFFIXES = (".jsonl", ".json")


@dataclass(frozen=True)
class Question:
    """One question as read: ``row`` is its object (``query_id`` filled in), ``line`` its
    1-based line, ``raw`` the line itself when it can be written back unchanged."""

    query_id: str
    query: str
    row: Mapping[str, Any]
    line: int
    raw: str | None = None

    @property
    def labelled(self) -> bool:
        """Whether it has evidence already (``relevant``, an empty list included)."""
        return self.row.get("relevant") is not None


def read_questions(path: str | Path) -> tuple[Question, ...]:
    """The questions of ``path`` (JSON lines or one per line, by its extension), in file
    order. Raises :class:`DatasetError` with every problem found."""
    path = Path(path).expanduser()
    problems: list[Problem] = []
    lines = list(_lines(path, problems))
    if path.suffix.lower() in _JSON_SUFFIXES:
        rows = list(_json_rows(path, lines, problems))
    else:
        rows = [(n, {"query": line.strip()}, None) for n, line in lines]
    if not problems and not rows:
        problems.append(Problem(str(path), None, "no questions"))
    if problems:
        raise DatasetError(problems)
    return _with_ids(rows)


def _lines(path: Path, problems: list[Problem]) -> Iterator[tuple[int, str]]:
    """Non-blank lines and their numbers; ``\\n`` ends a line (U+2028 may sit in a JSON string)."""
    try:
        data = read_regular_bytes(path)  # a FIFO is refused, never waited on
    except OSError as e:
        problems.append(Problem(str(path), None, f"cannot read file: {e.strerror or e}"))
        return
    for n, raw in enumerate(data.split(b"\n"), 1):
        try:
            line = raw.decode("utf-8").removesuffix("\r")
        except UnicodeDecodeError as e:
            problems.append(
                Problem(
                    str(path),
                    n,
                    f"not valid UTF-8 (byte 0x{raw[e.start]:02x} "
                    f"at byte {e.start + 1} of the line)",
                )
            )
            continue
        if n == 1:
            line = line.removeprefix("\ufeff")
        if line.strip():
            yield n, line


def _json_rows(
    path: Path,
    lines: list[tuple[int, str]],
    problems: list[Problem],
) -> Iterator[tuple[int, dict[str, Any], str]]:
    first_line: dict[str, int] = {}
    for n, line in lines:

        def bad(message: str, n: int = n) -> None:
            problems.append(Problem(str(path), n, message))

        try:
            row = parse_json_line(line)
        except BadJsonLine as e:
            bad(str(e))
            continue
        ok = True
        query = row.get("query")
        if "query" not in row:
            bad("missing key 'query'")
            ok = False
        elif not isinstance(query, str):
            bad(f"query must be a string, got {describe_value(query)}")
            ok = False
        elif not query.strip():
            bad("query text is empty")
            ok = False
        if "query_id" in row:
            query_id = row["query_id"]
            if not isinstance(query_id, str):
                bad(f"query_id must be a string, got {describe_value(query_id)}")
                ok = False
            elif not query_id.strip():
                bad("query_id is empty")
                ok = False
            elif query_id in first_line:
                bad(f"duplicate query_id {query_id!r} (first at line {first_line[query_id]})")
                ok = False
            else:
                first_line[query_id] = n
        if ok:
            yield n, row, line


def _with_ids(rows: list[tuple[int, dict[str, Any], str | None]]) -> tuple[Question, ...]:
    taken = {row["query_id"] for _, row, _ in rows if "query_id" in row}
    width = max(3, len(str(len(rows))))
    questions: list[Question] = []
    for position, (n, row, raw) in enumerate(rows, 1):
        if "query_id" not in row:
            number = position
            while f"q{number:0{width}d}" in taken:
                number += 1
            taken.add(f"q{number:0{width}d}")
            row = {"query_id": f"q{number:0{width}d}", **row}
            raw = None
        questions.append(Question(row["query_id"], row["query"], row, n, raw))
    return tuple(questions)


def draft_text(
    questions: Sequence[Question], proposed: Mapping[str, Sequence[Mapping[str, Any]]]
) -> str:
    """The draft file: one JSON line per question, in order. A labelled question is its
    line as read (``query_id`` added when it had none); one in ``proposed`` is its row
    without ``relevant``, with ``"proposed": [...]`` last."""
    lines: list[str] = []
    for question in questions:
        if question.query_id in proposed:
            row = {k: v for k, v in question.row.items() if k not in ("relevant", "proposed")}
            row["proposed"] = list(proposed[question.query_id])
            lines.append(json.dumps(row, ensure_ascii=False))
        elif question.raw is not None:
            lines.append(question.raw)
        else:
            lines.append(json.dumps(dict(question.row), ensure_ascii=False))
    return "".join(line + "\n" for line in lines)
