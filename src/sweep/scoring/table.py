"""The scores of a setting, one value per query, level and metric, as typed columns."""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Iterator

import numpy as np

from sweep.core.csvcells import restore, write_rows
from sweep.core.files import write_text_atomic
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
                raise ValueError(f"ScoreTable column {name} has {len(getattr(self, name))} rows, value has {n}")
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
        for q, lv, m, v in zip(self.query_code.tolist(), self.level_code.tolist(),
                               self.metric_code.tolist(), self.value.tolist()):
            yield qids[q], LEVELS[lv], mets[m], v

    def values(self, level: str, metric: str | Measure) -> dict[str, float]:
        """``{query_id: value}`` of one metric at one level (empty if absent)."""
        if level not in LEVELS:
            raise ValueError(f"unknown level {level!r}; levels: {', '.join(LEVELS)}")
        metric = str(metric)
        if metric not in self.metric_names:
            return {}
        mask = (self.level_code == LEVELS.index(level)) & (self.metric_code == self.metric_names.index(metric))
        return {self.query_ids[q]: v for q, v in zip(self.query_code[mask].tolist(), self.value[mask].tolist())}

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
    def read_csv(cls, path: str | Path) -> "ScoreTable":
        """Read a table written by :meth:`write_csv`; ``ValueError`` names the file and line."""
        import pandas as pd

        path = Path(path)
        with open(path, newline="", encoding="utf-8") as f:
            header = f.readline().rstrip("\r\n")
        if tuple(header.split(",")) != CSV_HEADER:
            raise ValueError(f"{path}:1: expected header {','.join(CSV_HEADER)}, got {header!r}")
        try:
            df = pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False,
                             engine="c")
        except pd.errors.ParserError as e:
            line = _parser_error_line(str(e))
            where = f"{path}:{line}" if line else str(path)
            raise ValueError(f"{where}: expected query_id,level,metric,value") from None
        if df.empty:
            return cls((), (), *(np.zeros(0, dtype=t) for t in (np.int64, np.int8, np.int64)),
                       np.zeros(0))
        bad_level = ~df["level"].isin(LEVELS)
        value = pd.to_numeric(df["value"], errors="coerce")
        bad_value = value.isna() & ~df["value"].str.strip().str.lower().isin(("nan",))
        for mask, problem in ((bad_level, lambda r: f"level {r['level']!r} is not doc or span"),
                              (bad_value, lambda r: f"value {r['value']!r} is not a number")):
            if mask.any():
                i = int(np.flatnonzero(mask.to_numpy())[0])
                raise ValueError(f"{path}:{i + 2}: {problem(df.iloc[i])}")
        # Restored after factorizing: one call per distinct name, and restore is a bijection.
        q_codes, q_names = pd.factorize(df["query_id"], sort=False)
        m_codes, m_names = pd.factorize(df["metric"], sort=False)
        q_names, m_names = ([restore(n) for n in names] for names in (q_names, m_names))
        levels = df["level"].map({name: i for i, name in enumerate(LEVELS)}).to_numpy(np.int8)
        return cls(tuple(q_names), tuple(m_names), q_codes.astype(np.int64), levels,
                   m_codes.astype(np.int64), value.to_numpy(np.float64))

    def to_frame(self):
        """The table as a pandas DataFrame: ``query_id, level, metric, value``."""
        import pandas as pd

        return pd.DataFrame({"query_id": pd.Categorical.from_codes(self.query_code, self.query_ids),
                             "level": pd.Categorical.from_codes(self.level_code, LEVELS),
                             "metric": pd.Categorical.from_codes(self.metric_code, self.metric_names),
                             "value": self.value})


def _parser_error_line(message: str) -> int | None:
    m = re.search(r"line (\d+)", message)
    return int(m.group(1)) if m else None
