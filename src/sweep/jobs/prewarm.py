"""Embed a grid's distinct texts once, before its jobs start (``runtime.prewarm``).

Jobs that run side by side would each load the model and embed the strings
they share (every query, the chunks two overlaps have in common) at the same
time. Instead the launching process chunks every setting of the grid (which
takes milliseconds), collects the distinct model inputs of the whole grid, and
embeds the ones the cache lacks in one pass with one model load; the jobs then
only look vectors up. Settings are grouped by embedder identity (model,
weights, max_seq_length, normalization, prefixes), since each is its own cache.

The semantic strategy embeds sentences to decide where to cut: here it chunks
with the group's embedder too, so those sentence vectors are cached as well.

What the grid needed and what was embedded is logged and written to
``prewarm.json`` in the sweep folder.

The same pass gives the plan logged before the first job, prewarm or not
(:func:`plan_of`): how many jobs, the distinct texts the grid will embed, the
share the cache already holds, and how long the rest should take at the speed the
embedder had here before (``sweep.embedding.rates``).
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from sweep.core.files import write_text_atomic
from sweep.core.messages import first_line
from sweep.core.protocols import HasEmbedStats, LabelledEmbedder, identity_of, late_chunker_of
from sweep.core.types import Dataset
from sweep.embedding.autobackend import AUTO
from sweep.embedding.cache import resolve_cache_dir
from sweep.embedding.embedder import SentenceTransformerEmbedder
from sweep.embedding.multilingual import UseEmbedder
from sweep.embedding.rates import EmbedRate
from sweep.hydrakit import devices
from sweep.hydrakit.config import embedder_node
from sweep.hydrakit.devices import Launch
from sweep.jobs.embedchoice import resolve_embed
from sweep.jobs.job import ConfigError, build_stages, cause, load_job_dataset, retime_wanted
from sweep.pipeline.languages import (
    CorpusLanguages,
    corpus_languages,
    english_only,
    language_warning,
    model_unk_share,
)
from sweep.pipeline.latency import encode_times_for, latency_sample

__all__ = [
    "REPORT_NAME",
    "Grid",
    "GroupPlan",
    "GroupReport",
    "Plan",
    "PrewarmReport",
    "choose_backends",
    "collect_grid",
    "duration",
    "embed_spread",
    "plan_of",
    "prewarm_grid",
    "wanted",
]

log = logging.getLogger("sweep")

REPORT_NAME = "prewarm.json"
#: Texts per embedding call: bounds the memory of the returned vectors (384 floats each).
_SLICE = 100_000


@dataclass(frozen=True)
class GroupReport:
    """One embedder identity of the grid and what prewarming it took."""

    model: str
    device: str
    settings: int
    #: Distinct model inputs the grid's chunks and queries need (after truncation).
    texts: int
    cached: int
    embedded: int
    #: Sentences the semantic strategy embedded while chunking (0 for other strategies).
    sentences_embedded: int = 0
    model_loads: int = 0
    model_load_s: float = 0.0
    model_s: float = 0.0


@dataclass(frozen=True)
class PrewarmReport:
    jobs: int
    groups: tuple[GroupReport, ...] = ()
    #: Jobs left to embed for themselves, with why (their own row says more).
    skipped: Mapping[int, str] = field(default_factory=dict)
    #: Composing and chunking every setting (and, for the semantic strategy, embedding
    #: its sentences).
    collect_s: float = 0.0
    seconds: float = 0.0

    @property
    def texts(self) -> int:
        return sum(g.texts for g in self.groups)

    @property
    def embedded(self) -> int:
        return sum(g.embedded + g.sentences_embedded for g in self.groups)

    def to_json(self) -> str:
        body = asdict(self)
        body["skipped"] = {str(k): v for k, v in self.skipped.items()}
        body.update(texts=self.texts, embedded=self.embedded)
        return json.dumps(body, indent=2) + "\n"


def wanted(value: Any, launch: Launch, cores: int) -> bool:
    """Whether ``runtime.prewarm`` (true, false or auto) is on for this launch: ``auto`` is on
    when the jobs run in parallel."""
    text = str(value).strip().lower() if value is not None else "auto"
    if text in ("true", "yes", "on", "1"):
        return True
    if text in ("false", "no", "off", "0"):
        return False
    if text == "auto":
        return devices.is_parallel(launch, cores)
    raise ConfigError(f"runtime.prewarm must be true, false or auto, got {value!r}")


@dataclass
class _Group:
    embedder: Any
    node: dict
    device: str
    #: Its cache folder (None: runtime.cache_dir=off, nothing to prewarm).
    cache_root: Path | None = None
    #: Whether its settings prewarm (``runtime.prewarm``).
    prewarm: bool = False
    docs: dict[str, None] = field(default_factory=dict)
    queries: dict[str, None] = field(default_factory=dict)
    settings: int = 0
    sentences: int = 0
    embedders: list[Any] = field(default_factory=list)
    #: The queries whose fresh-encode time the latency columns need (sweep.pipeline.latency).
    latency_queries: list[str] = field(default_factory=list)
    #: runtime.retime of the group's settings (sweep.jobs.job.retime_wanted): true wins,
    #: then auto (None), then false.
    retime: bool | None = False
    #: Whether any of its settings embeds (a dense or hybrid retriever, or the semantic
    #: strategy's sentences); a BM25-only group never does.
    embeds: bool = False


@dataclass(frozen=True)
class Grid:
    """Every setting of a grid chunked, its distinct texts grouped by embedder identity."""

    jobs: tuple[tuple[str, ...], ...]
    groups: tuple[_Group, ...]
    #: Jobs whose texts are not in the groups, with why (invalid, embedded late or with
    #: their contexts, a config that does not compose).
    unplanned: Mapping[int, str]
    #: Jobs that prewarm but cannot (their texts may be planned), with why.
    skipped: Mapping[int, str]
    #: Jobs with ``runtime.prewarm`` on.
    selected: int
    #: The datasets' names, in order.
    datasets: tuple[str, ...] = ()
    seconds: float = 0.0
    #: What ``embed=auto`` chose, a line each (``embed auto → multilingual: ...``).
    embed_choices: tuple[str, ...] = ()
    #: A model that cannot read its corpus's language, a line each (said before the
    #: first job, and kept for the report).
    language_warnings: tuple[str, ...] = ()


def _sweeps_own_chunker(cfg: DictConfig) -> bool:
    """Whether the job's chunker is sweep's own or a framework's preset, which the plan may
    run in the launching process; a ``_target_`` or function of the user's runs there only
    when they asked for prewarming (``runtime.prewarm=true``)."""
    target = str(OmegaConf.select(cfg, "chunk._target_", default="") or "")
    framework = OmegaConf.select(cfg, "chunk.framework", default=None)
    return target.startswith("sweep.") and framework != "callable"


def _compose(
    config_name: str, overrides: Sequence[str], composed: Mapping[tuple[str, ...], DictConfig]
) -> DictConfig:
    from hydra import compose

    found = composed.get(tuple(overrides))  # composed by the checks already
    return (
        found if found is not None else compose(config_name=config_name, overrides=list(overrides))
    )


def collect_grid(
    config_name: str,
    jobs: Sequence[Sequence[str]],
    launch: Launch,
    *,
    machine: devices.Machine | None = None,
    composed: Mapping[tuple[str, ...], DictConfig] | None = None,
) -> Grid:
    """Chunk every setting of the grid (milliseconds each; the semantic strategy embeds
    its sentences to cut); the distinct texts per embedder identity.

    ``jobs`` are the jobs' override lists (``sweep.hydrakit.overrides.expand_grid``), composed
    here as the jobs will be (or taken from ``composed``). Raises :class:`ConfigError` for
    a bad ``runtime.prewarm``.
    """
    t0 = time.perf_counter()
    machine = machine or devices.machine()
    composed = composed or {}
    groups: dict[tuple, _Group] = {}
    unplanned: dict[int, str] = {}
    skipped: dict[int, str] = {}
    datasets: dict[str, None] = {}
    choices: dict[str, None] = {}
    warnings: dict[str, None] = {}
    read: set[tuple[int, str]] = set()
    mixes: dict[int, CorpusLanguages] = {}
    selected = 0

    def _leave(num: int, why: str, prewarm: bool) -> None:
        """A job whose texts its own run will know: not planned, and not prewarmed."""
        unplanned[num] = why
        if prewarm:
            skipped[num] = why

    for num, overrides in enumerate(jobs):
        try:
            cfg = _compose(config_name, overrides, composed)
        except Exception as e:  # the job itself will fail to compose and say so
            unplanned[num] = skipped[num] = f"config: {first_line(cause(e))}"
            continue
        on = wanted(OmegaConf.select(cfg, "runtime.prewarm", default="auto"), launch, machine.cores)
        selected += on
        cache_root = resolve_cache_dir(OmegaConf.select(cfg, "runtime.cache_dir", default=None))
        if on and cache_root is None:
            skipped[num] = "runtime.cache_dir is off: there is no cache to fill"
        if not on and not _sweeps_own_chunker(cfg):
            _leave(
                num,
                "a chunker of your own runs in its job only, where a crash, a hang or "
                "a Ctrl-C it mishandles fails that job alone",
                on,
            )
            continue
        try:
            dataset = load_job_dataset(cfg.dataset)
            # embed=auto chooses as the job will (the same dataset, the same choice).
            languages = mixes.get(id(dataset)) or corpus_languages(dataset)
            mixes[id(dataset)] = languages
            cfg, resolution = resolve_embed(cfg, languages)
            requested = str(OmegaConf.select(cfg, "embed.device", default="cpu"))
            device = devices.pick_device(requested, 0, 1, machine)
            node = embedder_node(cfg, device)
            stages = build_stages(cfg, device if requested == "auto" else None)
            # Another model, max_seq_length, normalization or prefix is another cache.
            identity = identity_of(stages.embedder) or json.dumps(node, sort_keys=True)
            key = (identity, str(cache_root), device, on)
        except Exception as e:  # an invalid setting: its job saves the reason in its row
            _leave(num, first_line(cause(e)), on)
            continue
        datasets[dataset.name] = None
        if resolution is not None:
            choices[resolution.line] = None
        if (id(dataset), identity) not in read:
            read.add((id(dataset), identity))
            warning = _language_warning(dataset, languages, stages.embedder, node)
            if warning is not None:
                warnings[warning] = None
        if stages.contexts is not None or late_chunker_of(stages.embedder) is not None:
            _leave(
                num,
                "its chunks are embedded with their contexts or late-chunked, which its job does",
                on,
            )
            continue
        if not isinstance(stages.embedder, HasEmbedStats):
            _leave(num, "its embedder keeps no cache to fill", on)
            continue
        group = groups.setdefault(key, _Group(stages.embedder, node, device, cache_root, on))
        stages.embedder.reset_stats()
        try:
            chunks = stages.chunker.chunk_documents(dataset.documents)
        except Exception as e:
            _leave(num, first_line(cause(e)), on)
            continue
        group.sentences += int(stages.embedder.stats.embedded)
        group.embeds |= bool(stages.retriever.needs_vectors or stages.embedder.stats.embedded)
        group.embedders.append(stages.embedder)
        group.docs.update(dict.fromkeys(c.embedding_input for c in chunks))
        group.queries.update(dict.fromkeys(q.query for q in dataset.queries))
        group.settings += 1
        retime = retime_wanted(cfg)
        if retime is True or (retime is None and group.retime is False):
            group.retime = retime
        limit = int(OmegaConf.select(cfg, "eval.latency_queries", default=0) or 0)
        if limit > len(group.latency_queries):
            texts = [q.query for q in dataset.queries]
            group.latency_queries = [texts[i] for i in latency_sample(len(texts), limit)]
    return Grid(
        tuple(tuple(o) for o in jobs),
        tuple(g for g in groups.values() if g.settings),
        unplanned,
        skipped,
        selected,
        tuple(datasets),
        time.perf_counter() - t0,
        tuple(choices),
        tuple(warnings),
    )


#: Characters of each document the ``[UNK]`` share reads: a fair sample of a long corpus
#: in milliseconds.
_READ_CHARS = 2000


def _language_warning(
    dataset: Dataset, languages: CorpusLanguages, embedder: Any, node: Mapping[str, Any]
) -> str | None:
    """The warning before the first job when the embedder cannot read the dataset's language
    (sweep.pipeline.languages.language_warning), or None."""
    label = (embedder.label if isinstance(embedder, LabelledEmbedder) else None) or str(
        node.get("model") or "the model"
    )
    model = str(node.get("model") or label)
    texts = [d.text[:_READ_CHARS] for d in dataset.documents if d.text]
    return language_warning(
        languages.documents,
        model_unk_share(embedder, texts),
        label,
        english_model=english_only(model),
    )


# ----------------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class GroupPlan:
    """What one embedder of the grid has to embed, and how long that should take."""

    model: str
    backend: str
    device: str
    settings: int
    #: Distinct model inputs of the grid's chunks and queries.
    texts: int
    cached: int
    #: Model tokens of the texts not cached (None: not countable without the model).
    missing_tokens: int | None = None
    #: The embedder's speed here before (None: never measured, or no cache to keep it).
    rate: EmbedRate | None = None

    @property
    def missing(self) -> int:
        return self.texts - self.cached

    @property
    def estimate_s(self) -> float | None:
        """Seconds to embed what the cache lacks, a model load included; None when no
        speed was measured here yet."""
        if not self.missing:
            return 0.0
        if self.rate is None or not self.rate.known:
            return None
        return self.rate.seconds_for(self.missing, self.missing_tokens) + (self.rate.load_s or 0.0)


@dataclass(frozen=True)
class Plan:
    """What a sweep is about to do, said before its first job."""

    jobs: int
    datasets: tuple[str, ...]
    #: Overrides every job has (a dataset's path, say): said here, not in every job line.
    shared: tuple[str, ...]
    groups: tuple[GroupPlan, ...]
    #: Jobs whose texts are counted only when they run.
    unplanned: int = 0

    def lines(self) -> list[str]:
        on = (
            f" on {self.datasets[0]}"
            if len(self.datasets) == 1
            else f" on {len(self.datasets)} datasets ({', '.join(self.datasets)})"
            if self.datasets
            else ""
        )
        first = f"plan: {self.jobs} job(s){on}"
        if self.shared:
            first += f"; every job with {' '.join(self.shared)}"
        lines = [first]
        for g in self.groups:
            lines.append(
                f"plan: {g.model} ({g.backend}, {g.device}), {g.settings} setting(s): "
                f"{g.texts} distinct texts to embed, {_share(g.cached, g.texts)} "
                f"cached; {_estimate(g)}"
            )
        if self.unplanned:
            lines.append(
                f"plan: {self.unplanned} job(s) not counted above (their texts are "
                "known only when they run)"
            )
        return lines


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "0%"


def duration(seconds: float) -> str:
    """``45 s``, ``3 min 20 s``, ``1 h 05 min``: how long, as a person says it."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


