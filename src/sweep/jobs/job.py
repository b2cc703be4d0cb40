"""One job of a sweep: build its stages from the config, evaluate the setting, save its row.

A bad setting (overlap ≥ size, an unknown model) never stops the sweep: the
job saves a row with status ``invalid`` and the reason; a crash saves one with
status ``failed`` and the traceback in ``<job>/error.txt``. Bad input that would
fail every job alike (the dataset, the eval config) is a :class:`ConfigError`,
caught before any work (``sweep.jobs.preflight``).
"""

from __future__ import annotations

import logging
import time
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from hydra.errors import InstantiationException
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from sweep.chunking.contexts import ContextError, ContextSpec, ContextWriter
from sweep.core import interrupts, progress
from sweep.core.configfiles import config_yaml
from sweep.core.errors import BadInput, InvalidSetting, row_status
from sweep.core.evalconfig import EvalConfig, EvalConfigError
from sweep.core.files import write_text_atomic
from sweep.core.measures import Primary
from sweep.core.messages import first_line
from sweep.core.peakmemory import PeakMemory
from sweep.core.protocols import (
    Chunker,
    DocumentChunker,
    Embedder,
    HasNotes,
    LabelledEmbedder,
    Reranker,
    Retriever,
    embed_named,
    late_chunker_of,
)
from sweep.core.settings import job_settings
from sweep.core.types import Chunk, Dataset, Document
from sweep.embedding.autobackend import AUTO as BACKEND_AUTO
from sweep.hydrakit import devices
from sweep.hydrakit.config import build_node, cause, embedder_node
from sweep.hydrakit.devices import Launch
from sweep.hydrakit.tokenizers import resolve_tokenizer
from sweep.jobs.diskfull import stop_if_disk_full
from sweep.jobs.embedchoice import AUTO, EmbedResolution, is_auto, resolve_embed
from sweep.llm import LLMClient
from sweep.llm.config import named_secrets
from sweep.llm.errors import mask
from sweep.pipeline.evaluate import evaluate_setting
from sweep.pipeline.languages import CorpusLanguages, corpus_languages, hub_share
from sweep.pipeline.latency import encode_times_for
from sweep.reporting.alerts import write_hub
from sweep.retrieval.fusion import HybridRetriever
from sweep.retrieval.index import ANN_RECALL_K
from sweep.retrieval.parents import ParentSpec
from sweep.scoring.diagnostics import twohop_class, twohop_queries
from sweep.store.chunkfile import CHUNKS_NAME, write_chunk_offsets
from sweep.store.corpus import keep_documents
from sweep.store.row import DatasetInfo, Row
from sweep.store.stats import Stats
from sweep.store.traces import traces_of, write_traces

__all__ = [
    "ConfigError",
    "Stages",
    "build_eval",
    "build_stages",
    "context_spec",
    "context_writer",
    "load_job_dataset",
    "parent_spec",
    "retime_wanted",
    "run_job",
    "save_failed_row",
    "scoring_config",
]

log = logging.getLogger("sweep")

#: The top k the hub share counts a chunk in (sweep.pipeline.languages.hub_share).
_HUB_K = 5


def _embed_label(embedder: Any) -> str | None:
    """The embedder's name as the plan and the row say it."""
    return embedder.label if isinstance(embedder, LabelledEmbedder) else None


class ConfigError(ValueError, BadInput):
    """Bad input that would fail every job alike: one line, exit 2, before any work."""


@dataclass(frozen=True)
class Stages:
    embedder: Embedder
    chunker: Chunker
    retriever: Retriever
    reranker: Reranker | None = None
    parents: ParentSpec = ParentSpec()
    contexts: ContextWriter | None = None


class _PerDocument:
    """A user's chunker that only has ``chunk(doc)``, as the pipeline's :class:`Chunker`."""

    def __init__(self, chunker: DocumentChunker) -> None:
        self._chunker = chunker
        self.notes = tuple(chunker.notes or ()) if isinstance(chunker, HasNotes) else ()

    def chunk_documents(self, docs: Sequence[Document]) -> list[Chunk]:
        return [c for d in docs for c in self._chunker.chunk(d)]


