"""``python -m sweep.score`` on hand-written run files: outputs, reports and one-line errors."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from sweep.core.tokenization import count_tokens
from sweep.datasets.runfiles import read_run
from sweep.score.__main__ import main

MANUAL = "The AQ-200 sensor measures air quality. Calibrate it every six months. Clean the filter weekly."
FAQ = "Frequently asked questions. The warranty lasts two years from the date of purchase."
TERMS = "Terms of sale apply to every order placed online."


def write_jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    write_jsonl(
        tmp_path / "corpus.jsonl",
        [
            {"doc_id": "manual", "title": "Manual", "text": MANUAL},
            {"doc_id": "faq", "title": "FAQ", "text": FAQ},
            {"doc_id": "terms", "title": "Terms", "text": TERMS},
        ],
    )
    cal = MANUAL.index("Calibrate")
    war = FAQ.index("The warranty")
    write_jsonl(
        tmp_path / "queries.jsonl",
        [
            {
                "query_id": "calibrate",
                "query": "How often to calibrate?",
                "relevant": [{"doc_id": "manual", "start": cal, "end": cal + 32, "grade": 2}],
            },
            {
                "query_id": "warranty",
                "query": "How long is the warranty?",
                "relevant": [{"doc_id": "faq", "start": war, "end": len(FAQ)}],
            },
            {
                "query_id": "docs",
                "query": "Where is the manual and the FAQ?",
                "relevant": [{"doc_id": "manual"}, {"doc_id": "faq"}],
            },
            {"query_id": "parking", "query": "Where do I park?", "relevant": []},
        ],
    )
    return tmp_path


def run_cli(dataset: Path, run_lines, *extra: str, capsys) -> tuple[int, str, str, Path]:
    run = dataset / "run.jsonl"
    if isinstance(run_lines, str):
        run.write_text(run_lines, encoding="utf-8")
    else:
        write_jsonl(run, run_lines)
    out = dataset / "out"
    code = main(
        [
            "--corpus",
            str(dataset / "corpus.jsonl"),
            "--queries",
            str(dataset / "queries.jsonl"),
            "--run",
            str(run),
            "--out",
            str(out),
            *extra,
        ]
    )
    captured = capsys.readouterr()
    return code, captured.out, captured.err, out


def per_query(out: Path) -> dict[tuple[str, str, str], float]:
    with open(out / "per_query.csv", newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        assert next(reader) == ["query_id", "level", "metric", "value"]
        return {(q, level, m): float(v) for q, level, m, v in reader}


def test_scores_a_hand_written_run(dataset: Path, capsys) -> None:
    cal = MANUAL.index("Calibrate")
    lines = [
        # seed 000's shape: three chunks of the manual, then the FAQ
        {"query_id": "docs", "hits": ["manual", "manual", "manual", "faq", "terms"]},
        {
            "query_id": "calibrate",
            "hits": [
                {"doc_id": "terms", "start": 0, "end": 20},
                {
                    "doc_id": "manual",
                    "start": cal - 5,
                    "end": cal + 40,
                    "score": 0.7,
                    "chunk_id": "manual#1",
                    "text": MANUAL[cal - 5 : cal + 40],
                },
            ],
        },
        {"query_id": "ghost", "hits": ["faq"]},
    ]
    code, out_text, err, out = run_cli(dataset, lines, "--k", "1,3,5", capsys=capsys)
    assert code == 0, err
    rows = per_query(out)
    assert rows[("docs", "doc", "recall@3")] == 0.5
    assert rows[("docs", "doc", "recall@5")] == 1.0
    assert ("docs", "span", "recall@3") not in rows  # no spans: excluded at span level
    assert rows[("calibrate", "span", "mrr@3")] == 0.5
    assert rows[("calibrate", "span", "cov_recall@3")] == 1.0
    assert rows[("calibrate", "span", "cov_precision@3")] == 32 / (20 + 45)
    # absent from the run: an empty retrieval, scored 0 and reported
    assert rows[("warranty", "doc", "hit@5")] == 0.0
    assert not any(q == "parking" for q, _, _ in rows)
    assert "ghost" in err and "1 run line(s)" in err
    assert "'warranty'" in err and "empty retrieval" in err

    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["levels"]["doc"]["n_queries"] == 3
    assert summary["levels"]["doc"]["n_excluded"] == 1
    assert summary["levels"]["span"]["n_queries"] == 2
    assert summary["levels"]["span"]["n_excluded"] == 2
    assert set(summary["levels"]["doc"]["metrics"]["recall@3"]) == {"mean", "ci_low", "ci_high"}
    assert summary["run"]["n_unknown_query_ids"] == 1 and summary["run"]["unknown_query_ids"] == [
        "ghost"
    ]
    assert summary["run"]["missing_queries"] == ["warranty", "parking"]
    assert summary["settings"]["k"] == [1, 3, 5]
    md = (out / "summary.md").read_text(encoding="utf-8")
    assert md == out_text  # the printed table is the saved one
    assert "| recall@3 |" in md and "cov_iou@5" in md


def test_budgets_count_missing_tokens_with_the_default_tokenizer(dataset: Path, capsys) -> None:
    manual_tokens = count_tokens("cl100k_base", MANUAL)
    lines = [
        {
            "query_id": "docs",
            "hits": ["manual", {"doc_id": "faq", "start": 0, "end": 10, "n_tokens": 1}],
        },
        {"query_id": "warranty", "hits": [{"doc_id": "faq", "start": 0, "end": len(FAQ)}]},
    ]
    budgets = f"{manual_tokens - 1},{manual_tokens},{manual_tokens + 1}"
    code, _, err, out = run_cli(dataset, lines, "--budgets", budgets, capsys=capsys)
    assert code == 0, err
    rows = per_query(out)
    # A doc-id hit costs the whole document's tokens.
    assert rows[("docs", "doc", f"recall@{manual_tokens - 1}t")] == 0.0
    assert rows[("docs", "doc", f"recall@{manual_tokens}t")] == 0.5
    assert rows[("docs", "doc", f"recall@{manual_tokens + 1}t")] == 1.0
    faq_tokens = count_tokens("cl100k_base", FAQ)
    expected = 1.0 if faq_tokens <= manual_tokens - 1 else 0.0
    assert rows[("warranty", "span", f"recall@{manual_tokens - 1}t")] == expected


def test_exponential_gain_and_min_coverage_options(dataset: Path, capsys) -> None:
    cal = MANUAL.index("Calibrate")
    lines = [
        {"query_id": "calibrate", "hits": [{"doc_id": "manual", "start": cal, "end": cal + 16}]}
    ]
    code, _, err, out = run_cli(
        dataset, lines, "--min-coverage", "0.6", "--gain", "exponential", capsys=capsys
    )
    assert code == 0, err
    assert per_query(out)[("calibrate", "span", "recall@1")] == 0.0  # 16 of 32 characters < 60%
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert (
        summary["settings"]["gain"] == "exponential" and summary["settings"]["min_coverage"] == 0.6
    )


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ('{"query_id": "docs", "hits": ["manual"]\n', "run.jsonl:1: bad JSON"),
        ('\n{"query_id": "docs", "hits": ["nope"]}\n', "run.jsonl:2: hit 1: unknown doc_id 'nope'"),
        (
            '{"query_id": "docs", "hits": [{"doc_id": "faq", "start": 3}]}\n',
            "run.jsonl:1: hit 1: start without end",
        ),
        (
            '{"query_id": "docs", "hits": ["faq", {"doc_id": "faq", "start": 0, "end": 9999}]}\n',
            "run.jsonl:1: hit 2: span 0:9999 is not a non-empty span inside 'faq'",
        ),
        (
            '{"query_id": "docs", "hits": [{"doc_id": "faq", "start": 0, "end": 3, "text": "xyz"}]}\n',
            "run.jsonl:1: hit 1: text does not match 'faq' at 0:3",
        ),
        ('{"query_id": "docs", "hits": [{"doc_id": "faq", "strat": 0}]}\n', "unknown key 'strat'"),
        ('{"query_id": "docs", "hits": "manual"}\n', "run.jsonl:1: hits must be an array"),
        ('{"query_id": 7, "hits": []}\n', "run.jsonl:1: query_id must be a string"),
        ('{"hits": []}\n', "run.jsonl:1: missing key 'query_id'"),
        ('["docs"]\n', "run.jsonl:1: expected a JSON object"),
        (
            '{"query_id": "docs", "hits": []}\n{"query_id": "docs", "hits": []}\n',
            "run.jsonl:2: duplicate query_id 'docs' (first at line 1)",
        ),
        (
            '{"query_id": "docs", "hits": [{"doc_id": "faq", "n_tokens": -1}]}\n',
            "n_tokens must be an integer from 0",
        ),
        (
            '{"query_id": "docs", "hits": [{"doc_id": "faq", "n_tokens": 100000000000000000000000}]}\n',
            "n_tokens must be an integer from 0",
        ),
        ("[" * 100_000 + "\n", "run.jsonl:1: bad JSON: nested too deeply"),
        # Issue 17 item 10: each offset by name, with its value.
        (
            '{"query_id": "docs", "hits": [{"doc_id": "faq", "start": NaN, "end": 10}]}\n',
            "run.jsonl:1: hit 1: start must be an integer, got NaN",
        ),
        (
            '{"query_id": "docs", "hits": ["faq", {"doc_id": "faq", "start": 0, "end": 1.5}]}\n',
            "run.jsonl:1: hit 2: end must be an integer, got 1.5",
        ),
        (
            '{"query_id": "docs", "hits": [{"doc_id": "faq", "start": "3", "end": Infinity}]}\n',
            'run.jsonl:1: hit 1: start must be an integer, got string "3"; end must be an integer, got Infinity',
        ),
        (
            '{"query_id": "docs", "hits": [{"doc_id": "faq", "start": null, "end": true}]}\n',
            "run.jsonl:1: hit 1: start must be an integer, got null; end must be an integer, got true",
        ),
    ],
)
def test_malformed_run_lines_stop_with_one_line(
    dataset: Path, capsys, content: str, fragment: str
) -> None:
    code, _out_text, err, out = run_cli(dataset, content, capsys=capsys)
    assert code == 2
    assert fragment in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not (out / "per_query.csv").exists()  # nothing half-written


def test_bad_dataset_is_one_line(dataset: Path, capsys) -> None:
    with open(dataset / "queries.jsonl", "a", encoding="utf-8") as f:
        f.write('{"query_id": "bad", "query": "?", "relevant": [{"doc_id": "missing"}]}\n')
    code, _, err, _ = run_cli(dataset, [], capsys=capsys)
    assert code == 2
    assert "queries.jsonl:5" in err and "unknown doc_id" in err and err.count("\n") == 1


def test_bad_arguments_exit_2(dataset: Path, capsys) -> None:
    for args in (
        ["--k", "0,5"],
        ["--min-coverage", "1.5"],
        ["--gain", "log"],
        ["--budgets", "x"],
        ["--n-boot", "0"],
        ["--seed", "-1"],
        ["--k", "100000000000000000000"],
    ):
        with pytest.raises(SystemExit) as exit_info:
            run_cli(dataset, [], *args, capsys=capsys)
        assert exit_info.value.code == 2


def test_beir_format(tmp_path: Path, capsys) -> None:
    write_jsonl(
        tmp_path / "corpus.jsonl",
        [{"_id": "d1", "title": "", "text": MANUAL}, {"_id": "d2", "title": "", "text": FAQ}],
    )
    write_jsonl(
        tmp_path / "queries.jsonl",
        [{"_id": "1", "text": "calibration"}, {"_id": "2", "text": "warranty"}],
    )
    (tmp_path / "qrels").mkdir()
    (tmp_path / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n1\td1\t1\n2\td2\t2\n", encoding="utf-8"
    )
    code, _, err, out = run_cli(
        tmp_path,
        [{"query_id": "1", "hits": ["d2", "d1"]}, {"query_id": "2", "hits": ["d2"]}],
        capsys=capsys,
    )
    assert code == 0, err
    rows = per_query(out)
    assert rows[("1", "doc", "mrr@10")] == 0.5 and rows[("2", "doc", "ndcg@1")] == 1.0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert (
        summary["levels"]["span"]["n_queries"] == 0 and summary["levels"]["span"]["n_excluded"] == 2
    )


def test_read_run_sets_aside_unknown_queries(dataset: Path) -> None:
    from sweep.datasets.loading import load_corpus

    docs = load_corpus(dataset / "corpus.jsonl")
    path = write_jsonl(
        dataset / "r.jsonl", [{"query_id": "docs", "hits": ["faq"]}, {"query_id": "zz", "hits": []}]
    )
    run = read_run(path, docs, ["docs", "warranty"])
    assert list(run.hits) == ["docs"] and run.unknown_query_ids == ("zz",)
    assert run.hits["docs"][0].doc_id == "faq" and run.hits["docs"][0].start is None


def test_module_entry_point(dataset: Path) -> None:
    write_jsonl(dataset / "run.jsonl", [{"query_id": "docs", "hits": ["manual", "faq"]}])
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "sweep.score",
            "--corpus",
            str(dataset / "corpus.jsonl"),
            "--queries",
            str(dataset / "queries.jsonl"),
            "--run",
            str(dataset / "run.jsonl"),
            "--out",
            str(dataset / "o"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "| recall@10 |" in proc.stdout
    assert (dataset / "o" / "per_query.csv").is_file()


def score_module(dataset: Path, run_text: str) -> subprocess.CompletedProcess:
    """``python -m sweep.score`` in a subprocess on ``dataset`` and a run file holding ``run_text``."""
    run = dataset / "run.jsonl"
    run.write_text(run_text, encoding="utf-8")
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "sweep.score",
            "--corpus",
            str(dataset / "corpus.jsonl"),
            "--queries",
            str(dataset / "queries.jsonl"),
            "--run",
            str(run),
            "--out",
            str(dataset / "o"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_cli_names_the_offset_and_its_value(dataset: Path) -> None:
    proc = score_module(
        dataset, '{"query_id": "docs", "hits": [{"doc_id": "faq", "start": NaN, "end": 10}]}\n'
    )
    assert proc.returncode == 2
    assert proc.stderr == (
        f"sweep.score: error: {dataset / 'run.jsonl'}:1: hit 1: start must be an integer, got NaN\n"
    )


@pytest.mark.parametrize("content", ["", "\n  \n", "\ufeff\n"])
def test_cli_empty_run_file_is_an_error(dataset: Path, content: str) -> None:
    # Issue 17 item 10: it scored every query 0, exit 0, with one note.
    proc = score_module(dataset, content)
    assert proc.returncode == 2
    assert proc.stderr == (
        f"sweep.score: error: {dataset / 'run.jsonl'}: empty run file: "
        "no line with a query_id and its hits\n"
    )
    assert proc.stdout == "" and not (dataset / "o").exists()


def test_cli_run_of_another_question_set_is_an_error(dataset: Path) -> None:
    lines = "".join(json.dumps({"query_id": q, "hits": ["faq"]}) + "\n" for q in ("a1", "a2", "a3"))
    proc = score_module(dataset, lines)
    assert proc.returncode == 2
    assert proc.stderr == (
        f"sweep.score: error: {dataset / 'run.jsonl'}: none of its 3 query_ids is in "
        f"{dataset / 'queries.jsonl'} ('a1', 'a2', 'a3'): is it the run of another "
        "question set?\n"
    )
    assert not (dataset / "o").exists()


def test_cli_says_how_many_doc_id_hits_miss_at_span_level(dataset: Path) -> None:
    # Issue 17 item 10: doc-id-only hits earn nothing at span level, silently.
    cal = MANUAL.index("Calibrate")
    lines = [
        {
            "query_id": "calibrate",
            "hits": ["manual", {"doc_id": "manual", "start": cal, "end": cal + 32}, "faq"],
        },
        {"query_id": "warranty", "hits": ["faq"]},
        {"query_id": "docs", "hits": ["manual", "faq"]},  # no span judgments: nothing to say
    ]
    proc = score_module(dataset, "".join(json.dumps(line) + "\n" for line in lines))
    assert proc.returncode == 0, proc.stderr
    assert (
        "note: 3 hit(s) in 2 queries with evidence spans name only a doc_id: span-level metrics "
        "count them as misses (no offsets); document-level metrics credit them"
    ) in proc.stderr
    summary = json.loads((dataset / "o" / "summary.json").read_text(encoding="utf-8"))
    assert summary["run"]["n_doc_id_hits_at_span_level"] == 3
    rows = per_query(dataset / "o")
    assert rows[("calibrate", "span", "mrr@10")] == 0.5  # the doc-id hit at rank 1 is a miss
    assert rows[("calibrate", "doc", "mrr@10")] == 1.0


def test_cli_no_doc_id_note_for_span_hits(dataset: Path) -> None:
    cal = MANUAL.index("Calibrate")
    proc = score_module(
        dataset,
        json.dumps(
            {"query_id": "calibrate", "hits": [{"doc_id": "manual", "start": cal, "end": cal + 32}]}
        )
        + "\n",
    )
    assert proc.returncode == 0, proc.stderr
    assert "only a doc_id" not in proc.stderr


def test_a_run_on_a_paged_corpus_is_scored_by_page(tmp_path: Path, capsys) -> None:
    # A corpus row that lists its pages takes page judgments; hits with offsets retrieve
    # the pages they overlap, document-only hits none.
    page_1 = "Отчёт за первый квартал. Выручка выросла на 12%. "
    page_2 = "Расходы на логистику снизились. Поставки в марте стоили 4 млн рублей. "
    text = page_1 + page_2
    write_jsonl(
        tmp_path / "corpus.jsonl",
        [
            {
                "doc_id": "report.pdf",
                "text": text,
                "pages": [[0, len(page_1)], [len(page_1), len(text)]],
            },
            {"doc_id": "notes.md", "text": MANUAL},
        ],
    )
    write_jsonl(
        tmp_path / "queries.jsonl",
        [
            {
                "query_id": "march",
                "query": "Сколько стоили поставки в марте?",
                "relevant": [{"doc_id": "report.pdf", "page": 2}],
            },
            {
                "query_id": "both",
                "query": "Выручка и расходы?",
                "relevant": [
                    {"doc_id": "report.pdf", "page": 1},
                    {"doc_id": "report.pdf", "page": 2},
                ],
            },
            {
                "query_id": "manual",
                "query": "How often to calibrate?",
                "relevant": [{"doc_id": "notes.md", "quote": "Calibrate it every six months."}],
            },
        ],
    )
    cut = len(page_1)
    lines = [
        # page 1, then a chunk over the page break: page 2 at rank 2
        {
            "query_id": "march",
            "hits": [
                {"doc_id": "report.pdf", "start": 0, "end": 20},
                {"doc_id": "report.pdf", "start": cut - 10, "end": cut + 10},
            ],
        },
        # the document alone credits the document, no page
        {
            "query_id": "both",
            "hits": ["report.pdf", {"doc_id": "report.pdf", "start": 5, "end": 9}],
        },
        {"query_id": "manual", "hits": [{"doc_id": "notes.md", "start": 0, "end": 40}]},
    ]
    code, out_text, err, out = run_cli(tmp_path, lines, "--k", "1,2", capsys=capsys)
    assert code == 0, err
    rows = per_query(out)
    assert rows[("march", "page", "recall@1")] == 0.0
    assert rows[("march", "page", "mrr@2")] == 0.5
    assert rows[("both", "doc", "recall@1")] == 1.0
    assert rows[("both", "page", "recall@1")] == 0.0
    assert rows[("both", "page", "recall@2")] == 0.5
    assert not any(q == "manual" and level == "page" for q, level, _ in rows)
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert (summary["levels"]["page"]["n_queries"], summary["levels"]["page"]["n_excluded"]) == (
        2,
        1,
    )
    assert "page (n=2, excluded 1)" in out_text
    assert "span- and page-level metrics count them as misses" in err
