"""A draft's kept proposals, checked against the documents and written as a questions file.

In the draft (:mod:`sweep.evidence.drafts`) a person marks each right proposal with
``"keep": true``, and may cut its ``quote`` down to the sentence that answers. Accepting
the draft writes every question that has evidence as a ``queries.jsonl`` row: its
``relevant`` list as written (if any) followed by each kept proposal as
``{"doc_id", "quote"}`` (``occurrence`` added when the quote appears more than once in
the document and the proposal's offsets say which; ``grade``, ``occurrence`` and
``context`` kept when given). Quotes, not offsets, so the set survives a change of
reader. A question with no evidence kept and no ``relevant`` is left out and named.

Every kept quote is located in its document with the matcher the loader uses
(:class:`~sweep.datasets.quotes.QuoteIndex`, exact then normalised), so the file loads
as it is written; a quote that no longer matches is a ``draft:line`` problem. Nothing is
written unless every kept proposal is found, and never over an existing file.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sweep.core.checks import is_int
from sweep.core.types import Document
from sweep.datasets.loading import QUERIES_FILE, DatasetError, Problem, describe_value, load_corpus
from sweep.datasets.quotes import QuoteIndex, QuoteLocation
from sweep.evidence.questions import Question, read_questions

__all__ = ["Accepted", "accept_draft", "describe_accepted"]

#: Keys of a proposal carried into the judgment when present.
_CARRIED = ("grade", "occurrence", "context")


@dataclass(frozen=True)
class Accepted:
    """What :func:`accept_draft` wrote: ``questions`` rows to ``out``, ``quotes`` kept
    proposals among them (``how``: how many were located each way), and the ids of the
    questions left out for want of evidence."""

    out: Path
    questions: int
    quotes: int
    how: Mapping[str, int]
    left_out: tuple[str, ...]


def accept_draft(
    draft: str | Path,
    dataset: str | Path,
    out: str | Path | None = None,
    *,
    reader: Mapping[str, str] | None = None,
    skip_unreadable: bool = False,
    follow_links: bool = False,
    **limits: float | None,
) -> Accepted:
    """Write the kept proposals of ``draft`` as a questions file at ``out`` (default
    ``DATASET/queries.jsonl``), each quote located in ``dataset``'s documents as read with
    ``reader`` and the reading ``limits``. An existing ``out`` is never replaced
    (FileExistsError); bad input raises :class:`DatasetError` with every problem."""
    draft = Path(draft).expanduser()
    dataset = Path(dataset).expanduser()
    target = Path(out).expanduser() if out is not None else dataset / QUERIES_FILE
    if target.exists() or target.is_symlink():
        raise _exists(target)
    if draft.suffix.lower() not in (".jsonl", ".json"):
        raise DatasetError(
            Problem(
                str(draft), None, "not a draft: sweep.evidence writes drafts as JSON lines (.jsonl)"
            )
        )
    questions = read_questions(draft)
    documents = {
        d.doc_id: d
        for d in load_corpus(
            dataset,
            reader=reader,
            skip_unreadable=skip_unreadable,
            follow_links=follow_links,
            **limits,
        )
    }
    problems: list[Problem] = []
    indexes: dict[str, QuoteIndex] = {}
    rows: list[dict[str, Any]] = []
    left_out: list[str] = []
    how: dict[str, int] = {}
    for question in questions:
        kept = _kept(question, str(draft), documents, indexes, problems, how)
        row = {k: v for k, v in question.row.items() if k not in ("proposed", "relevant")}
        relevant = question.row.get("relevant")
        if relevant is not None and not isinstance(relevant, list):
            problems.append(
                Problem(
                    str(draft),
                    question.line,
                    f"relevant must be a list, got {describe_value(relevant)}",
                )
            )
            continue
        if relevant is None and not kept:
            left_out.append(question.query_id)
            continue
        row["relevant"] = [*(relevant or []), *kept]
        rows.append(row)
    if problems:
        raise DatasetError(problems)
    if not rows:
        raise DatasetError(
            Problem(
                str(draft),
                None,
                'no question has evidence kept: mark the right proposals with "keep": true',
            )
        )
    _write_new(target, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    return Accepted(target, len(rows), sum(how.values()), how, tuple(left_out))


def _kept(
    question: Question,
    draft: str,
    documents: Mapping[str, Document],
    indexes: dict[str, QuoteIndex],
    problems: list[Problem],
    how: dict[str, int],
) -> list[dict[str, Any]]:
    """The judgments of ``question``'s kept proposals; each bad one is a problem."""
    proposed = question.row.get("proposed", [])

    def bad(message: str) -> None:
        problems.append(Problem(draft, question.line, message))

    if not isinstance(proposed, list):
        bad(f"proposed must be a list, got {describe_value(proposed)}")
        return []
    kept = []
    for i, item in enumerate(proposed):
        where = f"proposed[{i}]"
        if not isinstance(item, dict):
            bad(f"{where} must be an object, got {describe_value(item)}")
            continue
        keep = item.get("keep", False)
        if not isinstance(keep, bool):
            bad(f"{where}: keep must be true or false, got {describe_value(keep)}")
            continue
        if not keep:
            continue
        doc_id, quote = item.get("doc_id"), item.get("quote")
        if not isinstance(doc_id, str) or doc_id not in documents:
            bad(
                f"{where}: unknown doc_id {doc_id!r}"
                if isinstance(doc_id, str)
                else f"{where}: doc_id must be a string, got {describe_value(doc_id)}"
            )
            continue
        if not isinstance(quote, str) or not quote.strip():
            bad(f"{where}: quote must be the evidence kept, got {describe_value(quote)}")
            continue
        index = indexes.setdefault(doc_id, QuoteIndex(documents[doc_id].text))
        judgment = {
            "doc_id": doc_id,
            "quote": quote.strip(),
            **{k: item[k] for k in _CARRIED if k in item},
        }
        found = _locate(index, judgment, item)
        if isinstance(found, str):
            bad(f"{where}: quote not located in {doc_id!r}: {found}")
            continue
        located, occurrence = found
        if occurrence is not None:
            judgment["occurrence"] = occurrence
        how[located.how] = how.get(located.how, 0) + 1
        kept.append(judgment)
    return kept