def retime_wanted(cfg: DictConfig) -> bool | None:
    """``runtime.retime``: whether the latency columns' kept encode times are measured
    again: true, false, or None for ``auto`` (sweep.core.timing.needs_retime)."""
    value = OmegaConf.select(cfg, "runtime.retime", default="auto")
    if value is None or value == "auto":
        return None
    if not isinstance(value, bool):
        raise ConfigError(f"runtime.retime must be true, false or auto, got {value!r}")
    return value


def build_stages(cfg: DictConfig, device: str | None = None) -> Stages:
    """Instantiate embedder, chunker, retriever (handed the ``index`` group's search index)
    and re-ranker (None for ``rerank=none``); a bad setting raises.

    The chunker is handed the embedder's ``embed_documents`` as ``embed_fn``
    (the semantic strategy embeds sentences; the others ignore it). An ``embed=auto``
    node a job has not resolved yet is resolved here, for the config's dataset.
    """
    if is_auto(cfg):
        cfg, _ = resolve_embed(cfg, corpus_languages(load_job_dataset(cfg.dataset)))
    resolve_tokenizer(cfg)  # chunk.tokenizer=model: the embedding model's own tokens
    embedder = instantiate(embedder_node(cfg, device))
    context = context_spec(cfg)
    chunker = instantiate(cfg.chunk, embed_fn=partial(embed_named, embedder, what="sentences"))
    if not isinstance(chunker, Chunker) and isinstance(chunker, DocumentChunker):
        chunker = _PerDocument(chunker)
    parents = parent_spec(cfg)
    retriever = instantiate(cfg.retrieve, index=instantiate(cfg.index))
    reranker = instantiate(cfg.rerank) if cfg.get("rerank") is not None else None
    return Stages(embedder, chunker, retriever, reranker, parents, context_writer(cfg, context))


def parent_spec(cfg: DictConfig) -> ParentSpec:
    """What a hit hands the LLM: the ``parent`` node (no node: chunks themselves)."""
    return build_node(cfg.parent) if cfg.get("parent") is not None else ParentSpec()


def design_notes(stages: Stages) -> tuple[str, ...]:
    """Combinations of the retrieval designs that pay for nothing: said in the row."""
    late = late_chunker_of(stages.embedder) is not None
    lexical = not stages.retriever.needs_vectors or isinstance(stages.retriever, HybridRetriever)
    if stages.contexts is not None and late and not lexical and stages.reranker is None:
        return (
            "context.mode=llm with embed.late=true: late chunking embeds the documents as "
            "written, so this dense row pays for contexts it never reads (BM25, hybrid "
            "and re-ranking would read them)",
        )
    return ()


def context_spec(cfg: DictConfig) -> ContextSpec:
    """The contexts' settings: the ``context`` node (no node: no contexts)."""
    return build_node(cfg.context) if cfg.get("context") is not None else ContextSpec()


def context_writer(
    cfg: DictConfig, spec: ContextSpec, *, show_progress: bool | None = None
) -> ContextWriter | None:
    """The writer of ``context.mode=llm``'s contexts through the ``llm`` group's endpoint;
    None for ``context.mode=none``."""
    if not spec.active:
        return None
    if cfg.get("llm") is None:
        raise ContextError("context.mode=llm needs the llm group (llm=openai or llm=local)")
    config = instantiate(cfg.llm)
    if show_progress is None:
        show_progress = bool((cfg.get("runtime") or {}).get("show_progress", True))
    return ContextWriter(LLMClient.open(spec.llm_config(config), show_progress=show_progress), spec)


