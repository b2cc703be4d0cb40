"""The data model every stage passes around (SPEC §1).

All offsets are Python ``str`` indices (code points) into a document's raw
text, ``end`` exclusive. They never refer to an embedding-time prefix.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping


@dataclass(frozen=True, slots=True)
class Document:
    doc_id: str
    text: str
    title: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Judgment:
    """One relevance judgment of a query: a whole document or a span of it."""

    doc_id: str
    start: int | None = None
    end: int | None = None
    grade: int = 1
    quote: str | None = None

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


@dataclass(frozen=True, slots=True)
class Dataset:
    """A corpus and its evaluation queries, validated (see ``sweep.loading``)."""

    name: str
    documents: tuple[Document, ...]
    queries: tuple[Query, ...]

    def by_id(self) -> dict[str, Document]:
        return {d.doc_id: d for d in self.documents}


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
