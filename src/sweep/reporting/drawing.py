"""Pictures of a sweep where a person would rather look than read (PNG, no display).

Every ``*_figure`` function takes plain values and returns one Figure, or None
when there is too little to draw (one setting has no heatmap); the function
of the same picture without ``_figure`` saves it as a PNG. Figures are built
with ``matplotlib.figure.Figure`` and never through ``pyplot``, so no GUI
backend is touched and no global figure state leaks between calls. Given a
:class:`~sweep.reporting.figurecache.FigureCache`, a picture drawn before with
the same inputs (and this module and matplotlib unchanged) is copied instead.
"""

from __future__ import annotations

import hashlib
import math
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import matplotlib
import numpy as np
from matplotlib import colormaps
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from sweep.core.files import write_atomic

if TYPE_CHECKING:
    from sweep.reporting.figurecache import FigureCache

DPI = 110


def _code() -> tuple | None:
    """What a kept picture depends on besides its inputs: this module's code, matplotlib's
    and NumPy's versions (binning), the resolution. None when the code cannot be read
    (then nothing is cached)."""
    try:
        source = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()
    except OSError:
        return None
    return source, matplotlib.__version__, np.__version__, DPI


_CODE = _code()


@dataclass(frozen=True)
class Cell:
    """One setting in a heatmap: its facet, grid position, value and interval.

    ``mean`` is None for a setting that did not run (``note`` says why);
    ``mark`` frames the cell: ``"best"`` or ``"tie"`` (not distinguishable from best).
    """

    facet: str
    size: Any
    overlap: Any
    mean: float | None
    low: float | None = None
    high: float | None = None
    note: str = ""
    mark: str = ""
    #: what ``size`` counts (``tokens``, ``characters``); "" when not known
    unit: str = ""


@dataclass(frozen=True)
class Series:
    """One setting's metric at each token budget, with its interval."""

    label: str
    budgets: tuple[int, ...]
    means: tuple[float, ...]
    lows: tuple[float, ...]
    highs: tuple[float, ...]


def _order(values: Sequence[Any]) -> list[Any]:
    """Distinct values, numbers in numeric order, anything else after them as text."""
    distinct = list(dict.fromkeys(values))
    return sorted(
        distinct,
        key=lambda v: (
            (0, float(v), "")
            if isinstance(v, (int, float)) and not isinstance(v, bool)
            else (1, 0.0, str(v))
        ),
    )


def _drawn(
    path: Path,
    cache: FigureCache | None,
    what: str,
    inputs: tuple,
    make: Callable[[], Figure | None],
) -> Path | None:
    """``make()``'s figure saved as ``path`` (None when there is nothing to draw), or the
    same picture copied from ``cache``."""
    key = None
    if cache is not None and _CODE is not None:
        # The style in force (a matplotlibrc of the user's, say) draws other pixels.
        key = cache.key(_CODE, repr(sorted(matplotlib.rcParams.items())), what, inputs)
    if key is not None and cache.fetch(key, path):
        return path
    fig = make()
    if fig is None:
        return None
    _save(fig, path)
    if key is not None:
        cache.keep(key, path)
    return path


