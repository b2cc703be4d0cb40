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
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from omegaconf import DictConfig, OmegaConf

from sweep.core.messages import first_line
from sweep.jobs import devices
from sweep.embedding.cache import resolve_cache_dir
from sweep.jobs.devices import Launch
from sweep.core.files import write_text_atomic
from sweep.jobs.job import (ConfigError, build_stages, cause, embedder_node, load_dataset,
                            retime_wanted)
from sweep.pipeline.latency import encode_times_for, latency_sample
from sweep.core.protocols import LabelledEmbedder, identity_of

__all__ = ["GroupReport", "PrewarmReport", "REPORT_NAME", "embed_spread", "prewarm_grid",
           "wanted"]

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


def _compose(config_name: str, overrides: Sequence[str],
             composed: Mapping[tuple[str, ...], DictConfig]) -> DictConfig:
    from hydra import compose

    found = composed.get(tuple(overrides))  # composed by the checks already
    return found if found is not None else compose(config_name=config_name,
                                                   overrides=list(overrides))


def _collect(config_name: str, jobs: Sequence[Sequence[str]], launch: Launch,
             machine: devices.Machine, composed: Mapping[tuple[str, ...], DictConfig]
             ) -> tuple[dict[tuple, _Group], dict[int, str], int]:
    """Chunk every setting that prewarms; the distinct texts per embedder identity."""
    groups: dict[tuple, _Group] = {}
    skipped: dict[int, str] = {}
    selected = 0
    for num, overrides in enumerate(jobs):
        try:
            cfg = _compose(config_name, overrides, composed)
        except Exception as e:  # the job itself will fail to compose and say so
            skipped[num] = f"config: {first_line(cause(e))}"
            continue
        if not wanted(OmegaConf.select(cfg, "runtime.prewarm", default="auto"), launch,
                      machine.cores):
            continue
        selected += 1
        cache_root = resolve_cache_dir(OmegaConf.select(cfg, "runtime.cache_dir", default=None))
        if cache_root is None:
            skipped[num] = "runtime.cache_dir is off: there is no cache to fill"
            continue
        requested = str(OmegaConf.select(cfg, "embed.device", default="cpu"))
        device = devices.pick_device(requested, 0, 1, machine)
        try:
            node = embedder_node(cfg, device)
            stages = build_stages(cfg, device if requested == "auto" else None)
            # Another model, max_seq_length, normalization or prefix is another cache.
            identity = identity_of(stages.embedder) or json.dumps(node, sort_keys=True)
            key = (identity, str(cache_root), device)
            dataset = load_dataset(cfg.dataset)
        except Exception as e:  # an invalid setting: its job saves the reason in its row
            skipped[num] = first_line(cause(e))
            continue
        if stages.contexts is not None or getattr(stages.embedder, "late", False):
            skipped[num] = ("its chunks are embedded with their contexts or late-chunked, "
                            "which its job does")
            continue
        group = groups.setdefault(key, _Group(stages.embedder, node, device))
        stages.embedder.reset_stats()
        try:
            chunks = stages.chunker.chunk_documents(dataset.documents)
        except Exception as e:
            skipped[num] = first_line(cause(e))
            continue
        group.sentences += int(stages.embedder.stats.embedded)
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
    return groups, skipped, selected


def _part(node: Mapping[str, Any], docs: Sequence[str], queries: Sequence[str],
          device: str) -> dict[str, float]:
    """One worker's share of :func:`embed_spread`: its own embedder, its own model load."""
    from hydra.utils import instantiate

    embedder = instantiate({**node, "device": device, "show_progress": False})
    if docs:
        embedder.embed_documents(list(docs))
    if queries:
        embedder.embed_queries(list(queries))
    return asdict(embedder.stats)


