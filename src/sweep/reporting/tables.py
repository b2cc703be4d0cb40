"""The sweep's tables as text: the comparison table, the one that fits a terminal, the notes
under them, the breakdown by query type and the worst queries.

Every table is a pandas DataFrame of display strings (rounding happens here and
nowhere earlier), rendered to Markdown by pandas/tabulate; ``sweep.reporting.html``
renders the same frames to HTML.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from sweep.core.mdtext import md_text
from sweep.core.measures import LEVELS, OPTIONAL_LEVELS
from sweep.core.messages import visible
from sweep.core.settings import format_value, label, setting_label
from sweep.core.timing import BUSY_LOAD_PER_CPU
from sweep.decision.breakdown import QueryRow
from sweep.decision.decide import Decision
from sweep.reporting.designs import DESIGNS_NOTE, twohop_changes_frame
from sweep.reporting.sweepreport import GroupView, SweepReport
from sweep.scoring.aggregate import Summary
from sweep.store.row import Row
from sweep.store.stats import Stats

__all__ = [
    "ROW_LEGEND",
    "TERMINAL_WIDTH",
    "agreement_lines",
    "breakdown_frame",
    "breakdown_markdown",
    "footnotes",
    "markdown",
    "recommendations",
    "results_frame",
    "results_markdown",
    "row_class",
    "row_classes",
    "scored_levels",
    "terminal_table",
    "terminal_text",
    "unfinished_note",
    "warning_lines",
    "worst_queries_markdown",
]

HEADLINE_METRICS = ("recall", "ndcg")
TERMINAL_WIDTH = 120
#: Worst queries shown with their full text (the table lists them all).
WORST_DETAILS = 20


def fmt(x: Any, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{x:.{digits}f}" if isinstance(x, float) else str(x)


def with_ci(row: Row, level: str, metric: str) -> str:
    m = row.interval(level, metric)
    if m is None or math.isnan(m.mean):
        return "–"
    return f"{fmt(m.mean)} [{fmt(m.ci_low, 2)}, {fmt(m.ci_high, 2)}]"


def markdown(df: pd.DataFrame) -> str:
    """A frame of display strings as a Markdown table, never re-parsed as numbers; every
    cell and header escaped (:func:`md_text`): settings, labels and errors come from data."""
    safe = df.map(lambda cell: md_text(cell, starts_line=False))
    safe.columns = [md_text(c, starts_line=False) for c in df.columns]
    return safe.to_markdown(index=False, disable_numparse=True)


def _status(row: Row) -> str:
    return row.status if row.ok else f"{row.status}: {row.error or ''}"


def _metric_columns(rep: SweepReport) -> list[tuple[str, str]]:
    """``(level, metric)`` of the printed @k columns, then the primary metric at each budget."""
    cols: list[tuple[str, str]] = []
    levels = scored_levels(rep)
    for d in rep.decision.decisions:
        ev = d.group.eval
        cols += [(lvl, f"{m}@{k}") for k in ev.table_k for lvl in levels for m in HEADLINE_METRICS]
        cols += budget_metrics(d)
    return list(dict.fromkeys(cols))


def scored_levels(rep: SweepReport) -> tuple[str, ...]:
    """The levels the tables show: ``doc`` and ``span`` always, ``page`` only when a
    setting's evaluation set has evidence on pages (a set without pages prints the
    table it printed before the page level existed)."""
    return tuple(
        lvl
        for lvl in LEVELS
        if lvl not in OPTIONAL_LEVELS
        or any(
            r.summary is not None
            and lvl in r.summary.levels
            and r.summary.levels[lvl].n_queries > 0
            for r in rep.ok
        )
    )


def budget_metrics(d: Decision) -> list[tuple[str, str]]:
    """``(level, metric)`` of the primary metric's name at every ``eval.budgets``."""
    p = d.primary
    if p.measure.name == "precision_omega":
        return []
    return [(p.level, f"{p.measure.name}@{b}t") for b in d.group.eval.budgets]


def _cost_k(rep: SweepReport) -> int:
    return rep.decision.decisions[0].group.eval.cost_k if rep.decision.decisions else 5