def build_eval(cfg: DictConfig) -> EvalConfig:
    try:
        ev = instantiate(cfg.eval)
    except InstantiationException as e:
        raise ConfigError(f"eval: {cause(e)}") from None
    except EvalConfigError as e:
        raise ConfigError(f"eval: {e}") from None
    if not isinstance(ev, EvalConfig):
        raise ConfigError(
            f"eval: _target_ must build a sweep.core.evalconfig.EvalConfig, got {type(ev).__name__}"
        )
    return ev


_datasets: dict[str, Dataset] = {}


def load_job_dataset(node: DictConfig) -> Dataset:
    """Load (once per process: all jobs of a sweep share it) and validate the dataset."""
    key = OmegaConf.to_yaml(node, resolve=True)
    if key not in _datasets:
        t0 = time.perf_counter()
        try:
            _datasets[key] = instantiate(node)
        except InstantiationException as e:
            raise cause(e) from None
        ds = _datasets[key]
        log.info(
            "dataset %s: %d documents, %d queries (%.1fs)",
            ds.name,
            len(ds.documents),
            len(ds.queries),
            time.perf_counter() - t0,
        )
    return _datasets[key]


def scoring_config(dataset: Dataset, ev: EvalConfig, *, warn: bool = True) -> EvalConfig:
    """The eval config this dataset is scored with: a span-level primary falls back to the
    document level when the judgments have no spans (BEIR qrels, say), a page-level one
    when no evidence lies on a page of a paged document (Markdown files, say)."""
    scorable = [q for q in dataset.queries if q.has_unit("doc")]
    if not scorable:
        raise ConfigError(
            f"dataset {dataset.name}: no query has a relevant judgment (grade > 0); "
            "there is nothing to score"
        )
    primary = ev.primary_metric
    if primary.level == "span" and not any(q.has_unit("span") for q in scorable):
        fallback = str(Primary("doc", primary.measure))
        if warn:
            log.warning(
                "dataset %s has no evidence spans, only document judgments: span-level "
                "metrics stay empty, and the primary metric is %s instead of %s",
                dataset.name,
                fallback,
                primary,
            )
        return ev.with_primary(fallback)
    if primary.level == "page" and not any(q.has_unit("page") for q in scorable):
        fallback = str(Primary("doc", primary.measure))
        if warn:
            log.warning(
                "dataset %s has no evidence on a page of a paged document (PDF pages, "
                "slides, sheets): page-level metrics stay empty, and the primary metric is "
                "%s instead of %s",
                dataset.name,
                fallback,
                primary,
            )
        return ev.with_primary(fallback)
    return ev


class _Invalid(InvalidSetting):
    """Whatever failed while a job's stages were built: that setting is invalid."""


def _place(cfg: DictConfig, job_num: int, launch: Launch | None) -> str | None:
    """Resolve ``embed.device=auto`` and split the CPU between parallel jobs; the device
    to build the embedder on (None: the configured one)."""
    requested = OmegaConf.select(cfg, "embed.device", default=None)
    launch = launch or Launch()
    placement = devices.place(
        str(requested or "cpu"), job_num, launch, devices.machine(probe_gpus=requested == "auto")
    )
    devices.apply_threads(placement.threads)
    if requested == "auto" or placement.threads is not None:
        log.info(
            "job %s: device %s, %s CPU thread(s)",
            job_num,
            placement.device,
            placement.threads or "all",
        )
    return placement.device if requested == "auto" else None


@dataclass(frozen=True)
class _Prepared:
    ev: EvalConfig
    dataset: Dataset
    #: The config the job runs: ``embed=auto`` resolved (sweep.jobs.embedchoice).
    cfg: DictConfig
    embed: EmbedResolution | None
    languages: CorpusLanguages