def _locate(
    index: QuoteIndex, judgment: Mapping[str, Any], item: Mapping[str, Any]
) -> tuple[QuoteLocation, int | None] | str:
    """Where the quote is, as the loader will find it, and the ``occurrence`` to write
    with it: a quote found more than once is the match inside the proposal's own
    ``start``..``end``. A string says why it is not located."""
    occurrence, context = judgment.get("occurrence"), judgment.get("context")
    if occurrence is not None and not (is_int(occurrence) and occurrence >= 1):
        return f"occurrence must be an integer >= 1, got {describe_value(occurrence)}"
    if context is not None and not isinstance(context, str):
        return f"context must be a string, got {describe_value(context)}"
    found = index.locate(judgment["quote"], occurrence=occurrence, context=context)
    if found:
        return found, None
    start, end = item.get("start"), item.get("end")
    if found.reason == "ambiguous" and is_int(start) and is_int(end):
        inside = [n for n, at in enumerate(found.positions, 1) if start <= at < end]
        if len(inside) == 1:
            again = index.locate(judgment["quote"], occurrence=inside[0])
            if again:
                return again, inside[0]
    return found.message()


def _exists(path: Path) -> FileExistsError:
    return FileExistsError(
        errno.EEXIST,
        "file exists; --accept never replaces a file: --out FILE writes the questions to a new one",
        str(path),
    )


def _write_new(path: Path, text: str) -> None:
    """Create ``path`` with ``text``, whole or not at all, and never over a file that
    appeared meanwhile: a temporary file beside it is linked into place, which fails
    when the name is taken (a rename would replace it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        temporary.write_text(text, encoding="utf-8")
        try:
            os.link(temporary, path)
        except FileExistsError:
            raise _exists(path) from None
        except OSError:  # no hard links on this file system: create it exclusively
            with open(path, "x", encoding="utf-8") as f:
                f.write(text)
    finally:
        temporary.unlink(missing_ok=True)


def describe_accepted(accepted: Accepted, dataset: str | Path) -> list[str]:
    """The summary to print: what was written, what was left out, and what to do next."""
    ways = ", ".join(f"{n} {how}" for how, n in sorted(accepted.how.items()))
    lines = [
        f"{accepted.out}: {accepted.questions} question"
        f"{'s' if accepted.questions != 1 else ''} with evidence, {accepted.quotes} kept "
        f"quote{'s' if accepted.quotes != 1 else ''} located ({ways or 'none'})"
    ]
    if accepted.left_out:
        shown = ", ".join(accepted.left_out[:5]) + (", ..." if len(accepted.left_out) > 5 else "")
        lines.append(
            f"{len(accepted.left_out)} left out, no proposal kept ({shown}): mark one "
            'with "keep": true, or give "relevant": [] when the documents do not '
            "answer it, and accept again into a new file"
        )
    queries = Path(dataset) / QUERIES_FILE
    if accepted.out.resolve() != queries.resolve():
        lines.append(f"Next: mv {accepted.out} {queries} && python -m sweep.validate {dataset}")
    else:
        lines.append(f"Next: python -m sweep.validate {dataset}")
    return lines
