"""Several sweeps side by side on one page, and tested together when they are comparable.

Sweeps are pooled into one paired test only when every one of them scored the
same evaluation set (same documents and judgments, by content hash) with the
same scoring settings; a folder's name says nothing about that. Otherwise they
are shown side by side and the page says why they are not tested together.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from html import escape
from pathlib import Path

import pandas as pd

from sweep.core.files import regular_file
from sweep.core.settings import format_value, label, varied_settings
from sweep.decision.agreement import agreement
from sweep.decision.decide import PICK_MARK, group_rows, holm_correction, verdict_text
from sweep.decision.significance import Comparison, compare_to_best
from sweep.reporting import htmlkit
from sweep.reporting.html import subtitle
from sweep.reporting.htmlkit import Picture, Section, Table
from sweep.reporting.pictures import budget_picture_name, plot_name
from sweep.reporting.sweepreport import SweepReport, report_of_rows
from sweep.reporting.tables import ROW_LEGEND, fmt, with_ci
from sweep.scoring.perquery import PerQueryScores
from sweep.store.row import Row

__all__ = ["combined_report", "compare_sweeps", "sweep_agreements", "why_not_pooled"]


def sweep_name(path: Path) -> str:
    parts = Path(path).resolve().parts
    return "/".join(parts[-2:])


def why_not_pooled(reports: Sequence[SweepReport]) -> str | None:
    """Why the sweeps' settings cannot be tested together; None when they can."""
    rows = [r for rep in reports for r in rep.rows]
    if len(group_rows(rows)) == 1:
        return None
    firsts = [rep.rows[0] for rep in reports]
    fps = {r.dataset.key if r.dataset else None for r in firsts}
    reasons = []
    if len(fps) > 1:
        desc = ", ".join(f"{sweep_name(rep.sweep_dir)}: {_dataset(rep.rows[0])}" for rep in reports)
        reasons.append(f"they scored different evaluation sets (by content: {desc})")
    keys = [dict(r.eval.scoring_key()) for r in firsts]
    differ = [k for k in keys[0] if len({repr(kk[k]) for kk in keys}) > 1]
    if differ:
        reasons.append(
            "their scoring settings differ ("
            + "; ".join(f"eval.{k}: " + " vs ".join(str(kk[k]) for kk in keys) for k in differ)
            + ")"
        )
    if not reasons:  # the rows of one sweep already fall into several groups
        reasons.append("their rows were scored on several evaluation sets or scoring settings")
    return "No test across sweeps: " + " and ".join(reasons) + "; each sweep is tested on its own."


def combined_report(reports: Sequence[SweepReport]) -> SweepReport | str:
    """Every setting of several sweeps in one report with one decision (a ``sweep`` column
    says which folder each row came from); or, when their settings cannot be tested
    together, one line saying why."""
    why = why_not_pooled(reports)
    if why is not None:
        return why.replace("No test across sweeps: ", "no combined table: ", 1).replace(
            "; each sweep is tested on its own.", "."
        )
    # A folder by its own name, or with its parent's where two share one (two timestamps
    # of one name never do; two sweep names may): "/" would make a cell show the last part.
    short = [Path(rep.sweep_dir).resolve().name for rep in reports]
    names = (
        short
        if len(set(short)) == len(short)
        else [sweep_name(rep.sweep_dir).replace("/", ":") for rep in reports]
    )
    rows = []
    for rep, name in zip(reports, names):
        # Job numbers repeat across folders: each row gets its place in the combined table.
        rows += [
            dataclasses.replace(r, job=len(rows) + i, settings={**r.settings, "sweep": name})
            for i, r in enumerate(rep.rows)
        ]
    return report_of_rows(reports[0].sweep_dir, rows)


def _dataset(row: Row) -> str:
    return f"{row.dataset.name} #{row.dataset.key[:8]}" if row.dataset else "unknown"


