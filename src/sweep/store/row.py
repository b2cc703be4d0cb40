"""A job's result row: one typed value written as ``<job>/row.json`` and read back by the report.

The job writes it as soon as it ends (atomically), so a crash or Ctrl-C later
never loses it; the report, the results DataFrame and the tests all go
through :class:`Row`.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from sweep.core.errors import BadInput
from sweep.core.evalconfig import EvalConfig
from sweep.core.files import NotRegularFile, not_utf8, regular_file, write_text_atomic
from sweep.core.types import Dataset, describe_readers
from sweep.scoring.aggregate import MetricSummary, Summary
from sweep.scoring.diagnostics import Diagnostics
from sweep.scoring.table import ScoreTable
from sweep.store.stats import Stats

__all__ = [
    "ROW_FORMAT",
    "DatasetInfo",
    "Row",
    "RowError",
    "load_rows",
    "read_row",
    "unfinished_jobs",
]

log = logging.getLogger(__name__)

#: Bumped when the layout changes; rows of another format are not read.
ROW_FORMAT = 2
STATUSES = ("ok", "invalid", "failed")


class RowError(ValueError, BadInput):
    """A row.json that cannot be read; ``str()`` names the file and the problem."""


@dataclass(frozen=True)
class DatasetInfo:
    """Which evaluation set a row was scored on: by name for people, by content for tests.

    ``fingerprint`` hashes the texts as read; ``evaluation`` the source files and the
    questions as written (:meth:`Dataset.evaluation_key`), so rows of one folder read by
    two PDF readers are still compared on the same questions. ``readers`` says which
    reader read each document format (``pdf=pypdf, html=trafilatura``). Rows written
    before readers existed have neither, and are grouped by fingerprint.
    """

    name: str
    fingerprint: str
    n_documents: int
    n_queries: int
    evaluation: str = ""
    readers: str = ""

    @property
    def key(self) -> str:
        """What rows are grouped by: the same key means the same questions on the same files."""
        return self.evaluation or self.fingerprint

    @classmethod
    def of(cls, dataset: Dataset) -> DatasetInfo:
        return cls(
            dataset.name,
            dataset.fingerprint(),
            len(dataset.documents),
            len(dataset.queries),
            dataset.evaluation_key(),
            describe_readers(dataset.documents),
        )


@dataclass(frozen=True)
class Row:
    """What one job of a sweep produced.

    ``status`` is ``ok``, ``invalid`` (a setting that cannot run, ``error`` says
    why) or ``failed`` (a crash; the traceback is in ``<job>/error.txt``).
    ``summary`` holds every metric's mean and interval per level (ok rows only);
    ``eval`` the scoring settings it was scored with (its primary metric may
    fall back to the document level on a dataset without spans).
    """

    job: int
    status: str
    settings: Mapping[str, Any]
    eval: EvalConfig
    dataset: DatasetInfo | None = None
    overrides: tuple[str, ...] = ()
    error: str | None = None
    notes: tuple[str, ...] = ()
    stats: Stats = field(default_factory=Stats)
    summary: Summary | None = None
    #: Two-hop failure classes and abstention (ok rows only).
    diagnostics: Diagnostics | None = None
    #: The retriever's own ranking scored, when a re-ranker re-ordered it (see SettingResult).
    first_stage: Summary | None = None
    #: Parent retrieval: the ranking of the chunks themselves scored, beside the parents'.
    child: Summary | None = None
    #: The job's folder when read from disk (not saved: folders move).
    path: Path | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(
                f"row status must be one of {', '.join(STATUSES)}, got {self.status!r}"
            )
        if self.status == "ok" and self.summary is None:
            raise ValueError("an ok row needs its summary")

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def interval(self, level: str, metric: str) -> MetricSummary | None:
        return None if self.summary is None else self.summary.interval(level, metric)

    def mean(self, level: str, metric: str) -> float | None:
        m = self.interval(level, metric)
        return None if m is None or math.isnan(m.mean) else m.mean

    def file(self, name: str) -> Path | None:
        """A per-job file (``per_query.csv``, ``hits.jsonl``) when the row was read from disk
        and the file exists; :class:`NotRegularFile` when it is not a regular file, or leads
        out of the sweep folder (the job folder's parent) through a link."""
        if self.path is None:
            return None
        return regular_file(self.path / name, inside=self.path.parent)

    def per_query(self, level: str, metric: object) -> dict[str, float] | None:
        """One metric's per-query scores from ``per_query.csv`` (None without the file or
        the metric); ``ValueError`` naming the file when they are not the scores this row
        summarizes (another count of questions, another mean): rows deleted from it, or
        edited, would otherwise change what a check or a recommendation compares."""
        path = self.file("per_query.csv")
        if path is None:
            return None
        values = ScoreTable.read_csv(path).values(level, metric)
        if not values:
            return None
        summary = self.summary.levels.get(level) if self.summary is not None else None
        mean = self.mean(level, str(metric))  # (a Measure prints as its name: recall@5)
        if summary is not None and mean is not None:
            found = math.fsum(values.values()) / len(values)
            if len(values) != summary.n_queries or abs(found - mean) > 1e-6:
                raise ValueError(
                    f"{path}: {len(values)} questions with {level} {metric} (mean {found:.4f}), "
                    f"but {self.path / 'row.json'} counts {summary.n_queries} (mean {mean:.4f}): "
                    "the per-query scores are not the ones this job's row summarizes; the "
                    "folder is damaged"
                )
        return values

    # -- JSON ------------------------------------------------------------------

    def to_json(self) -> str:
        data = {
            "format": ROW_FORMAT,
            "job": self.job,
            "status": self.status,
            "error": self.error,
            "settings": dict(self.settings),
            "overrides": list(self.overrides),
            "notes": list(self.notes),
            "dataset": None if self.dataset is None else vars(self.dataset),
            "eval": self.eval.to_dict(),
            "stats": self.stats.to_columns(),
            "summary": None if self.summary is None else self.summary.to_dict(),
            "diagnostics": None if self.diagnostics is None else self.diagnostics.to_dict(),
            "first_stage": None if self.first_stage is None else self.first_stage.to_dict(),
            "child": None if self.child is None else self.child.to_dict(),
        }
        return json.dumps(data, indent=2, default=str)

    @classmethod
    def from_json(cls, text: str, *, path: Path | None = None) -> Row:
        where = str(path / "row.json") if path is not None else "row"
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise RowError(f"{where}: not JSON ({e.msg} at line {e.lineno})") from None
        except RecursionError:  # sweep writes a few levels; thousands are damage or an attack
            raise RowError(f"{where}: nested too deeply to be a row") from None
        if not isinstance(data, dict):
            raise RowError(f"{where}: not a row object")
        if data.get("format") != ROW_FORMAT:
            raise RowError(
                f"{where}: written by another version of sweep (row format "
                f"{data.get('format', 1)}, this version reads {ROW_FORMAT}); "
                "rerun that sweep"
            )
        try:
            return cls(
                job=int(data["job"]),
                status=str(data["status"]),
                error=data.get("error"),
                settings=dict(data["settings"]),
                overrides=tuple(str(o) for o in data.get("overrides", ())),
                notes=tuple(str(n) for n in data.get("notes", ())),
                dataset=None if data.get("dataset") is None else DatasetInfo(**data["dataset"]),
                eval=EvalConfig.from_dict(data["eval"]),
                stats=Stats.from_columns(data.get("stats") or {}),
                summary=None if data.get("summary") is None else Summary.from_dict(data["summary"]),
                diagnostics=(
                    None
                    if data.get("diagnostics") is None
                    else Diagnostics.from_dict(data["diagnostics"])
                ),
                first_stage=(
                    None
                    if data.get("first_stage") is None
                    else Summary.from_dict(data["first_stage"])
                ),
                child=None if data.get("child") is None else Summary.from_dict(data["child"]),
                path=path,
            )
        except KeyError as e:
            raise RowError(f"{where}: missing key {e.args[0]!r}") from None
        except (TypeError, ValueError) as e:
            raise RowError(f"{where}: {e}") from None

    def save(self, job_dir: Path) -> Path:
        """Write ``job_dir/row.json`` atomically: a job killed mid-write leaves no half row."""
        return write_text_atomic(Path(job_dir) / "row.json", self.to_json())

    def with_stats(self, **changes: Any) -> Row:
        return replace(self, stats=replace(self.stats, **changes))


def read_row(path: Path) -> Row:
    """The row saved at ``path`` (``<sweep>/<job>/row.json``); :class:`RowError` names the
    file and what is wrong with it (missing, not a regular file, a link leading out of the
    sweep folder, not UTF-8, not a row)."""
    path = Path(path)
    try:
        if regular_file(path, inside=path.parent.parent) is None:
            raise RowError(f"{path}: missing")
        return Row.from_json(path.read_text(encoding="utf-8"), path=path.parent)
    except UnicodeDecodeError as e:
        raise RowError(not_utf8(path, e.object)) from None
    except NotRegularFile as e:
        raise RowError(str(e)) from None
    except OSError as e:
        raise RowError(f"{path}: cannot be read ({e.strerror or e})") from None


def load_rows(sweep_dir: Path, *, warn: bool = True) -> list[Row]:
    """Every job's row under a sweep folder, in job order.

    One damaged row (a job killed while writing it, a row of another version, a FIFO in
    its place) must not cost the table of all the others: it is skipped, with a warning
    unless ``warn`` is false (a caller that says itself what the damage means).
    """
    rows = []
    for path in sorted(Path(sweep_dir).glob("*/row.json")):
        try:
            rows.append(read_row(path))
        except RowError as e:
            if warn:
                log.warning("skipped a row: %s", e)
    rows.sort(key=lambda r: r.job)
    return rows


def unfinished_jobs(sweep_dir: Path) -> tuple[int, ...]:
    """Jobs that started and saved no row: a folder ``<job>/`` without ``row.json`` (Hydra
    makes it when the job starts; the row is its last write). Killed, or still running."""
    try:
        folders = [p for p in Path(sweep_dir).iterdir() if p.name.isdigit() and p.is_dir()]
    except OSError:
        return ()
    return tuple(sorted(int(p.name) for p in folders if not (p / "row.json").exists()))


def jobs_of(rows: Sequence[Row]) -> dict[int, Row]:
    return {r.job: r for r in rows}
