"""What decides whether chunking will matter on a dataset: document and span lengths in
tokens, and how many evidence spans a fixed-size chunker would cut in two."""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sweep.core.tokenization import DEFAULT_TOKENIZER
from sweep.core.types import Chunk, Dataset

__all__ = [
    "DatasetStats",
    "Distribution",
    "StraddleCount",
    "compute_statistics",
    "count_straddling",
    "format_statistics",
]

STRADDLE_SIZES = (128, 256, 512)
ENCODING = DEFAULT_TOKENIZER
_NO_TYPE = "(no type)"


@dataclass(frozen=True)
class Distribution:
    """Summary of a list of non-negative integers (all 0 when the list is empty)."""

    n: int
    min: int
    median: float
    p90: int
    max: int
    total: int

    @classmethod
    def of(cls, values: Iterable[int]) -> Distribution:
        v = sorted(values)
        if not v:
            return cls(0, 0, 0, 0, 0, 0)
        # Nearest-rank p90: a length that actually occurs in the data.
        p90 = v[max(0, math.ceil(0.9 * len(v)) - 1)]
        return cls(len(v), v[0], statistics.median(v), p90, v[-1], sum(v))


@dataclass(frozen=True)
class StraddleCount:
    """How many evidence spans no single chunk contains, at one chunk size."""

    size: int
    n_chunks: int
    straddling: int
    n_spans: int


@dataclass(frozen=True)
class DatasetStats:
    name: str
    n_documents: int
    doc_tokens: Distribution
    n_queries: int
    by_type: tuple[tuple[str, int], ...]
    n_unanswerable: int
    n_span_judgments: int
    n_doc_judgments: int
    by_grade: tuple[tuple[int, int], ...]
    spans_per_query: tuple[tuple[str, int], ...]
    span_chars: Distribution
    span_tokens: Distribution
    straddle: tuple[StraddleCount, ...]
    encoding: str = ENCODING
    n_page_judgments: int = 0  # spans given as a page (``page`` or ``page_label``)


def count_straddling(
    spans: Iterable[tuple[str, int, int]], chunks_by_doc: Mapping[str, Sequence[Chunk]]
) -> int:
    """Spans ``(doc_id, start, end)`` that lie inside no single chunk of their document."""
    return sum(
        1
        for doc_id, start, end in spans
        if not any(c.start <= start and end <= c.end for c in chunks_by_doc.get(doc_id, ()))
    )


def _default_counter() -> Callable[[str], int]:
    from sweep.core.tokenization import count_tokens, get_encoding

    encoding = get_encoding(ENCODING)
    return lambda text: count_tokens(encoding, text)


def compute_statistics(
    dataset: Dataset,
    *,
    make_chunker: Callable[[int], Any],
    count_tokens: Callable[[str], int] | None = None,
    sizes: Sequence[int] = STRADDLE_SIZES,
) -> DatasetStats:
    """Numbers that describe ``dataset``; tokens are cl100k_base unless ``count_tokens`` is given.

    ``make_chunker(size)`` returns an object with ``chunk(doc) -> list[Chunk]``:
    ``sweep.validate`` passes the token chunker with overlap 0.
    """
    count = count_tokens or _default_counter()
    texts = dataset.by_id()
    queries = dataset.queries

    # Evidence spans: judgments with offsets and a grade above 0.
    spans = [
        (j.doc_id, j.start, j.end) for q in queries for j in q.relevant if j.is_span and j.grade > 0
    ]
    per_query = Counter(sum(1 for j in q.relevant if j.is_span and j.grade > 0) for q in queries)
    type_counts = Counter(q.type or _NO_TYPE for q in queries)
    judgments = [j for q in queries for j in q.relevant]

    straddle = []
    span_docs = {doc_id for doc_id, _, _ in spans}
    for size in sizes:
        chunker = make_chunker(size)
        n_chunks = 0
        chunks_by_doc: dict[str, list[Chunk]] = {}
        for doc in dataset.documents:
            chunks = chunker.chunk(doc)
            n_chunks += len(chunks)
            if doc.doc_id in span_docs:
                chunks_by_doc[doc.doc_id] = chunks
        straddle.append(
            StraddleCount(size, n_chunks, count_straddling(spans, chunks_by_doc), len(spans))
        )

    return DatasetStats(
        name=dataset.name,
        n_documents=len(dataset.documents),
        doc_tokens=Distribution.of(count(d.text) for d in dataset.documents),
        n_queries=len(queries),
        by_type=tuple(sorted(type_counts.items(), key=lambda kv: (-kv[1], kv[0]))),
        n_unanswerable=sum(1 for q in queries if not q.relevant),
        n_span_judgments=sum(1 for j in judgments if j.is_span),
        n_doc_judgments=sum(1 for j in judgments if not j.is_span),
        by_grade=tuple(sorted(Counter(j.grade for j in judgments).items(), reverse=True)),
        spans_per_query=_histogram(per_query, cap=5),
        span_chars=Distribution.of(end - start for _, start, end in spans),
        span_tokens=Distribution.of(count(texts[d].text[s:e]) for d, s, e in spans),
        straddle=tuple(straddle),
        n_page_judgments=sum(1 for j in judgments if j.page is not None),
    )


