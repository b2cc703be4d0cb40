"""The questions of a dataset and their judgments: a project ``queries.jsonl`` (evidence by
offsets, by a quote located in the document's text, :mod:`sweep.datasets.quotes`, or by a
page of a paged document, :mod:`sweep.datasets.pages`), or BEIR ``queries.jsonl`` rows
with document-level judgments in ``qrels/<split>.tsv``.

Every span judgment on a paged document carries the pages its span overlaps
(``Judgment.pages``): its units at the ``page`` level."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from sweep.core.checks import is_int
from sweep.core.files import file_kind, name_problem
from sweep.core.suggest import did_you_mean
from sweep.core.types import Judgment, Query
from sweep.datasets.corpus import DOC_ID_RULE, Corpus, ReadOptions
from sweep.datasets.pages import pages_of_span
from sweep.datasets.problems import (
    Report,
    describe_value,
    jsonl_objects,
    metadata_of,
    required_str,
    short,
    text_lines,
)
from sweep.datasets.quotes import QuoteLocation
from sweep.datasets.readers.registry import READERS

__all__ = [
    "MAX_GRADE",
    "QRELS_HEADER",
    "QUERIES_FILE",
    "next_steps_without_questions",
    "read_queries",
]

log = logging.getLogger(__name__)

QUERIES_FILE = "queries.jsonl"
QRELS_HEADER = ("query-id", "corpus-id", "score")
# "score" and "keep" are a proposal's BM25 score and mark from sweep.evidence, kept when a
# proposal is moved into "relevant" by hand as it is; they say nothing more and are ignored.
_JUDGMENT_KEYS = frozenset(
    {
        "doc_id",
        "start",
        "end",
        "grade",
        "quote",
        "occurrence",
        "context",
        "page",
        "page_label",
        "score",
        "keep",
    }
)
_ALLOWED_KEYS = "doc_id, start, end, grade, quote, occurrence, context, page, page_label"
# What a page judgment replaces: the page is the span.
_SPAN_KEYS = ("start", "end", "quote", "occurrence", "context")
# Page labels shown when a page_label names no page: the first ones and the last.
_LABELS_SHOWN = 8
# difflib over every id of a big BEIR corpus would make each error slow.
_SUGGEST_LIMIT = 20_000
_UNSIGNED = re.compile(r"[0-9]+")
#: Largest relevance grade: 2^grade - 1 (eval.gain=exponential) must stay finite
#: when summed over a ranking.
MAX_GRADE = 100


def read_queries(
    path: Path, corpus: Corpus, split: str, report: Report, options: ReadOptions
) -> tuple[Query, ...]:
    file = path / QUERIES_FILE if path.is_dir() else path
    if not file.is_file():
        if file.exists():  # a folder, a FIFO: never opened
            report.add(file, None, f"is {file_kind(file.stat().st_mode)}, not a regular file")
        elif path.is_dir():
            report.add(
                file,
                None,
                "no such file: the questions to evaluate go there, one JSON "
                "object per line (docs/your-data.md); " + next_steps_without_questions(path),
            )
        else:
            report.add(file, None, "no such file")
        return ()
    problems_before = len(report.problems)
    rows = list(jsonl_objects(file, report))
    if not rows:
        if len(report.problems) == problems_before:
            report.add(
                file,
                None,
                "no queries; "
                + next_steps_without_questions(path if path.is_dir() else file.parent),
            )
        return ()
    first = rows[0][1]
    if "_id" in first and "query_id" not in first:
        return _beir_queries(file, rows, corpus, split, report)
    return _project_queries(file, rows, corpus, report, options)


def next_steps_without_questions(dataset: Path) -> str:
    """The two ways to a labelled set, and which one needs an LLM: said wherever a dataset
    turns out to have no questions."""
    return (
        f"questions without labels: python -m sweep.evidence {dataset} --questions FILE "
        "proposes their evidence from your documents (BM25, no LLM), then --accept writes "
        "the ones you keep; no questions yet: python -m sweep.generate "
        f"dataset.path={dataset} generate.out=NEW_FOLDER llm.base_url=URL llm.model=NAME "
        "writes a set with an LLM"
    )


class _OnSkippedFile(Exception):
    """A question whose evidence is in a file left out by ``dataset.skip_unreadable``."""


def _project_queries(
    file: Path,
    rows: list[tuple[int, dict[str, Any]]],
    corpus: Corpus,
    report: Report,
    options: ReadOptions,
) -> tuple[Query, ...]:
    queries: list[Query] = []
    left_out = 0
    first_line: dict[str, int] = {}
    known = {"query_id", "query", "relevant", "type"}
    for lineno, row in rows:
        where = (file, lineno)
        query_id = required_str(row, "query_id", where, report)
        if query_id is not None and not report.first_time(
            first_line, query_id, where, f"query_id {query_id!r}"
        ):
            query_id = None
        text = required_str(row, "query", where, report, what="query text")
        qtype = row.get("type")
        if qtype is not None and not isinstance(qtype, str):
            report.add(*where, f"type must be a string, got {describe_value(qtype)}")
        # A reference answer (sweep.answers judges correctness against it).
        answer = row.get("answer")
        bad_answer = answer is not None and not (isinstance(answer, str) and answer.strip())
        if bad_answer:
            report.add(*where, f"answer must be a non-empty string, got {describe_value(answer)}")
        try:
            relevant = _judgments(row, where, corpus, report, options)
        except _OnSkippedFile:
            left_out += 1
            continue
        if query_id is None or text is None or relevant is None or bad_answer:
            continue
        if qtype is not None and not isinstance(qtype, str):
            continue
        queries.append(
            Query(
                query_id=query_id,
                query=text,
                relevant=relevant,
                type=qtype or None,
                metadata=metadata_of(row, known),
            )
        )
    if left_out:
        log.warning(
            "%s: left out %d question%s whose evidence is in a skipped unreadable file",
            file,
            left_out,
            "s" if left_out != 1 else "",
        )
    return tuple(queries)


def _judgments(
    row: Mapping[str, Any],
    where: tuple[Path, int],
    corpus: Corpus,
    report: Report,
    options: ReadOptions,
) -> tuple[Judgment, ...] | None:
    if "relevant" not in row:
        if "proposed" in row:
            draft = where[0]  # the command to run, with this draft's own names
            report.add(
                *where,
                "not labelled yet: this is a draft of proposed evidence; mark "
                "the right passages of 'proposed' with \"keep\": true and run "
                f"python -m sweep.evidence {draft.parent} --accept {draft} "
                f"--out {draft.parent / 'queries.accepted.jsonl'}",
            )
        else:
            report.add(
                *where,
                "missing key 'relevant' (use [] for a question with no answer in "
                "the corpus; python -m sweep.evidence proposes passages)",
            )
        return None
    items = row["relevant"]
    if not isinstance(items, list):
        report.add(*where, f"relevant must be a list, got {describe_value(items)}")
        return None
    judgments: list[Judgment] = []
    ok = True
    if any(isinstance(item, dict) and item.get("doc_id") in corpus.skipped for item in items):
        raise _OnSkippedFile
    for i, item in enumerate(items):
        judgment = _judgment(item, f"relevant[{i}]", where, corpus, report, options)
        ok = ok and judgment is not None
        if judgment is not None:
            judgments.append(judgment)
    return tuple(judgments) if ok else None


def _judgment(
    item: Any,
    label: str,
    where: tuple[Path, int],
    corpus: Corpus,
    report: Report,
    options: ReadOptions,
) -> Judgment | None:
    """One ``{doc_id, start?, end?, grade?, quote?, occurrence?, context?}`` or ``{doc_id,
    page | page_label, grade?}``; reports every rule it breaks. A quote without offsets is
    located in the document's text; a page is its text's range."""

    def bad(message: str) -> None:
        report.add(*where, f"{label}: {message}")

    if not isinstance(item, dict):
        bad(f"expected an object, got {describe_value(item)}")
        return None
    errors_before = len(report.problems)
    for key in sorted(set(item) - _JUDGMENT_KEYS):
        bad(f"unknown key {key!r} (allowed: {_ALLOWED_KEYS})")

    doc_id = item.get("doc_id")
    text: str | None = None
    if "doc_id" not in item:
        bad("missing key 'doc_id'")
    elif not isinstance(doc_id, str):
        bad(f"doc_id must be a string, got {describe_value(doc_id)}")
    elif doc_id in corpus.texts:
        text = corpus.texts[doc_id]
    elif not corpus.is_reported(doc_id):
        bad(_unknown("doc_id", doc_id, corpus))

    grade = item.get("grade", 1)
    if not is_int(grade) or grade < 0:
        bad(f"grade must be an integer >= 0, got {describe_value(grade)}")
    elif grade > MAX_GRADE:
        bad(f"grade {grade} is larger than {MAX_GRADE} (exponential gain 2^grade would overflow)")

    page = _page(item, doc_id if text is not None else None, corpus, bad)

    has_start, has_end = "start" in item, "end" in item
    start, end = item.get("start"), item.get("end")
    offsets_ok = False
    if has_start != has_end:
        bad(
            f"{'start' if has_start else 'end'} without {'end' if has_start else 'start'}: "
            "give both offsets for a span, or neither for a whole-document judgment"
        )
    elif has_start:
        offsets_ok = True
        for key, value in (("start", start), ("end", end)):
            if not is_int(value):
                bad(f"{key} must be an integer, got {describe_value(value)}")
                offsets_ok = False
        if offsets_ok:
            if start < 0:
                bad(f"start {start} is negative")
                offsets_ok = False
            elif start >= end:
                bad(f"empty span: start {start} >= end {end}")
                offsets_ok = False
            elif text is not None and end > len(text):
                bad(
                    f"span {start}:{end} is outside the text of {doc_id!r} ({len(text)} characters)"
                )
                offsets_ok = False

    located: str | None = None
    hints = _hints(item, bad)
    hinted = hints is not None and any(h is not None for h in hints)
    # (a page judgment with hints is told once, by _page, to leave them out)
    if "quote" not in item and hinted and not _names_page(item):
        bad("occurrence and context choose among the places a quote appears; give a quote")
    if "quote" in item:
        quote = item["quote"]
        if not isinstance(quote, str):
            bad(f"quote must be a string, got {describe_value(quote)}")
        elif not has_start and not has_end:
            if not quote.strip():
                bad("quote is empty")
            elif text is not None and hints is not None:
                found = corpus.quote_index(doc_id).locate(
                    quote, occurrence=hints[0], context=hints[1], fuzzy=options.fuzzy
                )
                if isinstance(found, QuoteLocation):
                    start, end, located = found.start, found.end, found.how
                else:
                    fuzzy = (
                        " (dataset.fuzzy=0.9 accepts close matches)"
                        if options.fuzzy is None and found.reason == "not found"
                        else ""
                    )
                    moved = _other_reader_hint(doc_id, corpus) if found.reordered else ""
                    bad(f"quote not located in {doc_id!r}: {found.message()}{moved}{fuzzy}")
        elif hinted:
            bad(
                "occurrence and context are for a quote without offsets; these offsets already "
                "say where it is"
            )
        elif offsets_ok and text is not None and text[start:end] != quote:
            bad(
                f"quote does not match the text of {doc_id!r} at {start}:{end}: "
                f"quote {short(quote, 50)}, text {short(text[start:end], 50)}"
                f"{_line_end_hint(text, start, end, quote)}"
            )

    if len(report.problems) > errors_before or text is None:
        return None
    if page is not None:
        number, first, last = page
        return Judgment(
            doc_id=doc_id,
            start=first,
            end=last,
            grade=grade,
            page=number,
            page_label=item.get("page_label"),
            pages=(page,),
        )
    pages = pages_of_span(corpus.pages(doc_id)[0], start, end) if start is not None else ()
    if located is not None:
        return Judgment(
            doc_id=doc_id,
            start=start,
            end=end,
            grade=grade,
            quote=item["quote"],
            occurrence=hints[0],
            context=hints[1],
            located=located,
            pages=pages,
        )
    return Judgment(
        doc_id=doc_id,
        start=start if has_start else None,
        end=end if has_end else None,
        grade=grade,
        quote=item.get("quote"),
        pages=pages,
    )


def _page(
    item: Mapping[str, Any], doc_id: str | None, corpus: Corpus, bad
) -> tuple[int, int, int] | None:
    """``(number, start, end)`` of the page a judgment names by ``page`` or ``page_label``
    in document ``doc_id`` (None: an unknown document, checked elsewhere); None when it
    names none or its page is wrong (reported)."""
    if not _names_page(item):
        return None
    given = [key for key in ("page", "page_label") if key in item]
    if len(given) == 2:
        bad("give page or page_label, not both: either names the page")
        return None
    key = given[0]
    mixed = [k for k in _SPAN_KEYS if k in item]
    if mixed:
        bad(
            f"{key} names a whole page: leave out {', '.join(mixed)} (a span inside the page "
            "is given by a quote or offsets without page)"
        )
        return None
    value = item[key]
    if key == "page" and (not is_int(value) or value < 1):
        bad(
            "page must be an integer >= 1 (the first page is 1, as viewers number them), "
            f"got {describe_value(value)}"
        )
        return None
    if key == "page_label" and not (isinstance(value, str) and value.strip()):
        bad(
            'page_label must be the label a page prints, as a string ("iv", "A-3"), '
            f"got {describe_value(value)}"
        )
        return None
    if doc_id is None:
        return None
    pages, labels = corpus.pages(doc_id)
    if not pages:
        bad(f"{doc_id!r} has no pages ({_pageless(doc_id, corpus)}); use a quote or offsets")
        return None
    count = f"{len(pages)} page{'s' if len(pages) != 1 else ''}"
    if key == "page":
        number = int(value)
        if number > len(pages):
            bad(f"page {number} of {doc_id!r} is past its last page ({count})")
            return None
        named = f"page {number}"
    else:
        if not labels:
            bad(
                f'page_label {value!r}: {doc_id!r} has no page labels; use "page": N '
                f"(1 to {len(pages)})"
            )
            return None
        matches = [n for n, label in enumerate(labels, 1) if label == value]
        if not matches:
            bad(
                f"page_label {value!r} is none of the page labels of {doc_id!r} "
                f"({_shown_labels(labels)}){did_you_mean(value, labels)}"
            )
            return None
        if len(matches) > 1:
            numbers = ", ".join(map(str, matches[:-1])) + f" and {matches[-1]}"
            bad(f'page_label {value!r} is on pages {numbers} of {doc_id!r}; use "page": N')
            return None
        number = matches[0]
        named = f"page {number} (labelled {value!r})"
    start, end = pages[number - 1]
    if start == end:
        bad(
            f"{named} of {doc_id!r} has no text (its reader found none on it: a scan, a "
            "picture or a blank page); name a page with text, or give a quote"
        )
        return None
    return number, start, end


def _names_page(item: Mapping[str, Any]) -> bool:
    return "page" in item or "page_label" in item


def _pageless(doc_id: str, corpus: Corpus) -> str:
    """What a document without pages is, for a page judgment on it: ``a .md file``."""
    meta = next((d.metadata for d in corpus.documents if d.doc_id == doc_id), {})
    suffix = PurePosixPath(doc_id).suffix.lower()
    if isinstance(meta, Mapping) and "format" in meta and suffix:
        return f"a {suffix} file"
    return 'a corpus.jsonl document without "pages"'


def _shown_labels(labels: tuple[str, ...]) -> str:
    """``labels 'i', 'ii', ..., '12' (14 pages)``, the first few and the last two."""
    if len(labels) <= _LABELS_SHOWN:
        return "labels " + ", ".join(short(label, 30) for label in labels)
    head = [short(label, 30) for label in labels[: _LABELS_SHOWN - 2]]
    tail = [short(label, 30) for label in labels[-2:]]
    return f"labels {', '.join(head)}, ..., {', '.join(tail)} ({len(labels)} pages)"


def _other_reader_hint(doc_id: str, corpus: Corpus) -> str:
    """What to try when a quote's words are in the document in another order: the reader
    that made its text may have moved them, and its format has other readers."""
    meta = next((d.metadata for d in corpus.documents if d.doc_id == doc_id), {})
    fmt, used = meta.get("format"), meta.get("reader")
    others = [name for name in READERS.get(fmt, ()) if name != used]
    if not others:
        return ""
    choices = " or ".join(f"dataset.reader.{fmt}={name} (--reader {fmt}={name})" for name in others)
    return f"; the {fmt} reader {used} may have moved the text: try {choices}"


def _hints(item: Mapping[str, Any], bad) -> tuple[int | None, str | None] | None:
    """``(occurrence, context)`` of a judgment, None when either is malformed (reported)."""
    occurrence, context = item.get("occurrence"), item.get("context")
    ok = True
    if occurrence is not None and (not is_int(occurrence) or occurrence < 1):
        bad(
            f"occurrence must be an integer >= 1 (1 is the first place the quote appears), "
            f"got {describe_value(occurrence)}"
        )
        ok = False
    if context is not None and not (isinstance(context, str) and context.strip()):
        bad(f"context must be a few words near the quote, got {describe_value(context)}")
        ok = False
    return (occurrence, context) if ok else None


def _line_end_hint(text: str, start: int, end: int, quote: str) -> str:
    """Why a quote misses when the document has Windows line endings: offsets counted in
    a copy read with universal newlines (``open(path).read()`` turns ``\r\n`` into
    ``\n``), or a quote copied with ``\n`` where the file has ``\r\n``."""
    if "\r" not in text:
        return ""
    if text.replace("\r\n", "\n")[start:end] == quote:
        return (
            "; the file has Windows line endings (\\r\\n) and these offsets fit its text "
            "with \\n only: compute offsets on the text read with open(path, "
            "encoding='utf-8', newline='')"
        )
    crlf = quote.replace("\r\n", "\n").replace("\n", "\r\n")
    if text.startswith(crlf, start):
        return (
            "; they differ only in line endings: the file has \\r\\n where the quote "
            "has \\n; copy the quote from the text read with open(path, encoding='utf-8', "
            "newline='')"
        )
    return ""


def _unknown(key: str, doc_id: str, corpus: Corpus) -> str:
    """Why a judgment's document is not in the corpus: a doc_id no document may have
    (absolute, ``..``, a control character), else unknown, with the closest known id."""
    unsafe = name_problem(doc_id)
    if unsafe is not None:
        return f"{key} {doc_id!r} {unsafe}: {DOC_ID_RULE}"
    return f"unknown {key} {doc_id!r}{_suggestion(doc_id, corpus)}"


def _suggestion(doc_id: str, corpus: Corpus) -> str:
    if len(corpus.texts) > _SUGGEST_LIMIT:
        return ""
    return did_you_mean(doc_id, corpus.texts, cutoff=0.75)


def _beir_queries(
    file: Path, rows: list[tuple[int, dict[str, Any]]], corpus: Corpus, split: str, report: Report
) -> tuple[Query, ...]:
    texts: dict[str, tuple[str, dict[str, Any]]] = {}
    first_line: dict[str, int] = {}
    for lineno, row in rows:
        where = (file, lineno)
        query_id = required_str(row, "_id", where, report)
        text = required_str(row, "text", where, report, what="query text")
        if query_id is None:
            continue
        if not report.first_time(first_line, query_id, where, f"_id {query_id!r}"):
            continue
        if text is not None:
            texts[query_id] = (text, metadata_of(row, {"_id", "text"}))

    qrels = file.parent / "qrels" / f"{split}.tsv"
    judged = _read_qrels(qrels, set(first_line), corpus, report)
    # A BEIR queries.jsonl holds the queries of every split; the split's qrels
    # say which of them are evaluated.
    return tuple(
        Query(
            query_id=qid, query=texts[qid][0], relevant=tuple(judged[qid]), metadata=texts[qid][1]
        )
        for qid in first_line
        if qid in judged and qid in texts
    )


def _read_qrels(
    path: Path, query_ids: set[str], corpus: Corpus, report: Report
) -> dict[str, list[Judgment]]:
    if not path.is_file():
        report.add(
            path,
            None,
            "no such file (BEIR queries need qrels/<split>.tsv; choose it with dataset.split=NAME, or --split NAME for sweep.validate and sweep.score)",
        )
        return {}
    judged: dict[str, list[Judgment]] = {}
    first_line: dict[tuple[str, str], int] = {}
    rows = 0
    for lineno, line in text_lines(path, report):
        line = line.rstrip("\r\n")
        # BEIR writes tabs; hand-made files often use spaces.
        fields = [f.strip() for f in (line.split("\t") if "\t" in line else line.split())]
        if rows == 0 and tuple(f.lower() for f in fields) == QRELS_HEADER:
            continue
        rows += 1
        if len(fields) != 3:
            report.add(
                path,
                lineno,
                f"expected 3 tab-separated columns (query-id, corpus-id, score), got {len(fields)}",
            )
            continue
        qid, doc_id, score = fields
        ok = True
        if qid not in query_ids:
            report.add(path, lineno, f"unknown query-id {qid!r} (not in queries.jsonl)")
            ok = False
        if doc_id not in corpus.texts:
            if not corpus.is_reported(doc_id):
                report.add(path, lineno, _unknown("corpus-id", doc_id, corpus))
            ok = False
        grade = int(score) if _UNSIGNED.fullmatch(score) else -1
        if grade < 0:
            report.add(path, lineno, f"score must be an integer >= 0, got {score!r}")
            ok = False
        elif grade > MAX_GRADE:
            report.add(
                path,
                lineno,
                f"score {grade} is larger than {MAX_GRADE} (exponential gain "
                "2^grade would overflow)",
            )
            ok = False
        if not report.first_time(
            first_line, (qid, doc_id), (path, lineno), f"judgment of {doc_id!r} for query {qid!r}"
        ):
            continue
        if ok:
            judged.setdefault(qid, []).append(Judgment(doc_id=doc_id, grade=grade))
    if rows == 0:
        report.add(path, None, "no judgments")
    return judged
