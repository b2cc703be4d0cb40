"""Write a generated evaluation set as a project-format dataset folder.

``DIR/corpus.jsonl`` holds the documents exactly as read (so every offset
stays valid, whatever the source layout was), ``DIR/queries.jsonl`` the
questions, and ``DIR/generation_report.{md,json}`` the run's report.

A run left short by requests that got no answer is not a finished set: its
questions go to ``queries.incomplete.jsonl`` and its report to
``generation_report.incomplete.{md,json}``, so that the folder is not a
dataset a sweep would read, an earlier finished set in it stays whole, and
the questions kept can still be looked at. The finished run that follows
removes these three files.

Overwriting: ``DIR`` may be new, empty, or the output of an earlier
generation (it holds a ``generation_report.json`` or
``generation_report.incomplete.json`` written by this tool): regenerating
into it is the normal way to refine a set. Any other non-empty folder is
refused unless ``generate.overwrite=true``, and even then only the files
named above are replaced. The dataset's own folder is always refused.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sweep.core.errors import BadInput
from sweep.core.files import write_text_atomic
from sweep.core.types import Document, Query
from sweep.generate.runreport import TOOL, GenerationReport

__all__ = ["INCOMPLETE_FILES", "OUTPUT_FILES", "OutputError", "check_output_dir", "write_output"]

CORPUS = "corpus.jsonl"
QUERIES = "queries.jsonl"
REPORT_MD = "generation_report.md"
REPORT_JSON = "generation_report.json"
OUTPUT_FILES = (CORPUS, QUERIES, REPORT_MD, REPORT_JSON)
INCOMPLETE_QUERIES = "queries.incomplete.jsonl"
INCOMPLETE_REPORT_MD = "generation_report.incomplete.md"
INCOMPLETE_REPORT_JSON = "generation_report.incomplete.json"
INCOMPLETE_FILES = (INCOMPLETE_QUERIES, INCOMPLETE_REPORT_MD, INCOMPLETE_REPORT_JSON)


class OutputError(ValueError, BadInput):
    """``generate.out`` cannot be written; one line."""


def _written_by_us(report: Path) -> bool:
    try:
        data = json.loads(report.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and data.get("tool") == TOOL


def _is_generation_output(folder: Path) -> bool:
    return _written_by_us(folder / REPORT_JSON) or _written_by_us(folder / INCOMPLETE_REPORT_JSON)


def check_output_dir(
    out: str | os.PathLike, dataset_path: str | os.PathLike | None, overwrite: bool
) -> Path:
    """The output folder, after checking that writing there destroys nothing."""
    folder = Path(out).expanduser()
    if folder.exists() and not folder.is_dir():
        raise OutputError(f"generate.out={str(out)!r} is a file, not a folder")
    if dataset_path is not None:
        source = Path(dataset_path).expanduser()
        if folder.resolve() == source.resolve() or (
            source.is_file() and folder.resolve() == source.resolve().parent
        ):
            raise OutputError(
                f"generate.out={str(out)!r} is the dataset's own folder; write "
                "the generated set to a new folder"
            )
    if not folder.is_dir() or not any(folder.iterdir()):
        return folder
    if (folder / "docs").is_dir():
        raise OutputError(
            f"generate.out={str(out)!r} holds a docs/ folder; a corpus.jsonl "
            "beside it would make the dataset ambiguous, choose another folder"
        )
    if _is_generation_output(folder) or overwrite:
        return folder
    raise OutputError(
        f"generate.out={str(out)!r} is not empty and holds no earlier generation; "
        "choose a new folder, or set generate.overwrite=true to replace its "
        f"{', '.join(OUTPUT_FILES + INCOMPLETE_FILES)}"
    )


def document_row(doc: Document) -> dict[str, Any]:
    row: dict[str, Any] = {"doc_id": doc.doc_id, "title": doc.title, "text": doc.text}
    if doc.metadata:
        row["metadata"] = dict(doc.metadata)
    return row


def query_row(query: Query, texts: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A question as a line of ``queries.jsonl``. Evidence with a quote is written as the
    quote alone (and which occurrence, when it appears more than once in ``texts``), so
    the set still fits when the documents are read by another parser; offsets only
    where there is no quote."""
    relevant = []
    for j in query.relevant:
        item: dict[str, Any] = {"doc_id": j.doc_id}
        if j.is_span and j.quote is not None:
            item["quote"] = j.quote
            occurrence = _occurrence(texts.get(j.doc_id) if texts else None, j.quote, j.start)
            if occurrence is not None:
                item["occurrence"] = occurrence
        elif j.is_span:
            item.update(start=j.start, end=j.end)
        item["grade"] = j.grade
        relevant.append(item)
    row: dict[str, Any] = {
        "query_id": query.query_id,
        "query": query.query,
        "type": query.type,
        "relevant": relevant,
    }
    if query.metadata:
        row["metadata"] = dict(query.metadata)
    return row


def _occurrence(text: str | None, quote: str, start: int | None) -> int | None:
    """Which appearance of ``quote`` in ``text`` starts at ``start`` (1-based), when there
    are several; None when it is the only one or the text is not known."""
    if text is None or start is None:
        return None
    places, at = [], text.find(quote)
    while at != -1:
        places.append(at)
        at = text.find(quote, at + 1)
    return places.index(start) + 1 if len(places) > 1 and start in places else None


def _jsonl(rows: Sequence[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def write_output(
    folder: Path, documents: Sequence[Document], queries: Sequence[Query], report: GenerationReport
) -> list[Path]:
    """Write the set (each file atomically; the report last, marking a finished set), or,
    for an incomplete run, only its questions and report, under the incomplete names."""
    folder.mkdir(parents=True, exist_ok=True)
    texts = {d.doc_id: d.text for d in documents}
    rows = _jsonl([query_row(q, texts) for q in queries])
    if report.incomplete:
        return [
            write_text_atomic(folder / INCOMPLETE_QUERIES, rows),
            write_text_atomic(folder / INCOMPLETE_REPORT_MD, report.to_markdown()),
            write_text_atomic(folder / INCOMPLETE_REPORT_JSON, report.to_json()),
        ]
    written = [
        write_text_atomic(folder / CORPUS, _jsonl([document_row(d) for d in documents])),
        write_text_atomic(folder / QUERIES, rows),
        write_text_atomic(folder / REPORT_MD, report.to_markdown()),
        write_text_atomic(folder / REPORT_JSON, report.to_json()),
    ]
    if _written_by_us(folder / INCOMPLETE_REPORT_JSON):  # superseded, and never the user's
        for name in INCOMPLETE_FILES:
            (folder / name).unlink(missing_ok=True)
    return written
