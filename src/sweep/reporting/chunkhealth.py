"""The report's chunk health: per setting, how its cuts fall (a table, a token-length
histogram, one document with its chunk boundaries drawn), so a reader sees why a
splitter loses, not only that it does."""

from __future__ import annotations

from html import escape

import numpy as np
import pandas as pd

from sweep.reporting import htmlkit
from sweep.reporting.figurecache import FigureCache
from sweep.reporting.htmlkit import Picture
from sweep.reporting.sweepreport import SweepReport
from sweep.reporting.tables import fmt, markdown
from sweep.store.boundaries import BOUNDARIES_NAME, read_boundary_view
from sweep.store.chunkfile import CHUNKS_NAME, ChunkFileError, read_chunk_offsets

__all__ = [
    "HEALTH_NOTE",
    "boundary_views_html",
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


def boundary_views_html(rep: SweepReport) -> str:
    """Each setting's cut of the same document, folded; the recommended one open."""
    out = []
    for r in rep.ok:
        path = r.file(BOUNDARIES_NAME)
        view = read_boundary_view(path) if path is not None else None
        if view is None:
            continue
        cut = (
            f", its first {len(view.text):,} of {view.n_chars:,} characters"
            if len(view.text) < view.n_chars
            else ""
        )
        opened = " open" if rep.decision.is_pick(r.job) else ""
        out.append(
            f"<details{opened}><summary>{escape(rep.labels[r.job])}: "
            f"{len(view.chunks)} chunks{cut}</summary>"
            + htmlkit.boundary_html(view.text, view.chunks, view.evidence)
            + "</details>"
        )
    if not out:
        return ""
    first = read_boundary_view(
        next(r.file(BOUNDARIES_NAME) for r in rep.ok if r.file(BOUNDARIES_NAME) is not None)
    )
    doc = escape(first.doc_id) if first else ""
    return (
        f"<h3>Where each setting cuts {doc}</h3>"
        + htmlkit.paragraphs(
            [
                "The same document in every setting (the one with the most evidence): chunks in "
                "alternating colours, overlaps in purple, text in no chunk grey, a red bar where a "
                "chunk starts; evidence is underlined, so a bar inside an underline is evidence cut "
                "in two."
            ]
        )
        + "".join(out)
    )
