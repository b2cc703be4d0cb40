"""Parent-document retrieval (small-to-big): search small chunks, hand the LLM their parents.

A chunk's parent is the heading section it lies in (``section``) or a window of
``size`` tokens centred on it (``window``). What is scored is what the LLM would
read: the ranking of chunks is mapped to their parents, and each parent brings only
the text that earlier parents of the same query did not (a parent wholly inside
earlier ones brings nothing and is dropped; one that overlaps them is cut to its new
text). So no text is counted twice, and token budgets count parent text. LangChain's ParentDocumentRetriever and LlamaIndex's
auto-merging retriever are the deployed forms of this design.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from sweep.chunking.headings import markdown_sections
from sweep.core.errors import InvalidSetting
from sweep.core.tokenization import DEFAULT_TOKENIZER, count_tokens, tokenize
from sweep.core.types import Chunk, Document, Ranking

__all__ = [
    "PARENT_MODES",
    "LiftedRanking",
    "ParentError",
    "ParentSpec",
    "Parents",
    "lift_to_parents",
    "parents_of",
]

PARENT_MODES = ("none", "section", "window")


class ParentError(ValueError, InvalidSetting):
    """A ``parent`` setting that cannot run; one line."""


@dataclass(frozen=True)
class ParentSpec:
    """The ``parent`` config node: ``mode`` none, section or window; ``size`` the window in
    ``encoding`` tokens, and for sections the most tokens a parent may have (a longer
    section is cut to that many tokens around the chunk; None: sections are never cut);
    ``encoding`` None (a chunker without a tokenizer): the default tokenizer."""

    mode: str = "none"
    size: int | None = 512
    encoding: str | None = DEFAULT_TOKENIZER

    def __post_init__(self) -> None:
        if self.mode is None:  # parent.mode=null: as none
            object.__setattr__(self, "mode", "none")
        if self.mode not in PARENT_MODES:
            raise ParentError(
                f"parent.mode must be one of {', '.join(PARENT_MODES)}, got {self.mode!r}"
            )
        if self.size is not None and (
            isinstance(self.size, bool) or not isinstance(self.size, int) or self.size < 1
        ):
            raise ParentError(
                f"parent.size must be a positive number of tokens or null, got {self.size!r}"
            )
        if self.mode == "window" and self.size is None:
            raise ParentError("parent.mode=window needs parent.size (tokens)")
        if not (isinstance(self.encoding, str) and self.encoding):
            object.__setattr__(self, "encoding", DEFAULT_TOKENIZER)

    @property
    def active(self) -> bool:
        return self.mode != "none"


@dataclass(frozen=True)
class Parents:
    """The parents of a chunking: ``passages[of_chunk[i]]`` is chunk i's parent; token
    counts in ``encoding``."""

    passages: list[Chunk]
    of_chunk: np.ndarray  # int64, one per chunk
    encoding: str = DEFAULT_TOKENIZER

    @property
    def n_tokens(self) -> np.ndarray:
        return np.fromiter(
            (p.n_tokens for p in self.passages), dtype=np.int64, count=len(self.passages)
        )


def _window(
    doc: Document, start: int, end: int, lo_char: int, hi_char: int, size: int, encoding: str
) -> tuple[int, int]:
    """The span of ``size`` tokens centred on ``[start, end)`` inside ``[lo_char, hi_char)``;
    the chunk itself when it already has that many tokens."""
    tt = tokenize(encoding, doc.text)
    lo_tok, hi_tok = (int(x) for x in tt.token_index(np.array([lo_char, hi_char])))
    a, b = (int(x) for x in tt.token_index(np.array([start, end])))
    if b - a >= size:
        return start, end
    lo = max(lo_tok, a - (size - (b - a)) // 2)
    hi = min(hi_tok, lo + size)
    lo = max(lo_tok, hi - size)
    s, e = tt.char_span(lo, hi)
    # Token spans can straddle the bounds by a character (a multi-byte snap): stay
    # inside them, and never cut the chunk itself.
    return min(start, max(s, lo_char)), max(end, min(e, hi_char))


def parents_of(documents: Sequence[Document], chunks: Sequence[Chunk], spec: ParentSpec) -> Parents:
    """Each chunk's parent span, parents shared by the chunks that have the same one."""
    if not spec.active:
        raise ValueError("parents_of needs parent.mode=section or window")
    by_id = {d.doc_id: d for d in documents}
    sections: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    spans: list[tuple[str, int, int]] = []
    for c in chunks:
        doc = by_id[c.doc_id]
        if spec.mode == "window":
            spans.append(
                (
                    c.doc_id,
                    *_window(doc, c.start, c.end, 0, len(doc.text), spec.size, spec.encoding),
                )
            )
            continue
        if c.doc_id not in sections:
            bounds = markdown_sections(doc.text) or [(0, len(doc.text))]
            sections[c.doc_id] = (
                np.array([a for a, _ in bounds]),
                np.array([b for _, b in bounds]),
            )
        starts, ends = sections[c.doc_id]
        # Every section the chunk touches: a chunker that ignores headings can straddle two.
        first = max(int(np.searchsorted(starts, c.start, side="right")) - 1, 0)
        last = max(int(np.searchsorted(starts, c.end - 1, side="right")) - 1, first)
        lo, hi = int(starts[first]), int(ends[last])
        if spec.size is not None and count_tokens(spec.encoding, doc.text[lo:hi]) > spec.size:
            lo, hi = _window(doc, c.start, c.end, lo, hi, spec.size, spec.encoding)
        spans.append((c.doc_id, min(lo, c.start), max(hi, c.end)))
    position: dict[tuple[str, int, int], int] = {}
    of_chunk = np.fromiter(
        (position.setdefault(s, len(position)) for s in spans), dtype=np.int64, count=len(spans)
    )
    index_in_doc: dict[str, int] = {}
    passages = []
    for doc_id, start, end in position:
        text = by_id[doc_id].text[start:end]
        i = index_in_doc[doc_id] = index_in_doc.get(doc_id, -1) + 1
        passages.append(
            Chunk(
                doc_id=doc_id,
                index=i,
                start=start,
                end=end,
                text=text,
                n_tokens=count_tokens(spec.encoding, text),
            )
        )
    return Parents(passages, of_chunk, spec.encoding)


