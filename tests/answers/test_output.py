"""``sweep.answers.output``: the ``answers/`` folder: answers.jsonl, answers.csv, answers.md and
answers.html, written from real traces and summaries and read back as files."""

from __future__ import annotations

import csv

from sweep.answers.diagnosis import DIAGNOSES
from sweep.answers.frames import settings_frame
from sweep.answers.output import answers_markdown, write_outputs
from sweep.answers.page import answers_page
from sweep.answers.records import AnswerTrace, read_answers
from sweep.answers.replies import JudgeVerdict
from sweep.answers.summary import pair_tests, summarize_answers
from sweep.store.traces import Evidence, Retrieved

GOLD = (Evidence("a.md", 1, 0, 12, "gold evidence"),)
HIT = Retrieved(1, "a.md#0", "a.md", 0, 30, 6, 0.9, "gold evidence and more text")
STATS = {
    "sent": 40,
    "cached": 8,
    "failed": 1,
    "retries": 3,
    "prompt_tokens": 12_345,
    "completion_tokens": 678,
}


def _traces(labels=("size=64", "size=128")) -> list[AnswerTrace]:
    out = []
    for job, label in enumerate(labels):
        for i in range(10):
            good = job == 0 or i < 5
            out.append(
                AnswerTrace(
                    job,
                    label,
                    f"q{i}",
                    f"question {i}?",
                    "fact",
                    None,
                    GOLD,
                    (HIT,),
                    "complete",
                    f"answer {i}",
                    False,
                    {
                        "faithful": JudgeVerdict(good, "r", "none" if good else "hallucination"),
                        "relevant": JudgeVerdict(True, "r"),
                    },
                    {},
                    "ok" if good else "unfaithful",
                    "1",
                    1,
                    "m",
                )
            )
    return out


def _write(tmp_path, traces, tests=None):
    summaries = summarize_answers(traces, n_boot=100)
    tests = pair_tests(traces, n_perm=500) if tests is None else tests
    labels = {t.job: t.setting for t in traces}
    out = tmp_path / "sweep" / "answers"
    return (
        write_outputs(out, traces, summaries, tests, labels, stats=STATS),
        summaries,
        tests,
        labels,
    )


def test_the_four_files_and_what_they_hold(tmp_path):
    traces = _traces()
    paths, summaries, tests, labels = _write(tmp_path, traces)
    out = tmp_path / "sweep" / "answers"
    assert paths == [
        out / n for n in ("answers.jsonl", "answers.csv", "answers.md", "answers.html")
    ]
    assert all(p.is_file() for p in paths)
    assert read_answers(out / "answers.jsonl") == traces
    with open(out / "answers.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == list(settings_frame(summaries).columns)
    assert [(r["job"], r["setting"]) for r in rows] == [("0", "size=64"), ("1", "size=128")]
    assert float(rows[0]["faithful"]) == 1.0 and float(rows[1]["faithful"]) == 0.5
    assert int(rows[1]["diagnosis.unfaithful"]) == 5 and int(rows[1]["faithful.n"]) == 10
    assert (out / "answers.html").read_text(encoding="utf-8") == answers_page(
        traces, summaries, tests, labels, stats=STATS
    )
    assert (out / "answers.md").read_text() == answers_markdown(
        summaries, tests, labels, stats=STATS
    )


def test_a_setting_label_that_looks_like_a_formula_is_neutralised_in_the_csv(tmp_path):
    _write(tmp_path, _traces(labels=("=cmd|' /C calc'!A0", "+size")))
    text = (tmp_path / "sweep" / "answers" / "answers.csv").read_text()
    assert "'=cmd|" in text and "'+size" in text
    assert "\n=cmd" not in text and ",=cmd" not in text


def test_the_markdown_says_how_to_read_it_and_what_it_cost(tmp_path):
    traces = _traces()
    _, summaries, tests, labels = _write(tmp_path, traces)
    md = answers_markdown(summaries, tests, labels, stats=STATS)
    assert md.startswith("# Do the answers hold up?\n\nEach setting's top 1 chunks handed to m ")
    assert "## Diagnosis: where a failure comes from" in md
    for code, text in DIAGNOSES.items():
        assert f"- `{code}`: {text}" in md
    assert "## Paired tests between the settings" in md
    assert md.rstrip().endswith(
        "requests: 40 sent, 8 from the cache, 1 failed after 3 retries; "
        "tokens: 12,345 prompt + 678 completion sent now."
    )
    table = [line for line in md.splitlines() if line.startswith("| ")]
    assert any("size=64" in line and "1.00 [1.00, 1.00] (n=10)" in line for line in table)
    # The paired test of the faithful rate: size=64 minus size=128 over the ten queries.
    assert any("faithful" in line and "size=64" in line and "+0.500" in line for line in table)


def test_without_tests_there_is_no_paired_tests_section(tmp_path):
    traces = _traces(labels=("size=64",))
    summaries = summarize_answers(traces, n_boot=50)
    md = answers_markdown(summaries, [], {0: "size=64"}, stats=STATS)
    assert "Paired tests" not in md and "## Diagnosis" in md
