"""``sweep.answers.humancheck``: a sample of verdicts for a person to label (a real CSV file),
the labels read back, and Cohen's kappa between the person and each judge."""

from __future__ import annotations

import csv
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sweep.answers.humancheck import (
    COLUMNS,
    JudgeAgreement,
    LabelError,
    agreement_text,
    cohen_kappa,
    export_sample,
    judge_agreement,
    read_labels,
)
from sweep.answers.records import AnswerTrace
from sweep.answers.replies import JudgeVerdict
from sweep.store.traces import Evidence, Retrieved

GOLD = (Evidence("a.md", 1, 0, 20, "the gold sentence."),)
CONTEXT = (
    Retrieved(1, "a.md#0", "a.md", 0, 30, 6, 0.9, "the gold sentence. and more"),
    Retrieved(2, "b.md#3", "b.md", 40, 70, 6, 0.5, "another chunk"),
)


def _t(
    job: int,
    qid: str,
    verdicts: dict[str, JudgeVerdict],
    *,
    answer="an answer",
    reference="the reference",
) -> AnswerTrace:
    return AnswerTrace(
        job,
        f"setting {job}",
        qid,
        f"question {qid}?",
        "fact",
        reference,
        GOLD,
        CONTEXT,
        "complete",
        answer,
        False,
        verdicts,
        {},
        "ok",
        "1",
        2,
        "m",
    )


def _traces() -> list[AnswerTrace]:
    out = []
    for job in (0, 1):
        for i in range(5):
            out.append(
                _t(
                    job,
                    f"q{i}",
                    {
                        "faithful": JudgeVerdict(
                            i % 2 == 0, "f", "none" if i % 2 == 0 else "omission"
                        ),
                        "relevant": JudgeVerdict(i != 3, "r"),
                        "correct": JudgeVerdict(i < 2, "c"),
                    },
                )
            )
    # A verdict made up for a declined answer is not a judge's: never sampled.
    out.append(
        _t(
            2,
            "d1",
            {"correct": JudgeVerdict(False, "declined although the question has an answer")},
        )
    )
    return out


def _rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _write(path, rows):
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


# --------------------------------------------------------------------------- export


def test_the_sample_shows_what_each_judge_saw_but_not_its_verdict(tmp_path):
    path = tmp_path / "judge_sample.csv"
    assert export_sample(path, _traces(), 12, seed=0) == 12
    rows = _rows(path)
    assert tuple(rows[0]) == COLUMNS and [r["sample"] for r in rows] == [
        str(i) for i in range(1, 13)
    ]
    assert all(r["label"] == "" for r in rows)
    assert not any(r["job"] == "2" for r in rows)
    assert len({(r["judge"], r["job"], r["query_id"]) for r in rows}) == 12  # without repeats
    for r in rows:
        assert r["question"] == f"question {r['query_id']}?" and r["answer"] == "an answer"
        # The context only for faithfulness, the reference only for correctness.
        assert (r["context"] == "[1] the gold sentence. and more\n\n[2] another chunk") == (
            r["judge"] == "faithful"
        )
        assert (r["reference"] == "the reference") == (r["judge"] == "correct")
    text = path.read_text()
    assert "passed" not in text and "omission" not in text


def test_the_sample_is_seeded_and_capped_by_what_there_is(tmp_path):
    a, b, c = tmp_path / "a.csv", tmp_path / "b.csv", tmp_path / "c.csv"
    export_sample(a, _traces(), 5, seed=7)
    export_sample(b, _traces(), 5, seed=7)
    assert a.read_text() == b.read_text()
    assert export_sample(c, _traces(), 1000, seed=7) == 30  # 2 jobs x 5 queries x 3 judges
    assert export_sample(c, _traces(), 0) == 0 and len(_rows(c)) == 0
    assert c.read_text().splitlines() == [",".join(COLUMNS)]


def test_a_formula_in_an_answer_does_not_run_and_ids_survive_the_round_trip(tmp_path):
    traces = [
        _t(0, "=q1", {"relevant": JudgeVerdict(True, "r")}, answer='=HYPERLINK("http://x","y")')
    ]
    path = tmp_path / "s.csv"
    export_sample(path, traces, 1)
    assert "'=HYPERLINK" in path.read_text()
    rows = _rows(path)
    rows[0]["label"] = "yes"
    _write(path, rows)
    assert read_labels(path) == [("relevant", 0, "=q1", True)]
    (got,) = judge_agreement(path, traces)
    assert (got.judge, got.n, got.confusion[(True, True)]) == ("relevant", 1, 1)


# --------------------------------------------------------------------------- labels


@pytest.mark.parametrize(
    "label,want",
    [
        ("yes", True),
        ("Y", True),
        (" TRUE ", True),
        ("1", True),
        ("pass", True),
        ("Passed", True),
        ("no", False),
        ("n", False),
        ("false", False),
        ("0", False),
        ("FAIL", False),
        ("failed", False),
    ],
)
def test_labels_people_write(tmp_path, label, want):
    path = tmp_path / "l.csv"
    _write(path, [{"judge": "faithful", "job": "3", "query_id": "q1", "label": label}])
    assert read_labels(path) == [("faithful", 3, "q1", want)]


def test_blank_labels_are_skipped(tmp_path):
    path = tmp_path / "l.csv"
    _write(
        path,
        [
            {"judge": "faithful", "job": "0", "query_id": "q1", "label": ""},
            {"judge": "faithful", "job": "0", "query_id": "q2", "label": "  "},
            {"judge": "relevant", "job": "0", "query_id": "q3", "label": "no"},
        ],
    )
    assert read_labels(path) == [("relevant", 0, "q3", False)]


