"""``sweep.answers.summary``: per-setting rates with bootstrap intervals, diagnosis counts, and
the paired tests between settings answered the same way."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sweep.answers.diagnosis import DIAGNOSES
from sweep.answers.records import AnswerTrace
from sweep.answers.replies import JudgeVerdict
from sweep.answers.summary import RATES, pair_tests, rate_values, setup_text, summarize_answers
from sweep.store.traces import Evidence

GOLD = (Evidence("a.md", 1, 0, 10, "gold text."),)


def _t(
    job=0,
    qid="q1",
    *,
    declined=False,
    faithful=None,
    relevant=None,
    correct=None,
    gold=True,
    diagnosis="ok",
    failures=None,
    k=3,
    model="m",
    prompt="1",
) -> AnswerTrace:
    verdicts = {
        name: JudgeVerdict(v, "r")
        for name, v in (("faithful", faithful), ("relevant", relevant), ("correct", correct))
        if v is not None
    }
    return AnswerTrace(
        job,
        f"setting {job}",
        qid,
        f"question {qid}?",
        "fact",
        None,
        GOLD if gold else (),
        (),
        "complete" if gold else "unanswerable",
        None if declined is None else "an answer",
        declined,
        verdicts,
        failures or {},
        diagnosis,
        prompt,
        k,
        model,
    )


# --------------------------------------------------------------------------- rate_values


def test_faithful_and_relevant_count_only_answers_given():
    assert rate_values(_t(faithful=True), "faithful") == 1.0
    assert rate_values(_t(faithful=False), "faithful") == 0.0
    assert rate_values(_t(declined=True, faithful=True), "faithful") is None
    assert rate_values(_t(declined=None, relevant=True), "relevant") is None
    assert rate_values(_t(), "relevant") is None  # not judged (a failed judge reply)


def test_correct_counts_wherever_there_is_a_verdict_declined_or_not():
    assert rate_values(_t(correct=True), "correct") == 1.0
    assert rate_values(_t(declined=True, correct=False), "correct") == 0.0
    assert rate_values(_t(), "correct") is None


def test_declined_is_defined_for_unanswerable_questions_only():
    assert rate_values(_t(gold=False, declined=True), "declined") == 1.0
    assert rate_values(_t(gold=False, declined=False), "declined") == 0.0
    assert rate_values(_t(gold=False, declined=None), "declined") is None
    assert rate_values(_t(gold=True, declined=True), "declined") is None


# --------------------------------------------------------------------------- summarize_answers


def test_rates_means_intervals_counts_and_failures_per_setting():
    traces = [
        _t(
            0,
            f"q{i}",
            faithful=i % 4 != 0,
            relevant=True,
            diagnosis="ok" if i % 4 else "unfaithful",
        )
        for i in range(8)
    ]
    traces += [
        _t(0, "u1", gold=False, declined=True, diagnosis="correctly_declined"),
        _t(0, "x", declined=None, diagnosis="no_answer", failures={"answer": "bad_json"}),
    ]
    traces += [
        _t(
            1,
            f"q{i}",
            faithful=True,
            relevant=i < 2,
            failures={"correct": "bad_json"},
            diagnosis="ok" if i < 2 else "wrong_section",
        )
        for i in range(4)
    ]
    s0, s1 = summarize_answers(traces[::-1], n_boot=200, seed=1)  # sorted by job
    assert (s0.job, s0.setting, s0.n_queries, s0.k, s0.model) == (0, "setting 0", 10, 3, "m")
    f = s0.rates["faithful"]
    assert (f.mean, f.n) == (0.75, 8) and 0.0 <= f.low <= f.mean <= f.high <= 1.0 and f.low < f.high
    assert s0.rates["relevant"].mean == 1.0 and s0.rates["relevant"].low == 1.0
    assert s0.rates["correct"] is None  # no verdict at all
    assert (s0.rates["declined"].mean, s0.rates["declined"].n) == (1.0, 1)
    assert list(s0.diagnoses) == list(DIAGNOSES)  # every code, in report order, zeros too
    assert s0.diagnoses["ok"] == 6 and s0.diagnoses["unfaithful"] == 2
    assert s0.diagnoses["no_answer"] == 1 and s0.diagnoses["retrieval"] == 0
    assert sum(s0.diagnoses.values()) == 10
    assert s0.failures == 1 and s1.failures == 4
    assert s1.rates["relevant"].mean == 0.5 and s1.rates["declined"] is None


def test_intervals_are_seeded():
    traces = [_t(0, f"q{i}", faithful=bool(i % 3), relevant=True) for i in range(12)]
    a = summarize_answers(traces, n_boot=100, seed=3)
    assert a == summarize_answers(traces, n_boot=100, seed=3)
    assert a != summarize_answers(traces, n_boot=100, seed=4)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=30))
def test_a_rate_is_the_share_of_passes_and_its_interval_holds_it(passes):
    traces = [_t(0, f"q{i}", faithful=p) for i, p in enumerate(passes)]
    (s,) = summarize_answers(traces, n_boot=50)
    r = s.rates["faithful"]
    assert r.n == len(passes) and r.mean == pytest.approx(np.mean(passes))
    assert min(passes) <= r.low <= r.mean <= r.high <= max(passes)


def test_setup_text():
    (s,) = summarize_answers([_t(k=5, model="gpt-x", faithful=True)], n_boot=10)
    assert setup_text([s]) == "Each setting's top 5 chunks handed to gpt-x"
    (old,) = summarize_answers([_t(k=0, model="", faithful=True)], n_boot=10)
    assert setup_text([old]) == "Each setting's top chunks handed to the model"
    (other,) = summarize_answers([_t(1, k=5, model="gpt-y", faithful=True)], n_boot=10)
    assert "per setting" in setup_text([s, other])


# --------------------------------------------------------------------------- pair_tests


def test_pairs_are_tested_over_the_queries_both_have_and_holm_adjusted():
    a = [_t(0, f"q{i}", faithful=True, relevant=True) for i in range(10)]
    b = [_t(1, f"q{i}", faithful=i < 2, relevant=True) for i in range(12)]  # q10, q11 only in b
    c = [_t(2, f"q{i}", faithful=True, relevant=True) for i in range(10)]
    tests = pair_tests(a + b + c, n_perm=2000)
    faithful = {(t.a, t.b): t for t in tests if t.rate == "faithful"}
    assert set(faithful) == {(0, 1), (0, 2), (1, 2)}
    ab = faithful[(0, 1)]
    assert ab.n == 10 and ab.diff == pytest.approx(1.0 - 0.2)  # a - b over the shared queries
    assert ab.p_value < 0.01 and ab.p_holm >= ab.p_value
    assert faithful[(1, 2)].diff == pytest.approx(-0.8)
    assert faithful[(0, 2)].p_value == 1.0 and faithful[(0, 2)].diff == 0.0
    # Holm over the three pairs of this rate: the smallest p times 3.
    ps = sorted(t.p_value for t in faithful.values())
    assert min(t.p_holm for t in faithful.values()) == pytest.approx(min(1.0, 3 * ps[0]))
    assert all(t.p_holm <= 1.0 for t in tests)
    # No correct verdict, no declined rate: those rates have no tests.
    assert {t.rate for t in tests} == {"faithful", "relevant"}
    assert [t.rate for t in tests] == sorted((t.rate for t in tests), key=RATES.index)


def test_settings_answered_another_way_are_not_paired():
    a = [_t(0, f"q{i}", faithful=True) for i in range(6)]
    other_model = [_t(1, f"q{i}", faithful=False, model="other") for i in range(6)]
    other_k = [_t(2, f"q{i}", faithful=False, k=9) for i in range(6)]
    other_prompt = [_t(3, f"q{i}", faithful=False, prompt="2") for i in range(6)]
    same = [_t(4, f"q{i}", faithful=False) for i in range(6)]
    tests = pair_tests(a + other_model + other_k + other_prompt + same, n_perm=200)
    assert {(t.a, t.b) for t in tests} == {(0, 4)}


def test_no_shared_query_no_test():
    a = [_t(0, "q1", faithful=True)]
    b = [_t(1, "q2", faithful=True)]
    assert pair_tests(a + b, n_perm=100) == []
    assert pair_tests(a, n_perm=100) == []