def results_frame(rep: SweepReport) -> pd.DataFrame:
    """The full comparison table: what results.md and report.html show."""
    cost_k = _cost_k(rep)
    metric_cols = _metric_columns(rep)
    first_cols = first_stage_metrics(rep)
    # Parent retrieval: the primary metric of the chunks themselves, beside their parents'.
    p = rep.decision.primary
    child_cols = (
        [(p.level, p.metric)] if p is not None and any(r.child is not None for r in rep.ok) else []
    )
    records = []
    for r in rep.rows:
        st = r.stats
        rec = {label(k): format_value(r.settings.get(k)) for k in rep.keys}
        # The verdict beside the settings: a wide table scrolls, and these are what is read.
        rec["vs best"] = rep.decision.verdict(r)
        rec.update(
            {
                "chunks": fmt(st.n_chunks) if r.ok else "–",
                "tok/chunk": fmt(st.mean_chunk_tokens, 1) if r.ok else "–",
                f"tok@{cost_k}": fmt(st.tokens(cost_k), 0) if r.ok else "–",
                "trunc %": fmt(100 * st.truncated_share, 1) if r.ok else "–",
            }
        )
        rec.update({f"{lvl} {m}": with_ci(r, lvl, m) for lvl, m in metric_cols})
        rec.update({f"1st stage {lvl} {m}": _cell(r.first_stage, lvl, m) for lvl, m in first_cols})
        rec.update({f"child {lvl} {m}": _cell(r.child, lvl, m) for lvl, m in child_cols})
        rec.update(
            {
                "embed s": fmt(st.embed_s, 1) if r.ok else "–",
                "total s": fmt(st.total_s, 1),
                "status": _status(r),
            }
        )
        records.append(rec)
    return pd.DataFrame(records)


def first_stage_metrics(rep: SweepReport) -> list[tuple[str, str]]:
    """With a re-ranker: the primary metric before re-ranking, and at k = the chunks re-ranked
    per query (the most the re-ranker can reach)."""
    p = rep.decision.primary
    n = max((r.stats.rerank_candidates for r in rep.ok if r.first_stage is not None), default=0)
    if p is None or not n:
        return []
    return list(dict.fromkeys([(p.level, p.metric), (p.level, f"{p.measure.name}@{round(n)}")]))


def _cell(summary: Summary | None, level: str, metric: str) -> str:
    m = None if summary is None else summary.interval(level, metric)
    if m is None or math.isnan(m.mean):
        return "–"
    return f"{fmt(m.mean)} [{fmt(m.ci_low, 2)}, {fmt(m.ci_high, 2)}]"


def row_class(rep: SweepReport, job: int) -> str:
    """CSS classes of a setting's row: best or tie (≈ best), plus pick when it is recommended."""
    c = rep.decision.comparison(job)
    verdict = c.verdict if c and c.verdict != "worse" else ""
    return " ".join(filter(None, [verdict, "pick" if rep.decision.is_pick(job) else ""]))


def row_classes(rep: SweepReport) -> tuple[str, ...]:
    """CSS classes per row of :func:`results_frame`: :func:`row_class`, or bad (did not run)."""
    return tuple("bad" if not r.ok else row_class(rep, r.job) for r in rep.rows)


#: What the row marks of report.html's tables mean: ``(CSS class, meaning)``.
ROW_LEGEND = (
    ("best", "best: the highest mean on the primary metric"),
    ("tie", "≈ best: not distinguishable from the best"),
    ("pick", "recommended: the cheapest setting not distinguishable from the best"),
    ("bad", "did not run"),
)


def terminal_table(rep: SweepReport, width: int = TERMINAL_WIDTH) -> str:
    """The table printed at the end of a sweep, at most ``width`` columns wide.

    The varied settings, what a setting costs to read (``tok@k``) and whether
    its chunks are truncated, the primary metric with its interval and at each
    token budget, the verdict; the status only where a setting did not run.
    Everything else is in results.md, results.csv and report.html. Plain
    aligned columns, not Markdown: it is read in a terminal.
    """
    cost_k = _cost_k(rep)
    primary = rep.decision.primary
    records = []
    budgets: list[str] = []
    if primary is not None:
        budgets = [m for _, m in budget_metrics(rep.decision.decisions[0])]
    settings = [label(k) for k in rep.keys]
    for r in rep.rows:
        d = rep.decision.of(r.job)
        rec = {label(k): format_value(r.settings.get(k)) for k in rep.keys}
        rec[f"tok@{cost_k}"] = fmt(r.stats.tokens(cost_k), 0) if r.ok else "–"
        rec["trunc %"] = fmt(100 * r.stats.truncated_share, 1) if r.ok else "–"
        if primary is not None:
            rec[primary.label] = with_ci(r, primary.level, primary.metric)
            for m in budgets:
                rec["@" + m.split("@", 1)[1]] = fmt(r.mean(primary.level, m))
        else:  # groups with different primaries: each row shows its own
            p = d.primary if d else None
            rec["primary"] = f"{p.label} {with_ci(r, p.level, p.metric)}" if p else "–"
        rec["vs best"] = rep.decision.verdict(r)
        records.append(rec)
    df = pd.DataFrame(records)
    if any(not r.ok for r in rep.rows):
        df["status"] = [("" if r.ok else r.status) for r in rep.rows]
    # Too wide: shorten class names (nothing lost), drop budget columns from the right,
    # then clip the widest setting values.
    strategy = label("chunk.strategy")
    if _width(plain(df)) > width and strategy in df.columns:
        df[strategy] = short_class_names(df[strategy])
    while _width(plain(df)) > width and any(c.startswith("@") for c in df.columns):
        df = df.drop(columns=[[c for c in df.columns if c.startswith("@")][-1]])
    while _width(plain(df)) > width:
        widest = max(settings, key=lambda c: df[c].str.len().max())
        longest = int(df[widest].str.len().max())
        if longest <= 12:
            break
        df[widest] = df[widest].map(lambda s: _ellipsis(s, longest - 1))
    # Why a setting did not run, under the table: prose may wrap, columns may not.
    # The strategy always: "invalid: size=256 overlap=0" hides that it was strategy=sentance.
    why_keys = ["chunk.strategy", *(k for k in rep.keys if k != "chunk.strategy")]
    reasons = [
        visible(
            f"{r.status}: {setting_label(r.settings, why_keys)}: {r.error or '(no reason saved)'}"
        )
        for r in rep.rows
        if not r.ok
    ]
    return "\n".join([plain(df), *reasons])


