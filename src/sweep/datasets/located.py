"""How the quotes of a dataset were located, and the offsets they were located at; how
much of its evidence is by page.

Evidence written as quotes (``{"doc_id": "manual.pdf", "quote": "..."}``) is
found in each document's text when the dataset is read
(:mod:`sweep.datasets.loading`). People checking their labels want to see how
each was found (exactly, after normalising, approximately) and, for tools that
need them, the offsets written back into a copy of their questions file.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from sweep.core.files import write_text_atomic
from sweep.core.types import Dataset, Judgment

__all__ = [
    "LocatedQuote",
    "located_counts",
    "located_quotes",
    "page_report",
    "query_lines",
    "quote_report",
    "write_offsets",
]

HOWS = ("exact", "normalised", "fuzzy")


@dataclass(frozen=True)
class LocatedQuote:
    """One quote judgment: the question, its place in ``relevant`` and where it was found."""

    query_id: str
    index: int
    judgment: Judgment


def located_quotes(dataset: Dataset) -> list[LocatedQuote]:
    """Every judgment given as a quote without offsets, in question order."""
    return [
        LocatedQuote(q.query_id, i, j)
        for q in dataset.queries
        for i, j in enumerate(q.relevant)
        if j.located is not None
    ]


def located_counts(dataset: Dataset) -> dict[str, int]:
    """How many quotes were located each way, ``{"exact": 40, "normalised": 3, "fuzzy": 0}``."""
    counts = Counter(q.judgment.located for q in located_quotes(dataset))
    return {how: counts.get(how, 0) for how in HOWS}


def query_lines(queries_file: Path) -> dict[str, int]:
    """The line of every query id in a project ``queries.jsonl`` (for ``file:line`` output)."""
    lines: dict[str, int] = {}
    for lineno, raw in enumerate(queries_file.read_bytes().split(b"\n"), 1):
        try:
            row = json.loads(raw)
        except ValueError:
            continue
        if isinstance(row, dict) and isinstance(row.get("query_id"), str):
            lines.setdefault(row["query_id"], lineno)
    return lines


def write_offsets(dataset: Dataset, queries_file: Path, out: Path) -> int:
    """A copy of ``queries_file`` at ``out`` whose quote judgments also carry the offsets
    they were located at (other lines and keys unchanged); returns how many were added.

    The offsets index the text the dataset's readers made: with another reader the
    quote is located afresh, but offsets are checked as they are.
    """
    spans = {(q.query_id, q.index): q.judgment for q in located_quotes(dataset)}
    texts = {d.doc_id: d.text for d in dataset.documents}
    added = 0
    lines = []
    for raw in queries_file.read_text(encoding="utf-8").split("\n"):
        try:
            row = json.loads(raw) if raw.strip() else None
        except ValueError:
            row = None
        if isinstance(row, dict) and isinstance(row.get("relevant"), list):
            for i, item in enumerate(row["relevant"]):
                j = spans.get((row.get("query_id"), i))
                if j is not None and isinstance(item, dict):
                    item["start"], item["end"] = j.start, j.end
                    item.pop("occurrence", None)
                    item.pop("context", None)
                    # Offsets and quote must agree exactly: the quote becomes the text found.
                    item["quote"] = texts[j.doc_id][j.start : j.end]
                    added += 1
            raw = json.dumps(row, ensure_ascii=False)
        lines.append(raw)
    write_text_atomic(out, "\n".join(lines))
    return added


def quote_report(dataset: Dataset, queries_file: Path, *, each: bool = False) -> list[str]:
    """Lines saying how the quotes were located: a count per way, then (``each``) one
    ``file:line: relevant[i] in DOC at START:END: how`` line per quote."""
    quotes = located_quotes(dataset)
    if not quotes:
        return []
    counts = located_counts(dataset)
    lines = [
        f"quotes: {len(quotes)} located, " + ", ".join(f"{n} {how}" for how, n in counts.items())
    ]
    if counts["fuzzy"]:
        lines.append(
            "  fuzzy matches differ from the quote: check them with --quotes, or copy "
            "the text found into the quote"
        )
    if each:
        where = query_lines(queries_file) if queries_file.is_file() else {}
        for q in quotes:
            j = q.judgment
            line = f"{queries_file}:{where[q.query_id]}" if q.query_id in where else q.query_id
            lines.append(
                f"{line}: relevant[{q.index}] in {j.doc_id!r} at {j.start}:{j.end}: {j.located}"
            )
    return lines


def page_report(dataset: Dataset) -> list[str]:
    """A line saying how much evidence is by page: the judgments that name a page (by its
    number or its label) and the spans that lie on a paged document's pages, the queries
    the ``page`` level scores; no line when no document has pages."""
    spans = [j for q in dataset.queries for j in q.relevant if j.is_span]
    on_pages = sum(1 for j in spans if j.pages)
    if not on_pages:
        return []
    named = [j for j in spans if j.page is not None]
    labelled = sum(1 for j in named if j.page_label is not None)
    by_label = f" ({labelled} by its label)" if labelled else ""
    return [
        f"pages: {len(named)} judgment{'s' if len(named) != 1 else ''} by page{by_label}; "
        f"{on_pages} of {len(spans)} spans lie on a paged document's pages "
        f"({sum(1 for q in dataset.queries if q.has_unit('page'))} queries have a page to find)"
    ]
