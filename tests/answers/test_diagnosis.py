"""``sweep.answers.diagnosis``: context relevance from credit ranks, and where a failure comes
from. The table of every case is in tests/answers/test_answers.py; here, the rules as properties."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sweep.answers.diagnosis import CONTEXTS, DIAGNOSES, context_relevance, diagnose_answer

ranks = st.lists(st.one_of(st.none(), st.integers(1, 50)), max_size=8)
ks = st.integers(1, 50)
maybe = st.one_of(st.none(), st.booleans())


@given(ranks, ks)
def test_context_relevance_counts_the_units_inside_the_top_k(unit_ranks, k):
    got = context_relevance(unit_ranks, k)
    assert got in CONTEXTS
    inside = [r for r in unit_ranks if r is not None and r <= k]
    if not unit_ranks:
        assert got == "unanswerable"
    elif len(inside) == len(unit_ranks):
        assert got == "complete"
    elif inside:
        assert got == "partial"
    else:
        assert got == "none"


@given(ranks.filter(bool), ks, st.integers(0, 20))
def test_more_context_never_holds_less_evidence(unit_ranks, k, more):
    order = {"none": 0, "partial": 1, "complete": 2}
    assert order[context_relevance(unit_ranks, k)] <= order[context_relevance(unit_ranks, k + more)]


def test_a_rank_exactly_k_is_inside_and_k_plus_one_is_not():
    assert context_relevance((3,), 3) == "complete"
    assert context_relevance((4,), 3) == "none"
    assert context_relevance((3, 4), 3) == "partial"
    assert context_relevance((None,), 10) == "none"


@given(st.sampled_from(CONTEXTS), maybe, maybe, maybe, maybe)
def test_every_outcome_is_a_documented_diagnosis(context, declined, faithful, relevant, correct):
    assert diagnose_answer(context, declined, faithful, relevant, correct) in DIAGNOSES


@given(st.sampled_from(CONTEXTS), maybe, maybe, maybe)
def test_a_missing_answer_is_no_answer_whatever_else_is_known(context, faithful, relevant, correct):
    assert diagnose_answer(context, None, faithful, relevant, correct) == "no_answer"


@given(st.sampled_from(["partial", "none"]), st.booleans(), maybe, maybe, maybe)
def test_incomplete_context_is_a_retrieval_problem_whatever_the_model_did(
    context, declined, faithful, relevant, correct
):
    assert diagnose_answer(context, declined, faithful, relevant, correct) == "retrieval"


@given(st.booleans(), maybe, maybe, maybe)
def test_unanswerable_questions_are_judged_only_on_declining(declined, faithful, relevant, correct):
    want = "correctly_declined" if declined else "answered_without_evidence"
    assert diagnose_answer("unanswerable", declined, faithful, relevant, correct) == want


@given(maybe, maybe, maybe)
def test_declining_with_the_evidence_at_hand_is_its_own_failure(faithful, relevant, correct):
    assert (
        diagnose_answer("complete", True, faithful, relevant, correct) == "declined_with_evidence"
    )


@given(maybe, maybe)
def test_an_unreadable_judge_reply_is_a_judge_failure_not_a_verdict(other, correct):
    assert diagnose_answer("complete", False, None, other, correct) == "judge_failed"
    assert diagnose_answer("complete", False, other, None, correct) == "judge_failed"


@given(st.booleans(), maybe)
def test_unfaithful_comes_before_wrong_section(relevant, correct):
    assert diagnose_answer("complete", False, False, relevant, correct) == "unfaithful"
    assert diagnose_answer("complete", False, True, False, correct) == "wrong_section"


@pytest.mark.parametrize("correct,want", [(None, "ok"), (True, "ok"), (False, "incorrect")])
def test_only_a_failed_correctness_verdict_makes_a_good_answer_incorrect(correct, want):
    assert diagnose_answer("complete", False, True, True, correct) == want


def test_the_diagnoses_are_listed_in_report_order_with_a_text_each():
    assert next(iter(DIAGNOSES)) == "ok"
    assert all(isinstance(t, str) and t for t in DIAGNOSES.values())
    assert set(CONTEXTS) == {"complete", "partial", "none", "unanswerable"}
