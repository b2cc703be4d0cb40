"""Every SPEC §1 rule fails on its broken fixture; ``python -m sweep.validate`` output and exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from paths import ROOT
from sweep.chunking import build_chunker
from sweep.core.types import Chunk, Dataset, Document, Judgment, Query
from sweep.datasets.judgments import next_steps_without_questions
from sweep.datasets.loading import DatasetError, check_dataset, load_dataset
from sweep.datasets.statistics import (
    Distribution,
    compute_statistics,
    count_straddling,
    format_statistics,
)
from sweep.validate.__main__ import main

FIXTURES = ROOT / "tests" / "fixtures"
BROKEN = FIXTURES / "broken"
KESTREL = ROOT / "corpora" / "kestrel"

# fixture -> (file inside it, line, exact message). One rule broken per fixture.
RULES = {
    "bad_json": ("queries.jsonl", 2, "bad JSON: Expecting ',' delimiter (column 33)"),
    "not_object": ("queries.jsonl", 2, "expected a JSON object, got array ['q2', 'x']"),
    "duplicate_key": ("queries.jsonl", 2, "bad JSON: duplicate key 'query'"),
    "nan_constant": ("queries.jsonl", 2, "bad JSON: NaN is not valid JSON"),
    "bad_utf8_jsonl": ("corpus.jsonl", 2, "not valid UTF-8 (byte 0xff at byte 109 of the line)"),
    "bad_utf8_doc": ("docs/faq.md", 4, "not valid UTF-8 (byte 0xff)"),
    "missing_key": ("queries.jsonl", 2, "missing key 'query'"),
    "missing_relevant": (
        "queries.jsonl",
        2,
        "missing key 'relevant' (use [] for a question with no answer in the corpus; python -m sweep.evidence proposes passages)",
    ),
    "wrong_type": ("queries.jsonl", 2, "query_id must be a string, got number 2"),
    "answer_not_string": (
        "queries.jsonl",
        2,
        "answer must be a non-empty string, got array ['two', 'years']",
    ),
    "relevant_not_list": (
        "queries.jsonl",
        2,
        "relevant must be a list, got object {'doc_id': 'faq.md'}",
    ),
    "title_not_string": ("corpus.jsonl", 3, "title must be a string, got array ['x']"),
    "unknown_judgment_key": (
        "queries.jsonl",
        1,
        "relevant[0]: unknown key 'grad' (allowed: doc_id, start, end, grade, quote, occurrence, context, page, page_label)",
    ),
    "duplicate_doc_id": ("corpus.jsonl", 4, "duplicate doc_id 'manual.md' (first at line 1)"),
    "duplicate_query_id": ("queries.jsonl", 5, "duplicate query_id 'q1' (first at line 1)"),
    "empty_text": ("corpus.jsonl", 3, "text of 'notes/2025-03-04.txt' is empty"),
    "empty_query": ("queries.jsonl", 2, "query text is empty"),
    "empty_document": ("docs/faq.md", None, "document is empty"),
    "no_queries": (
        "queries.jsonl",
        None,
        "no queries; " + next_steps_without_questions(BROKEN / "no_queries"),
    ),
    "no_documents": ("corpus.jsonl", None, "no documents"),
    "no_corpus": (
        "",
        None,
        "no corpus: no corpus.jsonl, no docs/ folder and no text, Markdown, reST, PDF, HTML, DOCX, PPTX or XLSX files in the folder itself",
    ),
    "both_corpora": (
        "",
        None,
        "both corpus.jsonl and docs/ found; keep one so the corpus is unambiguous",
    ),
    "no_doc_files": (
        "docs",
        None,
        "no text, Markdown, reST, PDF, HTML, DOCX, PPTX or XLSX files (skipped 1 file: 1 not a document format (.epub 1))",
    ),
    "unknown_doc_id": (
        "queries.jsonl",
        1,
        "relevant[0]: unknown doc_id 'manuel.md' (did you mean 'manual.md'?)",
    ),
    "start_without_end": (
        "queries.jsonl",
        1,
        "relevant[0]: start without end: give both offsets for a span, "
        "or neither for a whole-document judgment",
    ),
    "offset_not_int": (
        "queries.jsonl",
        1,
        "relevant[0]: start must be an integer, got number 86.0",
    ),
    "negative_start": ("queries.jsonl", 1, "relevant[0]: start -1 is negative"),
    "empty_span": ("queries.jsonl", 1, "relevant[0]: empty span: start 86 >= end 86"),
    "span_outside_text": (
        "queries.jsonl",
        1,
        "relevant[0]: span 86:260 is outside the text of 'manual.md' (255 characters)",
    ),
    "quote_mismatch": (
        "queries.jsonl",
        1,
        "relevant[0]: quote does not match the text of 'manual.md' at 86:130: "
        "quote 'The AQ-200 samples the air every 30 seconds.', "
        "text 'The AQ-200 samples the air every 60 seconds.'",
    ),
    "quote_not_located": (
        "queries.jsonl",
        1,
        "relevant[0]: quote not located in 'manual.md': quote not found; closest "
        'passage (similarity 0.97, a number: quote has "90", text has "60"): '
        '"The AQ-200 samples the air every 60 seconds." (dataset.fuzzy=0.9 '
        "accepts close matches)",
    ),
    "bad_grade": ("queries.jsonl", 1, "relevant[0]: grade must be an integer >= 0, got number -1"),
    "grade_not_int": (
        "queries.jsonl",
        1,
        "relevant[0]: grade must be an integer >= 0, got number 1.5",
    ),
    "beir_no_qrels": (
        "qrels/test.tsv",
        None,
        "no such file (BEIR queries need qrels/<split>.tsv; choose it with dataset.split=NAME, or --split NAME for sweep.validate and sweep.score)",
    ),
    "beir_unknown_query": ("qrels/test.tsv", 5, "unknown query-id 't9' (not in queries.jsonl)"),
    "beir_unknown_doc": ("qrels/test.tsv", 5, "unknown corpus-id 'd9'"),
    "beir_bad_score": ("qrels/test.tsv", 5, "score must be an integer >= 0, got 'high'"),
    "beir_columns": (
        "qrels/test.tsv",
        5,
        "expected 3 tab-separated columns (query-id, corpus-id, score), got 4",
    ),
    "beir_duplicate": (
        "qrels/test.tsv",
        5,
        "duplicate judgment of 'd1' for query 't1' (first at line 2)",
    ),
    "beir_no_judgments": ("qrels/test.tsv", None, "no judgments"),
}


def test_every_broken_fixture_is_listed():
    on_disk = {p.name for p in BROKEN.iterdir() if p.is_dir()} - {"many"}
    assert on_disk == set(RULES)


@pytest.mark.parametrize("name", sorted(RULES))
def test_each_rule_fails_with_file_line_and_message(name):
    file, line, message = RULES[name]
    path = BROKEN / name / file if file else BROKEN / name
    (problem,) = check_dataset(BROKEN / name)
    assert (problem.path, problem.line, problem.message) == (str(path), line, message)
    with pytest.raises(DatasetError) as e:
        load_dataset(BROKEN / name)
    where = f"{path}:{line}" if line is not None else str(path)
    assert str(e.value) == f"{where}: {message}"


def test_every_problem_is_reported_in_file_order():
    many = BROKEN / "many"
    assert [str(p) for p in check_dataset(many)] == [
        f"{many}/corpus.jsonl:4: duplicate doc_id 'faq.md' (first at line 2)",
        f"{many}/queries.jsonl:1: relevant[0]: unknown doc_id 'nope.md'",
        f"{many}/queries.jsonl:2: bad JSON: Expecting property name enclosed in double quotes (column 2)",
        f"{many}/queries.jsonl:6: duplicate query_id 'q4' (first at line 5)",
    ]


@pytest.mark.parametrize("name", ["project_jsonl", "project_docs", "project_docs_skipped", "beir"])
def test_valid_fixtures_have_no_problems(name):
    assert check_dataset(FIXTURES / name) == []


def test_bundled_kestrel_dataset_is_valid():
    problems = check_dataset(KESTREL)
    assert problems == [], "\n".join(map(str, problems[:20]))


# --------------------------------------------------------------------------- statistics


def test_distribution():
    d = Distribution.of([7, 1, 3, 10, 2, 4, 5, 6, 8, 9])
    assert (d.n, d.min, d.median, d.p90, d.max, d.total) == (10, 1, 5.5, 9, 10, 55)
    assert Distribution.of([]) == Distribution(0, 0, 0, 0, 0, 0)
    assert Distribution.of([4]).p90 == 4


def _partition(doc_id: str, bounds: list[int]) -> list[Chunk]:
    return [Chunk(doc_id, i, a, b, "", 0) for i, (a, b) in enumerate(pairwise(bounds))]


@given(n=st.integers(2, 300), data=st.data())
def test_count_straddling_matches_boundaries_inside_the_span(n, data):
    cuts = sorted(data.draw(st.sets(st.integers(1, n - 1), max_size=20)))
    bounds = [0, *cuts, n]
    spans = data.draw(
        st.lists(
            st.tuples(st.integers(0, n - 1), st.integers(1, n)).filter(lambda t: t[0] < t[1]),
            max_size=10,
        )
    )
    expected = sum(1 for s, e in spans if any(s < b < e for b in cuts))
    assert (
        count_straddling([("d", s, e) for s, e in spans], {"d": _partition("d", bounds)})
        == expected
    )


def test_count_straddling_overlapping_chunks_and_missing_docs():
    chunks = [Chunk("d", 0, 0, 10, "", 0), Chunk("d", 1, 5, 15, "", 0)]
    # [6, 14) lies inside the second chunk although it crosses the first one's end.
    assert count_straddling([("d", 6, 14), ("d", 2, 12), ("e", 0, 1)], {"d": chunks}) == 2


class _CharChunker:
    """Fixed-width character chunks: a stand-in whose boundaries are easy to reason about."""

    def __init__(self, size: int):
        self.width = size // 8

    def chunk(self, doc: Document) -> list[Chunk]:
        n = len(doc.text)
        return [
            Chunk(doc.doc_id, i, a, min(a + self.width, n), doc.text[a : a + self.width], 0)
            for i, a in enumerate(range(0, n, self.width))
        ]


def _stats_dataset() -> Dataset:
    docs = (Document("a", "x" * 100), Document("b", "y" * 40))
    queries = (
        Query("q1", "?", (Judgment("a", 10, 20, 2), Judgment("a", 30, 50, 1)), type="fact"),
        Query(
            "q2",
            "?",
            (Judgment("b", 0, 40, 2), Judgment("a", 0, 5, 0), Judgment("a")),
            type="multi",
        ),
        Query("q3", "?", (), type="unanswerable"),
        Query("q4", "?", (Judgment("b"),)),
    )
    return Dataset("toy", docs, queries)


def test_compute_statistics_counts():
    stats = compute_statistics(_stats_dataset(), count_tokens=len, make_chunker=_CharChunker)
    assert stats.n_documents == 2 and stats.doc_tokens.total == 140
    assert stats.by_type == (("(no type)", 1), ("fact", 1), ("multi", 1), ("unanswerable", 1))
    assert stats.n_unanswerable == 1
    assert (stats.n_span_judgments, stats.n_doc_judgments) == (4, 2)
    assert stats.by_grade == ((2, 2), (1, 3), (0, 1))
    # Evidence spans have grade > 0: the grade-0 span (0, 5) is not one.
    assert stats.spans_per_query == (("0", 2), ("1", 1), ("2", 1))
    assert (stats.span_chars.n, stats.span_chars.min, stats.span_chars.max) == (3, 10, 40)
    # widths 16, 32, 64 chars: [10,20) [30,50) of "a" and [0,40) of "b".
    assert [(s.size, s.n_chunks, s.straddling) for s in stats.straddle] == [
        (128, 7 + 3, 3),
        (256, 4 + 2, 2),
        (512, 2 + 1, 0),
    ]


def test_format_statistics_is_aligned_text():
    text = format_statistics(
        compute_statistics(_stats_dataset(), count_tokens=len, make_chunker=_CharChunker)
    )
    lines = text.splitlines()
    assert "queries     4   (1 unanswerable: relevant is [])" in lines
    assert "  128        10       3 of 3   100.0%" in lines
    header = next(line for line in lines if line.strip().startswith("n   min"))
    row = next(line for line in lines if line.strip().startswith("span characters"))
    assert len(header) == len(row) + len("   total")  # right-aligned columns end together


def test_statistics_with_the_real_token_chunker():
    stats = compute_statistics(
        load_dataset(FIXTURES / "project_jsonl"),
        make_chunker=lambda size: build_chunker("token", size=size),
    )
    # Every fixture document is shorter than 128 tokens: one chunk each, nothing cut.
    assert [(s.size, s.n_chunks, s.straddling, s.n_spans) for s in stats.straddle] == [
        (128, 3, 0, 3),
        (256, 3, 0, 3),
        (512, 3, 0, 3),
    ]
    assert stats.span_tokens.max == 15  # "Calibrate the sensor every 90 days with the CAL-2 kit."


# --------------------------------------------------------------------------- CLI


def _run(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "sweep.validate", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_cli_one_line_error_and_exit_1():
    result = _run(str(BROKEN / "quote_mismatch"))
    assert result.returncode == 1
    assert result.stdout == ""
    file, line, message = RULES["quote_mismatch"]
    assert result.stderr == f"{BROKEN / 'quote_mismatch' / file}:{line}: {message}\n"


def test_cli_lists_every_problem(capsys):
    assert main([str(BROKEN / "many")]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err == [str(p) for p in check_dataset(BROKEN / "many")] + ["4 problems"]


def test_cli_missing_directory(capsys):
    assert main(["/nonexistent/dataset"]) == 1
    assert capsys.readouterr().err == "/nonexistent/dataset: no such directory\n"


def test_cli_split_option_reaches_the_beir_loader(capsys):
    assert main([str(FIXTURES / "beir"), "--split", "dev"]) == 1
    assert "qrels/dev.tsv: no such file" in capsys.readouterr().err


def test_cli_success_prints_statistics():
    result = _run(str(FIXTURES / "beir"), "--split", "train")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    out = result.stdout
    assert out.startswith(f"{FIXTURES / 'beir'}: valid (beir, split train)\n")
    for section in (
        "queries by type",
        "evidence spans per query",
        "lengths (tokens are cl100k_base)",
        "evidence spans straddling a chunk boundary",
    ):
        assert section in out


def test_cli_says_which_files_of_docs_it_skipped():
    # Issue 17 item 12: hidden folders and other extensions were skipped without a count.
    result = _run(str(FIXTURES / "project_docs_skipped"))
    assert result.returncode == 0, result.stderr
    docs = FIXTURES / "project_docs_skipped" / "docs"
    assert result.stdout.splitlines()[:2] == [
        f"{FIXTURES / 'project_docs_skipped'}: valid (project_docs_skipped)",
        f"{docs}: skipped 6 files: 3 hidden (.obsidian/ 2, .draft.md 1); "
        "3 not a document format ((no extension) 1, .png 1, .zip 1); only text, Markdown, reST, PDF, HTML, DOCX, PPTX or XLSX files are read",
    ]
    assert "documents   5" in result.stdout  # Setup.MD and release.markdown are read
    assert result.stderr == ""  # said once, not again by the loader's logger


def test_cli_expands_a_quoted_home_path(tmp_path):
    (tmp_path / "set").symlink_to(FIXTURES / "project_jsonl")
    env = {**os.environ, "HOME": str(tmp_path), "HF_HUB_OFFLINE": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "sweep.validate", "~/set"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("~/set: valid (project_jsonl)\n")


@pytest.mark.parametrize("name", ["corpus.jsonl", "queries.jsonl"])
def test_cli_refuses_a_fifo_as_a_dataset_file_without_blocking(tmp_path, name):
    # Nothing writes to the FIFO: opening it would wait forever, so the command has a timeout.
    ds = tmp_path / "set"
    ds.mkdir()
    (ds / "corpus.jsonl").write_text('{"doc_id": "a", "text": "alpha"}\n')
    (ds / "queries.jsonl").write_text('{"query_id": "q", "query": "x", "relevant": []}\n')
    (ds / name).unlink()
    os.mkfifo(ds / name)
    result = _run(str(ds))
    assert result.returncode == 1
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"{ds / name}: is a FIFO") and "not a regular file" in line, line


# Issue 41 item 13: "istanbul office" was not found in "İstanbul office", and the
# closest passage's difference printed the folded form, "İ İ stanbul".
TURKISH_DOC = (
    "Visitors sign in at the İstanbul office reception. The dose is ½ a tablet twice a day."
)


def _quote_set(tmp_path: Path, *quotes: str) -> Path:
    (tmp_path / "corpus.jsonl").write_text(
        json.dumps({"doc_id": "visits.md", "text": TURKISH_DOC}, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
    (tmp_path / "queries.jsonl").write_text(
        "".join(
            json.dumps(
                {
                    "query_id": f"q{i}",
                    "query": "Where?",
                    "relevant": [{"doc_id": "visits.md", "quote": quote}],
                },
                ensure_ascii=False,
            )
            + "\n"
            for i, quote in enumerate(quotes, 1)
        ),
        encoding="utf-8",
    )
    return tmp_path


def test_cli_locates_a_quote_whatever_the_case_of_a_turkish_i(tmp_path, capsys):
    folder = _quote_set(tmp_path, "sign in at the istanbul office", "ISTANBUL OFFICE reception")
    offsets = tmp_path / "offsets.jsonl"
    assert main([str(folder), "--quotes", "--write-offsets", str(offsets)]) == 0
    out = capsys.readouterr().out
    assert "quotes: 2 located, 0 exact, 2 normalised, 0 fuzzy" in out
    written = [
        json.loads(line)["relevant"][0]["quote"] for line in offsets.read_text().splitlines()
    ]
    assert written == ["sign in at the İstanbul office", "İstanbul office reception"]


def test_cli_shows_the_closest_passage_and_what_differs_as_written(tmp_path, capsys):
    folder = _quote_set(tmp_path, "sign in at the Istanbul ofice", "The dose is 1/3 a tablet")
    assert main([str(folder)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0] == (
        f"{folder / 'queries.jsonl'}:1: relevant[0]: quote not located in 'visits.md': quote not "
        'found; closest passage (similarity 0.97, a word: quote has "ofice", text has "office"): '
        '"sign in at the İstanbul office" (dataset.fuzzy=0.9 accepts close matches)'
    )
    assert err[1] == (
        f"{folder / 'queries.jsonl'}:2: relevant[0]: quote not located in 'visits.md': quote not "
        'found; closest passage (similarity 0.89, words: quote has "1/3", text has "½"): '
        '"The dose is ½ a tablet" (dataset.fuzzy=0.9 accepts close matches)'
    )
