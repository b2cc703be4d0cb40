"""The comparison table of a sweep, rebuilt from the rows its jobs saved, and what to decide.

``python -m sweep.report DIR [DIR ...]`` rebuilds it at any time; the sweep
itself calls :func:`write_report` after every job (``quiet=True``: tables
only, they are cheap), so an interrupted sweep still has a table of the rows
it finished, and once more at the end (``quiet=False``: the table is printed
and the pictures and ``report.html`` are drawn).

Beyond the means, the report answers the questions a reader decides from:
is the best setting really better than the others on these queries (paired
test per query, Holm-corrected over the grid), which of the equally good
settings is cheapest (tokens handed to the LLM, then index size), how do
chunk sizes compare at the same context cost (token budgets), and which
queries fail and why (worst-first, with the text).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import os
import sys
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from sweep import htmlpage
from sweep.htmlpage import Picture, Section, Table
from sweep.files import write_text_atomic
from sweep.measures import LEVELS, Measure
from sweep.perquery import (QueryRow, ReportError, TypeBreakdown, first_relevant_ranks,
                            read_hits, read_scores, type_breakdown, worst_first,
                            worst_queries_markdown)
from sweep.stats import Comparison, Recommendation, compare_to_best, recommend

__all__ = ["Decision", "Primary", "ReportError", "SweepReport", "build_report", "compare_sweeps",
           "decide", "flatten", "headline_table", "load_rows", "main", "to_markdown",
           "varied_settings", "write_report"]

HEADLINE_METRICS = ("recall", "ndcg")
_SETTING_LABELS = {"chunk.strategy": "strategy", "chunk.size": "size", "chunk.overlap": "overlap",
                   "chunk.prefix": "prefix", "chunk.tokenizer": "tokenizer",
                   "embed.model": "model", "index._target_": "index"}
#: Used when a row saved no eval config (rows of an older sweep).
EVAL_DEFAULTS: dict[str, Any] = {"k": [1, 3, 5, 10], "budgets": [256, 512, 1024], "table_k": [5],
                                 "primary": "span/recall@5", "alpha": 0.05, "n_perm": 10_000,
                                 "seed": 0}
#: Worst queries shown with their full text (the table lists them all).
WORST_DETAILS = 20
#: Below this many compared queries the test can only see large differences: say so.
SMALL_EVAL_SET = 30


# ---------------------------------------------------------------- rows


def load_rows(sweep_dir: Path) -> list[dict[str, Any]]:
    """Every job's row.json under a sweep directory, in job order."""
    rows = []
    for path in Path(sweep_dir).glob("*/row.json"):
        # One damaged row (a job killed while writing it) must not cost the
        # table of all the others: skip it, loudly.
        try:
            row = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            print(f"sweep.report: warning: {path}: unreadable row, skipped ({e})", file=sys.stderr)
            continue
        if not isinstance(row, dict) or not isinstance(row.get("job", 0), int):
            print(f"sweep.report: warning: {path}: not a row object, skipped", file=sys.stderr)
            continue
        row["_dir"] = str(path.parent)
        rows.append(row)
    rows.sort(key=lambda r: int(r.get("job", 0)))
    return rows


def _ok(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in rows if r.get("status") == "ok"]


