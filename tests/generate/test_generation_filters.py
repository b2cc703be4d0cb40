"""Local filters: copied wording and near-duplicate questions."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from sweep.generate.filters import longest_copied_run, near_duplicates

PASSAGE = "The daily allowance for meals is €45 within Portugal and €60 elsewhere in the EU."


def test_copied_run_counts_consecutive_shared_words_ignoring_case_and_punctuation():
    assert longest_copied_run("What is the meal allowance in Portugal?", PASSAGE) == 1
    assert longest_copied_run("Is the daily allowance for meals higher abroad?", PASSAGE) == 5
    # "€45" is the word "45"
    assert (
        longest_copied_run("the DAILY allowance, for meals is €45 within Portugal!", PASSAGE) == 9
    )
    assert longest_copied_run("", PASSAGE) == 0


words = st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=12)


@given(q=words, p=words)
def test_copied_run_is_the_longest_common_substring_of_words(q, p):
    best = 0
    for i in range(len(q)):
        for j in range(len(p)):
            k = 0
            while i + k < len(q) and j + k < len(p) and q[i + k] == p[j + k]:
                k += 1
            best = max(best, k)
    assert longest_copied_run(" ".join(q), " ".join(p)) == best


def unit(*rows):
    v = np.array(rows, dtype=np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_near_duplicates_within_a_batch_keep_the_first():
    v = unit([1, 0], [0.99, 0.05], [0, 1], [0.05, 1])
    assert near_duplicates(v, 0.95) == [None, 0, None, 2]


def test_near_duplicates_of_earlier_kept_questions():
    earlier = unit([0, 1])
    v = unit([1, 0], [0.02, 1])
    assert near_duplicates(v, 0.95, earlier) == [None, -1]


def test_a_dropped_duplicate_is_not_a_reference():
    # Row 2 is close to row 1 only; row 1 duplicates row 0, so row 2 is compared
    # with the kept row 0, not with the dropped row 1.
    v = unit([1, 0], [0.96, 0.28], [0.88, 0.475])
    assert float(v[2] @ v[1]) >= 0.95 > float(v[2] @ v[0])
    assert near_duplicates(v, 0.95) == [None, 0, None]