def _estimate(g: GroupPlan) -> str:
    if not g.missing:
        return "nothing to embed"
    seconds = g.estimate_s
    if seconds is None:
        return (
            "no time estimate yet: this model has not run here before (this sweep "
            "measures its speed for the next)"
        )
    load = f", a model load of {duration(g.rate.load_s)} included" if g.rate.load_s else ""
    speed = g.rate.texts_per_s
    return (
        f"embedding them should take about {duration(seconds)} "
        f"({speed:.{0 if speed >= 10 else 1}f} texts/s measured here before{load})"
    )


def choose_backends(grid: Grid) -> int:
    """``embed.backend=auto``: each group's runtime, chosen before the first job on samples
    of the grid's own chunks and questions (``sweep.embedding.autobackend``); a choice kept
    from before is read and nothing is measured. The choice's line is logged once. How
    many probes loaded a model (the sweep's count of model loads includes them)."""
    probes = 0
    for g in grid.groups:
        embedder = g.embedder
        if (
            not g.embeds
            or not isinstance(embedder, SentenceTransformerEmbedder)
            or embedder.backend != AUTO
        ):
            continue
        try:
            embedder.choose_backend(list(g.docs), list(g.queries))
        except Exception as e:  # its jobs meet the same failure and say so in their rows
            log.debug("embed.backend=auto not chosen before the jobs: %s", first_line(e))
        if embedder.stats.load_seconds > 0:
            probes += 1
            embedder.reset_stats()  # counted here, not again by the prewarm pass
    return probes