def _save(fig: Figure, path: Path) -> Path:
    """``fig`` as the PNG ``path``, written whole or not at all (a full disk leaves no half
    picture holding space, and its error names the picture: matplotlib's names no file),
    through a temporary file of a unique name made new, never through a link planted
    under a name sweep would use."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OSError(e.errno, e.strerror, str(path)) from None
    # constrained layout already fits; "tight" would draw twice
    return write_atomic(path, lambda f: fig.savefig(f, format="png", dpi=DPI))


@dataclass(frozen=True)
class Panel:
    """One facet of a heatmap: ``matrix[i, j]`` is the mean at ``sizes[i]`` x ``overlaps[j]``
    (NaN where no setting ran)."""

    facet: str
    sizes: tuple[Any, ...]
    overlaps: tuple[Any, ...]
    matrix: np.ndarray
    unit: str = ""


def heatmap_panels(cells: Sequence[Cell]) -> list[Panel]:
    """The matrices a heatmap draws, one per facet and size unit; panels of one unit share
    their axes. Sizes in characters and in tokens never share an axis: 256 of one is not
    256 of the other."""
    overlaps = tuple(_order([c.overlap for c in cells]))
    panels = []
    for facet, unit in dict.fromkeys((c.facet, c.unit) for c in cells):
        sizes = tuple(_order([c.size for c in cells if c.unit == unit]))
        grid = np.full((len(sizes), len(overlaps)), np.nan)
        for c in cells:
            if (c.facet, c.unit) == (facet, unit) and c.mean is not None:
                grid[sizes.index(c.size), overlaps.index(c.overlap)] = c.mean
        panels.append(Panel(facet, sizes, overlaps, grid, unit))
    return panels


def heatmap(
    path: Path, cells: Sequence[Cell], *, title: str, cache: FigureCache | None = None
) -> Path | None:
    """:func:`heatmap_figure` saved as ``path``; None when there is nothing to draw."""
    return _drawn(
        path, cache, "heatmap", (tuple(cells), title), lambda: heatmap_figure(cells, title=title)
    )


def colour_range(cells: Sequence[Cell]) -> tuple[float, float]:
    """What the heatmap's colours span: 0 to 1 for a metric in [0, 1] (every metric sweep
    scores), else the cells' intervals. Never the values' own min and max: that stretches
    a tie (0.959 and 1.000) over the whole scale, and draws it as the largest difference."""
    ends = [
        v for c in cells for v in (c.mean, c.low, c.high) if v is not None and not math.isnan(v)
    ]
    lo, hi = min(ends), max(ends)
    if lo >= 0.0 and hi <= 1.0:
        return 0.0, 1.0
    if hi - lo < 1e-9:
        lo, hi = lo - 0.05, hi + 0.05
    return lo, hi


def heatmap_figure(cells: Sequence[Cell], *, title: str) -> Figure | None:
    """Metric over chunk.size (rows) x chunk.overlap (columns), one panel per facet.

    Each cell reads ``mean`` and ``[low, high]``. None when fewer than two
    settings have a value: one number needs no picture.
    """
    valued = [c for c in cells if c.mean is not None and not math.isnan(c.mean)]
    if len(valued) < 2:
        return None
    panels = heatmap_panels(cells)
    facets = [p.facet for p in panels]
    overlaps = list(panels[0].overlaps)
    most_sizes = max(len(p.sizes) for p in panels)
    norm = Normalize(*colour_range(valued))
    cmap = colormaps["viridis"].with_extremes(bad="#d9d9d9")

    ncols = min(len(facets), 3)
    nrows = math.ceil(len(facets) / ncols)
    cell_w, cell_h = 1.25, 0.75
    panel_w = max(2.8, cell_w * len(overlaps) + 1.2)
    panel_h = max(2.2, cell_h * most_sizes + 1.2)
    fig = Figure(figsize=(panel_w * ncols + 1.2, panel_h * nrows + 0.6), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False)
    font = 9 if len(overlaps) <= 4 else 7
    image = None
    for n, panel in enumerate(panels):
        facet, sizes = panel.facet, list(panel.sizes)
        ax = axes[n // ncols][n % ncols]
        image = ax.imshow(np.ma.masked_invalid(panel.matrix), cmap=cmap, norm=norm, aspect="auto")
        for c in cells:
            if (c.facet, c.unit) != (facet, panel.unit):
                continue
            i, j = sizes.index(c.size), overlaps.index(c.overlap)
            if c.mean is None or math.isnan(c.mean):
                text, color = (c.note or "no value"), "#333333"
            else:
                text = f"{c.mean:.3f}"
                if c.low is not None and c.high is not None:
                    text += f"\n[{c.low:.2f}, {c.high:.2f}]"
                r, g, b, _ = cmap(norm(c.mean))
                color = "black" if 0.299 * r + 0.587 * g + 0.114 * b > 0.5 else "white"
            ax.text(j, i, text, ha="center", va="center", fontsize=font, color=color)
            if c.mark in ("best", "tie"):
                ax.add_patch(
                    Rectangle(
                        (j - 0.46, i - 0.46),
                        0.92,
                        0.92,
                        fill=False,
                        edgecolor="#e4572e",
                        linewidth=2.5 if c.mark == "best" else 1.5,
                        linestyle="-" if c.mark == "best" else "--",
                    )
                )
        ax.set_xticks(range(len(overlaps)), [str(o) for o in overlaps])
        ax.set_yticks(range(len(sizes)), [str(s) for s in sizes])
        ax.set_xlabel("chunk.overlap")
        ax.set_ylabel(f"chunk.size ({panel.unit})" if panel.unit else "chunk.size")
        if facet:
            ax.set_title(facet, fontsize=9)
    for n in range(len(facets), nrows * ncols):
        axes[n // ncols][n % ncols].set_visible(False)
    if image is not None:
        fig.colorbar(image, ax=axes.ravel().tolist(), shrink=0.8, label="mean")
    marked = any(c.mark for c in cells)
    fig.suptitle(
        title
        + ("\nframed: best (solid), not distinguishable from best (dashed)" if marked else ""),
        fontsize=10,
    )
    return fig


#: Above this many settings the histograms become one matrix: 30 small panels take
#: seconds to lay out and are hard to compare by eye.
MAX_PANELS = 12


def _rank_counts(ranks: Mapping[str, int], k: int) -> np.ndarray:
    values = np.fromiter(ranks.values(), dtype=np.int64, count=len(ranks))
    return np.array(
        [np.count_nonzero(values == r) for r in range(1, k + 1)]
        + [np.count_nonzero((values <= 0) | (values > k))]
    )


def rank_histograms(
    path: Path,
    ranks: Mapping[str, Mapping[str, int]],
    *,
    k: int,
    title: str,
    cache: FigureCache | None = None,
) -> Path | None:
    """:func:`rank_figure` saved as ``path``; None when no setting has a ranked query."""
    return _drawn(
        path, cache, "ranks", (ranks, k, title), lambda: rank_figure(ranks, k=k, title=title)
    )


def rank_figure(ranks: Mapping[str, Mapping[str, int]], *, k: int, title: str) -> Figure | None:
    """Per setting, how many queries have their first relevant hit at rank 1..k, or none.

    ``ranks[label][query_id]`` is that rank, 0 for none in the top k. The
    "none" bar is drawn apart in grey: those queries get nothing right. With
    more than ``MAX_PANELS`` settings, one row per setting in a single matrix.
    """
    labels = [lab for lab, r in ranks.items() if r]
    if not labels:
        return None
    counts = {lab: _rank_counts(ranks[lab], k) for lab in labels}
    names = [str(i) for i in range(1, k + 1)] + ["none"]
    if len(labels) > MAX_PANELS:
        return _rank_matrix(labels, counts, names, title)
    ncols = min(len(labels), 4)
    nrows = math.ceil(len(labels) / ncols)
    fig = Figure(figsize=(3.0 * ncols + 0.4, 2.4 * nrows + 0.9), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False, sharey=True)
    xs = np.arange(1, k + 2)
    for n, label in enumerate(labels):
        ax = axes[n // ncols][n % ncols]
        c = counts[label]
        ax.bar(xs[:-1], c[:-1], color="#3b75af", width=0.8)
        ax.bar(xs[-1:], c[-1:], color="#9e9e9e", width=0.8)
        ax.set_xticks(xs, names, fontsize=7)
        ax.set_title(
            f"{label}\nfound {int(c[:-1].sum())}/{int(c.sum())}, at rank 1: {int(c[0])}", fontsize=8
        )
        # Every panel says what it counts: opened full size, one panel is read on its own.
        ax.set_ylabel("questions", fontsize=8)
        ax.tick_params(axis="y", labelsize=7)
    for n in range(len(labels), nrows * ncols):
        axes[n // ncols][n % ncols].set_visible(False)
    fig.suptitle(title, fontsize=10)
    fig.supxlabel("rank of the first relevant chunk", fontsize=9)
    return fig


def _rank_matrix(
    labels: Sequence[str], counts: Mapping[str, np.ndarray], names: Sequence[str], title: str
) -> Figure:
    grid = np.stack([counts[lab] for lab in labels]).astype(float)
    share = grid / np.maximum(grid.sum(axis=1, keepdims=True), 1)
    fig = Figure(figsize=(0.55 * len(names) + 3.5, 0.28 * len(labels) + 1.6), layout="constrained")
    ax = fig.subplots()
    ax.imshow(share, cmap="Blues", vmin=0, vmax=1, aspect="auto")
    for i in range(grid.shape[0]):
        for j in range(grid.shape[1]):
            ax.text(
                j,
                i,
                f"{int(grid[i, j])}",
                ha="center",
                va="center",
                fontsize=7,
                color="white" if share[i, j] > 0.6 else "black",
            )
    ax.set_xticks(range(len(names)), names, fontsize=8)
    ax.set_yticks(range(len(labels)), labels, fontsize=7)
    ax.axvline(len(names) - 1.5, color="#555555", linewidth=1)  # "none" stands apart
    ax.set_xlabel("rank of the first relevant chunk (cell: questions; colour: share of the row)")
    ax.set_ylabel("setting")
    ax.set_title(title, fontsize=10)
    return fig


def budget_lines(
    path: Path,
    series: Sequence[Series],
    *,
    metric: str,
    title: str,
    cache: FigureCache | None = None,
) -> Path | None:
    """:func:`budget_figure` saved as ``path``; None when no series has a value."""
    return _drawn(
        path,
        cache,
        "budget",
        (tuple(series), metric, title),
        lambda: budget_figure(series, metric=metric, title=title),
    )


def budget_figure(series: Sequence[Series], *, metric: str, title: str) -> Figure | None:
    """The metric at each token budget, one line per setting, interval as a band."""
    series = [s for s in series if s.budgets and any(not math.isnan(m) for m in s.means)]
    if not series:
        return None
    fig = Figure(figsize=(7.5 if len(series) > 6 else 6.0, 4.0), layout="constrained")
    ax = fig.subplots()
    palette = colormaps["tab10" if len(series) <= 10 else "tab20"]
    budgets: set[int] = set()
    for n, s in enumerate(series):
        color = palette(n % palette.N)
        x = np.asarray(s.budgets, dtype=float)
        ax.plot(x, s.means, marker="o", color=color, label=s.label, linewidth=1.6)
        ax.fill_between(x, s.lows, s.highs, color=color, alpha=0.12, linewidth=0)
        budgets.update(s.budgets)
    ticks = sorted(budgets)
    ax.set_xscale("log", base=2)
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.minorticks_off()
    ax.set_xlabel("token budget (tokens of retrieved chunks handed to the LLM)")
    ax.set_ylabel(metric)
    ax.grid(alpha=0.3)
    if len(series) > 6:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    else:
        ax.legend(fontsize=8)
    ax.set_title(title, fontsize=10)
    return fig


@dataclass(frozen=True)
class ScoreSplit:
    """One setting's top-1 retrieval scores, answerable and unanswerable queries apart."""

    label: str
    answerable: tuple[float, ...]
    unanswerable: tuple[float, ...]
    threshold: float | None = None


