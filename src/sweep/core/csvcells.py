"""CSV cells a spreadsheet will not run as formulas, and read back exactly.

A cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage
return is taken for a formula by Excel, LibreOffice and Google Sheets, so
an answer like ``=HYPERLINK(...)`` in a CSV runs when the file is opened
(OWASP: "CSV injection"). Every CSV sweep writes for people goes through
this module, which puts a ``'`` in front of such a text cell; numbers
(``-0.05``) stay numbers.

To stay lossless, a text that already starts with ``'`` followed by what
would need one gets one more, so :func:`restore` strips exactly one and
every reader of a sweep CSV gets the original text back.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from sweep.core.files import write_text_atomic

if TYPE_CHECKING:  # pandas loads only where a frame is written
    import pandas as pd

__all__ = [
    "TRIGGERS",
    "neutralise",
    "neutralise_frame",
    "restore",
    "restore_row",
    "write_csv",
    "write_rows",
]

TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
QUOTE = "'"
# What a spreadsheet reads as a number: left alone, so it stays one.
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def _needs_quote(text: str) -> bool:
    body = text.lstrip(QUOTE)
    return body.startswith(TRIGGERS) and _NUMBER.fullmatch(body) is None


def neutralise(text: str) -> str:
    """``text`` as a cell no spreadsheet runs: ``'`` in front when it would be a formula."""
    return QUOTE + text if _needs_quote(text) else text


def restore(cell: str) -> str:
    """The text :func:`neutralise` was given (any other cell unchanged)."""
    return cell[1:] if cell.startswith(QUOTE) and _needs_quote(cell[1:]) else cell


def restore_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row from ``csv.DictReader`` with its text cells restored."""
    return {k: restore(v) if isinstance(v, str) else v for k, v in row.items()}


#: First characters of a text that may need a quote (a trigger, or a quote before one).
_FIRST = frozenset(TRIGGERS) | {QUOTE}


def _cell(value: Any) -> Any:
    # Most cells of a per-query file are numbers and ids: only a text whose first
    # character could start a formula is looked at closely.
    if isinstance(value, str) and value[:1] in _FIRST:
        return neutralise(value)
    return value


def _has_cr(cells: Iterable[Any]) -> bool:
    # Python's csv module quotes a field only for the characters of its line terminator
    # ("\n"): a bare carriage return would end the row for every reader.
    return any("\r" in c for c in cells if isinstance(c, str))


def write_rows(f: TextIO, rows: Iterable[Sequence[Any]]) -> None:
    """Write ``rows`` (the header first) as CSV to ``f``, text cells neutralised."""
    plain = csv.writer(f, lineterminator="\n")
    quoted = csv.writer(f, lineterminator="\n", quoting=csv.QUOTE_NONNUMERIC)
    for row in rows:
        cells = [_cell(c) for c in row]
        (quoted if _has_cr(cells) else plain).writerow(cells)


def _text_columns(df: pd.DataFrame) -> list[Any]:
    from pandas.api.types import is_object_dtype, is_string_dtype

    # From df.dtypes: looking each of a results frame's ~500 columns up by name is slow.
    return [c for c, dtype in df.dtypes.items() if is_object_dtype(dtype) or is_string_dtype(dtype)]


def neutralise_frame(df: pd.DataFrame) -> pd.DataFrame:
    """A copy with every text cell (and column name) neutralised; numbers untouched."""
    out = df.rename(columns=_cell)
    for col in _text_columns(out):
        out[col] = out[col].map(_cell)
    return out


def write_csv(path: str | Path, df: pd.DataFrame) -> Path:
    """``df`` as CSV at ``path``, text cells neutralised, written atomically."""
    out = neutralise_frame(df)
    cr = _has_cr(out.columns) or any(_has_cr(out[c]) for c in _text_columns(out))
    text = out.to_csv(index=False, quoting=csv.QUOTE_NONNUMERIC if cr else csv.QUOTE_MINIMAL)
    return write_text_atomic(path, text)
