"""report.html's explorer: every question in every setting, two settings side by side,
any document with any setting's chunk boundaries, behind deep links.

This module prepares what the page's script (``assets/explorer.js``) draws from: one
JSON object, ``explorer_data``, read from the sweep folder alone (rows, per-query
scores, each job's ``hits.jsonl`` and ``chunks.csv``, the kept documents). Chunk texts
are never stored twice: a passage is a document, a start and an end, and the page cuts
its text from the document (``text == doc.text[start:end]`` holds for every chunk).

The data rides inside the page up to ``INLINE_BYTES``; past that it goes into one file
beside it, ``report-data.js`` (a browser refuses to fetch a ``.json`` file from
``file://`` but runs a script beside the page), and the page says so when that file is
missing. Every string in it comes from documents, questions and configs: the script
inserts each as text, never as markup, and inline the JSON writes every ``<`` as
``\\u003c``, so no data can close its ``<script>`` element.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from importlib.resources import files
from pathlib import Path
from typing import Any

from sweep.core.files import write_text_atomic
from sweep.core.settings import format_value
from sweep.reporting.html import subtitle
from sweep.reporting.htmlkit import Script
from sweep.reporting.sweepreport import SweepReport
from sweep.reporting.tables import results_frame, row_class
from sweep.store.chunkfile import CHUNKS_NAME, ChunkFileError, read_chunk_offsets
from sweep.store.corpus import KeptDocument, kept_documents_path, read_kept_documents
from sweep.store.row import Row
from sweep.store.traces import QueryTrace, read_traces

__all__ = [
    "EXPLORER_FORMAT",
    "INLINE_BYTES",
    "SIDECAR_NAME",
    "explorer_data",
    "explorer_page_parts",
    "write_sidecar",
]

EXPLORER_FORMAT = "sweep-explorer"
#: The page's data budget: a bundled-corpus sweep (~1 MB) rides inside report.html, so it
#: can be mailed as one file; a 2,000-question grid goes beside it.
INLINE_BYTES = 6_000_000
SIDECAR_NAME = "report-data.js"
_DATA_ID = "sweep-explorer-data"
# "0.812 [0.78, 0.84]": a metric cell of the comparison table (sweep.reporting.tables)
_INTERVAL = re.compile(r"^(-?\d+(?:\.\d+)?) \[(-?\d+(?:\.\d+)?), (-?\d+(?:\.\d+)?)\]$")
_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")


def _number(x: float | None, digits: int = 4) -> float | None:
    return None if x is None or not math.isfinite(x) else round(float(x), digits)


def _table(rep: SweepReport) -> dict[str, Any]:
    """The comparison table as shown (display strings), with the numbers it sorts and
    colours by, read back from the same cells so the two never disagree."""
    df = results_frame(rep)
    settings = {c for c in df.columns[: len(rep.keys)]}
    cells = df.astype(str).values.tolist()
    kinds = []
    for i, name in enumerate(df.columns):
        column = [row[i] for row in cells]
        if name in settings:
            kinds.append("setting")
        elif any(_INTERVAL.match(c) for c in column):
            kinds.append("metric")
        elif all(_NUMBER.match(c) or c == "–" for c in column):
            kinds.append("number")
        else:
            kinds.append("text")
    rows = []
    for r, row in zip(rep.rows, cells):
        values, low, high = [], [], []
        for kind, cell in zip(kinds, row):
            m = _INTERVAL.match(cell)
            if kind == "metric" and m:
                values.append(float(m[1]))
                low.append(float(m[2]))
                high.append(float(m[3]))
            else:
                values.append(float(cell) if kind == "number" and _NUMBER.match(cell) else None)
                low.append(None)
                high.append(None)
        rows.append(
            {
                "job": r.job,
                "class": "bad" if not r.ok else row_class(rep, r.job),
                "cells": row,
                "values": values,
                "low": low,
                "high": high,
            }
        )
    return {
        "columns": [{"name": str(n), "kind": k} for n, k in zip(df.columns, kinds)],
        "rows": rows,
    }


def _job(rep: SweepReport, r: Row) -> dict[str, Any]:
    c = rep.decision.comparison(r.job)
    rerank = r.settings.get("rerank")
    return {
        "job": r.job,
        "label": rep.labels[r.job],
        "ok": r.ok,
        "status": r.status if r.ok else f"{r.status}: {r.error or ''}",
        "pick": rep.decision.is_pick(r.job),
        "verdict": c.verdict if c is not None else "",
        "settings": {k: format_value(r.settings.get(k)) for k in rep.keys},
        "max_seq_length": int(r.stats.max_seq_length or 0),
        "rerank": str(rerank) if r.first_stage is not None and rerank else None,
        "parent": r.child is not None,
    }


class _Docs:
    """The documents the page shows, each once per dataset: two readers of one PDF (a
    reader sweep) give two texts under one id, and each job's offsets are into its own."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []
        self.index: dict[tuple[int, str], int] = {}

    def add(self, dataset: int, d: KeptDocument) -> None:
        if (dataset, d.doc_id) in self.index:
            return
        self.index[dataset, d.doc_id] = len(self.items)
        self.items.append(
            {
                "id": d.doc_id,
                "dataset": dataset,
                "n_chars": d.n_chars,
                "language": d.language,
                "text": d.text,
                "pages": None if d.pages is None else [list(p) for p in d.pages],
            }
        )

    def of(self, dataset: int, doc_id: str, end: Any = 0) -> int:
        """The index of a document, added without text when the folder kept none (a
        sweep saved before documents were kept)."""
        if (dataset, doc_id) not in self.index:
            self.add(dataset, KeptDocument(doc_id, None, 0, None, ""))
        i = self.index[dataset, doc_id]
        if self.items[i]["text"] is None and isinstance(end, int):
            self.items[i]["n_chars"] = max(self.items[i]["n_chars"], end)
        return i

    def has_text(self, i: int) -> bool:
        return self.items[i]["text"] is not None


