"""A sweep's results as pandas DataFrames: for the report's files and for a notebook.

    import sweep.reporting.frames as r
    df = r.load("outputs/sweep/2026-12-01_10-00-00")      # one row per setting
    r.grid(df, "span.recall@5")                           # chunk.size x chunk.overlap
    pq = r.load_per_query("outputs/sweep/2026-12-01_10-00-00")  # job, query_id, level, metric, value, type

Columns of :func:`load`: the settings first (``chunk.size``, ``chunk.overlap``...),
then ``job``, ``status``, ``error``, the comparison with the best (``vs_best``,
``recommended``, ``diff_from_best``, ``p_value``, ``p_holm``), the row's stats, and every
aggregate as ``level.metric@k`` with its 95% interval in ``.lo``/``.hi``; with a
re-ranker, the first stage's as ``first_stage.level.metric@k`` (+ ``.lo``/``.hi``); with
parent retrieval, the chunks' own ranking as ``child.level.metric@k``.
``results.csv`` is this frame, written by :func:`write_results`.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from sweep.core import csvcells
from sweep.core.files import regular_file, write_text_atomic
from sweep.core.measures import Primary
from sweep.core.settings import SETTINGS, varied_settings
from sweep.decision.decide import SweepDecision, decide
from sweep.reporting.alerts import read_hub
from sweep.scoring.table import ScoreTable
from sweep.store.row import Row, load_rows
from sweep.store.traces import read_traces

__all__ = [
    "combine_per_query",
    "frame",
    "grid",
    "load",
    "load_per_query",
    "per_query_tables",
    "query_types",
    "write_results",
]

log = logging.getLogger(__name__)


def setting_columns(rows: Sequence[Row]) -> list[str]:
    """Every setting key any row records: the known ones in table order, then the others."""
    known = [s.key for s in SETTINGS]
    extra = sorted({k for r in rows for k in r.settings} - set(known))
    return [k for k in known if any(k in r.settings for r in rows)] + extra


def _record(row: Row, decision: SweepDecision, settings: Sequence[str]) -> dict[str, Any]:
    rec: dict[str, Any] = {k: row.settings.get(k) for k in settings}
    c = decision.comparison(row.job)
    d = decision.of(row.job)
    untested = d is not None and row.job in d.untested
    rec.update(
        {
            "job": row.job,
            "status": row.status,
            "error": row.error or "",
            "dataset": row.dataset.name if row.dataset else "",
            "overrides": " ".join(row.overrides),
            "notes": " | ".join(row.notes),
            "vs_best": "untested" if untested else (c.verdict if c else ""),
            # The job export --recommended and check take: they refuse a folder whose rows
            # no longer pick it (sweep.reporting.selection.recommended_job).
            "recommended": d is not None and d.chosen_job == row.job,
            "diff_from_best": c.diff if c else None,
            "p_value": c.p_value if c else None,
            "p_holm": c.p_holm if c else None,
            "n_needed": c.n_needed if c else None,
        }
    )
    # A row that never ran a stage has only its time to report.
    rec.update(row.stats.to_columns() if row.ok else {"total_s": row.stats.total_s})
    if row.diagnostics is not None:
        rec.update(row.diagnostics.columns())
    hub = read_hub(row.path) if row.ok else None
    if hub is not None:  # the largest share of questions whose top 5 hold one same chunk
        rec["hub.share"] = hub["share"]
    if row.summary is not None:
        for level, lv in row.summary.levels.items():
            rec[f"{level}.n_queries"] = lv.n_queries
            rec[f"{level}.n_excluded"] = lv.n_excluded
            for metric, m in lv.metrics.items():
                rec[f"{level}.{metric}"] = m.mean
                rec[f"{level}.{metric}.lo"] = m.ci_low
                rec[f"{level}.{metric}.hi"] = m.ci_high
    if row.first_stage is not None:  # before re-ranking, next to the re-ranked columns
        for level, lv in row.first_stage.levels.items():
            for metric, m in lv.metrics.items():
                rec[f"first_stage.{level}.{metric}"] = m.mean
                rec[f"first_stage.{level}.{metric}.lo"] = m.ci_low
                rec[f"first_stage.{level}.{metric}.hi"] = m.ci_high
    if row.child is not None:  # parent retrieval: the chunks themselves, beside their parents
        for level, lv in row.child.levels.items():
            for metric, m in lv.metrics.items():
                rec[f"child.{level}.{metric}"] = m.mean
                rec[f"child.{level}.{metric}.lo"] = m.ci_low
                rec[f"child.{level}.{metric}.hi"] = m.ci_high
    return rec


def frame(rows: Sequence[Row], decision: SweepDecision) -> pd.DataFrame:
    """One row per setting, settings first, then status, comparison, stats and metrics."""
    settings = setting_columns(rows)
    records = [_record(r, decision, settings) for r in rows]
    df = pd.DataFrame(records)
    # A count stays a count when an invalid row leaves it empty ("10", not "10.0").
    for col in df.columns:
        values = [rec[col] for rec in records if rec.get(col) is not None]
        if values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            df[col] = df[col].astype("Int64")
    df.attrs["settings"] = settings
    df.attrs["varied"] = varied_settings([r.settings for r in rows])
    return df


def per_query_tables(rows: Sequence[Row]) -> dict[int, ScoreTable]:
    """Each ok job's per-query scores (``<job>/per_query.csv``); a job without the file is
    left out (the decision marks it untested)."""
    out = {}
    for r in rows:
        path = r.file("per_query.csv") if r.ok else None
        if path is not None:
            out[r.job] = ScoreTable.read_csv(path)
    return out


def load(sweep_dir: str | Path) -> pd.DataFrame:
    """The results of a sweep folder, as ``results.csv`` holds them, from its saved rows."""
    rows = load_rows(Path(sweep_dir))
    return frame(rows, decide(rows, per_query_tables(rows)))


def query_types(rows: Sequence[Row]) -> dict[str, str | None]:
    """Query id -> type, from the first ok job's traces (every job traces the same queries)."""
    for r in rows:
        path = r.file("hits.jsonl") if r.ok else None
        if path is not None:
            return {q: t.type for q, t in read_traces(path).items()}
    return {}


