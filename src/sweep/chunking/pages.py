"""The page strategy: one chunk per page of a paged document (PDF pages, PPTX slides, XLSX
sheets), as its reader recorded them in ``metadata["pages"]``.

``size`` is a cap: a page longer than ``size`` is split at sentence ends, as the sentence
strategy packs sentences, and never with text of another page. Documents without pages
(Markdown, HTML, Word files) are chunked by the ``page_fallback`` strategy. What a run of
:meth:`PageChunker.chunk_documents` did (the pages, the pages split at the cap, the
documents that fell back) is its :attr:`~PageChunker.tally`: the row's columns and note.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from sweep.chunking.base import BaseChunker, UnknownChunkSetting, chunker, strategies
from sweep.chunking.boundaries import Span
from sweep.chunking.fitting import DocTools
from sweep.chunking.strategies import sentence_units
from sweep.core.checks import is_int
from sweep.core.errors import BadInput
from sweep.core.suggest import did_you_mean
from sweep.core.types import Chunk, Document

__all__ = ["PageChunker", "UnreadablePages", "fallback_strategies", "page_units"]


class UnreadablePages(ValueError, BadInput):
    """A document's ``metadata["pages"]`` is not a list of ``[start, end]`` offsets."""


def page_units(doc: Document) -> tuple[list[Span], int] | None:
    """``doc`` cut at its pages' starts, in order, and how many pages it lists; None for a
    document without pages.

    A page's unit runs from its start to the next page's start: the text between two
    pages (a separator, whitespace as the readers write it) goes with the page before it,
    and any text before the first page with the first, so every character lies in some
    unit and no unit holds text of two pages. Offsets past the text are clamped to it; an
    empty page (one starting where the next starts) has no unit.
    """
    pages = doc.metadata.get("pages") if isinstance(doc.metadata, Mapping) else None
    if not pages:
        return None
    listed = _listed(pages, doc)
    n = len(doc.text)
    starts: set[int] = set()
    for i, page in enumerate(listed):
        if not (
            isinstance(page, Sequence)
            and not isinstance(page, str)
            and len(page) == 2
            and all(is_int(x) for x in page)
        ):
            raise UnreadablePages(
                f"document {doc.doc_id!r}: metadata pages[{i}] is {page!r}, not a "
                "[start, end] pair of character offsets"
            )
        starts.add(max(int(page[0]), 0))
    cuts = sorted(c for c in starts if c < n) or ([0] if n else [])
    if cuts:
        cuts[0] = 0  # the first page takes what comes before it
    return [(a, b) for a, b in zip(cuts, [*cuts[1:], n])], len(listed)


def _listed(pages: Any, doc: Document) -> list[Any]:
    if isinstance(pages, (str, bytes, Mapping)) or not isinstance(pages, Iterable):
        raise UnreadablePages(
            f"document {doc.doc_id!r}: metadata pages is {type(pages).__name__}, not a list "
            "of [start, end] character offsets"
        )
    return list(pages)


def _within_size(tools: DocTools, a: int, b: int) -> list[Span]:
    """``[a, b)`` as it is when its text fits, else cut by characters into the longest
    pieces that do (:meth:`DocTools.fit_chars`). A page that starts inside a word leaves a
    piece that read as one token within the word (`` sens`` of ``sensor``) but needs more
    once stripped and read alone (``sens``); only a tiny size meets it, and then a piece is
    at worst one character."""
    if tools.fits(a, b):
        return [(a, b)]
    out: list[Span] = []
    while (piece := tools.strip(a, b)) is not None:
        end = tools.fit_chars(piece[0], b)
        fitted = tools.strip(piece[0], end)
        if fitted is not None:
            out.append(fitted)
        a = end
    return out


@dataclass(frozen=True)
class _Cut:
    """One document's spans and what cutting it counted."""

    spans: list[Span]
    pages: int = 0  # pages that gave a chunk
    split: int = 0  # of those, pages longer than size, split at sentence ends
    blank: int = 0  # pages with no text
    fell_back: bool = False  # a document without pages, cut by the fallback


