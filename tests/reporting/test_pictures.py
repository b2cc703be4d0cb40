"""``sweep.reporting.pictures``: which pictures a sweep gets and the data behind them (heatmap
cells, budget lines, first-relevant ranks, top-score splits), from sweep folders written through
sweep's own types (no model). Drawing itself is ``sweep.reporting.drawing``'s (test_drawing.py):
here it is drawn for real once, and otherwise recorded."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sweep.core.measures import LEVELS
from sweep.reporting import drawing
from sweep.reporting.pictures import (
    heatmap_cells,
    heatmap_metrics,
    plot_name,
    write_pictures,
    write_score_histograms,
)
from sweep.reporting.sweepreport import build_report
from sweep.scoring.diagnostics import Abstention, Diagnostics
from sweep.store.row import Row
from sweep.store.traces import read_traces, write_traces
from sweepdirs import base, make_grid, make_job

PNG = b"\x89PNG\r\n\x1a\n"


def _grid(folder, **kw):
    """Job 1 finds everything (best and recommended); job 3 failed."""
    make_grid(folder, {(64, 0): base(), (128, 0): np.ones(60), (256, 16): base(seed=1)}, **kw)
    make_job(folder, 3, 512, 0, None, status="failed", error="RuntimeError: boom")
    return build_report(folder)


@pytest.fixture
def drawn(monkeypatch):
    """Record what would be drawn instead of drawing it: name -> list of (path, data, kw)."""
    calls: dict[str, list] = {}

    def recorder(name):
        def draw(path, data, **kw):
            calls.setdefault(name, []).append((Path(path), data, kw))
            return Path(path)

        return draw

    for name in ("heatmap", "budget_lines", "rank_histograms", "score_histograms"):
        monkeypatch.setattr(drawing, name, recorder(name))
    return calls


# --------------------------------------------------------------------------- names and metrics


def test_plot_names():
    assert plot_name("heatmap", "span", "recall@5") == "heatmap_span_recall_5.png"
    assert plot_name("budget", "doc", "ndcg") == "budget_doc_ndcg.png"


@given(
    st.sampled_from(["heatmap", "budget"]),
    st.sampled_from(LEVELS),
    st.from_regex(r"[a-z]{1,8}@[0-9]{1,4}t?", fullmatch=True),
)
def test_a_plot_name_is_a_plain_file_name_that_keeps_the_metric_apart(kind, level, metric):
    name = plot_name(kind, level, metric)
    assert name.endswith(".png") and "@" not in name and "/" not in name
    assert name == f"{kind}_{level}_{metric.replace('@', '_')}.png"
    other = metric.replace("@", "@1")
    assert plot_name(kind, level, other) != name


def test_heatmap_metrics_primary_first_then_table_columns_then_budgets(tmp_path):
    rep = _grid(tmp_path)
    got = heatmap_metrics(rep)
    assert got[0] == ("span", "recall@5")  # the primary
    assert len(got) == len(set(got))  # the primary is not repeated among the columns
    # a question set without pages: no page columns
    table = [(lvl, f"{m}@5") for lvl in ("doc", "span") for m in ("recall", "ndcg")]
    budgets = [("span", f"recall@{b}t") for b in (256, 512, 1024)]
    assert got == [("span", "recall@5")] + [t for t in table if t != ("span", "recall@5")] + budgets


# --------------------------------------------------------------------------- heatmap cells


def test_heatmap_cells_come_from_the_saved_intervals_and_mark_the_primarys_verdicts(tmp_path):
    rep = _grid(tmp_path)
    cells = heatmap_cells(rep, "span", "recall@5")
    assert [(c.size, c.overlap) for c in cells] == [(64, 0), (128, 0), (256, 16), (512, 0)]
    for r, c in zip(rep.rows, cells):
        m = r.interval("span", "recall@5")
        if r.ok:
            assert (c.mean, c.low, c.high, c.note) == (m.mean, m.ci_low, m.ci_high, "")
            assert c.mark == rep.decision.comparison(r.job).verdict
        else:
            assert (c.mean, c.low, c.high, c.note, c.mark) == (None, None, None, "failed", "")
    assert cells[1].mark == "best" and cells[1].mean == 1.0
    assert {c.facet for c in cells} == {""}  # only size and overlap vary: one panel
    # Another metric: the same values' source, no verdict frames.
    other = heatmap_cells(rep, "doc", "ndcg@5")
    assert all(c.mark == "" for c in other)
    assert other[0].mean == pytest.approx(rep.rows[0].interval("doc", "ndcg@5").mean)


def test_a_setting_that_varies_besides_size_and_overlap_gets_its_own_panel(tmp_path):
    make_job(tmp_path, 0, 64, 0, base(), settings={"embed.model": "a"})
    make_job(tmp_path, 1, 64, 0, base(seed=2), settings={"embed.model": "b"})
    make_job(tmp_path, 2, 128, 0, base(seed=3), settings={"embed.model": "b"})
    cells = heatmap_cells(build_report(tmp_path), "span", "recall@5")
    assert cells[0].facet != cells[1].facet and cells[1].facet == cells[2].facet
    assert "a" in cells[0].facet and "b" in cells[1].facet


def test_two_rows_in_one_cell_do_not_hide_each_other(tmp_path):
    # Same size, overlap and everything else shown (the model is not a varied key here).
    make_job(tmp_path, 0, 64, 0, base())
    make_job(tmp_path, 1, 64, 0, base(seed=2))
    make_job(tmp_path, 2, 128, 0, base(seed=3))
    cells = heatmap_cells(build_report(tmp_path), "span", "recall@5")
    assert [c.facet for c in cells] == ["", "job 1", ""]
    panels = drawing.heatmap_panels(cells)
    assert len(panels) == 2 and sum(np.isfinite(p.matrix).sum() for p in panels) == 3


# --------------------------------------------------------------------------- write_pictures


def test_write_pictures_draws_real_pngs_in_the_documented_order(tmp_path):
    rep = _grid(tmp_path)
    pictures = write_pictures(rep)
    names = [p.path.name for p in pictures]
    assert names[0] == "heatmap_span_recall_5.png"
    assert names[1:3] == ["budget_span_recall.png", "first_relevant_rank_span.png"]
    assert all(n.startswith("heatmap_") for n in names[3:]) and len(names) == 2 + len(
        heatmap_metrics(rep)
    )
    for p in pictures:
        assert p.path.parent == tmp_path / "plots" and p.path.read_bytes()[:8] == PNG
        assert p.caption
    assert "95% interval" in pictures[1].caption


def test_no_finished_row_no_pictures(tmp_path, drawn):
    make_job(tmp_path, 0, 64, 64, None, status="invalid", error="ValueError: overlap")
    assert write_pictures(build_report(tmp_path)) == [] and drawn == {}


def test_budget_lines_and_ranks_are_the_rows_own_numbers(tmp_path, drawn):
    rep = _grid(tmp_path)
    write_pictures(rep)
    ((path, series, kw),) = drawn["budget_lines"]
    assert path.name == "budget_span_recall.png" and kw["metric"] == "span recall"
    assert [s.label for s in series] == [rep.labels[j] for j in (0, 1, 2)]  # not the failed one
    for s, job in zip(series, (0, 1, 2)):
        r = rep.row(job)
        assert s.budgets == (256, 512, 1024)
        assert s.means == tuple(r.interval("span", f"recall@{b}t").mean for b in s.budgets)
        assert all(lo <= m <= hi for lo, m, hi in zip(s.lows, s.means, s.highs))
    ((path, ranks, kw),) = drawn["rank_histograms"]
    assert path.name == "first_relevant_rank_span.png" and kw["k"] == 10
    for job in (0, 1, 2):
        traces = read_traces(tmp_path / str(job) / "hits.jsonl")
        assert ranks[rep.labels[job]] == {
            q: t.first_relevant("span") or 0 for q, t in traces.items()
        }
    assert set(ranks[rep.labels[1]].values()) <= {1, 2, 3, 4}  # every query found
    assert [p.name for p, _, _ in drawn["heatmap"]] == [
        plot_name("heatmap", lvl, m) for lvl, m in heatmap_metrics(rep)
    ]


def test_two_groups_get_numbered_pictures(tmp_path, drawn):
    make_job(tmp_path, 0, 64, 0, base(), fingerprint="a" * 16)
    make_job(tmp_path, 1, 128, 0, np.ones(60), fingerprint="a" * 16)
    make_job(tmp_path, 2, 64, 0, base(seed=1), fingerprint="b" * 16)
    make_job(tmp_path, 3, 128, 0, base(seed=2), fingerprint="b" * 16)
    rep = build_report(tmp_path)
    write_pictures(rep)
    budget = {p.name: [s.label for s in series] for p, series, _ in drawn["budget_lines"]}
    assert budget == {
        "budget_span_recall_1.png": [rep.labels[0], rep.labels[1]],
        "budget_span_recall_2.png": [rep.labels[2], rep.labels[3]],
    }
    assert sorted(p.name for p, _, _ in drawn["rank_histograms"]) == [
        "first_relevant_rank_span_1.png",
        "first_relevant_rank_span_2.png",
    ]


# --------------------------------------------------------------------------- top-score histograms


def _with_abstention(folder: Path, job: int, threshold: float, unanswerable: int = 10) -> None:
    """Give a saved job diagnostics and make its first ``unanswerable`` queries unanswerable."""
    d = folder / str(job)
    row = Row.from_json((d / "row.json").read_text(), path=d)
    a = Abstention(50, unanswerable, 0.8, 0.7, 0.9, threshold, 0.75, 0.6, 0.1)
    dataclasses.replace(row, diagnostics=Diagnostics(abstention=a)).save(d)
    traces = list(read_traces(d / "hits.jsonl").values())
    traces = [
        dataclasses.replace(t, gold=()) if i < unanswerable else t for i, t in enumerate(traces)
    ]
    write_traces(d / "hits.jsonl", traces)


def test_top_score_splits_chosen_setting_first(tmp_path, drawn):
    make_grid(tmp_path, {(64, 0): base(), (128, 0): np.ones(60), (256, 0): base(seed=1)})
    for job, threshold in ((0, 0.5), (1, 0.6), (2, 0.7)):
        _with_abstention(tmp_path, job, threshold)
    rep = build_report(tmp_path)
    assert rep.groups[0].decision.chosen_job == 1
    out = write_score_histograms(rep)
    ((path, splits, _kw),) = drawn["score_histograms"]
    assert path == tmp_path / "plots" / "top_score.png" and [p.path for p in out] == [path]
    assert [s.label for s in splits] == [rep.labels[1], rep.labels[0], rep.labels[2]]
    assert [s.threshold for s in splits] == [0.6, 0.5, 0.7]
    traces = read_traces(tmp_path / "1" / "hits.jsonl")
    s = splits[0]
    assert len(s.answerable) == 50 and len(s.unanswerable) == 10
    assert sorted(s.unanswerable) == sorted(t.top_score for t in traces.values() if not t.gold)


def test_rows_without_abstention_diagnostics_get_no_top_score_histogram(tmp_path):
    make_grid(tmp_path, {(64, 0): base(), (128, 0): base(seed=1)})
    assert write_score_histograms(build_report(tmp_path)) == []  # drawn for real: nothing
    assert not (tmp_path / "plots" / "top_score.png").exists()


def test_sizes_in_characters_and_in_tokens_never_share_an_axis(tmp_path):
    lc = {"chunk.strategy": "RecursiveCharacterTextSplitter", "chunk.unit": "characters"}
    make_job(tmp_path, 0, 128, 0, base(), settings={"chunk.unit": "tokens"})
    make_job(tmp_path, 1, 256, 0, base(seed=2), settings={"chunk.unit": "tokens"})
    make_job(tmp_path, 2, 1000, 0, base(seed=3), settings=lc)
    # a cell that never built its splitter recorded no unit: it joins its panel's
    make_job(
        tmp_path,
        3,
        128,
        0,
        None,
        status="invalid",
        error="overlap",
        settings={**lc, "chunk.unit": None},
    )
    cells = heatmap_cells(build_report(tmp_path), "span", "recall@5")
    assert [c.unit for c in cells] == ["tokens", "tokens", "characters", "characters"]
    panels = drawing.heatmap_panels(cells)
    assert [(p.unit, p.sizes) for p in panels] == [
        ("tokens", (128, 256)),
        ("characters", (128, 1000)),
    ]
    assert all("unit" not in p.facet for p in panels)  # the axis says it, not the title
    fig = drawing.heatmap_figure(cells, title="t")
    labels = [ax.get_ylabel() for ax in fig.axes if ax.get_visible() and ax.get_ylabel() != "mean"]
    assert labels == ["chunk.size (tokens)", "chunk.size (characters)"]
