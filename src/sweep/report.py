"""The comparison table of a sweep, rebuilt from the rows its jobs saved.

``python -m sweep.report DIR [DIR ...]`` rebuilds it at any time; the sweep
itself calls :func:`write_report` after every job, so an interrupted sweep
still has a table of the rows it finished.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from pathlib import Path
from typing import Any, Iterable, Sequence

LEVELS = ("doc", "span")
HEADLINE_METRICS = ("recall", "ndcg")
_SETTING_LABELS = {"chunk.strategy": "strategy", "chunk.size": "size", "chunk.overlap": "overlap",
                   "chunk.prefix": "prefix", "chunk.tokenizer": "tokenizer",
                   "embed.model": "model", "index._target_": "index"}


class ReportError(ValueError):
    pass


def load_rows(sweep_dir: Path) -> list[dict[str, Any]]:
    """Every job's row.json under a sweep directory, in job order."""
    rows = []
    for path in sweep_dir.glob("*/row.json"):
        try:
            row = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as e:
            raise ReportError(f"{path}: unreadable row: {e}") from None
        row["_dir"] = str(path.parent)
        rows.append(row)
    rows.sort(key=lambda r: int(r.get("job", 0)))
    return rows


def metric_columns(row: dict[str, Any]) -> Iterable[tuple[str, Any]]:
    for level, block in (row.get("levels") or {}).items():
        yield f"{level}.n_queries", block.get("n_queries")
        yield f"{level}.n_excluded", block.get("n_excluded")
        for metric, agg in block.get("metrics", {}).items():
            yield f"{level}.{metric}", agg.get("mean")
            yield f"{level}.{metric}.lo", agg.get("ci_low")
            yield f"{level}.{metric}.hi", agg.get("ci_high")


def flatten(row: dict[str, Any]) -> dict[str, Any]:
    """One CSV row: settings, status, stats, then every aggregate with its interval."""
    flat: dict[str, Any] = {"job": row.get("job"), "status": row.get("status"),
                            "error": row.get("error") or ""}
    flat.update(row.get("settings", {}))
    flat["overrides"] = " ".join(row.get("overrides", []))
    flat["notes"] = " | ".join(row.get("notes", []))
    flat.update(row.get("stats", {}))
    flat.update(metric_columns(row))
    return flat


def varied_settings(rows: Sequence[dict[str, Any]]) -> list[str]:
    """Setting keys whose value differs between rows (always size and overlap)."""
    keys = ["chunk.size", "chunk.overlap"]
    for key in _SETTING_LABELS:
        values = {json.dumps(r.get("settings", {}).get(key)) for r in rows}
        if len(values) > 1 and key not in keys:
            keys.insert(0 if key == "chunk.strategy" else len(keys), key)
    return keys


