"""``report.html``: one self-contained page of a sweep, rendered from its SweepReport."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from sweep.decision.decide import PICK_MARK
from sweep.reporting import htmlkit
from sweep.reporting.chunkhealth import HEALTH_NOTE, cuts_link_html, health_frame
from sweep.reporting.htmlkit import Picture, Script, Section, Table
from sweep.reporting.sweepreport import SweepReport
from sweep.reporting.tables import (
    ABSTAIN_NOTE,
    AGREEMENT_NOTE,
    ROW_LEGEND,
    TWOHOP_NOTE,
    TYPE_METRIC_NOTE,
    abstention_caveat,
    abstention_frame,
    agreement_frame,
    agreement_line,
    breakdown_frame,
    cost_frame,
    cost_notes,
    footnotes,
    results_frame,
    row_class,
    row_classes,
    twohop_frame,
    twohop_ks,
    warning_lines,
)
from sweep.reporting.worstqueries import worst_queries_html

__all__ = ["render_html", "subtitle"]


def subtitle(rep: SweepReport) -> str:
    ok = rep.ok
    names = list(dict.fromkeys(r.dataset.name for r in rep.rows if r.dataset))
    bad = len(rep.rows) - len(ok)
    parts = [str(rep.sweep_dir)]
    if names:
        parts.append(("dataset " if len(names) == 1 else "datasets ") + ", ".join(names))
    parts.append(f"{len(ok)} setting(s) ran" + (f", {bad} invalid or failed" if bad else ""))
    if rep.decision.primary:
        parts.append(f"primary metric {rep.decision.primary.label}")
    return " · ".join(parts)


def _classes(rep: SweepReport, labels: Sequence[str]) -> list[str]:
    jobs = {v: j for j, v in rep.labels.items()}
    return [row_class(rep, jobs[label]) if label in jobs else "" for label in labels]


def _recommendation(rep: SweepReport) -> Section | None:
    """What the sweep can tell and the pick, each said once, before everything else."""
    boxes = []
    for d in rep.decision.decisions:
        if d.undecided_text:
            boxes.append(f'<div class="rec warn">{escape(d.undecided_text)}</div>')
        if d.recommendation_body:
            where = f"<b>{escape(d.group.label)}:</b> " if d.group.label else ""
            boxes.append(f'<div class="rec">{where}{escape(d.recommendation_body)}</div>')
    boxes += [f'<div class="rec warn">{escape(w)}</div>' for w in warning_lines(rep)]
    return Section("Recommendation", "".join(boxes)) if boxes else None


def _diagnostics(rep: SweepReport, pictures: Sequence[Picture]) -> Section | None:
    body = []
    for k in twohop_ks(rep):
        df = twohop_frame(rep, k)
        if df is not None:
            body.append(
                f"<h3>Two-hop failures at k={k}</h3>"
                + htmlkit.paragraphs([TWOHOP_NOTE])
                + htmlkit.table_html(Table.of(df, _classes(rep, list(df["setting"])), PICK_MARK))
            )
    df = abstention_frame(rep)
    if df is not None:
        caveat = abstention_caveat(rep)
        body.append(
            "<h3>Abstention</h3>"
            + htmlkit.paragraphs([ABSTAIN_NOTE] + ([caveat] if caveat else []))
            + htmlkit.table_html(Table.of(df, _classes(rep, list(df["setting"])), PICK_MARK))
            + "".join(htmlkit.picture_html(p) for p in pictures)
        )
    return Section("Retrieval diagnostics", "".join(body), open=False) if body else None


def _health(rep: SweepReport, lengths: Sequence[Picture]) -> Section | None:
    df = health_frame(rep)
    if df is None:
        return None
    return Section(
        "Chunk health",
        htmlkit.paragraphs([HEALTH_NOTE])
        + htmlkit.table_html(Table.of(df, _classes(rep, list(df["setting"])), PICK_MARK))
        + "".join(htmlkit.picture_html(p) for p in lengths)
        + cuts_link_html(rep),
        open=False,
    )


def render_html(
    rep: SweepReport,
    pictures: Sequence[Picture],
    diagnostics: Sequence[Picture] = (),
    lengths: Sequence[Picture] = (),
    explorer: Script | None = None,
) -> str:
    """The page; with ``explorer`` (:mod:`sweep.reporting.explorer`) its script draws the
    question list and the question and document views on top, and makes the table
    sortable. The static sections stay: they read without the script."""
    sections = []
    rec = _recommendation(rep)
    if rec is not None:
        sections.append(rec)
    table = Table.of(results_frame(rep), row_classes(rep), PICK_MARK)
    sections.append(
        Section(
            "Comparison table",
            htmlkit.legend(ROW_LEGEND)
            + f'<div id="results-table">{htmlkit.table_html(table)}</div>'
            + htmlkit.bullets(footnotes(rep)),
        )
    )
    costs = cost_frame(rep)
    if costs is not None:
        sections.append(
            Section(
                "What each setting costs",
                htmlkit.paragraphs(cost_notes(rep, costs))
                + htmlkit.table_html(
                    Table.of(costs, _classes(rep, list(costs["setting"])), PICK_MARK)
                ),
            )
        )
    health = _health(rep, lengths)
    if health is not None:
        sections.append(health)
    if pictures:
        sections.append(
            Section(
                "Pictures",
                '<div class="grid">'
                + "".join(htmlkit.picture_html(p) for p in pictures)
                + "</div>",
                open=False,
            )
        )
    for view in rep.groups:
        d = view.decision
        where = f" ({d.group.label})" if d.group.label else ""
        df = breakdown_frame(view, rep)
        if df is not None:
            classes = [row_class(rep, j) for j in view.breakdown.jobs]
            own = breakdown_frame(view, rep, per_type=True)
            sections.append(
                Section(
                    f"{d.primary.label} by query type{where}",
                    htmlkit.paragraphs(
                        ["Mean per query type; n = queries of that type scored at this level."]
                    )
                    + htmlkit.table_html(Table.of(df, classes, PICK_MARK))
                    + (
                        ""
                        if own is None
                        else htmlkit.paragraphs([TYPE_METRIC_NOTE])
                        + htmlkit.table_html(Table.of(own, classes, PICK_MARK))
                    ),
                )
            )
        agree = agreement_frame(view, rep)
        if agree is not None:
            sections.append(
                Section(
                    f"Synthetic vs hand-written questions{where}",
                    htmlkit.paragraphs([agreement_line(view.agreement, rep.labels), AGREEMENT_NOTE])
                    + htmlkit.table_html(
                        Table.of(agree, _classes(rep, list(agree["setting"])), PICK_MARK)
                    ),
                )
            )
    answers = rep.sweep_dir / "answers" / "answers.md"
    if answers.exists():
        sections.append(
            Section(
                "Do the answers hold up?",
                htmlkit.paragraphs(
                    [
                        "sweep.answers judged the answers an LLM gave from some settings' chunks: "
                        "answers/answers.md, and answers/answers.html for every trace."
                    ]
                )
                + '<p><a href="answers/answers.html">answers/answers.html</a></p>',
            )
        )
    diag = _diagnostics(rep, diagnostics)
    if diag is not None:
        sections.append(diag)
    for view in rep.groups:
        d = view.decision
        where = f" ({d.group.label})" if d.group.label else ""
        if view.worst:
            sections.append(
                Section(
                    f"Worst queries{where}",
                    worst_queries_html(
                        view.worst, metric=d.primary.label, setting=view.worst_setting
                    ),
                    open=False,
                )
            )
    if explorer is None:
        return htmlkit.page("sweep report", sections, subtitle=subtitle(rep))
    return htmlkit.page(
        "sweep report",
        sections,
        subtitle=subtitle(rep),
        css=explorer.css,
        top='<div id="explorer"></div>',
        end=explorer.body,
    )
