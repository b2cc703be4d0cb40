"""Per-query scores of ranked retrieval results: units credited once, at the first rank that earns them.

Relevance units and crediting:

- ``doc`` level: one unit per document with a judgment of grade > 0 (its grade
  is the largest over its judgments), credited at the first rank whose hit is
  from that document;
- ``span`` level: one unit per evidence span (judgment with offsets, grade > 0),
  credited at the first rank i where the union of hits 1..i covers at least
  ``min_coverage`` of the span's characters;
- ``page`` level: one unit per distinct (document, page number) among the
  ``pages`` of a query's judgments of grade > 0 (the pages of a paged document
  its evidence lies on; the grade is the largest over the judgments naming the
  page), credited at the first rank whose hit is from that document and shares
  a character with the page's range ``[start, end)``. A hit that runs over a
  page break retrieves every page it overlaps, so one rank may credit two
  pages (it is still one rank: precision counts it once). A hit without
  offsets credits no page, and an empty page range can never be credited.

Each unit is credited once; later hits that would earn it again are
non-relevant, and ranks are never compressed (truncate first, then dedup:
three chunks of page 3 in the top 3 credit page 3 once, at rank 1). Every
measure exists at every level (the coverage measures only at ``span``) and is
computed on the top k hits (or, for ``@Bt``, on the longest prefix of hits
whose tokens sum to at most B: the measure at that prefix length; a budget's
ndcg takes its ideal over all of the query's units). A query with no unit at a
level is excluded there: it has no rows at that level. A question set without
pages has no page units, so no page rows at all.

The hot path works on integer arrays for all queries at once (one pass over
the ``Hit`` objects to encode them), so scoring 10,000 queries of 100 hits
takes about a second.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, repeat
from operator import attrgetter

import numpy as np

from sweep.core.measures import LEVELS, MIN_COVERAGE, PER_CONFIG_NAMES, RANK_NAMES, Measure
from sweep.core.types import Chunk, Hit, Query
from sweep.scoring.table import ScoreTable

__all__ = [
    "GAINS",
    "RankedHits",
    "UnitCredits",
    "credit_units",
    "first_relevant_rank",
    "first_relevant_ranks",
    "score_queries",
    "score_ranked",
]

GAINS = ("linear", "exponential")

# Rank of a unit no hit credits; larger than any real rank or cut-off.
_NEVER = np.int64(2**62)
# Pair expansions are processed in slices of about this many elements to bound memory.
_SLICE = 1 << 22


# --------------------------------------------------------------------------- gold units


@dataclass(frozen=True, eq=False)
class _Gold:
    """The relevance units of every query as flat arrays (query ``q`` = position in input)."""

    query_ids: tuple[str, ...]
    doc_code: Mapping[str, int]
    # doc units, sorted by (query, doc)
    du_q: np.ndarray
    du_doc: np.ndarray
    du_grade: np.ndarray
    # span units, in input order
    su_q: np.ndarray
    su_doc: np.ndarray
    su_start: np.ndarray
    su_end: np.ndarray
    su_grade: np.ndarray
    # evidence of each (query, doc) merged into disjoint pieces, sorted by (group, start)
    group_key: np.ndarray  # q * n_docs + doc, sorted
    piece_group: np.ndarray
    piece_start: np.ndarray
    piece_end: np.ndarray
    gold_len: np.ndarray  # |G| per query
    # page units, sorted by (query, doc, start, page number)
    pu_q: np.ndarray
    pu_doc: np.ndarray
    pu_number: np.ndarray
    pu_start: np.ndarray
    pu_end: np.ndarray
    pu_grade: np.ndarray

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    @property
    def n_docs(self) -> int:
        return max(len(self.doc_code), 1)

    @classmethod
    def of(cls, queries: Sequence[Query]) -> _Gold:
        query_ids = tuple(q.query_id for q in queries)
        if len(set(query_ids)) != len(query_ids):
            seen: set[str] = set()
            dup = next(qid for qid in query_ids if qid in seen or seen.add(qid))
            raise ValueError(f"duplicate query_id {dup!r}")
        doc_code: dict[str, int] = {}
        doc_units: dict[tuple[int, int], int] = {}
        spans: list[tuple[int, int, int, int, int]] = []
        # (query, doc, page number) -> [start, end, grade]
        page_units: dict[tuple[int, int, int], list[int]] = {}
        for qi, query in enumerate(queries):
            for j in query.relevant:
                if j.grade <= 0:
                    continue  # judged non-relevant: kept in the data, never a unit
                d = doc_code.setdefault(j.doc_id, len(doc_code))
                key = (qi, d)
                if doc_units.get(key, 0) < j.grade:
                    doc_units[key] = j.grade
                if j.start is not None or j.end is not None:
                    if j.start is None or j.end is None or not 0 <= j.start < j.end:
                        raise ValueError(
                            f"query {query.query_id!r}: evidence span {j.start}:{j.end} of {j.doc_id!r} "
                            "is not a non-empty span"
                        )
                    spans.append((qi, d, j.start, j.end, j.grade))
                for number, p_start, p_end in j.pages:
                    if not 0 <= p_start <= p_end:
                        raise ValueError(
                            f"query {query.query_id!r}: page {number} of {j.doc_id!r} has the "
                            f"range {p_start}:{p_end}, which is not a span of the text"
                        )
                    unit = page_units.setdefault((qi, d, number), [p_start, p_end, j.grade])
                    unit[2] = max(unit[2], j.grade)
        du = np.array(sorted((q, d, g) for (q, d), g in doc_units.items()), dtype=np.int64).reshape(
            -1, 3
        )
        su = np.array(spans, dtype=np.int64).reshape(-1, 5)
        n_docs = max(len(doc_code), 1)
        group_key, piece_group, piece_start, piece_end = _merge_spans(
            su[:, 0] * n_docs + su[:, 1], su[:, 2], su[:, 3]
        )
        pu = np.array(
            sorted((q, d, s, n, e, g) for (q, d, n), (s, e, g) in page_units.items()),
            dtype=np.int64,
        ).reshape(-1, 6)
        gold_len = np.bincount(
            group_key[piece_group] // n_docs,
            weights=piece_end - piece_start,
            minlength=len(queries),
        ).astype(np.int64)
        return cls(
            query_ids,
            doc_code,
            du[:, 0],
            du[:, 1],
            du[:, 2].astype(np.float64),
            su[:, 0],
            su[:, 1],
            su[:, 2],
            su[:, 3],
            su[:, 4].astype(np.float64),
            group_key,
            piece_group,
            piece_start,
            piece_end,
            gold_len,
            pu[:, 0],
            pu[:, 1],
            pu[:, 3],
            pu[:, 2],
            pu[:, 4],
            pu[:, 5].astype(np.float64),
        )

    def units(self, level: str) -> tuple[np.ndarray, np.ndarray]:
        """``(query of each unit, grade of each unit)`` at ``level``."""
        if level == "doc":
            return self.du_q, self.du_grade
        if level == "span":
            return self.su_q, self.su_grade
        return self.pu_q, self.pu_grade


def _merge_spans(key: np.ndarray, start: np.ndarray, end: np.ndarray):
    """Union of intervals per key: ``(sorted unique keys, piece -> key index, piece start, piece end)``."""
    if len(key) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty, empty
    order = np.lexsort((start, key))
    key, start, end = key[order], start[order], end[order]
    big = int(end.max()) + 1
    # Running max of ends within a key: offsetting by key * big makes one
    # global accumulate reset at every new key.
    group_keys, group = np.unique(key, return_inverse=True)
    _check_offsets(len(group_keys), big)
    shifted_end = group * big + end
    reach = np.maximum.accumulate(shifted_end)
    prev_reach = np.concatenate(([-1], reach[:-1]))
    new_piece = (group * big + start) > prev_reach
    piece_id = np.cumsum(new_piece) - 1
    piece_start = start[new_piece]
    piece_end = np.zeros(int(piece_id[-1]) + 1, dtype=np.int64)
    np.maximum.at(piece_end, piece_id, end)
    return group_keys, group[new_piece], piece_start, piece_end


def _check_offsets(n_groups: int, big: int) -> None:
    if n_groups * big >= 2**62:
        raise ValueError("character offsets too large to score")


# --------------------------------------------------------------------------- encoded hits


@dataclass(frozen=True, eq=False)
class RankedHits:
    """The ranked hits of every query as flat integer arrays.

    Query ``q``'s hits are rows ``offsets[q]:offsets[q + 1]`` in rank order.
    ``doc`` is a code of ``doc_code`` (-1: a document no query judges),
    ``start``/``end`` are -1 for document-only hits, ``tokens`` is ``None``
    unless token counts were asked for.
    """

    offsets: np.ndarray
    doc: np.ndarray
    start: np.ndarray
    end: np.ndarray
    tokens: np.ndarray | None

    @property
    def n_queries(self) -> int:
        return len(self.offsets) - 1

    @property
    def n_hits(self) -> np.ndarray:
        return np.diff(self.offsets)

    @property
    def query(self) -> np.ndarray:
        return np.repeat(np.arange(self.n_queries, dtype=np.int64), self.n_hits)

    @property
    def rank(self) -> np.ndarray:
        """1-based rank of every hit."""
        return (
            np.arange(len(self.doc), dtype=np.int64) - np.repeat(self.offsets[:-1], self.n_hits) + 1
        )

    @classmethod
    def from_hits(
        cls,
        query_ids: Sequence[str],
        runs: Mapping[str, Sequence[Hit]],
        doc_code: Mapping[str, int],
        *,
        need_tokens: bool,
    ) -> RankedHits:
        """Encode ``runs`` in the order of ``query_ids`` (a missing query = no hits)."""
        lists = [runs.get(qid, ()) for qid in query_ids]
        counts = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
        offsets = np.concatenate(([0], np.cumsum(counts)))
        n = int(offsets[-1])
        hits = list(chain.from_iterable(lists))
        doc = np.fromiter(
            map(doc_code.get, map(attrgetter("doc_id"), hits), repeat(-1)), np.int64, n
        )
        start = _int_column(hits, "start")
        end = _int_column(hits, "end")
        where = _first_bad((start < 0) != (end < 0), start < -1, end < start)
        if where is not None:
            q = int(np.searchsorted(offsets, where, side="right")) - 1
            h = hits[where]
            raise ValueError(
                f"query {query_ids[q]!r}, hit {where - int(offsets[q]) + 1}: offsets {h.start}:{h.end} of "
                f"{h.doc_id!r} are not a span (give both start <= end, or neither)"
            )
        tokens = None
        if need_tokens:
            tokens = _int_column(hits, "n_tokens")
            where = _first_bad(tokens < 0)
            if where is not None:
                q = int(np.searchsorted(offsets, where, side="right")) - 1
                have = hits[where].n_tokens
                problem = "has no n_tokens" if have is None else f"has n_tokens {have}"
                raise ValueError(
                    f"query {query_ids[q]!r}, hit {where - int(offsets[q]) + 1} ({hits[where].doc_id!r}) "
                    f"{problem}; token-budget measures (@Bt) need a count >= 0 on every hit"
                )
        return cls(offsets, doc, start, end, tokens)

    @classmethod
    def from_chunk_ranking(
        cls, ranking: np.ndarray, chunks: Sequence[Chunk], doc_code: Mapping[str, int]
    ) -> RankedHits:
        """Encode a ``(n_queries, depth)`` array of chunk indices (-1 pads short rows).

        Rows must be in query order; this skips building ``Hit`` objects.
        """
        ranking = np.asarray(ranking, dtype=np.int64)
        if ranking.ndim != 2:
            raise ValueError(
                f"ranking must be a 2-d array of chunk indices, got shape {ranking.shape}"
            )
        if ranking.size and (ranking.max() >= len(chunks) or ranking.min() < -1):
            raise ValueError("ranking holds chunk indices outside the chunk list")
        valid = ranking >= 0
        # -1 padding must only trail: a gap would renumber the ranks after it.
        if np.any(valid[:, 1:] & ~valid[:, :-1]):
            raise ValueError("ranking has -1 padding before a real chunk index")
        flat = ranking[valid]
        chunk_doc = np.fromiter((doc_code.get(c.doc_id, -1) for c in chunks), np.int64, len(chunks))
        chunk_start = np.fromiter((c.start for c in chunks), np.int64, len(chunks))
        chunk_end = np.fromiter((c.end for c in chunks), np.int64, len(chunks))
        chunk_tokens = np.fromiter((c.n_tokens for c in chunks), np.int64, len(chunks))
        offsets = np.concatenate(([0], np.cumsum(valid.sum(axis=1))))
        return cls(offsets, chunk_doc[flat], chunk_start[flat], chunk_end[flat], chunk_tokens[flat])


def _int_column(hits: list[Hit], name: str) -> np.ndarray:
    """An attribute of every hit as int64, ``None`` as -1."""
    try:
        return np.fromiter(map(attrgetter(name), hits), np.int64, len(hits))
    except TypeError:  # some values are None
        return np.fromiter(
            (-1 if v is None else v for v in map(attrgetter(name), hits)), np.int64, len(hits)
        )


def _first_bad(*masks: np.ndarray) -> int | None:
    bad = masks[0]
    for m in masks[1:]:
        bad = bad | m
    idx = np.flatnonzero(bad)
    return int(idx[0]) if len(idx) else None


# --------------------------------------------------------------------------- crediting


def _doc_unit_ranks(gold: _Gold, hits: RankedHits) -> np.ndarray:
    """First rank at which each doc unit is credited (``_NEVER`` if none)."""
    ranks = np.full(len(gold.du_q), _NEVER, dtype=np.int64)
    if len(ranks) == 0 or len(hits.doc) == 0:
        return ranks
    nd = gold.n_docs
    unit_key = gold.du_q * nd + gold.du_doc  # sorted: units were built sorted by (q, doc)
    hit_key = hits.query * nd + hits.doc
    pos = np.minimum(np.searchsorted(unit_key, hit_key), len(unit_key) - 1)
    match = np.flatnonzero((hits.doc >= 0) & (unit_key[pos] == hit_key))
    # Rows are in (query, rank) order, so the first matching row of a unit is its credit.
    units, first = np.unique(pos[match], return_index=True)
    ranks[units] = hits.rank[match[first]]
    return ranks


def _page_unit_ranks(gold: _Gold, hits: RankedHits) -> np.ndarray:
    """First rank at which each page unit is credited (``_NEVER`` if none): the first hit
    from the unit's document whose offsets share a character with the page."""
    ranks = np.full(len(gold.pu_q), _NEVER, dtype=np.int64)
    rows = np.flatnonzero((hits.start >= 0) & (hits.end > hits.start) & (hits.doc >= 0))
    if len(ranks) == 0 or len(rows) == 0:
        return ranks
    nd = gold.n_docs
    group_keys, unit_group = np.unique(gold.pu_q * nd + gold.pu_doc, return_inverse=True)
    row_key = hits.query[rows] * nd + hits.doc[rows]
    group = np.minimum(np.searchsorted(group_keys, row_key), len(group_keys) - 1)
    keep = group_keys[group] == row_key
    rows, group = rows[keep], group[keep]
    pair, pair_unit = _overlapping(
        unit_group,
        gold.pu_start,
        gold.pu_end,
        len(group_keys),
        group,
        hits.start[rows],
        hits.end[rows],
    )
    pair_row = rows[pair]
    # Pairs are in row order, rows in (query, rank) order, and a unit has one query:
    # a unit's first pair is its credit.
    units, at = np.unique(pair_unit, return_index=True)
    ranks[units] = hits.rank[pair_row[at]]
    return ranks