def test_unreadable_label_files_name_the_file_and_line(tmp_path):
    path = tmp_path / "l.csv"
    with pytest.raises(LabelError, match=r"l\.csv: cannot read"):
        read_labels(path)
    path.write_text("judge,job,label\nfaithful,0,yes\n")
    with pytest.raises(
        LabelError,
        match=r"l\.csv:1: expected the columns of judge_sample\.csv"
        r" \(at least job, judge, label, query_id\); no "
        r"query_id column",
    ):
        read_labels(path)
    path.write_text("OPENAI_API_KEY=sk-proj-secret0123\n")  # any file named as the labels
    with pytest.raises(LabelError) as e:
        read_labels(path)
    assert "sk-proj" not in str(e.value) and "no job, judge, label, query_id column" in str(e.value)
    path.write_text("")
    with pytest.raises(LabelError, match=":1: expected the columns"):
        read_labels(path)
    _write(
        path,
        [
            {"judge": "faithful", "job": "0", "query_id": "q1", "label": "yes"},
            {"judge": "faithful", "job": "0", "query_id": "q2", "label": "perhaps"},
        ],
    )
    with pytest.raises(LabelError, match=r"l\.csv:3: label 'perhaps' is not yes or no"):
        read_labels(path)
    _write(path, [{"judge": "faithful", "job": "zero", "query_id": "q1", "label": "yes"}])
    with pytest.raises(LabelError, match=r"l\.csv:2: job 'zero' is not a number"):
        read_labels(path)


# --------------------------------------------------------------------------- agreement


def test_agreement_per_judge_with_its_confusion_matrix(tmp_path):
    traces = _traces()
    path = tmp_path / "s.csv"
    export_sample(path, traces, 30)
    rows = _rows(path)
    judge = {(t.job, t.query_id, j): v.passed for t in traces for j, v in t.verdicts.items()}
    flipped = 0
    for r in rows:  # the person agrees with the judge except on two relevance verdicts
        said = judge[(int(r["job"]), r["query_id"], r["judge"])]
        if r["judge"] == "relevant" and flipped < 2:
            said, flipped = not said, flipped + 1
        r["label"] = "yes" if said else "no"
    _write(path, rows)
    got = {a.judge: a for a in judge_agreement(path, traces)}
    assert list(got) == ["correct", "faithful", "relevant"]  # sorted
    assert got["faithful"].kappa == 1.0 and got["faithful"].raw_agreement == 1.0
    rel = got["relevant"]
    assert rel.n == 10 and sum(rel.confusion.values()) == 10
    assert rel.confusion[(True, False)] + rel.confusion[(False, True)] == 2
    assert rel.raw_agreement == pytest.approx(0.8) and rel.kappa < 1.0
    pairs = (
        [(True, True)] * rel.confusion[(True, True)]
        + [(True, False)] * rel.confusion[(True, False)]
        + [(False, True)] * rel.confusion[(False, True)]
        + [(False, False)] * rel.confusion[(False, False)]
    )
    assert rel.kappa == pytest.approx(cohen_kappa(pairs))


def test_labels_of_another_run_and_no_labels_at_all_are_errors(tmp_path):
    path = tmp_path / "l.csv"
    _write(path, [{"judge": "faithful", "job": "9", "query_id": "q1", "label": "yes"}])
    with pytest.raises(LabelError, match="no faithful verdict for query 'q1' of job 9"):
        judge_agreement(path, _traces())
    _write(path, [{"judge": "faithful", "job": "0", "query_id": "q1", "label": ""}])
    with pytest.raises(LabelError, match="no labelled line"):
        judge_agreement(path, _traces())


def test_agreement_text():
    c = {(True, True): 3, (True, False): 1, (False, True): 0, (False, False): 2}
    text = agreement_text(
        [
            JudgeAgreement("faithful", 6, 0.667, c),
            JudgeAgreement(
                "relevant", 2, math.nan, {k: (2 if k == (True, True) else 0) for k in c}
            ),
        ]
    )
    lines = text.splitlines()
    assert lines[0] == "judge agreement (you vs the judge):"
    assert lines[1] == (
        "  faithful: n=6, Cohen's kappa 0.67, raw agreement 83%; you yes/judge yes 3, "
        "you yes/judge no 1, you no/judge yes 0, you no/judge no 2"
    )
    assert "Cohen's kappa undefined (one of you gave a single label)" in lines[2]
    assert math.isnan(JudgeAgreement("x", 0, math.nan, {}).raw_agreement)


# --------------------------------------------------------------------------- kappa

pairs = st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=40)


@given(pairs)
def test_kappa_is_symmetric_bounded_and_blind_to_which_label_is_yes(p):
    k = cohen_kappa(p)
    swapped = cohen_kappa([(b, a) for a, b in p])
    flipped = cohen_kappa([(not a, not b) for a, b in p])
    if math.isnan(k):
        assert math.isnan(swapped) and math.isnan(flipped)
        assert len({a for a, _ in p}) == 1 and len({b for _, b in p}) == 1
        return
    assert -1.0 - 1e-12 <= k <= 1.0 + 1e-12
    assert swapped == pytest.approx(k) and flipped == pytest.approx(k)


@given(st.lists(st.booleans(), min_size=2, max_size=40).filter(lambda x: len(set(x)) == 2))
def test_two_raters_who_always_agree_have_kappa_one_and_always_disagree_minus_one(labels):
    assert cohen_kappa([(a, a) for a in labels]) == pytest.approx(1.0)
    opposite = cohen_kappa([(a, not a) for a in labels])
    assert opposite < 0 and (opposite == pytest.approx(-1.0)) == (
        labels.count(True) * 2 == len(labels)
    )


def test_kappa_of_nothing_is_nan():
    assert math.isnan(cohen_kappa([]))
