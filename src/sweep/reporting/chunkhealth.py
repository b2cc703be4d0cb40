"""The report's chunk health: per setting, how its cuts fall (a table, a token-length
histogram, a link to any document's chunk boundaries in the explorer), so a reader sees
why a splitter loses, not only that it does."""

from __future__ import annotations

import re
from collections import Counter
from html import escape
from urllib.parse import quote

import numpy as np
import pandas as pd

from sweep.reporting.figurecache import FigureCache
from sweep.reporting.htmlkit import Picture
from sweep.reporting.sweepreport import SweepReport
from sweep.reporting.tables import fmt, markdown
from sweep.store.chunkfile import CHUNKS_NAME, ChunkFileError, read_chunk_offsets
from sweep.store.traces import read_traces

__all__ = [
    "HEALTH_NOTE",
    "cuts_link_html",
    "health_frame",
    "health_markdown",
    "write_length_histograms",
]

HEALTH_NOTE = (
    "tiny: chunks under a quarter of the target size (in the unit the size is set in: tokens, "
    "or a framework splitter's own length). mid-sentence: chunks that stop inside a sentence "
    "(the text goes on on the same line and the chunk's last character ends no sentence). "
    "blocks cut: Markdown tables and fenced code blocks that no single chunk holds whole "
    "(a block longer than the chunk size is always cut)."
)


def _pct(x: float | None) -> str:
    return "–" if x is None else fmt(100 * float(x), 1)


def health_frame(rep: SweepReport) -> pd.DataFrame | None:
    ok = [r for r in rep.rows if r.ok and r.stats.midsentence_share is not None]
    if not ok:
        return None
    return pd.DataFrame(
        [
            {
                "setting": rep.labels[r.job],
                "chunks": fmt(r.stats.n_chunks),
                "mean tokens": fmt(r.stats.mean_chunk_tokens, 0),
                "tiny %": _pct(r.stats.tiny_share),
                "mid-sentence %": _pct(r.stats.midsentence_share),
                "blocks cut %": (
                    _pct(r.stats.blocks_cut_share) + f" of {r.stats.n_blocks}"
                    if r.stats.blocks_cut_share is not None
                    else "–"
                ),
            }
            for r in ok
        ]
    )


def health_markdown(rep: SweepReport) -> str | None:
    df = health_frame(rep)
    return None if df is None else f"## Chunk health\n\n{HEALTH_NOTE}\n\n{markdown(df)}"


def write_length_histograms(rep: SweepReport, cache: FigureCache | None = None) -> list[Picture]:
    """One panel per setting (up to 12): how many chunks have how many tokens."""
    from sweep.reporting import drawing as plots

    lengths = {}
    for r in rep.ok:
        path = r.file(CHUNKS_NAME)
        if path is None:
            continue
        try:
            lengths[rep.labels[r.job]] = np.array([c.n_tokens for c in read_chunk_offsets(path)])
        except ChunkFileError:
            continue
    path = plots.length_histograms(
        rep.sweep_dir / "plots" / "chunk_tokens.png",
        lengths,
        title="Chunk lengths in tokens, per setting",
        cache=cache,
    )
    return (
        [
            Picture(
                path,
                "How long each setting's chunks are: chunks per token-length bin "
                "(shared bins; a spike at the left is tiny chunks)",
            )
        ]
        if path
        else []
    )


def cuts_link_html(rep: SweepReport) -> str:
    """Where to see the cuts: the explorer's document view of the document with the most
    evidence, in the recommended setting (any document, any setting from there)."""
    job = next((r.job for r in rep.ok if rep.decision.is_pick(r.job)), None)
    if job is None and rep.ok:
        job = rep.ok[0].job
    counts: Counter[str] = Counter()
    for r in rep.ok:
        path = r.file("hits.jsonl")
        if path is not None:
            counts.update(g.doc_id for t in read_traces(path).values() for g in t.gold)
            break
    if job is None or not counts:
        return ""
    doc = min(counts, key=lambda d: (-counts[d], d))
    # A lone surrogate (a file name that is not UTF-8) has no URL form: U+FFFD, as the
    # explorer's own links write it.
    linked = re.sub("[\ud800-\udfff]", "\ufffd", doc)
    href = f"#document={quote(linked, safe='')}&job={job}"
    return (
        f'<p class="note">Where each setting cuts a document, with its chunk ids, overlaps and '
        f'the evidence it splits: the explorer\'s document view, e.g. <a href="{escape(href)}">'
        f"{escape(doc)} in {escape(rep.labels[job])}</a> (pick any document and setting there).</p>"
    )
