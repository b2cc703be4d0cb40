"""Score any retriever's output: ``python -m sweep.score --corpus C --queries Q --run RUN.jsonl``.

``RUN.jsonl`` has one line per query, ``{"query_id": "...", "hits": [...]}``,
hits in rank order. A hit is a doc_id string or an object
``{"doc_id", "start", "end", "n_tokens"?}`` with offsets into the document's
text (``score``, ``chunk_id`` and ``text`` may ride along; ``text`` must then
equal the document's characters at those offsets).

Writes ``per_query.csv`` (``query_id,level,metric,value``), ``summary.json``
and ``summary.md`` into ``--out`` and prints the summary table. Bad input
stops with one line naming the file, the line and the problem (exit 2); an
empty run file, or one naming none of the queries, is bad input too.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from sweep.cli.commands import CommandParser
from sweep.scoring.aggregate import summarize
from sweep.core.types import Document, Hit, Query
from sweep.core.evalconfig import EvalConfig
from sweep.datasets.loading import DatasetError, load_corpus, load_queries
from sweep.core.measures import measures_for
from sweep.scoring.credit import GAINS, score_queries
from sweep.core.tokenization import TokenizerError, count_tokens

__all__ = ["RunFile", "RunFileError", "fill_token_counts", "main", "read_run"]

_HIT_KEYS = frozenset({"doc_id", "start", "end", "n_tokens", "score", "chunk_id", "text"})
_LIST_PREVIEW = 5
#: Bound for counts and cut-offs read from the command line or a run file:
#: beyond it NumPy's int64 sums could wrap around.
_MAX_INT = 2**31 - 1


class RunFileError(ValueError):
    """A malformed run file; ``str()`` is ``file:line: problem`` (plus a count of further problems)."""

    def __init__(self, problems: Sequence[str]):
        self.problems = list(problems)
        message = self.problems[0]
        if len(self.problems) > 1:
            more = len(self.problems) - 1
            message += f" (and {more} more problem{'s' if more > 1 else ''})"
        super().__init__(message)


@dataclass(frozen=True)
class RunFile:
    """A parsed run: hits of the queries it names, and the ids it names that no query has."""

    path: str
    hits: Mapping[str, tuple[Hit, ...]]
    unknown_query_ids: tuple[str, ...] = ()
    lines: Mapping[str, int] = field(default_factory=dict)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return {int: "a number", float: "a number", str: "a string", list: "an array", dict: "an object"}.get(
        type(value), type(value).__name__)


def _show(value: Any) -> str:
    """A JSON value as it reads in the file, for messages: ``NaN``, ``1.5``, ``string "3"``, ``null``."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else "Infinity" if value > 0 else "-Infinity"
    if value is None or isinstance(value, (bool, int, float)):
        return json.dumps(value)
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        return "string " + (text if len(text) <= 40 else text[:36] + '..."')
    return _kind(value)


def _parse_hit(item: Any, texts: Mapping[str, str]) -> tuple[Hit | None, str | None]:
    """A hit of a run line, or the problem with it."""
    if isinstance(item, str):
        if item not in texts:
            return None, f"unknown doc_id {item!r} (not in the corpus)"
        return Hit(item), None
    if not isinstance(item, dict):
        return None, f"expected a doc_id string or an object, got {_kind(item)}"
    extra = sorted(set(item) - _HIT_KEYS)
    if extra:
        return None, f"unknown key {extra[0]!r} (a hit has {', '.join(sorted(_HIT_KEYS))})"
    doc_id = item.get("doc_id")
    if not isinstance(doc_id, str):
        return None, "missing key 'doc_id'" if doc_id is None else f"doc_id must be a string, got {_kind(doc_id)}"
    if doc_id not in texts:
        return None, f"unknown doc_id {doc_id!r} (not in the corpus)"
    text = texts[doc_id]
    has_start, has_end = "start" in item, "end" in item
    start = end = None
    if has_start != has_end:
        return None, f"{'start' if has_start else 'end'} without {'end' if has_start else 'start'}"
    if has_start:
        start, end = item["start"], item["end"]
        bad = [f"{key} must be an integer, got {_show(value)}"
               for key, value in (("start", start), ("end", end)) if not _is_int(value)]
        if bad:
            return None, "; ".join(bad)
        if not 0 <= start < end <= len(text):
            return None, f"span {start}:{end} is not a non-empty span inside {doc_id!r} ({len(text)} characters)"
        if "text" in item and item["text"] != text[start:end]:
            return None, f"text does not match {doc_id!r} at {start}:{end} (run made against another corpus version?)"
    n_tokens = item.get("n_tokens")
    if n_tokens is not None and not (_is_int(n_tokens) and 0 <= n_tokens <= _MAX_INT):
        return None, f"n_tokens must be an integer from 0 to {_MAX_INT}, got {_show(n_tokens)}"
    return Hit(doc_id, start, end, n_tokens), None


