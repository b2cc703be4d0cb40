"""Which setting of a sweep folder to take: a given job, or the recommended one."""

from __future__ import annotations

import csv
import logging
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from sweep.core.configfiles import ConfigFileError, read_yaml
from sweep.core.errors import BadInput
from sweep.core.files import NotRegularFile, not_utf8, regular_file
from sweep.core.settings import upgrade_config
from sweep.core.tokenization import DEFAULT_TOKENIZER
from sweep.decision.decide import decide
from sweep.reporting.frames import per_query_tables
from sweep.store.row import Row, RowError, load_rows, read_row

__all__ = ["ChosenJob", "ExportError", "choose_job", "recommended_job"]

log = logging.getLogger("sweep")


class ExportError(ValueError, BadInput):
    """Bad input to export or check: one line, exit 2."""


@dataclass(frozen=True)
class ChosenJob:
    """One job of a sweep folder: its row, and (read when asked for) its resolved config and
    Hydra's group choices."""

    sweep_dir: Path
    row: Row

    @property
    def job_dir(self) -> Path:
        return self.sweep_dir / str(self.row.job)

    @cached_property
    def _hydra(self) -> dict[str, Any]:
        """``hydra.runtime`` of the job's ``.hydra/hydra.yaml`` ({} without the file)."""
        path = self.job_dir / ".hydra" / "hydra.yaml"
        if self.file(".hydra", "hydra.yaml") is None:
            return {}
        hydra = _mapping(path, self.sweep_dir).get("hydra")
        runtime = hydra.get("runtime") if isinstance(hydra, dict) else None
        if not isinstance(runtime, dict):
            raise ExportError(f"{path}: no hydra.runtime section; the job's folder is damaged")
        return runtime

    @cached_property
    def config(self) -> dict[str, Any]:
        """The job's resolved config, as saved: plain values, nothing resolved (a literal
        ``${oc.env:KEY}`` stays that string); a relative dataset path is made absolute
        against the folder the sweep ran in (so it reads the same documents from anywhere)."""
        path = self.job_dir / "resolved_config.yaml"
        if self.file("resolved_config.yaml") is None:
            raise ExportError(f"{path}: missing; the job's folder is incomplete")
        config = upgrade_config(_mapping(path, self.sweep_dir))  # a folder of any layout
        for key in ("dataset", "chunk"):
            if not isinstance(config.get(key), dict):
                raise ExportError(f"{path}: no {key} settings; the job's folder is damaged")
        where = config["dataset"].get("path")
        cwd = self._hydra.get("cwd")
        if isinstance(where, str) and not Path(where).is_absolute() and isinstance(cwd, str):
            config["dataset"]["path"] = str(Path(cwd) / where)
        return config

    @cached_property
    def choices(self) -> dict[str, str]:
        """Hydra's group choices (``chunk: langchain``); {} when the job kept none."""
        found = self._hydra.get("choices")
        return {
            str(k): str(v)
            for k, v in (found if isinstance(found, dict) else {}).items()
            if v is not None and not str(k).startswith("hydra/")
        }

    def file(self, *parts: str) -> Path | None:
        """The job's file ``<job>/<parts...>`` when it is there; an :class:`ExportError` when
        it is not a regular file or leads out of the sweep folder through a link (a sweep
        folder is untrusted input: nothing outside it is read)."""
        try:
            return regular_file(self.job_dir.joinpath(*parts), inside=self.sweep_dir)
        except NotRegularFile as e:
            raise ExportError(str(e)) from None

    @property
    def label(self) -> str:
        settings = self.row.settings
        plain = {
            "chunk.prefix": "none",
            "chunk.tokenizer": DEFAULT_TOKENIZER,
            "retrieve": "dense",
            "rerank": "none",
            # a framework's size and overlap are already chunk.size and chunk.overlap
            "chunk.splitter.chunk_size": settings.get("chunk.size"),
            "chunk.splitter.chunk_overlap": settings.get("chunk.overlap"),
        }
        shown = {
            k: v
            for k, v in settings.items()
            if v is not None
            and k.startswith(("chunk", "embed.model", "retrieve", "rerank"))
            and plain.get(k) != v
            and (k == "chunk.strategy" or v != settings.get("chunk.strategy"))
            and not (k == "embed.model" and settings.get("retrieve") == "bm25")
        }
        return " ".join(f"{k.split('.')[-1]}={str(v).rsplit('/', 1)[-1]}" for k, v in shown.items())


def _rows(sweep_dir: Path) -> list[Row]:
    if not sweep_dir.is_dir():
        raise ExportError(f"{sweep_dir}: no such folder")
    rows = load_rows(sweep_dir, warn=False)  # a damaged row that matters is an error below
    if not rows:
        raise ExportError(f"{sweep_dir}: no job rows (*/row.json); is it a sweep's folder?")
    return rows


