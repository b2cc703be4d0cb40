"""Checks before a sweep's first job: its folder is its own, and every dataset and eval config
of the grid is valid.

A sweep whose third dataset is broken must fail before it embeds anything for
the first; a folder that already holds another sweep must never take this
one's rows (the table would mix them).
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import MissingMandatoryValue

from sweep.chunking import UnknownChunkSetting
from sweep.chunking.contexts import ContextError, Estimate, check_confirmed, estimate
from sweep.chunking.frameworks import missing_package
from sweep.core.errors import SweepError
from sweep.core.folderlock import LOCK_NAME
from sweep.core.messages import one_line
from sweep.core.tokenization import TokenizerError
from sweep.embedding.checks import embed_problem
from sweep.hydrakit.config import build_node, cause
from sweep.hydrakit.tokenizers import resolve_tokenizer
from sweep.jobs.embedchoice import resolve_embed
from sweep.jobs.job import (
    ConfigError,
    build_eval,
    context_spec,
    context_writer,
    load_job_dataset,
    parent_spec,
    scoring_config,
)
from sweep.jobs.prewarm import REPORT_NAME as PREWARM_REPORT
from sweep.llm import LLMConfigError
from sweep.llm.config import check_saved
from sweep.pipeline.languages import corpus_languages
from sweep.pipeline.latency import ENCODE_TIMES_LOCK, ENCODE_TIMES_NAME
from sweep.reporting.alerts import ALERTS_NAME
from sweep.retrieval.parents import ParentError

__all__ = ["check_contexts", "check_folder", "check_grid", "discard_if_unused"]

log = logging.getLogger("sweep")

#: Files by which a folder is known to hold a sweep already.
_SWEEP_MARKS = ("multirun.yaml", "results.csv", "results.md")
#: Files the sweep itself puts in its folder before any row: Hydra's, prewarm's, the query
#: encode times and the locks.
_SWEEP_FILES = (
    "multirun.yaml",
    PREWARM_REPORT,
    ALERTS_NAME,
    LOCK_NAME,
    ENCODE_TIMES_NAME,
    ENCODE_TIMES_LOCK,
)
#: Override keys whose values change what is loaded or how it is scored.
_CHECKED = ("dataset", "eval", "experiment")
_OWN_CHUNKER = "sweep.chunking.build_chunker"
_FRAMEWORK_CHUNKER = "sweep.chunking.build_framework_chunker"


def holds_a_sweep(folder: Path) -> bool:
    return folder.is_dir() and (
        any((folder / m).exists() for m in _SWEEP_MARKS) or any(folder.glob("*/row.json"))
    )


def check_folder(folder: Path) -> None:
    """Refuse a folder that already holds a sweep (its rows would land in this one's table)
    or anything else: a sweep writes job folders ``0/``, ``1/``... and its files there, and
    would overwrite, or on bad input clean up, files that are not its own."""
    if holds_a_sweep(folder):
        n = len(list(folder.glob("*/row.json")))
        raise ConfigError(
            f"{folder} already holds a sweep ({n} row(s)); a table must only show "
            "its own sweep's rows: choose another hydra.sweep.dir (or leave it "
            "unset for a new timestamped folder), or delete that folder"
        )
    if folder.is_dir():
        found = sorted(p.name + ("/" if p.is_dir() else "") for p in folder.iterdir())
        if found:
            shown = ", ".join(found[:3]) + (f" and {len(found) - 3} more" if len(found) > 3 else "")
            raise ConfigError(
                f"{folder} is not empty ({shown}); a sweep writes its job folders "
                "and files there and must not mix them with yours: choose a new or "
                "empty hydra.sweep.dir (or leave it unset for a new timestamped "
                "folder)"
            )


def _key(override: str) -> str:
    return override.split("=", 1)[0].lstrip("+~")


def _subset(overrides: Sequence[str], groups: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(o for o in overrides if _key(o).split(".", 1)[0].split("/", 1)[0] in groups)


def _never_embed(texts: Sequence[str]) -> Any:
    raise RuntimeError("the settings check embeds nothing")


def chunk_problem(node: DictConfig) -> Exception | None:
    """What is wrong with a ``chunk`` node of sweep's own chunker or a framework's splitter,
    found by building it (cheap: nothing is chunked or embedded); None for a good one or
    a chunker of the user's own, which only its job can try. A framework that is not
    installed fails every cell alike: an :class:`UnknownChunkSetting` with the pip hint."""
    target = node.get("_target_")
    if target == _FRAMEWORK_CHUNKER:
        missing = missing_package(node)
        if missing is not None:
            return UnknownChunkSetting(missing)
    elif target != _OWN_CHUNKER:
        return None
    try:
        build_node(node, embed_fn=_never_embed)
    except MissingMandatoryValue as e:  # chunk=callable without the function, say
        return UnknownChunkSetting(
            f"{e.full_key} is not set: chunk={node.get('framework')} "
            f"needs it (e.g. {e.full_key}=mypackage.split)"
        )
    except Exception as e:  # an unknown tokenizer, say: that cell's row will say so too
        return e
    return None


def check_grid(
    config_name: str, jobs: Sequence[Sequence[str]]
) -> dict[tuple[str, ...], DictConfig]:
    """Compose the grid's jobs and check them before any work: every distinct dataset/eval
    choice builds and has something to score, and the chunk settings are sound.

    A chunk setting sweep does not know (a mistyped strategy, prefix or key) stops the
    sweep, as does a grid none of whose settings can run. A grid in which only some
    cells cannot run (``chunk.size=128,256 chunk.overlap=0,192``) goes ahead: those
    cells get an ``invalid`` row, and a warning says so now.
    Loaded datasets are kept for the jobs of this process (``sweep.jobs.job.load_job_dataset``);
    the configs composed are returned by the jobs' overrides, for the prewarm pass.
    """
    from hydra import compose

    seen: set[tuple[str, ...]] = set()
    chunk_checked: dict[tuple[str, ...], Exception | None] = {}
    embed_checked: dict[tuple[str, ...], Exception | None] = {}
    # chunk.tokenizer=model whose model has no tokenizer here, by chunk and embed overrides
    tokenizer_checked: dict[tuple[tuple[str, ...], tuple[str, ...]], Exception] = {}
    llm_checked: set[tuple[str, ...]] = set()
    problems: list[tuple[Sequence[str], Exception]] = []
    composed: dict[tuple[str, ...], DictConfig] = {}
    for overrides in jobs:
        data_key = _subset(overrides, _CHECKED)
        chunk_key = _subset(overrides, ("chunk", "context", "parent", "experiment"))
        embed_key = _subset(overrides, ("embed", "experiment"))
        if data_key not in seen or chunk_key not in chunk_checked or embed_key not in embed_checked:
            given: DictConfig = compose(config_name=config_name, overrides=list(overrides))
            # Checked with embed=auto chosen as the job will choose (its dataset, loaded once
            # per process): the tokenizer and the embed check are the model that runs. The
            # config handed on keeps auto, for the plan to say its choice.
            composed[tuple(overrides)] = given
            cfg, _ = resolve_embed(given, corpus_languages(load_job_dataset(given.dataset)))
            try:
                resolve_tokenizer(cfg)  # chunk.tokenizer=model: the embedding model's own
            except TokenizerError as e:  # that model's tokenizer is not here: its cells
                tokenizer_checked[(chunk_key, embed_key)] = e
            try:
                parent_spec(cfg)
            except ParentError as e:  # a typo in parent.*: every such cell alike
                raise ConfigError(f"{one_line(e)} ({' '.join(overrides)})") from None
            if data_key not in seen:
                seen.add(data_key)
                ev = build_eval(cfg)
                scoring_config(load_job_dataset(cfg.dataset), ev, warn=False)
            # (unresolved, chunk.tokenizer=model would fail every chunk check alike)
            if chunk_key not in chunk_checked and (chunk_key, embed_key) not in tokenizer_checked:
                try:
                    context_spec(cfg)
                except ContextError as e:  # a typo in context.*: every such cell alike
                    raise ConfigError(f"{one_line(e)} ({_label(overrides)})") from None
                chunk_checked[chunk_key] = chunk_problem(cfg.chunk)
            if embed_key not in embed_checked:
                # A preset whose model is not here, embed=multilingual on a GPU, say.
                node = OmegaConf.to_container(cfg.embed, resolve=True)
                embed_checked[embed_key] = embed_problem(node) if isinstance(node, dict) else None
        llm_key = _subset(overrides, ("llm", "experiment"))
        if llm_key not in llm_checked:
            llm_checked.add(llm_key)
            cfg = composed.get(tuple(overrides)) or compose(
                config_name=config_name, overrides=list(overrides)
            )
            _check_llm_saved(cfg)
        problem = (
            tokenizer_checked.get((chunk_key, embed_key))
            or chunk_checked.get(chunk_key)
            or embed_checked[embed_key]
        )
        if problem is not None:
            problems.append((overrides, problem))
    for overrides, problem in problems:
        if isinstance(problem, UnknownChunkSetting):
            raise ConfigError(f"{one_line(problem)} ({_label(overrides)})")
    embed_problems = {id(p) for p in embed_checked.values() if p is not None}

    def where(overrides: Sequence[str], problem: Exception) -> str:
        if id(problem) not in embed_problems:
            return _label(overrides)
        return " ".join(_subset(overrides, ("embed", "experiment"))) or "the default embedder"

    if problems and len(problems) == len(jobs):
        overrides, problem = problems[0]
        more = f"; {len(jobs) - 1} more setting(s) cannot run either" if len(jobs) > 1 else ""
        raise ConfigError(
            f"no setting of this sweep can run: {one_line(problem)} "
            f"({where(overrides, problem)}){more}"
        )
    if problems:
        overrides, problem = problems[0]
        log.warning(
            "%d of %d settings cannot run and get an invalid row, e.g. %s: %s",
            len(problems),
            len(jobs),
            where(overrides, problem),
            one_line(problem),
        )
    check_contexts(config_name, [j for j in jobs if j not in [o for o, _ in problems]], composed)
    return composed


def _check_llm_saved(cfg: DictConfig) -> None:
    """Every job saves the ``llm`` node (used or not): one holding a secret stops the sweep
    before any file is written, without showing it."""
    node = cfg.get("llm")
    if node is None:
        return
    try:
        check_saved(node.get("api_key_env"), node.get("base_url"))
    except LLMConfigError as e:
        raise ConfigError(str(e)) from None


def check_contexts(
    config_name: str, jobs: Sequence[Sequence[str]], composed: dict[tuple[str, ...], DictConfig]
) -> None:
    """Before any request: what the grid's context.mode=llm settings would send, said once;
    refused (exit 2) above ``context.confirm_above`` requests unless confirmed, or when
    the endpoint cannot be used at all (a bad llm setting, a missing key)."""
    from hydra import compose

    seen: set[tuple[str, ...]] = set()
    asked: set[str] = set()  # requests counted already: settings that share a chunk ask once
    total = Estimate(0, 0, 0, 0, None)
    spec = model = None
    for overrides in jobs:
        key = _subset(overrides, ("chunk", "context", "llm", "dataset", "experiment"))
        if key in seen:
            continue
        seen.add(key)
        cfg = composed.get(tuple(overrides)) or compose(
            config_name=config_name, overrides=list(overrides)
        )
        try:
            resolve_tokenizer(cfg)
        except TokenizerError:  # that cell's row says so; it asks for no context
            continue
        spec_here = context_spec(cfg)
        if not spec_here.active:
            continue
        try:
            writer = context_writer(cfg, spec_here, show_progress=False)
        except Exception as e:  # the endpoint cannot be used at all: every such cell alike
            found = cause(e)
            if isinstance(found, SweepError):  # sweep's own: one line; another is a bug
                raise ConfigError(f"context.mode=llm: {one_line(found)}") from None
            raise
        try:
            chunker = build_node(cfg.chunk, embed_fn=_never_embed)
            chunks = chunker.chunk_documents(load_job_dataset(cfg.dataset).documents)
        except Exception as e:  # the semantic strategy, a user's chunker: the job estimates
            log.info(
                "chunk contexts of %s are estimated in its job (%s)", _label(overrides), one_line(e)
            )
            continue
        found = estimate(
            writer.client, spec_here, load_job_dataset(cfg.dataset).documents, chunks, asked
        )
        spec, model = spec_here, f"{writer.client.config.model} at {writer.client.config.endpoint}"
        cost = None if found.cost is None else (total.cost or 0.0) + found.cost
        total = Estimate(
            total.chunks + found.chunks,
            total.requests + found.requests,
            total.prompt_tokens + found.prompt_tokens,
            total.completion_tokens + found.completion_tokens,
            cost,
        )
    if spec is None:
        return
    # Chunks two settings share are one request: the client's cache answers the second.
    log.info(
        "chunk contexts for this sweep: %s (settings that share a chunk ask once)",
        total.describe(model),
    )
    try:
        check_confirmed(spec, total, model)
    except ContextError as e:
        raise ConfigError(one_line(e)) from None


def _label(overrides: Sequence[str]) -> str:
    return " ".join(_subset(overrides, ("chunk", "experiment"))) or "the default chunk settings"


def discard_if_unused(folder: Path, *, remove_folder: bool = True) -> None:
    """Remove a sweep folder in which no job saved a row: only what sweep and Hydra put
    there (``_SWEEP_FILES``, job folders with their resolved config and logs), nothing
    else. Call it only for a folder that ``check_folder`` passed, i.e. one this sweep
    made or found empty: then whatever is in it of those kinds is this run's. The folder
    itself goes too unless ``remove_folder`` is false (it was there before the sweep)."""
    if not folder.is_dir() or any(folder.glob("*/row.json")):
        return
    for path in folder.iterdir():
        if path.name in _SWEEP_FILES:
            path.unlink()
        elif (
            path.is_dir()
            and path.name.isdigit()
            and all(
                p.name in ("resolved_config.yaml", ".hydra") or p.suffix == ".log"
                for p in path.iterdir()
            )
        ):
            shutil.rmtree(path)
    if not remove_folder:  # an empty folder of the user's: it stays
        return
    try:
        folder.rmdir()
    except OSError:  # something else is in there: leave it
        log.debug("kept %s: not empty", folder)
