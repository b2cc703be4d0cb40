"""The worst queries of a setting on report.html: the worst-first table and, for the
worst ones, their gold evidence beside the chunks that were retrieved."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from sweep.decision.breakdown import QueryRow
from sweep.reporting.htmlkit import Table, marked, table_html
from sweep.store.traces import Retrieved

__all__ = ["worst_queries_html"]


def _hit_html(hit: Retrieved, row: QueryRow) -> str:
    gold = row.trace.gold if row.trace else ()
    shares = [(j, hit.gold_share(g)) for j, g in enumerate(gold)]
    rel = [f"{s:.0%} of gold {j + 1}" for j, s in shares if s > 0]
    tag = (
        f'<span class="rel">holds {escape(", ".join(rel))}</span>'
        if rel
        else '<span class="irr">no gold</span>'
    )
    page = f", p. {escape(hit.pages)}" if hit.pages else ""
    head = f"{hit.rank}. {escape(hit.doc_id)} [{hit.start}:{hit.end}]{page}, {hit.n_tokens} tokens, {tag}"
    if hit.text is None:
        return f"<li>{head}</li>"
    spans = [p for g in gold if g.start is not None and (p := hit.overlaps(g)) is not None]
    return f'<li>{head}<div class="chunk">{marked(hit.text, spans)}</div></li>'


def worst_queries_html(
    rows: Sequence[QueryRow], *, metric: str, setting: str, details: int = 20
) -> str:
    """The worst-first table and, for the worst queries, gold evidence and retrieved chunks."""
    table = Table(
        ("#", "query_id", "type", metric, "all settings: mean [min, max]", "query"),
        tuple(
            (
                str(i),
                r.query_id,
                (r.trace.type or "") if r.trace else "",
                f"{r.value:.3f}",
                f"{r.across_mean:.3f} [{r.across_min:.2f}, {r.across_max:.2f}]",
                r.trace.query if r.trace else "",
            )
            for i, r in enumerate(rows, 1)
        ),
    )
    parts = [
        f'<p class="note">Setting: {escape(setting)}. Lowest {escape(metric)} first; '
        "a query low in every setting is a hard question or a bad judgment, one low only "
        "here is this setting's fault. Gold text inside retrieved chunks is highlighted.</p>",
        table_html(table),
    ]
    for i, r in enumerate(rows[:details], 1):
        rec = r.trace
        title = f"{i}. {escape(r.query_id)}: {escape(metric)} = {r.value:.3f}"
        if rec is None:
            parts.append(f'<div class="q"><h3>{title}</h3><p>(no saved hits)</p></div>')
            continue
        if rec.type:
            title += f" <span class='note'>({escape(rec.type)})</span>"
        if rec.twohop:
            k = max(rec.twohop)
            title += f" <span class='note'>two-hop@{k}: {escape(rec.twohop[k])}</span>"
        gold = "".join(
            f"<li>{escape(g.doc_id)} "
            + (f"[{g.start}:{g.end}]" if g.start is not None else "(whole document)")
            + f", grade {g.grade}"
            + (f'<div class="chunk"><mark>{escape(g.text)}</mark></div>' if g.text else "")
            + "</li>"
            for g in rec.gold
        )
        hits = "".join(_hit_html(h, r) for h in rec.hits)
        parts.append(
            f'<div class="q"><h3>{title}</h3><p><b>Query:</b> {escape(rec.query)}</p>'
            f"<p><b>Gold evidence</b></p><ul>{gold}</ul>"
            f"<p><b>Retrieved</b></p><ol style='list-style:none;padding-left:0'>{hits}</ol></div>"
        )
    return "".join(parts)
