"""Score a run file against a question set and write the files ``sweep.score`` promises.

Writes ``per_query.csv`` (``query_id,level,metric,value``), ``summary.json`` and
``summary.md`` into ``out`` and prints the summary table; notes about queries the
run misses or names in vain go to stderr.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from sweep.core.measures import MIN_COVERAGE, measures_for
from sweep.core.tokenization import DEFAULT_TOKENIZER
from sweep.core.types import Hit, Query
from sweep.datasets.loading import load_corpus, load_queries
from sweep.datasets.runfiles import RunFileError, fill_token_counts, read_run
from sweep.scoring.aggregate import summarize
from sweep.scoring.credit import score_queries

__all__ = ["score_run"]

_LIST_PREVIEW = 5


def _preview(ids: Sequence[str]) -> str:
    shown = ", ".join(repr(i) for i in ids[:_LIST_PREVIEW])
    return shown + (f", ... ({len(ids) - _LIST_PREVIEW} more)" if len(ids) > _LIST_PREVIEW else "")


def _doc_id_hits_at_span_level(
    queries: Sequence[Query], hits: Mapping[str, Sequence[Hit]]
) -> dict[str, int]:
    """Per query scored at span level: how many of its hits have no offsets (and so earn nothing there)."""
    out: dict[str, int] = {}
    for q in queries:
        if q.query_id in hits and q.has_unit("span"):
            n = sum(1 for h in hits[q.query_id] if h.start is None)
            if n:
                out[q.query_id] = n
    return out


def score_run(
    corpus: str,
    queries_path: str,
    run: str,
    *,
    out: str | None = None,
    k: Sequence[int] = (1, 3, 5, 10),
    budgets: Sequence[int] = (),
    gain: str = "linear",
    min_coverage: float = MIN_COVERAGE,
    split: str = "test",
    tokenizer: str = DEFAULT_TOKENIZER,
    n_boot: int = 1000,
    seed: int = 0,
) -> Path:
    """Score, write the files, print the summary; returns the output folder.
    Raises the loaders' errors (``DatasetError``, ``RunFileError``) on bad input."""
    documents = load_corpus(corpus)
    queries: tuple[Query, ...] = load_queries(queries_path, documents, split=split)
    run_file = read_run(run, documents, [q.query_id for q in queries])
    if not run_file.hits:
        ids = run_file.unknown_query_ids
        raise RunFileError(
            [
                f"{run}: none of its {len(ids)} query_ids is in {queries_path} "
                f"({_preview(ids)}): is it the run of another question set?"
            ]
        )
    hits: Mapping[str, Sequence[Hit]] = run_file.hits
    if budgets:
        hits = fill_token_counts(hits, documents, tokenizer)

    missing = [q.query_id for q in queries if q.query_id not in run_file.hits]
    doc_id_hits = _doc_id_hits_at_span_level(queries, run_file.hits)
    if run_file.unknown_query_ids:
        print(
            f"note: {len(run_file.unknown_query_ids)} run line(s) name queries not in {queries_path}, "
            f"ignored: {_preview(run_file.unknown_query_ids)}",
            file=sys.stderr,
        )
    if missing:
        print(
            f"note: {len(missing)} of {len(queries)} queries have no line in the run and are scored "
            f"as an empty retrieval: {_preview(missing)}",
            file=sys.stderr,
        )

    if doc_id_hits:
        levels = (
            "span- and page-level" if any(q.has_unit("page") for q in queries) else "span-level"
        )
        print(
            f"note: {sum(doc_id_hits.values())} hit(s) in {len(doc_id_hits)} queries with evidence spans name "
            f"only a doc_id: {levels} metrics count them as misses (no offsets); document-level metrics "
            "credit them",
            file=sys.stderr,
        )

    measures = [m for m in measures_for(k, budgets) if m.name != "precision_omega"]
    table = score_queries(queries, hits, measures, min_coverage=min_coverage, gain=gain)
    summary = summarize(table, queries, n_boot=n_boot, seed=seed)

    folder = Path(out).expanduser() if out else Path("outputs") / "score" / Path(run).stem
    folder.mkdir(parents=True, exist_ok=True)
    table.write_csv(folder / "per_query.csv")
    doc = summary.to_dict()
    doc["settings"] = {
        "k": list(k),
        "budgets": list(budgets),
        "gain": gain,
        "min_coverage": min_coverage,
        "tokenizer": tokenizer if budgets else None,
    }
    doc["run"] = {
        "corpus": str(corpus),
        "queries": str(queries_path),
        "run": str(run),
        "n_queries": len(queries),
        "n_run_lines_scored": len(run_file.hits),
        "n_unknown_query_ids": len(run_file.unknown_query_ids),
        "unknown_query_ids": list(run_file.unknown_query_ids),
        "n_missing_queries": len(missing),
        "missing_queries": missing,
        "n_doc_id_hits_at_span_level": sum(doc_id_hits.values()),
    }
    (folder / "summary.json").write_text(
        json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    markdown = summary.to_markdown()
    (folder / "summary.md").write_text(markdown, encoding="utf-8")
    print(markdown, end="")
    print(
        f"wrote {folder / 'per_query.csv'}, {folder / 'summary.json'}, {folder / 'summary.md'}",
        file=sys.stderr,
    )
    return folder
