"""Accepting a draft (``sweep.evidence.confirmed``): kept quotes located, as the loader will."""

from __future__ import annotations

import json

import pytest

from sweep.datasets.loading import DatasetError, load_dataset
from sweep.evidence.confirmed import accept_draft

TEXT = (
    "Reset the router. Then wait a minute.\n\n"
    "If the light stays red, reset the router. Then call support.\n"
)


@pytest.fixture
def dataset(tmp_path):
    (tmp_path / "corpus.jsonl").write_text(
        json.dumps({"doc_id": "help", "text": TEXT}) + "\n", encoding="utf-8"
    )
    return tmp_path


def _draft(dataset, *proposals, relevant=None):
    row = {"query_id": "q1", "query": "What if the light stays red?", "proposed": list(proposals)}
    if relevant is not None:
        row["relevant"] = relevant
    path = dataset / "queries.draft.jsonl"
    path.write_text(
        '{"query_id": "q0", "query": "skip me", "proposed": []}\n' + json.dumps(row) + "\n",
        encoding="utf-8",
    )
    return path


def test_a_quote_found_twice_is_the_one_inside_its_proposal(dataset):
    second = TEXT.index("If the light")
    draft = _draft(
        dataset,
        {
            "doc_id": "help",
            "quote": "the router.",
            "start": second,
            "end": len(TEXT) - 1,
            "keep": True,
            "score": 1.0,
        },
    )
    accepted = accept_draft(draft, dataset)
    assert (accepted.questions, accepted.left_out, dict(accepted.how)) == (1, ("q0",), {"exact": 1})
    [row] = [json.loads(line) for line in accepted.out.read_text(encoding="utf-8").splitlines()]
    assert row["relevant"] == [{"doc_id": "help", "quote": "the router.", "occurrence": 2}]
    [span] = load_dataset(dataset).queries[0].relevant
    assert span.start == TEXT.index("the router.", second)


def test_a_hand_written_relevant_is_kept_and_bad_marks_are_named_by_line(dataset):
    draft = _draft(
        dataset,
        {"doc_id": "help", "quote": "Then call support.", "keep": True},
        relevant=[{"doc_id": "help"}],
    )
    row = json.loads(accept_draft(draft, dataset).out.read_text(encoding="utf-8"))
    assert row["relevant"] == [
        {"doc_id": "help"},
        {"doc_id": "help", "quote": "Then call support."},
    ]
    (dataset / "queries.jsonl").unlink()
    draft = _draft(
        dataset,
        {"doc_id": "help", "quote": "x", "keep": "yes"},
        {"doc_id": "nope", "quote": "x", "keep": True},
    )
    with pytest.raises(DatasetError) as e:
        accept_draft(draft, dataset)
    assert [str(p) for p in e.value.problems] == [
        f"{draft}:2: proposed[0]: keep must be true or false, got string 'yes'",
        f"{draft}:2: proposed[1]: unknown doc_id 'nope'",
    ]
    assert not (dataset / "queries.jsonl").exists()