#: What a framework's class name ends with that tells one strategy from another no better
#: than the words before it (``RecursiveCharacterTextSplitter``).
_CLASS_SUFFIXES = ("TextSplitter", "NodeParser", "Splitter", "Chunker")


def short_class_names(names: pd.Series) -> pd.Series:
    """Strategy names without their class-name suffix (``RecursiveCharacter``) where that
    still tells every name apart, even read case-blind (``SentenceSplitter`` stays whole
    beside ``sentence``): a column that must be narrower stays readable, where clipping
    would leave ``RecursiveCharacterTextSplit…``."""

    def short(name: str) -> str:
        for suffix in _CLASS_SUFFIXES:
            if name.endswith(suffix) and len(name) > len(suffix):
                return name[: -len(suffix)]
        return name

    distinct = set(names)
    owners: dict[str, set[str]] = {}
    for name in distinct:
        owners.setdefault(short(name).lower(), set()).add(name)
        owners.setdefault(name.lower(), set()).add(name)
    return names.map(lambda n: short(n) if len(owners[short(n).lower()]) == 1 else n)


def _ellipsis(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def plain(df: pd.DataFrame) -> str:
    """A frame of display strings as aligned columns two spaces apart, header underlined;
    a control or bidi character from data (an error, a setting) shows escaped, so it can
    neither break a row nor drive the terminal."""
    cols = [visible(c) for c in df.columns]
    cells = [[visible(v) for v in row] for row in df.itertuples(index=False)]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(cols)]

    def line(values: Sequence[str]) -> str:
        return "  ".join(v.ljust(w) for v, w in zip(values, widths)).rstrip()

    return "\n".join([line(cols), line(["-" * w for w in widths])] + [line(r) for r in cells])


def _width(text: str) -> int:
    return max((len(line) for line in text.splitlines()), default=0)


def unfinished_note(jobs: Sequence[int]) -> str:
    """``job 2 never finished (...)``: jobs that started and saved no row."""
    return (
        f"job{'s' if len(jobs) > 1 else ''} {', '.join(map(str, jobs))} never finished "
        "(no row.json: the sweep was killed, or is still running), so "
        f"{'they are' if len(jobs) > 1 else 'it is'} not in the table"
    )


