"""A folder of real PDF, HTML, DOCX and Markdown files with quote-only questions: read,
located, chunked with exact offsets, cached, and every unreadable file reported together."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest

from documents import (
    corrupt,
    write_docx,
    write_encrypted_pdf,
    write_html,
    write_image_only_pdf,
    write_pdf,
)
from sweep.chunking import build_chunker
from sweep.datasets import extraction
from sweep.datasets.corpus import DOC_ID_RULE
from sweep.datasets.loading import DatasetError, check_dataset, load_dataset
from sweep.datasets.quotes import normalise
from sweep.extract.__main__ import main as extract_main
from sweep.validate.__main__ import main as validate_main

HANDBOOK = [
    "# Employee handbook",
    "Badges are printed at the front desk. The first replacement is free; each further "
    "replacement in the same calendar year costs €15, deducted from the next payroll, and "
    "takes one working day to print.",
    "Remote work is allowed on up to three days a week, agreed with your manager in "
    "writing before the quarter starts.",
]
WEB = [
    "# Office guide",
    "The office opens at 08:00 and closes at 19:00 on weekdays; on Saturdays the building "
    "is closed and the alarm is armed.",
]
WORD = [
    "# Travel policy",
    "Flights inside the EU must be booked at least 14 days before departure.",
    "- Economy class for flights under six hours",
]
QUESTIONS = [
    (
        "q1",
        "Is a second lost badge free?",
        "manual.pdf",
        "each further replacement in the same calendar year costs €15",
    ),
    ("q2", "When does the office close?", "guide.html", "closes at 19:00 on weekdays"),
    (
        "q3",
        "How early must EU flights be booked?",
        "travel.docx",
        "Flights inside the EU must be booked at least 14 days before departure.",
    ),
    ("q4", "Where are notes?", "notes.md", "Notes live in the wiki."),
]


def _folder(root: Path) -> Path:
    docs = root / "docs"
    docs.mkdir(parents=True)
    write_pdf(
        docs / "manual.pdf",
        [HANDBOOK[:2], HANDBOOK[2:]],
        header="Kestrel Labs handbook",
        hyphenate={"replacement"},
        title="Employee handbook",
    )
    write_html(docs / "guide.html", "Office guide", WEB)
    write_docx(docs / "travel.docx", WORD)
    (docs / "notes.md").write_text("# Notes\n\nNotes live in the wiki.\n", encoding="utf-8")
    _questions(root, QUESTIONS)
    return root


def _questions(root: Path, questions) -> None:
    lines = [
        json.dumps(
            {"query_id": q, "query": text, "relevant": [{"doc_id": doc, "quote": quote}]},
            ensure_ascii=False,
        )
        for q, text, doc, quote in questions
    ]
    (root / "queries.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture(autouse=True)
def _fresh_memo():
    extraction._memo.clear()
    yield
    extraction._memo.clear()


def test_every_quote_is_located_and_every_chunk_is_a_slice_of_the_extracted_text(tmp_path):
    ds = load_dataset(_folder(tmp_path), cache_dir="off")
    texts = {d.doc_id: d.text for d in ds.documents}
    assert sorted(texts) == ["guide.html", "manual.pdf", "notes.md", "travel.docx"]
    for q, (_, _, doc, quote) in zip(ds.queries, QUESTIONS):
        (j,) = q.relevant
        assert j.located in ("exact", "normalised")
        assert normalise(texts[doc][j.start : j.end]) == normalise(quote)
    # No markup, script or page furniture reaches the text a chunker sees.
    for doc, text in texts.items():
        for debris in ("<", "Page 1 of", "Kestrel Labs handbook", "cookie", "function("):
            assert debris not in text, (doc, debris)
    chunker = build_chunker(strategy="token", size=16, overlap=4)
    for d in ds.documents:
        for c in chunker.chunk(d):
            assert c.text == d.text[c.start : c.end]
    pdf = ds.by_id()["manual.pdf"]
    assert pdf.metadata["reader"] == "pypdf" and len(pdf.metadata["pages"]) == 2
    start, end = pdf.metadata["pages"][1]
    assert "Remote work" in pdf.text[start:end]


def test_two_pdf_readers_give_the_same_questions(tmp_path):
    folder = _folder(tmp_path)
    a = load_dataset(folder, cache_dir="off")
    b = load_dataset(folder, cache_dir="off", reader={"pdf": "pdfplumber"})
    assert a.evaluation_key() == b.evaluation_key()
    assert [q.query_id for q in a.queries] == [q.query_id for q in b.queries]
    assert b.by_id()["manual.pdf"].metadata["reader"] == "pdfplumber"


def test_extracted_texts_are_cached_as_json_and_reused(tmp_path, monkeypatch):
    folder = _folder(tmp_path / "set")
    cache = tmp_path / "cache"
    first = load_dataset(folder, cache_dir=cache)
    entries = list(cache.rglob("*.json"))
    assert len(entries) == 3  # pdf, html, docx; text files are read as they are
    assert all(
        json.loads(e.read_text(encoding="utf-8"))["format"] == extraction.CACHE_FORMAT
        for e in entries
    )
    extraction._memo.clear()
    from sweep.datasets.readers import pdf as pdf_module

    def never(*args, **kwargs):
        raise AssertionError("a cached PDF was parsed again")

    monkeypatch.setattr(pdf_module.PypdfReader, "read", never)
    assert load_dataset(folder, cache_dir=cache) == first


def test_unreadable_files_are_listed_together_and_can_be_skipped(tmp_path, caplog):
    folder = _folder(tmp_path)
    docs = folder / "docs"
    write_encrypted_pdf(docs / "secret.pdf")
    write_image_only_pdf(docs / "scan.pdf")
    (docs / "broken.docx").write_bytes(corrupt((docs / "travel.docx").read_bytes()))
    (docs / "empty.pdf").write_bytes(b"")
    (docs / "menu.html").write_text(
        "<html><body><nav><a href='/'>Home</a></nav></body></html>", encoding="utf-8"
    )
    _questions(folder, QUESTIONS + [("q5", "What is secret?", "secret.pdf", "A secret paragraph.")])
    problems = check_dataset(folder, cache_dir="off")
    by_file = {Path(p.path).name: p.message for p in problems}
    assert set(by_file) == {"secret.pdf", "scan.pdf", "broken.docx", "empty.pdf", "menu.html"}
    assert by_file["scan.pdf"].startswith("no text layer: OCR is not supported; convert it first")
    assert by_file["secret.pdf"].startswith("encrypted PDF")
    assert by_file["empty.pdf"] == "empty file"
    assert all("\n" not in str(p) for p in problems)
    with caplog.at_level(logging.WARNING, logger="sweep.datasets"):
        ds = load_dataset(folder, cache_dir="off", skip_unreadable=True)
    assert [q.query_id for q in ds.queries] == ["q1", "q2", "q3", "q4"]
    log = " ".join(r.getMessage() for r in caplog.records)
    assert "skipped 5 unreadable files" in log and "left out 1 question" in log


def test_a_repeated_quote_needs_a_hint_and_a_missing_one_shows_the_closest_passage(tmp_path):
    folder = _folder(tmp_path)
    (folder / "docs" / "notes.md").write_text("# Notes\n\nAsk Ana. Ask Ana.\n", encoding="utf-8")
    rows = [
        {
            "query_id": "q",
            "query": "Who?",
            "relevant": [{"doc_id": "notes.md", "quote": "Ask Ana."}],
        }
    ]
    (folder / "queries.jsonl").write_text(json.dumps(rows[0]) + "\n", encoding="utf-8")
    (problem,) = check_dataset(folder, cache_dir="off")
    assert problem.line == 1 and "found 2 times" in problem.message
    rows[0]["relevant"][0]["occurrence"] = 2
    (folder / "queries.jsonl").write_text(json.dumps(rows[0]) + "\n", encoding="utf-8")
    (q,) = load_dataset(folder, cache_dir="off").queries
    assert (q.relevant[0].start, q.relevant[0].end) == (18, 26)
    _questions(folder, [("q", "Fee?", "manual.pdf", "each further replacement costs €25")])
    (problem,) = check_dataset(folder, cache_dir="off")
    assert (
        "quote not located in 'manual.pdf'" in problem.message
        and "closest passage" in problem.message
    )


def test_a_quote_whose_words_the_reader_moved_names_the_other_readers(tmp_path, capsys):
    # A reader that moves words (trafilatura moved inline code to a sentence's end) leaves
    # every word of the quote near the closest passage, in another order.
    folder = tmp_path
    (folder / "docs").mkdir()
    (folder / "docs" / "build.html").write_text(
        "<html><head><title>Build</title></head><body><article><h1>Build</h1><p>Run the build from the "
        "source folder. The log goes to /var/log/build.log when the build ends.</p></article></body></html>",
        encoding="utf-8",
    )
    (folder / "docs" / "build.md").write_text(
        "# Build\n\nRun the build from the source folder. The log goes to /var/log/build.log.\n",
        encoding="utf-8",
    )
    _questions(
        folder,
        [
            ("q1", "Where?", "build.html", "Run the build from the folder source"),
            ("q2", "Where?", "build.md", "Run the build from the folder source"),
            ("q3", "Where?", "build.html", "Run the build from the branch folder"),
        ],
    )
    assert validate_main([str(folder)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].endswith(
        '"Run the build from the source folder"; the text around it has every word of the quote, in '
        "another order; the html reader trafilatura may have moved the text: try "
        "dataset.reader.html=markitdown (--reader html=markitdown) (dataset.fuzzy=0.9 accepts close matches)"
    )
    assert err[1].endswith(
        '"Run the build from the source folder"; the text around it has every word of the '
        "quote, in another order (dataset.fuzzy=0.9 accepts close matches)"
    )  # (one reader)
    assert "another order" not in err[2]  # ("branch" is not in the text)
    assert validate_main([str(folder), "--reader", "html=markitdown"]) == 1
    assert (
        "the html reader markitdown may have moved the text: try dataset.reader.html=trafilatura "
        "(--reader html=trafilatura)"
    ) in capsys.readouterr().err


def test_a_draft_question_says_how_to_confirm_it(tmp_path):
    folder = _folder(tmp_path)
    row = {"query_id": "q", "query": "Fee?", "proposed": [{"doc_id": "notes.md", "quote": "x"}]}
    (folder / "queries.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    (problem,) = check_dataset(folder, cache_dir="off")
    assert problem.message.endswith(
        "mark the right passages of 'proposed' with \"keep\": true and run python -m "
        f"sweep.evidence {folder} --accept {folder / 'queries.jsonl'} "
        f"--out {folder / 'queries.accepted.jsonl'}"
    )


def test_a_web_page_saved_as_text_is_flagged(tmp_path, caplog):
    folder = _folder(tmp_path)
    (folder / "docs" / "page.txt").write_text(
        "<!DOCTYPE html><html><body><p>Hi</p></body></html>", encoding="utf-8"
    )
    with caplog.at_level(logging.WARNING, logger="sweep.datasets"):
        load_dataset(folder, cache_dir="off")
    assert any("looks like HTML markup" in r.getMessage() for r in caplog.records)


def test_extract_writes_the_exact_texts_and_never_touches_a_foreign_folder(tmp_path, capsys):
    folder = _folder(tmp_path / "set")
    out = tmp_path / "out"
    assert extract_main([str(folder), str(out)]) == 0
    ds = load_dataset(folder, cache_dir="off")
    for d in ds.documents:
        assert (out / f"{d.doc_id}.txt").read_bytes().decode("utf-8") == d.text
    assert extract_main([str(folder), str(out)]) == 0  # its own folder is rewritten
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "keep.txt").write_text("mine")
    assert extract_main([str(folder), str(foreign)]) == 2
    assert (foreign / "keep.txt").read_text() == "mine" and len(list(foreign.iterdir())) == 1
    assert "was not written by sweep.extract" in capsys.readouterr().err


def test_a_bad_reader_name_is_one_line_with_a_suggestion(tmp_path):
    with pytest.raises(DatasetError, match=r"did you mean 'pdfplumber'"):
        load_dataset(_folder(tmp_path), reader={"pdf": "pdfplumbr"})


def test_validate_says_how_each_quote_was_located_and_writes_the_offsets(tmp_path, capsys):
    from sweep.validate.__main__ import main as validate_main

    folder = _folder(tmp_path / "set")
    out = tmp_path / "with-offsets.jsonl"
    assert validate_main([str(folder), "--quotes", "--write-offsets", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "quotes: 4 located, " in printed
    assert f"{folder / 'queries.jsonl'}:1: relevant[0] in 'manual.pdf' at " in printed
    texts = {d.doc_id: d.text for d in load_dataset(folder, cache_dir="off").documents}
    for line in out.read_text(encoding="utf-8").splitlines():
        (item,) = json.loads(line)["relevant"]
        assert texts[item["doc_id"]][item["start"] : item["end"]] == item["quote"]
    with pytest.raises(SystemExit) as exit_:  # an existing file is never overwritten
        validate_main([str(folder), "--write-offsets", str(out)])
    assert exit_.value.code == 2
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_:  # checked before the dataset is read
        validate_main([str(folder), "--write-offsets", str(tmp_path / "no" / "such.jsonl")])
    assert exit_.value.code == 2
    assert f"--write-offsets {tmp_path / 'no' / 'such.jsonl'}: no folder" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("option", "words"),
    [
        ({"fuzzy": 1.5}, "dataset.fuzzy must be null or a similarity in (0, 1], got 1.5"),
        ({"fuzzy": True}, "dataset.fuzzy must be null or a similarity in (0, 1], got True"),
        ({"skip_unreadable": "yes"}, "dataset.skip_unreadable must be true or false, got 'yes'"),
        ({"reader": {"odt": "x"}}, "dataset.reader: "),
    ],
)
def test_a_bad_reading_setting_is_one_line_naming_it(tmp_path, option, words):
    with pytest.raises(DatasetError) as e:
        load_dataset(_folder(tmp_path), cache_dir="off", **option)
    assert words in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize(
    ("judgment", "words"),
    [
        (
            {"quote": "Notes live in the wiki.", "occurrence": 0},
            "occurrence must be an integer >= 1 (1 is the first place the quote appears), got number 0",
        ),
        (
            {"quote": "Notes live in the wiki.", "context": "  "},
            "context must be a few words near the quote, got string '  '",
        ),
        (
            {"occurrence": 1},
            "occurrence and context choose among the places a quote appears; give a quote",
        ),
        (
            {"start": 9, "end": 32, "quote": "Notes live in the wiki.", "occurrence": 1},
            "occurrence and context are for a quote without offsets",
        ),
        ({"quote": "   "}, "quote is empty"),
    ],
)
def test_a_bad_quote_hint_is_a_file_line_error(tmp_path, judgment, words):
    folder = _folder(tmp_path)
    row = {"query_id": "q", "query": "Where?", "relevant": [{"doc_id": "notes.md", **judgment}]}
    (folder / "queries.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    (problem,) = check_dataset(folder, cache_dir="off")
    assert problem.line == 1 and words in problem.message


def test_a_malformed_reader_option_is_refused_by_the_command(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        extract_main(
            [str(_folder(tmp_path / "set")), str(tmp_path / "out"), "--reader", "pdfplumber"]
        )
    assert exit_.value.code == 2
    assert (
        "expected FORMAT=READER (e.g. pdf=pdfplumber), got 'pdfplumber'" in capsys.readouterr().err
    )


# -- links and special files under docs/ ----------------------------------------------------


def _linked(root: Path) -> Path:
    """A dataset whose docs/ links to a file and a folder inside it, and to a file and a
    folder outside it (a stand-in for /etc/passwd)."""
    ds = root / "set"
    (ds / "docs").mkdir(parents=True)
    (ds / "shared" / "team").mkdir(parents=True)
    outside = root / "outside"
    (outside / "dir").mkdir(parents=True)
    (ds / "docs" / "notes.md").write_text("# Notes\n\nNotes live in the wiki.\n")
    (ds / "shared" / "policy.md").write_text("# Policy\n\nBadges cost €15.\n")
    (ds / "shared" / "team" / "roster.md").write_text("# Roster\n\nAda and Lin.\n")
    (outside / "passwd.md").write_text("root:x:0:0:root:/root:/bin/bash\n")
    (outside / "dir" / "secret.md").write_text("# Secret\n\nnot for the index\n")
    (ds / "docs" / "policy.md").symlink_to(ds / "shared" / "policy.md")
    (ds / "docs" / "team").symlink_to(Path("..") / "shared" / "team")  # relative, inside
    (ds / "docs" / "passwd.md").symlink_to(outside / "passwd.md")
    (ds / "docs" / "private").symlink_to(outside / "dir")
    (ds / "docs" / "gone.md").symlink_to(ds / "nowhere.md")  # dangling, inside
    (ds / "docs" / "loop").symlink_to(Path(".."))  # up to the dataset folder: a cycle
    _questions(ds, [("q1", "What are notes?", "notes.md", "Notes live in the wiki.")])
    return ds


def test_links_inside_the_dataset_folder_are_followed_and_links_out_of_it_refused(tmp_path, caplog):
    ds = _linked(tmp_path)
    with caplog.at_level(logging.WARNING, logger="sweep.datasets"):
        docs = {d.doc_id: d.text for d in load_dataset(ds, cache_dir="off").documents}
    assert sorted(docs) == ["notes.md", "policy.md", "team/roster.md"]
    assert not any("root:x" in text for text in docs.values())
    (line,) = [r.getMessage() for r in caplog.records if "skipped" in r.getMessage()]
    assert line == (
        f"{ds / 'docs'}: skipped 4 files: 2 not a regular file (gone.md, loop); 2 links "
        "leaving the dataset folder (passwd.md, private); only text, Markdown, reST, "
        "PDF, HTML, DOCX, PPTX or XLSX files are read; dataset.follow_links=true "
        "(--follow-links) follows links that leave the dataset folder"
    )
    # The link up to the dataset folder is not walked: docs/ is not read again through it.
    followed = load_dataset(ds, cache_dir="off", follow_links=True).documents
    assert sorted(d.doc_id for d in followed) == [
        "notes.md",
        "passwd.md",
        "policy.md",
        "private/secret.md",
        "team/roster.md",
    ]


def test_follow_links_must_be_true_or_false(tmp_path):
    with pytest.raises(
        DatasetError, match=r"dataset.follow_links must be true or false, got 'yes'"
    ):
        load_dataset(_linked(tmp_path), follow_links="yes")


def test_fifos_sockets_and_devices_under_docs_are_skipped_and_counted_never_opened(tmp_path):
    # Nothing writes to the FIFO: opening it would block, so the command runs with a timeout.
    import socket
    import stat
    import subprocess
    import sys

    ds = _folder(tmp_path / "set")
    docs = ds / "docs"
    os.mkfifo(docs / "pipe.md")
    os.symlink(docs / "pipe.md", docs / "pipe-link.md")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(docs / "sock.md"))
    sock.close()
    special = ["pipe-link.md", "pipe.md", "sock.md"]
    try:
        os.mknod(docs / "tty.md", 0o666 | stat.S_IFCHR, os.makedev(5, 0))
        special.append("tty.md")
    except PermissionError:
        pass
    done = subprocess.run(
        [sys.executable, "-m", "sweep.validate", str(ds), "--reader", "pdf=pypdf"],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache")),
    )
    assert done.returncode == 0, done.stderr
    assert (
        f"{docs}: skipped {len(special)} files: {len(special)} not a regular file "
        f"({', '.join(special)}); only"
    ) in done.stdout
    if "tty.md" not in special:
        pytest.skip("os.mknod is not permitted here: the device case was not run")


def test_a_fifo_given_as_the_questions_or_a_run_file_is_refused_without_blocking(tmp_path):
    import subprocess
    import sys

    ds = _folder(tmp_path / "set")
    fifo = tmp_path / "questions.jsonl"
    os.mkfifo(fifo)
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    for command in (
        [
            "sweep.evidence",
            str(ds),
            "--questions",
            str(fifo),
            "--out",
            str(tmp_path / "draft.jsonl"),
        ],
        [
            "sweep.score",
            "--corpus",
            str(ds),
            "--queries",
            str(ds / "queries.jsonl"),
            "--run",
            str(fifo),
        ],
    ):
        done = subprocess.run(
            [sys.executable, "-m", *command], capture_output=True, text=True, timeout=120, env=env
        )
        assert done.returncode == 2, (command, done.stderr)
        assert f"{fifo}: " in done.stderr and "is a FIFO, not a regular file" in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr


# -- sweep.extract writes inside its folder only ----------------------------------------------


def test_extract_never_writes_outside_its_folder(tmp_path, capsys):
    # A corpus.jsonl whose doc_ids are paths out of OUT: the trial's "../victim" overwrote
    # victim.txt (exit 0); an absolute doc_id overwrote its file, then crashed.
    victim = tmp_path / "victim.txt"
    victim.write_text("mine")
    absolute = tmp_path / "absolute"
    (absolute.parent / "absolute.txt").write_text("mine too")
    ds = tmp_path / "set"
    ds.mkdir()
    (ds / "corpus.jsonl").write_text(
        "".join(
            json.dumps(r) + "\n"
            for r in [
                {"doc_id": "../victim", "text": "pwned"},
                {"doc_id": str(absolute), "text": "pwned"},
                {"doc_id": "fine", "text": "fine"},
            ]
        )
    )
    out = tmp_path / "out"
    assert extract_main([str(ds), str(out)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"sweep.extract: error: {ds / 'corpus.jsonl'}:1: doc_id '../victim' has a "
        f"'..' segment: {DOC_ID_RULE}",
        f"sweep.extract: error: {ds / 'corpus.jsonl'}:2: doc_id '{absolute}' is an "
        f"absolute path: {DOC_ID_RULE}",
    ]
    assert victim.read_text() == "mine" and (tmp_path / "absolute.txt").read_text() == "mine too"
    assert not out.exists()


def test_writing_texts_refuses_a_doc_id_that_leaves_the_folder(tmp_path):
    # The writer checks too, whatever gave it the documents.
    from sweep.core.types import Document
    from sweep.datasets.texts import OutputFolderError, write_texts

    (tmp_path / "victim.txt").write_text("mine")
    out = tmp_path / "out"
    fine = Document(doc_id="fine", text="fine")
    write_texts([fine], out)
    (out / "sub").symlink_to(tmp_path)  # a link in a folder sweep.extract wrote before
    for doc_id in ("../victim", str(tmp_path / "victim"), "sub/victim"):
        with pytest.raises(OutputFolderError, match="victim"):
            write_texts([fine, Document(doc_id=doc_id, text="pwned")], out)
    assert (tmp_path / "victim.txt").read_text() == "mine"
    assert sorted(p.name for p in out.iterdir()) == ["extracted.jsonl", "fine.txt", "sub"]


def test_extract_writes_a_document_with_a_name_too_long_for_a_file_and_reruns(tmp_path, capsys):
    # A 253-character file name plus ".txt" is past the 255 bytes of a file name: the first
    # run failed half-way and the rerun refused the folder as "not written by sweep.extract".
    ds = tmp_path / "set"
    ds.mkdir()
    long_name = "n" * 250 + ".md"
    (ds / long_name).write_text("# Long\n\nA long name.\n")
    (ds / "short.md").write_text("# Short\n\nA short name.\n")
    out = tmp_path / "out"
    for _ in range(2):
        assert extract_main([str(ds), str(out)]) == 0, capsys.readouterr().err
        index = [json.loads(line) for line in (out / "extracted.jsonl").read_text().splitlines()]
        files = {row["doc_id"]: out / row["file"] for row in index}
        assert files[long_name].read_text() == "# Long\n\nA long name.\n"
        assert files["short.md"] == out / "short.md.txt"
    assert len(list(out.iterdir())) == 3


def test_an_extract_stopped_half_way_is_rerun_in_the_same_folder(tmp_path):
    # The second document cannot be written ("a.txt" is the first one's file, not a folder):
    # one line naming it, and the folder is still recognised as sweep.extract's.
    from sweep.core.types import Document
    from sweep.datasets.texts import OutputFolderError, write_texts

    out = tmp_path / "out"
    with pytest.raises(OutputFolderError, match=r"cannot write the text of document 'a.txt/b'"):
        write_texts([Document(doc_id="a", text="A"), Document(doc_id="a.txt/b", text="B")], out)
    written = write_texts([Document(doc_id="a", text="A"), Document(doc_id="c", text="C")], out)
    assert sorted(p.name for p in out.iterdir()) == ["a.txt", "c.txt", "extracted.jsonl"]
    assert [p.read_text() for p in written.files] == ["A", "C"]


def test_file_names_with_line_breaks_and_escapes_are_one_escaped_line_each(tmp_path, capsys):
    # A name with a line break split one error into two; an ANSI escape and U+202E reached
    # the terminal raw.
    from sweep.validate.__main__ import main as validate_main

    ds = tmp_path / "set"
    (ds / "docs").mkdir(parents=True)
    (ds / "docs" / "good.md").write_text("# Good\n\nFine text.\n")
    (ds / "docs" / "two\nlines.md").write_text("# Two\n\ntext\n")
    (ds / "docs" / "red\x1b[31m\u202egpj.md").write_text("# Red\n\ntext\n")
    _questions(ds, [("q1", "fine?", "good.md", "Fine text.")])
    assert validate_main([str(ds)]) == 1
    err = capsys.readouterr().err.splitlines()
    rule = (
        "the file's name holds a control character (NUL, a line break, an escape, ...); rename it"
    )
    assert err == [
        f"{ds / 'docs'}/red\\x1b[31m\\u202egpj.md: {rule}",
        f"{ds / 'docs'}/two\\nlines.md: {rule}",
        "2 problems",
    ]
    assert extract_main([str(ds), str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all("\x1b" not in line and "\u202e" not in line for line in err)


def test_extract_refuses_a_name_with_a_bidi_control_and_writes_no_file_named_after_it(tmp_path):
    # U+202E shows "report_\u202egpj.md" as "report_dm.jpg": a file sweep.extract would write
    # under a name that reads otherwise than it is. Refused like a control character.
    import subprocess
    import sys

    ds = tmp_path / "set"
    (ds / "docs").mkdir(parents=True)
    (ds / "docs" / "good.md").write_text("# Good\n\nFine text.\n")
    (ds / "docs" / "report_\u202egpj.md").write_text("# Report\n\ntext\n")
    out = tmp_path / "out"
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    done = subprocess.run(
        [sys.executable, "-m", "sweep.extract", str(ds), str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line == (
        f"sweep.extract: error: {ds / 'docs'}/report_\\u202egpj.md: the file's name "
        "holds a bidirectional control character (U+200E, U+200F, U+202A-U+202E, "
        "U+2066-U+2069 or U+061C), which shows a name otherwise than it is; rename it"
    )
    assert not out.exists() or not any("\u202e" in p.name for p in out.rglob("*"))