def _datasets(rep: SweepReport) -> tuple[list[dict[str, Any]], dict[int, int]]:
    """The sweep's datasets (one per content fingerprint: a reader sweep reads the same
    files into several) and each job's index among them."""
    found: dict[str, int] = {}
    out: list[dict[str, Any]] = []
    of_job: dict[int, int] = {}
    for r in rep.rows:
        info = r.dataset
        fp = info.fingerprint if info else ""
        if fp not in found:
            found[fp] = len(out)
            name = info.name if info else ""
            out.append(
                {
                    "name": name,
                    "label": name + (f" ({info.readers})" if info and info.readers else ""),
                    "fingerprint": fp,
                }
            )
        of_job[r.job] = found[fp]
    labels = [d["label"] for d in out]
    for d in out:  # two sets that read alike are told apart by their content
        if labels.count(d["label"]) > 1:
            d["label"] += f" [{d['fingerprint'][:8]}]"
    return out, of_job


def _kept_documents(rep: SweepReport, datasets: Sequence[Mapping[str, Any]], docs: _Docs) -> None:
    for i, d in enumerate(datasets):
        path = kept_documents_path(rep.sweep_dir, d["fingerprint"])
        if path is not None:
            for kept in read_kept_documents(path, inside=rep.sweep_dir):
                docs.add(i, kept)


def _outcomes(rep: SweepReport) -> dict[int, Mapping[str, float]]:
    """Each job's primary metric per question, from the decision of its group."""
    out: dict[int, Mapping[str, float]] = {}
    for d in rep.decision.decisions:
        for job in d.scores:
            out[job] = d.scores[job]
    return out


def _set_key(r: Row) -> str:
    """Which questions a job answered: rows of one evaluation set share their questions."""
    return r.dataset.key if r.dataset else ""


