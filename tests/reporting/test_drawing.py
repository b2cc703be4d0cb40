import matplotlib.image as mpimg
import numpy as np

from sweep.reporting.drawing import (
    Cell,
    ScoreSplit,
    Series,
    _order,
    budget_figure,
    budget_lines,
    heatmap,
    heatmap_figure,
    heatmap_panels,
    rank_figure,
    rank_histograms,
    score_figure,
)

PNG = b"\x89PNG\r\n\x1a\n"


def _grid(facet="", marks=None):
    return [
        Cell(facet, s, o, 0.4 + 0.1 * i + 0.02 * j, 0.3, 0.9, mark=(marks or {}).get((s, o), ""))
        for i, s in enumerate((128, 256, 512))
        for j, o in enumerate((0, 64))
    ]


def test_heatmap_of_a_three_by_two_grid(tmp_path):
    path = heatmap(
        tmp_path / "plots" / "h.png",
        _grid(marks={(512, 64): "best", (512, 0): "tie"}),
        title="span recall@5",
    )
    assert path == tmp_path / "plots" / "h.png" and path.read_bytes()[:8] == PNG
    h, w, _ = mpimg.imread(path).shape
    assert w > h > 200  # a readable picture, wider than tall for 3 sizes x 2 overlaps + colorbar
    assert not list(path.parent.glob("*.tmp.png"))


def test_heatmap_with_facets_and_a_setting_that_did_not_run(tmp_path):
    cells = _grid("strategy=token") + _grid("strategy=markdown")
    cells.append(Cell("strategy=token", 128, 128, None, note="invalid"))
    assert heatmap(tmp_path / "f.png", cells, title="t").exists()
    one = heatmap(tmp_path / "one.png", _grid("a"), title="t")
    two = heatmap(tmp_path / "two.png", cells, title="t")
    assert mpimg.imread(two).shape[1] > mpimg.imread(one).shape[1]  # facets side by side


def test_no_heatmap_for_fewer_than_two_values(tmp_path):
    assert heatmap(tmp_path / "h.png", [Cell("", 128, 0, 0.5, 0.4, 0.6)], title="t") is None
    assert (
        heatmap(
            tmp_path / "h.png",
            [Cell("", 128, 0, 0.5), Cell("", 256, 0, None, note="failed")],
            title="t",
        )
        is None
    )
    assert not (tmp_path / "h.png").exists()


def test_equal_values_still_draw(tmp_path):
    cells = [Cell("", s, 0, 0.5, 0.4, 0.6) for s in (1, 2)]
    path = heatmap(tmp_path / "h.png", cells, title="t")
    assert path.read_bytes()[:8] == PNG and min(mpimg.imread(path).shape[:2]) > 100


def test_axis_order_is_numeric_then_text():
    assert _order([256, 64, "auto", 128, 64, None]) == [64, 128, 256, None, "auto"]
    assert _order([10, 9, 100]) == [9, 10, 100]  # not "10" < "100" < "9"


def test_rank_histograms(tmp_path):
    ranks = {
        "size=128": {"q1": 1, "q2": 3, "q3": 0},
        "size=256": {"q1": 2, "q2": 2, "q3": 1},
        "empty": {},
    }
    path = rank_histograms(tmp_path / "r.png", ranks, k=5, title="first relevant rank")
    assert path.read_bytes()[:8] == PNG
    assert rank_histograms(tmp_path / "none.png", {"a": {}}, k=5, title="t") is None


def test_budget_lines(tmp_path):
    series = [
        Series(f"size={s}", (256, 512, 1024), (0.3, 0.5, 0.7), (0.2, 0.4, 0.6), (0.4, 0.6, 0.8))
        for s in (128, 256, 512)
    ]
    assert (
        budget_lines(tmp_path / "b.png", series, metric="span recall", title="t").read_bytes()[:8]
        == PNG
    )
    many = [Series(f"s{i}", (512,), (0.5,), (0.4,), (0.6,)) for i in range(12)]
    path = budget_lines(tmp_path / "m.png", many, metric="m", title="t")
    assert path.read_bytes()[:8] == PNG and min(mpimg.imread(path).shape[:2]) > 100
    assert (
        budget_lines(tmp_path / "x.png", [Series("a", (), (), (), ())], metric="m", title="t")
        is None
    )


def test_rank_histograms_wrap_into_rows(tmp_path):
    one = rank_histograms(tmp_path / "1.png", {"s0": {"q": 1}}, k=3, title="t")
    five = rank_histograms(
        tmp_path / "5.png", {f"s{i}": {"q": i % 3} for i in range(5)}, k=3, title="t"
    )
    assert mpimg.imread(five).shape[0] > mpimg.imread(one).shape[0]  # a second row below