def _reported(sweep_dir: Path, option: str) -> tuple[set[int] | None, set[int]]:
    """The jobs the folder's results.csv marks recommended (its ``recommended`` column; None
    in a table an older sweep wrote, which has none), and the jobs it lists; an error when
    it cannot say, so the rows are never the only word on what was recommended."""
    path = sweep_dir / "results.csv"
    rebuild = (
        f"python -m sweep.report {sweep_dir} rebuilds it from the rows; or name the job "
        f"with {option} N"
    )
    try:
        if regular_file(path, inside=sweep_dir) is None:
            raise ExportError(
                f"{path}: missing, so the recommendation cannot be checked; {rebuild}"
            )
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            columns = reader.fieldnames or ()
            if "job" not in columns:
                raise ExportError(f"{path}: no job column (damaged); {rebuild}")
            recorded = "recommended" in columns  # (an older sweep's table has no such column)
            jobs, listed = set(), set()
            for r in reader:
                flag = r["recommended"] if recorded else "False"
                if flag not in ("True", "False") or not (r["job"] or "").isdigit():
                    raise ExportError(
                        f"{path}:{reader.line_num}: job {r['job']!r}, recommended "
                        f"{flag!r}: not a job number and True or False; the file "
                        f"is damaged; {rebuild}"
                    )
                listed.add(int(r["job"]))
                if flag == "True":
                    jobs.add(int(r["job"]))
            return (jobs if recorded else None), listed
    except UnicodeDecodeError:
        raise ExportError(f"{not_utf8(path)}; {rebuild}") from None
    except csv.Error as e:
        raise ExportError(f"{path}: not CSV ({e}); {rebuild}") from None
    except NotRegularFile as e:
        raise ExportError(f"{e}; {rebuild}") from None
    except OSError as e:
        raise ExportError(f"{path}: cannot be read ({e.strerror or e}); {rebuild}") from None


def recommended_job(sweep_dir: Path, rows: list[Row] | None = None, option: str = "--job") -> int:
    """The job the sweep's report recommends (in a sweep of one setting, that setting); an
    error when there is none or several, when a row or a finished job's per-query scores
    cannot be read (the recommendation, recomputed without them, could differ from the
    report's), or when the rows no longer recommend the job results.csv records (its row
    is gone, or the folder changed after its report). ``option`` is how the user names a
    job instead."""
    rows = rows if rows is not None else _rows(sweep_dir)
    reported, listed = _reported(sweep_dir, option)
    by_job = {r.job: r for r in rows}
    for job in sorted(reported if reported is not None else listed):
        if job not in by_job:
            says = "recommends" if reported is not None else "lists"
            raise ExportError(
                f"{_unread(sweep_dir / str(job) / 'row.json')}; results.csv "
                f"{says} job {job}, and no other job is taken in its place: "
                f"name the job with {option} N"
            )
    loaded = {r.path.resolve() for r in rows if r.path is not None}
    for path in sorted(sweep_dir.glob("*/row.json")):
        if path.parent.resolve() not in loaded:
            raise ExportError(
                f"{_unread(path)}, so the recommendation cannot be recomputed; "
                f"name the job with {option} N"
            )
    for r in rows:
        if r.ok and r.file("per_query.csv") is None:
            raise ExportError(
                f"{sweep_dir / str(r.job) / 'per_query.csv'}: missing, so the "
                f"recommendation cannot be recomputed; name the job with "
                f"{option} N"
            )
    try:
        tables = per_query_tables(rows)
    except ValueError as e:  # a damaged per_query.csv, named with its line
        raise ExportError(str(e)) from None
    decision = decide(rows, tables)
    picks = [d.chosen_job for d in decision.decisions if d.chosen_job is not None]
    if not picks:
        raise ExportError(
            f"{sweep_dir}: no recommended setting (no job finished with scores); "
            f"choose one with {option} N"
        )
    if len(picks) > 1:
        raise ExportError(
            f"{sweep_dir}: {len(picks)} recommended settings, one per dataset or "
            f"scoring group (jobs {', '.join(map(str, picks))}); choose with "
            f"{option} N"
        )
    if reported is None:  # an older sweep's table: every job it lists has its row (above)
        log.warning(
            "%s has no recommended column (an older sweep wrote it): the "
            "recommendation is recomputed from its rows; python -m sweep.report %s "
            "records it",
            sweep_dir / "results.csv",
            sweep_dir,
        )
    elif reported != {picks[0]}:
        recorded = f"job {', '.join(map(str, sorted(reported)))}" if reported else "none"
        raise ExportError(
            f"{sweep_dir}: its rows recommend job {picks[0]}, its results.csv {recorded}: the "
            f"folder changed after its report (python -m sweep.report {sweep_dir} rebuilds "
            f"it); or name the job with {option} N"
        )
    return picks[0]


def choose_job(sweep_dir: Path, job: int | None, option: str = "--job") -> ChosenJob:
    """Job ``job`` of ``sweep_dir``, or its recommended setting when ``job`` is None."""
    sweep_dir = Path(sweep_dir)
    rows = _rows(sweep_dir)
    number = recommended_job(sweep_dir, rows, option) if job is None else job
    row = next((r for r in rows if r.job == number), None)
    if row is None and (sweep_dir / str(number) / "row.json").exists():
        raise ExportError(_unread(sweep_dir / str(number) / "row.json"))
    if row is None:
        raise ExportError(
            f"{sweep_dir}: no job {number} (jobs: {', '.join(str(r.job) for r in rows)})"
        )
    if not row.ok:
        raise ExportError(f"{sweep_dir}: job {number} is {row.status}: {row.error}")
    return ChosenJob(sweep_dir, row)


def _unread(path: Path) -> str:
    """Why the row at ``path`` was not read: ``<path>: missing`` or its damage."""
    try:
        read_row(path)
    except RowError as e:
        return str(e)
    return f"{path}: changed while it was read"  # pragma: no cover - a race with a writer


def _mapping(path: Path, sweep_dir: Path) -> dict[str, Any]:
    """A YAML file sweep wrote, as a dict of plain values: read as data (no tag builds an
    object, no alias expands, no interpolation resolves, nothing outside ``sweep_dir`` is
    read: a sweep folder is untrusted input); a damaged one is an :class:`ExportError`
    naming the file and line."""
    try:
        loaded = read_yaml(path, inside=sweep_dir)
    except ConfigFileError as e:
        raise ExportError(f"{e}; the job's folder is damaged") from None
    if not isinstance(loaded, dict):
        raise ExportError(f"{path}: not a mapping of settings; the job's folder is damaged")
    return loaded
