"""The output folder: what is refused, what is written, and that it loads as a dataset."""

from __future__ import annotations

import json

import pytest

from sweep.core.types import Document, Judgment, Query
from sweep.datasets.loading import load_dataset
from sweep.generate.output import OutputError, check_output_dir, write_output
from sweep.generate.runreport import TOOL, GenerationReport


def report(**kw) -> GenerationReport:
    base = dict(
        dataset="corpora/tiny",
        generator="stand-in",
        endpoint="http://127.0.0.1:1/v1",
        prompt_version="1",
        settings={"seed": 0, "window_tokens": 300},
        n_documents=2,
        n_passages=5,
        requested={"fact": 2, "unanswerable": 1},
        attempted={"fact": 4, "unanswerable": 1},
        kept={"fact": 2, "unanswerable": 1},
        rejections=(("draft", "quote_not_found", "fact", 1), ("realism", "unrealistic", "fact", 1)),
        requests={
            "sent": 11,
            "cached": 3,
            "failed": 0,
            "retries": 2,
            "prompt_tokens": 1234,
            "completion_tokens": 56,
            "cached_prompt_tokens": 300,
            "cached_completion_tokens": 9,
        },
        quotes={"exact": 1, "normalised": 1},
        realism={5: 2, 4: 1},
        rounds=2,
        seconds=1.5,
    )
    return GenerationReport(**{**base, **kw})


DOCS = (
    Document("a.md", "# A\r\n\r\nCafé prices rose by 5%.\r\nThey fell later.", "A", {"lang": "pt"}),
    Document("b.md", "Second document text.", "B"),
)
QUERIES = (
    Query(
        "syn-fact-001",
        "How much did café prices rise?",
        (Judgment("a.md", 7, 30, 1, "Café prices rose by 5%."),),
        "fact",
        {"source": "synthetic", "generator": "stand-in", "prompt_version": "1", "realism": 5},
    ),
    Query(
        "syn-unanswerable-001",
        "Is there a gym?",
        (),
        "unanswerable",
        {"source": "synthetic", "generator": "stand-in", "prompt_version": "1", "realism": 4},
    ),
)


def test_written_set_loads_and_keeps_documents_exactly(tmp_path):
    assert DOCS[0].text[7:30] == "Café prices rose by 5%."
    out = tmp_path / "set"
    write_output(out, DOCS, QUERIES, report())
    dataset = load_dataset(out)
    assert [(d.doc_id, d.text, d.title) for d in dataset.documents] == [
        (d.doc_id, d.text, d.title) for d in DOCS
    ]
    assert dataset.documents[0].metadata == {"lang": "pt"}
    fact, unanswerable = dataset.queries
    assert fact.type == "fact" and fact.relevant[0].quote == "Café prices rose by 5%."
    assert fact.metadata["source"] == "synthetic" and fact.metadata["realism"] == 5
    assert unanswerable.relevant == () and unanswerable.type == "unanswerable"
    data = json.loads((out / "generation_report.json").read_text())
    assert data["tool"] == TOOL and data["rejected"] == {"quote_not_found": 1, "unrealistic": 1}
    assert (out / "generation_report.md").read_text().startswith("# Generation report")


def test_new_empty_and_earlier_generation_folders_are_accepted(tmp_path):
    assert check_output_dir(tmp_path / "new", None, False) == tmp_path / "new"
    (tmp_path / "empty").mkdir()
    check_output_dir(tmp_path / "empty", None, False)
    write_output(tmp_path / "earlier", DOCS, QUERIES, report())
    (tmp_path / "earlier" / "notes.txt").write_text("mine")
    check_output_dir(tmp_path / "earlier", None, False)


def test_a_foreign_non_empty_folder_needs_overwrite(tmp_path):
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "queries.jsonl").write_text("{}\n")
    with pytest.raises(
        OutputError, match="not empty and holds no earlier generation.*overwrite=true"
    ):
        check_output_dir(tmp_path / "x", None, False)
    assert check_output_dir(tmp_path / "x", None, True) == tmp_path / "x"


def test_the_dataset_folder_a_file_and_a_docs_folder_are_refused(tmp_path):
    data = tmp_path / "data"
    (data / "docs").mkdir(parents=True)
    for overwrite in (False, True):
        with pytest.raises(OutputError, match="dataset's own folder"):
            check_output_dir(data, data, overwrite)
    with pytest.raises(OutputError, match="docs/ folder"):
        check_output_dir(data, tmp_path / "elsewhere", True)
    (tmp_path / "f").write_text("x")
    with pytest.raises(OutputError, match="is a file"):
        check_output_dir(tmp_path / "f", None, False)