def _unit_ranks(
    level: str, gold: _Gold, hits: RankedHits, coverage: _Coverage | None
) -> np.ndarray:
    """Credit rank of every unit at ``level`` (``coverage`` is needed for ``span``)."""
    if level == "doc":
        return _doc_unit_ranks(gold, hits)
    if level == "page":
        return _page_unit_ranks(gold, hits)
    assert coverage is not None
    return coverage.span_ranks


@dataclass(frozen=True, eq=False)
class _Coverage:
    span_ranks: np.ndarray  # first credit rank of each span unit
    covered_cum: np.ndarray  # len n_hits + 1: gold characters newly covered, cumulated over rows
    length_cum: np.ndarray  # len n_hits + 1: hit lengths (chars), cumulated over rows


def _span_coverage(gold: _Gold, hits: RankedHits, min_coverage: float) -> _Coverage:
    """Credit span units and measure gold coverage as a function of rank.

    The gold pieces of a query are cut at every span and hit boundary into
    elementary segments; a segment is covered from the first rank of a hit
    containing it. A span's coverage after rank i is then the summed length
    of its segments covered by rank i.
    """
    n_rows = len(hits.doc)
    is_span_hit = hits.start >= 0
    lengths = np.where(is_span_hit, hits.end - hits.start, 0)
    length_cum = np.concatenate(([0], np.cumsum(lengths)))
    span_ranks = np.full(len(gold.su_q), _NEVER, dtype=np.int64)
    covered = np.zeros(n_rows, dtype=np.int64)
    n_pieces = len(gold.piece_start)
    if n_pieces == 0 or n_rows == 0:
        return _Coverage(span_ranks, np.concatenate(([0], np.cumsum(covered))), length_cum)

    nd = gold.n_docs
    rows = np.flatnonzero(is_span_hit & (hits.doc >= 0))
    row_q = hits.query[rows]
    group = np.minimum(
        np.searchsorted(gold.group_key, row_q * nd + hits.doc[rows]), len(gold.group_key) - 1
    )
    keep = gold.group_key[group] == row_q * nd + hits.doc[rows]
    rows, group = rows[keep], group[keep]
    lo, hi = hits.start[rows], hits.end[rows]

    big = int(max(gold.piece_end.max(), hi.max(initial=0))) + 1
    _check_offsets(max(len(gold.group_key), n_pieces), big)
    piece_a = gold.piece_group * big + gold.piece_start
    piece_b = gold.piece_group * big + gold.piece_end
    # Pieces of a group are disjoint and sorted, so those overlapping [lo, hi)
    # are a contiguous run: ends after lo, starts before hi.
    first = np.searchsorted(piece_b, group * big + lo, side="right")
    stop = np.searchsorted(piece_a, group * big + hi, side="left")
    count = np.maximum(stop - first, 0)
    pair_row = np.repeat(rows, count)
    pair_piece = _expand(first, count)
    pair_lo = np.maximum(hits.start[pair_row], gold.piece_start[pair_piece])
    pair_hi = np.minimum(hits.end[pair_row], gold.piece_end[pair_piece])
    nonempty = pair_lo < pair_hi
    pair_row, pair_piece = pair_row[nonempty], pair_piece[nonempty]
    pair_lo, pair_hi = pair_lo[nonempty], pair_hi[nonempty]
    pair_rank = hits.rank[pair_row]

    # The piece holding each span: the last piece of its group starting at or before it.
    span_group = np.searchsorted(gold.group_key, gold.su_q * nd + gold.su_doc)
    span_piece = np.searchsorted(piece_a, span_group * big + gold.su_start, side="right") - 1

    bounds = np.unique(
        np.concatenate(
            (
                piece_a,
                piece_b,
                span_piece * big + gold.su_start,
                span_piece * big + gold.su_end,
                pair_piece * big + pair_lo,
                pair_piece * big + pair_hi,
            )
        )
    )
    b_piece, b_pos = np.divmod(bounds, big)
    # Segment p runs from boundary p to boundary p + 1 (length 0 at a piece's last boundary).
    seg_len = np.zeros(len(bounds), dtype=np.int64)
    same = b_piece[1:] == b_piece[:-1]
    seg_len[:-1] = np.where(same, b_pos[1:] - b_pos[:-1], 0)

    seg_rank = np.full(len(bounds), _NEVER, dtype=np.int64)
    p_first = np.searchsorted(bounds, pair_piece * big + pair_lo)
    p_count = np.searchsorted(bounds, pair_piece * big + pair_hi) - p_first
    for sl in _slices(p_count):
        np.minimum.at(
            seg_rank, _expand(p_first[sl], p_count[sl]), np.repeat(pair_rank[sl], p_count[sl])
        )

    hit_seg = np.flatnonzero(seg_rank < _NEVER)
    seg_q = gold.group_key[gold.piece_group[b_piece[hit_seg]]] // nd
    row_of = hits.offsets[seg_q] + seg_rank[hit_seg] - 1
    covered = np.bincount(row_of, weights=seg_len[hit_seg], minlength=n_rows).astype(np.int64)
    covered_cum = np.concatenate(([0], np.cumsum(covered)))

    # Span crediting: order each span's segments by the rank that covers them;
    # the span is credited at the rank where the running covered length
    # first reaches its requirement.
    s_first = np.searchsorted(bounds, span_piece * big + gold.su_start)
    s_count = np.searchsorted(bounds, span_piece * big + gold.su_end) - s_first
    need = _required_chars(gold.su_end - gold.su_start, min_coverage)
    for sl in _slices(s_count):
        span_id = np.repeat(np.arange(sl.start, sl.stop, dtype=np.int64), s_count[sl])
        seg = _expand(s_first[sl], s_count[sl])
        r = seg_rank[seg]
        order = np.lexsort((r, span_id))
        span_id, r, ln = span_id[order], r[order], seg_len[seg][order]
        cum = np.cumsum(ln)
        span_base = np.concatenate(([0], cum))[np.searchsorted(span_id, span_id)]
        reached = (cum - span_base >= need[span_id]) & (r < _NEVER)
        credited, at = np.unique(span_id[reached], return_index=True)
        span_ranks[credited] = r[reached][at]
    return _Coverage(span_ranks, covered_cum, length_cum)