def _uncovered(start: int, end: int, covered: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The parts of ``[start, end)`` outside the sorted, disjoint spans ``covered``."""
    out, pos = [], start
    for a, b in covered:
        if b <= pos:
            continue
        if a >= end:
            break
        if a > pos:
            out.append((pos, a))
        pos = max(pos, b)
    if pos < end:
        out.append((pos, end))
    return out


def _cover(covered: list[tuple[int, int]], start: int, end: int) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for a, b in sorted([*covered, (start, end)]):
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


@dataclass(frozen=True)
class LiftedRanking:
    """A ranking of ``passages``: the parents, and the new parts of parents that overlap
    earlier ones (appended after the parents). ``via`` is aligned with the ranking's ids:
    the chunk whose rank brought each passage (the best-ranked child of its parent; -1
    where the row is padded)."""

    ranking: Ranking
    passages: list[Chunk]
    via: np.ndarray

    @property
    def n_tokens(self) -> np.ndarray:
        return np.fromiter(
            (p.n_tokens for p in self.passages), dtype=np.int64, count=len(self.passages)
        )


def lift_to_parents(ranking: Ranking, parents: Parents) -> LiftedRanking:
    """The ranking of chunks as the passages an LLM would be handed: each chunk's parent, at
    the rank of the chunk, cut to the text no earlier parent of the query brought (gone
    when there is none). A parent that surrounds an earlier one brings the text on both
    sides: two passages, at consecutive ranks."""
    passages = list(parents.passages)
    position = {(p.doc_id, p.start, p.end): i for i, p in enumerate(passages)}
    next_index: dict[str, int] = {}
    for p in passages:
        next_index[p.doc_id] = max(next_index.get(p.doc_id, 0), p.index + 1)

    def passage(parent: Chunk, start: int, end: int) -> int:
        key = (parent.doc_id, start, end)
        if key not in position:
            text = parent.text[start - parent.start : end - parent.start]
            i = next_index[parent.doc_id]
            next_index[parent.doc_id] = i + 1
            position[key] = len(passages)
            passages.append(
                Chunk(parent.doc_id, i, start, end, text, count_tokens(parents.encoding, text))
            )
        return position[key]

    rows: list[list[tuple[int, float, int]]] = []
    for q in range(ranking.ids.shape[0]):
        covered: dict[str, list[tuple[int, int]]] = {}
        row = []
        for c, score in zip(ranking.ids[q].tolist(), ranking.scores[q].tolist()):
            if c < 0:
                continue
            parent = passages[int(parents.of_chunk[c])]
            spans = covered.get(parent.doc_id, [])
            for start, end in _uncovered(parent.start, parent.end, spans):
                row.append((passage(parent, start, end), score, c))
            covered[parent.doc_id] = _cover(spans, parent.start, parent.end)
        rows.append(row)
    width = max([len(r) for r in rows] + [ranking.ids.shape[1]])
    ids = np.full((len(rows), width), -1, dtype=np.int64)
    scores = np.full((len(rows), width), np.nan, dtype=np.float32)
    via = np.full((len(rows), width), -1, dtype=np.int64)
    for q, row in enumerate(rows):
        if row:
            ids[q, : len(row)] = [i for i, _, _ in row]
            scores[q, : len(row)] = [v for _, v, _ in row]
            via[q, : len(row)] = [c for _, _, c in row]
    return LiftedRanking(Ranking(ids, scores), passages, via)
