"""The report's chunk health: the table, the length histograms and the link to one
document's boundaries in the explorer (no model)."""

from __future__ import annotations

import re
from html import unescape

import pytest

from sweep.chunking import build_chunker
from sweep.core.types import Document, Judgment, Query
from sweep.reporting.html import render_html
from sweep.reporting.sweepreport import build_report
from sweep.reporting.tables import results_markdown
from sweep.reporting.write import write_report
from sweep.store.chunkfile import (
    CHUNKS_NAME,
    ChunkFileError,
    read_chunk_offsets,
    write_chunk_offsets,
)
from sweep.store.row import load_rows
from sweepdirs import base, make_grid

TEXT = "# Title\n\nFirst sentence here. Second sentence there.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
DOC = Document("d.md", TEXT)
QUERIES = [Query("q1", "which?", (Judgment("d.md", 9, 29),))]


def _grid(tmp_path):
    make_grid(tmp_path, {(8, 0): base(), (16, 0): base()})
    for row in load_rows(tmp_path):
        size = row.settings["chunk.size"]
        chunks = build_chunker("token", size=size).chunk(DOC)
        write_chunk_offsets(row.path / CHUNKS_NAME, chunks)
        row.with_stats(
            tiny_share=0.25,
            midsentence_share=0.5,
            n_blocks=2,
            blocks_cut_share=0.5 if size == 8 else 0.0,
        ).save(row.path)
    return build_report(tmp_path)


def test_the_health_table_and_every_settings_cut_of_the_same_document(tmp_path):
    rep = _grid(tmp_path)
    html = render_html(rep, [])
    text = unescape(re.sub(r"<[^>]+>", " ", html))
    assert "Chunk health" in text
    # the document with the most evidence (make_grid's traces: doc{i}.md once each), in
    # the recommended setting, opened in the explorer
    pick = next(r.job for r in rep.ok if rep.decision.is_pick(r.job))
    assert f'href="#document=doc0.md&amp;job={pick}"' in html
    assert f"doc0.md in {rep.labels[pick]}" in text
    assert "50.0 of 2" in text and "0.0 of 2" in text
    assert "## Chunk health" not in results_markdown(rep)  # written beside it by write_report
    write_report(tmp_path, quiet=True, html=True)
    md = (tmp_path / "results.md").read_text()
    assert "## Chunk health" in md and "mid-sentence %" in md
    assert (tmp_path / "plots" / "chunk_tokens.png").stat().st_size > 1000
    page = (tmp_path / "report.html").read_text()
    assert "How long each setting" in page and page.index("Chunk health") < page.index(
        "How long each setting"
    ) < page.index("Where each setting cuts")
    assert '<details class="section" id="s-chunk-health">' in page  # folded


def test_rows_without_health_columns_get_no_section(tmp_path):
    make_grid(tmp_path, {(8, 0): base(), (16, 0): base()})
    assert "Chunk health" not in render_html(build_report(tmp_path), [])


def test_chunk_offsets_round_trip_and_a_damaged_file_is_named_with_its_line(tmp_path):
    chunks = build_chunker("token", size=4).chunk(Document("a,b.md", "one two three four five"))
    path = write_chunk_offsets(tmp_path / CHUNKS_NAME, chunks)
    back = read_chunk_offsets(path)
    assert [(c.chunk_id, c.doc_id, c.start, c.end, c.n_tokens) for c in back] == [
        (c.chunk_id, c.doc_id, c.start, c.end, c.n_tokens) for c in chunks
    ]
    path.write_text(path.read_text() + "x,y,1,notanumber,3\n")
    with pytest.raises(ChunkFileError, match=rf"{CHUNKS_NAME}:{len(chunks) + 2}: malformed"):
        read_chunk_offsets(path)
    (tmp_path / "other.csv").write_text("a,b\n")
    with pytest.raises(ChunkFileError, match="other.csv:1: not a chunks file"):
        read_chunk_offsets(tmp_path / "other.csv")