def plan_of(grid: Grid) -> Plan:
    """The plan of a collected grid: the cache is looked at, never the model loaded."""
    groups = []
    for g in grid.groups:
        embedder = g.embedder
        docs, queries = list(g.docs), list(g.queries)
        if isinstance(embedder, (SentenceTransformerEmbedder, UseEmbedder)):
            d = embedder.count_cached(docs)
            q = embedder.count_cached(queries, queries=True)
            tokens = (
                None
                if d.missing_tokens is None or q.missing_tokens is None
                else d.missing_tokens + q.missing_tokens
            )
            counts = (d.distinct + q.distinct, d.cached + q.cached, tokens, embedder.rate())
            backend = embedder.backend
        else:  # a user's embedder: its texts, nothing known of its cache or speed
            counts = (len(docs) + len(queries), 0, None, None)
            backend = "?"
        label = (embedder.label if isinstance(embedder, LabelledEmbedder) else None) or str(
            g.node.get("model", "?")
        )
        groups.append(GroupPlan(label, backend, g.device, g.settings, *counts))
    shared = (
        tuple(o for o in grid.jobs[0] if all(o in j for j in grid.jobs))
        if len(grid.jobs) > 1
        else ()
    )
    return Plan(len(grid.jobs), grid.datasets, shared, tuple(groups), len(grid.unplanned))


