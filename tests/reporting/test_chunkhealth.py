"""The report's chunk health: the table, the length histograms and one document's boundaries
per setting (no model)."""

from __future__ import annotations

import re
from html import unescape

import pytest

from sweep.chunking import build_chunker
from sweep.core.tokenization import get_encoding
from sweep.core.types import Document, Judgment, Query
from sweep.reporting import htmlkit
from sweep.reporting.html import render_html
from sweep.reporting.sweepreport import build_report
from sweep.reporting.tables import results_markdown
from sweep.reporting.write import write_report
from sweep.store.boundaries import (
    BOUNDARIES_NAME,
    LIMIT,
    boundary_view,
    read_boundary_view,
    showcase_document,
    write_boundary_view,
)
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
        write_boundary_view(row.path / BOUNDARIES_NAME, boundary_view(DOC, chunks, QUERIES))
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
    assert "Chunk health" in text and "Where each setting cuts d.md" in text
    assert html.count("<details") == 2 and html.count("<details open>") == 1  # the pick, open
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


def test_rows_without_health_columns_get_no_section(tmp_path):
    make_grid(tmp_path, {(8, 0): base(), (16, 0): base()})
    assert "Chunk health" not in render_html(build_report(tmp_path), [])


def test_boundary_html_draws_chunks_overlaps_gaps_starts_and_evidence():
    html = htmlkit.boundary_html("abcdefghij", [(0, 4), (3, 7)], [(1, 2)])
    assert html.count('class="cut"') == 2
    assert '<span class="k0">a</span>' in html and "<u>b</u>" in html
    assert '<span class="ov">d</span>' in html and '<span class="k1">efg</span>' in html
    assert '<span class="gap">hij</span>' in html
    assert "&lt;" in htmlkit.boundary_html("<b>", [(0, 3)])


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


def test_the_shown_document_is_the_one_with_most_evidence_and_long_ones_are_cut(tmp_path):
    docs = [Document("a.md", "x"), Document("b.md", "y" * (LIMIT + 50))]
    queries = [Query("q1", "?", (Judgment("b.md", 0, 1), Judgment("b.md", LIMIT + 1, LIMIT + 9)))]
    shown = showcase_document(docs, queries)
    assert shown.doc_id == "b.md" and showcase_document(docs, []).doc_id == "a.md"
    chunks = build_chunker("token", size=512).chunk(shown)
    view = boundary_view(shown, chunks, queries)
    assert len(view.text) == LIMIT and view.n_chars == LIMIT + 50
    assert view.evidence == ((0, 1),) and all(b <= LIMIT for _, b in view.chunks)
    write_boundary_view(tmp_path / "b.json", view)
    assert read_boundary_view(tmp_path / "b.json") == view
    (tmp_path / "bad.json").write_text("{")
    assert read_boundary_view(tmp_path / "bad.json") is None
    assert get_encoding("cl100k_base") is not None
