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
from hydra.utils import get_method, instantiate
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import InterpolationResolutionError

from sweep import progress
from sweep.config import register_resolvers
from sweep.data import Dataset
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


def job_settings(cfg: DictConfig) -> dict[str, Any]:
    return {key: OmegaConf.select(cfg, key, default=None) for key in SETTING_KEYS}


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


def check_eval(cfg: DictConfig) -> None:
    """Reject a bad eval config before any work: it would otherwise fail every job alike."""
    from sweep.measures import measures_for

    try:
        ev = eval_settings(cfg)
        if not ev.ks or not all(0 < v < 2**31 for v in (*ev.ks, *ev.budgets)):
            raise ValueError("eval.k and eval.budgets must be positive integers")
        if ev.gain not in ("linear", "exponential"):
            raise ValueError(f"eval.gain must be linear or exponential, got {ev.gain!r}")
        if not 0 < ev.min_coverage <= 1:
            raise ValueError(f"eval.min_coverage must be in (0, 1], got {ev.min_coverage}")
        measures_for(ev.ks, ev.budgets)
        Primary.parse(str(cfg.eval.primary))
    except (ValueError, TypeError) as e:
        raise ConfigError(f"eval: {e}") from None


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
    row: dict[str, Any] = {"job": job_num, "overrides": overrides, "settings": job_settings(cfg),
                           "status": "ok", "error": None, "notes": [], "stats": {}, "levels": {}}
    dataset = load_dataset(cfg.dataset)
    row["dataset"] = dataset.name
    row["eval"] = OmegaConf.to_container(cfg.eval, resolve=True)
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
    (job_dir / "row.json").write_text(json.dumps(row, indent=2, default=str))
    # Rebuilt after every job, so a crash or Ctrl-C later never loses this row.
    write_report(sweep_dir, quiet=True)
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
    job_dir = Path(hc.runtime.output_dir)
    sweep_dir = Path(hc.sweep.dir)
    job_num = int(hc.job.num) if hc.job.get("num") is not None else 0
    try:
        run(cfg, job_dir, sweep_dir, job_num, list(hc.overrides.task))
    except (DatasetError, ConfigError, InterpolationResolutionError) as e:
        # Bad input stops the sweep before any embedding: one line, no traceback.
        print(f"sweep: error: {e}", file=sys.stderr)
        raise SystemExit(2)


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
