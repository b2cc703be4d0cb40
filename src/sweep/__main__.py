"""``python -m sweep chunk.size=128,256,512 chunk.overlap=0,64``: sweep chunking settings.

Hydra composes the config (``conf/``) and expands the grid; each job builds its
stages with ``instantiate`` and hands plain objects to ``sweep.pipeline``.
"""

from __future__ import annotations

import inspect
import json
import logging
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.errors import InstantiationException
from hydra.types import RunMode
from hydra.utils import get_method, instantiate
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import InterpolationResolutionError

from sweep import progress
from sweep.config import register_resolvers
from sweep.data import Dataset
from sweep.files import write_text_atomic
from sweep.loading import DatasetError
from sweep.pipeline import EvalSettings, SettingResult, evaluate_setting
from sweep.report import Primary, write_report

log = logging.getLogger("sweep")
# faiss reports at INFO that its AVX2 build is absent before it loads the
# generic one; on the console that reads like an error.
logging.getLogger("faiss.loader").setLevel(logging.WARNING)
register_resolvers()

#: Config keys that describe a setting; they become the first columns of a row.
SETTING_KEYS = ("chunk.strategy", "chunk.size", "chunk.overlap", "chunk.prefix",
                "chunk.tokenizer", "embed.model", "index._target_")

_datasets: dict[str, Dataset] = {}
#: The running sweep's folder, for the Ctrl-C handler outside Hydra's job.
_sweep_dir: Path | None = None


def load_dataset(node: DictConfig) -> Dataset:
    """Load (once per process: all jobs of a sweep share it) and validate the dataset."""
    key = OmegaConf.to_yaml(node, resolve=True)
    if key not in _datasets:
        t0 = time.perf_counter()
        try:
            _datasets[key] = instantiate(node)
        except InstantiationException as e:
            raise _cause(e) from None
        ds = _datasets[key]
        log.info("dataset %s: %d documents, %d queries (%.1fs)", ds.name, len(ds.documents),
                 len(ds.queries), time.perf_counter() - t0)
    return _datasets[key]


#: Override keys that change where or how loudly a job runs, not what it measures.
_NOT_SETTINGS = ("hydra.", "embed.cache_dir", "embed.show_progress", "name")


def job_settings(cfg: DictConfig, overrides: list[str]) -> dict[str, Any]:
    """The row's setting columns: the usual keys plus any other key this job overrides,
    so rows that differ only in, say, embed.max_seq_length can be told apart."""
    settings = {key: OmegaConf.select(cfg, key, default=None) for key in SETTING_KEYS}
    for override in overrides:
        key = override.split("=", 1)[0].lstrip("+~")
        if key in settings or key.startswith(_NOT_SETTINGS):
            continue
        if "." not in key:  # a config group choice, e.g. dataset=tiny: its name says it
            value = override.split("=", 1)[1] if "=" in override else None
        else:
            value = OmegaConf.select(cfg, key, default=None)
            if OmegaConf.is_config(value):
                value = OmegaConf.to_container(value, resolve=True)
        settings[key] = value
    return settings


def _accepts(target: str, name: str) -> bool:
    try:
        params = inspect.signature(get_method(target)).parameters.values()
    except Exception:  # a bad _target_ is reported by instantiate() right after
        return False
    return any(p.name == name or p.kind is p.VAR_KEYWORD for p in params)


def build_stages(cfg: DictConfig) -> tuple[Any, Any, Any, Any]:
    """Instantiate embedder, chunker, index and retriever; a bad setting raises ValueError."""
    embedder = instantiate(cfg.embed)
    extra = {}
    if _accepts(cfg.chunk._target_, "embed_fn"):
        extra["embed_fn"] = embedder.embed_documents
    chunker = instantiate(cfg.chunk, **extra)
    return embedder, chunker, instantiate(cfg.index), instantiate(cfg.retrieve)


def eval_settings(cfg: DictConfig) -> EvalSettings:
    e = cfg.eval
    return EvalSettings(ks=tuple(int(k) for k in e.k), budgets=tuple(int(b) for b in e.budgets),
                        gain=str(e.gain), min_coverage=float(e.min_coverage),
                        n_boot=int(e.n_boot), seed=int(e.seed))