def levels_of(row: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """``level -> {"n_queries", "n_excluded", "metrics"}`` of a row.

    A row saves ``Summary.to_dict()`` (``{"levels": {...}, "bootstrap": {...}}``);
    rows that saved the level blocks directly are read too.
    """
    lv = row.get("levels") or {}
    if isinstance(lv.get("levels"), dict):
        lv = lv["levels"]
    return {k: v for k, v in lv.items() if k in LEVELS and isinstance(v, dict)}


def interval(row: dict[str, Any], level: str, metric: str) -> tuple[float, float, float] | None:
    """``(mean, low, high)`` of one aggregate of a row, None when the row has none."""
    agg = (levels_of(row).get(level) or {}).get("metrics", {}).get(metric)
    if not agg or agg.get("mean") is None:
        return None
    nan = float("nan")
    return (float(agg["mean"]), float(agg.get("ci_low", nan) if agg.get("ci_low") is not None else nan),
            float(agg.get("ci_high", nan) if agg.get("ci_high") is not None else nan))


def eval_config(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The eval settings of the sweep (the first ok row's), over the defaults."""
    ev = dict(EVAL_DEFAULTS)
    for r in _ok(rows) or rows:
        if r.get("eval"):
            ev.update({k: v for k, v in r["eval"].items() if v is not None})
            break
    return ev


def metric_columns(row: dict[str, Any]) -> Iterable[tuple[str, Any]]:
    for level, block in levels_of(row).items():
        yield f"{level}.n_queries", block.get("n_queries")
        yield f"{level}.n_excluded", block.get("n_excluded")
        for metric, agg in block.get("metrics", {}).items():
            yield f"{level}.{metric}", agg.get("mean")
            yield f"{level}.{metric}.lo", agg.get("ci_low")
            yield f"{level}.{metric}.hi", agg.get("ci_high")


def flatten(row: dict[str, Any], comparison: Comparison | None = None) -> dict[str, Any]:
    """One CSV row: settings, status, significance, stats, then every aggregate with its interval."""
    flat: dict[str, Any] = {"job": row.get("job"), "status": row.get("status"),
                            "error": row.get("error") or ""}
    flat.update(row.get("settings", {}))
    flat["overrides"] = " ".join(row.get("overrides", []))
    flat["notes"] = " | ".join(row.get("notes", []))
    flat["vs_best"] = comparison.verdict if comparison else ""
    flat["diff_from_best"] = comparison.diff if comparison else ""
    flat["p_value"] = comparison.p_value if comparison else ""
    flat["p_holm"] = comparison.p_holm if comparison else ""
    flat.update(row.get("stats", {}))
    flat.update(metric_columns(row))
    return flat


def varied_settings(rows: Sequence[dict[str, Any]]) -> list[str]:
    """Setting keys whose value differs between rows (always size and overlap)."""
    keys = ["chunk.size", "chunk.overlap"]
    # Known keys first, in their usual order, then anything else a sweep varied
    # (embed.max_seq_length, dataset, eval.min_coverage, ...).
    extra = sorted({k for r in rows for k in r.get("settings", {})} - set(_SETTING_LABELS))
    for key in [*_SETTING_LABELS, *extra]:
        values = {json.dumps(r.get("settings", {}).get(key), sort_keys=True, default=str) for r in rows}
        if len(values) > 1 and key not in keys:
            keys.insert(0 if key == "chunk.strategy" else len(keys), key)
    return keys


def _short(value: Any) -> str:
    """A setting value as a cell: a model path by its last folder, a class by its name."""
    if isinstance(value, str):
        if "/" in value:
            return value.rstrip("/").rsplit("/", 1)[-1]
        return value.rsplit(".", 1)[-1]
    return _fmt(value)


def setting_label(row: dict[str, Any], keys: Sequence[str], sep: str = " ") -> str:
    """``size=256 overlap=64`` (plus any other setting that varies in the sweep)."""
    s = row.get("settings", {})
    return sep.join(f"{_SETTING_LABELS.get(k, k)}={_short(s.get(k))}" for k in keys)


def _fmt(x: Any, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{x:.{digits}f}" if isinstance(x, float) else str(x)


def _with_ci(row: dict[str, Any], level: str, metric: str) -> str:
    iv = interval(row, level, metric)
    if iv is None:
        return "–"
    return f"{_fmt(iv[0])} [{_fmt(iv[1], 2)}, {_fmt(iv[2], 2)}]"


# ---------------------------------------------------------------- the decision


@dataclass(frozen=True)
class Primary:
    """The metric settings are tested and recommended on, e.g. ``span/recall@5``."""

    level: str
    measure: Measure

    @property
    def metric(self) -> str:
        return str(self.measure)

    @property
    def label(self) -> str:
        return f"{self.level} {self.metric}"

    @classmethod
    def parse(cls, text: str) -> "Primary":
        """``"span/recall@5"`` (or ``span.recall@5``; no level means span); ReportError if bad."""
        raw = str(text).strip()
        level, metric = "span", raw
        for sep in ("/", "."):
            head, found, tail = raw.partition(sep)
            if found and (head in LEVELS or sep == "/"):
                level, metric = head, tail
                break
        if level not in LEVELS:
            raise ReportError(f"eval.primary {text!r}: level must be one of {', '.join(LEVELS)} "
                              "(write it as level/metric, e.g. span/recall@5)")
        try:
            measure = Measure.parse(metric)
        except ValueError as e:
            raise ReportError(f"eval.primary {text!r}: {e}") from None
        if level not in measure.levels:
            raise ReportError(f"eval.primary {text!r}: {measure.name} exists at the "
                              f"{'/'.join(measure.levels)} level only")
        return cls(level, measure)


@dataclass(frozen=True)
class Decision:
    """Every ok setting tested against the best on the primary metric, and the pick."""

    primary: Primary | None
    comparisons: Mapping[int, Comparison] = field(default_factory=dict)
    recommendation: Recommendation | None = None
    recommended_label: str = ""
    scores: Mapping[int, Mapping[str, float]] = field(default_factory=dict)  # job -> query -> value
    notes: tuple[str, ...] = ()
    n_compared: int = 0  # queries scored in every tested setting


def _scores(rows: Sequence[dict[str, Any]], level: str, metric: str) -> dict[int, dict[str, float]]:
    out = {}
    for r in _ok(rows):
        path = Path(r["_dir"]) / "per_query.csv"
        if path.exists():
            values = read_scores(path, {(level, metric)}).get(level, metric)
            if values:
                out[int(r["job"])] = values
    return out


def _cost(row: dict[str, Any], primary: Primary, cost_k: int) -> tuple[float, float] | None:
    """What the recommendation minimises: tokens retrieved per query, then chunks in the index."""
    st = row.get("stats") or {}
    if primary.measure.budget is not None:
        # Every setting fills the same budget: only the index size tells them apart.
        tokens = float(primary.measure.budget)
    else:
        tokens = st.get(f"tokens@{cost_k}")
    if tokens is None or st.get("n_chunks") is None:
        return None
    return float(tokens), float(st["n_chunks"])


def decide(rows: Sequence[dict[str, Any]], ev: Mapping[str, Any] | None = None) -> Decision:
    """Test every ok setting against the best on ``eval.primary`` and pick the cheapest tie."""
    ev = eval_config(rows) if ev is None else ev
    try:
        primary = Primary.parse(ev["primary"])
    except ReportError as e:
        return Decision(None, notes=(f"No significance test: {e}.",))
    ok = _ok(rows)
    scores = _scores(rows, primary.level, primary.metric)
    if len(ok) < 2:
        return Decision(primary, scores=scores,
                        notes=("One setting ran: nothing to compare it with.",) if ok else ())
    missing = [int(r["job"]) for r in ok if int(r["job"]) not in scores]
    notes = []
    if missing:
        notes.append(f"No per-query {primary.label} for job(s) {', '.join(map(str, missing))}: "
                     "left out of the significance test.")
    if len(scores) < 2:
        notes.append(f"Significance needs per-query {primary.label} of at least two settings; "
                     "is it among the scored metrics (eval.k, eval.budgets)?")
        return Decision(primary, scores=scores, notes=tuple(notes))
    alpha, n_perm, seed = float(ev["alpha"]), int(ev["n_perm"]), int(ev["seed"])
    try:
        comparisons = compare_to_best(scores, alpha=alpha, n_perm=n_perm, seed=seed)
    except ValueError as e:
        notes.append(f"No significance test: {e}.")
        return Decision(primary, scores=scores, notes=tuple(notes))
    n_common = len(set.intersection(*(set(v) for v in scores.values())))
    notes.append(f"vs best: each setting against the best on {primary.label}, paired over the "
                 f"{n_common} queries scored in every setting (randomization test, {n_perm:,} sign "
                 f"flips, seed {seed}), p Holm-adjusted over {len(comparisons) - 1} comparison(s); "
                 f"≈ best: p ≥ {alpha:g}, not distinguishable from the best.")
    if n_common < SMALL_EVAL_SET:
        notes.append(f"Only {n_common} queries are compared: only large differences can be told "
                     "apart, so ≈ best is weak evidence that two settings are equal. More "
                     "queries sharpen the test.")
    keys = varied_settings(rows)
    by_job = {int(r["job"]): r for r in ok}
    labels = {j: setting_label(by_job[j], keys) for j in scores}
    cost_k = primary.measure.k if primary.measure.k is not None else max(_table_k(ev))
    cost = {j: c for j in scores if (c := _cost(by_job[j], primary, cost_k)) is not None}
    rec = recommend(comparisons, cost, metric=primary.label, labels=labels)
    if rec is None:
        notes.append("No recommendation: the settings as good as the best saved no token cost "
                     f"(tokens@{cost_k}, n_chunks).")
    return Decision(primary, {c.job: c for c in comparisons}, rec,
                    labels.get(rec.job, "") if rec else "", scores, tuple(notes), n_compared=n_common)


def _p(p: float) -> str:
    if p < 0.001:
        return "<0.001"
    return f"={p:.3f}" if p < 0.01 else f"={p:.2f}"


def verdict_text(c: Comparison | None) -> str:
    """``best`` / ``≈ best (p=0.43)`` / ``worse (p=0.002)``; p Holm-adjusted."""
    if c is None:
        return "–"
    if c.verdict == "best":
        return "best"
    return f"{'≈ best' if c.verdict == 'tie' else 'worse'} (p{_p(c.p_holm)})"


# ---------------------------------------------------------------- the table


def _table_k(ev: Mapping[str, Any]) -> list[int]:
    return [int(k) for k in ev.get("table_k") or [5]]


def _cost_k(ev: Mapping[str, Any], decision: Decision | None) -> int:
    if decision and decision.primary and decision.primary.measure.k is not None:
        return decision.primary.measure.k
    return max(_table_k(ev))


def budget_metrics(ev: Mapping[str, Any], primary: Primary | None) -> list[tuple[str, str]]:
    """``(level, metric)`` of the primary metric's name at every ``eval.budgets``."""
    level, name = (primary.level, primary.measure.name) if primary else ("span", "recall")
    if name == "precision_omega":
        return []
    return [(level, f"{name}@{int(b)}t") for b in ev.get("budgets") or []]


def headline_table(rows: Sequence[dict[str, Any]], decision: Decision | None = None
                   ) -> tuple[list[str], list[list[str]]]:
    """Header and cells of the printed table: the columns a person decides from."""
    ev = eval_config(rows)
    keys = varied_settings(rows)
    cost_k = _cost_k(ev, decision)
    header = [_SETTING_LABELS.get(k, k) for k in keys]
    header += ["chunks", "tok/chunk", f"tok@{cost_k}", "trunc %"]
    metric_cols = [(lvl, f"{m}@{k}") for k in _table_k(ev) for lvl in LEVELS for m in HEADLINE_METRICS]
    metric_cols += [c for c in budget_metrics(ev, decision.primary if decision else None)
                    if c not in metric_cols]
    header += [f"{lvl} {m}" for lvl, m in metric_cols]
    if decision is not None:
        header.append("vs best")
    header += ["embed s", "total s", "status"]
    cells = []
    for r in rows:
        s, st = r.get("settings", {}), r.get("stats", {}) or {}
        line = [_short(s.get(k)) for k in keys]
        trunc = st.get("truncated_share")
        line += [_fmt(st.get("n_chunks")), _fmt(st.get("mean_chunk_tokens"), 1),
                 _fmt(st.get(f"tokens@{cost_k}"), 0),
                 _fmt(None if trunc is None else 100 * trunc, 1)]
        line += [_with_ci(r, lvl, m) for lvl, m in metric_cols]
        if decision is not None:
            line.append(verdict_text(decision.comparisons.get(int(r.get("job", -1))))
                        if r.get("status") == "ok" else "–")
        status = r.get("status", "?")
        if status != "ok":
            status = f"{status}: {r.get('error') or ''}"
        line += [_fmt(st.get("embed_s"), 1), _fmt(st.get("total_s"), 1), status]
        cells.append(line)
    return header, cells


def _row_classes(rows: Sequence[dict[str, Any]], decision: Decision) -> tuple[str, ...]:
    out = []
    for r in rows:
        c = decision.comparisons.get(int(r.get("job", -1)))
        out.append("bad" if r.get("status") != "ok" else (c.verdict if c and c.verdict != "worse" else ""))
    return tuple(out)


def to_markdown(header: Sequence[str], cells: Sequence[Sequence[str]]) -> str:
    widths = [max(len(h), *(len(c[i]) for c in cells)) if cells else len(h)
              for i, h in enumerate(header)]
    def line(values: Sequence[str]) -> str:
        return "| " + " | ".join(v.replace("|", "\\|").ljust(w) for v, w in zip(values, widths)) + " |"
    out = [line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out += [line(c) for c in cells]
    return "\n".join(out)


def footnotes(rows: Sequence[dict[str, Any]], decision: Decision | None = None) -> list[str]:
    notes = []
    ok = _ok(rows)
    ev = eval_config(rows)
    if ok:
        lv = levels_of(ok[0])
        for level in LEVELS:
            if level in lv:
                notes.append(f"{level} level: {lv[level].get('n_queries')} queries scored, "
                             f"{lv[level].get('n_excluded')} excluded (no {level}-level judgment).")
        if any(((r.get("stats") or {}).get("truncated_share") or 0) > 0 for r in ok):
            notes.append("trunc %: share of chunks longer than the embedder's max_seq_length; "
                         "their tails are never embedded.")
    keys = varied_settings(rows)
    for r in rows:  # settings a strategy ignores are said, not silently dropped
        for note in r.get("notes") or []:
            notes.append(f"{setting_label(r, keys)}: {note}")
    cost_k = _cost_k(ev, decision)
    notes.append(f"tok@{cost_k}: mean tokens of the top {cost_k} chunks per query, what the LLM "
                 "would read; @Bt columns take the longest prefix of the ranking within B tokens, "
                 "so chunk sizes are compared at the same context cost.")
    if decision is not None:
        notes += list(decision.notes)
    # Rows keep the bootstrap settings beside their levels (older rows inside them).
    boot = next((b for r in ok for b in (r.get("bootstrap"), (r.get("levels") or {}).get("bootstrap"))
                 if isinstance(b, dict)), None)
    how = ""
    if boot:
        conf = boot.get("confidence", 0.95)
        how = f" ({conf * 100:g}%, {boot.get('n_boot')} resamples, seed {boot.get('seed')})"
    notes.append(f"Cells: mean [bootstrap interval over queries{how or ' (95%)'}]. "
                 "All metrics, k, budgets: results.csv.")
    return notes


def recommendation_text(decision: Decision) -> str:
    if decision.recommendation is None:
        return ""
    text = f"Recommendation: {decision.recommendation.reason}"
    if decision.n_compared < SMALL_EVAL_SET:
        text += f" Only {decision.n_compared} queries back this: a weak pick."
    return text


# ---------------------------------------------------------------- breakdown and worst queries


def _types(rows: Sequence[dict[str, Any]]) -> dict[str, str | None]:
    """Query types from the first saved hits.jsonl (every job saves the same queries)."""
    for r in _ok(rows):
        path = Path(r["_dir"]) / "hits.jsonl"
        if path.exists():
            return {q: rec.type for q, rec in read_hits(path).items()}
    return {}


def breakdown_table(breakdown: TypeBreakdown, labels: Mapping[int, str],
                    decision: Decision) -> Table:
    header = ("setting", "vs best") + tuple(f"{t} (n={n})" for t, n in zip(breakdown.types, breakdown.counts))
    body = []
    for i, job in enumerate(breakdown.jobs):
        body.append((labels.get(job, f"job {job}"), verdict_text(decision.comparisons.get(job)))
                    + tuple(_fmt(float(v)) for v in breakdown.means[i]))
    classes = tuple((c.verdict if (c := decision.comparisons.get(j)) and c.verdict != "worse" else "")
                    for j in breakdown.jobs)
    return Table(header, tuple(body), classes)


def _chosen_job(rows: Sequence[dict[str, Any]], decision: Decision) -> int | None:
    """The setting whose worst queries are listed: the recommended one, else the best."""
    if decision.recommendation is not None:
        return decision.recommendation.job
    best = [c.job for c in decision.comparisons.values() if c.verdict == "best"]
    if best:
        return best[0]
    return next(iter(decision.scores), None)


# ---------------------------------------------------------------- the whole report


@dataclass(frozen=True)
class SweepReport:
    """Everything the files of one sweep's report are rendered from."""

    sweep_dir: Path
    rows: tuple[dict[str, Any], ...]
    eval: Mapping[str, Any]
    decision: Decision
    labels: Mapping[int, str]           # job -> "size=256 overlap=0"
    table: Table
    text: str                           # printed and saved as results.md
    breakdown: Table | None
    worst: tuple[QueryRow, ...]
    worst_setting: str


def build_report(sweep_dir: Path) -> SweepReport | None:
    """Read a sweep's saved rows and per-query files; None when no job has finished."""
    sweep_dir = Path(sweep_dir)
    rows = load_rows(sweep_dir)
    if not rows:
        return None
    ev = eval_config(rows)
    decision = decide(rows, ev)
    keys = varied_settings(rows)
    labels = {int(r.get("job", -1)): setting_label(r, keys) for r in rows}
    header, cells = headline_table(rows, decision)
    table = Table(tuple(header), tuple(tuple(c) for c in cells), _row_classes(rows, decision))
    parts = [to_markdown(header, cells)]
    rec = recommendation_text(decision)
    if rec:
        parts.append(rec)
    parts.append("\n".join(f"- {n}" for n in footnotes(rows, decision)))
    text = "\n\n".join(parts)

    breakdown = worst = None
    worst_setting = ""
    if decision.primary is not None and decision.scores:
        tb = type_breakdown(decision.scores, _types(rows))
        if tb is not None:
            breakdown = breakdown_table(tb, labels, decision)
        job = _chosen_job(rows, decision)
        if job is not None and job in decision.scores:
            hits_path = Path(next(r["_dir"] for r in rows if int(r.get("job", -1)) == job)) / "hits.jsonl"
            records = read_hits(hits_path) if hits_path.exists() else {}
            worst = tuple(worst_first(decision.scores[job], decision.scores, records))
            worst_setting = labels.get(job, f"job {job}")
    return SweepReport(sweep_dir, tuple(rows), ev, decision, labels, table, text, breakdown,
                       worst or (), worst_setting)


def write_csv(path: Path, records: Sequence[dict[str, Any]]) -> None:
    columns: list[str] = []
    for rec in records:
        columns += [c for c in rec if c not in columns]
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=columns)
    w.writeheader()
    w.writerows(records)
    write_text_atomic(path, buf.getvalue())


def combine_per_query(rows: Sequence[dict[str, Any]], out: Path) -> None:
    """All jobs' per-query scores in one long table with a job column.

    A job's file never changes once its row is saved, so when the table
    already holds the first jobs (``per_query.jobs.json`` records which, and
    how big each file was) only the new jobs are appended: the sweep calls
    this after every job and would otherwise recopy every earlier job each time.
    """
    manifest_path = out.with_name(out.stem + ".jobs.json")
    entries = []
    for r in rows:
        path = Path(r["_dir"]) / "per_query.csv"
        if path.exists():
            st = path.stat()
            entries.append([int(r["job"]), str(path), st.st_size, st.st_mtime_ns])
    try:
        old = json.loads(manifest_path.read_text(encoding="utf-8"))
        done, size = old["entries"], int(old["size"])
        append = (entries[:len(done)] == done and out.exists() and out.stat().st_size == size)
    except (OSError, ValueError, KeyError, TypeError):
        append, done = False, []
    if not append:
        done = []
        write_text_atomic(out, "job,query_id,level,metric,value\n")
    with open(out, "a", encoding="utf-8", newline="") as f:
        for job, path, _, _ in entries[len(done):]:
            text = Path(path).read_text(encoding="utf-8")
            body = text.split("\n", 1)[1] if "\n" in text else ""
            if body:
                if not body.endswith("\n"):
                    body += "\n"
                prefix = f"{job},"
                f.write(prefix + body[:-1].replace("\n", "\n" + prefix) + "\n")
    write_text_atomic(manifest_path, json.dumps({"size": out.stat().st_size, "entries": entries}))


def _breakdown_markdown(rep: SweepReport) -> str:
    assert rep.breakdown is not None and rep.decision.primary is not None
    return (f"# {rep.decision.primary.label} by query type\n\n"
            "Mean per query type; n = queries of that type scored at this level. "
            "Small n: read as a hint, not a verdict.\n\n"
            + to_markdown(rep.breakdown.header, rep.breakdown.rows) + "\n")


def write_tables(rep: SweepReport) -> None:
    """results.csv, results.md, per_query.csv, and by_type.md / worst_queries.md when they apply."""
    d = rep.sweep_dir
    write_csv(d / "results.csv", [flatten(r, rep.decision.comparisons.get(int(r.get("job", -1))))
                                  for r in rep.rows])
    write_text_atomic(d / "results.md", rep.text + "\n")
    combine_per_query(rep.rows, d / "per_query.csv")
    if rep.breakdown is not None:
        write_text_atomic(d / "by_type.md", _breakdown_markdown(rep))
    if rep.worst and rep.decision.primary is not None:
        write_text_atomic(d / "worst_queries.md", worst_queries_markdown(
            rep.worst, metric=rep.decision.primary.label, setting=rep.worst_setting,
            details=WORST_DETAILS))


# ---------------------------------------------------------------- pictures and HTML


def _plot_name(kind: str, level: str, metric: str) -> str:
    return f"{kind}_{level}_{metric.replace('@', '_')}.png"


def heatmap_metrics(rep: SweepReport) -> list[tuple[str, str]]:
    """The primary metric, the printed @k columns, then the primary metric at each budget."""
    ev = rep.eval
    chosen = [(p.level, p.metric)] if (p := rep.decision.primary) else []
    chosen += [(lvl, f"{m}@{k}") for k in _table_k(ev) for lvl in LEVELS for m in HEADLINE_METRICS]
    chosen += budget_metrics(ev, rep.decision.primary)
    return list(dict.fromkeys(chosen))


def write_pictures(rep: SweepReport) -> list[Picture]:
    """Heatmaps, metric-vs-budget lines and the first-relevant-rank histogram under plots/."""
    from sweep import plots  # matplotlib loads only when pictures are drawn

    out_dir = rep.sweep_dir / "plots"
    ok = _ok(rep.rows)
    heatmaps: list[Picture] = []
    pictures: list[Picture] = []
    if not ok:
        return pictures
    keys = varied_settings(rep.rows)
    facet_keys = [k for k in keys if k not in ("chunk.size", "chunk.overlap")]
    facet = {int(r["job"]): setting_label(r, facet_keys, sep=", ") for r in rep.rows}
    seen: set[tuple[str, Any, Any]] = set()
    for r in rep.rows:  # two rows in one cell would hide each other: give them their own panel
        j = int(r["job"])
        cell = (facet[j], r.get("settings", {}).get("chunk.size"), r.get("settings", {}).get("chunk.overlap"))
        if cell in seen:
            facet[j] = (facet[j] + ", " if facet[j] else "") + f"job {j}"
        seen.add(cell)
    primary = rep.decision.primary
    for level, metric in heatmap_metrics(rep):
        cells = []
        for r in rep.rows:
            j, s = int(r["job"]), r.get("settings", {})
            iv = interval(r, level, metric) if r.get("status") == "ok" else None
            mark = ""
            if primary and (level, metric) == (primary.level, primary.metric):
                c = rep.decision.comparisons.get(j)
                mark = c.verdict if c else ""
            cells.append(plots.Cell(facet[j], s.get("chunk.size"), s.get("chunk.overlap"),
                                    iv[0] if iv else None, iv[1] if iv else None,
                                    iv[2] if iv else None,
                                    r.get("status", "?") if r.get("status") != "ok" else "", mark))
        path = plots.heatmap(out_dir / _plot_name("heatmap", level, metric), cells,
                             title=f"{level} {metric}: mean [95% interval]")
        if path:
            heatmaps.append(Picture(path, f"{level} {metric} over chunk.size × chunk.overlap"))
    if primary is not None:
        series = []
        budgets = [int(b) for b in rep.eval.get("budgets") or []]
        for r in ok:
            ivs = [interval(r, primary.level, f"{primary.measure.name}@{b}t") for b in budgets]
            pts = [(b, iv) for b, iv in zip(budgets, ivs) if iv is not None]
            if pts:
                series.append(plots.Series(rep.labels[int(r["job"])], tuple(b for b, _ in pts),
                                           tuple(iv[0] for _, iv in pts), tuple(iv[1] for _, iv in pts),
                                           tuple(iv[2] for _, iv in pts)))
        name = f"{primary.level} {primary.measure.name}"
        path = plots.budget_lines(out_dir / _plot_name("budget", primary.level, primary.measure.name),
                                  series, metric=name, title=f"{name} at equal context cost")
        if path:
            pictures.append(Picture(path, f"{name} at each token budget, one line per setting "
                                          "(band: 95% interval)"))
        k = max(int(x) for x in rep.eval.get("k") or [10])
        ranks = {}
        for r in ok:
            pq = Path(r["_dir"]) / "per_query.csv"
            if pq.exists():
                mrr = read_scores(pq, {(primary.level, f"mrr@{k}")}).get(primary.level, f"mrr@{k}")
                if mrr:
                    ranks[rep.labels[int(r["job"])]] = first_relevant_ranks(mrr)
        path = plots.rank_histograms(out_dir / f"first_relevant_rank_{primary.level}.png", ranks, k=k,
                                     title=f"Rank of the first relevant chunk ({primary.level} level, "
                                           f"top {k}; none = not in the top {k})")
        if path:
            pictures.append(Picture(path, "Where the first relevant chunk lands, per setting (seed 004)"))
    # The primary metric's heatmap first, then budgets and ranks, then the other heatmaps.
    return heatmaps[:1] + pictures + heatmaps[1:]


def _subtitle(rep: SweepReport) -> str:
    ok = _ok(rep.rows)
    dataset = next((r.get("dataset") for r in rep.rows if r.get("dataset")), None)
    bad = len(rep.rows) - len(ok)
    parts = [str(rep.sweep_dir)]
    if dataset:
        parts.append(f"dataset {dataset}")
    parts.append(f"{len(ok)} setting(s) ran" + (f", {bad} invalid or failed" if bad else ""))
    if rep.decision.primary:
        parts.append(f"primary metric {rep.decision.primary.label}")
    return " · ".join(parts)


def render_html(rep: SweepReport, pictures: Sequence[Picture]) -> str:
    """The self-contained report.html of one sweep."""
    sections = []
    rec = recommendation_text(rep.decision)
    if rec:
        sections.append(Section("Recommendation", f'<div class="rec">{escape(rec)}</div>'))
    sections.append(Section("Comparison table", htmlpage.table_html(rep.table)
                            + htmlpage.bullets(footnotes(list(rep.rows), rep.decision))))
    if pictures:
        sections.append(Section("Pictures", '<div class="grid">'
                                + "".join(htmlpage.picture_html(p) for p in pictures) + "</div>"))
    if rep.breakdown is not None and rep.decision.primary:
        sections.append(Section(f"{rep.decision.primary.label} by query type",
                                htmlpage.paragraphs(["Mean per query type; n = queries of that type "
                                                     "scored at this level."])
                                + htmlpage.table_html(rep.breakdown)))
    if rep.worst and rep.decision.primary:
        sections.append(Section("Worst queries", htmlpage.worst_queries_html(
            rep.worst, metric=rep.decision.primary.label, setting=rep.worst_setting,
            details=WORST_DETAILS)))
    return htmlpage.page("sweep report", sections, subtitle=_subtitle(rep))


def write_report(sweep_dir: Path, *, quiet: bool = False, html: bool | None = None) -> str:
    """(Re)write the tables; unless quiet also print them and draw plots/ and report.html.

    ``html`` overrides whether pictures and report.html are made (default: ``not quiet``,
    because drawing takes seconds and the sweep calls this after every job).
    """
    sweep_dir = Path(sweep_dir)
    rep = build_report(sweep_dir)
    if rep is None:
        if not quiet:
            print(f"sweep: no finished rows in {sweep_dir}", file=sys.stderr)
        return ""
    write_tables(rep)
    files = ["results.csv", "results.md", "per_query.csv"]
    files += [f for f in ("by_type.md", "worst_queries.md") if (sweep_dir / f).exists()]
    if (not quiet) if html is None else html:
        pictures = write_pictures(rep)
        htmlpage.write_page(sweep_dir / "report.html", render_html(rep, pictures))
        files += ["report.html"] + (["plots/"] if pictures else [])
    if not quiet:
        print("\n" + rep.text + "\n")
        print(f"sweep: {len(rep.rows)} row(s); files in {sweep_dir}/ ({', '.join(files)}, <job>/row.json)")
    return rep.text


# ---------------------------------------------------------------- several sweeps


def _sweep_name(path: Path) -> str:
    parts = Path(path).resolve().parts
    return "/".join(parts[-2:])


def compare_sweeps(reports: Sequence[SweepReport], out: Path) -> Path:
    """Side-by-side page of several sweeps: one table of every setting, each sweep's pick.

    When every sweep ran on the same dataset with the same primary metric, all
    their settings are also tested together against the overall best.
    """
    names = [_sweep_name(r.sweep_dir) for r in reports]
    primaries = {r.decision.primary for r in reports}
    datasets = {row.get("dataset") for r in reports for row in _ok(r.rows)}
    across: dict[tuple[int, int], Comparison] = {}
    notes = []
    primary = next(iter(primaries)) if len(primaries) == 1 else None
    if primary is not None and len(datasets) == 1:
        pooled, owner = {}, {}
        for i, r in enumerate(reports):
            for job, sc in r.decision.scores.items():
                owner[len(pooled)] = (i, job)
                pooled[len(pooled)] = sc
        if len(pooled) >= 2:
            try:
                ev = reports[0].eval
                for c in compare_to_best(pooled, alpha=float(ev["alpha"]), n_perm=int(ev["n_perm"]),
                                         seed=int(ev["seed"])):
                    across[owner[c.job]] = c
                notes.append(f"vs best (all sweeps): every setting of every sweep against the overall "
                             f"best on {primary.label}, paired over the queries they share, "
                             "Holm-adjusted over all of them.")
            except ValueError as e:
                notes.append(f"No test across sweeps: {e}.")
    else:
        notes.append("The sweeps differ in dataset or primary metric: each is tested on its own; "
                     "no test across sweeps.")
    keys: list[str] = []
    for r in reports:
        keys += [k for k in varied_settings(list(r.rows)) if k not in keys]
    label = primary.label if primary else "primary"
    cost_k = _cost_k(reports[0].eval, reports[0].decision)
    header = (("sweep",) + tuple(_SETTING_LABELS.get(k, k) for k in keys)
              + ("chunks", "tok/chunk", f"tok@{cost_k}", label, "vs best (own sweep)"))
    header += ("vs best (all sweeps)",) if across else ()
    header += ("status",)
    body, classes = [], []
    for i, (name, r) in enumerate(zip(names, reports)):
        p = r.decision.primary
        for row in r.rows:
            j, st = int(row.get("job", -1)), row.get("stats") or {}
            ok = row.get("status") == "ok"
            cells = ((name,) + tuple(_short(row.get("settings", {}).get(k)) for k in keys)
                     + (_fmt(st.get("n_chunks")), _fmt(st.get("mean_chunk_tokens"), 1),
                        _fmt(st.get(f"tokens@{cost_k}"), 0),
                        _with_ci(row, p.level, p.metric) if p else "–",
                        verdict_text(r.decision.comparisons.get(j)) if ok else "–"))
            if across:
                cells += (verdict_text(across.get((i, j))) if ok else "–",)
            status = row.get("status", "?")
            cells += (status if status == "ok" else f"{status}: {row.get('error') or ''}",)
            body.append(cells)
            c = across.get((i, j)) if across else r.decision.comparisons.get(j)
            classes.append("bad" if not ok else (c.verdict if c and c.verdict != "worse" else ""))
    recs = [f"{name}: {recommendation_text(r.decision) or 'no recommendation'}"
            for name, r in zip(names, reports)]
    sections = [Section("Recommendations", htmlpage.bullets(recs, cls="")),
                Section("All settings", htmlpage.table_html(Table(header, tuple(body), tuple(classes)))
                        + htmlpage.bullets(notes))]
    side = []
    for name, r in zip(names, reports):
        pics = []
        if p := r.decision.primary:
            for fname, caption in ((_plot_name("heatmap", p.level, p.metric), f"{p.label}"),
                                   (_plot_name("budget", p.level, p.measure.name),
                                    f"{p.level} {p.measure.name} by token budget")):
                path = r.sweep_dir / "plots" / fname
                if path.exists():
                    pics.append(htmlpage.picture_html(Picture(path, f"{name}: {caption}")))
        side.append(f"<div><h3>{escape(name)}</h3>{''.join(pics) or '<p>(no pictures)</p>'}"
                    f"{htmlpage.paragraphs([_subtitle(r)])}</div>")
    sections.append(Section("Side by side", f'<div class="grid">{"".join(side)}</div>'))
    out = Path(out)
    htmlpage.write_page(out, htmlpage.page(f"sweep comparison: {len(reports)} sweeps", sections,
                                           subtitle=" · ".join(names)))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sweep.report",
                                 description="Rebuild a sweep's comparison table, pictures and "
                                             "report.html from its saved rows; with several "
                                             "sweeps, also a side-by-side comparison page.")
    ap.add_argument("dirs", nargs="+", type=Path, help="sweep directories (outputs/<name>/<time>)")
    ap.add_argument("--out", default="sweep-comparison.html",
                    help="comparison page for several sweeps: an .html file or a directory "
                         "(default: ./sweep-comparison.html)")
    ap.add_argument("--no-html", action="store_true", help="tables only: no pictures, no report.html")
    args = ap.parse_args(argv)
    status = 0
    done: list[Path] = []
    for d in args.dirs:
        if not d.is_dir():
            print(f"sweep.report: error: {d}: not a directory", file=sys.stderr)
            status = 2
            continue
        try:
            if not write_report(d, quiet=False, html=not args.no_html):
                status = max(status, 1)
            else:
                done.append(d)
        except ReportError as e:
            print(f"sweep.report: error: {e}", file=sys.stderr)
            status = 2
    if len(args.dirs) > 1 and len(done) > 1 and not args.no_html:
        out = Path(args.out)
        if out.is_dir() or args.out.endswith(("/", os.sep)) or out.suffix.lower() not in (".html", ".htm"):
            out = out / "sweep-comparison.html"
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            reports = [rep for d in done if (rep := build_report(d)) is not None]
            print(f"sweep.report: comparison of {len(reports)} sweeps: {compare_sweeps(reports, out)}")
        except (ReportError, OSError) as e:
            print(f"sweep.report: error: {e}", file=sys.stderr)
            status = 2
    return status


if __name__ == "__main__":
    sys.exit(main())