def _questions(
    rep: SweepReport,
    traces: Mapping[int, Mapping[str, QueryTrace]],
    of_job: Mapping[int, int],
    docs: _Docs,
) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """Every question of every evaluation set, once, and its key (set, id). A question's
    gold holds its evidence in each dataset its set was read into (offsets differ between
    readers), each item pointing at that dataset's document."""
    outcomes = _outcomes(rep)
    entries: dict[tuple[str, str], dict[str, Any]] = {}
    read_in: dict[tuple[str, str], set[int]] = {}
    for job, by_id in traces.items():
        r = rep.row(job)
        ds = of_job[job]
        for qid, t in by_id.items():
            key = (_set_key(r), qid)
            entry = entries.get(key)
            if entry is None:
                entry = entries[key] = {
                    "id": qid,
                    "dataset": ds,
                    "text": t.query,
                    "type": t.type,
                    "source": t.source,
                    "reference": t.reference,
                    "answerable": bool(t.gold),
                    "gold": [],
                    "outcome": [],
                }
                read_in[key] = set()
            if ds in read_in[key]:
                continue
            read_in[key].add(ds)
            for g in t.gold:
                i = docs.of(ds, g.doc_id, g.end)
                item: dict[str, Any] = {
                    "doc": i,
                    "start": g.start,
                    "end": g.end,
                    "grade": g.grade,
                    "pages": g.pages,
                }
                if not docs.has_text(i) and g.text is not None:
                    item["text"] = g.text  # the page cannot cut it from a document it lacks
                entry["gold"].append(item)
    for (key, qid), entry in entries.items():
        entry["outcome"] = [
            _number(outcomes.get(r.job, {}).get(qid))
            if r.ok and entry["answerable"] and _set_key(r) == key
            else None
            for r in rep.rows
        ]
    return list(entries.values()), list(entries)


