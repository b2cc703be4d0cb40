"""The draft (``sweep.evidence.drafts``): where it goes, what it refuses, the summary."""

from __future__ import annotations

import pytest

from sweep.datasets.loading import DatasetError
from sweep.evidence.drafts import (
    DRAFT_FILE,
    describe_draft,
    draft_evidence,
    draft_path,
)


@pytest.fixture
def dataset(tmp_path):
    (tmp_path / "corpus.jsonl").write_text(
        '{"doc_id": "faq", "title": "FAQ", "text": "The warranty lasts two years."}\n'
        '{"doc_id": "terms", "title": "Terms", "text": "Orders ship within a week."}\n',
        encoding="utf-8",
    )
    (tmp_path / "queries.jsonl").write_text(
        '{"query": "How long is the warranty?"}\n{"query": "zebra xylophone"}\n', encoding="utf-8"
    )
    return tmp_path


def test_the_draft_and_its_summary(dataset):
    draft = draft_evidence(dataset)
    assert draft.out == draft_path(dataset) == dataset / DRAFT_FILE
    assert (draft.proposed, draft.labelled, draft.unmatched) == (2, 0, ("q002",))
    assert (draft.documents, draft.passages) == (2, 2)
    lines = describe_draft(draft, dataset)
    assert lines[0].startswith(
        f"{dataset / DRAFT_FILE}: proposed evidence for 2 questions from 2 passages of 2 documents"
    )
    assert lines[1].startswith("1 share no word with any passage (q002)")
    # --accept never replaces the questions file: the confirmed set goes beside it.
    assert lines[-1] == (
        f"Then: python -m sweep.evidence {dataset} --accept --out "
        f"{dataset / 'queries.accepted.jsonl'}, and move it over "
        f"{dataset / 'queries.jsonl'} when it is right"
    )


def test_an_existing_draft_is_kept_unless_overwrite(dataset):
    (dataset / DRAFT_FILE).write_text("mine\n", encoding="utf-8")
    with pytest.raises(FileExistsError):
        draft_evidence(dataset)
    assert (dataset / DRAFT_FILE).read_text(encoding="utf-8") == "mine\n"
    assert draft_evidence(dataset, overwrite=True).proposed == 2


def test_missing_questions_and_a_missing_folder_are_named(dataset, tmp_path):
    (dataset / "queries.jsonl").unlink()
    with pytest.raises(
        DatasetError, match="queries.jsonl: no such file: give the questions with --questions"
    ):
        draft_evidence(dataset)
    with pytest.raises(DatasetError, match="nowhere: no such folder"):
        draft_evidence(tmp_path / "nowhere")