def _part(
    node: Mapping[str, Any], docs: Sequence[str], queries: Sequence[str], device: str
) -> dict[str, float]:
    """One worker's share of :func:`embed_spread`: its own embedder, its own model load."""
    from hydra.utils import instantiate

    embedder = instantiate({**node, "device": device, "show_progress": False})
    if docs:
        embedder.embed_documents(list(docs))
    if queries:
        embedder.embed_queries(list(queries))
    return asdict(embedder.stats)


def embed_spread(
    node: Mapping[str, Any], docs: Sequence[str], queries: Sequence[str], devices_: Sequence[str]
) -> list[dict[str, float]]:
    """Embed ``docs`` and ``queries`` into the cache over one process per device (several
    GPUs of one machine), each with an embedder built from ``node``; their stats.

    The texts are dealt out in turn, so every worker gets a similar mix of lengths.
    Two strings that the model truncates to the same input may land with two workers and
    be embedded twice; the cache keeps one of the two identical entries.
    """
    n = len(devices_)
    context = multiprocessing.get_context("spawn")  # CUDA does not survive a fork
    with ProcessPoolExecutor(n, mp_context=context) as pool:
        futures = [
            pool.submit(_part, dict(node), list(docs[i::n]), list(queries[i::n]), d)
            for i, d in enumerate(devices_)
        ]
        return [f.result() for f in futures]


