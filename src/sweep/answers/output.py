"""``answers/``: answers.jsonl (every trace), answers.csv (a row per setting), answers.md."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from sweep.answers.diagnosis import DIAGNOSES
from sweep.answers.frames import costs_line, diagnosis_frame, settings_frame, tests_frame
from sweep.answers.page import answers_page
from sweep.answers.records import AnswerTrace, write_answers
from sweep.answers.summary import PairTest, SettingSummary, setup_text
from sweep.core import csvcells
from sweep.core.files import folder_inside, write_text_atomic
from sweep.reporting.tables import markdown

__all__ = ["answers_markdown", "write_outputs"]


def answers_markdown(
    summaries: Sequence[SettingSummary],
    tests: Sequence[PairTest],
    labels: Mapping[int, str],
    *,
    stats: Mapping[str, int],
) -> str:
    parts = [
        f"# Do the answers hold up?\n\n{setup_text(summaries)} "
        "with a fixed RAG prompt; every answer judged by binary LLM judges (faithful to the "
        "context, relevant to the question, and correct when the query has a reference "
        "answer). Rates: mean [95% bootstrap interval over queries] (n = queries the rate "
        "is defined for). Check the judges against your own labels before trusting the "
        "rates (README: judge.export, judge.agreement).",
        markdown(settings_frame(summaries, display=True)),
        "## Diagnosis: where a failure comes from\n\n"
        + "\n".join(f"- `{d}`: {text}" for d, text in DIAGNOSES.items()),
        markdown(diagnosis_frame(summaries)),
    ]
    df = tests_frame(tests, labels)
    if df is not None:
        parts += [
            "## Paired tests between the settings\n\nPer rate, every pair of settings over "
            "the queries both have a value for (randomization test), p Holm-adjusted over "
            "the pairs; settings answered with another model, k or prompt are not tested "
            "against each other.",
            markdown(df),
        ]
    parts.append(costs_line(stats) + ".")
    return "\n\n".join(parts) + "\n"


def write_outputs(
    out: Path,
    traces: Sequence[AnswerTrace],
    summaries: Sequence[SettingSummary],
    tests: Sequence[PairTest],
    labels: Mapping[int, str],
    *,
    stats: Mapping[str, int],
) -> list[Path]:
    out.parent.mkdir(parents=True, exist_ok=True)
    # answers/ of a sweep folder: a folder of its own, never a link's target elsewhere
    folder_inside(out, out.parent)
    write_answers(out / "answers.jsonl", traces)
    csvcells.write_csv(out / "answers.csv", settings_frame(summaries))
    write_text_atomic(out / "answers.md", answers_markdown(summaries, tests, labels, stats=stats))
    write_text_atomic(
        out / "answers.html", answers_page(traces, summaries, tests, labels, stats=stats)
    )
    return [out / n for n in ("answers.jsonl", "answers.csv", "answers.md", "answers.html")]