def _write_job_files(job_dir: Path, dataset: Dataset, result: SettingResult, top_k: int) -> None:
    result.scores.write_csv(job_dir / "per_query.csv")
    by_id = dataset.by_id()
    with open(job_dir / "hits.jsonl", "w", encoding="utf-8") as f:
        for q in dataset.queries:
            ids = result.runs.get(q.query_id, [])[:top_k]
            hits = []
            for rank, i in enumerate(ids, 1):
                c = result.chunks[i]
                hit = {"rank": rank, "chunk_id": c.chunk_id, "doc_id": c.doc_id, "start": c.start,
                       "end": c.end, "n_tokens": c.n_tokens}
                if rank <= 3:  # enough to read why a low row failed, without copying the index
                    hit["text"] = c.text
                hits.append(hit)
            gold = [{"doc_id": j.doc_id, "grade": j.grade, "start": j.start, "end": j.end,
                     "text": (by_id[j.doc_id].text[j.start:j.end] if j.is_span else None)}
                    for j in q.relevant if j.grade > 0]
            f.write(json.dumps({"query_id": q.query_id, "query": q.query, "type": q.type,
                                "gold": gold, "hits": hits}, ensure_ascii=False) + "\n")


def _int_list(ev: DictConfig, key: str, *, required: bool) -> list[int]:
    value = ev.get(key)
    items = list(value) if OmegaConf.is_list(value) or isinstance(value, (list, tuple)) else None
    if items is None or (required and not items) or not all(
            isinstance(v, int) and not isinstance(v, bool) and 0 < v < 2**31 for v in items):
        raise ValueError(f"eval.{key} must be a list of positive integers, e.g. "
                         f"[1,3,5,10], got {value!r}")
    return items


def _number(ev: DictConfig, key: str, kind: type, low: float, high: float,
            *, open_low: bool = False) -> Any:
    value = ev.get(key)
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind is int:
        ok = ok and isinstance(value, int)
    if not ok or not (low < value if open_low else low <= value) or value > high:
        lo = f"({low}" if open_low else f"[{low}"
        raise ValueError(f"eval.{key} must be a{'n integer' if kind is int else ' number'} in "
                         f"{lo}, {high}], got {value!r}")
    return value


def check_eval(cfg: DictConfig) -> None:
    """Reject a bad eval config before any work: it would fail every job alike, or
    worse, print conclusions computed from nonsense."""
    from sweep.measures import measures_for

    ev = cfg.eval
    try:
        ks = _int_list(ev, "k", required=True)
        budgets = _int_list(ev, "budgets", required=False)
        table_k = _int_list(ev, "table_k", required=False)
        if not set(table_k) <= set(ks):
            raise ValueError(f"eval.table_k {table_k} must be among eval.k {ks}")
        if ev.get("gain") not in ("linear", "exponential"):
            raise ValueError(f"eval.gain must be linear or exponential, got {ev.get('gain')!r}")
        _number(ev, "min_coverage", float, 0, 1, open_low=True)
        _number(ev, "alpha", float, 0, 1, open_low=True)
        _number(ev, "n_boot", int, 1, 1_000_000)
        _number(ev, "n_perm", int, 1, 10_000_000)
        _number(ev, "seed", int, 0, 2**31 - 1)
        measures_for(ks, budgets)
        primary = Primary.parse(str(ev.get("primary")))
        m = primary.measure
        if m.k is not None and m.k not in ks:
            raise ValueError(f"eval.primary {ev.primary!r}: k={m.k} is not in eval.k {ks}")
        if m.budget is not None and m.budget not in budgets:
            raise ValueError(f"eval.primary {ev.primary!r}: budget {m.budget} is not in "
                             f"eval.budgets {budgets}")
    except (ValueError, TypeError) as e:
        raise ConfigError(f"eval: {e}") from None


def check_dataset(dataset: Dataset, cfg: DictConfig) -> str:
    """The primary metric for this dataset: a span-level primary falls back to the
    document level when the judgments have no spans (BEIR qrels, say)."""
    scorable = [q for q in dataset.queries if any(j.grade > 0 for j in q.relevant)]
    if not scorable:
        raise ConfigError(f"dataset {dataset.name}: no query has a relevant judgment (grade > 0); "
                          "there is nothing to score")
    primary = str(cfg.eval.primary)
    if Primary.parse(primary).level == "span" and not any(
            j.is_span and j.grade > 0 for q in scorable for j in q.relevant):
        fallback = "doc/" + str(Primary.parse(primary).measure)
        log.warning("dataset %s has no evidence spans, only document judgments: span-level "
                    "metrics stay empty, and the primary metric is %s instead of %s",
                    dataset.name, fallback, primary)
        return fallback
    return primary


class ConfigError(ValueError):
    pass