def _setting_key(row: Row) -> str:
    """A setting without its dataset: how two sweeps of one grid on two question sets pair up."""
    return json.dumps(
        {k: v for k, v in row.settings.items() if not (k == "dataset" or k.startswith("dataset."))},
        sort_keys=True,
        default=str,
    )


def sweep_agreements(reports: Sequence[SweepReport]) -> list[str]:
    """For every two sweeps of the same grid on different question sets: do they rank the
    settings alike, and would they recommend the same one?"""
    lines = []
    for i, a in enumerate(reports):
        for b in reports[i + 1 :]:
            if len(a.decision.decisions) != 1 or len(b.decision.decisions) != 1:
                continue
            da, db = a.decision.decisions[0], b.decision.decisions[0]
            if (
                da.group.dataset is None
                or db.group.dataset is None
                or da.group.dataset.key == db.group.dataset.key
                or da.primary != db.primary
            ):
                continue
            keys_a = {_setting_key(a.row(j)): j for j in da.scores}
            keys_b = {_setting_key(b.row(j)): j for j in db.scores}
            pairs = {keys_a[k]: keys_b[k] for k in keys_a if k in keys_b}
            if len(pairs) < 2 or len(pairs) < len(keys_a):
                continue  # not the same grid
            picks = (da.chosen_job, db.chosen_job)
            names = (sweep_name(a.sweep_dir), sweep_name(b.sweep_dir))
            ev = da.group.eval
            agree = agreement(
                da.scores,
                db.scores,
                names=names,
                picks=picks,
                pairs=pairs,
                n_boot=ev.n_boot,
                seed=ev.seed,
            )
            if agree is None:
                continue
            pb = a.labels.get(next((j for j, k in pairs.items() if k == picks[1]), -1), "none")
            same = pairs.get(picks[0]) == picks[1]
            tau = (
                f"{agree.tau:.2f} [{agree.tau_low:.2f}, {agree.tau_high:.2f}]"
                if agree.tau == agree.tau
                else "undefined (one side ranks every setting the same)"
            )
            lines.append(
                f"{names[0]} vs {names[1]} ({da.group.dataset.name}, {agree.n_queries[0]} "
                f"questions; {db.group.dataset.name}, {agree.n_queries[1]}): Kendall's τ "
                f"between their rankings of the {len(pairs)} shared settings on "
                f"{da.primary.label} = {tau}; "
                + (
                    f"both recommend {a.labels[picks[0]]}."
                    if same
                    else f"{names[0]} recommends {a.labels.get(picks[0], 'none')}, {names[1]} {pb}."
                )
            )
    return lines


def _pooled(reports: Sequence[SweepReport]) -> tuple[dict[tuple[int, int], Comparison], list[str]]:
    pooled, owner = {}, {}
    for i, rep in enumerate(reports):
        for d in rep.decision.decisions:
            for job, sc in d.scores.items():
                owner[len(pooled)] = (i, job)
                pooled[len(pooled)] = sc
    if len(pooled) < 2:
        return {}, []
    ev = reports[0].decision.decisions[0].group.eval
    try:
        comparisons = compare_to_best(
            PerQueryScores.from_mapping(pooled), alpha=ev.alpha, n_perm=ev.n_perm, seed=ev.seed
        )
    except ValueError as e:
        return {}, [f"No test across sweeps: {e}."]
    primary = reports[0].decision.decisions[0].primary
    return (
        {owner[c.job]: c for c in comparisons},
        [
            f"vs best (all sweeps): every setting of every sweep against the overall best on "
            f"{primary.label}, paired over the queries they share, "
            f"{holm_correction(len(comparisons) - 1)}."
        ],
    )


