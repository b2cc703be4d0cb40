"""``answers/``: answers.jsonl (every trace), answers.csv (a row per setting), answers.md."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

import pandas as pd

from sweep.core import csvcells
from sweep.core.files import write_text_atomic
from sweep.judging.diagnosis import DIAGNOSES
from sweep.judging.records import AnswerTrace, write_answers
from sweep.judging.summary import RATES, PairTest, SettingSummary, setup_text
from sweep.reporting.tables import markdown

__all__ = ["RATE_NAMES", "settings_frame", "tests_frame", "write_outputs"]

RATE_NAMES = {"faithful": "faithful", "relevant": "relevant", "correct": "correct",
              "declined": "unanswerable declined"}


def settings_frame(summaries: Sequence[SettingSummary], *, display: bool = False) -> pd.DataFrame:
    """One row per setting: each rate with its interval and n, then the diagnosis counts."""
    records = []
    for s in summaries:
        rec: dict[str, Any] = {"job": s.job, "setting": s.setting, "k": s.k,
                               "model": s.model or "–", "queries": s.n_queries}
        for rate in RATES:
            r = s.rates.get(rate)
            if display:
                rec[RATE_NAMES[rate]] = ("–" if r is None else
                                         f"{r.mean:.2f} [{r.low:.2f}, {r.high:.2f}] (n={r.n})")
            else:
                rec[rate] = None if r is None else r.mean
                rec[f"{rate}.lo"] = None if r is None else r.low
                rec[f"{rate}.hi"] = None if r is None else r.high
                rec[f"{rate}.n"] = 0 if r is None else r.n
        if not display:
            rec.update({f"diagnosis.{d}": n for d, n in s.diagnoses.items()})
            rec["failures"] = s.failures
        records.append(rec)
    return pd.DataFrame(records)


def diagnosis_frame(summaries: Sequence[SettingSummary]) -> pd.DataFrame:
    return pd.DataFrame([{"setting": s.setting, **{d: str(n) for d, n in s.diagnoses.items()}}
                         for s in summaries])


def tests_frame(tests: Sequence[PairTest], labels: Mapping[int, str]) -> pd.DataFrame | None:
    if not tests:
        return None
    return pd.DataFrame([{"rate": RATE_NAMES[t.rate], "setting A": labels[t.a],
                          "setting B": labels[t.b], "queries": str(t.n),
                          "A - B": f"{t.diff:+.3f}", "p (Holm)": f"{t.p_holm:.3f}"}
                         for t in tests])


def costs_line(stats: Mapping[str, int]) -> str:
    return (f"requests: {stats['sent']} sent, {stats['cached']} from the cache, {stats['failed']} "
            f"failed after {stats['retries']} retries; tokens: {stats['prompt_tokens']:,} prompt + "
            f"{stats['completion_tokens']:,} completion sent now")


def answers_markdown(summaries: Sequence[SettingSummary], tests: Sequence[PairTest],
                     labels: Mapping[int, str], *, stats: Mapping[str, int]) -> str:
    parts = [f"# Do the answers hold up?\n\n{setup_text(summaries)} "
             "with a fixed RAG prompt; every answer judged by binary LLM judges (faithful to the "
             "context, relevant to the question, and correct when the query has a reference "
             "answer). Rates: mean [95% bootstrap interval over queries] (n = queries the rate "
             "is defined for). Check the judges against your own labels before trusting the "
             "rates (README: judge.export, judge.agreement).",
             markdown(settings_frame(summaries, display=True)),
             "## Diagnosis: where a failure comes from\n\n" + "\n".join(f"- `{d}`: {text}"
                                                        for d, text in DIAGNOSES.items()),
             markdown(diagnosis_frame(summaries))]
    df = tests_frame(tests, labels)
    if df is not None:
        parts += ["## Paired tests between the settings\n\nPer rate, every pair of settings over "
                  "the queries both have a value for (randomization test), p Holm-adjusted over "
                  "the pairs; settings answered with another model, k or prompt are not tested "
                  "against each other.", markdown(df)]
    parts.append(costs_line(stats) + ".")
    return "\n\n".join(parts) + "\n"


def write_outputs(out: Path, traces: Sequence[AnswerTrace], summaries: Sequence[SettingSummary],
                  tests: Sequence[PairTest], labels: Mapping[int, str], *,
                  stats: Mapping[str, int]) -> list[Path]:
    from sweep.judging.page import answers_page

    out.mkdir(parents=True, exist_ok=True)
    write_answers(out / "answers.jsonl", traces)
    csvcells.write_csv(out / "answers.csv", settings_frame(summaries))
    write_text_atomic(out / "answers.md", answers_markdown(summaries, tests, labels, stats=stats))
    write_text_atomic(out / "answers.html", answers_page(traces, summaries, tests, labels,
                                                         stats=stats))
    return [out / n for n in ("answers.jsonl", "answers.csv", "answers.md", "answers.html")]
