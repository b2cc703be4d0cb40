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
    """The documents the page shows, each once, by id."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []
        self.index: dict[str, int] = {}

    def add(self, d: KeptDocument) -> None:
        if d.doc_id in self.index:
            return
        self.index[d.doc_id] = len(self.items)
        self.items.append(
            {
                "id": d.doc_id,
                "n_chars": d.n_chars,
                "language": d.language,
                "text": d.text,
                "pages": None if d.pages is None else [list(p) for p in d.pages],
            }
        )

    def of(self, doc_id: str, end: int = 0) -> int:
        """The index of a document, added without text when the folder kept none (a
        sweep saved before documents were kept)."""
        if doc_id not in self.index:
            self.add(KeptDocument(doc_id, None, end, None, ""))
        i = self.index[doc_id]
        if self.items[i]["text"] is None:
            self.items[i]["n_chars"] = max(self.items[i]["n_chars"], end)
        return i

    def has_text(self, i: int) -> bool:
        return self.items[i]["text"] is not None


def _kept_documents(rep: SweepReport, docs: _Docs) -> None:
    seen = set()
    for r in rep.ok:
        fp = r.dataset.fingerprint if r.dataset else ""
        path = kept_documents_path(rep.sweep_dir, fp)
        if path is None or fp in seen:
            continue
        seen.add(fp)
        for d in read_kept_documents(path, inside=rep.sweep_dir):
            docs.add(d)


def _outcomes(rep: SweepReport) -> dict[int, Mapping[str, float]]:
    """Each job's primary metric per question, from the decision of its group."""
    out: dict[int, Mapping[str, float]] = {}
    for d in rep.decision.decisions:
        for job in d.scores:
            out[job] = d.scores[job]
    return out


def _questions(
    rep: SweepReport, traces: Mapping[int, Mapping[str, QueryTrace]], docs: _Docs
) -> list[dict[str, Any]]:
    outcomes = _outcomes(rep)
    first: dict[str, QueryTrace] = {}
    for t in traces.values():
        for qid, trace in t.items():
            first.setdefault(qid, trace)
    questions = []
    for qid, t in first.items():
        gold = []
        for g in t.gold:
            i = docs.of(g.doc_id, g.end or 0)
            item: dict[str, Any] = {
                "doc": i,
                "start": g.start,
                "end": g.end,
                "grade": g.grade,
                "pages": g.pages,
            }
            if not docs.has_text(i) and g.text is not None:
                item["text"] = g.text  # the page cannot cut it from a document it lacks
            gold.append(item)
        questions.append(
            {
                "id": qid,
                "text": t.query,
                "type": t.type,
                "source": t.source,
                "reference": t.reference,
                "answerable": bool(t.gold),
                "gold": gold,
                "outcome": [
                    _number(outcomes.get(r.job, {}).get(qid)) if r.ok and t.gold else None
                    for r in rep.rows
                ],
            }
        )
    return questions


def _passages_and_hits(
    r: Row, traces: Mapping[str, QueryTrace], order: Sequence[str], docs: _Docs
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A job's passages (its chunks in document order, then any other passage a hit is:
    a parent) and its hits per question, as indices into them."""
    cols: dict[str, list[Any]] = {k: [] for k in ("id", "doc", "start", "end", "tokens", "window")}
    texts: list[str | None] = []
    index: dict[str, int] = {}

    def add(chunk_id: str, doc_id: str, start: int, end: int, tokens: int, text: str | None) -> int:
        index[chunk_id] = len(texts)
        d = docs.of(doc_id, end)
        for key, value in zip(cols, (chunk_id, d, start, end, tokens, -1)):
            cols[key].append(value)
        texts.append(None if docs.has_text(d) else text)
        return index[chunk_id]

    path = r.file(CHUNKS_NAME)
    if path is not None:
        try:
            for c in read_chunk_offsets(path):
                add(c.chunk_id, c.doc_id, c.start, c.end, c.n_tokens, None)
        except ChunkFileError:  # the explorer shows the hits it has; the table is not its job
            pass
    n_chunks = len(texts)
    hits: dict[str, list[list[Any]]] = {"p": [], "s": [], "first": [], "via": []}
    reranked = parented = False
    for qid in order:
        t = traces.get(qid)
        p, s, first, via = [], [], [], []
        for h in t.hits if t is not None else ():
            i = index.get(h.chunk_id)
            if i is None or (cols["start"][i], cols["end"][i]) != (h.start, h.end):
                i = add(h.chunk_id, h.doc_id, h.start, h.end, h.n_tokens, h.text)
            window = getattr(h, "window_end", None)
            if window is not None:
                cols["window"][i] = int(window)
            if texts[i] is None and not docs.has_text(cols["doc"][i]):
                texts[i] = h.text
            p.append(i)
            s.append(_number(h.score))
            rank = getattr(h, "first_rank", None)
            reranked |= rank is not None
            first.append(int(rank or 0))
            child = getattr(h, "via", None)
            parented |= child is not None
            via.append(index.get(child, -1) if child is not None else -1)
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
    """Everything the explorer draws, as one JSON-ready object (the format is described
    in docs/explorer.md)."""
    docs = _Docs()
    _kept_documents(rep, docs)
    traces: dict[int, dict[str, QueryTrace]] = {}
    for r in rep.ok:
        path = r.file("hits.jsonl")
        if path is not None:
            traces[r.job] = read_traces(path)
    questions = _questions(rep, traces, docs)
    order = [q["id"] for q in questions]
    passages, hits = {}, {}
    for job, t in traces.items():
        passages[str(job)], hits[str(job)] = _passages_and_hits(rep.row(job), t, order, docs)
    p = rep.decision.primary
    ks = [k for d in rep.decision.decisions for k in d.group.eval.k]
    return {
        "format": EXPLORER_FORMAT,
        "version": 1,
        "title": "sweep report",
        "sweep": subtitle(rep),
        "primary": None if p is None else {"label": p.label, "level": p.level, "metric": p.metric},
        "k": max(ks, default=10),
        "jobs": [_job(rep, r) for r in rep.rows],
        "table": _table(rep),
        "docs": docs.items,
        "questions": questions,
        "passages": passages,
        "hits": hits,
    }


def _asset(name: str) -> str:
    return files("sweep.reporting").joinpath("assets", name).read_text(encoding="utf-8")


def explorer_page_parts(data: Mapping[str, Any], inline_bytes: int = INLINE_BYTES) -> Script:
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    script = f"<script>{_asset('explorer.js')}</script>"
    # A lone surrogate (a folder name that is not UTF-8) is written as its JSON escape.
    if len(text.encode("utf-8", "surrogatepass")) <= inline_bytes:
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