def _passages_and_hits(
    r: Row,
    ds: int,
    traces: Mapping[str, QueryTrace],
    order: Sequence[tuple[str, str]],
    docs: _Docs,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A job's passages (its chunks in document order, then any other passage a hit is:
    a parent) and its hits per question, as indices into them."""
    cols: dict[str, list[Any]] = {k: [] for k in ("id", "doc", "start", "end", "tokens", "window")}
    texts: list[str | None] = []
    # By id and span: a parent's id may be a chunk's id too (both count from #0 per document).
    index: dict[tuple[str, str, int, int], int] = {}

    def add(chunk_id: str, doc_id: str, start: int, end: int, tokens: int, text: str | None) -> int:
        i = index[chunk_id, doc_id, start, end] = len(texts)
        d = docs.of(ds, doc_id, end)
        for key, value in zip(cols, (chunk_id, d, start, end, tokens, -1)):
            cols[key].append(value)
        texts.append(None if docs.has_text(d) else text)
        return i

    path = r.file(CHUNKS_NAME)
    if path is not None:
        try:
            for c in read_chunk_offsets(path):
                add(c.chunk_id, c.doc_id, c.start, c.end, c.n_tokens, None)
        except ChunkFileError:  # the explorer shows the hits it has; the table is not its job
            pass
    n_chunks = len(texts)
    chunk_index = {cols["id"][i]: i for i in range(n_chunks)}
    hits: dict[str, list[list[Any]]] = {"p": [], "s": [], "first": [], "via": []}
    reranked = parented = False
    key = _set_key(r)
    for set_key, qid in order:
        t = traces.get(qid) if set_key == key else None
        p, s, first, via = [], [], [], []
        for h in t.hits if t is not None else ():
            i = index.get((h.chunk_id, h.doc_id, h.start, h.end))
            if i is None:
                i = add(h.chunk_id, h.doc_id, h.start, h.end, h.n_tokens, h.text)
            window = h.window_end
            if window is not None:
                cols["window"][i] = int(window)
            if texts[i] is None and not docs.has_text(cols["doc"][i]):
                texts[i] = h.text
            p.append(i)
            s.append(_number(h.score))
            rank = h.first_rank
            reranked |= rank is not None
            first.append(int(rank or 0))
            child = h.via
            parented |= child is not None
            c = -1 if child is None else chunk_index.get(child, -1)
            a, b = h.via_start, h.via_end
            if child is not None and c < 0 and a is not None and b is not None:
                # no chunks.csv to find it in: the chunk as the trace gives it
                c = index.get((child, h.doc_id, a, b))
                if c is None:
                    c = add(child, h.doc_id, a, b, 0, None)
            via.append(c)
        hits["p"].append(p)
        hits["s"].append(s)
        hits["first"].append(first)
        hits["via"].append(via)
    passages = {"n_chunks": n_chunks, **cols, "text": texts}
    return passages, {
        "p": hits["p"],
        "s": hits["s"],
        "first": hits["first"] if reranked else None,
        "via": hits["via"] if parented else None,
    }


def explorer_data(rep: SweepReport) -> dict[str, Any]:
    """Everything the explorer draws, as one JSON-ready object (its keys: docs/explorer.md,
    "The data's format")."""
    datasets, of_job = _datasets(rep)
    docs = _Docs()
    _kept_documents(rep, datasets, docs)
    traces: dict[int, dict[str, QueryTrace]] = {}
    for r in rep.ok:
        path = r.file("hits.jsonl")
        if path is not None:
            traces[r.job] = read_traces(path)
    questions, order = _questions(rep, traces, of_job, docs)
    passages, hits = {}, {}
    for job, t in traces.items():
        passages[str(job)], hits[str(job)] = _passages_and_hits(
            rep.row(job), of_job[job], t, order, docs
        )
    p = rep.decision.primary
    ks = [k for d in rep.decision.decisions for k in d.group.eval.k]
    return {
        "format": EXPLORER_FORMAT,
        "version": 1,
        "title": "sweep report",
        "sweep": subtitle(rep),
        "primary": None if p is None else {"label": p.label, "level": p.level, "metric": p.metric},
        "k": max(ks, default=10),
        "datasets": [{"name": d["name"], "label": d["label"]} for d in datasets],
        "jobs": [{**_job(rep, r), "dataset": of_job[r.job]} for r in rep.rows],
        "table": _table(rep),
        "docs": docs.items,
        "questions": questions,
        "passages": passages,
        "hits": hits,
    }


def _asset(name: str) -> str:
    return files("sweep.reporting").joinpath("assets", name).read_text(encoding="utf-8")


def explorer_page_parts(data: Mapping[str, Any], inline_bytes: int | None = None) -> Script:
    """The explorer's part of report.html: its data inside the page up to ``inline_bytes``
    (default ``INLINE_BYTES``), else in a sidecar file whose script the page loads."""
    limit = INLINE_BYTES if inline_bytes is None else inline_bytes
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    script = f"<script>{_asset('explorer.js')}</script>"
    # A lone surrogate (a folder name that is not UTF-8) is written as its JSON escape.
    if len(text.encode("utf-8", "surrogatepass")) <= limit:
        # "<" only occurs inside JSON strings, where \u003c means the same character.
        inline = text.replace("<", "\\u003c")
        body = f'<script type="application/json" id="{_DATA_ID}">{inline}</script>{script}'
        return Script(_asset("explorer.css"), body, None)
    body = (
        f'<script type="application/json" id="{_DATA_ID}">null</script>'
        f'<meta name="sweep-explorer-sidecar" content="{SIDECAR_NAME}">'
        f'<script src="{SIDECAR_NAME}"></script>{script}'
    )
    return Script(_asset("explorer.css"), body, f"window.sweepExplorerData = {text};\n")


def write_sidecar(folder: Path, explorer: Script) -> Path | None:
    """``report-data.js`` beside the page, when the data does not ride inside it."""
    if explorer.sidecar is None:
        return None
    return write_text_atomic(Path(folder) / SIDECAR_NAME, explorer.sidecar)