def score_histograms(
    path: Path, splits: Sequence[ScoreSplit], *, title: str, cache: FigureCache | None = None
) -> Path | None:
    """:func:`score_figure` saved as ``path``; None when there is nothing to draw."""
    return _drawn(
        path, cache, "scores", (tuple(splits), title), lambda: score_figure(splits, title=title)
    )


def score_figure(splits: Sequence[ScoreSplit], *, title: str) -> Figure | None:
    """Per setting, the two distributions of top-1 scores on shared bins, and the threshold.

    At most ``MAX_PANELS`` panels (the caller picks which settings); None when
    no setting has both kinds of query.
    """
    splits = [s for s in splits if s.answerable and s.unanswerable][:MAX_PANELS]
    if not splits:
        return None
    every = np.concatenate([np.r_[s.answerable, s.unanswerable] for s in splits])
    lo, hi = float(every.min()), float(every.max())
    bins = np.linspace(lo, hi if hi > lo else lo + 1e-6, 21)
    ncols = min(len(splits), 3)
    nrows = math.ceil(len(splits) / ncols)
    fig = Figure(figsize=(3.6 * ncols + 0.4, 2.5 * nrows + 0.9), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False)
    for n, s in enumerate(splits):
        ax = axes[n // ncols][n % ncols]
        # Counts, which a reader can check against the table; the unanswerable bars
        # are drawn on top so that the (usually far fewer) unanswerable questions stay visible.
        ax.hist(
            s.answerable,
            bins=bins,
            alpha=0.6,
            color="#3b75af",
            label=f"answerable ({len(s.answerable)})",
        )
        ax.hist(
            s.unanswerable,
            bins=bins,
            alpha=0.8,
            color="#e4572e",
            label=f"unanswerable ({len(s.unanswerable)})",
        )
        if s.threshold is not None and math.isfinite(s.threshold):
            ax.axvline(s.threshold, color="black", linestyle="--", linewidth=1)
        ax.set_title(s.label, fontsize=8)
        ax.set_ylabel("questions", fontsize=8)
        ax.tick_params(labelsize=7)
        if n == 0:
            ax.legend(fontsize=7)
    for n in range(len(splits), nrows * ncols):
        axes[n // ncols][n % ncols].set_visible(False)
    fig.suptitle(title, fontsize=10)
    fig.supxlabel(
        "top-1 retrieval score (dashed: the threshold of best balanced accuracy)", fontsize=9
    )
    return fig


def length_histograms(
    path: Path, lengths: Mapping[str, np.ndarray], *, title: str, cache: FigureCache | None = None
) -> Path | None:
    """Per setting, chunks per token-length bin (shared bins); None without chunks."""
    return _drawn(
        path, cache, "lengths", (lengths, title), lambda: length_figure(lengths, title=title)
    )


def length_figure(lengths: Mapping[str, np.ndarray], *, title: str) -> Figure | None:
    items = [(label, np.asarray(v)) for label, v in lengths.items() if len(v)][:MAX_PANELS]
    if not items:
        return None
    hi = max(int(v.max()) for _, v in items)
    bins = np.linspace(0, max(hi, 1), 31)
    ncols = min(len(items), 3)
    nrows = math.ceil(len(items) / ncols)
    fig = Figure(figsize=(3.6 * ncols + 0.4, 2.3 * nrows + 0.9), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False)
    for n, (label, values) in enumerate(items):
        ax = axes[n // ncols][n % ncols]
        ax.hist(values, bins=bins, color="#3b75af")
        ax.set_title(
            "\n".join(textwrap.wrap(f"{label} (median {int(np.median(values))})", 48)), fontsize=8
        )
        ax.set_ylabel("chunks", fontsize=8)
        ax.tick_params(labelsize=7)
    for n in range(len(items), nrows * ncols):
        axes[n // ncols][n % ncols].set_visible(False)
    fig.suptitle(title, fontsize=10)
    fig.supxlabel("tokens per chunk", fontsize=9)
    return fig