def _time_queries(group: _Group, folder: Path | None) -> None:
    """The latency columns' query encodes, timed once here for every job of the group
    (with the model this pass loaded, if it loaded one) instead of once per job."""
    times = (
        encode_times_for(group.embedder, folder, retime=group.retime)
        if folder is not None
        else None
    )
    if group.latency_queries and times is not None:
        times(group.latency_queries)


def _embed_group(group: _Group, spread: Sequence[str], folder: Path | None) -> GroupReport:
    docs, queries = list(group.docs), list(group.queries)
    loads = sum(1 for e in group.embedders if e.stats.load_seconds > 0)
    load_s = sum(float(e.stats.load_seconds) for e in group.embedders)
    if len(spread) > 1:
        parts = embed_spread(group.node, docs, queries, spread)
        texts = sum(int(p["unique"]) for p in parts)
        cached = sum(int(p["cache_hits"]) for p in parts)
        embedded = sum(int(p["embedded"]) for p in parts)
        loads += sum(1 for p in parts if p["load_seconds"] > 0)
        load_s += sum(float(p["load_seconds"]) for p in parts)
        model_s = max((float(p["seconds"]) for p in parts), default=0.0)
        group.embedder.reset_stats()
        _time_queries(group, folder)
        loads += 1 if group.embedder.stats.load_seconds > 0 else 0
        load_s += float(group.embedder.stats.load_seconds)
    else:
        embedder = group.embedder
        embedder.reset_stats()
        for lo in range(0, len(docs), _SLICE):
            embedder.embed_documents(docs[lo : lo + _SLICE])
        if queries:
            embedder.embed_queries(queries)
        _time_queries(group, folder)  # before the stats are read: a model it loads counts
        stats = embedder.stats
        texts, cached, embedded = int(stats.unique), int(stats.cache_hits), int(stats.embedded)
        loads += 1 if stats.load_seconds > 0 else 0
        load_s += float(stats.load_seconds)
        model_s = float(stats.seconds)
    label = (group.embedder.label if isinstance(group.embedder, LabelledEmbedder) else None) or str(
        group.node.get("model", "?")
    )
    return GroupReport(
        label,
        group.device,
        group.settings,
        texts,
        cached,
        embedded,
        group.sentences,
        loads,
        load_s,
        model_s,
    )