def embed_spread(node: Mapping[str, Any], docs: Sequence[str], queries: Sequence[str],
                 devices_: Sequence[str]) -> list[dict[str, float]]:
    """Embed ``docs`` and ``queries`` into the cache over one process per device (several
    GPUs of one machine), each with an embedder built from ``node``; their stats.

    The texts are dealt out in turn, so every worker gets a similar mix of lengths.
    Two strings that the model truncates to the same input may land with two workers and
    be embedded twice; the cache keeps one of the two identical entries.
    """
    n = len(devices_)
    context = multiprocessing.get_context("spawn")  # CUDA does not survive a fork
    with ProcessPoolExecutor(n, mp_context=context) as pool:
        futures = [pool.submit(_part, dict(node), list(docs[i::n]), list(queries[i::n]), d)
                   for i, d in enumerate(devices_)]
        return [f.result() for f in futures]


def _time_queries(group: _Group, folder: Path | None) -> None:
    """The latency columns' query encodes, timed once here for every job of the group
    (with the model this pass loaded, if it loaded one) instead of once per job."""
    times = (encode_times_for(group.embedder, folder, retime=group.retime)
             if folder is not None else None)
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
            embedder.embed_documents(docs[lo:lo + _SLICE])
        if queries:
            embedder.embed_queries(queries)
        _time_queries(group, folder)  # before the stats are read: a model it loads counts
        stats = embedder.stats
        texts, cached, embedded = int(stats.unique), int(stats.cache_hits), int(stats.embedded)
        loads += 1 if stats.load_seconds > 0 else 0
        load_s += float(stats.load_seconds)
        model_s = float(stats.seconds)
    label = (group.embedder.label if isinstance(group.embedder, LabelledEmbedder) else None
             ) or str(group.node.get("model", "?"))
    return GroupReport(label, group.device, group.settings, texts, cached, embedded,
                       group.sentences, loads, load_s, model_s)


def prewarm_grid(config_name: str, jobs: Sequence[Sequence[str]], launch: Launch,
                 folder: Path | None = None, *,
                 machine: devices.Machine | None = None,
                 composed: Mapping[tuple[str, ...], DictConfig] | None = None
                 ) -> PrewarmReport | None:
    """Fill the embedding cache with every vector the grid's jobs will ask for.

    ``jobs`` are the jobs' override lists (``sweep.jobs.preflight.expand_grid``), composed
    here as the jobs will be (or taken from ``composed``, by overrides, when the checks
    before the sweep composed them). None when no job has prewarm on. Writes ``prewarm.json``
    into ``folder`` when given. Raises :class:`ConfigError` for a bad ``runtime.prewarm``.
    """
    machine = machine or devices.machine()
    t0 = time.perf_counter()
    groups, skipped, selected = _collect(config_name, jobs, launch, machine, composed or {})
    if not selected:
        return None
    collect_s = time.perf_counter() - t0
    spread = ([f"cuda:{i}" for i in range(machine.cuda)] if machine.cuda > 1 else [])
    reports = []
    for group in groups.values():
        reports.append(_embed_group(group, spread if group.device.startswith("cuda") else [],
                                    folder))
    report = PrewarmReport(len(jobs), tuple(reports), skipped, collect_s,
                           time.perf_counter() - t0)
    for g in report.groups:
        load = (f"; model loaded {g.model_loads}x ({g.model_load_s:.1f}s)" if g.model_loads
                else "; model not loaded")
        sentences = (f", plus {g.sentences_embedded} sentences while chunking"
                     if g.sentences_embedded else "")
        log.info("prewarm: %d setting(s) with %s need %d distinct texts: %d cached, %d embedded"
                 "%s on %s in %.1fs%s", g.settings, g.model, g.texts, g.cached, g.embedded,
                 sentences, g.device, g.model_s, load)
    for num, why in sorted(skipped.items()):
        log.info("prewarm: job %d left to embed for itself (%s)", num, why)
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
        write_text_atomic(folder / REPORT_NAME, report.to_json())
    return report