def footnotes(rep: SweepReport) -> list[str]:
    """The notes under the table: what was scored, what the columns mean, how the tests ran."""
    notes = [unfinished_note(rep.unfinished) + "."] if rep.unfinished else []
    ok = rep.ok
    by_dataset: dict[str, Row] = {}
    for r in ok:
        by_dataset.setdefault(r.dataset.key if r.dataset else "", r)
    for r in by_dataset.values():
        assert r.summary is not None
        head = f"dataset {r.dataset.name}: " if len(by_dataset) > 1 and r.dataset else ""
        counts = [
            f"{lvl} level: {lv.n_queries} queries scored, {lv.n_excluded} excluded "
            + (
                "(no evidence on a page of a paged document)"
                if lvl == "page"
                else f"(no {lvl}-level judgment)"
            )
            for lvl, lv in r.summary.levels.items()
        ]
        notes.append(head + "; ".join(counts) + ".")
    if any(r.stats.truncated_share > 0 for r in ok):
        notes.append(
            "trunc %: share of chunks longer than the embedder's max_seq_length; "
            "their tails are never embedded."
        )
    for r in rep.rows:  # settings a strategy ignores are said, not silently dropped
        notes += [f"{setting_label(r.settings, rep.keys)}: {n}" for n in r.notes]
    cost_k = _cost_k(rep)
    notes.append(
        f"tok@{cost_k}: mean tokens of the top {cost_k} chunks per query, what the LLM "
        "would read; @Bt columns take the longest prefix of the ranking within B tokens, "
        "so chunk sizes are compared at the same context cost."
    )
    if any(r.child is not None for r in ok):
        notes.append(
            "parent retrieval (parent.mode): the chunks are searched and their "
            "parents scored, so metrics and tok@k are those of the parents; child "
            "columns score the chunks themselves."
        )
    notes += diagnostics_notes(rep)
    notes += agreement_lines(rep)
    notes += rep.decision.notes
    for d in rep.decision.decisions:
        head = f"{d.group.label}: " if d.group.label else ""
        notes += [head + n for n in d.notes + d.needed]
    boot = next((r.summary for r in ok if r.summary is not None), None)
    how = (
        f" ({boot.confidence * 100:g}%, {boot.n_boot} resamples, seed {boot.seed})"
        if boot
        else " (95%)"
    )
    notes.append(
        f"Cells: mean [bootstrap interval over queries{how}]. All metrics, k, budgets: results.csv."
    )
    return notes


def diagnostics_notes(rep: SweepReport) -> list[str]:
    """One line per group on the chosen setting's two-hop failures and abstention."""
    from sweep.scoring.diagnostics import TWOHOP_CLASSES

    notes = []
    for view in rep.groups:
        job = view.decision.chosen_job
        r = next((x for x in rep.ok if x.job == job), None)
        if r is None or r.diagnostics is None:
            continue
        parts = []
        k = view.decision.group.eval.cost_k
        t = r.diagnostics.twohop_at(k)
        if t is not None and t.n:
            parts.append(
                f"two-hop failures at k={k} over {t.n} multi-hop queries: "
                + ", ".join(f"{c} {t.share(c):.0%}" for c in TWOHOP_CLASSES)
            )
        a = r.diagnostics.abstention
        if a is not None:
            parts.append(
                f"abstention AUROC {a.auroc:.2f} [{a.auroc_low:.2f}, {a.auroc_high:.2f}] "
                f"over {a.n_unanswerable} unanswerable questions"
            )
        if parts:
            notes.append(
                f"{rep.labels[job]}: " + "; ".join(parts) + " (every setting: diagnostics.md)."
            )
    return notes


COST_NOTE = (
    "What each setting costs to run in production. vectors and index MB: the index "
    "as built (FAISS's serialized size; BM25's arrays). embed tokens: model tokens to "
    "embed the whole corpus once, cached or not. tok@k: tokens an LLM reads per query "
    "from the top k. latency: one query at a time, a fresh query encode plus the "
    "search, on this machine with a warm model (re-ranking not included). peak MB: "
    "the most memory (resident set) the job's process held while the job ran: the "
    "model, the index and everything else that job loaded."
)

#: Beside a latency measured under load: slower than the machine is when idle.
LOAD_MARK = "†"


def latency_note(rep: SweepReport) -> str | None:
    """When and under what load the latency figures were measured (None: none were)."""
    timed = [r.stats.latency_conditions for r in rep.ok if r.stats.latency_p50_ms is not None]
    if not timed:
        return None
    known = [c for c in timed if c.known]
    if not known:
        return (
            "latency measured at an unknown time (kept by an earlier version that did "
            "not record when, nor the machine's load then)."
        )
    first, last = min(known, key=lambda c: c.at).when(), max(known, key=lambda c: c.at).when()
    if first != last:
        day = first[:11]
        last = last[len(day) : -len(" UTC")] if last.startswith(day) else last[: -len(" UTC")]
        first = first[: -len(" UTC")]
    when = first if first == last else f"{first}–{last} UTC"
    loads = sorted({f"{c.load:.1f}" for c in known}, key=float)
    cpus = sorted({c.cpus for c in known})
    load = loads[0] if len(loads) == 1 else f"{loads[0]}–{loads[-1]}"
    on = " or ".join(map(str, cpus))
    note = f"latency measured {when}, 1-minute load {load} on {on} CPU{'s' if cpus != [1] else ''}"
    timed_rows = [r for r in rep.ok if r.stats.latency_p50_ms is not None]
    backends = sorted({str(r.settings.get("embed.backend")) for r in timed_rows} - {"None"})
    if backends:
        # A query's encode time is its runtime's: openvino encodes one several times faster.
        note += f", queries encoded by {' and '.join(backends)}"
    if len(known) < len(timed):
        note += "; some figures at an unknown time"
    if any(c.busy for c in known):
        note += (
            f". {LOAD_MARK} measured under load (more than {BUSY_LOAD_PER_CPU:g} runnable "
            "tasks per CPU): slower than on an idle machine. A later run measures such "
            "figures again once the machine is idle; runtime.retime=true measures every "
            "one again"
        )
    return note + "."