def _prepare(cfg: DictConfig, job_dir: Path, job_num: int) -> _Prepared:
    """The job's folder with its resolved config, its eval config and its dataset."""
    ev = build_eval(cfg)
    job_dir.mkdir(parents=True, exist_ok=True)
    dataset = load_job_dataset(cfg.dataset)
    languages = corpus_languages(dataset)
    cfg, embed = resolve_embed(cfg, languages)
    # Resolved, its literal strings escaped: a value the user escaped (\${oc.env:KEY}) is
    # saved as the literal it is, never as an interpolation a reader would resolve. The
    # embed node is the model that runs (sweep.export and sweep.check rebuild from it).
    (job_dir / "resolved_config.yaml").write_text(config_yaml(cfg), encoding="utf-8")
    return _Prepared(scoring_config(dataset, ev, warn=job_num == 0), dataset, cfg, embed, languages)


def _settings(
    prepared: _Prepared, overrides: Sequence[str], choices: Mapping[str, Any]
) -> dict[str, Any]:
    """The row's settings: the embedder ``auto`` chose as if named (``embed.choice`` says
    auto chose it), and the corpus's languages (``ja 0.93, en 0.07``)."""
    embed = prepared.embed
    if embed is not None:
        choices = {**choices, "embed": embed.name}
    settings = job_settings(prepared.cfg, overrides, choices)
    if embed is not None:
        settings["embed.choice"] = AUTO
    settings["corpus.languages"] = prepared.languages.column()
    return settings


def save_failed_row(
    cfg: DictConfig,
    job_dir: Path,
    job_num: int,
    overrides: Sequence[str],
    choices: Mapping[str, Any],
    error: str,
) -> Row:
    """Save a ``failed`` row for a job that could not save its own (its worker died)."""
    prepared = _prepare(cfg, job_dir, job_num)
    row = Row(
        job_num,
        "failed",
        _settings(prepared, overrides, choices),
        prepared.ev,
        DatasetInfo.of(prepared.dataset),
        tuple(overrides),
        error,
        path=job_dir,
    )
    row.save(job_dir)
    return row


def _raise_if_interrupted(error: Exception) -> None:
    """A Ctrl-C that a library turned into another error is an interrupt, not a bad
    setting or a crash: no row."""
    if interrupts.requested():
        raise KeyboardInterrupt from error


def _secrets(cfg: DictConfig) -> tuple[str, ...]:
    """The secrets the job's ``llm`` node names (its key, a password in its URL), which a
    row, a log line or ``error.txt`` must never show, whatever failed."""
    try:
        node = cfg.get("llm")
        return () if node is None else named_secrets(node.get("api_key_env"), node.get("base_url"))
    except OmegaConfBaseException:  # an interpolation that cannot resolve names no secret
        return ()


def _masked(text: str, secrets: tuple[str, ...]) -> str:
    # A short key (``ollama``, ``1``) only where quoted as a credential, as in an LLM's
    # answers: masked wherever it stands, it would rewrite "overlap 1 >= size 1".
    return mask(text, secrets, short="credential")


