"""``sweep.scoring.table``: the score table's columns, its CSV form and the errors reading one."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sweep.core.measures import Measure
from sweep.core.types import Hit, Judgment, Query
from sweep.scoring.credit import score_queries
from sweep.scoring.table import ScoreTable

M = Measure.parse


def span(doc: str, start: int, end: int) -> Judgment:
    return Judgment(doc, start, end, 1)


def docs(*ids: str) -> list[Hit]:
    return [Hit(d) for d in ids]


def test_score_table_columns_rows_values_and_csv(tmp_path) -> None:
    queries = [
        Query("q1", "", (span("d", 0, 10),)),
        Query("q,2", "", (Judgment("d"),)),
        Query("none", "", ()),
    ]
    runs = {"q1": [Hit("d", 0, 10)], "q,2": docs("x", "d")}
    table = score_queries(queries, runs, [M("recall@1"), M("mrr@2"), M("cov_recall@1")])
    assert len(table) == len(list(table.rows())) == 2 + 3 + 2
    assert table.values("doc", "mrr@2") == {"q1": 1.0, "q,2": 0.5}
    assert table.values("span", M("cov_recall@1")) == {"q1": 1.0}
    assert table.values("doc", "cov_recall@1") == {}
    assert list(table.query_id[:2]) == ["q1", "q1"] and set(table.level) == {"doc", "span"}
    assert set(table.metric) == {"recall@1", "mrr@2", "cov_recall@1"}
    path = tmp_path / "per_query.csv"
    table.write_csv(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "query_id,level,metric,value"
    assert '"q,2",doc,mrr@2,0.5' in lines
    back = ScoreTable.read_csv(path)
    assert list(back.rows()) == list(table.rows())
    _codes, names, values = table.matrix("doc")
    assert names == ("recall@1", "mrr@2") and values.shape == (2, 2)


def _write(path, text: str):
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "text, message",
    [
        (
            "qid,level,metric,value\n",
            "per_query.csv:1: expected header query_id,level,metric,value",
        ),
        (
            "query_id,level,metric,value\nq1,doc,mrr@5,0.5\nq2,chapter,mrr@5,1\n",
            "per_query.csv:3: level 'chapter' is not doc, span or page",
        ),
        (
            "query_id,level,metric,value\nq1,span,recall@5,high\n",
            "per_query.csv:2: value 'high' is not a number",
        ),
    ],
)
def test_a_bad_file_is_one_line_naming_the_file_and_line(tmp_path, text, message):
    with pytest.raises(ValueError) as err:
        ScoreTable.read_csv(_write(tmp_path / "per_query.csv", text))
    assert message in str(err.value) and "\n" not in str(err.value)


H = "query_id,level,metric,value\n"


@pytest.mark.parametrize(
    "body, message",
    [
        (
            "q1,span,recall@5,1\nq2,span,recall@5,-5\n",
            "per_query.csv:3: value '-5' of query 'q2' is not a score (span recall@5 is from 0 to 1)",
        ),
        ("q1,span,recall@5,inf\n", "per_query.csv:2: value 'inf' of query 'q1' is not a score"),
        ("q1,doc,ndcg@5,1e308\n", "per_query.csv:2: value '1e308' of query 'q1' is not a score"),
        ("q1,doc,ndcg@5,nan\n", "per_query.csv:2: value 'nan' is not a number"),
        ("q1,doc,ndcg@5,1.5\n", "(doc ndcg@5 is from 0 to 1)"),
        # the second span recall@5 of q1 checks another value than the first: which one wins?
        (
            "q1,span,recall@5,0\nq2,span,recall@5,1\nq1,span,recall@5,1\n",
            "per_query.csv:4: a second span recall@5 value for query 'q1' (the first is on line 2)",
        ),
        (
            "q1,span,speed@5,0.5\n",
            "per_query.csv:2: metric 'speed@5' is not one of sweep's measures",
        ),
        # a quoted query id over two lines: the error names the file's line, not the record's
        (
            '"two\nlines",span,recall@5,1\nq2,span,recall@5,2\n',
            "per_query.csv:4: value '2' of query 'q2' is not a score",
        ),
    ],
)
def test_a_damaged_value_is_one_line_naming_the_file_and_line(tmp_path, body, message):
    with pytest.raises(ValueError) as err:
        ScoreTable.read_csv(_write(tmp_path / "per_query.csv", H + body))
    assert message in str(err.value) and "\n" not in str(err.value)


def test_the_rounding_of_a_score_at_one_is_still_a_score(tmp_path):
    back = ScoreTable.read_csv(
        _write(
            tmp_path / "per_query.csv", H + "q1,doc,ndcg@5,1.0000000000000002\nq1,doc,mrr@5,0.0\n"
        )
    )
    assert back.values("doc", "ndcg@5") == {"q1": 1.0000000000000002}


def test_a_binary_file_names_the_file_and_line_not_a_codec(tmp_path):
    path = tmp_path / "per_query.csv"
    path.write_bytes(H.encode() + b"q1,doc,ndcg@5,1\nq2,doc,\xff\xfe\x00\x81,1\n")
    with pytest.raises(ValueError) as err:
        ScoreTable.read_csv(path)
    assert str(err.value).startswith(f"{path}:3: not UTF-8 text (a byte 0xff)")
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")  # not even a header
    with pytest.raises(ValueError, match=r"per_query.csv:1: not UTF-8 text"):
        ScoreTable.read_csv(path)


def test_an_empty_table_reads_back_empty(tmp_path):
    back = ScoreTable.read_csv(_write(tmp_path / "per_query.csv", "query_id,level,metric,value\n"))
    assert len(back) == 0 and list(back.rows()) == []


def test_columns_must_agree_in_length_and_are_read_only():
    with pytest.raises(ValueError, match="column level_code has 1 rows, value has 2"):
        ScoreTable(
            ("q",),
            ("m",),
            np.zeros(2, np.int64),
            np.zeros(1, np.int8),
            np.zeros(2, np.int64),
            np.zeros(2),
        )
    table = ScoreTable(
        ("q",),
        ("m",),
        np.zeros(1, np.int64),
        np.zeros(1, np.int8),
        np.zeros(1, np.int64),
        np.ones(1),
    )
    with pytest.raises(ValueError):
        table.value[0] = 2.0


_ids = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=8)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            _ids,
            st.sampled_from(["doc", "span"]),
            st.sampled_from(["recall@5", "ndcg@10"]),
            st.floats(0, 1),
        ),
        min_size=1,
        max_size=12,
        unique_by=lambda r: r[:3],
    )
)
def test_any_table_survives_the_csv_round_trip(tmp_path_factory, rows):
    qids = tuple(dict.fromkeys(r[0] for r in rows))
    metrics = tuple(dict.fromkeys(r[2] for r in rows))
    table = ScoreTable(
        qids,
        metrics,
        np.array([qids.index(r[0]) for r in rows], np.int64),
        np.array([("doc", "span").index(r[1]) for r in rows], np.int8),
        np.array([metrics.index(r[2]) for r in rows], np.int64),
        np.array([r[3] for r in rows]),
    )
    path = tmp_path_factory.mktemp("t") / "per_query.csv"
    table.write_csv(path)
    assert list(ScoreTable.read_csv(path).rows()) == list(table.rows())