def _latency(ms: float | None, st: Stats) -> str:
    busy = ms is not None and st.latency_conditions.busy
    return fmt(ms, 1) + (f" {LOAD_MARK}" if busy else "")


def cost_frame(rep: SweepReport) -> pd.DataFrame | None:
    """Per ok setting: index size, embedding cost, context read and latency per query."""
    ok = [r for r in rep.rows if r.ok]
    if not ok:
        return None
    cost_k = _cost_k(rep)
    records = []
    for r in ok:
        st = r.stats
        mb = None if st.index_bytes is None else st.index_bytes / 2**20
        records.append(
            {
                "setting": rep.labels[r.job],
                "vectors": fmt(st.n_vectors),
                "index MB": fmt(mb, 2),
                "embed tokens": fmt(st.embed_tokens) if st.embed_tokens else "–",
                f"tok@{cost_k}": fmt(st.tokens(cost_k), 0),
                "latency p50 ms": _latency(st.latency_p50_ms, st),
                "latency p95 ms": _latency(st.latency_p95_ms, st),
                "peak MB": fmt(st.peak_rss_mb, 0),
            }
        )
        if any(o.stats.context_prompt_tokens or o.stats.context_requests for o in ok):
            records[-1].update(
                {
                    "context LLM tokens": (
                        fmt(st.context_prompt_tokens + st.context_completion_tokens)
                        if st.context_prompt_tokens
                        else "–"
                    ),
                    "context requests sent": fmt(st.context_requests)
                    if st.context_prompt_tokens
                    else "–",
                    "context cost": fmt(st.context_cost, 2) if st.context_cost is not None else "–",
                }
            )
    return pd.DataFrame(records)


CONTEXT_NOTE = (
    "context LLM tokens: prompt and completion tokens of the chunk contexts, as the "
    "endpoint counted them, cached answers included (they were paid once); "
    "requests sent: this run's, the others came from the cache; cost: at the llm "
    "group's input_price and output_price per million tokens."
)


def cost_markdown(rep: SweepReport) -> str | None:
    df = cost_frame(rep)
    if df is None:
        return None
    notes = cost_notes(rep, df)
    return f"## What each setting costs\n\n{' '.join(notes)}\n\n{markdown(df)}"


def cost_notes(rep: SweepReport, df: pd.DataFrame) -> list[str]:
    """The notes above the cost table: what its columns mean, when latency was measured."""
    latency = latency_note(rep)
    return (
        [COST_NOTE]
        + ([latency] if latency else [])
        + ([CONTEXT_NOTE] if "context LLM tokens" in df.columns else [])
    )


def recommendations(rep: SweepReport) -> list[str]:
    """Per group: that its questions cannot tell the settings apart (when so), then the pick."""
    return [
        t for d in rep.decision.decisions for t in (d.undecided_text, d.recommendation_text) if t
    ]


def warning_lines(rep: SweepReport) -> list[str]:
    """What makes the numbers untrustworthy (``SweepReport.warnings``), said beside the
    recommendation."""
    return list(rep.warnings)


def agreement_lines(rep: SweepReport) -> list[str]:
    """Per group of a set that mixes synthetic and hand-written questions: do they agree?"""
    return [
        agreement_line(v.agreement, rep.labels) + " (by_source.md)"
        for v in rep.groups
        if v.agreement is not None
    ]


def results_markdown(rep: SweepReport) -> str:
    """results.md: the full table, the recommendation(s), the notes."""
    parts = [markdown(results_frame(rep))]
    # Labels, notes, dataset names and errors in the prose come from data too.
    parts += [md_text(t) for t in recommendations(rep)]
    parts += [f"**{md_text(t)}**" for t in warning_lines(rep)]
    parts.append("\n".join(f"- {md_text(n)}" for n in footnotes(rep)))
    cost = cost_markdown(rep)
    if cost:
        parts.append(cost)
    return "\n\n".join(parts)