def _required_chars(length: np.ndarray, min_coverage: float) -> np.ndarray:
    """Smallest integer c with c / length >= min_coverage, per span.

    Compared as a division, like a reader would: 55 of 100 characters meet
    0.55, although 0.55 * 100 is 55.00000000000001 in binary floating point.
    """
    need = np.ceil(min_coverage * length).astype(np.int64)
    need = np.where((need - 1) / length >= min_coverage, need - 1, need)
    return np.where(need / length < min_coverage, need + 1, need)


def _overlapping(
    item_group: np.ndarray,
    item_start: np.ndarray,
    item_end: np.ndarray,
    n_groups: int,
    group: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Every pair ``(i, j)`` of a range ``[start[i], end[i])`` and an item of the same group
    whose range shares a character with it, in order of ``i``. Items must be sorted by
    (group, start); they may overlap each other.

    An item overlapping ``[a, b)`` starts before ``b`` and no earlier than ``a`` - (the
    longest item of its group) + 1, so that window of the sorted items holds every one that
    overlaps, plus perhaps a few shorter ones ending before ``a``, which the exact test drops.
    """
    big = int(max(item_end.max(initial=0), end.max(initial=0))) + 1
    _check_offsets(n_groups, big)
    key = item_group * big + item_start
    longest = np.zeros(n_groups, dtype=np.int64)
    np.maximum.at(longest, item_group, item_end - item_start)
    first = np.searchsorted(key, group * big + np.maximum(start - longest[group] + 1, 0))
    stop = np.searchsorted(key, group * big + end)
    count = np.maximum(stop - first, 0)
    i = np.repeat(np.arange(len(group), dtype=np.int64), count)
    j = _expand(first, count)
    shared = np.maximum(start[i], item_start[j]) < np.minimum(end[i], item_end[j])
    return i[shared], j[shared]


def _expand(first: np.ndarray, count: np.ndarray) -> np.ndarray:
    """``concat(arange(f, f + c) for f, c in zip(first, count))`` without a Python loop."""
    total = int(count.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.cumsum(count) - count
    return np.repeat(first - starts, count) + np.arange(total, dtype=np.int64)


def _slices(count: np.ndarray) -> Iterator[slice]:
    """Consecutive slices of ``count`` whose sums stay near ``_SLICE`` (memory bound)."""
    n = len(count)
    if n == 0:
        return
    cum = np.cumsum(count)
    start = 0
    while start < n:
        base = int(cum[start - 1]) if start else 0
        stop = max(int(np.searchsorted(cum, base + _SLICE, side="right")), start + 1)
        yield slice(start, min(stop, n))
        start = stop


# --------------------------------------------------------------------------- measures


@dataclass(frozen=True, eq=False)
class _Credits:
    """Units of one level with their credit ranks, and derived per-rank events."""

    n_queries: int
    n_units: np.ndarray  # R per query
    # events: distinct (query, rank) at which at least one unit is first credited
    ev_q: np.ndarray
    ev_rank: np.ndarray
    ev_units: np.ndarray
    ev_first: np.ndarray  # per query: index of its first event
    ap_term: np.ndarray
    dcg_term: np.ndarray
    # unit gains sorted descending within each query, for the ideal DCG
    ideal_q: np.ndarray
    ideal_pos: np.ndarray
    ideal_term: np.ndarray

    @classmethod
    def of(
        cls,
        unit_q: np.ndarray,
        unit_grade: np.ndarray,
        unit_rank: np.ndarray,
        n_queries: int,
        gain: str,
    ) -> _Credits:
        gains = unit_grade if gain == "linear" else np.exp2(unit_grade) - 1.0
        n_units = np.bincount(unit_q, minlength=n_queries)
        got = unit_rank < _NEVER
        cq, cr, cg = unit_q[got], unit_rank[got], gains[got]
        order = np.lexsort((cr, cq))
        cq, cr, cg = cq[order], cr[order], cg[order]
        new = np.ones(len(cq), dtype=bool)
        new[1:] = (cq[1:] != cq[:-1]) | (cr[1:] != cr[:-1])
        starts = np.flatnonzero(new)
        ev_q, ev_rank = cq[starts], cr[starts]
        ev_units = np.diff(np.append(starts, len(cq)))
        # The gain of a rank is the largest grade among units it newly credits.
        ev_gain = np.maximum.reduceat(cg, starts) if len(starts) else np.zeros(0)
        ev_first = np.searchsorted(ev_q, np.arange(n_queries))
        ordinal = np.arange(len(ev_q)) - ev_first[ev_q] + 1
        ap_term = ordinal / ev_rank
        dcg_term = ev_gain / np.log2(ev_rank + 1.0)
        order = np.lexsort((-gains, unit_q))
        ideal_q = unit_q[order]
        ideal_pos = np.arange(len(ideal_q)) - np.searchsorted(ideal_q, ideal_q) + 1
        ideal_term = gains[order] / np.log2(ideal_pos + 1.0)
        return cls(
            n_queries,
            n_units,
            ev_q,
            ev_rank,
            ev_units,
            ev_first,
            ap_term,
            dcg_term,
            ideal_q,
            ideal_pos,
            ideal_term,
        )

    def measure(
        self, names: Sequence[str], cutoff: np.ndarray, *, budget: bool = False
    ) -> dict[str, np.ndarray]:
        """Rank measures of every query at a per-query cut-off (hits considered).

        For a token budget (``budget``) the ideal DCG takes all of the query's
        units, not the first L: a size that fits fewer chunks in the budget
        must not be rewarded with a smaller ideal.
        """
        nq = self.n_queries
        inside = self.ev_rank <= cutoff[self.ev_q]
        # bincount sums each query's terms in order, so a perfect ranking's DCG
        # and its ideal DCG are the same float sum and ndcg is exactly 1.
        n_events = np.bincount(self.ev_q[inside], minlength=nq)
        credited = np.bincount(self.ev_q[inside], weights=self.ev_units[inside], minlength=nq)
        r = np.maximum(self.n_units, 1)
        out: dict[str, np.ndarray] = {}
        for name in names:
            if name == "recall":
                out[name] = credited / r
            elif name == "precision":
                out[name] = np.divide(n_events, cutoff, out=np.zeros(nq), where=cutoff > 0)
            elif name == "hit":
                out[name] = (n_events > 0).astype(np.float64)
            elif name == "complete":
                out[name] = (credited >= self.n_units).astype(np.float64)
            elif name == "mrr":
                # A query's first event is its best rank; it counts if any event is inside.
                first_rank = np.ones(nq)
                has = n_events > 0
                first_rank[has] = self.ev_rank[self.ev_first[has]]
                out[name] = np.where(has, 1.0 / first_rank, 0.0)
            elif name == "ap":
                out[name] = (
                    np.bincount(
                        self.ev_q, weights=np.where(inside, self.ap_term, 0.0), minlength=nq
                    )
                    / r
                )
            elif name == "ndcg":
                dcg = np.bincount(
                    self.ev_q, weights=np.where(inside, self.dcg_term, 0.0), minlength=nq
                )
                in_ideal = (
                    np.ones(len(self.ideal_q), dtype=bool)
                    if budget
                    else self.ideal_pos <= cutoff[self.ideal_q]
                )
                idcg = np.bincount(
                    self.ideal_q, weights=np.where(in_ideal, self.ideal_term, 0.0), minlength=nq
                )
                out[name] = np.divide(dcg, idcg, out=np.zeros(nq), where=idcg > 0)
            else:  # pragma: no cover - names are checked by the caller
                raise ValueError(name)
        return out


def _budget_prefix(hits: RankedHits, budget: int) -> np.ndarray:
    """Per query: length of the longest prefix whose token counts sum to at most ``budget``."""
    assert hits.tokens is not None
    # Clipping each count at budget + 1 leaves the prefix unchanged and keeps
    # the sums far from int64 overflow, whatever counts a run file carries.
    cum = np.concatenate(([0], np.cumsum(np.minimum(hits.tokens, budget + 1))))
    base = cum[hits.offsets[:-1]]
    # cum never decreases (counts are >= 0), so one search serves every query.
    last = np.searchsorted(cum, base + budget, side="right") - 1
    return np.minimum(last - hits.offsets[:-1], hits.n_hits)


# --------------------------------------------------------------------------- precision omega


def _precision_omega(gold: _Gold, chunks: Sequence[Chunk]) -> np.ndarray:
    """Per query: |G| / |(chunks sharing a character with G) ∪ G| (NaN without spans)."""
    nq = gold.n_queries
    out = np.full(nq, np.nan)
    if len(gold.piece_start) == 0:
        return out
    nd = gold.n_docs
    c_doc = np.fromiter((gold.doc_code.get(c.doc_id, -1) for c in chunks), np.int64, len(chunks))
    c_start = np.fromiter((c.start for c in chunks), np.int64, len(chunks))
    c_end = np.fromiter((c.end for c in chunks), np.int64, len(chunks))
    useful = (c_doc >= 0) & (c_end > c_start)
    c_doc, c_start, c_end = c_doc[useful], c_start[useful], c_end[useful]
    piece_doc = gold.group_key[gold.piece_group] % nd
    piece_q = gold.group_key[gold.piece_group] // nd
    order = np.lexsort((c_start, c_doc))
    c_doc, c_start, c_end = c_doc[order], c_start[order], c_end[order]
    cand_piece, cand = _overlapping(
        c_doc, c_start, c_end, nd, piece_doc, gold.piece_start, gold.piece_end
    )
    # Union of the pieces and their overlapping chunks, per (query, doc) group.
    group = np.concatenate((gold.piece_group, gold.piece_group[cand_piece]))
    u_groups, u_group, u_start, u_end = _merge_spans(
        group,
        np.concatenate((gold.piece_start, c_start[cand])),
        np.concatenate((gold.piece_end, c_end[cand])),
    )
    u_query = gold.group_key[u_groups[u_group]] // nd
    union = np.bincount(u_query, weights=u_end - u_start, minlength=nq)
    has = np.zeros(nq, dtype=bool)
    has[piece_q] = True
    out[has] = gold.gold_len[has] / union[has]
    return out


# --------------------------------------------------------------------------- public API


def _check_options(min_coverage: float, gain: str) -> None:
    if not (isinstance(min_coverage, (int, float)) and 0 < min_coverage <= 1):
        raise ValueError(f"min_coverage must be in (0, 1], got {min_coverage!r}")
    if gain not in GAINS:
        raise ValueError(f"unknown gain {gain!r}; choose one of: {', '.join(GAINS)}")


def score_queries(
    queries: Sequence[Query],
    runs: Mapping[str, Sequence[Hit]],
    measures: Sequence[Measure],
    *,
    min_coverage: float = MIN_COVERAGE,
    gain: str = "linear",
    chunks: Sequence[Chunk] | None = None,
) -> ScoreTable:
    """Score every query's ranked hits on ``measures`` at every level.

    A query absent from ``runs`` is an empty retrieval. ``chunks`` (all chunks
    of the configuration's index) is needed only for ``precision_omega``, which
    is skipped without it. Budget measures need ``n_tokens`` on every hit.
    """
    _check_options(min_coverage, gain)
    gold = _Gold.of(queries)
    measures = list(dict.fromkeys(measures))
    need_tokens = any(m.budget is not None for m in measures)
    hits = RankedHits.from_hits(gold.query_ids, runs, gold.doc_code, need_tokens=need_tokens)
    return _score(gold, hits, measures, min_coverage=min_coverage, gain=gain, chunks=chunks)


def score_ranked(
    queries: Sequence[Query],
    ranking: np.ndarray,
    chunks: Sequence[Chunk],
    measures: Sequence[Measure],
    *,
    min_coverage: float = MIN_COVERAGE,
    gain: str = "linear",
) -> ScoreTable:
    """Like :func:`score_queries` for a retriever's ``(n_queries, depth)`` array of indices
    into ``chunks`` (row i = ``queries[i]``, -1 pads short rows); ``chunks`` also
    serves ``precision_omega``."""
    _check_options(min_coverage, gain)
    gold = _Gold.of(queries)
    ranking = np.asarray(ranking)
    if ranking.ndim != 2 or ranking.shape[0] != len(queries):
        raise ValueError(
            f"ranking must have one row per query ({len(queries)}), got shape {ranking.shape}"
        )
    hits = RankedHits.from_chunk_ranking(ranking, chunks, gold.doc_code)
    return _score(
        gold,
        hits,
        list(dict.fromkeys(measures)),
        min_coverage=min_coverage,
        gain=gain,
        chunks=chunks,
    )


def _score(
    gold: _Gold,
    hits: RankedHits,
    measures: list[Measure],
    *,
    min_coverage: float,
    gain: str,
    chunks: Sequence[Chunk] | None,
) -> ScoreTable:
    if chunks is None:
        measures = [m for m in measures if m.name not in PER_CONFIG_NAMES]
    metric_names = tuple(str(m) for m in measures)
    nq = gold.n_queries
    # Each distinct cut-off becomes a per-query hit count once.
    cutoffs: dict[tuple[str, int], np.ndarray] = {}
    for m in measures:
        key = _cutoff_key(m)
        if key is not None and key not in cutoffs:
            cutoffs[key] = (
                np.full(nq, m.k, dtype=np.int64)
                if m.k is not None
                else _budget_prefix(hits, key[1])
            )

    coverage = None
    if any("span" in m.levels for m in measures):
        coverage = _span_coverage(gold, hits, min_coverage)
    omega = (
        _precision_omega(gold, chunks)
        if chunks is not None and any(m.name in PER_CONFIG_NAMES for m in measures)
        else None
    )

    parts: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]] = []
    for level_code, level in enumerate(LEVELS):
        level_measures = [(i, m) for i, m in enumerate(measures) if level in m.levels]
        if not level_measures:
            continue
        unit_q, unit_grade = gold.units(level)
        unit_rank = _unit_ranks(level, gold, hits, coverage)
        credits = _Credits.of(unit_q, unit_grade, unit_rank, nq, gain)
        included = np.flatnonzero(credits.n_units > 0)
        if len(included) == 0:
            continue
        columns = np.empty((len(included), len(level_measures)))
        by_cutoff: dict[tuple[str, int] | None, list[tuple[int, Measure]]] = {}
        for col, (_, m) in enumerate(level_measures):
            by_cutoff.setdefault(_cutoff_key(m), []).append((col, m))
        for key, group in by_cutoff.items():
            if key is None:  # precision_omega
                for col, _ in group:
                    assert omega is not None
                    columns[:, col] = omega[included]
                continue
            cut = cutoffs[key]
            ranked = credits.measure(
                [m.name for _, m in group if m.name in RANK_NAMES], cut, budget=key[0] == "t"
            )
            for col, m in group:
                values = (
                    ranked[m.name]
                    if m.name in RANK_NAMES
                    else _coverage_measure(m.name, coverage, hits, gold, cut)
                )
                columns[:, col] = values[included]
        codes = np.array([i for i, _ in level_measures], dtype=np.int64)
        parts.append((level_code, included, codes, columns))

    if not parts:
        empty = np.zeros(0, dtype=np.int64)
        return ScoreTable(
            gold.query_ids, metric_names, empty, empty.astype(np.int8), empty.copy(), np.zeros(0)
        )
    q_col = np.concatenate([np.repeat(inc, len(codes)) for _, inc, codes, _ in parts])
    l_col = np.concatenate(
        [np.full(len(inc) * len(codes), lv, dtype=np.int8) for lv, inc, codes, _ in parts]
    )
    m_col = np.concatenate([np.tile(codes, len(inc)) for _, inc, codes, _ in parts])
    v_col = np.concatenate([cols.ravel() for _, _, _, cols in parts])
    return ScoreTable(gold.query_ids, metric_names, q_col, l_col, m_col, v_col)


def _cutoff_key(m: Measure) -> tuple[str, int] | None:
    if m.k is not None:
        return ("k", m.k)
    if m.budget is not None:
        return ("t", m.budget)
    return None


def _coverage_measure(
    name: str, coverage: _Coverage | None, hits: RankedHits, gold: _Gold, cutoff: np.ndarray
) -> np.ndarray:
    assert coverage is not None
    start = hits.offsets[:-1]
    stop = start + np.minimum(cutoff, hits.n_hits)
    inter = (coverage.covered_cum[stop] - coverage.covered_cum[start]).astype(np.float64)
    total = (coverage.length_cum[stop] - coverage.length_cum[start]).astype(np.float64)
    g = gold.gold_len.astype(np.float64)
    n = len(g)
    if name == "cov_recall":
        return np.divide(inter, g, out=np.zeros(n), where=g > 0)
    if name == "cov_precision":
        return np.divide(inter, total, out=np.zeros(n), where=total > 0)
    denom = total + g - inter
    return np.divide(inter, denom, out=np.zeros(n), where=denom > 0)


@dataclass(frozen=True)
class UnitCredits:
    """Where each relevance unit is credited in the whole ranking, per query and level.

    ``ranks[level][query_id]`` holds one entry per unit, ``None`` for a unit no
    hit credits; span units are in the order of the query's ``relevant`` list
    (grade > 0), document units in order of first mention, page units by
    document (in order of first mention) and then page. Queries without a unit
    at a level are absent there.
    """

    ranks: Mapping[str, Mapping[str, tuple[int | None, ...]]]

    def first_relevant(self, level: str) -> dict[str, int | None]:
        """Rank of the first hit that credits any unit, per query (None: none does)."""
        return {
            q: min((r for r in units if r is not None), default=None)
            for q, units in self.ranks[level].items()
        }


def _unit_credits(gold: _Gold, hits: RankedHits, min_coverage: float) -> UnitCredits:
    out: dict[str, dict[str, tuple[int | None, ...]]] = {}
    for level in LEVELS:
        unit_q, _ = gold.units(level)
        coverage = _span_coverage(gold, hits, min_coverage) if level == "span" else None
        ranks = _unit_ranks(level, gold, hits, coverage)
        per_query: dict[str, list[int | None]] = {}
        for q, r in zip(unit_q.tolist(), ranks.tolist()):
            per_query.setdefault(gold.query_ids[q], []).append(None if r >= _NEVER else int(r))
        out[level] = {q: tuple(v) for q, v in per_query.items()}
    return UnitCredits(out)


def credit_units(
    queries: Sequence[Query],
    ranking: np.ndarray,
    chunks: Sequence[Chunk],
    *,
    min_coverage: float = MIN_COVERAGE,
) -> UnitCredits:
    """:class:`UnitCredits` of a retriever's ``(n_queries, depth)`` chunk positions (as
    :func:`score_ranked` takes them)."""
    _check_options(min_coverage, "linear")
    gold = _Gold.of(queries)
    return _unit_credits(
        gold, RankedHits.from_chunk_ranking(ranking, chunks, gold.doc_code), min_coverage
    )


def first_relevant_ranks(
    queries: Sequence[Query],
    runs: Mapping[str, Sequence[Hit]],
    level: str,
    *,
    min_coverage: float = MIN_COVERAGE,
) -> dict[str, int | None]:
    """Rank of the first hit that credits a unit at ``level``, per query with a unit there.

    ``None`` when no hit credits one. Queries without a unit at ``level`` are left out.
    """
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}; levels: {', '.join(LEVELS)}")
    _check_options(min_coverage, "linear")
    gold = _Gold.of(queries)
    hits = RankedHits.from_hits(gold.query_ids, runs, gold.doc_code, need_tokens=False)
    return _unit_credits(gold, hits, min_coverage).first_relevant(level)


def first_relevant_rank(
    query: Query, hits: Sequence[Hit], level: str, min_coverage: float = MIN_COVERAGE
) -> int | None:
    """Rank of the first of ``hits`` that credits a unit of ``query`` at ``level`` (None if none)."""
    return first_relevant_ranks(
        [query], {query.query_id: hits}, level, min_coverage=min_coverage
    ).get(query.query_id)