def test_report_markdown_names_every_count():
    md = report().to_markdown()
    assert "| fact | 2 | 4 | 2 |" in md and "| **total** | 3 | 5 | 3 |" in md
    assert "| `quote_not_found` | draft | 1 | 0 | 1 |" in md
    assert "| `unrealistic` | realism | 1 | 0 | 1 |" in md
    assert "| 11 | 3 | 0 | 2 | 1,234 | 56 |" in md
    assert "1 exactly, 1 by the normalised match" in md and "5: 2, 4: 1" in md
    assert "Nothing was rejected." in report(rejections=()).to_markdown()
    dry = report(dry_run=True, requests={"would_send": 7, "would_send_prompt_tokens": 900})
    assert "Dry run: 7 requests would be sent now, about 900 prompt tokens." in dry.to_markdown()


def short(**kw) -> GenerationReport:
    """A run left short by requests that got no answer: 1 of 3 kept, 4 failed."""
    return report(
        **{
            "kept": {"fact": 1, "unanswerable": 0},
            "rejections": (
                ("draft", "request_failed", "fact", 1),
                ("check", "request_failed", "unanswerable", 1),
            ),
            "requests": {"sent": 11, "cached": 0, "failed": 4, "retries": 0},
            **kw,
        }
    )


def test_a_run_short_of_failed_requests_is_marked_incomplete():
    assert short().incomplete and short().to_dict()["status"] == "incomplete"
    md = short().to_markdown()
    assert md.splitlines()[2].startswith("**Incomplete**: 4 requests got no answer")
    assert "1 of 3 questions were kept" in md
    # Short for other reasons (filters), or failures made good by replacements: finished.
    assert report().to_dict()["status"] == "finished" and not report().incomplete
    assert not short(kept={"fact": 2, "unanswerable": 1}).incomplete
    assert not report(kept={"fact": 1, "unanswerable": 0}).incomplete
    assert "Incomplete" not in report().to_markdown()


def test_an_incomplete_run_is_not_a_dataset_and_leaves_a_finished_set_whole(tmp_path):
    out = tmp_path / "set"
    write_output(out, DOCS, QUERIES[:1], short())
    assert sorted(p.name for p in out.iterdir()) == [
        "generation_report.incomplete.json",
        "generation_report.incomplete.md",
        "queries.incomplete.jsonl",
    ]
    assert (
        json.loads((out / "generation_report.incomplete.json").read_text())["status"]
        == "incomplete"
    )
    assert len((out / "queries.incomplete.jsonl").read_text().splitlines()) == 1
    with pytest.raises(ValueError):  # no sweep reads it as a finished set
        load_dataset(out)
    check_output_dir(out, None, False)  # a rerun may write here

    write_output(out, DOCS, QUERIES, report())  # the rerun finishes: the leftovers go
    assert sorted(p.name for p in out.iterdir()) == [
        "corpus.jsonl",
        "generation_report.json",
        "generation_report.md",
        "queries.jsonl",
    ]
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    write_output(out, DOCS, QUERIES[:1], short())  # a later short run: the set stays whole
    assert {n: (out / n).read_bytes() for n in before} == before
    assert len(load_dataset(out).queries) == 2


def test_files_named_like_the_incomplete_ones_but_not_ours_are_kept(tmp_path):
    out = tmp_path / "set"
    out.mkdir()
    (out / "queries.incomplete.jsonl").write_text("mine\n")
    write_output(out, DOCS, QUERIES, report())
    assert (out / "queries.incomplete.jsonl").read_text() == "mine\n"


def test_evidence_is_written_as_quotes_that_any_parser_relocates(tmp_path):
    # A quote survives a change of parser; offsets index one reader's text only.
    text = "ask Ana first. Then ask Ana again."
    docs = (Document("n.md", text, "N"),)
    second = text.index("ask Ana", 5)
    queries = (Query("q1", "Who?", (Judgment("n.md", second, second + 7, 1, "ask Ana"),), "fact"),)
    write_output(tmp_path, docs, queries, report())
    row = json.loads((tmp_path / "queries.jsonl").read_text(encoding="utf-8"))
    assert row["relevant"] == [{"doc_id": "n.md", "quote": "ask Ana", "occurrence": 2, "grade": 1}]
    (q,) = load_dataset(tmp_path).queries
    assert (q.relevant[0].start, q.relevant[0].end) == (second, second + 7)
