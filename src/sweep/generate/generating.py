"""One ``sweep.generate`` run: build the plain objects from the config and write the set.

The command (``python -m sweep.generate``) composes ``conf/generate.yaml`` and maps
errors to exit statuses; everything it does is here.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

from omegaconf import DictConfig

from sweep.datasets.loading import load_corpus
from sweep.datasets.readers.limits import LIMIT_KEYS
from sweep.generate.config import KINDS, GenerateConfig
from sweep.generate.output import (
    INCOMPLETE_QUERIES,
    REPORT_JSON,
    check_output_dir,
    write_output,
)
from sweep.generate.run import GenerationError, GenerationResult, generate
from sweep.hydrakit import devices
from sweep.hydrakit.config import build_node, embedder_node
from sweep.llm import LLMClient, LLMConfig
from sweep.llm.resume import ResumeInfo, failure_counts, rerun_hint

log = logging.getLogger("sweep.generate")

__all__ = ["INCOMPLETE", "run_generate"]
#: A set left short by requests that got no answer (written as incomplete).
INCOMPLETE = 3


def _token_counter() -> Any:
    from sweep.core.tokenization import DEFAULT_TOKENIZER, count_tokens, get_encoding

    encoding = get_encoding(DEFAULT_TOKENIZER)
    return lambda text: count_tokens(encoding, text)


def run_generate(cfg: DictConfig, resume: ResumeInfo | None = None) -> int:
    """One generation run; returns the exit status. ``resume`` learns where the answers
    are cached, for the command's Ctrl-C message."""
    conf: GenerateConfig = build_node(cfg.generate)
    llm: LLMConfig = build_node(cfg.llm)
    dataset_path = str(cfg.dataset.path)
    # Read the documents as a sweep of this dataset config would (dataset.reader.pdf=...).
    reading = {
        key: cfg.dataset.get(key)
        for key in ("reader", "skip_unreadable", "cache_dir", "follow_links", *LIMIT_KEYS)
        if cfg.dataset.get(key) is not None
    }
    if "reader" in reading:
        reading["reader"] = dict(reading["reader"])
    documents = load_corpus(dataset_path, **reading)
    out = None if conf.dry_run else check_output_dir(conf.out, dataset_path, conf.overwrite)
    client = LLMClient.open(
        llm, dry_run=conf.dry_run, show_progress=conf.show_progress, count_tokens=_token_counter()
    )
    cache_root = client.cache.root if client.cache is not None else None
    if resume is not None:  # what the command says after a Ctrl-C
        resume.cache_root = cache_root
    # device=auto means the GPU when there is one, as in a sweep's job.
    device = str(cfg.embed.get("device", "cpu"))
    if device == "auto":
        device = devices.pick_device(device, 0, 1, devices.machine())
    # Checks the embed settings; a dry run never loads the model.
    embedder = build_node(embedder_node(cfg, device))
    log.info(
        "generating with %s at %s; answers cached in %s",
        llm.model,
        llm.endpoint,
        cache_root or "(cache off)",
    )
    result = generate(documents, conf, client, embedder, dataset=dataset_path)
    if conf.dry_run:
        _print_dry_run(result, conf)
        return 0
    assert out is not None
    print(result.report.to_markdown())
    if result.report.incomplete:
        earlier = (out / REPORT_JSON).is_file()
        write_output(out, documents, result.queries, result.report)
        print(_incomplete_line(result, out, earlier, cache_root), file=sys.stderr)
        return INCOMPLETE
    if not result.queries:
        # Nothing is written: an earlier set in the folder stays whole.
        reasons = ", ".join(f"{n} {r}" for r, n in result.report.rejected.items()) or "none tried"
        raise GenerationError(
            f"no question was kept (rejected: {reasons}); the report above "
            f"says why, and {out} is unchanged"
        )
    write_output(out, documents, result.queries, result.report)
    kept = result.report.kept
    print(
        f"generate: {sum(kept.values())} questions ("
        + ", ".join(f"{kept[k]} {k}" for k in KINDS if kept.get(k))
        + f") written to {out}"
    )
    print(f"generate: check them with: python -m sweep.validate {out}")
    failed = result.report.requests.get("failed", 0)
    if failed:
        print(
            f"generate: {failed} requests got no answer after their retries; other candidates "
            "took their place",
            file=sys.stderr,
        )
    return 0


def _incomplete_line(
    result: GenerationResult, out: Path, earlier: bool, cache_root: Path | None
) -> str:
    report = result.report
    why = failure_counts(result.failures)
    kept, asked = sum(report.kept.values()), sum(report.requested.values())
    where = f"; the finished set already in {out} is unchanged" if earlier else ""
    again = rerun_hint(cache_root)
    return (
        f"generate: incomplete: {report.requests.get('failed', 0)} requests got no answer "
        f"({why}), so only {kept} of {asked} questions were kept; they are in "
        f"{out / INCOMPLETE_QUERIES}, not in a queries.jsonl{where}. Run the same command "
        f"again to retry them: {again}"
    )


def _print_dry_run(result: GenerationResult, conf: GenerateConfig) -> None:
    r = result.report.requests
    per_question = 3  # draft, realism, check
    planned = result.planned
    by_kind = ", ".join(f"{planned[k]} for {k}" for k in KINDS if planned.get(k))
    print(
        f"generate: dry run, nothing sent. The first round would send {r['would_send']} "
        f"requests{f' ({by_kind})' if by_kind else ''}, about "
        f"{r['would_send_prompt_tokens']:,} prompt tokens (cl100k_base estimate); "
        f"{r['cached']} more are answered by the cache."
    )
    paired = sum(n for k, n in planned.items() if k != "fact")
    if paired and result.estimated:
        print(
            f"generate: estimated: the {paired} requests for adversarial, multi-hop and "
            "unanswerable questions pair passages by shared words, where the real run pairs "
            "them by embedding (a dry run loads no embedding model, and no earlier run cached "
            "these passages' embeddings): their number and prompt tokens are close, not exact."
        )
    print(
        f"generate: requests for the checks of questions not written yet are counted once "
        f"each; rounds that replace rejected questions send up to {per_question} requests "
        f"per extra candidate, at most {conf.max_attempts:g} candidates per requested "
        "question."
    )