def load_per_query(sweep_dir: str | Path) -> pd.DataFrame:
    """Every ok job's per-query scores in long form: ``job, query_id, level, metric, value, type``."""
    rows = load_rows(Path(sweep_dir))
    tables = per_query_tables(rows)
    types = query_types(rows)
    parts = []
    for job, table in tables.items():
        part = table.to_frame()
        part.insert(0, "job", job)
        parts.append(part)
    columns = ["job", "query_id", "level", "metric", "value", "type"]
    if not parts:
        return pd.DataFrame(columns=columns)
    df = pd.concat(parts, ignore_index=True)
    for col in ("query_id", "level", "metric"):
        df[col] = df[col].astype(str)
    df["type"] = df["query_id"].map(types)
    return df[columns]


def grid(
    df: pd.DataFrame, metric: str, *, rows: str = "chunk.size", columns: str = "chunk.overlap"
) -> pd.DataFrame:
    """One metric over chunk size (rows) x overlap (columns), the usual grid, ok settings only.

    ``metric`` is a column (``span.recall@5``) or a primary-style name
    (``span/recall@5``). Any other setting that varies becomes an outer row level.
    """
    name = metric if metric in df.columns else Primary.parse(metric).column
    if name not in df.columns:
        raise KeyError(f"no column {metric!r}; metric columns look like span.recall@5")
    ok = df[df["status"] == "ok"]
    varied = df.attrs.get("varied") or [
        c for c in (s.key for s in SETTINGS) if c in df.columns and df[c].astype(str).nunique() > 1
    ]
    outer = [k for k in varied if k not in (rows, columns) and k in df.columns]
    table = ok.pivot(index=[*outer, rows], columns=columns, values=name)
    table.columns.name = columns
    return table


def write_results(path: Path, df: pd.DataFrame) -> None:
    csvcells.write_csv(path, df)  # text a spreadsheet would run as a formula is quoted


def combine_per_query(rows: Sequence[Row], out: Path) -> None:
    """All jobs' per-query scores in one long table with a job column.

    A job's file never changes once its row is saved, so when the table
    already holds the first jobs (``per_query.jobs.json`` records which, and
    how big each file was) only the new jobs are appended: the sweep calls
    this after every job and would otherwise recopy every earlier job each time.
    """
    manifest_path = out.with_name(out.stem + ".jobs.json")
    entries = []
    for r in rows:
        path = r.file("per_query.csv") if r.ok else None
        if path is not None:
            st = path.stat()
            entries.append([r.job, str(path), st.st_size, st.st_mtime_ns])
    try:
        # A FIFO would block: never opened (and never replaced); a link out of the folder is
        # never read, and replaced below like a damaged manifest.
        regular_file(manifest_path, inside=out.parent)
        old = json.loads(manifest_path.read_text(encoding="utf-8"))
        done, size = old["entries"], int(old["size"])
        # Appended to only when it is the file sweep wrote: a link in its place is replaced,
        # never followed to a file of someone else's.
        append = (
            entries[: len(done)] == done
            and stat.S_ISREG(out.lstat().st_mode)
            and out.stat().st_size == size
        )
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        append, done = False, []
    if not append:
        done = []
        write_text_atomic(out, "job,query_id,level,metric,value\n")
    with open(out, "a", encoding="utf-8", newline="") as f:
        for job, path, _, _ in entries[len(done) :]:
            with open(path, encoding="utf-8", newline="") as src:
                text = src.read()
            body = text.split("\n", 1)[1] if "\n" in text else ""
            if '"' not in body:  # no quoted cell: a line is a row (30x faster than csv)
                if body:
                    prefix = f"{job},"
                    f.write(prefix + body.rstrip("\n").replace("\n", "\n" + prefix) + "\n")
                continue
            # Row by row: a quoted query id may hold a line break.
            rows_in = csv.reader(io.StringIO(body, newline=""))
            csvcells.write_rows(f, ([job, *map(csvcells.restore, row)] for row in rows_in))
    write_text_atomic(manifest_path, json.dumps({"size": out.stat().st_size, "entries": entries}))