def read_run(path: str | Path, documents: Sequence[Document], query_ids: Sequence[str]) -> RunFile:
    """Parse and check a run file against the corpus; lines naming unknown queries are set aside."""
    path = Path(path).expanduser()
    texts = {d.doc_id: d.text for d in documents}
    known = set(query_ids)
    problems: list[str] = []
    try:
        data = path.read_bytes()
    except OSError as e:
        raise RunFileError([f"{path}: cannot read run file: {e.strerror or e}"]) from None
    hits: dict[str, tuple[Hit, ...]] = {}
    lines: dict[str, int] = {}
    unknown: dict[str, None] = {}
    blank = True
    for lineno, raw in enumerate(data.split(b"\n"), 1):
        where = f"{path}:{lineno}"
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            problems.append(f"{where}: not valid UTF-8")
            continue
        if lineno == 1:
            line = line.removeprefix("\ufeff")
        if not line.strip():
            continue
        blank = False
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            problems.append(f"{where}: bad JSON: {e.msg} (column {e.colno})")
            continue
        except RecursionError:
            problems.append(f"{where}: bad JSON: nested too deeply")
            continue
        if not isinstance(row, dict):
            problems.append(f"{where}: expected a JSON object, got {_kind(row)}")
            continue
        qid = row.get("query_id")
        if not isinstance(qid, str):
            problems.append(f"{where}: " + ("missing key 'query_id'" if qid is None else
                                            f"query_id must be a string, got {_kind(qid)}"))
            continue
        if qid in lines or qid in unknown:
            first = lines.get(qid)
            problems.append(f"{where}: duplicate query_id {qid!r}" + (f" (first at line {first})" if first else ""))
            continue
        items = row.get("hits")
        if not isinstance(items, list):
            problems.append(f"{where}: " + ("missing key 'hits'" if items is None else
                                            f"hits must be an array, got {_kind(items)}"))
            continue
        parsed: list[Hit] = []
        for rank, item in enumerate(items, 1):
            hit, problem = _parse_hit(item, texts)
            if problem is not None:
                problems.append(f"{where}: hit {rank}: {problem}")
                break
            parsed.append(hit)  # type: ignore[arg-type]
        else:
            if qid in known:
                hits[qid] = tuple(parsed)
                lines[qid] = lineno
            else:
                unknown[qid] = None
    if problems:
        raise RunFileError(problems)
    if blank:
        # Scoring it would give every query 0, which looks like a result.
        raise RunFileError([f"{path}: empty run file: no line with a query_id and its hits"])
    return RunFile(str(path), hits, tuple(unknown), lines)


def fill_token_counts(hits: Mapping[str, Sequence[Hit]], documents: Sequence[Document],
                      tokenizer: str = "cl100k_base") -> dict[str, tuple[Hit, ...]]:
    """Hits with ``n_tokens`` counted where missing: the span's text, or the whole document's."""
    texts = {d.doc_id: d.text for d in documents}

    def filled(h: Hit) -> Hit:
        if h.n_tokens is not None:
            return h
        text = texts[h.doc_id] if h.start is None else texts[h.doc_id][h.start:h.end]
        return Hit(h.doc_id, h.start, h.end, count_tokens(tokenizer, text))

    return {qid: tuple(map(filled, hs)) for qid, hs in hits.items()}