def terminal_text(rep: SweepReport) -> str:
    """What a sweep prints at its end: the narrow table, the correction its ``vs best`` p
    carries, whether synthetic and hand-written questions agree, the recommendation(s), and
    how many questions it would take to tell the ties from the best."""
    needed = [n for d in rep.decision.decisions for n in d.needed]
    # Which correction the vs best p carries, right under the table: sweep.check reports a
    # pair's p unadjusted, and the two must not read as contradicting each other.
    caption = "\n".join(d.caption for d in rep.decision.decisions if d.caption)
    prose = (
        ([caption] if caption else [])
        + [*agreement_lines(rep), *recommendations(rep), *warning_lines(rep)]
        + (["\n".join(needed)] if needed else [])
    )
    # Line by line: the prose's own line breaks stay, a setting's value cannot drive the terminal.
    return "\n\n".join(
        [terminal_table(rep), *("\n".join(visible(line) for line in p.split("\n")) for p in prose)]
    )


# ---------------------------------------------------------------- per query type


def breakdown_frame(
    view: GroupView, rep: SweepReport, *, per_type: bool = False
) -> pd.DataFrame | None:
    """The primary metric per query type, or (``per_type``) each type on its own metric."""
    b = view.type_metrics if per_type else view.breakdown
    if b is None:
        return None
    records = []
    for i, job in enumerate(b.jobs):
        rec = {
            "setting": rep.labels.get(job, f"job {job}"),
            "vs best": rep.decision.verdict(rep.row(job)),
        }
        names = (
            [f"{t}: {m} (n={n})" for t, m, n in zip(b.types, b.metrics, b.counts)]
            if per_type
            else [f"{t} (n={n})" for t, n in zip(b.types, b.counts)]
        )
        rec.update({name: fmt(float(v)) for name, v in zip(names, b.means[i])})
        records.append(rec)
    return pd.DataFrame(records)


TYPE_METRIC_NOTE = (
    "Each query type on the metric that asks what that type needs "
    "(eval.type_metrics): single-fact lookups on mrr (is the one chunk near the "
    "top?), multi-hop on complete (are both hops in the top k: two-hop recall), "
    "graded on ndcg (Järvelin & Kekäläinen 2002: higher grades count more, and "
    "more near the top), the others on recall."
)


def breakdown_markdown(rep: SweepReport) -> str | None:
    parts = []
    for view in rep.groups:
        df = breakdown_frame(view, rep)
        if df is None:
            continue
        d = view.decision
        where = md_text(f" ({d.group.label})") if d.group.label else ""
        parts.append(
            f"# {d.primary.label} by query type{where}\n\nMean per query type; n = queries "
            f"of that type scored at this level. Small n: read as a hint, not a verdict."
            f"\n\n{markdown(df)}\n"
        )
        own = breakdown_frame(view, rep, per_type=True)
        if own is not None:
            parts.append(
                f"## Each type on its own metric{where}\n\n{TYPE_METRIC_NOTE}\n\n{markdown(own)}\n"
            )
    return "\n".join(parts) if parts else None


# ---------------------------------------------------------------- synthetic vs hand-written


def agreement_line(a, labels) -> str:
    """One sentence: how alike the two rankings are, and whether the pick would change."""
    tau = (
        "undefined (one side ranks every setting the same)"
        if math.isnan(a.tau)
        else (f"{a.tau:.2f} [{a.tau_low:.2f}, {a.tau_high:.2f}]")
    )
    pa, pb = (labels.get(p, "none") if p is not None else "none" for p in a.picks)
    same = (
        f"both recommend {pa}"
        if a.same_pick
        else f"{a.names[0]} questions recommend {pa}, {a.names[1]} ones {pb}"
    )
    return (
        f"{a.names[0]} vs {a.names[1]} questions ({a.n_queries[0]} and {a.n_queries[1]}): "
        f"Kendall's τ between their rankings of the {len(a.jobs)} settings = {tau} "
        f"(95% bootstrap interval over queries); {same}."
    )


AGREEMENT_NOTE = (
    "Generated questions tend to reuse the words of the passage they were "
    "written from, so tuning on them alone can over-fit: a low τ, or a different "
    "pick, means the synthetic set does not rank the settings as your real "
    "questions do; trust the real ones."
)


def agreement_frame(view: GroupView, rep: SweepReport) -> pd.DataFrame | None:
    a = view.agreement
    if a is None:
        return None
    return pd.DataFrame(
        [
            {
                "setting": rep.labels[j],
                "vs best": rep.decision.verdict(rep.row(j)),
                f"{a.names[0]} (n={a.n_queries[0]})": fmt(float(x)),
                f"{a.names[1]} (n={a.n_queries[1]})": fmt(float(y)),
            }
            for j, x, y in zip(a.jobs, *a.means)
        ]
    )