def test_many_settings_make_one_rank_matrix_instead_of_panels(tmp_path):
    ranks = {f"size={64 * i}": {f"q{j}": (i + j) % 6 for j in range(20)} for i in range(1, 16)}
    path = rank_histograms(tmp_path / "m.png", ranks, k=5, title="t")
    h, w, _ = mpimg.imread(path).shape
    assert h > w / 2  # one row per setting, not four panels per row


def test_the_heatmap_draws_the_table_values(tmp_path):
    """What a sweep's heatmap draws is what its table says, cell for cell (issue 10)."""
    import numpy as np

    from sweep.reporting.pictures import heatmap_cells
    from sweep.reporting.sweepreport import build_report
    from sweepdirs import GRID, base, make_grid

    scores = {so: base(seed=i) for i, so in enumerate(GRID)}
    make_grid(tmp_path, scores)
    rep = build_report(tmp_path)
    cells = heatmap_cells(rep, "span", "recall@5")
    (panel,) = heatmap_panels(cells)
    assert panel.sizes == (64, 128, 256) and panel.overlaps == (0, 16)
    want = np.array(
        [
            [
                rep.frame.loc[
                    (rep.frame["chunk.size"] == s) & (rep.frame["chunk.overlap"] == o),
                    "span.recall@5",
                ].item()
                for o in (0, 16)
            ]
            for s in (64, 128, 256)
        ]
    )
    np.testing.assert_array_equal(panel.matrix, want)
    np.testing.assert_allclose(
        want, [[scores[(s, o)].mean() for o in (0, 16)] for s in (64, 128, 256)]
    )
    best = [c for c in cells if c.mark == "best"]
    assert len(best) == 1
    path = heatmap(tmp_path / "h.png", cells, title="t")
    assert path.read_bytes()[:8] == PNG and mpimg.imread(path).ndim == 3


def _unlabelled(fig):
    """The visible axes of a figure that lack a y label, or an x label (own or the figure's)."""
    shared_x = fig._supxlabel.get_text() if fig._supxlabel is not None else ""
    # A vertical colour bar has one axis to label: its y axis.
    return [
        ax
        for ax in fig.axes
        if ax.get_visible()
        and (
            not ax.get_ylabel()
            or not (ax.get_xlabel() or shared_x or getattr(ax, "_colorbar", None))
        )
    ]


def test_every_picture_labels_its_axes():
    """Each picture opened full size on its own must say what its axes are (issue 21, item 13)."""
    ranks = {f"size={s}": {"q1": 1, "q2": 3, "q3": 0} for s in (64, 128, 256, 512, 1024, 2048)}
    many = {f"size={s}": {"q1": 1, "q2": 0} for s in range(15)}
    splits = [ScoreSplit(f"size={s}", (0.9, 0.8, 0.7), (0.3,), 0.5) for s in (64, 128)]
    series = [Series("a", (256, 512), (0.3, 0.5), (0.2, 0.4), (0.4, 0.6))]
    figures = {
        "heatmap": heatmap_figure(_grid(), title="t"),
        "ranks": rank_figure(ranks, k=5, title="t"),
        "rank matrix": rank_figure(many, k=5, title="t"),
        "budgets": budget_figure(series, metric="span recall", title="t"),
        "top scores": score_figure(splits, title="t"),
    }
    assert {name: len(_unlabelled(fig)) for name, fig in figures.items()} == dict.fromkeys(
        figures, 0
    )
    assert {ax.get_ylabel() for ax in figures["ranks"].axes if ax.get_visible()} == {"questions"}


def test_top_score_histograms_count_questions_not_densities():
    answerable = tuple(np.linspace(0.5, 0.9, 40))
    fig = score_figure([ScoreSplit("size=64", answerable, (0.2, 0.3, 0.35), 0.4)], title="t")
    (ax,) = [a for a in fig.axes if a.get_visible()]
    assert ax.get_ylabel() == "questions"
    heights = [p.get_height() for p in ax.patches]
    assert sum(heights) == 43 and all(float(h).is_integer() for h in heights)


def test_a_tie_near_the_top_is_drawn_in_nearly_the_same_colour():
    # 0.959 and 1.000 once drew full purple and full yellow: the scale was their min and max.
    fig = heatmap_figure(
        [Cell("", 128, 0, 0.959, 0.90, 1.0), Cell("", 256, 0, 1.0, 0.95, 1.0)], title="t"
    )
    image = fig.axes[0].images[0]
    a, b = (np.array(image.cmap(image.norm(v))) for v in (0.959, 1.0))
    assert np.abs(a - b).max() < 0.1
    assert (image.norm.vmin, image.norm.vmax) == (0.0, 1.0)


def test_values_outside_0_1_are_scaled_to_their_intervals():
    from sweep.reporting.drawing import colour_range

    assert colour_range([Cell("", 1, 0, 2.0, 1.5, 2.5), Cell("", 2, 0, 3.0, 2.8, 3.4)]) == (
        1.5,
        3.4,
    )
    assert colour_range([Cell("", 1, 0, 0.2), Cell("", 2, 0, 0.3)]) == (0.0, 1.0)