def prewarm_grid(
    config_name: str,
    jobs: Sequence[Sequence[str]],
    launch: Launch,
    folder: Path | None = None,
    *,
    machine: devices.Machine | None = None,
    composed: Mapping[tuple[str, ...], DictConfig] | None = None,
    grid: Grid | None = None,
) -> PrewarmReport | None:
    """Fill the embedding cache with every vector the grid's jobs will ask for.

    ``jobs`` are the jobs' override lists (``sweep.hydrakit.overrides.expand_grid``), composed
    here as the jobs will be (or taken from ``composed``, by overrides, when the checks
    before the sweep composed them), or ``grid``, collected from them already. None when
    no job has prewarm on. Writes ``prewarm.json`` into ``folder`` when given. Raises
    :class:`ConfigError` for a bad ``runtime.prewarm``.
    """
    machine = machine or devices.machine()
    t0 = time.perf_counter()
    if grid is None:
        grid = collect_grid(config_name, jobs, launch, machine=machine, composed=composed)
    if not grid.selected:
        return None
    skipped = grid.skipped
    groups = [g for g in grid.groups if g.prewarm and g.cache_root is not None]
    collect_s = grid.seconds
    spread = [f"cuda:{i}" for i in range(machine.cuda)] if machine.cuda > 1 else []
    reports = []
    for group in groups:
        reports.append(
            _embed_group(group, spread if group.device.startswith("cuda") else [], folder)
        )
    report = PrewarmReport(
        len(jobs), tuple(reports), skipped, collect_s, collect_s + time.perf_counter() - t0
    )
    for g in report.groups:
        load = (
            f"; model loaded {g.model_loads}x ({g.model_load_s:.1f}s)"
            if g.model_loads
            else "; model not loaded"
        )
        sentences = (
            f", plus {g.sentences_embedded} sentences while chunking"
            if g.sentences_embedded
            else ""
        )
        log.info(
            "prewarm: %d setting(s) with %s need %d distinct texts: %d cached, %d embedded"
            "%s on %s in %.1fs%s",
            g.settings,
            g.model,
            g.texts,
            g.cached,
            g.embedded,
            sentences,
            g.device,
            g.model_s,
            load,
        )
    for num, why in sorted(skipped.items()):
        log.info("prewarm: job %d left to embed for itself (%s)", num, why)
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
        write_text_atomic(folder / REPORT_NAME, report.to_json())
    return report