def _histogram(counts: Counter, cap: int) -> tuple[tuple[str, int], ...]:
    rows = [(str(k), counts[k]) for k in sorted(counts) if k < cap]
    over = sum(n for k, n in counts.items() if k >= cap)
    return tuple(rows + ([(f"{cap}+", over)] if over else []))


# --------------------------------------------------------------------------- rendering


def _num(x: float) -> str:
    return f"{x:,.1f}" if isinstance(x, float) and not x.is_integer() else f"{int(x):,}"


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def _table(rows: Sequence[Sequence[str]], indent: str = "  ", align: str = "") -> list[str]:
    """Rows of cells; ``align`` has one ``l``/``r`` per column (default: first left, rest right)."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    align = align or "l" + "r" * (len(widths) - 1)
    return [
        indent
        + "   ".join(
            c.ljust(w) if a == "l" else c.rjust(w) for c, w, a in zip(r, widths, align)
        ).rstrip()
        for r in rows
    ]


def format_statistics(stats: DatasetStats) -> str:
    """The statistics as aligned plain text."""
    out: list[str] = []
    grades = ", ".join(f"grade {g}: {_num(n)}" for g, n in stats.by_grade) or "none"
    by_page = f", of which {_num(stats.n_page_judgments)} by page" if stats.n_page_judgments else ""
    out += _table(
        [
            ["documents", _num(stats.n_documents), ""],
            [
                "queries",
                _num(stats.n_queries),
                f"({_num(stats.n_unanswerable)} unanswerable: relevant is [])",
            ],
            [
                "judgments",
                _num(stats.n_span_judgments + stats.n_doc_judgments),
                f"({_num(stats.n_span_judgments)} spans{by_page}, "
                f"{_num(stats.n_doc_judgments)} whole-document; {grades})",
            ],
        ],
        indent="",
        align="lrl",
    )

    out += ["", "queries by type"]
    out += _table(
        [[t, _num(n), _pct(n, stats.n_queries)] for t, n in stats.by_type] or [["none", "0", ""]]
    )

    out += ["", "evidence spans per query (spans with grade > 0)"]
    out += _table(
        [
            [f"{k} span{'s' if k != '1' else ''}", _num(n), _pct(n, stats.n_queries)]
            for k, n in stats.spans_per_query
        ]
        or [["none", "0", ""]]
    )

    def dist_row(label: str, d: Distribution, total: bool) -> list[str]:
        if d.n == 0:
            return [label, "0", "-", "-", "-", "-", "-" if total else ""]
        return [
            label,
            _num(d.n),
            _num(d.min),
            _num(d.median),
            _num(d.p90),
            _num(d.max),
            _num(d.total) if total else "",
        ]

    out += ["", f"lengths (tokens are {stats.encoding})"]
    out += _table(
        [
            ["", "n", "min", "median", "p90", "max", "total"],
            dist_row("tokens per document", stats.doc_tokens, True),
            dist_row("span characters", stats.span_chars, False),
            dist_row("span tokens", stats.span_tokens, False),
        ]
    )

    out += ["", "evidence spans straddling a chunk boundary (token chunker, overlap 0)"]
    out += _table(
        [["size", "chunks", "straddling", "share"]]
        + [
            [
                str(s.size),
                _num(s.n_chunks),
                f"{_num(s.straddling)} of {_num(s.n_spans)}",
                _pct(s.straddling, s.n_spans),
            ]
            for s in stats.straddle
        ]
    )
    return "\n".join(out)


# --------------------------------------------------------------------------- CLI