def _fmt(x: Any, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{x:.{digits}f}" if isinstance(x, float) else str(x)


def _with_ci(block: dict[str, Any] | None, metric: str) -> str:
    agg = (block or {}).get("metrics", {}).get(metric)
    if not agg:
        return "–"
    return f"{_fmt(agg['mean'])} [{_fmt(agg['ci_low'], 2)}, {_fmt(agg['ci_high'], 2)}]"


def headline_table(rows: Sequence[dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    """Header and cells of the printed table: the columns a person decides from."""
    table_k = [5]
    if rows and rows[0].get("eval"):
        table_k = list(rows[0]["eval"].get("table_k", table_k))
    keys = varied_settings(rows)
    header = [_SETTING_LABELS.get(k, k) for k in keys]
    header += ["chunks", "tok/chunk", "trunc %"]
    metric_cols = [(lvl, f"{m}@{k}") for k in table_k for lvl in LEVELS for m in HEADLINE_METRICS]
    header += [f"{lvl} {m}" for lvl, m in metric_cols]
    header += ["embed s", "total s", "status"]
    cells = []
    for r in rows:
        s, st, lv = r.get("settings", {}), r.get("stats", {}), r.get("levels") or {}
        line = [_fmt(s.get(k)) if not isinstance(s.get(k), str) else s[k].rsplit(".", 1)[-1]
                for k in keys]
        trunc = st.get("truncated_share")
        line += [_fmt(st.get("n_chunks")), _fmt(st.get("mean_chunk_tokens"), 1),
                 _fmt(None if trunc is None else 100 * trunc, 1)]
        line += [_with_ci(lv.get(lvl), m) for lvl, m in metric_cols]
        status = r.get("status", "?")
        if status != "ok":
            status = f"{status}: {r.get('error') or ''}"
        line += [_fmt(st.get("embed_s"), 1), _fmt(st.get("total_s"), 1), status]
        cells.append(line)
    return header, cells


def to_markdown(header: Sequence[str], cells: Sequence[Sequence[str]]) -> str:
    widths = [max(len(h), *(len(c[i]) for c in cells)) if cells else len(h)
              for i, h in enumerate(header)]
    def line(values: Sequence[str]) -> str:
        return "| " + " | ".join(v.ljust(w) for v, w in zip(values, widths)) + " |"
    out = [line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out += [line(c) for c in cells]
    return "\n".join(out)


def footnotes(rows: Sequence[dict[str, Any]]) -> list[str]:
    notes = []
    ok = [r for r in rows if r.get("status") == "ok"]
    if ok:
        lv = ok[0].get("levels") or {}
        for level in LEVELS:
            if level in lv:
                notes.append(f"{level} level: {lv[level].get('n_queries')} queries scored, "
                             f"{lv[level].get('n_excluded')} excluded (no {level}-level judgment).")
        if any((r.get("stats") or {}).get("truncated_share", 0) > 0 for r in ok):
            notes.append("trunc %: share of chunks longer than the embedder's max_seq_length; "
                         "their tails are never embedded.")
    notes.append("Cells: mean [95% bootstrap interval over queries]. All metrics, k, budgets: results.csv.")
    return notes


def write_csv(path: Path, records: Sequence[dict[str, Any]]) -> None:
    columns: list[str] = []
    for rec in records:
        columns += [c for c in rec if c not in columns]
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=columns)
        w.writeheader()
        w.writerows(records)
    tmp.replace(path)


def combine_per_query(rows: Sequence[dict[str, Any]], out: Path) -> None:
    """All jobs' per-query scores in one long table with a job column."""
    tmp = out.with_suffix(".tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        f.write("job,query_id,level,metric,value\n")
        for r in rows:
            path = Path(r["_dir"]) / "per_query.csv"
            if not path.exists():
                continue
            with open(path, encoding="utf-8") as src:
                next(src, None)
                for line in src:
                    f.write(f"{r['job']},{line}")
    tmp.replace(out)


def write_report(sweep_dir: Path, *, quiet: bool = False) -> str:
    """(Re)write results.csv, results.md and per_query.csv; print the table unless quiet."""
    sweep_dir = Path(sweep_dir)
    rows = load_rows(sweep_dir)
    if not rows:
        if not quiet:
            print(f"sweep: no finished rows in {sweep_dir}", file=sys.stderr)
        return ""
    write_csv(sweep_dir / "results.csv", [flatten(r) for r in rows])
    header, cells = headline_table(rows)
    text = to_markdown(header, cells) + "\n\n" + "\n".join(f"- {n}" for n in footnotes(rows))
    (sweep_dir / "results.md").write_text(text + "\n", encoding="utf-8")
    combine_per_query(rows, sweep_dir / "per_query.csv")
    if not quiet:
        print("\n" + text + "\n")
        print(f"sweep: {len(rows)} row(s); files in {sweep_dir}/ "
              "(results.csv, results.md, per_query.csv, <job>/row.json)")
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sweep.report",
                                 description="Rebuild a sweep's comparison table from its saved rows.")
    ap.add_argument("dirs", nargs="+", type=Path, help="sweep directories (outputs/<name>/<time>)")
    args = ap.parse_args(argv)
    status = 0
    for d in args.dirs:
        if not d.is_dir():
            print(f"sweep.report: error: {d}: not a directory", file=sys.stderr)
            status = 2
            continue
        try:
            if not write_report(d, quiet=False):
                status = 1
        except ReportError as e:
            print(f"sweep.report: error: {e}", file=sys.stderr)
            status = 2
    return status


if __name__ == "__main__":
    sys.exit(main())
