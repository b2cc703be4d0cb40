"""``sweep.reporting.frames``: a sweep folder as pandas DataFrames."""

import numpy as np
import pandas as pd
import pytest

import sweep.reporting.frames as results
from sweepdirs import GRID, base, make_grid, make_job


def test_load_gives_one_row_per_setting_with_settings_first_and_intervals(tmp_path):
    scores = {so: base(seed=i) for i, so in enumerate(GRID)}
    rows = make_grid(tmp_path, scores)
    make_job(tmp_path, 6, 64, 64, None, status="invalid", error="ValueError: overlap >= size")
    df = results.load(tmp_path)
    assert len(df) == 7 and list(df.columns[:3]) == [
        "chunk.strategy",
        "chunk.size",
        "chunk.overlap",
    ]
    assert list(df["status"]) == ["ok"] * 6 + ["invalid"]
    assert df.loc[0, "span.recall@5"] == pytest.approx(scores[(64, 0)].mean())
    lo, mean, hi = df.loc[0, ["span.recall@5.lo", "span.recall@5", "span.recall@5.hi"]]
    assert lo <= mean <= hi
    assert df.loc[0, "span.recall@5"] == rows[0].summary.interval("span", "recall@5").mean
    assert set(df["vs_best"].iloc[:6]) <= {"best", "tie", "worse"} and df.loc[6, "vs_best"] == ""
    assert df.loc[0, "tokens@5"] == 320.0 and df.loc[0, "n_chunks"] == 156


def test_results_csv_is_the_frame(tmp_path):
    from sweep.reporting.write import write_report

    make_grid(tmp_path, {so: base(seed=i) for i, so in enumerate(GRID[:3])})
    write_report(tmp_path, quiet=True)
    on_disk = pd.read_csv(tmp_path / "results.csv", keep_default_na=False)
    df = results.load(tmp_path)
    assert list(on_disk.columns) == list(df.columns)
    assert np.allclose(on_disk["span.recall@5.hi"], df["span.recall@5.hi"])


def test_grid_is_size_by_overlap(tmp_path):
    scores = {so: base(seed=i) for i, so in enumerate(GRID)}
    make_grid(tmp_path, scores)
    g = results.grid(results.load(tmp_path), "span.recall@5")
    assert list(g.index) == [64, 128, 256] and list(g.columns) == [0, 16]
    assert g.loc[128, 16] == pytest.approx(scores[(128, 16)].mean())
    # A primary-style name works too.
    assert results.grid(results.load(tmp_path), "span/recall@5").equals(g)
    with pytest.raises(KeyError, match="no column"):
        results.grid(results.load(tmp_path), "span.recall@7")


def test_grid_with_another_varied_setting_gets_an_outer_level(tmp_path):
    make_job(tmp_path, 0, 64, 0, base(), settings={"chunk.strategy": "token"})
    make_job(tmp_path, 1, 64, 0, base(seed=1), settings={"chunk.strategy": "markdown"})
    g = results.grid(results.load(tmp_path), "span.recall@5")
    assert g.index.names == ["chunk.strategy", "chunk.size"] and len(g) == 2


def test_load_per_query_is_long_form_with_types(tmp_path):
    make_grid(tmp_path, {so: base(6, seed=i) for i, so in enumerate(GRID[:2])})
    pq = results.load_per_query(tmp_path)
    assert list(pq.columns) == ["job", "query_id", "level", "metric", "value", "type"]
    one = pq[(pq.job == 1) & (pq.level == "span") & (pq.metric == "recall@5")]
    assert list(one["value"]) == list(base(6, seed=1)) and list(one["type"][:3]) == [
        "fact",
        "multi",
        "adversarial",
    ]


def test_the_combined_per_query_table_keeps_query_ids_with_line_breaks_and_formulas(tmp_path):
    import csv

    from sweep.core.csvcells import restore
    from sweep.scoring.table import ScoreTable
    from sweep.store.row import load_rows

    make_grid(tmp_path, {so: base(3, seed=i) for i, so in enumerate(GRID[:2])})
    ids = ("two\nlines", '=HYPERLINK("x")', "cr\rhere")
    odd = ScoreTable(
        ids,
        ("recall@5",),
        np.arange(3, dtype=np.int64),
        np.zeros(3, dtype=np.int8),
        np.zeros(3, dtype=np.int64),
        np.array([0.0, 0.5, 1.0]),
    )
    odd.write_csv(tmp_path / "0" / "per_query.csv")
    out = tmp_path / "per_query.csv"
    results.combine_per_query(load_rows(tmp_path), out)
    with open(out, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["job", "query_id", "level", "metric", "value"]
    job0 = [(r[0], restore(r[1]), r[4]) for r in rows[1:] if r[0] == "0"]
    assert job0 == [
        ("0", "two\nlines", "0.0"),
        ("0", '=HYPERLINK("x")', "0.5"),
        ("0", "cr\rhere", "1.0"),
    ]
    assert all(r[0] in ("0", "1") and len(r) == 5 for r in rows[1:])


def test_the_recommended_column_marks_the_job_export_and_check_take(tmp_path):
    scores = {so: base() for so in GRID[:3]}
    scores[GRID[1]] = np.ones(60)
    make_grid(tmp_path / "grid", scores)
    make_job(tmp_path / "grid", 3, 64, 64, None, status="invalid", error="overlap >= size")
    assert list(results.load(tmp_path / "grid")["recommended"]) == [False, True, False, False]
    make_job(tmp_path / "one", 0, 128, 0, base())  # a sweep of one setting: that setting
    assert list(results.load(tmp_path / "one")["recommended"]) == [True]