def agreement_markdown(rep: SweepReport) -> str | None:
    parts = []
    for view in rep.groups:
        df = agreement_frame(view, rep)
        if df is None:
            continue
        d = view.decision
        where = md_text(f" ({d.group.label})") if d.group.label else ""
        parts.append(
            f"# {d.primary.label} by question source{where}\n\n"
            f"{md_text(agreement_line(view.agreement, rep.labels))}\n\n{AGREEMENT_NOTE}\n\n"
            f"{markdown(df)}\n"
        )
    return "\n".join(parts) if parts else None


# ---------------------------------------------------------------- diagnostics


TWOHOP_NOTE = (
    "Two-hop failures of the queries with two or more evidence spans "
    "(eval.twohop_types), at k: complete = every span in the top k (two-hop "
    "recall@k); ranked_out = every span retrieved, not all within k (a larger k "
    "would fix it); hop1_missed / hop2_missed / both_missed = the first span, a later "
    "span, or both never covered by the retrieved ranking (chunking, embedding or the "
    "query is at fault, not k). Cells: share (count)."
)
ABSTAIN_NOTE = (
    "Should we retrieve at all? The top-1 retrieval score of each "
    "answerable and each unanswerable question: AUROC = how often an answerable one "
    "scores above an unanswerable one (0.5 = chance), with its 95% bootstrap "
    "interval; at the threshold of best balanced accuracy, the share of unanswerable "
    "questions declined and of answerable ones wrongly declined."
)


def twohop_frame(rep: SweepReport, k: int) -> pd.DataFrame | None:
    from sweep.scoring.diagnostics import TWOHOP_CLASSES

    records = []
    for r in rep.ok:
        t = r.diagnostics.twohop_at(k) if r.diagnostics else None
        if t is None or not t.n:
            continue
        rec = {"setting": rep.labels[r.job], "vs best": rep.decision.verdict(r), "n": str(t.n)}
        rec.update({c: f"{t.share(c):.2f} ({t.counts.get(c, 0)})" for c in TWOHOP_CLASSES})
        records.append(rec)
    return pd.DataFrame(records) if records else None


def abstention_frame(rep: SweepReport) -> pd.DataFrame | None:
    records = []
    for r in rep.ok:
        a = r.diagnostics.abstention if r.diagnostics else None
        if a is None:
            continue
        records.append(
            {
                "setting": rep.labels[r.job],
                "vs best": rep.decision.verdict(r),
                "AUROC": f"{a.auroc:.3f} [{a.auroc_low:.2f}, {a.auroc_high:.2f}]",
                "threshold": f"{a.threshold:.3f}",
                "unanswerable declined": f"{a.declined_unanswerable:.0%}",
                "answerable declined": f"{a.declined_answerable:.0%}",
                "balanced accuracy": f"{a.balanced_accuracy:.3f}",
                "n (ans / unans)": f"{a.n_answerable} / {a.n_unanswerable}",
            }
        )
    return pd.DataFrame(records) if records else None


def abstention_caveat(rep: SweepReport) -> str | None:
    from sweep.scoring.diagnostics import FEW_UNANSWERABLE

    counts = [
        r.diagnostics.abstention.n_unanswerable
        for r in rep.ok
        if r.diagnostics and r.diagnostics.abstention
    ]
    if counts and min(counts) < FEW_UNANSWERABLE:
        return (
            f"Only {min(counts)} unanswerable question(s): the AUROC and its interval rest on "
            "very few examples; write more questions whose answer is not in the corpus."
        )
    return None


def twohop_ks(rep: SweepReport) -> list[int]:
    """The ks of the printed table, or the primary's."""
    ks = [
        k for d in rep.decision.decisions for k in (d.group.eval.table_k or (d.group.eval.cost_k,))
    ]
    return list(dict.fromkeys(ks))


def diagnostics_markdown(rep: SweepReport) -> str | None:
    """diagnostics.md: two-hop failure classes and the abstention table, per setting."""
    parts = []
    for k in twohop_ks(rep):
        df = twohop_frame(rep, k)
        if df is not None:
            parts.append(f"# Two-hop failures at k={k}\n\n{TWOHOP_NOTE}\n\n{markdown(df)}\n")
        df = twohop_changes_frame(rep.rows, rep.labels, k)
        if df is not None:
            parts.append(
                f"# Do parents, contexts or late chunking complete two-hop questions? "
                f"(k={k})\n\n{DESIGNS_NOTE}\n\n{markdown(df)}\n"
            )
    df = abstention_frame(rep)
    if df is not None:
        caveat = abstention_caveat(rep)
        parts.append(
            f"# Abstention: can the top score tell an unanswerable question?\n\n"
            f"{ABSTAIN_NOTE}" + (f"\n\n{caveat}" if caveat else "") + f"\n\n{markdown(df)}\n"
        )
    return "\n".join(parts) if parts else None


