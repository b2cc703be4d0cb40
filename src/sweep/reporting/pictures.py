"""Which pictures a sweep gets, and their data: heatmaps, metric-vs-budget lines, first-relevant ranks.

``sweep.reporting.drawing`` draws; this module decides what to draw from a
:class:`~sweep.reporting.sweepreport.SweepReport` and writes the PNGs under ``plots/``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sweep.core.settings import setting_label
from sweep.decision.decide import Decision
from sweep.reporting.htmlkit import Picture
from sweep.reporting.sweepreport import SweepReport
from sweep.reporting.tables import HEADLINE_METRICS, budget_metrics, scored_levels
from sweep.store.traces import read_traces

if TYPE_CHECKING:
    from sweep.reporting.figurecache import FigureCache

__all__ = [
    "budget_picture_name",
    "heatmap_cells",
    "heatmap_metrics",
    "plot_name",
    "write_pictures",
    "write_score_histograms",
]


def _group_suffix(rep: SweepReport, d: Decision) -> str:
    """``_2`` for group 2 of a sweep whose rows fall into several groups; else nothing."""
    return f"_{d.group.number}" if len(rep.decision.decisions) > 1 else ""


def budget_picture_name(rep: SweepReport, d: Decision) -> str:
    """File name of a group's primary metric by token budget."""
    return plot_name("budget", d.primary.level, d.primary.measure.name + _group_suffix(rep, d))


def plot_name(kind: str, level: str, metric: str) -> str:
    return f"{kind}_{level}_{metric.replace('@', '_')}.png"


def heatmap_metrics(rep: SweepReport) -> list[tuple[str, str]]:
    """The primary metric, the printed @k columns, then the primary metric at each budget."""
    chosen: list[tuple[str, str]] = []
    for d in rep.decision.decisions:
        chosen.append((d.primary.level, d.primary.metric))
    for d in rep.decision.decisions:
        chosen += [
            (lvl, f"{m}@{k}")
            for k in d.group.eval.table_k
            for lvl in scored_levels(rep)
            for m in HEADLINE_METRICS
        ]
        chosen += budget_metrics(d)
    return list(dict.fromkeys(chosen))


def _facets(rep: SweepReport) -> dict[int, str]:
    """A panel per combination of the varied settings other than size and overlap (and the
    size's unit, which the panel's axis says)."""
    facet_keys = [k for k in rep.keys if k not in ("chunk.size", "chunk.unit", "chunk.overlap")]
    facet = {r.job: setting_label(r.settings, facet_keys, sep=", ") for r in rep.rows}
    seen: set[tuple[str, Any, Any, Any]] = set()
    for r in rep.rows:  # two rows in one cell would hide each other: give them their own panel
        cell = (
            facet[r.job],
            r.settings.get("chunk.size"),
            r.settings.get("chunk.overlap"),
            r.settings.get("chunk.unit"),
        )
        if cell in seen:
            facet[r.job] = (facet[r.job] + ", " if facet[r.job] else "") + f"job {r.job}"
        seen.add(cell)
    return facet


def heatmap_cells(rep: SweepReport, level: str, metric: str) -> list:
    """The cells of one metric's heatmap, straight from the rows' saved intervals."""
    from sweep.reporting import drawing as plots

    facet = _facets(rep)
    unit = _units(rep, facet)
    cells = []
    for r in rep.rows:
        d = rep.decision.of(r.job)
        m = r.interval(level, metric) if r.ok else None
        mark = ""
        if d is not None and (level, metric) == (d.primary.level, d.primary.metric):
            c = d.comparisons.get(r.job)
            mark = c.verdict if c else ""
        cells.append(
            plots.Cell(
                facet[r.job],
                r.settings.get("chunk.size"),
                r.settings.get("chunk.overlap"),
                m.mean if m else None,
                m.ci_low if m else None,
                m.ci_high if m else None,
                "" if r.ok else r.status,
                mark,
                unit[r.job],
            )
        )
    return cells


def _units(rep: SweepReport, facet: dict[int, str]) -> dict[int, str]:
    """What each row's size counts. A row that never built its chunker (an invalid cell)
    recorded none: it takes its panel's, where the panel's rows agree on one."""
    known = {r.job: str(r.settings.get("chunk.unit") or "") for r in rep.rows}
    by_facet: dict[str, set[str]] = {}
    for job, u in known.items():
        if u:
            by_facet.setdefault(facet[job], set()).add(u)
    return {
        job: u
        or (next(iter(by_facet[facet[job]])) if len(by_facet.get(facet[job], ())) == 1 else "")
        for job, u in known.items()
    }