def compare_sweeps(reports: Sequence[SweepReport], out: Path) -> Path:
    """Write the comparison page of several sweeps: every setting, each sweep's pick, pictures."""
    names = [sweep_name(r.sweep_dir) for r in reports]
    why = why_not_pooled(reports)
    across, notes = ({}, [why]) if why else _pooled(reports)
    # vs best (own sweep): each sweep's correction, as its own table says it
    notes = (
        sweep_agreements(reports)
        + notes
        + [
            f"{name}: {d.caption}"
            for name, rep in zip(names, reports)
            for d in rep.decision.decisions
            if d.caption
        ]
    )
    keys: list[str] = []
    for rep in reports:
        keys += [k for k in varied_settings([r.settings for r in rep.rows]) if k not in keys]
    primary = reports[0].decision.primary
    cost_k = (
        reports[0].decision.decisions[0].group.eval.cost_k if reports[0].decision.decisions else 5
    )
    records, classes = [], []
    for i, (name, rep) in enumerate(zip(names, reports)):
        for r in rep.rows:
            d = rep.decision.of(r.job)
            p = d.primary if d else primary
            rec = {"sweep": name}
            rec.update({label(k): format_value(r.settings.get(k)) for k in keys})
            rec.update(
                {
                    "chunks": fmt(r.stats.n_chunks) if r.ok else "–",
                    "tok/chunk": fmt(r.stats.mean_chunk_tokens, 1) if r.ok else "–",
                    f"tok@{cost_k}": fmt(r.stats.tokens(cost_k), 0) if r.ok else "–",
                    (primary.label if primary else "primary"): with_ci(r, p.level, p.metric)
                    if p
                    else "–",
                    "vs best (own sweep)": rep.decision.verdict(r),
                }
            )
            if across:
                rec["vs best (all sweeps)"] = verdict_text(across.get((i, r.job))) if r.ok else "–"
            rec["status"] = r.status if r.ok else f"{r.status}: {r.error or ''}"
            records.append(rec)
            c = across.get((i, r.job)) if across else rep.decision.comparison(r.job)
            verdict = c.verdict if c and c.verdict != "worse" else ""
            pick = "pick" if rep.decision.is_pick(r.job) else ""  # each sweep's own pick
            classes.append("bad" if not r.ok else " ".join(filter(None, [verdict, pick])))
    # Under the "Recommendations" heading the word is not repeated: each sweep's caveat, then pick.
    recs = [
        f"{name}: "
        + (
            " ".join(
                t
                for d in rep.decision.decisions
                for t in (
                    d.undecided_text,
                    (f"{d.group.label}: " if d.group.label and d.recommendation_body else "")
                    + d.recommendation_body,
                )
                if t
            )
            or "no recommendation"
        )
        for name, rep in zip(names, reports)
    ]
    sections = [
        Section("Recommendations", htmlkit.bullets(recs, cls="")),
        Section(
            "All settings",
            htmlkit.legend(ROW_LEGEND)
            + htmlkit.table_html(Table.of(pd.DataFrame(records), classes, PICK_MARK))
            + htmlkit.bullets(notes),
        ),
    ]
    side = []
    for name, rep in zip(names, reports):
        pics = []
        for d in rep.decision.decisions[:1]:
            p = d.primary
            for fname, caption in (
                (plot_name("heatmap", p.level, p.metric), p.label),
                (budget_picture_name(rep, d), f"{p.level} {p.measure.name} by token budget"),
            ):
                path = rep.sweep_dir / "plots" / fname
                # A picture a sweep folder holds is shown only when it is a file in the folder:
                # a link planted there must not put a file from elsewhere into the page.
                if regular_file(path, inside=rep.sweep_dir) is not None:
                    pics.append(htmlkit.picture_html(Picture(path, f"{name}: {caption}")))
        side.append(
            f"<div><h3>{escape(name)}</h3>{''.join(pics) or '<p>(no pictures)</p>'}"
            f"{htmlkit.paragraphs([subtitle(rep)])}</div>"
        )
    sections.append(Section("Side by side", f'<div class="grid">{"".join(side)}</div>'))
    out = Path(out)
    htmlkit.write_page(
        out,
        htmlkit.page(
            f"sweep comparison: {len(reports)} sweeps", sections, subtitle=" · ".join(names)
        ),
    )
    return out
