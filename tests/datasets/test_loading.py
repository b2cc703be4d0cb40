"""Loaders for the project layout (JSONL or a folder of files) and BEIR."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paths import ROOT
from sweep.core.types import Document, Judgment
from sweep.datasets.loading import (
    DatasetError,
    Problem,
    check_dataset,
    load_corpus,
    load_dataset,
    load_queries,
    scan_dataset,
    skipped_files,
)

FIXTURES = ROOT / "tests" / "fixtures"
PROJECT_JSONL = FIXTURES / "project_jsonl"
PROJECT_DOCS = FIXTURES / "project_docs"
BEIR = FIXTURES / "beir"
PROJECT_SKIPPED = FIXTURES / "project_docs_skipped"


def write_lines(path: Path, rows: list[object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )


# --------------------------------------------------------------------------- project format


def test_project_jsonl_documents():
    docs = load_corpus(PROJECT_JSONL / "corpus.jsonl")
    assert [d.doc_id for d in docs] == ["manual.md", "faq.md", "notes/2025-03-04.txt"]
    assert docs[0].title == "AQ-200 user manual"
    assert docs[0].text.startswith("# AQ-200 user manual\n\nPrice: 1 200 € per unit")
    assert load_corpus(PROJECT_JSONL) == docs  # a dataset directory finds corpus.jsonl


def test_project_queries_keep_every_field():
    ds = load_dataset(PROJECT_JSONL)
    assert ds.name == "project_jsonl"
    q1, q2, q3, q4 = ds.queries
    text = ds.by_id()["manual.md"].text
    (j,) = q1.relevant
    # The text has a "€" before the span: offsets are code points, not bytes.
    assert text[j.start : j.end] == j.quote == "The AQ-200 samples the air every 60 seconds."
    assert len(text[: j.start].encode("utf-8")) != j.start
    assert (q1.type, j.grade) == ("fact", 2)
    assert [x.is_span for x in q2.relevant] == [True, True, False]
    assert q2.relevant[2] == Judgment(doc_id="manual.md", grade=1)
    assert q3.relevant == (Judgment(doc_id="notes/2025-03-04.txt", grade=1),)  # grade defaults to 1
    assert q3.metadata == {"note": "document-level judgment"}
    assert q4.relevant == () and q4.type == "unanswerable"


def test_folder_of_files_gives_the_same_dataset_as_jsonl():
    folder, jsonl = load_dataset(PROJECT_DOCS), load_dataset(PROJECT_JSONL)
    assert [d.doc_id for d in folder.documents] == sorted(d.doc_id for d in jsonl.documents)
    assert folder.by_id().keys() == jsonl.by_id().keys()
    for doc_id, doc in folder.by_id().items():
        assert doc.text == jsonl.by_id()[doc_id].text
    assert folder.queries == jsonl.queries


def test_folder_titles_ids_and_raw_text():
    docs = {d.doc_id: d for d in load_corpus(PROJECT_DOCS / "docs")}
    assert docs["manual.md"].title == "AQ-200 user manual"  # first "# " heading
    assert docs["notes/2025-03-04.txt"].title == "2025-03-04"  # no heading: the file stem
    raw = (PROJECT_DOCS / "docs" / "faq.md").read_bytes().decode("utf-8")
    assert docs["faq.md"].text == raw
    assert load_corpus(PROJECT_DOCS) == load_corpus(PROJECT_DOCS / "docs")


def test_folder_keeps_crlf_and_skips_hidden_and_other_files(tmp_path):
    (tmp_path / "a.md").write_bytes(b"# Title A\r\nline one\r\nline two\r\n")
    (tmp_path / "b.epub").write_bytes(b"not a document")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "x.md").write_bytes(b"# hidden")
    (tmp_path / "# odd.txt").write_bytes(b"#not a heading\n")
    docs = load_corpus(tmp_path)
    assert [d.doc_id for d in docs] == ["# odd.txt", "a.md"]
    # Universal newlines would shift every offset after the first line.
    assert docs[1].text == "# Title A\r\nline one\r\nline two\r\n"
    assert docs[1].title == "Title A"
    assert docs[0].title == "# odd"


def test_folder_reads_upper_case_and_markdown_extensions_and_counts_what_it_skips(caplog):
    # Issue 17 item 12: .MD and hidden folders were skipped without a word.
    with caplog.at_level("WARNING", logger="sweep.datasets"):
        ds = load_dataset(PROJECT_SKIPPED)
    assert [d.doc_id for d in ds.documents] == [
        "Setup.MD",
        "faq.md",
        "manual.md",
        "notes/2025-03-04.txt",
        "notes/release.markdown",
    ]
    docs = PROJECT_SKIPPED / "docs"
    expected = (
        f"{docs}: skipped 6 files: 3 hidden (.obsidian/ 2, .draft.md 1); "
        "3 not a document format ((no extension) 1, .png 1, .zip 1); "
        "only text, Markdown, reST, PDF, HTML, DOCX, PPTX or XLSX files are read"
    )
    skipped = skipped_files(PROJECT_SKIPPED)
    assert skipped.hidden == (".obsidian/app.json", ".obsidian/workspace.json", "notes/.draft.md")
    assert skipped.other == ("LICENSE", "diagram.png", "spec.ZIP")
    assert [r.getMessage() for r in caplog.records] == [skipped.summary()]
    assert skipped.summary() == expected
    assert skipped_files(PROJECT_SKIPPED / "docs") == skipped
    assert skipped_files(PROJECT_DOCS) is not None and len(skipped_files(PROJECT_DOCS)) == 0
    assert skipped_files(PROJECT_JSONL) is None  # not a folder of files


def test_no_document_files_says_what_was_skipped(tmp_path):
    (tmp_path / "docs" / ".git").mkdir(parents=True)
    (tmp_path / "docs" / ".git" / "HEAD").write_text("ref")
    (tmp_path / "docs" / "guide.epub").write_text("Guide")
    write_lines(tmp_path / "queries.jsonl", [{"query_id": "q", "query": "?", "relevant": []}])
    (problem,) = check_dataset(tmp_path)
    assert problem.message == (
        "no text, Markdown, reST, PDF, HTML, DOCX, PPTX or XLSX files (skipped 2 "
        "files: 1 hidden (.git/ 1); 1 not a document format (.epub 1))"
    )


def test_a_folder_of_documents_with_its_questions_beside_them_is_a_dataset(tmp_path):
    # The same rule as sweep.generate's: corpus.jsonl, else docs/, else the folder's own files.
    (tmp_path / "guide.md").write_text("# Guide\nInstall with pip.\n")
    (tmp_path / "faq").mkdir()
    (tmp_path / "faq" / "one.txt").write_text("Ask us.\n")
    write_lines(
        tmp_path / "queries.jsonl",
        [{"query_id": "q", "query": "how to install?", "relevant": [{"doc_id": "guide.md"}]}],
    )
    (tmp_path / "qrels").mkdir()
    (tmp_path / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n")
    ds = load_dataset(tmp_path)
    assert [d.doc_id for d in ds.documents] == ["faq/one.txt", "guide.md"]
    assert [d.doc_id for d in load_corpus(tmp_path)] == ["faq/one.txt", "guide.md"]
    assert len(skipped_files(tmp_path)) == 0  # its questions are not skipped documents


def test_documents_without_questions_are_told_the_next_step(tmp_path):
    (tmp_path / "guide.md").write_text("# Guide\nInstall with pip.\n")
    (problem,) = check_dataset(tmp_path)
    assert problem.path == str(tmp_path / "queries.jsonl")
    assert problem.message.startswith("no such file: the questions to evaluate go there")
    assert f"python -m sweep.generate dataset.path={tmp_path} generate.out=" in problem.message
    # Both ways to a labelled set, and which one needs an LLM.
    assert (
        f"questions without labels: python -m sweep.evidence {tmp_path} --questions FILE "
        "proposes their evidence from your documents (BM25, no LLM)"
    ) in problem.message
    assert "writes a set with an LLM" in problem.message


def _crlf_set(tmp_path: Path, start: int, end: int, quote: str) -> list[Problem]:
    (tmp_path / "docs").mkdir(exist_ok=True)
    (tmp_path / "docs" / "a.md").write_bytes(b"# Title\r\nfirst line\r\nsecond line here\r\n")
    write_lines(
        tmp_path / "queries.jsonl",
        [
            {
                "query_id": "q",
                "query": "?",
                "relevant": [{"doc_id": "a.md", "start": start, "end": end, "quote": quote}],
            }
        ],
    )
    return check_dataset(tmp_path)


def test_a_quote_that_misses_because_of_line_endings_is_told_why(tmp_path):
    # Offsets counted in open(path).read()'s text: universal newlines dropped every \r.
    lf = "# Title\nfirst line\nsecond line here\n"
    start = lf.index("second line")
    (problem,) = _crlf_set(tmp_path, start, start + 11, "second line")
    assert (
        "the file has Windows line endings (\\r\\n) and these offsets fit its text with \\n only"
        in problem.message
        and "newline=''" in problem.message
    )
    # A quote copied with \n where the file has \r\n.
    (problem,) = _crlf_set(tmp_path, 9, 26, "first line\nsecond")
    assert "they differ only in line endings" in problem.message
    # Another mistake gets no line-ending hint.
    (problem,) = _crlf_set(tmp_path, 0, 7, "# Titel")
    assert "line endings" not in problem.message


def test_the_readme_recipe_for_offsets_is_right_on_crlf_files(tmp_path):
    # The recipe users are given: read with newline="", then index the quote.
    (tmp_path / "docs").mkdir()
    path = tmp_path / "docs" / "a.md"
    path.write_bytes(b"# Title\r\nfirst line\r\nsecond line here\r\n")
    text = open(path, encoding="utf-8", newline="").read()
    quote = "second line"
    start = text.index(quote)
    assert _crlf_set(tmp_path, start, start + len(quote), quote) == []


def test_byte_order_mark_does_not_hide_the_title(tmp_path):
    # Issue 17 item 12: "\ufeff# Title" gave the file name as title.
    (tmp_path / "guide.md").write_bytes("\ufeff# Setup guide\n\nPlug it in.\n".encode("utf-8"))
    (doc,) = load_corpus(tmp_path)
    assert doc.title == "Setup guide"
    # The text stays as on disk: offsets computed on open(...).read() keep counting the mark.
    assert doc.text == "\ufeff# Setup guide\n\nPlug it in.\n"
    assert {d.doc_id: d.title for d in load_dataset(PROJECT_SKIPPED).documents}[
        "Setup.MD"
    ] == "Setup guide"


def test_a_home_relative_path_is_expanded(tmp_path, monkeypatch):
    # Issue 17 item 12: Hydra needs 'dataset.path="~/x"', which arrives unexpanded.
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "set").mkdir()
    for name in ("corpus.jsonl", "queries.jsonl"):
        (tmp_path / "set" / name).write_bytes((PROJECT_JSONL / name).read_bytes())
    assert load_dataset("~/set") == load_dataset(tmp_path / "set")
    assert check_dataset("~/set") == []
    assert load_corpus("~/set/corpus.jsonl") == load_dataset(tmp_path / "set").documents
    docs = load_corpus("~/set")
    assert load_queries("~/set/queries.jsonl", docs) == load_dataset(tmp_path / "set").queries


def test_hydra_override_with_a_quoted_home_path_loads(tmp_path, monkeypatch):
    from hydra import compose, initialize_config_dir
    from hydra.errors import OverrideParseException
    from hydra.utils import instantiate

    from sweep.hydrakit.config import CONF_DIR, register

    register()
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "set").mkdir()
    for name in ("corpus.jsonl", "queries.jsonl"):
        (tmp_path / "set" / name).write_bytes((PROJECT_JSONL / name).read_bytes())
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        # What the README tells you to type: the quotes reach Hydra.
        for override in ('dataset.path="~/set"', "dataset.path='~/set'"):
            ds = instantiate(compose(config_name="config", overrides=[override]).dataset)
            assert ds.documents == load_dataset(tmp_path / "set").documents
        with pytest.raises(OverrideParseException):  # unquoted: Hydra's lexer rejects "~"
            compose(config_name="config", overrides=["dataset.path=~/set"])


def test_jsonl_accepts_bom_blank_lines_and_raw_line_separators(tmp_path):
    text = "first\u2028still the first line\nsecond"
    (tmp_path / "corpus.jsonl").write_bytes(
        b"\xef\xbb\xbf"
        + json.dumps({"doc_id": "d", "text": text}, ensure_ascii=False).encode()
        + b"\n\n  \n"
    )
    quote = "still the first line"
    start = text.index(quote)
    write_lines(
        tmp_path / "queries.jsonl",
        [
            {
                "query_id": "q",
                "query": "?",
                "relevant": [
                    {"doc_id": "d", "start": start, "end": start + len(quote), "quote": quote}
                ],
            }
        ],
    )
    ds = load_dataset(tmp_path)
    assert ds.documents == (Document(doc_id="d", text=text, title=""),)
    assert ds.queries[0].relevant[0].quote == quote


def test_corpus_metadata_collects_other_keys(tmp_path):
    write_lines(
        tmp_path / "corpus.jsonl",
        [{"doc_id": "d", "title": "T", "text": "x", "lang": "en", "metadata": {"version": 3}}],
    )
    (doc,) = load_corpus(tmp_path / "corpus.jsonl")
    assert doc.metadata == {"version": 3, "lang": "en"}


def test_load_queries_checks_against_the_given_documents():
    docs = load_corpus(PROJECT_JSONL)
    assert (
        load_queries(PROJECT_JSONL / "queries.jsonl", docs) == load_dataset(PROJECT_JSONL).queries
    )
    with pytest.raises(DatasetError) as e:
        load_queries(PROJECT_JSONL / "queries.jsonl", docs[:1])
    assert str(e.value).startswith(
        f"{PROJECT_JSONL / 'queries.jsonl'}:2: relevant[1]: unknown doc_id 'faq.md'"
    )
    assert len(e.value.problems) == 2  # faq.md (line 2) and the notes file (line 3)


# --------------------------------------------------------------------------- BEIR


def test_beir_documents_queries_and_grades():
    ds = load_dataset(BEIR)
    assert [(d.doc_id, d.title) for d in ds.documents] == [
        ("d1", "Sampling"),
        ("d2", "Warranty"),
        ("d3", ""),
    ]
    # queries.jsonl holds every split; only the test split's queries are evaluated.
    assert [q.query_id for q in ds.queries] == ["t1", "t2"]
    assert ds.queries[0].query == "sampling interval of the AQ-200"
    assert ds.queries[1].relevant == (Judgment("d2", grade=2), Judgment("d3", grade=0))
    assert all(not j.is_span for q in ds.queries for j in q.relevant)


def test_beir_split_selects_qrels_file():
    (q,) = load_dataset(BEIR, split="train").queries
    assert q.query_id == "train1" and q.relevant == (Judgment("d3", grade=1),)
    assert q.metadata == {"source": "train"}
    with pytest.raises(DatasetError, match=r"qrels/dev\.tsv: no such file"):
        load_dataset(BEIR, split="dev")


def test_beir_queries_file_path_and_headerless_space_separated_qrels(tmp_path):
    docs = load_corpus(BEIR / "corpus.jsonl")
    write_lines(tmp_path / "queries.jsonl", [{"_id": "a", "text": "warranty"}])
    (tmp_path / "qrels").mkdir()
    (tmp_path / "qrels" / "test.tsv").write_text("a d2 1\r\na d1 0\r\n", encoding="utf-8")
    (q,) = load_queries(tmp_path / "queries.jsonl", docs)
    assert q.relevant == (Judgment("d2", grade=1), Judgment("d1", grade=0))


def test_a_beir_query_id_given_twice_is_named_with_its_first_line(tmp_path):
    docs = load_corpus(BEIR / "corpus.jsonl")
    write_lines(
        tmp_path / "queries.jsonl",
        [{"_id": "a", "text": "warranty"}, {"_id": "a", "text": "again"}],
    )
    (tmp_path / "qrels").mkdir()
    (tmp_path / "qrels" / "test.tsv").write_text("a\td2\t1\n", encoding="utf-8")
    with pytest.raises(DatasetError) as e:
        load_queries(tmp_path / "queries.jsonl", docs)
    assert str(e.value) == f"{tmp_path / 'queries.jsonl'}:2: duplicate _id 'a' (first at line 1)"


# --------------------------------------------------------------------------- errors


def test_dataset_error_is_one_line_and_counts_the_rest():
    many = FIXTURES / "broken" / "many"
    with pytest.raises(DatasetError) as e:
        load_dataset(many)
    err = e.value
    assert isinstance(err, ValueError)
    assert "\n" not in str(err)
    assert len(err.problems) == 4
    assert str(err) == (
        f"{many / 'corpus.jsonl'}:4: duplicate doc_id 'faq.md' (first at line 2)"
        f" (and 3 more problems; run python -m sweep.validate {many})"
    )
    assert check_dataset(many) == err.problems
    assert scan_dataset(many) == (None, err.problems)


def test_problem_str_without_line_and_with_newlines():
    assert str(Problem("a/b.jsonl", None, "no queries")) == "a/b.jsonl: no queries"
    assert str(Problem("x", 3, "two\nlines")) == "x:3: two lines"
    single = DatasetError(Problem("x", 1, "bad"))
    assert str(single) == "x:1: bad" and single.problems == [Problem("x", 1, "bad")]


def test_missing_paths():
    with pytest.raises(DatasetError, match="nowhere: no such directory$"):
        load_dataset("nowhere")
    with pytest.raises(DatasetError, match="corpus.jsonl: not a directory"):
        load_dataset(PROJECT_JSONL / "corpus.jsonl")
    with pytest.raises(DatasetError, match="nothing.jsonl: no such file or directory$"):
        load_corpus(PROJECT_JSONL / "nothing.jsonl")


# --------------------------------------------------------------------------- properties

_text = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=60).filter(
    str.strip
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_text, data=st.data())
def test_any_span_round_trips_and_a_wrong_quote_is_caught(text, data):
    start = data.draw(st.integers(0, len(text) - 1))
    end = data.draw(st.integers(start + 1, len(text)))
    quote = text[start:end]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "docs").mkdir()
        # Through the file layout too: raw bytes in, the same code points out.
        (root / "docs" / "d.txt").write_bytes(text.encode("utf-8"))
        write_lines(
            root / "queries.jsonl",
            [
                {
                    "query_id": "q",
                    "query": "?",
                    "relevant": [{"doc_id": "d.txt", "start": start, "end": end, "quote": quote}],
                }
            ],
        )
        (j,) = load_dataset(root).queries[0].relevant
        assert (j.start, j.end, j.quote) == (start, end, quote)

        wrong = quote[:-1] + ("x" if quote[-1] != "x" else "y")
        write_lines(
            root / "queries.jsonl",
            [
                {
                    "query_id": "q",
                    "query": "?",
                    "relevant": [{"doc_id": "d.txt", "start": start, "end": end, "quote": wrong}],
                }
            ],
        )
        (problem,) = check_dataset(root)
        assert problem.line == 1 and "quote does not match" in problem.message


def test_grades_beyond_the_exponential_gain_range_are_rejected(tmp_path):
    from sweep.datasets.loading import MAX_GRADE, DatasetError, load_dataset

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n\nText.\n")
    (tmp_path / "queries.jsonl").write_text(
        json.dumps(
            {
                "query_id": "q",
                "query": "?",
                "relevant": [{"doc_id": "a.md", "grade": MAX_GRADE + 1}],
            }
        )
        + "\n"
    )
    with pytest.raises(DatasetError) as e:
        load_dataset(tmp_path)
    assert "queries.jsonl:1" in str(e.value) and f"larger than {MAX_GRADE}" in str(e.value)


# --------------------------------------------------------------------------- doc_ids that name files

UNSAFE_IDS = [
    ("../victim", "has a '..' segment"),
    ("/tmp/victim", "is an absolute path"),
    ("notes/../../victim", "has a '..' segment"),
    ("a\x00b", "control character"),
    ("a\nb", "control character"),
    ("\x1b[2Jx", "control character"),
    # shown as "report_exe.txt", a name that ends in ".exe": refused as well
    ("report_\u202etxt.exe", "bidirectional control character"),
]


@pytest.mark.parametrize("id_key", ["doc_id", "_id"])
def test_a_doc_id_that_could_name_a_file_outside_a_folder_is_refused(tmp_path, id_key):
    # sweep.extract writes OUT/<doc_id>.txt: "../victim" overwrote a file beside OUT.
    rows = [{id_key: doc_id, "text": "text"} for doc_id, _ in UNSAFE_IDS]
    write_lines(tmp_path / "corpus.jsonl", rows + [{id_key: "fine", "text": "fine"}])
    with pytest.raises(DatasetError) as e:
        load_corpus(tmp_path)
    problems = [str(p) for p in e.value.problems]
    assert len(problems) == len(UNSAFE_IDS)
    for line, (problem, (_, why)) in enumerate(zip(problems, UNSAFE_IDS), 1):
        assert (
            problem.startswith(f"{tmp_path / 'corpus.jsonl'}:{line}: {id_key} ") and why in problem
        )
        assert "\n" not in problem and "\x1b" not in problem and "\x00" not in problem


def test_a_judgment_on_a_doc_id_no_document_may_have_says_why(tmp_path):
    write_lines(tmp_path / "corpus.jsonl", [{"doc_id": "a.md", "text": "alpha text"}])
    write_lines(
        tmp_path / "queries.jsonl",
        [
            {"query_id": "q1", "query": "x", "relevant": [{"doc_id": "../a.md"}]},
            {"query_id": "q2", "query": "y", "relevant": [{"doc_id": "/etc/passwd"}]},
        ],
    )
    problems = [str(p) for p in check_dataset(tmp_path)]
    queries = tmp_path / "queries.jsonl"
    assert problems == [
        f"{queries}:1: relevant[0]: doc_id '../a.md' has a '..' segment: a doc_id must be a "
        "relative name without '..' segments, control characters or bidi controls "
        "(sweep.extract names a "
        "file after it)",
        f"{queries}:2: relevant[0]: doc_id '/etc/passwd' is an absolute path: a doc_id must be "
        "a relative name without '..' segments, control characters or bidi controls "
        "(sweep.extract names a "
        "file after it)",
    ]


def test_a_beir_judgment_on_an_unsafe_corpus_id_says_why(tmp_path):
    write_lines(tmp_path / "corpus.jsonl", [{"_id": "d1", "text": "alpha"}])
    write_lines(tmp_path / "queries.jsonl", [{"_id": "q1", "text": "alpha?"}])
    (tmp_path / "qrels").mkdir()
    (tmp_path / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\t../d1\t1\n")
    (problem,) = check_dataset(tmp_path)
    assert (problem.line, problem.message.split(":")[0]) == (
        2,
        "corpus-id '../d1' has a '..' segment",
    )


# --------------------------------------------------------------------------- empty documents


@pytest.mark.parametrize(
    "content",
    [b"", b"\xef\xbb\xbf", b"\xef\xbb\xbf \r\n\t\n"],
    ids=["empty", "bom-only", "bom-and-whitespace"],
)
def test_a_text_file_holding_only_a_byte_order_mark_is_empty(tmp_path, content):
    (tmp_path / "a.md").write_text("# A\n\nalpha\n")
    (tmp_path / "blank.md").write_bytes(content)
    with pytest.raises(DatasetError) as e:
        load_corpus(tmp_path)
    assert [str(p) for p in e.value.problems] == [f"{tmp_path / 'blank.md'}: document is empty"]
    assert [d.doc_id for d in load_corpus(tmp_path, skip_unreadable=True)] == ["a.md"]


@pytest.mark.parametrize("file", ["corpus.jsonl", "queries.jsonl"])
def test_a_lone_surrogate_escape_is_a_problem_naming_file_and_line(tmp_path, file):
    # JSON lets "\ud800" through, but no text holds half a character: the tokenizer, the
    # cache and every file written later would fail on it, far from the line that has it.
    rows = {
        "corpus.jsonl": [
            '{"doc_id": "a", "text": "alpha \\ud83d\\ude00 beta"}',
            '{"doc_id": "b", "text": "gamma"}',
        ],
        "queries.jsonl": [
            '{"query_id": "q1", "query": "alpha?", "relevant": []}',
            '{"query_id": "q2", "query": "beta?", "relevant": []}',
        ],
    }
    for name, lines in rows.items():
        (tmp_path / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert load_dataset(tmp_path).documents[0].text == "alpha \U0001f600 beta"  # a pair is fine
    lines = rows[file]
    lines[1] = (
        lines[1].replace("?", "\\ud800?")
        if file == "queries.jsonl"
        else lines[1].replace("gamma", "gam\\ud800ma")
    )
    (tmp_path / file).write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError) as e:
        load_dataset(tmp_path)
    assert [str(p) for p in e.value.problems] == [
        f"{tmp_path / file}:2: bad JSON: \\ud800 is half of a character (a lone surrogate), "
        "which no text can hold"
    ]


def test_a_line_nested_too_deeply_is_a_problem_naming_file_and_line(tmp_path):
    (tmp_path / "corpus.jsonl").write_text('{"doc_id": "a", "text": "alpha"}\n')
    (tmp_path / "queries.jsonl").write_text(
        '{"query_id": "q1", "query": "alpha?", "relevant": []}\n'
        + '{"query_id": "q2", "query": "x", "relevant": '
        + "[" * 100_000
        + "]" * 100_000
        + "}\n"
    )
    with pytest.raises(DatasetError) as e:
        load_dataset(tmp_path)
    assert [str(p) for p in e.value.problems] == [
        f"{tmp_path / 'queries.jsonl'}:2: bad JSON: nested too deeply"
    ]
