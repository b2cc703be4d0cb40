"""``sweep.reporting.alerts``: the language warning kept in the sweep folder, a chunk in nearly
every top 5 (``hub.share``) and BM25's questions without a term, shown beside the
recommendation in results.md, the printed text and report.html (no model)."""

from __future__ import annotations

import json

import pandas as pd

from sweep.reporting.alerts import (
    ALERTS_NAME,
    read_alerts,
    read_hub,
    row_alerts,
    write_alerts,
    write_hub,
)
from sweep.reporting.frames import load
from sweep.reporting.html import render_html
from sweep.reporting.sweepreport import build_report
from sweep.reporting.tables import results_markdown, terminal_text
from sweepdirs import base, make_grid

LANGUAGE = (
    "warning: 93% of the corpus is Japanese and all-MiniLM-L6-v2 reads it as 17% [UNK] tokens: "
    "its numbers will be near zero; use embed=multilingual (offline) or a multilingual preset"
)


def test_the_warnings_said_before_the_first_job_are_kept_in_the_folder(tmp_path):
    write_alerts(tmp_path, [LANGUAGE])
    assert read_alerts(tmp_path) == (LANGUAGE,)
    assert json.loads((tmp_path / ALERTS_NAME).read_text(encoding="utf-8")) == [LANGUAGE]


def test_no_warning_writes_no_file_and_a_missing_or_damaged_file_reads_as_none(tmp_path):
    write_alerts(tmp_path, [])
    assert not (tmp_path / ALERTS_NAME).exists() and read_alerts(tmp_path) == ()
    (tmp_path / ALERTS_NAME).write_text("{not json", encoding="utf-8")
    assert read_alerts(tmp_path) == ()


def test_a_hub_record_round_trips_and_a_missing_one_is_none(tmp_path):
    write_hub(tmp_path, 0.9, "faq.md#3", 5, 400)
    assert read_hub(tmp_path) == {"share": 0.9, "chunk_id": "faq.md#3", "k": 5, "chunks": 400}
    assert read_hub(tmp_path / "nothing") is None and read_hub(None) is None


def _sweep(tmp_path):
    rows = make_grid(tmp_path, {(64, 0): base(seed=1), (256, 0): base(seed=2)})
    write_alerts(tmp_path, [LANGUAGE])
    write_hub(tmp_path / "0", 0.95, "faq.md#3", 5, 400)  # job 0: one chunk in 95% of top 5s
    write_hub(tmp_path / "1", 0.2, "faq.md#7", 5, 100)
    return rows


def test_the_report_shows_the_language_warning_and_the_hub_beside_the_recommendation(tmp_path):
    _sweep(tmp_path)
    rep = build_report(tmp_path)
    assert rep.warnings[0] == LANGUAGE
    assert (
        len(rep.warnings) == 2 and "one chunk (faq.md#3) is in the top 5 of 95%" in rep.warnings[1]
    )
    assert "size=64" in rep.warnings[1]
    md = results_markdown(rep)
    rec = next(t for d in rep.decision.decisions for t in (d.recommendation_text,) if t)
    assert md.index(LANGUAGE.split(":")[0]) > md.index(rec.split("\n")[0][:30])
    text = terminal_text(rep)
    assert LANGUAGE in text and "faq.md#3" in text
    html = render_html(rep, [])
    assert "reads it as 17% [UNK] tokens" in html
    assert html.index("[UNK] tokens") < html.index("Comparison table")


def test_hub_share_is_a_column_of_results(tmp_path):
    _sweep(tmp_path)
    df = load(tmp_path)
    assert list(df["hub.share"]) == [0.95, 0.2]


def test_bm25_without_a_term_for_many_questions_is_a_warning_and_its_absence_is_none(tmp_path):
    rows = make_grid(tmp_path, {(64, 0): base(seed=1), (256, 0): base(seed=2)})
    records = {0: {"bm25_unmatched_share": 0.275}, 1: {"bm25_unmatched_share": 0.0}}
    lines = row_alerts(rows, records, ["chunk.size"])
    assert lines == [
        "warning: size=64: BM25 found no term of 28% of the questions in the corpus: their "
        "rankings match nothing (a tokenizer that does not read the corpus's language does this)"
    ]
    assert row_alerts(rows, {0: {"bm25_unmatched_share": pd.NA}}, ["chunk.size"]) == []
    assert row_alerts(rows, {}, ["chunk.size"]) == []


def test_a_chunk_in_every_top_5_of_a_small_corpus_is_chance_not_a_warning(tmp_path):
    rows = make_grid(tmp_path, {(64, 0): base(seed=1), (256, 0): base(seed=2)})
    write_hub(tmp_path / "0", 1.0, "travel.md#0", 5, 12)  # 12 chunks: any is in 5 of 12 top 5s
    write_hub(tmp_path / "1", 0.8, "travel.md#0", 5, 25)  # 25 chunks: chance is 1 in 5
    lines = row_alerts(rows, {}, ["chunk.size"])
    assert len(lines) == 1 and lines[0].startswith("warning: size=256: one chunk (travel.md#0)")
