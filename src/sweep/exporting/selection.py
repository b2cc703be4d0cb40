"""Which setting of a sweep folder to take: a given job, or the recommended one."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException

from sweep.decision.decide import decide
from sweep.reporting.frames import per_query_tables
from sweep.store.row import Row, load_rows

__all__ = ["Chosen", "ExportError", "choose", "recommended_job"]


class ExportError(ValueError):
    """Bad input to export or check: one line, exit 2."""


@dataclass(frozen=True)
class Chosen:
    """One job of a sweep folder: its row, its resolved config and Hydra's group choices."""

    sweep_dir: Path
    row: Row
    config: dict[str, Any]
    choices: dict[str, str]

    @property
    def job_dir(self) -> Path:
        return self.sweep_dir / str(self.row.job)

    @property
    def label(self) -> str:
        settings = self.row.settings
        plain = {"chunk.prefix": "none", "chunk.tokenizer": "cl100k_base",
                 # a framework's size and overlap are already chunk.size and chunk.overlap
                 "chunk.splitter.chunk_size": settings.get("chunk.size"),
                 "chunk.splitter.chunk_overlap": settings.get("chunk.overlap")}
        shown = {k: v for k, v in settings.items() if v is not None
                 and k.startswith(("chunk", "embed.model")) and plain.get(k) != v
                 and (k == "chunk.strategy" or v != settings.get("chunk.strategy"))}
        return " ".join(f"{k.split('.')[-1]}={str(v).rsplit('/', 1)[-1]}"
                        for k, v in shown.items())


def _rows(sweep_dir: Path) -> list[Row]:
    if not sweep_dir.is_dir():
        raise ExportError(f"{sweep_dir}: no such folder")
    rows = load_rows(sweep_dir)
    if not rows:
        raise ExportError(f"{sweep_dir}: no job rows (*/row.json); is it a sweep's folder?")
    return rows


def recommended_job(sweep_dir: Path, rows: list[Row] | None = None) -> int:
    """The job the sweep's report recommends (in a sweep of one setting, that setting); an
    error when there is none or several."""
    rows = rows if rows is not None else _rows(sweep_dir)
    try:
        tables = per_query_tables(rows)
    except ValueError as e:  # a damaged per_query.csv, named with its line
        raise ExportError(str(e)) from None
    decision = decide(rows, tables)
    picks = [d.chosen_job for d in decision.decisions if d.chosen_job is not None]
    if not picks:
        raise ExportError(f"{sweep_dir}: no recommended setting (no job finished with scores); "
                          "choose one with --job N")
    if len(picks) > 1:
        raise ExportError(f"{sweep_dir}: {len(picks)} recommended settings, one per dataset or "
                          f"scoring group (jobs {', '.join(map(str, picks))}); choose with --job N")
    return picks[0]


def choose(sweep_dir: Path, job: int | None) -> Chosen:
    """Job ``job`` of ``sweep_dir``, or its recommended setting when ``job`` is None."""
    sweep_dir = Path(sweep_dir)
    rows = _rows(sweep_dir)
    number = recommended_job(sweep_dir, rows) if job is None else job
    row = next((r for r in rows if r.job == number), None)
    if row is None:
        raise ExportError(f"{sweep_dir}: no job {number} (jobs: "
                          f"{', '.join(str(r.job) for r in rows)})")
    if not row.ok:
        raise ExportError(f"{sweep_dir}: job {number} is {row.status}: {row.error}")
    job_dir = sweep_dir / str(number)
    config_file = job_dir / "resolved_config.yaml"
    if not config_file.is_file():
        raise ExportError(f"{config_file}: missing; the job's folder is incomplete")
    config = _mapping(config_file, resolve=True)
    choices: dict[str, str] = {}
    hydra_file = job_dir / ".hydra" / "hydra.yaml"
    if hydra_file.is_file():
        found = (_mapping(hydra_file).get("hydra") or {}).get("runtime", {}).get("choices")
        choices = {str(k): str(v) for k, v in (found if isinstance(found, dict) else {}).items()
                   if v is not None and not str(k).startswith("hydra/")}
    return Chosen(sweep_dir, row, config, choices)


def _mapping(path: Path, resolve: bool = False) -> dict[str, Any]:
    """A YAML file sweep wrote, as a dict; a damaged one is an :class:`ExportError` naming
    the file and line."""
    try:
        loaded = OmegaConf.to_container(OmegaConf.load(path), resolve=resolve)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        problem = getattr(e, "problem", None) or type(e).__name__
        raise ExportError(f"{where}: not valid YAML ({problem}); the job's folder is "
                          "damaged") from None
    except (OmegaConfBaseException, UnicodeDecodeError, OSError) as e:
        raise ExportError(f"{path}: cannot be read ({type(e).__name__}: {e})") from None
    if not isinstance(loaded, dict):
        raise ExportError(f"{path}: not a mapping of settings; the job's folder is damaged")
    return loaded