def run_job(
    cfg: DictConfig,
    job_dir: Path,
    job_num: int,
    overrides: Sequence[str],
    choices: Mapping[str, Any],
    launch: Launch | None = None,
) -> Row:
    """Run one job of the sweep and save its row; never raises for a bad setting.

    ``launch`` (how the sweep's jobs run) decides an ``embed.device=auto`` and how
    many CPU threads this job may use (``sweep.hydrakit.devices``).
    """
    prepared = _prepare(cfg, job_dir, job_num)
    ev, dataset, cfg = prepared.ev, prepared.dataset, prepared.cfg
    retime = retime_wanted(cfg)
    settings = _settings(prepared, overrides, choices)
    label = " ".join(overrides) or "(defaults)"
    log.info(
        "%s job %s: %s", progress.job_label(job_num), job_num, progress.job_overrides(overrides)
    )
    t0, memory = time.perf_counter(), PeakMemory()
    status, error, notes, stats, summary = "ok", None, (), Stats(), None
    diagnostics = first_stage = child = None
    try:
        device = _place(cfg, job_num, launch)
        try:
            stages = build_stages(cfg, device)
        except Exception as e:  # a bad setting: the row says why, the sweep goes on
            _raise_if_interrupted(e)
            raise _Invalid(first_line(cause(e), with_type=True)) from e
        # What the size counts is known once the chunker is built (a splitter's own length).
        settings["chunk.unit"] = getattr(stages.chunker, "size_unit", None)
        if prepared.embed is not None and settings.get("embed.model") is None:
            # A node without a model key (the multilingual one): the row names what ran.
            settings["embed.model"] = _embed_label(stages.embedder)
        notes = tuple(stages.chunker.notes) + design_notes(stages)
        for note in notes:
            log.warning("%s", note)
        result = evaluate_setting(
            dataset.documents,
            dataset.queries,
            stages.chunker,
            stages.embedder,
            stages.retriever,
            ev,
            stages.reranker,
            encode_times_of=encode_times_for(stages.embedder, job_dir.parent, retime=retime),
            parents=stages.parents,
            contexts=stages.contexts,
        )
        stats, summary, notes = result.stats, result.summary, notes + result.notes
        ran = getattr(stages.embedder, "backend", None)
        if settings.get("embed.backend") == BACKEND_AUTO and isinstance(ran, str):
            settings["embed.backend"] = ran  # the runtime auto chose, as if named
        diagnostics, first_stage, child = result.diagnostics, result.first_stage, result.child
        if stats.ann_recall is not None:
            notes += (
                f"approximate index ({choices.get('index', 'index')}): its top "
                f"{ANN_RECALL_K} hold {100 * stats.ann_recall:.1f}% of exact search's "
                f"(ann_recall@{ANN_RECALL_K})",
            )
        result.scores.write_csv(job_dir / "per_query.csv")
        hub = hub_share(result.ranking, _HUB_K)
        if hub is not None:
            share, chunk = hub
            write_hub(job_dir, share, result.passages[chunk].chunk_id, _HUB_K, len(result.passages))
        write_chunk_offsets(job_dir / CHUNKS_NAME, result.chunks)
        twohop = twohop_queries(dataset.queries, result.credits, ev.twohop_types)
        # What was retrieved and scored: the chunks, or their parents.
        write_traces(
            job_dir / "hits.jsonl",
            traces_of(
                dataset,
                result.passages,
                result.ranking,
                result.credits,
                max(ev.k),
                twohop={q: {k: twohop_class(r, k) for k in ev.k} for q, r in twohop.items()},
                provenance=result.provenance,
            ),
        )
    except KeyboardInterrupt:
        raise
    except Exception as e:
        status = row_status(e)
        if status == "invalid":
            # A chunker that turns out not to run on this corpus (a splitter that rewrites
            # text, one that fails on a document) is a bad setting, not a crash.
            error = _masked(first_line(e), _secrets(cfg))
            log.error("invalid setting (%s): %s", label, error)
        else:
            _raise_if_interrupted(e)
            stop_if_disk_full(e, job_dir)  # not this setting's fault: every later job would fail
            secrets = _secrets(cfg)
            error, summary = _masked(first_line(e, with_type=True), secrets), None
            # Any library's error may quote a key it was handed, not only the LLM client's.
            write_text_atomic(job_dir / "error.txt", _masked(traceback.format_exc(), secrets))
            log.error("job failed (%s): %s; traceback in %s", label, error, job_dir / "error.txt")
    ok = status == "ok"
    info = DatasetInfo.of(dataset)
    if ok:
        # The report's explorer shows any document of the sweep, from the folder alone.
        try:
            keep_documents(job_dir.parent, dataset, info.fingerprint)
        except OSError as e:  # the row is what was measured: never lost for the explorer
            log.warning("documents not kept for the report's explorer: %s", e)
    row = Row(
        job_num,
        status,
        settings,
        ev,
        info,
        tuple(overrides),
        error,
        notes,
        stats,
        summary if ok else None,
        diagnostics if ok else None,
        first_stage=first_stage if ok else None,
        child=child if ok else None,
        path=job_dir,
    )
    row = row.with_stats(total_s=time.perf_counter() - t0, peak_rss_mb=memory.peak_mb())
    row.save(job_dir)
    return row