@chunker(
    "page",
    overlap="as sentence, but only between chunks of one page longer than `size` "
    "(documents without pages: as their fallback strategy)",
)
class PageChunker(BaseChunker):
    """One chunk per page; a page over ``size`` is split at sentence ends; documents
    without pages are chunked by ``page_fallback`` with the same settings."""

    def __init__(self, *args: Any, page_fallback: str = "paragraph", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        valid = fallback_strategies()
        if page_fallback not in valid:
            known = strategies()
            why = (
                " (it is this strategy)"
                if page_fallback == self.strategy
                else f" ({page_fallback} embeds text to cut it)"
                if page_fallback in known
                else did_you_mean(str(page_fallback), valid)
            )
            raise UnknownChunkSetting(
                f"chunk.page_fallback={page_fallback!r} cannot chunk documents without pages"
                f"{why}; valid: {', '.join(valid)}"
            )
        self.page_fallback = page_fallback
        self.fallback = strategies()[page_fallback].cls(
            size=self.size, overlap=self.overlap, tokenizer=self.tokenizer, prefix=self.prefix
        )
        self.settings["page_fallback"] = page_fallback
        if self.overlap:
            self.notes = (
                f"overlap ({self.overlap}) applies only inside pages longer than size and "
                "in documents without pages (strategy 'page')",
            )
        self._tally: Mapping[str, int] = MappingProxyType({})
        self._tally_notes: tuple[str, ...] = ()

    @property
    def tally(self) -> Mapping[str, int]:
        """What the last :meth:`chunk_documents` counted, as the row's columns: ``n_pages``
        (pages that gave chunks), ``pages_split`` (of those, longer than ``size`` and split
        at sentence ends), ``docs_without_pages`` (chunked by the fallback). Empty before."""
        return self._tally

    @property
    def tally_notes(self) -> tuple[str, ...]:
        """The tally in one line for the row's notes (and the fallback's own remarks, when
        some document fell back to it)."""
        return self._tally_notes

    def spans(self, doc: Document) -> list[Span]:
        return self._cut(doc).spans

    def chunk_documents(self, docs: Iterable[Document]) -> list[Chunk]:
        cuts = [(doc, self._cut(doc)) for doc in docs]
        self._count([cut for _, cut in cuts])
        return [c for doc, cut in cuts for c in self._build(doc, cut.spans)]

    def _cut(self, doc: Document) -> _Cut:
        found = page_units(doc)
        if found is None:
            return _Cut(self.fallback.spans(doc), fell_back=True)
        units, listed = found
        spans: list[Span] = []
        pages = split = 0
        for a, b in units:
            # Each page is tokenized as its own text: a page may start inside what the
            # whole document's tokenizer reads as one token, and its pieces must still be
            # cut at their own token edges to fit size.
            tools = self._tools(doc.text[a:b])
            span = tools.strip(0, b - a)
            if span is None:
                continue
            pages += 1
            if tools.fits(*span):
                spans.append((span[0] + a, span[1] + a))
            else:
                # Sentences of this page only, packed as the sentence strategy packs them:
                # its chunks share sentences (overlap) with each other, never with a
                # neighbouring page's.
                split += 1
                spans.extend(
                    (x + a, y + a)
                    for packed in tools.pack(sentence_units(tools, *span), self.overlap)
                    for x, y in _within_size(tools, *packed)
                )
        blank = listed - pages
        return _Cut(spans, pages, split, blank)

    def _count(self, cuts: Sequence[_Cut]) -> None:
        pages = sum(c.pages for c in cuts)
        split = sum(c.split for c in cuts)
        blank = sum(c.blank for c in cuts)
        fell_back = sum(c.fell_back for c in cuts)
        self._tally = MappingProxyType(
            {"n_pages": pages, "pages_split": split, "docs_without_pages": fell_back}
        )
        said = []
        if split:
            said.append(
                f"{split} of {pages} {_plural(pages, 'page')} {_were(split)} longer than "
                f"chunk.size={self.size} and {_were(split)} split at sentence ends"
            )
        elif pages:
            said.append(
                f"no page is longer than chunk.size={self.size} "
                f"({pages} {_plural(pages, 'page')}, each one chunk)"
            )
        elif not fell_back:
            said.append("no page has text")
        if blank:
            said.append(f"{blank} blank {_plural(blank, 'page')} gave no chunk")
        if fell_back:
            said.append(
                f"{fell_back} {_plural(fell_back, 'document')} "
                f"{'has' if fell_back == 1 else 'have'} no pages and "
                f"{_were(fell_back)} chunked by {self.page_fallback}"
            )
        extra = tuple(f"documents without pages: {n}" for n in self.fallback.notes)
        self._tally_notes = ("page: " + "; ".join(said),) + (extra if fell_back else ())


def fallback_strategies() -> tuple[str, ...]:
    """The strategies a document without pages may be chunked by: every registered one but
    the page strategy itself and one that embeds text (semantic), which would need the
    embedder handed to it."""
    return tuple(
        name
        for name, s in strategies().items()
        if name != PageChunker.strategy and not s.takes_embed_fn
    )


def _plural(n: int, word: str) -> str:
    return word if n == 1 else f"{word}s"


def _were(n: int) -> str:
    return "was" if n == 1 else "were"
