"""Question files (``sweep.evidence.questions``): JSON lines or plain lines, ids, problems."""

from __future__ import annotations

import json

import pytest

from sweep.datasets.loading import DatasetError
from sweep.evidence.questions import draft_text, read_questions


def test_json_lines_keep_their_rows_and_get_free_ids(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text(
        '{"query": "first?", "type": "fact"}\n'
        '{"query_id": "q001", "query": "second?",  "relevant": []}\n'
        "\n"
        '{"query": "third?", "relevant": null}\n',
        encoding="utf-8",
    )
    questions = read_questions(path)
    # q001 is taken by the second row, so the first takes the next free number
    assert [q.query_id for q in questions] == ["q002", "q001", "q003"]
    assert [q.line for q in questions] == [1, 2, 4]
    assert [q.labelled for q in questions] == [False, True, False]
    assert dict(questions[0].row) == {"query_id": "q002", "query": "first?", "type": "fact"}


def test_plain_lines_are_questions_numbered_to_the_counts_width(tmp_path):
    path = tmp_path / "questions.txt"
    path.write_text(
        "\ufeffHow long is the warranty?\r\n\r\n  Where is the filter?  \n", encoding="utf-8"
    )
    assert [(q.query_id, q.query) for q in read_questions(path)] == [
        ("q001", "How long is the warranty?"),
        ("q002", "Where is the filter?"),
    ]
    many = tmp_path / "many.txt"
    many.write_text("".join(f"question {i}\n" for i in range(1000)), encoding="utf-8")
    assert read_questions(many)[-1].query_id == "q1000"


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (
            '{"query": "ok"}\n{"query": "x",}\n',
            "q.jsonl:2: bad JSON: Expecting property name enclosed in double quotes (column 15)",
        ),
        ('{"query": "a", "query": "b"}\n', "q.jsonl:1: bad JSON: duplicate key 'query'"),
        ('["q1"]\n', "q.jsonl:1: expected a JSON object, got array ['q1']"),
        ('{"query_id": "a"}\n', "q.jsonl:1: missing key 'query'"),
        ('{"query": 3}\n', "q.jsonl:1: query must be a string, got number 3"),
        ('{"query": " "}\n', "q.jsonl:1: query text is empty"),
        ('{"query_id": 1, "query": "x"}\n', "q.jsonl:1: query_id must be a string, got number 1"),
        (
            '{"query_id": "a", "query": "x"}\n{"query_id": "a", "query": "y"}\n',
            "q.jsonl:2: duplicate query_id 'a' (first at line 1)",
        ),
        ("\n\n", "q.jsonl: no questions"),
    ],
)
def test_each_problem_is_one_line_naming_file_and_line(tmp_path, content, problem):
    path = tmp_path / "q.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DatasetError) as caught:
        read_questions(path)
    assert str(caught.value.problem) == f"{tmp_path}/{problem}"


def test_an_unreadable_file_is_a_problem_not_a_traceback(tmp_path):
    with pytest.raises(DatasetError, match="nothing.jsonl: cannot read file: No such file"):
        read_questions(tmp_path / "nothing.jsonl")
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine\n\xff\n")
    with pytest.raises(DatasetError, match=r"bad.txt:2: not valid UTF-8 \(byte 0xff"):
        read_questions(bad)


def test_the_draft_copies_labelled_lines_as_they_were(tmp_path):
    path = tmp_path / "q.jsonl"
    labelled = '{"query_id": "a",   "query": "x", "relevant": [{"doc_id": "d"}]}'
    path.write_text(
        f'{labelled}\n{{"query": "y", "relevant": null, "proposed": [1]}}\n', encoding="utf-8"
    )
    questions = read_questions(path)
    text = draft_text(questions, {"q002": [{"doc_id": "d", "quote": "q"}]})
    first, second = text.splitlines()
    assert first == labelled
    assert json.loads(second) == {
        "query_id": "q002",
        "query": "y",
        "proposed": [{"doc_id": "d", "quote": "q"}],
    }