def run(cfg: DictConfig, job_dir: Path, sweep_dir: Path, job_num: int,
        overrides: list[str]) -> dict[str, Any]:
    """Run one job of the sweep and write its row; never raises for a bad setting."""
    global _sweep_dir
    _sweep_dir = sweep_dir
    check_eval(cfg)
    job_dir.mkdir(parents=True, exist_ok=True)
    (job_dir / "resolved_config.yaml").write_text(OmegaConf.to_yaml(cfg, resolve=True))
    row: dict[str, Any] = {"job": job_num, "overrides": overrides,
                           "settings": job_settings(cfg, overrides),
                           "status": "ok", "error": None, "notes": [], "stats": {}, "levels": {}}
    dataset = load_dataset(cfg.dataset)
    row["dataset"] = dataset.name
    row["eval"] = OmegaConf.to_container(cfg.eval, resolve=True)
    row["eval"]["primary"] = check_dataset(dataset, cfg)
    label = " ".join(overrides) or "(defaults)"
    log.info("%s job %s: %s", progress.job_label(job_num), job_num, label)
    t0 = time.perf_counter()
    try:
        try:
            embedder, chunker, index, retriever = build_stages(cfg)
        except Exception as e:  # a bad setting: the row says why, the sweep goes on
            raise _Invalid(_one_line(_cause(e))) from e
        row["notes"] = list(getattr(chunker, "notes", ()) or ())
        for note in row["notes"]:
            log.warning("%s", note)
        result = evaluate_setting(dataset.documents, dataset.queries, chunker, embedder, index,
                                  retriever, eval_settings(cfg))
        row["stats"] = result.stats
        summary = result.summary.to_dict()
        row["levels"] = summary["levels"]
        row["bootstrap"] = summary.get("bootstrap")
        _write_job_files(job_dir, dataset, result, max(cfg.eval.k))
    except _Invalid as e:
        row.update(status="invalid", error=str(e))
        log.error("invalid setting (%s): %s", label, e)
    except KeyboardInterrupt:
        raise
    except Exception as e:
        row.update(status="failed", error=_one_line(e))
        (job_dir / "error.txt").write_text(traceback.format_exc())
        log.error("job failed (%s): %s; traceback in %s", label, row["error"], job_dir / "error.txt")
    row["stats"]["total_s"] = time.perf_counter() - t0
    # Atomic: a job killed mid-write leaves no half row for the report to trip on.
    write_text_atomic(job_dir / "row.json", json.dumps(row, indent=2, default=str))
    # Rebuilt after every job, so a crash or Ctrl-C later never loses this row.
    try:
        write_report(sweep_dir, quiet=True)
    except Exception as e:  # the row is saved; the table can be rebuilt with sweep.report
        log.warning("could not update the sweep table (%s); rows are kept in %s", _one_line(e),
                    sweep_dir)
    return row


class _Invalid(Exception):
    pass


def _cause(e: BaseException) -> BaseException:
    """The user's error inside Hydra's InstantiationException wrapper."""
    while isinstance(e, InstantiationException) and e.__cause__ is not None:
        e = e.__cause__
    return e


def _one_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}".rstrip(": ")


@hydra.main(version_base="1.3", config_path="conf", config_name="config")
def _entry(cfg: DictConfig) -> None:
    hc = HydraConfig.get()
    if hc.mode == RunMode.RUN:  # hydra.mode=RUN: one job, laid out like a sweep of one
        sweep_dir = Path(hc.run.dir)
        job_dir = sweep_dir / "0"
    else:
        sweep_dir = Path(hc.sweep.dir)
        job_dir = Path(hc.runtime.output_dir)
    job_num = int(hc.job.num) if hc.job.get("num") is not None else 0
    try:
        run(cfg, job_dir, sweep_dir, job_num, list(hc.overrides.task))
    except (DatasetError, ConfigError, InterpolationResolutionError) as e:
        # Bad input stops the sweep before any embedding: one line, no traceback.
        print(f"sweep: error: {e}", file=sys.stderr)
        raise SystemExit(2) from None


def _interrupted() -> None:
    print("\nsweep: interrupted", file=sys.stderr)
    if _sweep_dir is not None and _sweep_dir.is_dir():
        write_report(_sweep_dir, quiet=False)
        print(f"sweep: finished rows are kept in {_sweep_dir}", file=sys.stderr)
    raise SystemExit(130)


def main() -> None:
    # Ctrl-C can land inside a job or in Hydra between jobs; either way the
    # finished rows get their table.
    try:
        _entry()
    except KeyboardInterrupt:
        _interrupted()


if __name__ == "__main__":
    main()
