"""The data model every stage passes around.

All offsets are Python ``str`` indices (code points) into a document's raw
text, ``end`` exclusive. They never refer to an embedding-time prefix.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True, slots=True)
class Document:
    doc_id: str
    text: str
    title: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Judgment:
    """One relevance judgment of a query: a whole document or a span of it.

    A span given as a quote is located in the document's text when the dataset is
    read: ``located`` says how (``exact``, ``normalised``, ``fuzzy``), and
    ``occurrence``/``context`` are the hints that chose among repeats. A span given by
    offsets has ``located`` None.

    A judgment given as a page (``page``, 1-based as viewers number them, or the
    ``page_label`` the document prints) is that page's character range: ``page`` is its
    number either way, ``page_label`` the label as the judgment gave it (None when it gave
    the number). ``pages`` are
    the pages of a paged document (PDF pages, slides, sheets) that the evidence span
    overlaps, as ``(number, start, end)``: the judgment's units at the ``page`` level.
    They are empty for a document without pages and for a whole-document judgment.
    """

    doc_id: str
    start: int | None = None
    end: int | None = None
    grade: int = 1
    quote: str | None = None
    occurrence: int | None = None
    context: str | None = None
    located: str | None = None
    page: int | None = None
    page_label: str | None = None
    pages: tuple[tuple[int, int, int], ...] = ()

    @property
    def is_span(self) -> bool:
        return self.start is not None


@dataclass(frozen=True, slots=True)
class Query:
    query_id: str
    query: str
    relevant: tuple[Judgment, ...] = ()
    type: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def has_unit(self, level: str) -> bool:
        """Whether the query has something to find at ``level``: a relevant (grade > 0)
        document for ``doc``, a relevant judgment with offsets for ``span``, one on a
        page of a paged document for ``page``. A query without one is left out of that
        level's means."""
        if level == "doc":
            return any(j.grade > 0 for j in self.relevant)
        if level == "span":
            return any(j.grade > 0 and j.is_span for j in self.relevant)
        if level == "page":
            return any(j.grade > 0 and j.pages for j in self.relevant)
        raise ValueError(f"unknown level {level!r}; levels: doc, span, page")


def describe_readers(documents: Iterable[Document]) -> str:
    """``docx=markitdown, html=trafilatura, pdf=pypdf``: which reader read each format of
    ``documents`` (from their ``metadata``); "" when all are plain text."""
    readers: dict[str, str] = {}
    for d in documents:
        meta = d.metadata if isinstance(d.metadata, Mapping) else {}
        fmt, reader = meta.get("format"), meta.get("reader")
        if isinstance(fmt, str) and isinstance(reader, str) and fmt != "text":
            readers[fmt] = reader
    return ", ".join(f"{k}={v}" for k, v in sorted(readers.items()))


@dataclass(frozen=True, slots=True)
class Dataset:
    """A corpus and its evaluation queries, validated (see ``sweep.datasets.loading``)."""

    name: str
    documents: tuple[Document, ...]
    queries: tuple[Query, ...]

    def by_id(self) -> dict[str, Document]:
        return {d.doc_id: d for d in self.documents}

    def fingerprint(self) -> str:
        """A hash of what scores depend on: every document's id, title and text, and every
        query's id, text and judgments. Two sweeps are comparable only when it matches;
        a folder's name says nothing about its content. A judgment is its range, however
        it was given (a quote, a page): the same range scores the same."""
        h = hashlib.sha256()
        for d in self.documents:
            h.update(json.dumps(["doc", d.doc_id, d.title, d.text]).encode())
        for q in self.queries:
            judgments = [[j.doc_id, j.start, j.end, j.grade] for j in q.relevant]
            h.update(json.dumps(["query", q.query_id, q.query, judgments]).encode())
        return h.hexdigest()[:16]

    def evaluation_key(self) -> str:
        """A hash of the questions as they were written, independent of how the documents
        were parsed: the documents' source content (``metadata["source_sha256"]``, else
        their text), and every judgment as its quote and hints when it was given as a
        quote, as its page (and page label) when it was given as a page. Rows of a sweep
        over readers share it, so they are compared on the same questions; offsets into a
        parsed text (a PDF's, say) mean something only for that reader, so such a judgment
        includes the reader."""
        h = hashlib.sha256()
        readers = {}
        for d in self.documents:
            source = d.metadata.get("source_sha256") if isinstance(d.metadata, Mapping) else None
            if source is None:
                source = hashlib.sha256(d.text.encode("utf-8", "surrogatepass")).hexdigest()
            readers[d.doc_id] = (
                d.metadata.get("reader") if isinstance(d.metadata, Mapping) else None
            )
            h.update(json.dumps(["doc", d.doc_id, source]).encode())
        for q in self.queries:
            judgments = [
                [j.doc_id, j.grade, "quote", j.quote, j.occurrence, j.context]
                if j.located
                else [j.doc_id, j.grade, "page", j.page, j.page_label]
                if j.page is not None
                else [j.doc_id, j.start, j.end, j.grade, readers.get(j.doc_id) or "text"]
                for j in q.relevant
            ]
            h.update(json.dumps(["query", q.query_id, q.query, judgments]).encode())
        return h.hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Chunk:
    """A contiguous piece of one document: ``text == doc.text[start:end]``.

    ``embed_text`` is the string handed to the embedder when it differs from
    ``text`` (e.g. title and headings prefixed); offsets still describe ``text``.
    """

    doc_id: str
    index: int
    start: int
    end: int
    text: str
    n_tokens: int
    embed_text: str | None = None

    @property
    def chunk_id(self) -> str:
        return f"{self.doc_id}#{self.index}"

    @property
    def embedding_input(self) -> str:
        return self.text if self.embed_text is None else self.embed_text


@dataclass(frozen=True, slots=True)
class Hit:
    """One retrieved item, in rank order, as the scorer sees it.

    ``start``/``end`` are ``None`` when only the document is known (a run file
    that lists doc ids); such hits can earn doc-level units only.
    """

    doc_id: str
    start: int | None = None
    end: int | None = None
    n_tokens: int | None = None


@dataclass(frozen=True, eq=False)
class Ranking:
    """What a retriever returns for every query: chunk positions in rank order and their scores.

    Row i belongs to query i; ``ids`` is int64 with -1 padding the tail of a
    short row, ``scores`` is float32 (higher is better, NaN where padded).
    """

    ids: np.ndarray
    scores: np.ndarray

    def __post_init__(self) -> None:
        if self.ids.ndim != 2 or self.ids.shape != self.scores.shape:
            raise ValueError(
                f"ranking ids {self.ids.shape} and scores {self.scores.shape} must be "
                "two arrays of the same (n_queries, depth) shape"
            )

    @property
    def depth(self) -> int:
        """The longest ranking of any query."""
        return int((self.ids >= 0).sum(axis=1).max(initial=0))

    def row(self, i: int) -> np.ndarray:
        """Query i's chunk positions without padding."""
        ids = self.ids[i]
        return ids[ids >= 0]