def write_pictures(rep: SweepReport, cache: FigureCache | None = None) -> list[Picture]:
    """Heatmaps, metric-vs-budget lines and the first-relevant-rank histogram under plots/
    (copied from ``cache`` where drawn before)."""
    from sweep.reporting import drawing as plots  # matplotlib loads only when pictures are drawn

    out_dir = rep.sweep_dir / "plots"
    if not rep.ok:
        return []
    heatmaps: list[Picture] = []
    pictures: list[Picture] = []
    for level, metric in heatmap_metrics(rep):
        path = plots.heatmap(
            out_dir / plot_name("heatmap", level, metric),
            heatmap_cells(rep, level, metric),
            title=f"{level} {metric}: mean [95% interval]",
            cache=cache,
        )
        if path:
            heatmaps.append(Picture(path, f"{level} {metric} over chunk.size × chunk.overlap"))
    for d in rep.decision.decisions:
        p = d.primary
        name = f"{p.level} {p.measure.name}"
        series = []
        for r in rep.ok:
            if r.job not in d.group.jobs:
                continue
            pts = [
                (b, m)
                for b in d.group.eval.budgets
                if (m := r.interval(p.level, f"{p.measure.name}@{b}t")) is not None
            ]
            if pts:
                series.append(
                    plots.Series(
                        rep.labels[r.job],
                        tuple(b for b, _ in pts),
                        tuple(m.mean for _, m in pts),
                        tuple(m.ci_low for _, m in pts),
                        tuple(m.ci_high for _, m in pts),
                    )
                )
        suffix = _group_suffix(rep, d)
        path = plots.budget_lines(
            out_dir / budget_picture_name(rep, d),
            series,
            metric=name,
            title=f"{name} at equal context cost"
            + (f" ({d.group.label})" if d.group.label else ""),
            cache=cache,
        )
        if path:
            pictures.append(
                Picture(
                    path, f"{name} at each token budget, one line per setting (band: 95% interval)"
                )
            )
        k = max(d.group.eval.k)
        ranks = {}
        for r in rep.ok:
            path = r.file("hits.jsonl") if r.job in d.group.jobs else None
            if path is None:
                continue
            traces = read_traces(path)
            ranks[rep.labels[r.job]] = {
                q: t.first_relevant(p.level) or 0
                for q, t in traces.items()
                if t.credits.get(p.level)
            }
        path = plots.rank_histograms(
            out_dir / f"first_relevant_rank_{p.level}{suffix}.png",
            ranks,
            k=k,
            title=f"Rank of the first relevant chunk ({p.level} level, top {k}; "
            f"none = not in the top {k})",
            cache=cache,
        )
        if path:
            pictures.append(
                Picture(
                    path,
                    "Where the first relevant chunk lands, per setting: "
                    "rank-aware metrics (mrr, ndcg) reward rank 1 most",
                )
            )
    # The primary metric's heatmap first, then budgets and ranks, then the other heatmaps.
    return heatmaps[:1] + pictures + heatmaps[1:]


def write_score_histograms(rep: SweepReport, cache: FigureCache | None = None) -> list[Picture]:
    """Per setting, the top-1 scores of answerable and unanswerable queries: can the top score
    tell that a question has no answer in the corpus?"""
    from sweep.reporting import drawing as plots

    out = []
    for view in rep.groups:
        d = view.decision
        # The chosen setting and the best first: with many settings only twelve panels fit.
        first = [
            j
            for j in (d.chosen_job, *(c.job for c in d.comparisons.values() if c.verdict == "best"))
            if j is not None
        ]
        order = list(dict.fromkeys(first + [r.job for r in rep.ok if r.job in d.group.jobs]))
        splits = []
        for job in order:
            r = rep.row(job)
            path = r.file("hits.jsonl") if r.ok else None
            a = r.diagnostics.abstention if r.diagnostics else None
            if path is None or a is None:
                continue
            traces = read_traces(path).values()
            splits.append(
                plots.ScoreSplit(
                    rep.labels[job],
                    tuple(t.top_score for t in traces if t.gold and t.top_score is not None),
                    tuple(t.top_score for t in traces if not t.gold and t.top_score is not None),
                    a.threshold,
                )
            )
        path = plots.score_histograms(
            rep.sweep_dir / "plots" / f"top_score{_group_suffix(rep, d)}.png",
            splits,
            title="Top-1 retrieval score: answerable vs unanswerable "
            "questions" + (f" ({d.group.label})" if d.group.label else ""),
            cache=cache,
        )
        if path:
            out.append(
                Picture(
                    path,
                    "Can the top score tell an unanswerable question? One panel "
                    "per setting (up to 12): questions per score bin",
                )
            )
    return out
