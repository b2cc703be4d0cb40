"""``answers/answers.html``: one self-contained page for error analysis of the answers.

The per-setting rates, then every query under every setting as a row that
opens to its full trace (question, gold evidence, the chunks the model read
with the gold text marked, the answer, each verdict and its reason, the
diagnosis). Filters by setting, diagnosis, verdict and query type run in the
page (a few lines of inline JavaScript; nothing is fetched).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

from sweep.answers.diagnosis import DIAGNOSES
from sweep.answers.frames import costs_line, diagnosis_frame, settings_frame, tests_frame
from sweep.answers.records import AnswerTrace
from sweep.answers.summary import PairTest, SettingSummary, setup_text
from sweep.reporting import htmlkit
from sweep.reporting.htmlkit import Section, Table

__all__ = ["answers_page"]

_SCRIPT = """<script>
function sweepFilter(){
  const want = {};
  document.querySelectorAll('select[data-key]').forEach(s => { want[s.dataset.key] = s.value; });
  let shown = 0;
  document.querySelectorAll('details.q').forEach(d => {
    const ok = Object.entries(want).every(([k, v]) => !v || d.dataset[k] === v);
    d.style.display = ok ? '' : 'none';
    if (ok) shown++;
  });
  document.getElementById('shown').textContent = shown;
}
</script>"""

_CSS = """<style>
details.q{border:1px solid #e2e2e2;border-radius:4px;margin:.3rem 0;padding:.2rem .6rem}
details.q summary{cursor:pointer} details.q[open]{background:#fcfcfc}
.tag{display:inline-block;border-radius:3px;padding:0 .35rem;margin-right:.3rem;font-size:.8rem;
 background:#eee} .tag.pass{background:#e3f4e1} .tag.fail{background:#fbeaea}
.filters select{margin-right:.8rem}
</style>"""


def _tag(name: str, value: bool | None, reason: str = "") -> str:
    if value is None:
        return f'<span class="tag">{escape(name)}: –</span>'
    cls = "pass" if value else "fail"
    title = f' title="{escape(reason)}"' if reason else ""
    return f'<span class="tag {cls}"{title}>{escape(name)}: {"yes" if value else "no"}</span>'


def _verdict(t: AnswerTrace, judge: str) -> str:
    v = t.verdicts.get(judge)
    if v is None:
        return "–"
    return "yes" if v.passed else "no"


def _trace_html(t: AnswerTrace) -> str:
    gold = (
        "".join(
            f"<li>{escape(g.doc_id)} "
            + (f"[{g.start}:{g.end}]" if g.start is not None else "(whole document)")
            + (f'<div class="chunk"><mark>{escape(g.text)}</mark></div>' if g.text else "")
            + "</li>"
            for g in t.gold
        )
        or "<li>(none: the question is unanswerable)</li>"
    )
    chunks = []
    for h in t.context:
        spans = [p for g in t.gold if g.start is not None and (p := h.overlaps(g)) is not None]
        holds = [
            f"{h.gold_share(g):.0%} of gold {j + 1}"
            for j, g in enumerate(t.gold)
            if h.gold_share(g) > 0
        ]
        tag = (
            f'<span class="rel">holds {escape(", ".join(holds))}</span>'
            if holds
            else '<span class="irr">no gold</span>'
        )
        chunks.append(
            f"<li>{h.rank}. {escape(h.doc_id)} [{h.start}:{h.end}], {tag}"
            f'<div class="chunk">{htmlkit.marked(h.text or "", spans)}</div></li>'
        )
    if t.declined is None:
        answer = f"<p><i>no answer ({escape(t.failures.get('answer', ''))})</i></p>"
    elif t.declined:
        answer = "<p><i>declined</i></p>"
    else:
        answer = f'<div class="chunk">{escape(t.answer or "")}</div>'
    verdicts = "".join(
        f"<li><b>{escape(j)}</b>: {'yes' if v.passed else 'no'}"
        + (f" ({escape(v.category)})" if v.category and v.category != "none" else "")
        + f" — {escape(v.reason)}</li>"
        for j, v in t.verdicts.items()
    )
    verdicts += "".join(
        f"<li><b>{escape(j)}</b>: reply unreadable ({escape(why)})</li>"
        for j, why in t.failures.items()
        if j != "answer"
    )
    reference = f"<p><b>Reference answer:</b> {escape(t.reference)}</p>" if t.reference else ""
    return (
        f"<p><b>Question:</b> {escape(t.query)}</p>{reference}"
        f"<p><b>Gold evidence</b></p><ul>{gold}</ul>"
        f"<p><b>Context handed to the model</b> (context relevance: "
        f"{escape(t.context_relevance)})</p><ol style='list-style:none;padding-left:0'>"
        f"{''.join(chunks)}</ol><p><b>Answer</b></p>{answer}"
        f"<p><b>Verdicts</b></p><ul>{verdicts or '<li>(none asked)</li>'}</ul>"
        f"<p><b>Diagnosis:</b> {escape(t.diagnosis)}: {escape(DIAGNOSES.get(t.diagnosis, ''))}</p>"
    )


def _select(key: str, label: str, values: Sequence[str]) -> str:
    options = "".join(f'<option value="{escape(v)}">{escape(v)}</option>' for v in values)
    return (
        f'<label>{escape(label)} <select data-key="{key}" onchange="sweepFilter()">'
        f'<option value="">all</option>{options}</select></label>'
    )


def answers_page(
    traces: Sequence[AnswerTrace],
    summaries: Sequence[SettingSummary],
    tests: Sequence[PairTest],
    labels: Mapping[int, str],
    *,
    stats: Mapping[str, int],
) -> str:
    sections = [
        Section(
            "Per setting",
            htmlkit.table_html(Table.of(settings_frame(summaries, display=True)))
            + htmlkit.paragraphs(
                [
                    f"{setup_text(summaries)}; binary LLM judges. "
                    "Check the judges against your own labels before trusting these rates.",
                    costs_line(stats) + ".",
                ]
            ),
        )
    ]
    sections.append(
        Section(
            "Diagnosis: where a failure comes from",
            htmlkit.table_html(Table.of(diagnosis_frame(summaries)))
            + htmlkit.bullets([f"{d}: {text}" for d, text in DIAGNOSES.items()]),
        )
    )
    df = tests_frame(tests, labels)
    if df is not None:
        sections.append(Section("Paired tests", htmlkit.table_html(Table.of(df))))
    settings = sorted({t.setting for t in traces})
    types = sorted({t.type or "(no type)" for t in traces})
    diagnoses = [d for d in DIAGNOSES if any(t.diagnosis == d for t in traces)]
    filters = (
        '<p class="filters">'
        + _select("setting", "setting", settings)
        + _select("diagnosis", "diagnosis", diagnoses)
        + _select("faithful", "faithful", ["yes", "no", "–"])
        + _select("relevant", "relevant", ["yes", "no", "–"])
        + _select("correct", "correct", ["yes", "no", "–"])
        + _select("type", "type", types)
        + f' <span class="note"><span id="shown">{len(traces)}</span> of {len(traces)} shown'
        "</span></p>"
    )
    rows = []
    for t in traces:
        data = {
            "setting": t.setting,
            "diagnosis": t.diagnosis,
            "type": t.type or "(no type)",
            **{j: _verdict(t, j) for j in ("faithful", "relevant", "correct")},
        }
        attrs = " ".join(f'data-{k}="{escape(v)}"' for k, v in data.items())
        head = (
            f"<b>{escape(t.query_id)}</b> · {escape(t.setting)} · {escape(t.type or '')} · "
            f"{escape(t.query[:140])} "
            + _tag("context", t.context_relevance == "complete" if t.answerable else None)
            + ('<span class="tag">declined</span>' if t.declined else "")
            + "".join(
                _tag(j, t.passed(j), t.verdicts[j].reason if j in t.verdicts else "")
                for j in ("faithful", "relevant", "correct")
                if j in t.verdicts
            )
            + f'<span class="tag">{escape(t.diagnosis)}</span>'
        )
        rows.append(
            f'<details class="q" {attrs}><summary>{head}</summary>{_trace_html(t)}</details>'
        )
    sections.append(Section("Every query", filters + "".join(rows)))
    page = htmlkit.page(
        "sweep: do the answers hold up?",
        sections,
        subtitle=f"{len(traces)} answers, {len(settings)} setting(s), model "
        f"{', '.join(sorted({s.model or '–' for s in summaries}))}",
    )
    return page.replace("</head>", _CSS + _SCRIPT + "</head>", 1)
