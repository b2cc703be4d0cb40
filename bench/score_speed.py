"""How fast the scorer is: 10,000 queries x 100 hits, every level, every measure
at k = 1, 3, 5, 10, 100 (issue 2 asks for < 2 s on the 2-core machine).

    python bench/score_speed.py [--queries 10000] [--hits 100] [--repeats 5]

Prints the CPU, the median and every repeat, the per-query rate, and the same for
the array entry point (``score_ranked``), with budgets, with precision_omega, and
for the bootstrap summary; then what the page level costs: the same run scored on
the same evidence without pages (doc and span levels) and with every document cut
into 1000-character pages (doc, span and page levels), and their ratio.
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import replace

import numpy as np

from sweep.core.cpu import cpu_summary
from sweep.core.measures import measures_for
from sweep.core.types import Chunk, Hit, Judgment, Query
from sweep.scoring.aggregate import summarize
from sweep.scoring.credit import score_queries, score_ranked


def make_data(n_queries: int, n_hits: int, seed: int = 0):
    """A synthetic index (400-char chunks, 100 overlap) and runs that find the evidence sometimes."""
    rng = np.random.default_rng(seed)
    n_docs, doc_len, size, step = 2000, 8000, 400, 300
    chunks = [
        Chunk(f"d{d}", i, s, min(s + size, doc_len), "", 100)
        for d in range(n_docs)
        for i, s in enumerate(range(0, doc_len - 100, step))
    ]
    per_doc = len(chunks) // n_docs
    queries, ranking = [], np.empty((n_queries, n_hits), dtype=np.int64)
    for q in range(n_queries):
        judged = []
        for d in rng.choice(n_docs, size=int(rng.integers(1, 4)), replace=False):
            s = int(rng.integers(0, doc_len - 600))
            judged.append(
                Judgment(f"d{d}", s, s + int(rng.integers(50, 600)), int(rng.integers(0, 4)))
            )
        if q % 10 == 0:
            judged.append(Judgment(f"d{int(rng.integers(n_docs))}"))
        queries.append(Query(f"q{q}", "", tuple(judged)))
        row = rng.choice(len(chunks), size=n_hits, replace=False)
        # Put a chunk of a judged document at a random early rank half the time.
        if rng.random() < 0.5:
            j = judged[0]
            d = int(j.doc_id[1:])
            row[int(rng.integers(0, 10))] = d * per_doc + min(j.start // step, per_doc - 1)
        ranking[q] = row
    runs = {
        queries[q].query_id: [
            Hit(c.doc_id, c.start, c.end, c.n_tokens) for c in map(chunks.__getitem__, ranking[q])
        ]
        for q in range(n_queries)
    }
    return queries, chunks, ranking, runs


PAGE_LEN = 1000


def with_pages(queries: list[Query]) -> list[Query]:
    """The same queries with every document cut into ``PAGE_LEN``-character pages: each
    evidence span names the pages it overlaps, as a paged document's judgments do."""

    def pages_of(j: Judgment) -> tuple[tuple[int, int, int], ...]:
        if j.start is None:
            return ()
        first, last = j.start // PAGE_LEN, (j.end - 1) // PAGE_LEN
        return tuple((n + 1, n * PAGE_LEN, (n + 1) * PAGE_LEN) for n in range(first, last + 1))

    return [
        Query(q.query_id, q.query, tuple(replace(j, pages=pages_of(j)) for j in q.relevant))
        for q in queries
    ]


def timed(fn, repeats: int) -> list[float]:
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def report(label: str, times: list[float], n_queries: int, rows: int) -> None:
    med = statistics.median(times)
    print(
        f"{label:<44} median {med:6.3f} s  {n_queries / med:9,.0f} queries/s  {rows:,} rows  "
        f"(repeats: {', '.join(f'{t:.3f}' for t in times)})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--hits", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    print(f"CPU: {cpu_summary()}")
    t0 = time.perf_counter()
    queries, chunks, ranking, runs = make_data(args.queries, args.hits)
    print(
        f"data: {args.queries:,} queries x {args.hits} hits, {len(chunks):,} chunks "
        f"(built in {time.perf_counter() - t0:.1f} s)"
    )
    ks = [1, 3, 5, 10, 100]
    plain = [m for m in measures_for(ks) if m.name != "precision_omega"]
    with_budgets = [m for m in measures_for(ks, [512, 2048]) if m.name != "precision_omega"]

    cases = [
        ("score_queries, k=1,3,5,10,100 (issue 2)", lambda: score_queries(queries, runs, plain)),
        (
            "score_ranked (index array), same measures",
            lambda: score_ranked(queries, ranking, chunks, plain),
        ),
        ("score_queries + budgets 512t,2048t", lambda: score_queries(queries, runs, with_budgets)),
        (
            "score_queries + precision_omega",
            lambda: score_queries(queries, runs, measures_for(ks), chunks=chunks),
        ),
    ]
    for label, fn in cases:
        rows = len(fn())  # warm-up, and the row count
        report(label, timed(fn, args.repeats), args.queries, rows)
    table = score_queries(queries, runs, plain)
    report(
        "summarize, 1000 bootstrap resamples",
        timed(lambda: summarize(table, queries), args.repeats),
        args.queries,
        len(table),
    )

    # The page level's cost: the same hits, the same evidence, with and without pages.
    paged = with_pages(queries)
    medians = {}
    for label, qs, fn in (
        ("doc+span (no pages), score_queries", queries, score_queries),
        ("doc+span+page, score_queries", paged, score_queries),
    ):
        rows = len(fn(qs, runs, plain))
        times = timed(lambda qs=qs, fn=fn: fn(qs, runs, plain), args.repeats)
        medians[label] = statistics.median(times)
        report(label, times, args.queries, rows)
    for label, qs in (
        ("doc+span (no pages), score_ranked", queries),
        ("doc+span+page, score_ranked", paged),
    ):
        rows = len(score_ranked(qs, ranking, chunks, plain))
        times = timed(lambda qs=qs: score_ranked(qs, ranking, chunks, plain), args.repeats)
        medians[label] = statistics.median(times)
        report(label, times, args.queries, rows)
    for entry in ("score_queries", "score_ranked"):
        ratio = medians[f"doc+span+page, {entry}"] / medians[f"doc+span (no pages), {entry}"]
        print(f"page level's cost, {entry}: {ratio:.2f}x the doc+span time on the same run")


if __name__ == "__main__":
    main()
