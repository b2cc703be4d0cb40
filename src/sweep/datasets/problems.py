"""What is wrong with a dataset, said as ``path:line: message``, and the reading of its
JSON-lines files that finds it.

Nothing is half-loaded: the readers collect every problem in a :class:`Report` and
raise one :class:`DatasetError` whose ``str()`` is the first problem on one line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sweep.core.errors import BadInput
from sweep.core.files import read_regular_bytes
from sweep.core.messages import one_line, visible

__all__ = [
    "BadJsonLine",
    "DatasetError",
    "Problem",
    "Report",
    "describe_value",
    "jsonl_objects",
    "metadata_of",
    "parse_json_line",
    "required_str",
    "short",
    "text_lines",
]


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input file; ``str()`` is ``path:line: message``."""

    path: str
    line: int | None
    message: str

    def __str__(self) -> str:
        # A problem is always one line, whatever its file is called or its text quotes; a
        # name's control characters show escaped (a line break as \n, an ANSI escape as \x1b).
        path = visible(self.path)
        where = path if self.line is None else f"{path}:{self.line}"
        return f"{where}: {one_line(self.message, squeeze=False)}"


class DatasetError(ValueError, BadInput):
    """Malformed dataset. ``str()`` is one line: the first problem (and a count of the rest).

    ``problems`` holds every problem found, the first one included.
    """

    def __init__(self, problems: Problem | Sequence[Problem], *, hint_path: str | None = None):
        problems = [problems] if isinstance(problems, Problem) else list(problems)
        if not problems:
            raise ValueError("DatasetError needs at least one problem")
        self.problems: list[Problem] = problems
        message = str(problems[0])
        if len(problems) > 1:
            more = len(problems) - 1
            message += f" (and {more} more problem{'s' if more > 1 else ''}"
            message += f"; run python -m sweep.validate {hint_path})" if hint_path else ")"
        super().__init__(message)

    @property
    def problem(self) -> Problem:
        return self.problems[0]


class Report:
    """The problems found so far, reported together once reading is done."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def add(self, path: Path | str, line: int | None, message: str) -> None:
        self.problems.append(Problem(str(path), line, message))

    def first_time(
        self, seen: dict[Any, int], key: Any, where: tuple[Path, int], what: str
    ) -> bool:
        """Whether ``key`` is new to ``seen`` (which then keeps its line); a key seen before is
        reported as ``duplicate <what> (first at line N)``."""
        if key in seen:
            self.add(*where, f"duplicate {what} (first at line {seen[key]})")
            return False
        seen[key] = where[1]
        return True

    def sorted(self) -> list[Problem]:
        """Problems file by file (in the order files were first named), by line within a file.

        Checks run in passes (JSON first, then cross-references), so discovery
        order is not reading order.
        """
        order: dict[str, int] = {}
        for p in self.problems:
            order.setdefault(p.path, len(order))
        return sorted(self.problems, key=lambda p: (order[p.path], p.line or 0))

    def raise_if_any(self, hint_path: str | None) -> None:
        if self.problems:
            raise DatasetError(self.sorted(), hint_path=hint_path)


def describe_value(value: Any) -> str:
    """A JSON value for an error message: its JSON type and a short rendering."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    kind = {int: "number", float: "number", str: "string", list: "array", dict: "object"}.get(
        type(value), type(value).__name__
    )
    return f"{kind} {short(value)}"


def short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _DuplicateKey(ValueError):
    pass


def _object_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # json.loads silently keeps the last of two equal keys; a typo'd copy of
    # "start" would then move a span without anyone noticing.
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise _DuplicateKey(key)
        obj[key] = value
    return obj


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def text_lines(path: Path, report: Report) -> Iterator[tuple[int, str]]:
    """Non-blank lines of a UTF-8 text file with their 1-based numbers.

    Splits on ``\\n`` only: U+2028 and friends may appear raw inside JSON strings.
    """
    try:
        data = read_regular_bytes(path)  # a FIFO is refused, never waited on
    except OSError as e:
        report.add(path, None, f"cannot read file: {e.strerror or e}")
        return
    for lineno, raw in enumerate(data.split(b"\n"), 1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            report.add(
                path,
                lineno,
                f"not valid UTF-8 (byte 0x{raw[e.start]:02x} at byte {e.start + 1} of the line)",
            )
            continue
        if lineno == 1:
            line = line.removeprefix("\ufeff")  # editors on Windows add a BOM
        if line.strip():
            yield lineno, line


class BadJsonLine(ValueError, BadInput):
    """A line that is not one JSON object; ``str()`` says why, as a dataset problem does."""


def parse_json_line(line: str) -> dict[str, Any]:
    """One line of a JSON-lines file as an object: strict JSON (no NaN), no key twice.
    Raises :class:`BadJsonLine`."""
    try:
        obj = json.loads(
            line, object_pairs_hook=_object_without_duplicates, parse_constant=_reject_constant
        )
    except json.JSONDecodeError as e:
        raise BadJsonLine(f"bad JSON: {e.msg} (column {e.colno})") from None
    except _DuplicateKey as e:
        raise BadJsonLine(f"bad JSON: duplicate key {str(e)!r}") from None
    except RecursionError:  # thousands of [ or {: no question or document is built so
        raise BadJsonLine("bad JSON: nested too deeply") from None
    except ValueError as e:
        raise BadJsonLine(f"bad JSON: {e}") from None
    if not isinstance(obj, dict):
        raise BadJsonLine(f"expected a JSON object, got {describe_value(obj)}")
    if _SURROGATE_ESCAPE.search(line):  # only a \\u escape can give one: the line is UTF-8
        lone = _lone_surrogate(obj)
        if lone is not None:
            raise BadJsonLine(
                f"bad JSON: \\u{ord(lone):04x} is half of a character (a lone "
                "surrogate), which no text can hold"
            )
    return obj


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _lone_surrogate(value: Any) -> str | None:
    """The first lone surrogate in a decoded JSON value's strings and keys, or None (a
    pair of escapes decodes to one character and is fine)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            found = _SURROGATE.search(v)
            if found:
                return found.group()
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return None


def jsonl_objects(path: Path, report: Report) -> Iterator[tuple[int, dict[str, Any]]]:
    """The objects of a JSON-lines file with their line numbers; a bad line is reported."""
    for lineno, line in text_lines(path, report):
        try:
            yield lineno, parse_json_line(line)
        except BadJsonLine as e:
            report.add(path, lineno, str(e))


def required_str(
    row: Mapping[str, Any],
    key: str,
    where: tuple[Path, int],
    report: Report,
    *,
    what: str | None = None,
) -> str | None:
    """``row[key]`` if it is a non-blank string, else report and return None."""
    if key not in row:
        report.add(*where, f"missing key {key!r}")
        return None
    value = row[key]
    if not isinstance(value, str):
        report.add(*where, f"{key} must be a string, got {describe_value(value)}")
        return None
    if not value.strip():
        report.add(*where, f"{what or key} is empty")
        return None
    return value


def metadata_of(row: Mapping[str, Any], known: frozenset[str] | set[str]) -> dict[str, Any]:
    """A row's keys other than ``known`` (and its ``metadata`` object) as metadata."""
    meta: dict[str, Any] = {}
    nested = row.get("metadata")
    if isinstance(nested, dict):
        meta.update(nested)
    meta.update((k, v) for k, v in row.items() if k not in known and k != "metadata")
    if nested is not None and not isinstance(nested, dict):
        meta["metadata"] = nested
    return meta
