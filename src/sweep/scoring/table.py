"""The scores of a setting, one value per query, level and metric, as typed columns."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import chain
from pathlib import Path

import numpy as np

from sweep.core.csvcells import restore, write_rows
from sweep.core.files import not_utf8, write_text_atomic
from sweep.core.measures import LEVELS, Measure

__all__ = ["CSV_HEADER", "ScoreTable"]

CSV_HEADER = ("query_id", "level", "metric", "value")


@dataclass(frozen=True, eq=False)
class ScoreTable:
    """Per-query scores in long form, column by column.

    ``query_code``/``level_code``/``metric_code`` index ``query_ids``/``LEVELS``/
    ``metric_names``; the string columns ``query_id``, ``level`` and ``metric``
    are built from them on demand.
    """

    query_ids: tuple[str, ...]
    metric_names: tuple[str, ...]
    query_code: np.ndarray
    level_code: np.ndarray
    metric_code: np.ndarray
    value: np.ndarray

    def __post_init__(self) -> None:
        n = len(self.value)
        for name in ("query_code", "level_code", "metric_code"):
            if len(getattr(self, name)) != n:
                raise ValueError(
                    f"ScoreTable column {name} has {len(getattr(self, name))} rows, value has {n}"
                )
        for arr in (self.query_code, self.level_code, self.metric_code, self.value):
            arr.setflags(write=False)

    def __len__(self) -> int:
        return int(self.value.shape[0])

    @property
    def query_id(self) -> np.ndarray:
        return np.asarray(self.query_ids, dtype=object)[self.query_code]

    @property
    def level(self) -> np.ndarray:
        return np.asarray(LEVELS, dtype=object)[self.level_code]

    @property
    def metric(self) -> np.ndarray:
        return np.asarray(self.metric_names, dtype=object)[self.metric_code]

    def rows(self) -> Iterator[tuple[str, str, str, float]]:
        """``(query_id, level, metric, value)`` tuples in table order."""
        qids, mets = self.query_ids, self.metric_names
        for q, lv, m, v in zip(
            self.query_code.tolist(),
            self.level_code.tolist(),
            self.metric_code.tolist(),
            self.value.tolist(),
        ):
            yield qids[q], LEVELS[lv], mets[m], v

    def values(self, level: str, metric: str | Measure) -> dict[str, float]:
        """``{query_id: value}`` of one metric at one level (empty if absent)."""
        if level not in LEVELS:
            raise ValueError(f"unknown level {level!r}; levels: {', '.join(LEVELS)}")
        metric = str(metric)
        if metric not in self.metric_names:
            return {}
        mask = (self.level_code == LEVELS.index(level)) & (
            self.metric_code == self.metric_names.index(metric)
        )
        return {
            self.query_ids[q]: v
            for q, v in zip(self.query_code[mask].tolist(), self.value[mask].tolist())
        }

    def matrix(self, level: str) -> tuple[np.ndarray, tuple[str, ...], np.ndarray]:
        """``(query codes, metric names, values)`` of one level as a query x metric array.

        Missing cells are NaN; metric order is the table's.
        """
        mask = self.level_code == LEVELS.index(level)
        q = self.query_code[mask]
        m = self.metric_code[mask]
        queries = np.unique(q)
        metric_codes = np.unique(m)
        out = np.full((len(queries), len(metric_codes)), np.nan)
        out[np.searchsorted(queries, q), np.searchsorted(metric_codes, m)] = self.value[mask]
        return queries, tuple(self.metric_names[c] for c in metric_codes.tolist()), out

    def write_csv(self, path: str | Path) -> None:
        """Write ``query_id,level,metric,value`` rows (values at full precision; a query id
        a spreadsheet would run as a formula is quoted, and :meth:`read_csv` unquotes it)."""
        buf = io.StringIO()
        write_rows(buf, chain([CSV_HEADER], self.rows()))
        # Atomically: a report rebuilt while the job writes must not read half a table.
        write_text_atomic(Path(path), buf.getvalue())

    @classmethod
    def read_csv(cls, path: str | Path) -> ScoreTable:
        """Read a table written by :meth:`write_csv`; ``ValueError`` names the file and line.

        Only what sweep writes is read: a known level, one of sweep's measures, a finite
        value in the measure's range and one value per query, level and metric; anything
        else is a damaged (or tampered) file, which must not be tested as scores.
        """
        import pandas as pd

        path = Path(path)
        try:
            with open(path, newline="", encoding="utf-8") as f:
                header = f.readline().rstrip("\r\n")
            if tuple(header.split(",")) != CSV_HEADER:
                # Said, not quoted: the first line of a file that is not sweep's can be
                # anything (a key, an environment), and an error is shown and logged.
                raise ValueError(
                    f"{path}:1: expected header {','.join(CSV_HEADER)}; the "
                    f"first line is something else ({len(header)} characters), so "
                    "this is not a per-query file sweep wrote"
                )
            df = pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False, engine="c")
        except UnicodeDecodeError:
            raise ValueError(f"{not_utf8(path)}; the file is damaged") from None
        except pd.errors.ParserError as e:
            line = _parser_error_line(str(e))
            where = f"{path}:{line}" if line else str(path)
            raise ValueError(f"{where}: expected query_id,level,metric,value") from None
        if df.empty:
            return cls(
                (), (), *(np.zeros(0, dtype=t) for t in (np.int64, np.int8, np.int64)), np.zeros(0)
            )
        # Restored after factorizing: one call per distinct name, and restore is a bijection.
        q_codes, q_names = pd.factorize(df["query_id"], sort=False)
        m_codes, m_names = pd.factorize(df["metric"], sort=False)
        q_names, m_names = ([restore(n) for n in names] for names in (q_names, m_names))
        value = pd.to_numeric(df["value"], errors="coerce").to_numpy(np.float64)
        levels = df["level"].map({name: i for i, name in enumerate(LEVELS)})
        measure = np.array([_is_measure(name) for name in m_names], dtype=bool)[m_codes]
        key = (q_codes * len(LEVELS) + levels.fillna(0).to_numpy(np.int64)) * len(m_names) + m_codes
        twice = pd.Series(key).duplicated().to_numpy()

        def what(i: int) -> str:
            return f"{df['level'][i]} {m_names[m_codes[i]]}"

        checks = (
            (levels.isna().to_numpy(), lambda i: f"level {df['level'][i]!r} is not {_LEVEL_NAMES}"),
            (~measure, lambda i: f"metric {m_names[m_codes[i]]!r} is not one of sweep's measures"),
            (np.isnan(value), lambda i: f"value {df['value'][i]!r} is not a number"),
            # Every measure sweep scores is a share, from 0 to 1; the margin takes a float
            # sum's last bit (an nDCG of 1.0000000000000002), not a damaged value.
            (
                np.isinf(value) | (value < -_MARGIN) | (value > 1 + _MARGIN),
                lambda i: (
                    f"value {df['value'][i]!r} of query {q_names[q_codes[i]]!r} is not a "
                    f"score ({what(i)} is from 0 to 1)"
                ),
            ),
            # Two values of one score: which one a test would take is an accident.
            (
                twice,
                lambda i: (
                    f"a second {what(i)} value for query {q_names[q_codes[i]]!r} (the "
                    f"first is on line "
                    f"{_record_line(path, int(np.argmax(key == key[i])))})"
                ),
            ),
        )
        for bad, problem in checks:
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise ValueError(
                    f"{path}:{_record_line(path, i)}: {problem(i)}; the file is damaged"
                )
        return cls(
            tuple(q_names),
            tuple(m_names),
            q_codes.astype(np.int64),
            levels.to_numpy(np.int8),
            m_codes.astype(np.int64),
            value,
        )

    def to_frame(self):
        """The table as a pandas DataFrame: ``query_id, level, metric, value``."""
        import pandas as pd

        return pd.DataFrame(
            {
                "query_id": pd.Categorical.from_codes(self.query_code, self.query_ids),
                "level": pd.Categorical.from_codes(self.level_code, LEVELS),
                "metric": pd.Categorical.from_codes(self.metric_code, self.metric_names),
                "value": self.value,
            }
        )


#: How far past [0, 1] a value read back may be: floating-point rounding, not damage.
_MARGIN = 1e-9
# "doc, span or page": how a refusal names the levels.
_LEVEL_NAMES = ", ".join(LEVELS[:-1]) + " or " + LEVELS[-1]


def _is_measure(name: str) -> bool:
    try:
        Measure.parse(name)
    except ValueError:
        return False
    return True


def _record_line(path: Path, record: int) -> int:
    """The line of ``path`` where data record ``record`` (0-based) starts: a quoted query id
    may hold line breaks, so records and lines can differ. Read only to name a line in an
    error."""
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        next(reader, None)  # the header
        end = reader.line_num
        for i, _ in enumerate(reader):
            if i == record:
                break
            end = reader.line_num
    return end + 1


def _parser_error_line(message: str) -> int | None:
    m = re.search(r"line (\d+)", message)
    return int(m.group(1)) if m else None