def _int_list(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated positive integers, got {text!r}") from None
    if not values or any(not 1 <= v <= _MAX_INT for v in values):
        raise argparse.ArgumentTypeError(f"expected comma-separated positive integers, got {text!r}")
    return values


def _int_in(low: int, high: int = _MAX_INT):
    """An argparse type: an integer from low to high."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = low - 1
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"expected an integer from {low} to {high}, got {text!r}")
        return value
    return parse


def _coverage(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1], got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = CommandParser("sweep.score")
    parser.add_argument("--corpus", required=True, help="corpus.jsonl, a folder of .md/.txt files, or a dataset directory")
    parser.add_argument("--queries", required=True, help="queries.jsonl (project or BEIR format) or a dataset directory")
    parser.add_argument("--run", required=True, help="run file: one {\"query_id\", \"hits\"} object per line")
    ev = EvalConfig()  # the sweep's scoring defaults: one place for them
    parser.add_argument("--k", type=_int_list, default=list(ev.k),
                        help=f"cut-offs (default {','.join(map(str, ev.k))})")
    parser.add_argument("--budgets", type=_int_list, default=[], help="token budgets for @Bt measures, e.g. 512,1024")
    parser.add_argument("--gain", choices=GAINS, default=ev.gain, help="ndcg gain of a grade g: g or 2^g - 1")
    parser.add_argument("--min-coverage", type=_coverage, default=ev.min_coverage,
                        help="share of a span's characters the retrieved chunks must cover to credit it "
                             f"(default {ev.min_coverage})")
    parser.add_argument("--out", help="output directory (default: outputs/score/<run file name>)")
    parser.add_argument("--split", default="test", help="BEIR qrels split (default test)")
    parser.add_argument("--tokenizer", default="cl100k_base", help="counts tokens of hits without n_tokens (budgets only)")
    parser.add_argument("--n-boot", type=_int_in(1), default=ev.n_boot,
                        help=f"bootstrap resamples (default {ev.n_boot})")
    parser.add_argument("--seed", type=_int_in(0), default=ev.seed, help=f"bootstrap seed (default {ev.seed})")
    return parser


def _preview(ids: Sequence[str]) -> str:
    shown = ", ".join(repr(i) for i in ids[:_LIST_PREVIEW])
    return shown + (f", ... ({len(ids) - _LIST_PREVIEW} more)" if len(ids) > _LIST_PREVIEW else "")


def _doc_id_hits_at_span_level(queries: Sequence[Query], hits: Mapping[str, Sequence[Hit]]) -> dict[str, int]:
    """Per query scored at span level: how many of its hits have no offsets (and so earn nothing there)."""
    out: dict[str, int] = {}
    for q in queries:
        if q.query_id in hits and any(j.is_span and j.grade > 0 for j in q.relevant):
            n = sum(1 for h in hits[q.query_id] if h.start is None)
            if n:
                out[q.query_id] = n
    return out


def run(args: argparse.Namespace) -> int:
    """Score, write the files, print the summary. Raises the loaders' errors on bad input."""
    documents = load_corpus(args.corpus)
    queries: tuple[Query, ...] = load_queries(args.queries, documents, split=args.split)
    run_file = read_run(args.run, documents, [q.query_id for q in queries])
    if not run_file.hits:
        ids = run_file.unknown_query_ids
        raise RunFileError([f"{args.run}: none of its {len(ids)} query_ids is in {args.queries} "
                            f"({_preview(ids)}): is it the run of another question set?"])
    hits: Mapping[str, Sequence[Hit]] = run_file.hits
    if args.budgets:
        hits = fill_token_counts(hits, documents, args.tokenizer)

    missing = [q.query_id for q in queries if q.query_id not in run_file.hits]
    doc_id_hits = _doc_id_hits_at_span_level(queries, run_file.hits)
    if run_file.unknown_query_ids:
        print(f"note: {len(run_file.unknown_query_ids)} run line(s) name queries not in {args.queries}, "
              f"ignored: {_preview(run_file.unknown_query_ids)}", file=sys.stderr)
    if missing:
        print(f"note: {len(missing)} of {len(queries)} queries have no line in the run and are scored "
              f"as an empty retrieval: {_preview(missing)}", file=sys.stderr)

    if doc_id_hits:
        print(f"note: {sum(doc_id_hits.values())} hit(s) in {len(doc_id_hits)} queries with evidence spans name "
              "only a doc_id: span-level metrics count them as misses (no offsets); document-level metrics "
              "credit them", file=sys.stderr)

    measures = [m for m in measures_for(args.k, args.budgets) if m.name != "precision_omega"]
    table = score_queries(queries, hits, measures, min_coverage=args.min_coverage, gain=args.gain)
    summary = summarize(table, queries, n_boot=args.n_boot, seed=args.seed)

    out = Path(args.out).expanduser() if args.out else Path("outputs") / "score" / Path(args.run).stem
    out.mkdir(parents=True, exist_ok=True)
    table.write_csv(out / "per_query.csv")
    doc = summary.to_dict()
    doc["settings"] = {"k": args.k, "budgets": args.budgets, "gain": args.gain,
                       "min_coverage": args.min_coverage, "tokenizer": args.tokenizer if args.budgets else None}
    doc["run"] = {
        "corpus": str(args.corpus), "queries": str(args.queries), "run": str(args.run),
        "n_queries": len(queries), "n_run_lines_scored": len(run_file.hits),
        "n_unknown_query_ids": len(run_file.unknown_query_ids), "unknown_query_ids": list(run_file.unknown_query_ids),
        "n_missing_queries": len(missing), "missing_queries": missing,
        "n_doc_id_hits_at_span_level": sum(doc_id_hits.values()),
    }
    (out / "summary.json").write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    markdown = summary.to_markdown()
    (out / "summary.md").write_text(markdown, encoding="utf-8")
    print(markdown, end="")
    print(f"wrote {out / 'per_query.csv'}, {out / 'summary.json'}, {out / 'summary.md'}", file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return run(args)
    except (DatasetError, RunFileError, TokenizerError) as e:
        print(f"sweep.score: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"sweep.score: error: {e.filename or ''}: {e.strerror or e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
