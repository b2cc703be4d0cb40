"""Everything one sweep's report is rendered from, read once from its folder.

The rows (``<job>/row.json``), their per-query scores (``<job>/per_query.csv``),
the decision made from them, the results DataFrame, and per group of
comparable rows the breakdown by query type and the worst queries of the
chosen setting (from ``<job>/hits.jsonl``). ``sweep.reporting.tables``,
``sweep.reporting.pictures`` and ``sweep.reporting.html`` render it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from sweep.core.settings import setting_label, varied_settings
from sweep.decision.agreement import (
    HAND_WRITTEN,
    SYNTHETIC,
    RankingAgreement,
    agreement,
    split_by_source,
)
from sweep.decision.breakdown import (
    QueryRow,
    TypeBreakdown,
    type_breakdown,
    type_metric_breakdown,
    worst_first,
)
from sweep.decision.decide import Decision, SweepDecision, decide, pick
from sweep.reporting.alerts import read_alerts, row_alerts
from sweep.reporting.frames import frame, per_query_tables
from sweep.scoring.table import ScoreTable
from sweep.store.row import Row, load_rows, unfinished_jobs
from sweep.store.traces import QueryTrace, read_traces

__all__ = ["GroupView", "SweepReport", "build_report", "report_of_rows"]


@dataclass(frozen=True)
class GroupView:
    """One group of comparable rows: its decision, and the per-query views of it."""

    decision: Decision
    breakdown: TypeBreakdown | None
    worst: tuple[QueryRow, ...]
    worst_setting: str
    #: each type on its own metric (eval.type_metrics): fact mrr, multi complete, graded ndcg...
    type_metrics: TypeBreakdown | None = None
    #: synthetic vs hand-written questions, when the set mixes them
    agreement: RankingAgreement | None = None


@dataclass(frozen=True)
class SweepReport:
    sweep_dir: Path
    rows: tuple[Row, ...]
    decision: SweepDecision
    frame: pd.DataFrame
    keys: tuple[str, ...]  # settings that vary: the table's first columns
    labels: Mapping[int, str]  # job -> "size=256 overlap=0"
    groups: tuple[GroupView, ...]
    #: jobs that started and saved no row (a killed sweep, or one still running)
    unfinished: tuple[int, ...] = ()
    #: what makes the numbers untrustworthy, shown beside the recommendation: a model that
    #: cannot read the corpus's language, a chunk in every top 5 (sweep.reporting.alerts)
    warnings: tuple[str, ...] = ()

    @property
    def ok(self) -> list[Row]:
        return [r for r in self.rows if r.ok]

    def row(self, job: int) -> Row:
        return next(r for r in self.rows if r.job == job)


def _traces(row: Row | None) -> dict[str, QueryTrace]:
    path = row.file("hits.jsonl") if row is not None else None
    return read_traces(path) if path is not None else {}


def _view(
    d: Decision,
    rows: Mapping[int, Row],
    labels: Mapping[int, str],
    tables: Mapping[int, ScoreTable],
) -> GroupView:
    if not d.scores:
        return GroupView(d, None, (), "")
    job = d.chosen_job
    chosen = _traces(rows.get(job)) if job is not None else {}
    # Every job of a group traces the same queries, so any one gives their types.
    typed = chosen or _traces(next((rows[j] for j in d.scores if rows[j].file("hits.jsonl")), None))
    types = {q: t.type for q, t in typed.items()}
    breakdown = type_breakdown(d.scores, types)
    per_type = type_metric_breakdown(tables, sorted(d.scores), types, d.group.eval)
    agree = None
    split = split_by_source(d.scores, {q: t.source for q, t in typed.items()})
    if split is not None:
        ev = d.group.eval
        agree = agreement(
            *split,
            names=(SYNTHETIC, HAND_WRITTEN),
            picks=(pick(split[0], rows, ev), pick(split[1], rows, ev)),
            n_boot=ev.n_boot,
            seed=ev.seed,
        )
    worst: tuple[QueryRow, ...] = ()
    if job is not None and job in d.scores:
        worst = tuple(worst_first(d.scores, job, chosen))
    return GroupView(
        d, breakdown, worst, labels.get(job, "") if job is not None else "", per_type, agree
    )


def build_report(sweep_dir: Path) -> SweepReport | None:
    """Read a sweep folder; None when no job has finished."""
    sweep_dir = Path(sweep_dir)
    rows = load_rows(sweep_dir)
    if not rows:
        return None
    return report_of_rows(sweep_dir, rows, unfinished_jobs(sweep_dir))


def report_of_rows(
    sweep_dir: Path, rows: list[Row], unfinished: tuple[int, ...] = ()
) -> SweepReport:
    """The report of saved rows (of one folder, or of several sweeps on one table)."""
    tables = per_query_tables(rows)
    decision = decide(rows, tables)
    keys = tuple(varied_settings([r.settings for r in rows]))
    labels = {r.job: setting_label(r.settings, keys) for r in rows}
    by_job = {r.job: r for r in rows}
    groups = tuple(_view(d, by_job, labels, tables) for d in decision.decisions)
    df = frame(rows, decision)
    records = {int(r["job"]): r for r in df.to_dict("records")} if "job" in df else {}
    warnings = (*read_alerts(sweep_dir), *row_alerts(rows, records, keys))
    return SweepReport(
        sweep_dir,
        tuple(rows),
        decision,
        df,
        keys,
        labels,
        groups,
        unfinished,
        tuple(dict.fromkeys(warnings)),
    )