# ---------------------------------------------------------------- worst queries


def _clip(text: str, limit: int) -> str:
    """One line of at most ``limit`` characters (escaped where it is written: a table cell
    by :func:`markdown`, prose by :func:`md_text`)."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def worst_queries_markdown(
    rows: Sequence[QueryRow],
    *,
    metric: str,
    setting: str,
    details: int = WORST_DETAILS,
    text_limit: int = 700,
) -> str:
    """The worst-first table, then query text, gold evidence and top chunks of the worst ones."""
    table = pd.DataFrame(
        [
            {
                "#": str(i),
                "query_id": r.query_id,
                "type": (r.trace.type or "") if r.trace else "",
                "value": f"{r.value:.3f}",
                "all settings": f"{r.across_mean:.3f} [{r.across_min:.2f}, {r.across_max:.2f}]",
                "query": _clip(r.trace.query, 120) if r.trace else "",
            }
            for i, r in enumerate(rows, 1)
        ]
    )
    twohop_k = _twohop_k(rows, metric)
    if twohop_k is not None:
        table.insert(
            4,
            f"two-hop@{twohop_k}",
            [(r.trace.twohop.get(twohop_k, "") if r.trace else "") for r in rows],
        )
    out = [
        f"# Worst queries: {metric}, {md_text(setting)}",
        "",
        f"Queries sorted by {metric} of {md_text(setting)}, lowest first; `all settings` is the mean "
        "[min, max] over every setting that ran, so a query that is low everywhere is a hard "
        "question (or a bad judgment), one that is low only here is this setting's fault.",
        "",
        markdown(table) if len(table) else "(no queries)",
    ]
    for i, r in enumerate(rows[:details], 1):
        t = r.trace
        out += [
            "",
            f"## {i}. {md_text(r.query_id)} — {metric} = {r.value:.3f}"
            + (f" (type: {md_text(t.type)})" if t and t.type else "")
            + (
                f", two-hop@{twohop_k}: {md_text(t.twohop[twohop_k])}"
                if t and twohop_k is not None and twohop_k in t.twohop
                else ""
            ),
            "",
        ]
        if t is None:
            out.append("(no saved hits for this query)")
            continue
        out += [
            f"**Query:** {md_text(_clip(t.query, 10 * text_limit))}",
            "",
            "**Gold evidence:**",
            "",
        ]
        for g in t.gold:
            page = f", p. {g.pages}" if g.pages else ""
            where = (
                f"{g.doc_id} [{g.start}:{g.end}]{page}"
                if g.start is not None
                else f"{g.doc_id} (whole document)"
            )
            out.append(
                f"- {md_text(where)}, grade {g.grade}"
                + (f": “{md_text(_clip(g.text, text_limit))}”" if g.text else "")
            )
        out += ["", "**Retrieved:**", ""]
        for h in t.hits:
            shares = [h.gold_share(g) for g in t.gold]
            mark = (
                "holds "
                + ", ".join(f"{s:.0%} of gold {j + 1}" for j, s in enumerate(shares) if s > 0)
                if any(shares)
                else "no gold"
            )
            page = f", p. {h.pages}" if h.pages else ""
            line = f"{h.rank}. {md_text(f'{h.doc_id} [{h.start}:{h.end}]{page}')}, {h.n_tokens} tokens, {mark}"
            if h.text is not None:
                line += f"  \n   > {md_text(_clip(h.text, text_limit))}"
            out.append(line)
    return "\n".join(out) + "\n"


def _twohop_k(rows: Sequence[QueryRow], metric: str) -> int | None:
    """The k at which worst queries show their two-hop class: the metric's k, else the largest."""
    ks = sorted({k for r in rows if r.trace for k in r.trace.twohop})
    if not ks:
        return None
    tail = metric.rsplit("@", 1)[-1]
    return int(tail) if tail.isdigit() and int(tail) in ks else ks[-1]


def worst_markdown(rep: SweepReport) -> str | None:
    parts = [
        worst_queries_markdown(v.worst, metric=v.decision.primary.label, setting=v.worst_setting)
        for v in rep.groups
        if v.worst
    ]
    return "\n".join(parts) if parts else None
