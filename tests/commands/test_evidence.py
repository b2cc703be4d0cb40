"""``python -m sweep.evidence``: a draft of proposed evidence, and one-line errors (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sweep.evidence.__main__ import main

MANUAL = """# AQ-200 Manual

The AQ-200 sensor measures air quality indoors: particles, carbon dioxide and humidity.

## Calibration

Calibrate the carbon dioxide sensor every six months outdoors, in fresh air, for ten
minutes. The app guides you through it.
"""
FAQ = """# FAQ

## Warranty

The warranty lasts two years from the date of purchase and covers the sensor and the fan.
"""
LABELLED = '{"query_id": "known", "query": "What does it measure?", "relevant": [{"doc_id": "manual.md", "quote": "particles"}]}'


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    docs = tmp_path / "set" / "docs"
    docs.mkdir(parents=True)
    (docs / "manual.md").write_text(MANUAL, encoding="utf-8")
    (docs / "faq.md").write_text(FAQ, encoding="utf-8")
    (docs.parent / "queries.jsonl").write_text(
        '{"query": "How long is the warranty?", "type": "fact"}\n'
        f"{LABELLED}\n"
        '{"query_id": "cal", "query": "How often do I calibrate the sensor?"}\n',
        encoding="utf-8",
    )
    return docs.parent


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_the_draft_proposes_passages_and_keeps_labelled_rows(dataset, capsys):
    assert main([str(dataset)]) == 0
    out = capsys.readouterr().out
    draft = dataset / "queries.draft.jsonl"
    warranty, _, cal = rows(draft)
    assert draft.read_text(encoding="utf-8").splitlines()[1] == LABELLED  # unchanged
    assert list(warranty) == ["query_id", "query", "type", "proposed"] and "relevant" not in cal
    assert warranty["query_id"] == "q001" and cal["query_id"] == "cal"
    best = warranty["proposed"][0]
    assert best["doc_id"] == "faq.md" and best["quote"].startswith("The warranty lasts two years")
    assert FAQ[best["start"] : best["end"]] == best["quote"] and isinstance(best["score"], float)
    assert "every six months" in cal["proposed"][0]["quote"]
    assert len(cal["proposed"]) <= 3
    assert f"{draft}: proposed evidence for 2 questions" in out and "1 already had evidence" in out
    assert (
        f"python -m sweep.evidence {dataset} --accept --out {dataset / 'queries.accepted.jsonl'}"
    ) in out


def test_text_file_questions_top_and_out(dataset, tmp_path, capsys):
    questions = tmp_path / "questions.txt"
    questions.write_text(
        "How long is the warranty?\n\nHow often do I calibrate?\n", encoding="utf-8"
    )
    out = tmp_path / "drafts" / "mine.jsonl"
    assert main([str(dataset), "--questions", str(questions), "--top", "1", "--out", str(out)]) == 0
    assert [(r["query_id"], len(r["proposed"])) for r in rows(out)] == [("q001", 1), ("q002", 1)]
    assert not (dataset / "queries.draft.jsonl").exists()


def test_an_existing_draft_is_replaced_only_with_force(dataset, capsys):
    draft = dataset / "queries.draft.jsonl"
    draft.write_text("my own edits\n", encoding="utf-8")
    assert main([str(dataset)]) == 2
    err = capsys.readouterr().err
    assert (
        err
        == f"sweep.evidence: error: {draft}: file exists; --force replaces it, --out FILE writes another\n"
    )
    assert draft.read_text(encoding="utf-8") == "my own edits\n"
    assert main([str(dataset), "--force"]) == 0
    assert len(rows(draft)) == 3


def test_the_questions_file_is_never_the_draft(dataset, capsys):
    queries = dataset / "queries.jsonl"
    before = queries.read_text(encoding="utf-8")
    assert main([str(dataset), "--out", str(queries), "--force"]) == 2
    assert "is the questions file" in capsys.readouterr().err
    assert queries.read_text(encoding="utf-8") == before


def test_a_bad_json_line_is_one_line_with_file_and_line(dataset, capsys):
    (dataset / "queries.jsonl").write_text('{"query": "ok"}\n{"query": oops}\n', encoding="utf-8")
    assert main([str(dataset)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"sweep.evidence: error: {dataset / 'queries.jsonl'}:2: bad JSON")
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert not (dataset / "queries.draft.jsonl").exists()


def test_a_dataset_without_documents_is_bad_input(tmp_path, capsys):
    (tmp_path / "queries.jsonl").write_text('{"query": "anything?"}\n', encoding="utf-8")
    assert main([str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith(f"sweep.evidence: error: {tmp_path}: no corpus")
        and len(err.splitlines()) == 1
    )


def test_questions_in_a_folder_of_documents_are_no_candidate(tmp_path, capsys):
    (tmp_path / "manual.md").write_text(MANUAL, encoding="utf-8")
    (tmp_path / "questions.txt").write_text(
        "How often do I calibrate the sensor?\n", encoding="utf-8"
    )
    assert main([str(tmp_path), "--questions", str(tmp_path / "questions.txt")]) == 0
    [row] = rows(tmp_path / "queries.draft.jsonl")
    assert {p["doc_id"] for p in row["proposed"]} == {"manual.md"}
    assert "note: questions.txt is in the dataset folder" in capsys.readouterr().out


def test_nothing_to_propose_writes_nothing(dataset, capsys):
    (dataset / "queries.jsonl").write_text(LABELLED + "\n", encoding="utf-8")
    assert main([str(dataset)]) == 0
    assert "have evidence already" in capsys.readouterr().out
    assert not (dataset / "queries.draft.jsonl").exists()


def test_help_says_what_it_does(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("python -m sweep.evidence: For every question without evidence")
    assert "--questions FILE" in out and "--top N" in out and "--force" in out


def _keep(
    draft: Path, keep: dict[str, list[int]], quotes: dict[tuple[str, int], str] | None = None
) -> None:
    """Mark proposals as a person does: ``keep[query_id]`` are the proposals to keep,
    ``quotes[(query_id, i)]`` a quote cut down to the sentence kept."""
    lines = []
    for row in rows(draft):
        for i, p in enumerate(row.get("proposed", [])):
            p["keep"] = i in keep.get(row["query_id"], [])
            p["quote"] = (quotes or {}).get((row["query_id"], i), p["quote"])
        lines.append(json.dumps(row, ensure_ascii=False))
    draft.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_accepted_proposals_become_a_questions_file_the_sweep_loads(tmp_path, capsys):
    from sweep.datasets.loading import load_dataset

    docs = tmp_path / "set" / "docs"
    docs.mkdir(parents=True)
    (docs / "manual.md").write_text(MANUAL, encoding="utf-8")
    (docs / "faq.md").write_text(FAQ, encoding="utf-8")
    questions = tmp_path / "questions.txt"
    questions.write_text(
        "How long is the warranty?\nHow often do I calibrate the sensor?\n"
        "What colour is the case?\n",
        encoding="utf-8",
    )
    dataset = docs.parent
    assert main([str(dataset), "--questions", str(questions)]) == 0
    draft = dataset / "queries.draft.jsonl"
    assert (
        f"python -m sweep.evidence {dataset} --accept && python -m sweep.validate"
        in capsys.readouterr().out
    )
    warranty = rows(draft)[0]["proposed"][0]
    assert warranty["keep"] is False and warranty["doc_id"] == "faq.md"
    # The warranty's proposal kept cut down to its first clause; the calibration one as is;
    # nothing kept for the third question.
    _keep(
        draft,
        {"q001": [0], "q002": [0]},
        {("q001", 0): "The warranty lasts two years from the date of purchase"},
    )
    assert main([str(dataset), "--accept"]) == 0
    out = capsys.readouterr().out
    queries = dataset / "queries.jsonl"
    assert out.splitlines()[0] == (
        f"{queries}: 2 questions with evidence, 2 kept quotes located (2 exact)"
    )
    assert "1 left out, no proposal kept (q003)" in out
    assert [r["relevant"] for r in rows(queries)] == [
        [{"doc_id": "faq.md", "quote": "The warranty lasts two years from the date of purchase"}],
        [
            {
                "doc_id": "manual.md",
                "quote": "Calibrate the carbon dioxide sensor every six months "
                "outdoors, in fresh air, for ten\nminutes.",
            }
        ],
    ]
    loaded = load_dataset(dataset)
    [span] = loaded.queries[0].relevant
    assert FAQ[span.start : span.end] == "The warranty lasts two years from the date of purchase"
    # Never over a file: not the one it wrote, not one it did not.
    before = queries.read_bytes()
    assert main([str(dataset), "--accept"]) == 2
    assert capsys.readouterr().err == (
        f"sweep.evidence: error: {queries}: file exists; --accept never replaces a file: --out "
        "FILE writes the questions to a new one\n"
    )
    assert queries.read_bytes() == before


def test_a_kept_quote_that_no_longer_matches_is_refused_with_its_draft_line(dataset, capsys):
    assert main([str(dataset)]) == 0
    draft = dataset / "queries.draft.jsonl"
    _keep(
        draft, {"q001": [0], "cal": [0]}, {("cal", 0): "Calibrate the sensor every twelve months."}
    )
    out = dataset / "labelled.jsonl"
    assert main([str(dataset), "--accept", str(draft), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        f"sweep.evidence: error: {draft}:3: proposed[0]: quote not located in "
        "'manual.md': quote not found; closest passage"
    )
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert not out.exists()  # nothing is written unless every kept quote is found


def test_accept_refuses_options_of_drafting(dataset, capsys):
    with pytest.raises(SystemExit) as done:
        main([str(dataset), "--accept", "--force"])
    assert done.value.code == 2
    assert "--force does not go with --accept" in capsys.readouterr().err
