"""``PerQueryScores``: one metric's per-query scores of several settings as one array."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sweep.core.measures import LEVELS
from sweep.scoring.perquery import PerQueryScores
from sweep.scoring.table import ScoreTable

_scores = st.dictionaries(
    st.integers(0, 6),
    st.dictionaries(
        st.sampled_from([f"q{i}" for i in range(8)]), st.floats(0, 1, allow_nan=False), max_size=8
    ),
    max_size=5,
)


@given(_scores)
def test_reading_back_by_job_gives_the_scores_it_was_made_of(scores):
    p = PerQueryScores.from_mapping(scores)
    assert dict(p) == scores and len(p) == len(scores) and list(p) == list(scores)
    assert p.values.shape == (
        len(scores),
        len(set().union(*map(set, scores.values())) if scores else ()),
    )


@given(_scores)
def test_common_is_the_queries_every_chosen_job_scored(scores):
    p = PerQueryScores.from_mapping(scores)
    jobs = sorted(scores)
    queries, values = p.common(jobs)
    want = set.intersection(*(set(scores[j]) for j in jobs)) if jobs else set(p.query_ids)
    assert set(queries) == want
    for i, j in enumerate(jobs):
        assert [scores[j][q] for q in queries] == values[i].tolist()


def test_select_restrict_and_what_was_scored():
    p = PerQueryScores.from_mapping({3: {"a": 1.0, "b": 0.0}, 1: {"b": 0.5, "c": 0.25}})
    assert p.select([1, 3]).jobs == (1, 3) and p.select([1])[1] == {"b": 0.5, "c": 0.25}
    only_a = p.restrict({"a"})
    assert only_a[3] == {"a": 1.0} and only_a[1] == {} and only_a.scored().tolist() == [True]
    assert 3 in p and 2 not in p
    with pytest.raises(ValueError, match="unique"):
        PerQueryScores((0, 0), ("a",), np.zeros((2, 1)))
    with pytest.raises(ValueError, match="read-only"):
        p.values[0, 0] = 9.0


def test_from_tables_takes_one_metric_at_one_level_and_drops_nan():
    def table(values):
        n = len(values)
        return ScoreTable(
            tuple(f"q{i}" for i in range(n)),
            ("recall@5", "mrr@5"),
            np.repeat(np.arange(n), 2),
            np.full(2 * n, LEVELS.index("span")),
            np.tile([0, 1], n),
            np.asarray([x for v in values for x in (v, 1 - v)]),
        )

    tables = {0: table([1.0, math.nan, 0.0]), 1: table([0.5, 0.5, 0.5]), 2: table([math.nan])}
    p = PerQueryScores.from_tables(tables, "span", "recall@5")
    assert p.jobs == (0, 1) and p[0] == {"q0": 1.0, "q2": 0.0}
    assert PerQueryScores.from_tables(tables, "span", "mrr@5", jobs=[1])[1] == {
        "q0": 0.5,
        "q1": 0.5,
        "q2": 0.5,
    }
