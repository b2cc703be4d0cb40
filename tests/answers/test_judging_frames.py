"""``sweep.answers.frames``: the answers as tables, shared by answers.md and answers.html.
(Named test_judging_frames: tests/reporting/test_frames.py has the plain name.)"""

from __future__ import annotations

import math

from sweep.answers.diagnosis import DIAGNOSES
from sweep.answers.frames import RATE_NAMES, costs_line, diagnosis_frame, settings_frame
from sweep.answers.frames import tests_frame as pair_tests_frame  # not collected as a test
from sweep.answers.summary import RATES, PairTest, Rate, SettingSummary


def _summary(job=0, **kw) -> SettingSummary:
    fields = dict(
        job=job,
        setting=f"size={64 * (job + 1)}",
        n_queries=12,
        rates={
            "faithful": Rate(0.75, 0.5, 0.9166, 8),
            "relevant": Rate(1.0, 1.0, 1.0, 8),
            "correct": None,
            "declined": Rate(0.0, 0.0, 0.0, 4),
        },
        diagnoses={d: i for i, d in enumerate(DIAGNOSES)},
        failures=3,
        k=5,
        model="gpt-x",
    )
    fields.update(kw)
    return SettingSummary(**fields)


def test_the_raw_frame_has_each_rate_its_interval_and_n_then_the_diagnoses():
    df = settings_frame([_summary(0), _summary(1, model="")])
    cols = list(df.columns)
    assert cols[:5] == ["job", "setting", "k", "model", "queries"]
    for rate in RATES:
        i = cols.index(rate)
        assert cols[i : i + 4] == [rate, f"{rate}.lo", f"{rate}.hi", f"{rate}.n"]
    assert cols[-1] == "failures" and [c for c in cols if c.startswith("diagnosis.")] == [
        f"diagnosis.{d}" for d in DIAGNOSES
    ]
    row = df.iloc[0]
    assert (row["faithful"], row["faithful.lo"], row["faithful.hi"], row["faithful.n"]) == (
        0.75,
        0.5,
        0.9166,
        8,
    )
    assert row["correct.n"] == 0 and (row["correct"] is None or math.isnan(row["correct"]))
    assert (
        row["diagnosis.ok"] == 0 and row[f"diagnosis.{list(DIAGNOSES)[-1]}"] == len(DIAGNOSES) - 1
    )
    assert row["failures"] == 3 and list(df["model"]) == ["gpt-x", "–"]


def test_the_display_frame_has_one_readable_cell_per_rate_and_no_counts():
    df = settings_frame([_summary()], display=True)
    assert list(df.columns) == ["job", "setting", "k", "model", "queries", *RATE_NAMES.values()]
    row = df.iloc[0]
    assert row["faithful"] == "0.75 [0.50, 0.92] (n=8)"
    assert row["correct"] == "–" and row["unanswerable declined"] == "0.00 [0.00, 0.00] (n=4)"


def test_the_diagnosis_frame_is_text_per_code():
    df = diagnosis_frame([_summary(0), _summary(1)])
    assert list(df.columns) == ["setting", *DIAGNOSES]
    assert list(df["setting"]) == ["size=64", "size=128"]
    assert df.iloc[1]["ok"] == "0" and df.iloc[0][list(DIAGNOSES)[2]] == "2"


def test_the_tests_frame_names_settings_by_label_and_rates_by_their_names():
    assert pair_tests_frame([], {}) is None
    tests = [
        PairTest("declined", 0, 3, 7, 0.25, 0.01, 0.03),
        PairTest("faithful", 3, 0, 20, -0.0004, 0.9, 1.0),
    ]
    df = pair_tests_frame(tests, {0: "size=64", 3: "size=256"})
    assert list(df.columns) == ["rate", "setting A", "setting B", "queries", "A - B", "p (Holm)"]
    assert df.iloc[0].tolist() == [
        "unanswerable declined",
        "size=64",
        "size=256",
        "7",
        "+0.250",
        "0.030",
    ]
    assert df.iloc[1].tolist() == ["faithful", "size=256", "size=64", "20", "-0.000", "1.000"]


def test_costs_line():
    line = costs_line(
        {
            "sent": 12,
            "cached": 3,
            "failed": 1,
            "retries": 2,
            "prompt_tokens": 1234567,
            "completion_tokens": 890,
        }
    )
    assert line == (
        "requests: 12 sent, 3 from the cache, 1 failed after 2 retries; tokens: "
        "1,234,567 prompt + 890 completion sent now"
    )
